"""Parse throughput (MB/s) and peak RSS on synthetic Claude Code transcripts of several sizes, side by side.

The transcript repeats the real fixtures' lines (shared/fixtures/real/claude-code) with fresh uuids, message
ids and tool ids per repetition, so the parser sees realistic content, streaming splits, tool pairs and
noise at any size. Each measurement runs in a fresh subprocess so peak RSS is that run's own.

Modes:
  reader  — ``common.iter_jsonl`` only (JSON decoding, bounded-memory line reading)
  parse   — ``parse_file`` (Claude parser + noise rules + redaction), returning every message

    python benchmarks/parse.py --sizes 10,100 [--append-results]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from _shared import load_average, replace_section, run_tree_measured  # noqa: E402
from real_sized_logs import build_transcript  # noqa: E402


def _measure(mode: str, path: str) -> dict:
    """Runs inside the child process."""
    from wwt.models import ParseReport
    from wwt.parsers import parse_file
    from wwt.parsers.common import iter_jsonl

    start = time.perf_counter()
    cpu_start = time.process_time()
    if mode == "reader":
        report = ParseReport(path=path)
        count = sum(1 for _ in iter_jsonl(Path(path), report))
        messages = 0
        text_mb = 0.0
    else:
        sessions, report = parse_file(path)
        count = report.lines
        messages = sum(len(s.messages) for s in sessions)
        text_mb = sum(len(m.text) for s in sessions for m in s.messages) / 1e6
    elapsed = time.perf_counter() - start
    return {
        "seconds": elapsed,
        "cpu_seconds": time.process_time() - cpu_start,
        "lines": count,
        "messages": messages,
        "text_mb": text_mb,
        "bad_lines": report.bad_lines,
    }


def run_child(mode: str, path: Path) -> dict:
    """One measurement in a fresh process; peak RSS of that process and anything it starts (``TreePeak``)."""
    _, peak, code, out, _ = run_tree_measured([sys.executable, __file__, "--child", mode, str(path)])
    if code != 0:
        raise SystemExit(f"{mode} child failed: {out[-800:]}")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_rss_mb"] = peak
    return result


def baseline_rss() -> float:
    _, peak, code, out, _ = run_tree_measured([sys.executable, "-c", "import wwt.parsers"])
    if code != 0:
        raise SystemExit(f"baseline failed: {out[-800:]}")
    return peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10,100", help="transcript sizes in MB, comma-separated")
    ap.add_argument("--append-results", action="store_true", help="write its section into benchmarks/RESULTS.md")
    ap.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(_measure(*args.child)))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    base = baseline_rss()
    with tempfile.TemporaryDirectory(prefix="wwt-bench-") as tmp:
        for size in sizes:
            path = Path(tmp) / "00000000-0000-4000-8000-000000000000.jsonl"
            actual = build_transcript(path, size)
            for mode in ("reader", "parse"):
                result = run_child(mode, path)
                result.update(
                    mode=mode,
                    mb=actual / 1e6,
                    mb_s=actual / 1e6 / result["seconds"],
                    cpu_mb_s=actual / 1e6 / result["cpu_seconds"],
                )
                rows.append(result)
                print(
                    f"{actual / 1e6:7.1f} MB  {mode:6}  {result['mb_s']:6.1f} MB/s wall  "
                    f"{result['cpu_mb_s']:6.1f} MB/s cpu  {result['seconds']:6.2f} s  "
                    f"peak RSS {result['peak_rss_mb']:6.1f} MB  lines {result['lines']}  "
                    f"messages {result['messages']} ({result['text_mb']:.1f} M chars kept)  bad {result['bad_lines']}",
                    flush=True,
                )
            path.unlink()
    print(f"baseline RSS (python + wwt.parsers imported): {base:.1f} MB")
    small, large = min(sizes), max(sizes)
    summary = []
    for mode in ("reader", "parse"):
        a = next(r for r in rows if r["mode"] == mode and r["mb"] == min(x["mb"] for x in rows))
        b = next(r for r in rows if r["mode"] == mode and r["mb"] == max(x["mb"] for x in rows))
        summary.append(
            f"{mode}: RSS {large} MB / {small} MB = {b['peak_rss_mb'] / a['peak_rss_mb']:.2f}x "
            f"(above baseline: {a['peak_rss_mb'] - base:.1f} → {b['peak_rss_mb'] - base:.1f} MB); "
            f"CPU throughput {large} MB / {small} MB = {b['cpu_mb_s'] / a['cpu_mb_s']:.2f}x"
        )
    for line in summary:
        print(line)
    if args.append_results:
        _append(rows, summary, base, args.sizes)


def _append(rows: list[dict], summary: list[str], base: float, sizes: str) -> None:
    cpu = os.cpu_count()
    lines = [
        f"## Parse throughput and peak RSS — Claude Code transcripts ({time.strftime('%Y-%m-%d')})",
        "",
        f"Command: `python benchmarks/parse.py --sizes {sizes} --append-results` "
        f"({cpu} shared CPU cores, load average {load_average()}, Python {sys.version.split()[0]}). Peak RSS = "
        "the measuring process and any it starts, summed (`_shared.TreePeak`). Synthetic transcript = real fixture lines "
        "repeated with fresh ids. Targets: ≥ 30 MB/s, RSS flat in file size.",
        "",
        "| size | mode | MB/s (wall) | MB/s (CPU time) | seconds | peak RSS MB | lines | messages | kept text (M chars) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['mb']:.1f} MB | {r['mode']} | {r['mb_s']:.1f} | {r['cpu_mb_s']:.1f} | {r['seconds']:.2f} | "
            f"{r['peak_rss_mb']:.1f} | "
            f"{r['lines']} | {r['messages']} | {r['text_mb']:.1f} |"
        )
    lines += [
        "",
        f"Baseline RSS (interpreter + `wwt.parsers` imported): {base:.1f} MB. Wall-clock MB/s depends on how",
        "busy the shared cores are; CPU-time MB/s is the parser's own cost. `parse_file` returns every kept",
        "message, so its RSS grows with the kept text (one session = one list); the reading/decoding itself",
        "(`reader`) is flat in file size.",
        "",
    ]
    lines += [f"- {s}" for s in summary]
    replace_section("parse", "\n".join(lines))


if __name__ == "__main__":
    main()
