"""Warm search latency of issue 13's ranking, side by side with the previous pipeline, in one process.

The machine is shared, so the two are measured interleaved (before, now, before, now …) on the same warm
``Memory`` over a store built by benchmarks/scale_corpus.py. "now" is ``Memory.search_outcome`` as it lands
(glossary bridge, recall-filler words, the language axis on a 4× wider vector fetch, adaptive fusion, every
weak rule incl. names never mentioned); "before" re-creates the previous
``run_search`` from the same indexes: one lexical query, the unbridged query vector, weighted_minmax 0.6,
second-chunk bonus 0.1, the first weak rule. The embedder's query memory is off, so every search embeds.

    python benchmarks/recall_latency.py --home <scale store home> [--no-write]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _shared import replace_section  # noqa: E402


def before_search(memory, query: str, filters, limit: int = 10) -> bool:
    """The previous run_search, step for step."""
    from wwt.fusion import fuse
    from wwt.lexical import tokenize
    from wwt.search import (
        candidate_depth,
        group_by_session,
        is_weak,
        lexically_unmatched,
        query_terms,
        term_hits,
    )

    store, indexes = memory._open_store(), memory._refresh_indexes()
    allowed = store.chunk_ids_matching(filters)
    depth = candidate_depth(limit)
    vector_hits = indexes.vector.search(memory._get_embedder().embed_query(query), depth, allowed)
    lexical_hits = indexes.lexical.search(query, filters, depth)
    fused = fuse(lexical_hits, vector_hits, method="weighted_minmax", w_lex=0.6)
    chunks = {row.id: row for row in store.chunks_by_ids([c for c, _ in fused])}
    extra = tokenize(query)
    group_by_session(fused, chunks, limit, query_terms(query, extra), bonus=0.1)
    unmatched = lexically_unmatched(term_hits(indexes.lexical, extra, filters)) if lexical_hits else True
    return is_weak(unmatched, [s for _, s in vector_hits])[0]


def archive_growth(home: Path) -> str:
    """What issue 13 added to the archive: the vector index's Korean ids and the language axis in its manifest
    (the glossary, name list and filler words act on the query only)."""
    total = sum(f.stat().st_size for f in home.rglob("*") if f.is_file())
    vectors = home / "index" / "vectors"
    added = sum(f.stat().st_size for f in vectors.glob("*.korean.npy"))
    manifest = vectors / "vectors.json"
    if manifest.exists():
        axis = json.loads(manifest.read_text(encoding="utf-8")).get("language_axis")
        added += len(json.dumps(axis)) if axis else 0
    return (f"Archive: {total / 1e6:,.0f} MB; issue 13 added {added / 1e3:,.0f} kB to it (Korean chunk ids + the "
            f"language axis) = {100 * added / total:.2f} %.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    os.environ["WWT_HOME"] = str(args.home)

    import wwt.embedder
    from wwt.models import Filters
    from wwt.service import Memory

    wwt.embedder.QUERY_CACHE_SIZE = 0
    queries = [q["q"] for name in ("recall_dev", "recall_queries")
               for q in json.loads((HERE / "data" / f"{name}.json").read_text(encoding="utf-8"))["queries"]]
    memory = Memory(args.home)
    memory.search_outcome("warm up 한국어 질문", Filters(), 10)
    before_search(memory, "warm up 한국어 질문", Filters())
    times: dict[str, list[float]] = {"before": [], "now": []}
    cpu: dict[str, list[float]] = {"before": [], "now": []}
    for _ in range(args.rounds):
        for query in queries:
            for name, search in (("before", lambda q: before_search(memory, q, Filters())),
                                 ("now", lambda q: memory.search_outcome(q, Filters(), 10))):
                t, c = time.perf_counter(), time.process_time()
                search(query)
                times[name].append((time.perf_counter() - t) * 1000)
                cpu[name].append((time.process_time() - c) * 1000)
    chunks = memory.status().get("chunks")
    memory.close()
    load = os.getloadavg()[0]

    def p(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    lines = [
        f"## Recall ranking latency ({time.strftime('%Y-%m-%d')})",
        "",
        f"Command: `python benchmarks/recall_latency.py --home <scale store>` — warm `Memory`, {chunks:,} chunks "
        f"(benchmarks/scale_corpus.py), {len(queries)} recall questions × {args.rounds} rounds, before and now "
        f"interleaved in one process, query memory off; load average {load:.1f} on 2 shared cores.",
        "",
        "| pipeline | wall p50 ms | wall p95 ms | CPU p50 ms (this process, all its threads) |",
        "|---|---|---|---|",
    ]
    for name, values in times.items():
        lines.append(f"| {name} | {statistics.median(values):.1f} | {p(values, 0.95):.1f} | {statistics.median(cpu[name]):.1f} |")
    lines += ["", archive_growth(args.home)]
    report = "\n".join(lines)
    print(report)
    if not args.no_write:
        replace_section("recall-latency", report)


if __name__ == "__main__":
    main()
