"""The vector leg's language correction at archive size (issue 29): exact (``wwt.search.vector_leg``: the uncorrected
best 4 × depth, and a language's own best depth too whenever its shift could lift one of them past the corrected
best) against re-scoring the uncorrected best 4 × depth alone ("window", wwt until 2026-12-06), side by side in one
run on the same indexes — the window is put back by swapping ``wwt.search.vector_leg``.

The correction lowers every Korean chunk by the same amount for a Korean question, so its corrected best are each
language's own best; the window only held them while fewer than 4 × depth (200) Korean chunks outscored the English
answer before the correction. Nothing here is tuned: the exact leg has no parameter, so every half is a figure
(held-out and tuning shown apart all the same).

* recall — session R@3 of what lands (``Memory.search_outcome``) on recall_xlang.py's archives: the development
  archive (benchmarks/.work/xlang) and, with ``--background N``, the same + N distractor sessions
  (benchmarks/.work/xlang-bgN). Run recall_xlang.py [--background N] first: it builds them.
* latency — warm ``Memory.search_outcome`` p50 on the 100k scale archive (benchmarks/scale_corpus.py,
  ``--scale-home``; its vectors are synthetic, so recall is not read there), the two interleaved question by
  question with the question's vector remembered, no filter and the largest project; and the vector leg alone.

    WWT_MODEL_DIR=<model folder> python benchmarks/vector_leg.py [--background 1000] [--scale-home DIR] [--write]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _shared import load_average, replace_section  # noqa: E402
from recall import LIMIT, relevant_roots, with_split  # noqa: E402
from recall_xlang import CROSS, archive, load  # noqa: E402

import wwt.search as search_module  # noqa: E402
from wwt.language_axis import question_weight  # noqa: E402
from wwt.models import Filters  # noqa: E402
from wwt.service import Memory  # noqa: E402

EXACT = search_module.vector_leg
WINDOW = 4  # the old fetch: this × depth


def window_leg(vector, query_vector, depth: int, allowed, weight: float):
    """The vector leg until 2026-12-06: the uncorrected best WINDOW × depth, re-scored."""
    if getattr(vector, "language_axis", None) is None:
        hits = vector.search(query_vector, depth, allowed)
        return hits, hits
    wide = vector.search(query_vector, depth * WINDOW, allowed)
    return wide[:depth], vector.neutralise(wide, query_vector, weight=weight)[:depth]


@contextmanager
def leg(name: str):
    search_module.vector_leg = window_leg if name == "window" else EXACT
    try:
        yield
    finally:
        search_module.vector_leg = EXACT


def ranks(memory: Memory, questions: list[dict]) -> list[int | None]:
    store, out = memory._open_store(), []
    for item in questions:
        relevant = relevant_roots(store, item["relevant"])
        hits = memory.search_outcome(item["q"], Filters(platform=item.get("source")), LIMIT).hits
        out.append(next((i + 1 for i, h in enumerate(hits) if h.session_id in relevant), None))
    return out


def recall_rows(memory: Memory, label: str) -> list[str]:
    sets = {
        "recall_xlang": load("recall_xlang.json"),
        "recall_paraphrase2": load("recall_paraphrase2.json"),
        "recall_paraphrase": load("recall_paraphrase.json"),
        "recall_dev": [q for q in with_split(load("recall_dev.json")) if q["kind"] != "negative"],
    }
    rows = []
    for name, questions in sets.items():
        found = {}
        for variant in ("window", "exact"):
            with leg(variant):
                found[variant] = ranks(memory, questions)
        for part, split in (("held-out", "held"), ("tuning", "tune")):
            for kinds, tag in ((CROSS, "cross-language"), (("paraphrase",), "same language"), (None, "all")):
                picked = [i for i, q in enumerate(questions)
                          if q["split"] == split and (kinds is None or q["kind"] in kinds)]
                if not picked or (name == "recall_xlang" and kinds is None) or (name == "recall_dev" and tag == "same language"):
                    continue
                cells = [sum(1 for i in picked if (found[v][i] or 99) <= 3) / len(picked) for v in found]
                moved = sum(1 for i in picked if found["window"][i] != found["exact"][i])
                rows.append(f"| {label} | {name} {tag}, {part} | {len(picked)} | {cells[0]:.2f} → **{cells[1]:.2f}** "
                            f"| {moved} |")
    return rows


def latency_rows(home: Path, rounds: int = 3) -> list[str]:
    from scale import make_queries

    built = json.loads((home.parent / "built.json").read_text())
    queries = [q for _, q in make_queries(built["generate"]["identifiers"], n=80)]
    memory = Memory(home)
    store, indexes = memory._open_store(), memory._refresh_indexes()
    bilingual = indexes.vector.language_axis is not None
    largest = store.conn.execute("SELECT s.project, count(*) n FROM chunks c JOIN sessions s ON s.session_id ="
                                 " c.root_session_id WHERE s.project IS NOT NULL GROUP BY 1 ORDER BY n DESC").fetchone()
    out = [f"Scale archive: {indexes.vector.count():,} vectors ({indexes.vector.korean_count():,} Korean), language "
           f"axis {'fitted' if bilingual else 'none'}; {len(queries)} questions of scale.py's mix, {rounds} rounds.", "",
           "| scope | window p50 ms | exact p50 ms | ratio | vector leg alone: window / exact p50 ms |",
           "|---|---|---|---|---|"]
    embedder = memory._get_embedder()
    for scope, filters in (("no filter", Filters()), (f"project={largest[0]} ({largest[1]:,} chunks)",
                                                      Filters(project=largest[0]))):
        whole = {"window": [], "exact": []}
        alone = {"window": [], "exact": []}
        allowed = store.chunk_ids_matching(filters)
        for round_ in range(rounds):
            for query in queries:
                order = ["window", "exact"] if round_ % 2 == 0 else ["exact", "window"]
                vector = embedder.embed_query(query)
                for variant in order:
                    with leg(variant):
                        memory.search_outcome(query, filters, LIMIT)  # the question's vector remembered
                for variant in order:
                    with leg(variant):
                        started = time.perf_counter()
                        memory.search_outcome(query, filters, LIMIT)
                        whole[variant].append(time.perf_counter() - started)
                    function = window_leg if variant == "window" else EXACT
                    started = time.perf_counter()
                    function(indexes.vector, vector, search_module.candidate_depth(LIMIT), allowed, question_weight(query))
                    alone[variant].append(time.perf_counter() - started)
        w, p = (statistics.median(whole[v]) * 1000 for v in ("window", "exact"))
        aw, ap = (statistics.median(alone[v]) * 1000 for v in ("window", "exact"))
        out.append(f"| {scope} | {w:.1f} | {p:.1f} | {p / w:.2f}× | {aw:.2f} / {ap:.2f} |")
    # what the exact leg adds when a language's shift demands it: that language's own best depth. The scale
    # archive's vectors are synthetic and lean by language far less than e5's (its Korean questions hardly ever need
    # the fetch), so the fetch is timed directly. Its worst case is a small minority (hnswlib's filtered walk visits
    # the majority on the way): indexes of every Korean chunk of the scale archive plus a few English ones are built
    # for it, the fetch timed from the rows kept in memory (LANGUAGE_ROWS_MAX) and by the filtered walk.
    import random
    import tempfile

    import wwt.vector_index as vector_index_module
    from wwt.vector_index import VectorIndex

    english = sorted(indexes.vector.all_ids() - indexes.vector._korean)
    korean_ids = sorted(indexes.vector._korean)
    korean_questions = [q for q in queries if question_weight(q)]
    depth = search_module.candidate_depth(LIMIT)
    vectors = {q: embedder.embed_query(q) for q in korean_questions}
    out += ["", f"The fetch the exact leg adds for a Korean question whose shift could lift an English chunk past the "
            f"window (the English best {depth}), {len(korean_questions)} Korean questions × {rounds}; the window itself "
            f"(the uncorrected best {depth * WINDOW}) for scale:", "",
            "| index | English share | window p50 ms | fetch from rows p50 ms (one-time build) | by filtered walk p50 ms |",
            "|---|---|---|---|---|"]

    def timed(call, rounds_: int = rounds) -> float:
        spent = []
        for _ in range(rounds_):
            for query in korean_questions:
                started = time.perf_counter()
                call(vectors[query])
                spent.append(time.perf_counter() - started)
        return statistics.median(spent) * 1000

    with tempfile.TemporaryDirectory() as folder:
        korean_vectors = indexes.vector.get_vectors(korean_ids)
        for size in (1_500, 5_000):
            sample = sorted(random.Random(29).sample(english, size))
            index = VectorIndex(Path(folder) / f"v{size}", dim=indexes.vector.dim)
            index.add(korean_ids, korean_vectors, korean=[True] * len(korean_ids))
            index.add(sample, indexes.vector.get_vectors(sample), korean=[False] * size)
            window = timed(lambda v, index=index: index.search(v, depth * WINDOW))
            started = time.perf_counter()
            index.search(vectors[korean_questions[0]], depth, korean=False)  # builds the rows
            build = (time.perf_counter() - started) * 1000
            rows = timed(lambda v, index=index: index.search(v, depth, korean=False))
            saved, vector_index_module.LANGUAGE_ROWS_MAX = vector_index_module.LANGUAGE_ROWS_MAX, 0
            index._rows.clear()
            walk = timed(lambda v, index=index: index.search(v, depth, korean=False))
            vector_index_module.LANGUAGE_ROWS_MAX = saved
            out.append(f"| {len(korean_ids):,} Korean + {size:,} English | {size / (size + len(korean_ids)):.0%} | "
                       f"{window:.2f} | {rows:.2f} ({build:.0f} ms) | {walk:.2f} |")
    walk = timed(lambda v: indexes.vector.search(v, depth, korean=False))
    out.append(f"| the scale archive ({indexes.vector.count():,}) | {len(english) / indexes.vector.count():.0%} | – | "
               f"– (over LANGUAGE_ROWS_MAX) | {walk:.2f} |")
    memory.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--background", type=int, default=1000, help="also the archive with this many distractors (0: none)")
    ap.add_argument("--scale-home", type=Path, default=HERE / ".work" / "scale" / "100k" / "home")
    ap.add_argument("--write", action="store_true", help="write section vector-leg of RESULTS.md")
    args = ap.parse_args()
    rows = ["| archive | set, part | n | R@3 window → exact | questions whose rank moved |",
            "|---|---|---|---|---|"]
    names = [("xlang", "dev (59 chunks)")]
    if args.background:
        names.append((f"xlang-bg{args.background}", f"dev + {args.background} distractor sessions"))
    for folder, label in names:
        if not (HERE / ".work" / folder / "home").exists():
            raise SystemExit(f"no archive benchmarks/.work/{folder}: run benchmarks/recall_xlang.py first")
        memory = archive(HERE / ".work" / folder, [])
        memory.search_outcome("warm up", Filters(), LIMIT)
        rows += recall_rows(memory, label)
        memory.close()
    lines = [f"`python benchmarks/vector_leg.py{f' --background {args.background}' if args.background != 1000 else ''} "
             f"--write` — multilingual-e5-small int8 (offline test build), load {load_average()}. Fused session R@3 "
             "(what lands), the vector leg's candidates gathered the old way (window: the uncorrected best 4 × depth, "
             "re-scored) and exact (each language's own best depth fetched too when its shift could lift one past the "
             "corrected best). No parameter: every half is a figure.", "", *rows, ""]
    if args.scale_home.exists():
        lines += latency_rows(args.scale_home)
    else:
        lines.append(f"(no scale archive at {args.scale_home.name}: run benchmarks/scale_corpus.py --chunks 100000)")
    text = "\n".join(lines)
    print(text)
    if args.write:
        replace_section("vector-leg", "## The vector leg's language correction at archive size (issue 29)\n\n" + text)


if __name__ == "__main__":
    main()
