"""Conversation-recall benchmark: the questions people ask about their own past agent sessions.

KorQuAD questions reuse their paragraph's words and favour the lexical leg; people recalling a conversation
paraphrase, switch language, or remember one identifier. This ingests the real fixture logs
(``../shared/fixtures/real``, all three platforms) into a temporary store with the real parsers, chunker,
model and indexes, then asks the hand-written questions in ``benchmarks/data/recall_queries.json`` and scores
the *sessions* returned (what the user sees) for every leg and fusion rule, side by side in one run.

    python benchmarks/recall.py [--fixtures ../shared/fixtures/real] [--no-append]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from wwt.fusion import fuse  # noqa: E402
from wwt.models import PLATFORMS, Filters  # noqa: E402
from wwt.search import candidate_depth, group_by_session  # noqa: E402
from wwt.service import Memory  # noqa: E402

# (label, method, params) — "lexical"/"vector" are one leg alone.
CONFIGS: list[tuple[str, str, dict]] = [
    ("lexical only", "lexical", {}),
    ("vector only", "vector", {}),
    ("original rule (0.6 cos + 0.4 bm25, floor 0.5)", "original", {}),
    ("rrf k=60", "rrf", {}),
    ("weighted_minmax w_lex=0.3", "weighted_minmax", {"w_lex": 0.3}),
    ("weighted_minmax w_lex=0.5", "weighted_minmax", {"w_lex": 0.5}),
    ("weighted_minmax w_lex=0.6", "weighted_minmax", {"w_lex": 0.6}),
    ("weighted_minmax w_lex=0.7", "weighted_minmax", {"w_lex": 0.7}),
    ("weighted_minmax w_lex=0.8", "weighted_minmax", {"w_lex": 0.8}),
]
LIMIT = 10


def relevant_roots(store, spec: list[str]) -> set[str]:
    """Fixture names (``file`` or ``file@platform``) → the root conversations they were ingested into."""
    rows = store.conn.execute(
        "SELECT s.root_session_id, s.platform, f.path FROM sessions s "
        "JOIN session_files sf ON sf.session_id = s.session_id JOIN files f ON f.id = sf.file_id"
    ).fetchall()
    roots: set[str] = set()
    for name in spec:
        base, _, platform = name.rpartition("@")
        if platform not in PLATFORMS:
            base, platform = name, ""
        for root, plat, path in rows:
            if Path(path).name == base and (not platform or plat == platform):
                roots.add(root)
    return roots


def rank_sessions(fused, store, query_terms) -> list[str]:
    rows = store.chunks_by_ids([cid for cid, _ in fused])
    hits = group_by_session(fused, {r.id: r for r in rows}, LIMIT, query_terms)
    return [h.session_id for h in hits]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fixtures", default=str(ROOT.parent / "shared" / "fixtures" / "real"))
    ap.add_argument("--queries", default=str(HERE / "data" / "recall_queries.json"))
    ap.add_argument("--no-append", action="store_true", help="print only; do not append to RESULTS.md")
    args = ap.parse_args()

    queries = json.loads(Path(args.queries).read_text(encoding="utf-8"))["queries"]
    work = Path(tempfile.mkdtemp(prefix="wwt-recall-"))
    try:
        logs = work / "logs"
        shutil.copytree(args.fixtures, logs, ignore=shutil.ignore_patterns("*.md"))
        os.environ["WWT_HOME"] = str(work / "home")
        mem = Memory(work / "home")
        t0 = time.perf_counter()
        summary = mem.ingest([logs])
        ingest_s = time.perf_counter() - t0
        store = mem._open_store()
        indexes = mem._refresh_indexes()
        embedder = mem._get_embedder()
        from wwt.lexical import tokenize

        per_config: dict[str, dict[str, list[float]]] = {label: defaultdict(list) for label, _, _ in CONFIGS}
        misses: dict[str, list[str]] = defaultdict(list)
        for item in queries:
            filters = Filters(platform=item.get("source"))
            relevant = relevant_roots(store, item["relevant"])
            if not relevant:
                raise SystemExit(f"no session ingested for {item['relevant']} — parser regression?")
            allowed = store.chunk_ids_matching(filters)
            depth = candidate_depth(LIMIT)
            lex = indexes.lexical.search(item["q"], filters, depth)
            vec = indexes.vector.search(embedder.embed_queries([item["q"]])[0], depth, allowed)
            terms = tokenize(item["q"])
            for label, method, params in CONFIGS:
                if method == "lexical":
                    fused = list(lex)
                elif method == "vector":
                    fused = list(vec)
                else:
                    fused = fuse(lex, vec, method=method, **params)
                ranked = rank_sessions(fused, store, terms)
                rank = next((i + 1 for i, sid in enumerate(ranked) if sid in relevant), None)
                rr = 1.0 / rank if rank else 0.0
                for bucket in ("all", item["kind"]):
                    per_config[label][bucket].append(rr)
                    per_config[label][bucket + ":r1"].append(1.0 if rank == 1 else 0.0)
                    per_config[label][bucket + ":r5"].append(1.0 if rank and rank <= 5 else 0.0)
                if rank != 1 and method == "weighted_minmax" and params.get("w_lex") == 0.5:
                    misses[label].append(f"{item['q']} → rank {rank}")
        mem.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    kinds = sorted({q["kind"] for q in queries})
    header = "| rule | MRR@10 all | R@1 | R@5 | " + " | ".join(f"MRR {k}" for k in kinds) + " |"
    lines = [header, "|" + "---|" * (4 + len(kinds))]
    for label, _, _ in CONFIGS:
        m = per_config[label]

        def avg(key: str, m=m) -> str:
            values = m.get(key, [])
            return f"{sum(values) / len(values):.3f}" if values else "–"

        lines.append(
            f"| {label} | {avg('all')} | {avg('all:r1')} | {avg('all:r5')} | "
            + " | ".join(avg(k) for k in kinds)
            + " |"
        )
    counts = ", ".join(f"{k} {sum(1 for q in queries if q['kind'] == k)}" for k in kinds)
    report = "\n".join(
        [
            f"## Conversation recall ({time.strftime('%Y-%m-%d')})",
            "",
            "Command: `python benchmarks/recall.py` (real parsers, chunker, int8 e5 model, tantivy, hnswlib; "
            f"{len(queries)} hand-written questions — {counts} — over the real fixture logs; "
            f"{summary.sessions if hasattr(summary, 'sessions') else '?'} sessions ingested in {ingest_s:.1f} s). "
            "Scored on the sessions shown to the user (grouped, limit 10).",
            "",
            *lines,
            "",
            "Questions the w_lex=0.5 rule did not rank first: "
            + ("; ".join(next(iter(misses.values()), [])) or "none"),
            "",
        ]
    )
    print(report)
    if not args.no_append:
        with open(HERE / "RESULTS.md", "a", encoding="utf-8") as fh:
            fh.write("\n" + report)


if __name__ == "__main__":
    main()
