"""Retrieval quality on KorQuAD 1.0 dev: every unique paragraph is a passage, every question's relevant passage
is its own paragraph. Compares, in one run, wwt's legs and fusion methods with the original tool's rules.

    python benchmarks/retrieval_korquad.py                   # all questions, print only
    python benchmarks/retrieval_korquad.py --record          # ... and append to RESULTS.md
    python benchmarks/retrieval_korquad.py --questions 500   # quick run (fixed sample)

Rows: lexical only (wwt.lexical tokenizer + tantivy BM25), vector only (e5 int8 with query:/passage:
prefixes + hnswlib), weighted min-max fusion over a range of w_lex, RRF, the original fusion rule applied to
wwt's legs, and the original tool end to end (its tokenizer + BM25Okapi + unprefixed e5 + 0.6/0.4 fusion with
the 0.5 floor). Each leg returns ``--depth`` candidates (the original used min(3·top_k, N) = 30). The "wwt search end
to end" row sends every question through ``wwt.search.run_search`` itself (each passage a one-chunk session), so
the figure follows whatever search does today: the guard issue 29 keeps (MRR@10 ≥ 0.94).
Vectors are cached under benchmarks/.work/ (keyed by model file and prefix), so re-runs only search.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # original_rules sits next to this script

from _shared import KORQUAD, load_average, model_key, replace_section  # noqa: E402
from original_rules import BM25Okapi, original_tokenize_many, top_k  # noqa: E402

from wwt import fusion  # noqa: E402
from wwt.glossary import translations  # noqa: E402
from wwt.language_axis import is_korean  # noqa: E402
from wwt.lexical import tokenize, tokenize_many  # noqa: E402
from wwt.lexical_index import LexDoc, LexicalIndex  # noqa: E402
from wwt.models import Filters  # noqa: E402
from wwt.search import bridged_query, run_search, topic_tokens  # noqa: E402
from wwt.store.rows import ChunkHit  # noqa: E402
from wwt.vector_index import VectorIndex  # noqa: E402

WORK = HERE / ".work"
RESULTS = HERE / "RESULTS.md"
DEFAULT_DATA = KORQUAD
W_LEX_GRID = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)

Ranked = list[tuple[int, float]]


def load_korquad(path: Path = KORQUAD) -> tuple[list[str], list[tuple[str, int]]]:
    """(passages, [(question, index of its passage)]) with passages deduplicated by text, in file order
    (benchmarks/scale_corpus.py reuses the vectors cached here, keyed by this order)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    passages: list[str] = []
    index_of: dict[str, int] = {}
    questions: list[tuple[str, int]] = []
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            if context not in index_of:
                index_of[context] = len(passages)
                passages.append(context)
            for qa in paragraph["qas"]:
                questions.append((qa["question"], index_of[context]))
    return passages, questions


def sample_questions(questions: list[tuple[str, int]], n: int | None) -> list[tuple[str, int]]:
    if n is None or n >= len(questions):
        return questions
    picked = sorted(random.Random(0).sample(range(len(questions)), n))
    return [questions[i] for i in picked]


def metrics(rankings: Sequence[Ranked], relevant: Sequence[int]) -> dict[str, float]:
    r1 = r5 = r10 = mrr = 0.0
    for ranked, target in zip(rankings, relevant, strict=True):
        ids = [chunk_id for chunk_id, _ in ranked[:10]]
        if target in ids:
            rank = ids.index(target) + 1
            mrr += 1.0 / rank
            r1 += rank == 1
            r5 += rank <= 5
            r10 += 1
    n = max(1, len(relevant))
    return {"R@1": r1 / n, "R@5": r5 / n, "R@10": r10 / n, "MRR@10": mrr / n}


