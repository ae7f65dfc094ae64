"""Which leg loses a recall question: each question's session rank in the lexical leg, the raw vector leg, the
vector leg after the language-axis correction, and in what lands (``Memory.search_outcome``).

A diagnostic for benchmarks/recall.py's development set (same archive: the real fixture logs plus
benchmarks/data/recall_dev_logs, optionally with background passages). Rank = the relevant session's place
among the sessions a leg's chunks belong to, in that leg's own order (None: not in its candidates). Read the
tuning part; the held-out part is for deciding between finished candidates (benchmarks/RESULTS.md, recall-by-kind).

    python benchmarks/recall_legs.py [--kinds ko2en] [--split tune] [--home DIR] [--background N] [--write]

``--home`` keeps the ingested archive in DIR and reuses it on the next run (delete DIR after a change to the
parsers, chunker or indexes).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _shared import REAL_FIXTURES  # noqa: E402
from recall import DEV_LOGS, LIMIT, background_logs, ingest, relevant_roots, with_split  # noqa: E402

from wwt.glossary import EXPANSION_WEIGHT, translations  # noqa: E402
from wwt.language_axis import question_weight  # noqa: E402
from wwt.models import Filters  # noqa: E402
from wwt.search import bridged_query, candidate_depth, topic_tokens, vector_leg  # noqa: E402
from wwt.service import Memory  # noqa: E402


def session_rank(ranked: list[tuple[int, float]], chunks: dict, relevant: set[str]) -> int | None:
    """1-based place of the first relevant session among the sessions of ``ranked``'s chunks, in order."""
    seen: list[str] = []
    for chunk_id, _ in ranked:
        chunk = chunks.get(chunk_id)
        if chunk is None:
            continue
        if chunk.session_id not in seen:
            seen.append(chunk.session_id)
        if chunk.session_id in relevant:
            return len(seen)
    return None


def open_archive(home: Path | None, background: int) -> Memory:
    """The development archive, ingested into ``home`` (reused when it is already there) or a temporary folder."""
    work = home or Path(tempfile.mkdtemp(prefix="wwt-recall-legs-"))
    if (work / "home").exists():
        os.environ["WWT_HOME"] = str(work / "home")
        return Memory(work / "home")
    sources = [REAL_FIXTURES, DEV_LOGS]
    if background:
        sources.append(background_logs(work / "background", background))
    return ingest(work, sources)


def legs(memory: Memory, item: dict) -> dict:
    """The question's rank in each leg, computed as ``wwt.search.run_search`` computes the legs (no filters
    beyond the question's platform)."""
    from wwt.service import _tokenizer

    store, indexes, embedder, tokenize = (memory._open_store(), memory._refresh_indexes(),
                                          memory._get_embedder(), _tokenizer())
    relevant = relevant_roots(store, item["relevant"])
    filters = Filters(platform=item.get("source"))
    allowed = store.chunk_ids_matching(filters)
    depth = candidate_depth(LIMIT)
    bridge = translations(item["q"])
    query_vector = embedder.embed_query(bridged_query(item["q"], bridge))
    raw, corrected = vector_leg(indexes.vector, query_vector, depth, allowed, question_weight(item["q"]))
    tokens = topic_tokens(tokenize(item["q"])) if tokenize else []
    bridge_tokens = tokenize(" ".join(bridge)) if tokenize and bridge else []
    lexical = indexes.lexical.search_tokens(tokens, filters, depth, extra=bridge_tokens, extra_weight=EXPANSION_WEIGHT)
    ids = {i for i, _ in raw} | {i for i, _ in corrected} | {i for i, _ in lexical}
    chunks = {row.id: row for row in store.chunks_by_ids(sorted(ids))}
    hits = memory.search_outcome(item["q"], filters, LIMIT).hits
    return {
        "q": item["q"], "kind": item["kind"], "split": item["split"],
        "now": next((i + 1 for i, h in enumerate(hits) if h.session_id in relevant), None),
        "lexical": session_rank(lexical, chunks, relevant),
        "vector": session_rank(raw, chunks, relevant),
        "corrected": session_rank(corrected, chunks, relevant),
        "top": (hits[0].chunks[0].text if hits and hits[0].chunks else "")[:60],
    }


def report(rows: list[dict], label: str, chunks: int) -> str:
    lines = [
        f"## Recall: each leg's rank per question ({time.strftime('%Y-%m-%d')})",
        "",
        f"Command: `python benchmarks/recall_legs.py {label}` — development archive ({chunks} chunks); ranks of the "
        "relevant session in the lexical leg (with the glossary's translations), the vector leg, the vector leg "
        "after the language-axis correction (what fusion sees), and what lands.",
        "",
        "| question | kind, part | lexical | vector | corrected | now | first shown now |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        top = " ".join(r["top"].split()).replace("|", "/")
        lines.append(f"| {r['q']} | {r['kind']}, {r['split']} | {r['lexical']} | {r['vector']} | {r['corrected']} | "
                     f"{r['now']} | {top} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", default="ko2en", help="comma-separated kinds of recall_dev.json (default ko2en)")
    ap.add_argument("--split", choices=("tune", "held", "all"), default="tune")
    ap.add_argument("--home", type=Path, help="keep (and reuse) the ingested archive in this folder")
    ap.add_argument("--background", type=int, default=0, help="add this many background passages (see recall.py)")
    args = ap.parse_args()

    kinds = set(args.kinds.split(","))
    dev = with_split(json.loads((HERE / "data" / "recall_dev.json").read_text(encoding="utf-8"))["queries"])
    chosen = [q for q in dev if q["kind"] in kinds and args.split in ("all", q["split"])]
    memory = open_archive(args.home, args.background)
    rows = [legs(memory, item) for item in chosen]
    chunks = memory.status().get("chunks", 0)
    memory.close()
    label = f"--kinds {args.kinds} --split {args.split}" + (f" --background {args.background}" if args.background else "")
    text = report(rows, label, chunks)
    print(text)  # an investigation's printout; its finding is in RESULTS.md ("Finished investigations")


if __name__ == "__main__":
    main()
