"""One very long conversation (issue 24): a Claude Code session of 50,000 messages in one file, ingested in one
parse, beside one of 5,000 in the same run — so the ratio says whether cost grows with the session's length
(≈ 10× for 10× the messages) or faster, which absolute times on a shared machine cannot.

Per size: phase 1 of an ingest in a fresh data dir (parse, archive in SQLite, chunk, lexical index — what makes
the session findable by its words; the vectors are back-filled afterwards at the per-chunk rate the ``ingest``
section gives, independent of the session's length), wall and CPU seconds and the peak memory of the process
and every process it starts; then a cold ``wwt search`` for a word said only in message #(n − 1,000).
The session is written in Claude Code's JSONL shape (``tests/test_long_sessions.py`` writes the same lines).

    WWT_MODEL_DIR=<model folder> python benchmarks/long_session.py [--sizes 5000 50000] [--append-results]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

from _shared import load_average, replace_section, run_tree_measured

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT / "tests"))  # after benchmarks/: its _shared wins
from long_session_log import SESSION, write_long_session  # noqa: E402

PHASE_ONE = (
    "import sys; from pathlib import Path; from wwt.service import Memory; "
    "s = Memory.open().ingest([Path(sys.argv[1])], backfill=False); "
    "print('MESSAGES', s.messages_added, 'CHUNKS', s.chunks_added)"
)


def measure(size: int, work: Path) -> dict:
    logs = work / f"logs-{size}"
    logs.mkdir()
    path = logs / f"{SESSION}.jsonl"
    write_long_session(path, size)
    env = dict(os.environ, WWT_HOME=str(work / f"home-{size}"), WWT_ENGINE="off", HOME=str(work))
    detail: dict = {}
    wall, peak, code, out, cpu = run_tree_measured([sys.executable, "-c", PHASE_ONE, str(path)], env=env,
                                                   detail=detail)
    if code != 0:
        raise SystemExit(f"ingest of {size} messages failed: {out[-400:]}")
    counts = out.split()
    word = f"quokka{size - 1000}"
    s_wall, s_peak, s_code, s_out, _ = run_tree_measured(
        [sys.executable, "-m", "wwt", "search", word, "--all", "--json"], env=env)
    found = s_code == 0 and SESSION in s_out
    return {"size": size, "bytes": path.stat().st_size, "wall": wall, "cpu": cpu, "peak_mb": peak,
            "processes": detail.get("processes", 1), "messages": int(counts[counts.index("MESSAGES") + 1]),
            "chunks": int(counts[counts.index("CHUNKS") + 1]), "search_wall": s_wall, "search_peak_mb": s_peak,
            "found": found, "word": word}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 50000])
    parser.add_argument("--append-results", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="wwt-long-") as tmp:
        for size in args.sizes:
            row = measure(size, Path(tmp))
            rows.append(row)
            print(json.dumps(row))
    base = rows[0]
    lines = [
        "## Long session (issue 24)",
        "",
        f"`python benchmarks/long_session.py --sizes {' '.join(map(str, args.sizes))} --append-results` — "
        f"one Claude Code session per size, phase 1 of a fresh ingest (archive + chunks + lexical index; vectors "
        f"back-filled later per chunk), then a cold `wwt search` for a word only message #(n − 1,000) says. "
        f"Python {platform.python_version()}, load {load_average()}, WWT_ENGINE=off (one process; the count of "
        f"processes seen is in the table). No model is loaded in phase 1.",
        "",
        "| messages | file MB | messages stored | chunks | ingest wall s | CPU s | × smallest (wall) | peak MB "
        "(processes) | search s | found |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['size']:,} | {r['bytes'] / 1e6:.1f} | {r['messages']:,} | {r['chunks']:,} | {r['wall']:.1f} | "
            f"{r['cpu']:.1f} | {r['wall'] / base['wall']:.1f}× for {r['size'] / base['size']:.0f}× messages | "
            f"{r['peak_mb']:.0f} ({r['processes']}) | {r['search_wall']:.1f} | {'yes' if r['found'] else 'NO'} |")
    lines += ["", "Before the fix (merge_order recursed once per new message) a parse of about 1,000 new messages "
              "raised RecursionError and stopped every ingest at that file; the Claude Code parser's rewind check "
              "walked the rest of the chain for every prompt (quadratic: a 50,000-message file did not finish "
              "phase 1 in 2 minutes of CPU)."]
    print("\n".join(lines))
    if args.append_results:
        replace_section("long-session", "\n".join(lines))


if __name__ == "__main__":
    main()