class PassageStore:
    """KorQuAD's passages as ``wwt.search.run_search`` reads storage (``wwt.store.SearchStore``): each passage is
    a one-chunk session whose id is ``p<passage number>``."""

    def __init__(self, passages: Sequence[str]) -> None:
        self.passages = passages

    def chunk_ids_matching(self, filters: Filters) -> frozenset[int] | None:
        return None

    def chunks_by_ids(self, ids: Sequence[int]) -> list[ChunkHit]:
        return [
            ChunkHit(id=i, chunk_key=f"p{i}", session_id=f"p{i}", source_session_id=f"p{i}", text=self.passages[i],
                     start_ts=None, end_ts=None, first_seq=0, last_seq=0, platform="korquad", project=None,
                     project_path=None, cwd=None, git_branch=None, started_at=None, ended_at=None, title=None,
                     source_path=None)
            for i in ids
        ]


def searched_end_to_end(
    texts: Sequence[str], passages: Sequence[str], lexical: LexicalIndex, vector: VectorIndex,
    vectors: dict[str, np.ndarray],
) -> list[Ranked]:
    """Each question through ``wwt.search.run_search`` as ``wwt search`` runs it (its candidate depth, the
    glossary bridge in both legs, the vector leg's language correction, fusion, thin-chunk demotion, grouping),
    over the passages as one-chunk sessions: the passage ranking it returns, best first."""
    store = PassageStore(passages)
    ranked = []
    for text in texts:
        outcome = run_search(text, Filters(), 10, store=store, lexical=lexical, vector=vector,
                             embed_query=vectors.__getitem__, tokenize=tokenize)
        ranked.append([(int(hit.session_id[1:]), hit.score) for hit in outcome.hits])
    return ranked


