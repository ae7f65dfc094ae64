"""Combine the lexical (BM25) and vector (cosine) legs into one ranking. Pure functions.

Methods (all return ``(id, score)`` best first, ties broken by id ascending):

- ``adaptive`` (default): ``weighted_minmax`` with a weight chosen per query by ``adaptive_w_lex``: the more
  of the question the best lexical hit explains, the more the lexical leg counts. That share is
  ``lexical_coverage`` = best BM25 score / the query's idf mass (``idf_mass``: what a chunk holding every query
  word once would roughly score), and ``w_lex = W_LEX_BASE + W_LEX_PER_COVERAGE · coverage`` within
  [``W_LEX_MIN``, ``W_LEX_MAX``]. A question that copies a chunk's words (an identifier, an error message,
  KorQuAD) leans lexical; a paraphrase whose best lexical hit matches one or two common words leans on the
  vectors. Without the idf mass it is ``weighted_minmax`` at ``DEFAULT_W_LEX``. Chosen on the tuning half of
  benchmarks/data/recall_dev.json with KorQuAD as the guard (benchmarks/RESULTS.md, "Recall by kind"); a
  rule from each leg's score gap (best vs tenth) did as well on conversations but cost KorQuAD 0.019 MRR.
- ``weighted_minmax``: each leg's scores min-max normalised *within this query's candidates* to
  [0, 1], then ``w_lex·lex + (1 − w_lex)·vec``; a side that did not return the id counts 0. Unlike the
  original rule, a chunk found by only one leg still ranks (no floor).
- ``rrf``: reciprocal rank fusion, ``Σ w / (k + rank)`` with ``k = 60``; scale-free, but on KorQuAD it lets
  the weaker leg's top hit outrank the stronger leg's (see benchmarks/RESULTS.md).
- ``original``: whatwasthat 1.0's rule, ``0.6·max(0, cos) + 0.4·bm25/max_bm25``, results under 0.5 dropped.
  The original divided by the BM25 maximum over the *whole corpus's* top-k before filtering; here the
  caller may pass that as ``bm25_max``, otherwise the maximum of the given lexical list stands in for it (the
  same thing when the lexical list is the unfiltered top-k, as it was in the original).

Before ``adaptive``, the default was weighted_minmax with w_lex = 0.6, picked on KorQuAD 1.0 dev
(benchmarks/RESULTS.md): MRR@10 0.9355 vs lexical 0.9270, vector 0.8242, the original's rules 0.9276, RRF
0.8980. w_lex 0.7 scored 0.0008 higher there, but KorQuAD questions copy the passage's words; conversation recall (paraphrases,
cross-lingual) favours the vector leg, so the default leans less on lexical and both are parameters.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence

Ranked = Sequence[tuple[int, float]]

METHODS = ("adaptive", "weighted_minmax", "rrf", "original")
DEFAULT_METHOD = "adaptive"
DEFAULT_W_LEX = 0.6
RRF_K = 60
ORIGINAL_W_VECTOR = 0.6
ORIGINAL_W_LEX = 0.4
ORIGINAL_FLOOR = 0.5
W_LEX_BASE = 0.1
W_LEX_PER_COVERAGE = 0.7
W_LEX_MIN = 0.3
W_LEX_MAX = 0.8


def fuse(
    lexical: Ranked, vector: Ranked, method: str = DEFAULT_METHOD, **params: float
) -> list[tuple[int, float]]:
    """Fused ranking of two ``(id, score)`` lists with ``method`` (see module doc for params)."""
    try:
        rule: Callable[..., list[tuple[int, float]]] = _RULES[method]
    except KeyError:
        raise ValueError(f"unknown fusion method {method!r}; choose one of {', '.join(METHODS)}") from None
    return rule(lexical, vector, **params)


def sort_ranked(scores: dict[int, float]) -> list[tuple[int, float]]:
    """Score descending, then id ascending: deterministic whatever the input order."""
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def minmax(ranked: Ranked) -> dict[int, float]:
    """Scores mapped to [0, 1] within the list; all-equal scores map to 1 (each is the best this leg has)."""
    if not ranked:
        return {}
    values = [score for _, score in ranked]
    low, high = min(values), max(values)
    if high == low:
        return {chunk_id: 1.0 for chunk_id, _ in ranked}
    return {chunk_id: (score - low) / (high - low) for chunk_id, score in ranked}


def weighted_minmax(lexical: Ranked, vector: Ranked, w_lex: float = DEFAULT_W_LEX) -> list[tuple[int, float]]:
    if not 0.0 <= w_lex <= 1.0:
        raise ValueError(f"w_lex must be within [0, 1], got {w_lex}")
    lex, vec = minmax(lexical), minmax(vector)
    fused = {
        chunk_id: w_lex * lex.get(chunk_id, 0.0) + (1.0 - w_lex) * vec.get(chunk_id, 0.0)
        for chunk_id in lex.keys() | vec.keys()
    }
    return sort_ranked(fused)


def bm25_idf(doc_freq: int, total: int) -> float:
    """BM25's idf (as tantivy computes it) of a term found in ``doc_freq`` of ``total`` chunks."""
    return math.log(1.0 + (total - doc_freq + 0.5) / (doc_freq + 0.5))


