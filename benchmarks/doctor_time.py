"""`wwt doctor` time as a user pays it: a fresh process per call, on a home wired by `wwt setup` (Claude Code,
Gemini CLI and Codex CLI configs, one real Claude Code log archived and indexed).

Side by side in one run, calls interleaved: this checkout's `python -m wwt doctor` (dispatched before the
CLI's imports) and the same checks through the full CLI (typer, rich: how every `wwt doctor` ran before);
with `--baseline <checkout>` also that checkout's `python -m wwt doctor` (e.g. the main branch). Wall time
and CPU time (user + sys of the child) are reported: on a shared machine the wall time follows the load, the
CPU time much less. Byte-code caching is on (as in a pipx install), whatever PYTHONDONTWRITEBYTECODE says.

    WWT_MODEL_DIR=<model folder> python benchmarks/doctor_time.py --runs 9 [--baseline ../main] [--append-results]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _shared import REAL_FIXTURES, load_average, replace_section  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LOG = REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl"
FULL_CLI = "import sys; sys.argv = ['wwt', 'doctor']; from wwt.cli import main; main()"


def one(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall s, CPU s) of one run (``cwd`` outside any checkout: ``-m`` puts it first on sys.path)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, check=False, cwd=cwd, text=True)
    if proc.returncode not in (0, 1) or "all good" not in proc.stdout + proc.stderr and "needs fixing" not in proc.stdout:
        sys.exit(f"{argv}: {proc.stdout[-300:]} {proc.stderr[-300:]}")
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--baseline", type=Path, help="another checkout whose `python -m wwt doctor` runs alongside")
    ap.add_argument("--append-results", action="store_true")
    args = ap.parse_args()
    if not os.environ.get("WWT_MODEL_DIR"):
        sys.exit("set WWT_MODEL_DIR to the model folder")
    work = Path(tempfile.mkdtemp(prefix="wwt-doctor-bench-"))
    try:
        home = work / "home"
        logs = home / ".claude" / "projects" / "-srv-app"
        logs.mkdir(parents=True)
        shutil.copy(LOG, logs / "crud.jsonl")
        for agent in (".gemini", ".codex"):
            (home / agent).mkdir()
        env = {k: v for k, v in os.environ.items() if k not in ("WWT_HOME", "PYTHONDONTWRITEBYTECODE", "CODEX_HOME")}
        env.update(HOME=str(home), WWT_ENGINE="off", NO_COLOR="1")
        setup = subprocess.run([sys.executable, "-m", "wwt", "setup", "--no-agent-cli"], env=env, cwd=ROOT,
                               capture_output=True, text=True)
        if setup.returncode != 0:
            sys.exit(f"wwt setup failed: {setup.stderr[-500:]}")
        variants: dict[str, tuple[list[str], dict[str, str]]] = {
            "python -m wwt doctor (this checkout)": ([sys.executable, "-m", "wwt", "doctor"], env),
            "full CLI (typer + rich), same checks": ([sys.executable, "-c", FULL_CLI], env),
        }
        if args.baseline:
            base_env = {**env, "PYTHONPATH": str(args.baseline.resolve())}
            variants["python -m wwt doctor (the --baseline checkout: main before this change)"] = ([sys.executable, "-m", "wwt", "doctor"], base_env)
        for argv, venv in variants.values():  # warm the byte-code caches and the page cache
            one(argv, venv, work)
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        loads = [load_average()]
        for _ in range(args.runs):
            for name, (argv, venv) in variants.items():
                results[name].append(one(argv, venv, work))
        loads.append(load_average())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = []
    for name, values in results.items():
        walls, cpus = [w for w, _ in values], [c for _, c in values]
        rows.append(f"| {name} | {statistics.median(walls):.2f} s (min {min(walls):.2f}) | "
                    f"{statistics.median(cpus):.2f} s (min {min(cpus):.2f}) |")
    body = "\n".join([
        "## `wwt doctor` time (issue 25)",
        "",
        f"`python benchmarks/doctor_time.py --runs {args.runs}"
        + (" --baseline <checkout>" if args.baseline else "") + "` — fresh process per call, interleaved, "
        f"byte-code cache on, engine off; model: offline test build (only its checksums are read). "
        f"Load average {loads[0]} → {loads[-1]} (1/5/15 min, 2 cores).",
        "",
        "| variant | wall, median of runs | CPU (user + sys), median |",
        "|---|---|---|",
        *rows,
    ])
    print(body)
    if args.append_results:
        replace_section("doctor-time", body)


if __name__ == "__main__":
    main()