def cached_vectors(
    name: str, texts: Sequence[str], embed: Callable[[Sequence[str]], np.ndarray], key: str
) -> np.ndarray:
    """Vectors for ``texts`` from benchmarks/.work, computed (and saved) on a miss."""
    digest = hashlib.sha256(("\x00".join(texts) + "\x01" + key).encode("utf-8")).hexdigest()[:16]
    path = WORK / f"korquad-{name}-{digest}.npy"
    if path.exists():
        return np.load(path)
    WORK.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    vectors = np.asarray(embed(texts), dtype=np.float32)
    print(f"  embedded {len(texts)} {name} in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    np.save(path, vectors)
    return vectors


def run(args: argparse.Namespace) -> tuple[list[list[str]], dict[str, str]]:
    passages, all_questions = load_korquad(args.data)
    questions = sample_questions(all_questions, args.questions)
    texts = [q for q, _ in questions]
    relevant = [p for _, p in questions]
    depth = args.depth
    print(f"{len(passages)} passages, {len(questions)} questions", file=sys.stderr)
    facts: dict[str, str] = {}

    # --- lexical leg: wwt tokenizer + tantivy ---------------------------------------------------------------
    lex_dir = WORK / "korquad-lexical"
    shutil.rmtree(lex_dir, ignore_errors=True)
    started = time.perf_counter()
    index = LexicalIndex(lex_dir / "index")  # its token cache beside it, removed with it: Kiwi's work is timed
    index.add(LexDoc(id=i, text=p) for i, p in enumerate(passages))
    index.commit()
    facts["lexical index build (tokenize + index)"] = f"{time.perf_counter() - started:.1f} s"
    lexical: list[Ranked] = []
    latencies = []
    for text in texts:
        t0 = time.perf_counter()
        lexical.append(index.search(text, Filters(), depth))
        latencies.append(time.perf_counter() - t0)
    # what the default (adaptive) fusion needs besides the legs: each query's idf mass, as run_search passes it
    masses = [fusion.idf_mass(index.doc_freqs(tokens), index.count()) for tokens in tokenize_many(texts)]
    # the lexical leg as run_search builds it: recall-filler words dropped, glossary translations at half weight
    as_searched: list[Ranked] = []
    searched_masses = []
    for text, tokens in zip(texts, tokenize_many(texts), strict=True):
        kept = topic_tokens(tokens)
        bridge = translations(text)
        extra = tokenize_many([" ".join(bridge)])[0] if bridge else []
        as_searched.append(index.search_tokens(kept, Filters(), depth, extra=extra))
        searched_masses.append(fusion.idf_mass(index.doc_freqs(kept), index.count()))
    facts["lexical query p50 (tokenize + search)"] = f"{statistics.median(latencies) * 1000:.2f} ms"

    # --- vector leg: e5 with prefixes + hnswlib -------------------------------------------------------------
    from wwt.embedder import load_embedder

    embedder = load_embedder()
    key = model_key()
    passage_vectors = cached_vectors("passages-e5", passages, embedder.embed_passages, key)
    query_vectors = cached_vectors("queries-e5", texts, embedder.embed_queries, key)
    vec_dir = WORK / "korquad-vectors"
    shutil.rmtree(vec_dir, ignore_errors=True)
    vindex = VectorIndex(vec_dir, dim=passage_vectors.shape[1])
    vindex.add(list(range(len(passages))), passage_vectors, korean=[is_korean(p) for p in passages])
    vindex.save()  # fits the language axis as the archive's index does (none when every passage is Korean)
    vector: list[Ranked] = []
    latencies = []
    for qv in query_vectors:
        t0 = time.perf_counter()
        vector.append(vindex.search(qv, depth))
        latencies.append(time.perf_counter() - t0)
    facts["vector search p50 (hnswlib, no embedding)"] = f"{statistics.median(latencies) * 1000:.2f} ms"

    rows: list[tuple[str, dict[str, float]]] = [
        ("lexical only (kiwi+identifier tokens, tantivy BM25)", metrics(lexical, relevant)),
        ("vector only (e5 int8, query:/passage:, hnswlib)", metrics(vector, relevant)),
    ]
    for w in W_LEX_GRID:
        fused = [
            fusion.fuse(lx, vc, "weighted_minmax", w_lex=w) for lx, vc in zip(lexical, vector, strict=True)
        ]
        rows.append((f"weighted_minmax w_lex={w}", metrics(fused, relevant)))
    fused = [fusion.fuse(lx, vc, "rrf") for lx, vc in zip(lexical, vector, strict=True)]
    rows.append(("rrf k=60", metrics(fused, relevant)))
    fused = [fusion.fuse(lx, vc, "rrf", w_lex=0.7) for lx, vc in zip(lexical, vector, strict=True)]
    rows.append(("rrf k=60 w_lex=0.7", metrics(fused, relevant)))
    fused = [fusion.fuse(lx, vc, "original") for lx, vc in zip(lexical, vector, strict=True)]
    rows.append(("original fusion rule on wwt legs (max-of-list bm25)", metrics(fused, relevant)))
    default = [fusion.fuse(lx, vc, idf_mass=m) for lx, vc, m in zip(lexical, vector, masses, strict=True)]
    rows.append(
        (f"**default** ({fusion.DEFAULT_METHOD}: w_lex from lexical coverage)", metrics(default, relevant))
    )
    searched = [
        fusion.fuse(lx, vc, idf_mass=m) for lx, vc, m in zip(as_searched, vector, searched_masses, strict=True)
    ]
    rows.append(
        ("default with search's lexical query (filler words dropped, glossary at half weight; vectors "
         "of the plain question)", metrics(searched, relevant))
    )
    bridged = [bridged_query(text.strip(), translations(text.strip())) for text in texts]  # as run_search does
    bridged_vectors = cached_vectors("queries-e5-bridged", bridged, embedder.embed_queries, key)
    started = time.perf_counter()
    end_to_end = searched_end_to_end(texts, passages, index, vindex, dict(zip(bridged, bridged_vectors, strict=True)))
    facts["search end to end, mean per question (wwt.search.run_search, question vector given)"] = (
        f"{(time.perf_counter() - started) / max(1, len(texts)) * 1000:.2f} ms")
    rows.append(
        ("**wwt search end to end** (wwt.search.run_search: its depth, the glossary bridge in both legs, the "
         "language correction, thin-chunk demotion; each passage a session)", metrics(end_to_end, relevant))
    )
    index.close()

    # --- the original tool end to end -----------------------------------------------------------------------
    if not args.skip_original:
        started = time.perf_counter()
        bm25 = BM25Okapi(original_tokenize_many(passages))
        facts["original BM25Okapi build"] = f"{time.perf_counter() - started:.1f} s"
        plain_passages = cached_vectors(
            "passages-e5-noprefix", passages, lambda t: embedder.embed(t, ""), key
        )
        plain_queries = cached_vectors("queries-e5-noprefix", texts, lambda t: embedder.embed(t, ""), key)
        original_lex: list[Ranked] = []
        original_vec: list[Ranked] = []
        original_fused: list[Ranked] = []
        for tokens, qv in zip(original_tokenize_many(texts), plain_queries, strict=True):
            scores = bm25.get_scores(tokens)
            lex = top_k(scores, depth)
            cos = plain_passages @ qv
            vec = top_k(cos, depth)
            original_lex.append(lex)
            original_vec.append(vec)
            original_fused.append(fusion.fuse(lex, vec, "original", bm25_max=float(scores.max())))
        rows.append(("original: lexical only (its tokenizer + BM25Okapi)", metrics(original_lex, relevant)))
        rows.append(("original: vector only (e5, no prefixes)", metrics(original_vec, relevant)))
        rows.append(("original: hybrid 0.6/0.4, 0.5 floor", metrics(original_fused, relevant)))

    table = [["method", "R@1", "R@5", "R@10", "MRR@10"]]
    for name, m in rows:
        table.append([name] + [f"{m[k]:.4f}" for k in ("R@1", "R@5", "R@10", "MRR@10")])
    facts["passages / questions"] = f"{len(passages)} / {len(questions)}"
    facts["candidates per leg (--depth)"] = str(depth)
    return table, facts


def slug(label: str) -> str:
    return "-".join("".join(c if c.isalnum() else " " for c in label.lower()).split())


def model_shown(label: str) -> str:
    """The model measured, as a reader can find it: its label, file name and size (not this machine's path)."""
    path = Path(os.environ.get("WWT_MODEL_DIR", "")) / "model.onnx"
    size = f", {path.stat().st_size / 1e6:.0f} MB" if path.is_file() else ""
    return f"{label or 'WWT_MODEL_DIR'} (`model.onnx`{size})"


def markdown(table: list[list[str]], facts: dict[str, str], command: str, label: str = "") -> str:
    lines = [
        f"## Retrieval: KorQuAD 1.0 dev{' — ' + label if label else ''} ({datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC)",
        "",
        f"Command: `{command}`",
        "",
        "| " + " | ".join(table[0]) + " |",
        "|" + "---|" * len(table[0]),
    ]
    lines += ["| " + " | ".join(row) + " |" for row in table[1:]]
    lines += [""] + [f"- {name}: {value}" for name, value in facts.items()] + [""]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--questions", type=int, default=None, help="fixed random sample (seed 0) of N questions"
    )
    parser.add_argument("--depth", type=int, default=30, help="candidates fetched per leg")
    parser.add_argument("--skip-original", action="store_true", help="leave out the original tool's rules")
    parser.add_argument("--record", action="store_true", help="write its section into benchmarks/RESULTS.md")
    parser.add_argument("--model-label", default="",
                        help="which model this is (e.g. 'fully-int8 stand-in'): its own section beside the default's")
    args = parser.parse_args(argv)
    if not os.environ.get("WWT_MODEL_DIR"):
        print("note: WWT_MODEL_DIR unset; the embedder resolves its default model", file=sys.stderr)
    started = time.perf_counter()
    table, facts = run(args)
    facts["wall time"] = f"{time.perf_counter() - started:.0f} s (2 shared cores, load average {load_average()} at the end)"
    facts["model"] = model_shown(args.model_label)
    command = "WWT_MODEL_DIR=<model folder> python benchmarks/retrieval_korquad.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    text = markdown(table, facts, command.strip(), args.model_label)
    print(text)
    if args.record:
        replace_section("retrieval-korquad" + (f"-{slug(args.model_label)}" if args.model_label else ""), text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
