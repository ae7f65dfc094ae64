"""Issue 29's last candidates for the vector leg, measured outside the index on recall_xlang.py's archives: a
hubness penalty (CSLS-like: a chunk near everything loses a little) and other views of the question (its clauses,
the question as an e5 passage, the question without the glossary's translations).

Every chunk is scored exactly (all vectors of the archive, the question's vector as ``wwt.search.run_search``
embeds it), corrected for language as the vector leg is (``VectorIndex.neutralise``), then ranked by session.
Prints session R@3 of the vector leg per set and kind ("x" cross-language, "s" same language, "o" the dev set's
other kinds). The hubness penalty also runs through the whole search (fused R@3), patched into ``neutralise``.

    WWT_MODEL_DIR=<model folder> python benchmarks/recall_vector_variants.py [--background 1000] [--split tune]

Reads benchmarks/.work/xlang[-bgN] (run recall_xlang.py first). Results (2026-12-06) in recall_xlang.py's TRIED.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from recall import relevant_roots, with_split  # noqa: E402
from recall_legs import session_rank  # noqa: E402
from recall_xlang import CROSS, archive, load, measure, r_at  # noqa: E402

from wwt.glossary import translations  # noqa: E402
from wwt.language_axis import question_weight  # noqa: E402
from wwt.search import bridged_query  # noqa: E402
from wwt.store.rows import requests_of  # noqa: E402

_CLAUSE = re.compile(r"[,.?!;—–]|\band\b|\bor\b|\bwhen\b|\bafter\b|\bbecause\b")


def clauses(question: str) -> list[str]:
    parts = [p.strip() for p in _CLAUSE.split(question) if p.strip()]
    return [p for p in parts if len(p.split()) >= 2 or len(p) >= 6]


def group(item: dict) -> str:
    return "x" if item["kind"] in CROSS else "s" if item["kind"] == "paraphrase" else "o"


def hub_scores(memory, ids: list[int], vectors: np.ndarray, sessions: np.ndarray, bank: str, k: int) -> dict:
    """Each chunk's mean cosine to its ``k`` nearest neighbours of other sessions: other chunks ("doc") or the
    archive's user requests embedded as questions ("req")."""
    if bank == "doc":
        others, their = vectors, sessions
    else:
        store, texts, owners = memory._open_store(), [], []
        for session, stored in store.conn.execute("SELECT session_id, requests FROM chunks"):
            for text in requests_of(stored):
                texts.append(text)
                owners.append(session)
        others, their = memory._get_embedder().embed_requests(texts), np.array(owners)
    similar = vectors @ others.T
    similar[sessions[:, None] == their[None, :]] = -1.0
    return dict(zip(ids, np.sort(similar, axis=1)[:, -k:].mean(axis=1).tolist(), strict=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--background", type=int, default=0)
    ap.add_argument("--split", choices=("tune", "held"), default="tune")
    args = ap.parse_args()
    name = f"xlang-bg{args.background}" if args.background else "xlang"
    memory = archive(HERE / ".work" / name, [])
    store, indexes, embedder = memory._open_store(), memory._refresh_indexes(), memory._get_embedder()
    vector = indexes.vector
    ids = sorted(vector.all_ids())
    vectors = vector.get_vectors(ids)
    rows = {r.id: r for r in store.chunks_by_ids(ids)}
    sessions = np.array([rows[i].session_id for i in ids])
    sets = {
        "xlang": load("recall_xlang.json"), "para2": load("recall_paraphrase2.json"),
        "para": load("recall_paraphrase.json"),
        "dev": [q for q in with_split(load("recall_dev.json")) if q["kind"] != "negative"],
    }
    chosen = {s: [q for q in qs if q["split"] == args.split] for s, qs in sets.items()}

    def ranked(scores: np.ndarray, question_vector: np.ndarray, weight: float) -> list[tuple[int, float]]:
        return vector.neutralise(sorted(zip(ids, scores.tolist(), strict=True), key=lambda x: -x[1]), question_vector, weight)

    found: dict[str, dict[str, list[bool]]] = {}
    for set_name, questions in chosen.items():
        for item in questions:
            relevant = relevant_roots(store, item["relevant"])
            q, weight = item["q"], question_weight(item["q"])
            bridged = embedder.embed_query(bridged_query(q, translations(q)))
            raw = embedder.embed_query(q)
            parts = clauses(q)
            per_clause = embedder.embed(parts, embedder.query_prefix) if len(parts) > 1 else None
            as_passage = embedder.embed([bridged_query(q, translations(q))], embedder.passage_prefix)[0]
            base = vectors @ bridged
            views = {
                "today (question + glossary translations)": ranked(base, bridged, weight),
                "best of the question and its clauses": ranked(
                    np.maximum(base, (vectors @ per_clause.T).max(axis=1)) if per_clause is not None else base,
                    bridged, weight),
                "question half query, half passage": ranked(0.5 * base + 0.5 * (vectors @ as_passage), bridged, weight),
                "question without translations": ranked(vectors @ raw, raw, weight),
                "mean of with and without translations": ranked(
                    vectors @ ((bridged + raw) / np.linalg.norm(bridged + raw)), bridged, weight),
            }
            for view, ranking in views.items():
                rank = session_rank(ranking, rows, relevant)
                found.setdefault(view, {}).setdefault(set_name + group(item), []).append(bool(rank and rank <= 3))
    print(f"vector leg alone, session R@3, {args.split} halves, archive {name} ({len(ids)} chunks)")
    for view, cells in found.items():
        print(f"- {view}: " + ", ".join(f"{k} {np.mean(v):.2f}" for k, v in sorted(cells.items())))

    print("hubness penalty through the whole search: vector R@3 / fused R@3")
    original = vector.neutralise
    for bank, k in (("doc", 10), ("req", 5)):
        hub = hub_scores(memory, ids, vectors, sessions, bank, k)
        for alpha in (0.0, 0.3, 0.6, 1.0):
            def penalised(hits, query, weight=None, alpha=alpha, hub=hub):
                return sorted(((i, s - alpha * hub.get(i, 0.0)) for i, s in original(hits, query, weight)),
                              key=lambda x: -x[1])
            vector.neutralise = penalised
            cells = []
            for set_name, questions in chosen.items():
                results = measure(memory, questions)
                for tag in ("x", "s"):
                    picked = [r for r, item in zip(results, questions, strict=True) if group(item) == tag]
                    if picked:
                        cells.append(f"{set_name}{tag} {r_at(picked, 'corrected', 3)} / {r_at(picked, 'now', 3)}")
            print(f"- {bank} k {k}, α {alpha}: " + ", ".join(cells), flush=True)
    vector.neutralise = original
    memory.close()


if __name__ == "__main__":
    main()
