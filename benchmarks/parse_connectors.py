"""Parse throughput (CPU-time MB/s) and peak RSS of the newer connectors' append-only logs: Qwen Code chats and
Copilot CLI event logs, plus Aider's Markdown history, each a synthetic file of the given size made by repeating
the connector's own test fixture with fresh ids per repetition. One subprocess per measurement (own peak RSS).

    .venv/bin/python benchmarks/parse_connectors.py --size 100
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIX = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
SOURCES = {
    "qwen-code": (FIX / "qwen-code/projects/-home-mina-src-ledger/chats/7b1e0c52-9d3a-4f61-8a2e-5c4d3b2a1f00.jsonl",
                  "projects/-bench/chats/7b1e0c52-9d3a-4f61-8a2e-5c4d3b2a1f00.jsonl"),
    "copilot-cli": (FIX / "copilot-cli/session-state/4f2a9c1e-8b7d-4e60-9a35-d1c2b3a4e5f6/events.jsonl",
                    "session-state/4f2a9c1e-8b7d-4e60-9a35-d1c2b3a4e5f6/events.jsonl"),
    "aider": (FIX / "aider/quillpad/.aider.chat.history.md", "repo/.aider.chat.history.md"),
}


def build(platform: str, folder: Path, megabytes: int) -> Path:
    source, relative = SOURCES[platform]
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    if platform != "aider":
        lines = [ln for ln in lines if ln.endswith("\n") and ln.startswith("{")]  # whole JSON lines only
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    target, written, rep = megabytes << 20, 0, 0
    with open(path, "w", encoding="utf-8") as out:
        while written < target:
            for line in lines:
                if platform == "aider":
                    text = line.replace("2026-03-14 09:05", f"2026-03-14 {rep // 60 % 24:02d}:{rep % 60:02d}")
                else:
                    text = line.replace('"uuid":"q1-', f'"uuid":"r{rep}-').replace('"id":"e-', f'"id":"r{rep}-')
                out.write(text)
                written += len(text.encode("utf-8"))
            rep += 1
    return path


def measure(path: str) -> dict:
    from wwt.parsers import parse_file

    wall, cpu = time.perf_counter(), time.process_time()
    sessions, report = parse_file(Path(path))
    cpu = time.process_time() - cpu
    wall = time.perf_counter() - wall
    size = Path(path).stat().st_size / (1 << 20)
    return {"platform": report.platform, "mb": round(size, 1), "sessions": len(sessions),
            "messages": sum(len(s.messages) for s in sessions), "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
            "cpu_mb_s": round(size / cpu, 1), "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=100, help="MB per synthetic file")
    ap.add_argument("--measure", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        for platform in SOURCES:
            path = build(platform, Path(tmp), args.size)
            out = subprocess.run([sys.executable, __file__, "--measure", str(path)], capture_output=True, text=True,
                                 check=True)
            print(out.stdout.strip())
            path.unlink()


if __name__ == "__main__":
    main()
