"""whatwasthat 1.0's retrieval rules, reimplemented as a baseline (DESIGN.md §11; not its code).

- BM25 tokenizer: split ``camelCase`` boundaries and ``.ext``-like suffixes with two regexes, run Kiwi, keep
  morphemes whose tag starts with NN, NR, SL, SN, VV, VA or XR, drop forms of length <= 1, lowercase.
- BM25Okapi with rank_bm25's defaults (k1 = 1.5, b = 0.75, epsilon = 0.25), scored over the whole corpus.
- Fusion: ``0.6·max(0, cos) + 0.4·bm25/max(bm25 over the corpus)``, each leg's top ``min(3·top_k, N)``,
  results under 0.5 dropped (``wwt.fusion.original`` with ``bm25_max`` = the corpus maximum).
- Embeddings: e5-small with no ``query:``/``passage:`` prefixes.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from wwt.lexical import get_kiwi

_KEEP_PREFIXES = ("NN", "NR", "SL", "SN", "VV", "VA", "XR")
_CAMEL = re.compile(r"([a-z])([A-Z][a-z])")
_DOT_EXT = re.compile(r"\.([a-zA-Z]{1,5})\b")


def original_tokenize(text: str) -> list[str]:
    return original_tokenize_many([text])[0]


def original_tokenize_many(texts: Sequence[str]) -> list[list[str]]:
    prepared = [_DOT_EXT.sub(r" \1", _CAMEL.sub(r"\1 \2", text)) for text in texts]
    out: list[list[str]] = []
    for morphemes in get_kiwi().tokenize(prepared):
        out.append(
            [m.form.lower() for m in morphemes if m.tag.startswith(_KEEP_PREFIXES) and len(m.form) > 1]
        )
    return out


class BM25Okapi:
    """rank_bm25.BM25Okapi's scoring (same idf with the epsilon floor for negative idf), over postings."""

    def __init__(
        self, corpus: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25
    ):
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.corpus_size = len(corpus)
        self.doc_len = np.asarray([len(doc) for doc in corpus], dtype=np.float64)
        self.avgdl = float(self.doc_len.sum()) / self.corpus_size if self.corpus_size else 0.0
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for doc_index, doc in enumerate(corpus):
            for word, freq in Counter(doc).items():
                docs, freqs = postings.setdefault(word, ([], []))
                docs.append(doc_index)
                freqs.append(freq)
        self._postings = {
            w: (np.asarray(d), np.asarray(f, dtype=np.float64)) for w, (d, f) in postings.items()
        }
        self.idf: dict[str, float] = {}
        idf_sum = 0.0
        negative: list[str] = []
        for word, (docs, _) in self._postings.items():
            freq = len(docs)
            idf = math.log(self.corpus_size - freq + 0.5) - math.log(freq + 0.5)
            self.idf[word] = idf
            idf_sum += idf
            if idf < 0:
                negative.append(word)
        self.average_idf = idf_sum / len(self.idf) if self.idf else 0.0
        for word in negative:
            self.idf[word] = self.epsilon * self.average_idf
        self._norm = (
            self.k1 * (1 - self.b + self.b * self.doc_len / self.avgdl) if self.avgdl else self.doc_len
        )

    def get_scores(self, query: Sequence[str]) -> np.ndarray:
        """Scores for every document; a repeated query word counts again, as in rank_bm25."""
        scores = np.zeros(self.corpus_size)
        for word in query:
            if word not in self._postings:
                continue
            docs, freqs = self._postings[word]
            scores[docs] += self.idf[word] * (freqs * (self.k1 + 1) / (freqs + self._norm[docs]))
        return scores


def top_k(scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """Best k (index, score), score descending then index ascending."""
    order = np.lexsort((np.arange(len(scores)), -scores))[:k]
    return [(int(i), float(scores[i])) for i in order]
