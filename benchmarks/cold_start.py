"""The first `wwt search` with no engine running (issue 25: ~4 s), this checkout against an older one, side by
side in one run: each round times one cold search per checkout (their order alternating; each engine is
stopped right after its answer, so what it loads afterwards cannot slow the other's), then one warm search
each (after `wwt engine start`, which returns once the engine is warm). `WWT_ENGINE=off` (the whole search in one process) is timed too, as
a reference. The two checkouts must rank the same sessions and chunks (`--json`, checked, reported; the text format may differ).

    python benchmarks/cold_start.py [--baseline REV] [--runs 7] [--record]

The baseline is the git revision ``REV`` (default: the commit before the cold-start work of issue 25) checked
out in a temporary worktree and run by the same interpreter (``PYTHONPATH`` points at it, so ``import wwt`` is
that code). Each checkout ingests the real fixture logs into its own data dir (``benchmarks/.work/cold_start``)
and has its own runtime folder; nothing is shared but the model (``WWT_MODEL_DIR``). Wall time from spawning
the process to its exit. ``--record`` writes the section ``cold-start`` of RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _shared import REAL_FIXTURES, replace_section

ROOT = Path(__file__).resolve().parents[1]
WORK = Path(__file__).resolve().parent / ".work" / "cold_start"
BEFORE = "49666fcde99b947be9d3a7a95c0aebeca0f71b63"  # main before issue 25's cold-start work
QUERIES = {
    "English": "phoenix server does not start",
    "English, code words": "JOKE.md crud endpoint",
    "Korean": "고랭 최신 버전 문서 업데이트",
}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class Checkout:
    def __init__(self, name: str, source: Path) -> None:
        self.name = name
        self.source = source
        self.home = WORK / f"home-{name}"
        self.runtime = Path(f"/tmp/wwt-cold-{os.getpid()}-{name}")

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WWT_") or k == "WWT_MODEL_DIR"}
        env.update(PYTHONPATH=str(self.source), WWT_HOME=str(self.home), WWT_RUNTIME_DIR=str(self.runtime),
                   NO_COLOR="1", COLUMNS="120", **extra)
        return env

    def run(self, *args: str, **extra: str) -> tuple[float, subprocess.CompletedProcess[str]]:
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "wwt", *args], env=self.env(**extra), capture_output=True,
                              text=True, cwd="/", timeout=600)
        return time.perf_counter() - started, proc

    def prepare(self) -> None:
        which = subprocess.run([sys.executable, "-c", "import wwt; print(wwt.__file__)"], env=self.env(),
                               capture_output=True, text=True, check=True, cwd="/").stdout.strip()
        if not which.startswith(str(self.source)):
            raise SystemExit(f"{self.name}: `import wwt` found {which}, not {self.source}")
        self.runtime.mkdir(mode=0o700, exist_ok=True)
        if not (self.home / "wwt.sqlite3").exists():
            logs = sorted(str(p) for p in REAL_FIXTURES.rglob("*") if p.suffix in (".jsonl", ".json") and p.is_file())
            _, proc = self.run("ingest", *logs, WWT_ENGINE="off")
            if proc.returncode != 0:
                raise SystemExit(f"{self.name}: ingest failed: {proc.stderr[-500:]}")

    def stop_engine(self) -> None:
        self.run("engine", "stop", WWT_ENGINE="on")

    def cleanup(self) -> None:
        self.stop_engine()
        shutil.rmtree(self.runtime, ignore_errors=True)


def baseline_checkout(rev: str) -> Path:
    folder = WORK / "baseline"
    if folder.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(folder)], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder), rev], check=True,
                   capture_output=True)
    return folder


def answer(proc: subprocess.CompletedProcess[str]) -> str:
    if proc.returncode != 0:
        raise SystemExit(f"search failed ({proc.returncode}): {proc.stderr[-500:]}")
    return proc.stdout.strip()


def ranking(proc: subprocess.CompletedProcess[str]) -> list[tuple[str, list[str]]]:
    """The sessions and chunks a ``--json`` search ranked, in order (what both checkouts must agree on)."""
    data = json.loads(answer(proc))
    results = data.get("results", data) if isinstance(data, dict) else data
    return [(r["session_id"], [c.get("chunk_id") for c in r.get("chunks", [])]) for r in results]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", default=BEFORE, help="git revision to compare with")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--record", action="store_true", help="write the cold-start section of RESULTS.md")
    args = parser.parse_args()
    if not os.environ.get("WWT_MODEL_DIR"):
        raise SystemExit("set WWT_MODEL_DIR to the model folder (multilingual-e5-small)")
    WORK.mkdir(parents=True, exist_ok=True)
    base = Checkout("baseline", baseline_checkout(args.baseline))
    this = Checkout("this", ROOT)
    sides = [base, this]
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    base_rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.baseline], capture_output=True,
                              text=True).stdout.strip()
    load_start = load()
    cold: dict[tuple[str, str], list[float]] = {}
    warm: dict[tuple[str, str], list[float]] = {}
    inproc: dict[tuple[str, str], list[float]] = {}
    same: dict[str, bool] = {}
    try:
        for side in sides:
            side.prepare()
        for label, query in QUERIES.items():
            for run in range(args.runs):
                order = sides if run % 2 == 0 else sides[::-1]
                answers = {}
                for side in order:  # each engine stopped right after its answer: what it loads afterwards
                    side.stop_engine()  # (Kiwi, the MCP SDK) must not slow the other checkout's search
                    seconds, proc = side.run("search", "--all", query, WWT_ENGINE="on")
                    answers[side.name] = answer(proc)
                    cold.setdefault((label, side.name), []).append(seconds)
                    side.stop_engine()
                for side in order:
                    side.run("engine", "start", WWT_ENGINE="on")  # returns once the engine is warm
                    seconds, proc = side.run("search", "--all", query, WWT_ENGINE="on")
                    answer(proc)
                    warm.setdefault((label, side.name), []).append(seconds)
                    side.stop_engine()
                if run < 3:
                    for side in order:
                        seconds, proc = side.run("search", "--all", query, WWT_ENGINE="off")
                        answer(proc)
                        inproc.setdefault((label, side.name), []).append(seconds)
                if run == 0:  # the text output's format may differ between checkouts: compare the rankings
                    ranks = {side.name: ranking(side.run("search", "--all", query, "--json", WWT_ENGINE="off")[1])
                             for side in sides}
                    same[label] = ranks["baseline"] == ranks["this"]
                print(label, run, {s.name: f"{cold[(label, s.name)][-1]:.2f}" for s in sides}, flush=True)
    finally:
        for side in sides:
            side.cleanup()
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base.source)],
                       capture_output=True)
    load_end = load()

    def p50(values: list[float]) -> str:
        return f"{statistics.median(values):.2f}"

    rows = []
    for label in QUERIES:
        b, t = cold[(label, "baseline")], cold[(label, "this")]
        ratio = statistics.median(b) / statistics.median(t)
        rows.append(f"| {label} | {p50(b)} ({min(b):.2f}–{max(b):.2f}) | {p50(t)} ({min(t):.2f}–{max(t):.2f}) | "
                    f"{ratio:.2f}× | {p50(inproc[(label, 'baseline')])} | {p50(inproc[(label, 'this')])} | "
                    f"{1000 * statistics.median(warm[(label, 'baseline')]):.0f} / "
                    f"{1000 * statistics.median(warm[(label, 'this')]):.0f} | {'yes' if same[label] else 'NO'} |")
    body = "\n".join([
        f"## Cold first search (issue 25, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
        "",
        f"`WWT_MODEL_DIR=<model folder> python benchmarks/cold_start.py --runs {args.runs} --record` — "
        f"`wwt search --all <query>` as a new process with no engine running (it starts one and waits for its "
        f"answer), this checkout ({rev}) against {base_rev} (`--baseline`, checked out in a temporary worktree, "
        f"same interpreter and model multilingual-e5-small int8), in one run, their order alternating; "
        f"{args.runs} runs per cell, seconds, median (min–max). The archive: the real fixture logs "
        f"(`$WWT_SHARED/fixtures/real`), ingested by each checkout into its own data dir. 2 CPU cores shared "
        f"with other jobs: load average {load_start} at the start, {load_end} at the end.",
        "",
        "| query | cold, before | cold, this | before ÷ this | `WWT_ENGINE=off`, before | `WWT_ENGINE=off`, this "
        "| warm ms, before / this | same ranking |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
    ])
    print(body)
    if args.record:
        replace_section("cold-start", body)


if __name__ == "__main__":
    main()
