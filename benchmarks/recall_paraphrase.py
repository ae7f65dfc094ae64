"""The "nothing relevant" flag on paraphrases (issue 24): questions written from each dev session's meaning
without its distinctive words (benchmarks/data/recall_paraphrase.json: Korean, English and across the two; split
by a seeded shuffle before any result was seen), over the development archive (real fixtures + recall_dev_logs),
beside the negatives of the dev and blind sets, which must stay caught. Real model, real indexes.

    WWT_MODEL_DIR=<model folder> python benchmarks/recall_paraphrase.py [--append-results]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from _shared import load_average, replace_section
from recall import DEV_LOGS, HERE, REAL_FIXTURES, ingest, run_set, with_split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--append-results", action="store_true")
    args = parser.parse_args()
    questions = json.loads((HERE / "data" / "recall_paraphrase.json").read_text(encoding="utf-8"))["queries"]
    blind = json.loads((HERE / "data" / "recall_blind.json").read_text(encoding="utf-8"))["queries"]
    dev = with_split(json.loads((HERE / "data" / "recall_dev.json").read_text(encoding="utf-8"))["queries"])
    work = Path(tempfile.mkdtemp(prefix="wwt-paraphrase-"))
    try:
        memory = ingest(work, [REAL_FIXTURES, DEV_LOGS])
        rows = run_set(memory, questions)
        negatives = run_set(memory, [q for q in dev + blind if q["kind"] == "negative"])
        memory.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = ["## Paraphrases and the \"nothing relevant\" flag (issue 24)", "",
             f"`python benchmarks/recall_paraphrase.py --append-results` — multilingual-e5-small "
             f"(offline test build), load {load_average()}. 52 answerable questions (26 sessions × one same-language, one "
             "cross-language), held-out half = the figure; negatives = the dev and blind sets' 66.", "",
             "| part | n | flagged (false) | top 1 | top 3 |", "|---|---|---|---|---|"]
    for label, part in (("held-out", [r for r in rows if r["split"] == "held"]),
                        ("tuning (in-sample)", [r for r in rows if r["split"] == "tune"]),
                        ("cross-language, both parts", [r for r in rows if r["kind"] in ("ko2en", "en2ko")]),
                        ("same language, both parts", [r for r in rows if r["kind"] == "paraphrase"])):
        flagged = sum(r["weak"] for r in part)
        lines.append(f"| {label} | {len(part)} | {flagged} ({flagged / len(part):.0%}) | "
                     f"{sum(r['now'] == 1 for r in part) / len(part):.2f} | "
                     f"{sum(1 for r in part if r['now'] and r['now'] <= 3) / len(part):.2f} |")
    lines += ["", f"Negatives caught beside them: {sum(r['weak'] for r in negatives)}/{len(negatives)}."]
    print("\n".join(lines))
    if args.append_results:
        replace_section("recall-paraphrase", "\n".join(lines))


if __name__ == "__main__":
    main()
