"""A day of searching against one resident engine: does its memory or its latency creep?

Thousands of searches (the recall questions of every set in benchmarks/data, each also with a varying word
appended, so that the engine's query memory keeps meeting new questions and its caches fill to their caps),
CLI requests and filtered ones mixed, sent to one warm engine the way `wwt search` sends them. Every window the
RSS of the engine and every process it started is sampled, with the window's latency. The question is the ratio
of the last window to the first (after warm-up): flat memory and flat latency, or growth.

    python benchmarks/soak.py [--home <store home>] [--searches 6000] [--window 500] [--no-write]

Without ``--home`` the store is the real fixture logs plus the recall development sessions, built once in
``benchmarks/.work/soak/``. Results go to RESULTS.md (``replace_section("soak", ...)``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _shared import REAL_FIXTURES, load_average, replace_section, tree_rss_mb  # noqa: E402

WORK = HERE / ".work" / "soak"
DEV_LOGS = HERE / "data" / "recall_dev_logs"
FILTERS = ([], ["--source", "claude-code"], ["--source", "gemini-cli"], ["--since", "2025-01-01"])


def questions() -> list[str]:
    found: list[str] = []
    for name in ("recall_queries.json", "recall_dev.json", "recall_blind.json", "recall_everyday.json"):
        found += [q["q"] for q in json.loads((HERE / "data" / name).read_text(encoding="utf-8"))["queries"]]
    return list(dict.fromkeys(found))


def build_store(home: Path) -> None:
    if (home / "wwt.sqlite3").exists():
        return
    from wwt.service import Memory

    memory = Memory(home)
    memory.ingest([REAL_FIXTURES, DEV_LOGS], backfill_seconds=None)
    memory.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path)
    ap.add_argument("--searches", type=int, default=6000)
    ap.add_argument("--window", type=int, default=500)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    home = (args.home or WORK / "home").resolve()
    runtime = WORK / "runtime"
    runtime.mkdir(parents=True, exist_ok=True)
    os.environ.update(WWT_HOME=str(home), WWT_RUNTIME_DIR=str(runtime), WWT_ENGINE_IDLE_S="3600", NO_COLOR="1")
    os.environ.pop("WWT_ENGINE", None)
    if args.home is None:
        build_store(home)
    from wwt.engine import client

    client.stop()
    warm = client.start()
    if not warm or not warm.get("ok"):
        raise SystemExit(f"the engine did not start: {warm}")
    pid = int(client.status()["pid"])
    pool = questions()
    words = sorted({w for q in pool for w in q.split() if w.isalpha() and len(w) > 3})
    rng = random.Random(20261203)
    rows: list[tuple[int, float, float, float]] = []
    window: list[float] = []
    failures = 0
    started = time.perf_counter()
    try:
        for i in range(1, args.searches + 1):
            query = rng.choice(pool)
            if i % 2:  # half of them never seen before: the query memory keeps filling
                query = f"{query} {rng.choice(words)} {rng.choice(words)}"
            argv = ["search", "--all", query, "-n", "5", *FILTERS[i % len(FILTERS)]]
            began = time.perf_counter()
            reply = client.call("cli", client.cli_request(argv))
            window.append(time.perf_counter() - began)
            if not reply or not reply.get("ok") or reply.get("code") not in (0, None):
                failures += 1
            if i % args.window == 0:
                ordered = sorted(window)
                rows.append((i, tree_rss_mb(pid), statistics.median(ordered) * 1000,
                             ordered[int(len(ordered) * 0.95) - 1] * 1000))
                print(f"{i}: {rows[-1][1]:.0f} MB, p50 {rows[-1][2]:.1f} ms", flush=True)
                window = []
    finally:
        elapsed = time.perf_counter() - started
        still = client.status()
        client.stop()
    if still is None or int(still.get("pid", -1)) != pid:
        raise SystemExit("the engine did not survive the soak")
    first, last = rows[0], rows[-1]
    peak = max(r[1] for r in rows)
    table = ["| searches | engine RSS MB (with its child processes) | window p50 ms | window p95 ms |", "|---|---|---|---|"]
    table += [f"| {n} | {rss:.0f} | {p50:.1f} | {p95:.1f} |" for n, rss, p50, p95 in rows]
    body = "\n".join([
        "## A day of searching: one engine, thousands of searches (benchmarks/soak.py)",
        "",
        f"Command: `python benchmarks/soak.py --searches {args.searches} --window {args.window}"
        f"{' --home <store>' if args.home else ''}` (2 shared cores, model: `WWT_MODEL_DIR`). Store: "
        f"{'the given one' if args.home else 'real fixture logs + recall development sessions'}. "
        f"{len(pool)} distinct recall questions, every other one with two random words appended (never seen "
        "before: the query memory keeps filling), filters rotating (none, two sources, a date); each sent as "
        "`wwt search` sends it to the engine. Same engine process throughout "
        f"(pid checked after the run); {failures} failed requests; {elapsed:.0f} s in all.",
        "",
        *table,
        "",
        f"- engine RSS, last window ÷ first: **{last[1] / first[1]:.2f}×** ({first[1]:.0f} → {last[1]:.0f} MB; "
        f"peak of the samples {peak:.0f} MB)",
        f"- window p50 latency, last ÷ first: **{last[2] / first[2]:.2f}×** ({first[2]:.1f} → {last[2]:.1f} ms)",
        f"- load average at the end: {load_average()}",
    ])
    print(body)
    if not args.no_write:
        replace_section("soak", body)


if __name__ == "__main__":
    main()
