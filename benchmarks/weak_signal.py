"""Measure the "nothing in memory answers this" signal (wwt.search.is_weak) on the real fixture logs.

Ingests ../shared/fixtures/real (or $WWT_SHARED/fixtures/real) into a temp WWT_HOME with the real model, runs
answerable queries (answers checked by reading the fixtures) and off-topic ones, and prints per query: lexical
hits, how many query terms occur in scope, vector top / median similarity, the gap, and the verdict; then the
counts side by side. IN-SAMPLE: WEAK_GAP and the rule were tuned on these very queries, so the counts say the
rule fits them, not how it does on new questions.

    WWT_MODEL_DIR=<model folder> python benchmarks/weak_signal.py [--fixtures DIR] [--record]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _shared import REAL_FIXTURES  # noqa: E402

ANSWERABLE = [
    "go.mod toolchain version",
    "mix phx.server doesnt seem to start",
    "JOKE.md create read delete",
    "pydantic Field 用法",
    "서버가 시작되지 않아요",
    "opentelemetry versions hex.pm",
    "why are you so tentative",
    "Tailwind component catalog",
]
OFF_TOPIC = [
    "how to bake sourdough bread at home",
    "kubernetes helm chart values override",
    "양자역학 슈뢰딩거 방정식 풀이",
    "best hiking trails in the alps",
    "tax return deadline extension form",
    "이번 주말 날씨 어때",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=Path, default=REAL_FIXTURES)
    parser.add_argument("--record", action="store_true", help="write its section into benchmarks/RESULTS.md")
    args = parser.parse_args()
    out: list[str] = []

    def say(line: str) -> None:
        print(line)
        out.append(line)

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["WWT_HOME"] = str(Path(tmp) / "home")
        logs = Path(tmp) / "logs"
        shutil.copytree(args.fixtures, logs)
        from wwt.models import Filters
        from wwt.search import query_terms, term_hits
        from wwt.service import Memory

        memory = Memory.open()
        memory.ingest([logs])
        indexes = memory._refresh_indexes()
        from wwt.lexical import tokenize

        chunks = indexes.vector.count()
        say(f"{'kind':10} {'query':40} {'lex':>4} {'terms':>6} {'vtop':>6} {'median':>6} {'gap':>6} weak")
        flagged = {"answerable": 0, "off-topic": 0}
        for kind, queries in (("answerable", ANSWERABLE), ("off-topic", OFF_TOPIC)):
            for query in queries:
                outcome = memory.search_outcome(query, Filters(), 10)
                hits = term_hits(indexes.lexical, tokenize(query) or query_terms(query), Filters())
                found = sum(1 for n in hits.values() if n)
                gap = (outcome.vector_top or 0) - (outcome.vector_background or 0)
                flagged[kind] += outcome.weak
                say(
                    f"{kind:10} {query[:40]:40} {outcome.lexical_hits:4d} {found:>2}/{len(hits):<3} "
                    f"{outcome.vector_top or 0:6.3f} {outcome.vector_background or 0:6.3f} {gap:6.3f} {outcome.weak}"
                )
        say(
            f"flagged weak: off-topic {flagged['off-topic']}/{len(OFF_TOPIC)}, "
            f"answerable {flagged['answerable']}/{len(ANSWERABLE)} (false alarms)"
        )
        memory.close()
    if args.record:
        from wwt.search import WEAK_GAP

        body = "\n".join([
            f"## Search: \"nothing in memory answers this\" signal (wwt.search.is_weak) — IN-SAMPLE "
            f"({time.strftime('%Y-%m-%d')})",
            "",
            "Command: `WWT_MODEL_DIR=<model folder> python benchmarks/weak_signal.py --record` (all real fixtures, "
            f"{chunks} chunks, real model). **In-sample:** the rule and WEAK_GAP = {WEAK_GAP} were tuned on these "
            "14 queries; the counts show the fit, not how it does on questions it has not seen.",
            "Rule: weak = more than half of the query terms occur in no chunk in scope AND (vector top − median "
            "of the top-50 similarities) < WEAK_GAP. Results are always shown; weak only adds a warning line / "
            '`"weak": true`.',
            "",
            "```",
            *out,
            "```",
        ])
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from _shared import replace_section

        replace_section("weak-signal", body)


if __name__ == "__main__":
    main()
