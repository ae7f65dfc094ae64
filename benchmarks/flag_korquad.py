"""The "nothing relevant" flag's false alarms on questions nobody wrote for this project: KorQuAD 1.0 dev.

An archive of KorQuAD's 961 Wikipedia paragraphs (one Claude Code session each, through the real parser, chunker,
model and indexes) and a fixed sample of its questions — every one answerable by its own paragraph. Each flagged
question is a false alarm; the rule that raised it is listed. Independent of the recall sets the flag was
designed on (other writers, another domain, Korean only).

    WWT_MODEL_DIR=<model folder> python benchmarks/flag_korquad.py [--questions 2000] [--no-write]

Results go to RESULTS.md (``replace_section("flag-korquad", ...)``); the archive is built once in
``benchmarks/.work/flag_korquad/``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _shared import load_average, replace_section  # noqa: E402
from recall_dev_corpus import _claude  # noqa: E402

WORK = HERE / ".work" / "flag_korquad"
KORQUAD = Path(os.environ.get("WWT_SHARED", HERE.parent.parent / "shared")) / "data" / "korquad" / "KorQuAD_v1.0_dev.json"


def why(signals: dict[str, float], absent: list[str]) -> str:
    if signals.get("names_unseen"):
        return "a name never mentioned"
    if signals.get("topics_unseen"):
        return "a topic term never said"
    if signals.get("chunks", 0) >= 1000 and signals.get("vocabulary_gap", 0) >= 0.6:
        return "most topic words never said"
    return "lexical leg missed, flat vector leg"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=2000)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    paragraphs = [p for a in json.loads(KORQUAD.read_text(encoding="utf-8"))["data"] for p in a["paragraphs"]]
    home, logs = WORK / "home", WORK / "logs" / "claude-code"
    os.environ["WWT_HOME"] = str(home)
    from wwt.models import Filters
    from wwt.service import Memory

    memory = Memory(home)
    if not (WORK / "built").exists():
        logs.mkdir(parents=True, exist_ok=True)
        when = datetime(2025, 1, 1, tzinfo=timezone.utc)
        for i, paragraph in enumerate(paragraphs):
            (logs / f"kq-{i:05d}.jsonl").write_text(
                _claude(f"kq-{i}", "korquad", when, [("u", paragraph["context"])]), encoding="utf-8")
        memory.ingest([logs.parent], backfill_seconds=None)
        (WORK / "built").write_text("1", encoding="utf-8")
    questions = [qa["question"] for p in paragraphs for qa in p["qas"]]
    random.Random(7).shuffle(questions)
    questions = questions[: args.questions]
    flagged: list[tuple[str, str, list[str]]] = []
    started = time.perf_counter()
    for question in questions:
        outcome = memory.search_outcome(question, Filters(), 10)
        if outcome.weak:
            flagged.append((question, why(outcome.signals, outcome.absent), outcome.absent))
    seconds = time.perf_counter() - started
    chunks = memory.status().get("chunks", 0)
    memory.close()
    by_rule: dict[str, int] = {}
    for _, rule, _ in flagged:
        by_rule[rule] = by_rule.get(rule, 0) + 1
    lines = [
        "## \"Nothing relevant\": false alarms on KorQuAD questions (benchmarks/flag_korquad.py)",
        "",
        f"Command: `python benchmarks/flag_korquad.py --questions {args.questions}` (model: `WWT_MODEL_DIR`; 2 shared "
        f"cores, load average {load_average()}). Archive: KorQuAD 1.0 dev's {len(paragraphs)} paragraphs, one session "
        f"each ({chunks} chunks); {len(questions)} of its questions (fixed sample), every one answered by its own "
        "paragraph — written by others, for another purpose: a check of the flag the recall sets cannot give.",
        "",
        f"- flagged (false alarms): **{len(flagged)}/{len(questions)} = {len(flagged) / len(questions):.1%}**",
        *(f"- by rule: {rule} {n}" for rule, n in sorted(by_rule.items(), key=lambda kv: -kv[1])),
        f"- {seconds / len(questions) * 1000:.0f} ms a question (warm, in-process)",
        "",
        "Flagged questions (first 12): " + "; ".join(
            f"{q} → {rule}{' (' + ', '.join(a[:3]) + ')' if a else ''}" for q, rule, a in flagged[:12]),
    ]
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        replace_section("flag-korquad", body)


if __name__ == "__main__":
    main()
