"""The engine under a flood from its own user (issue 24): 2,000 connections that send nothing and 50 slow-loris
clients (one byte a second), against a `wwt search` answered by the same engine before, during and after —
side by side in one run, as ratios. The engine runs with 400 descriptors (`RLIMIT_NOFILE`), so the flood
really exhausts them.

    WWT_MODEL_DIR=<model folder> python benchmarks/engine_flood.py [--append-results]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _shared import REAL_FIXTURES, load_average, replace_section

NOFILE = 400


def search(env: dict[str, str], low: bool = False) -> float:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "wwt", "search", "--all", "JOKE.md"], env=env, cwd="/",
                          capture_output=True, text=True, timeout=300,
                          preexec_fn=(lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE)))
                          if low else None)
    if proc.returncode != 0 or "JOKE" not in proc.stdout:
        raise SystemExit(f"search failed: {proc.stderr[-300:]}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--append-results", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="wwt-flood-"))
    runtime = Path(tempfile.mkdtemp(prefix="wwt-rt-"))
    env = dict(os.environ, WWT_HOME=str(work / "data"), WWT_RUNTIME_DIR=str(runtime), WWT_ENGINE="on",
               WWT_ENGINE_IDLE_S="120", HOME=str(work), NO_COLOR="1")
    (work / "logs").mkdir()
    shutil.copy(REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl", work / "logs")
    subprocess.run([sys.executable, "-m", "wwt", "ingest", str(work / "logs")], env=dict(env, WWT_ENGINE="off"),
                   check=True, capture_output=True)
    search(env, low=True)  # starts the engine with the low limit
    quiet = [search(env) for _ in range(5)]
    path = next(runtime.glob("*.sock"))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    held: list[socket.socket] = []
    connected = 0
    for _ in range(20):
        for _ in range(100):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.connect(str(path))
                connected += 1
            except OSError:
                pass
            held.append(s)
        time.sleep(0.1)
    loris = []
    for _ in range(50):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(1)
        try:
            s.connect(str(path))
            s.send(b"\x00")
        except OSError:
            pass
        loris.append(s)
    during = [search(env) for _ in range(5)]
    for s in held + loris:
        s.close()
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    time.sleep(1)
    after = [search(env) for _ in range(5)]
    pid = int((runtime / path.with_suffix(".json").name).read_text().split('"pid":')[1].split(",")[0].strip())
    alive = True
    try:
        os.kill(pid, 0)
    except OSError:
        alive = False
    log = (work / "data" / "ingest.log").read_text()
    with_engine = "answering in-process" not in log
    os.kill(pid, signal.SIGTERM)
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(runtime, ignore_errors=True)
    q, d, a = statistics.median(quiet), statistics.median(during), statistics.median(after)
    lines = [
        "## Engine under a flood (issue 24)", "",
        f"`python benchmarks/engine_flood.py --append-results` — one engine with {NOFILE} descriptors; "
        f"{connected:,} of 2,000 flood connections got past the listen backlog, plus 50 slow-loris clients; "
        f"`wwt search` (a cold client process each time) 5× per phase, median. Load {load_average()}.", "",
        "| phase | search median s | × quiet |", "|---|---|---|",
        f"| quiet | {q:.2f} | 1.00 |", f"| during the flood | {d:.2f} | {d / q:.2f} |",
        f"| after | {a:.2f} | {a / q:.2f} |", "",
        f"Engine alive after: {'yes' if alive else 'NO'}; it logged "
        f"{'the flood' if 'accept failed' in log or 'refusing' in log else 'nothing'}"
        f"{'' if with_engine else ' (some searches answered in-process)'}.",
    ]
    print("\n".join(lines))
    if args.append_results:
        replace_section("engine-flood", "\n".join(lines))


if __name__ == "__main__":
    main()