def idf_mass(doc_freqs: dict[str, int], total: int) -> float:
    """Sum of the query terms' idf: roughly what one chunk holding every query word once would score."""
    return sum(bm25_idf(df, total) for df in doc_freqs.values()) if total > 0 else 0.0


def lexical_coverage(lexical: Ranked, mass: float) -> float:
    """How much of the question the best lexical hit explains: its BM25 score over the query's idf mass (about 1
    for a chunk that holds every query word, more for short chunks that repeat them; 0 without hits)."""
    if not lexical or mass <= 0:
        return 0.0
    return max(score for _, score in lexical) / mass


def adaptive_w_lex(lexical: Ranked, mass: float | None) -> float:
    """``W_LEX_BASE + W_LEX_PER_COVERAGE · coverage`` within [W_LEX_MIN, W_LEX_MAX]; DEFAULT_W_LEX without a mass."""
    if mass is None:
        return DEFAULT_W_LEX
    return min(W_LEX_MAX, max(W_LEX_MIN, W_LEX_BASE + W_LEX_PER_COVERAGE * lexical_coverage(lexical, mass)))


def adaptive(lexical: Ranked, vector: Ranked, idf_mass: float | None = None) -> list[tuple[int, float]]:
    """``weighted_minmax`` with this query's ``adaptive_w_lex`` (``idf_mass``: see the function of that name)."""
    return weighted_minmax(lexical, vector, w_lex=adaptive_w_lex(lexical, idf_mass))


def rrf(lexical: Ranked, vector: Ranked, k: float = RRF_K, w_lex: float = 0.5) -> list[tuple[int, float]]:
    """Reciprocal rank fusion ``Σ w/(k + rank)``, 1-based ranks after sorting each leg deterministically;
    the vector leg weighs ``1 − w_lex``, so the default 0.5 is the textbook sum halved (same order)."""
    fused: dict[int, float] = {}
    for weight, ranked in ((w_lex, lexical), (1.0 - w_lex, vector)):
        for rank, (chunk_id, _) in enumerate(sort_ranked(dict(ranked)), start=1):
            fused[chunk_id] = fused.get(chunk_id, 0.0) + weight / (k + rank)
    return sort_ranked(fused)


def original(
    lexical: Ranked,
    vector: Ranked,
    bm25_max: float | None = None,
    w_vector: float = ORIGINAL_W_VECTOR,
    w_lex: float = ORIGINAL_W_LEX,
    floor: float = ORIGINAL_FLOOR,
) -> list[tuple[int, float]]:
    top = bm25_max if bm25_max is not None else max((score for _, score in lexical), default=0.0)
    lex = {chunk_id: (score / top if top > 0 else 0.0) for chunk_id, score in lexical}
    vec = {chunk_id: max(0.0, score) for chunk_id, score in vector}
    fused = {
        chunk_id: w_vector * vec.get(chunk_id, 0.0) + w_lex * lex.get(chunk_id, 0.0)
        for chunk_id in lex.keys() | vec.keys()
    }
    return sort_ranked({chunk_id: score for chunk_id, score in fused.items() if score >= floor})


def stand_in_vector_scores(lexical: Ranked, vector: Ranked, unembedded: Collection[int]) -> list[tuple[int, float]]:
    """Vector-leg scores for lexical hits that have no vector yet (a first ingest still back-filling): each
    gets the vector score at the same relative place in the vector leg's range as its lexical score has in
    the lexical leg's, so under min-max fusion it ranks by the lexical leg alone — as if fused only over the
    leg it has — instead of losing for a missing leg counted as 0. Empty when the vector leg is (no chunk has
    a vector: every chunk is on the same footing already)."""
    if not vector or not unembedded:
        return []
    low, high = min(s for _, s in vector), max(s for _, s in vector)
    lex = minmax(lexical)
    return [(chunk_id, low + lex[chunk_id] * (high - low)) for chunk_id in lex if chunk_id in unembedded]


_RULES: dict[str, Callable[..., list[tuple[int, float]]]] = {
    "adaptive": adaptive,
    "weighted_minmax": weighted_minmax,
    "rrf": rrf,
    "original": original,
}
