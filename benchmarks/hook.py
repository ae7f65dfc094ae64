"""Hook entry point latency as the agent pays it: a fresh process per call, fed a real Claude Stop payload.

Side by side in one run: the bare interpreter (floor), the registered command (``python -m wwt hook``, which
dispatches before the CLI imports anything), and the ``wwt hook`` console script (goes through typer/rich).
A worker is started by the first call and kept from working (long debounce) so every later call measures the
steady state "enqueue + worker already running"; it is stopped at the end.

    python benchmarks/hook.py --runs 40 [--append-results]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _shared import REAL_FIXTURES, load_average, replace_section  # noqa: E402

REAL_LOG = (REAL_FIXTURES / "claude-code/spotter__short.jsonl")
ROOT = Path(__file__).resolve().parent
TARGET_P95_MS = 300.0


def measure(argv: list[str], payload: str, env: dict[str, str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, input=payload, text=True, env=env, check=True, capture_output=True)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--append-results", action="store_true", help="write its section into benchmarks/RESULTS.md")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="wwt-hook-bench-"))
    transcript = work / "55604662-cf2a-4331-851a-ec234028f8ca.jsonl"
    shutil.copy(REAL_LOG, transcript)
    env = dict(os.environ, WWT_HOME=str(work / "data"), WWT_WORKER_DEBOUNCE_S="600", WWT_WORKER_IDLE_S="600")
    payload = json.dumps({"session_id": transcript.stem, "transcript_path": str(transcript), "cwd": str(work),
                          "permission_mode": "default", "hook_event_name": "Stop", "stop_hook_active": False})
    py = sys.executable
    wwt_script = str(Path(py).parent / "wwt")
    variants = {
        "python -c pass (floor)": [py, "-c", "pass"],
        "python -m wwt hook (registered)": [py, "-m", "wwt", "hook", "claude-code"],
        "wwt hook (console script)": [wwt_script, "hook", "claude-code"],
    }
    try:
        subprocess.run(variants["python -m wwt hook (registered)"], input=payload, text=True, env=env, check=True)
        results = {name: measure(argv, payload, env, args.runs) for name, argv in variants.items()}
    finally:
        spawn = work / "data" / "worker.spawn"
        if spawn.exists():
            try:
                os.kill(int(spawn.read_text().split()[0]), 15)
            except (ProcessLookupError, ValueError):
                pass
        shutil.rmtree(work, ignore_errors=True)

    floor = statistics.median(results["python -c pass (floor)"])
    lines = ["| variant | p50 ms | p95 ms | p50 / floor |", "|---|---|---|---|"]
    for name, times in results.items():
        lines.append(f"| {name} | {statistics.median(times):.0f} | {pct(times, 0.95):.0f} | "
                     f"{statistics.median(times) / floor:.1f}x |")
    reg = results["python -m wwt hook (registered)"]
    verdict = "meets" if pct(reg, 0.95) <= TARGET_P95_MS else "MISSES"
    summary = f"registered hook p95 {pct(reg, 0.95):.0f} ms {verdict} the {TARGET_P95_MS:.0f} ms target"
    table = "\n".join(lines)
    print(table)
    print(summary)
    if args.append_results:
        replace_section(
            "hook",
            f"## Hook entry point latency ({time.strftime('%Y-%m-%d')})\n\n"
            f"Command: `python benchmarks/hook.py --runs {args.runs} --append-results` — a fresh process per "
            f"call, real Claude Stop payload, worker already running (steady state), 2-core shared machine, load "
            f"average {load_average()} at the end.\n\n{table}\n\n{summary}.\n",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
