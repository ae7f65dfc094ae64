"""The archive's Korean↔English axis in e5 space, to stop the vector leg preferring a question's own language.

The small multilingual e5 model puts much of a passage's *language* into its vector: a Korean question scores
every Korean passage a little higher than any English one, whatever they are about, so a Korean question about
an English session loses to unrelated Korean ones. The difference of the two languages' mean vectors in the
archive (the axis) carries that shared part: the vector leg subtracts ``WEIGHT`` × the question's leaning along
the axis from every Korean passage's score (adds it, for an English question), so same-language passages lose
what they had for the language alone, and nothing changes between passages of one language. Measured on benchmarks/data/recall_dev.json
(benchmarks/RESULTS.md, section recall-by-kind).

Which chunks are Korean is decided from their text when their vectors are added (``is_korean``) and kept with
the vector index; the axis is fitted from a sample of them when the index is saved (``fit``, ``due``) and stored
in its manifest. An archive with fewer than ``MIN_PER_LANGUAGE`` sampled chunks of either
language has no axis (nothing to bridge).
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

WEIGHT = 0.5  # benchmarks/RESULTS.md, recall-by-kind: 0.5 helped ko2en on both archives; 0.7+ cost vague questions
# Issue 29 (benchmarks/recall_xlang.py, RESULTS.md recall-xlang): the weight by the question's own language. e5's
# pull towards the question's language is lopsided: a Korean question prefers Korean passages far more than an
# English question prefers English ones, so a Korean question needs the full correction and an English one none
# (any shift only lifted unrelated Korean passages over the English answer). Chosen on the tuning halves.
KOREAN_QUESTION_WEIGHT = 1.0
ENGLISH_QUESTION_WEIGHT = 0.0
KOREAN_SHARE = 0.3  # a chunk whose letters are ≥ 30 % Hangul counts as Korean when fitting
MIN_PER_LANGUAGE = 10
SAMPLE = 2000
REFIT_GROWTH = 1.25  # refit once the archive has grown (or shrunk) by this factor since the last fit

_HANGUL_RANGES = ((0xAC00, 0xD7A3), (0x3131, 0x318E))  # syllables, compatibility jamo
_HANGUL = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _HANGUL_RANGES) + "]")


def korean_share(text: str) -> float:
    """Share of the letters in ``text`` that are Hangul (0 for no letters)."""
    letters = sum(map(str.isalpha, text))
    return len(_HANGUL.findall(text)) / letters if letters else 0.0


def is_korean(text: str) -> bool:
    """Does this chunk count as Korean (≥ KOREAN_SHARE of its letters Hangul)? ``korean_share``'s answer without
    counting letters where the Hangul alone decide it (every chunk is asked, at ingest and at a team push): none, or
    already that share of every character (letters are among the characters)."""
    if text.isascii():
        return False
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")  # 4× faster than the regex
    hangul = sum(int(np.count_nonzero((codes >= lo) & (codes <= hi))) for lo, hi in _HANGUL_RANGES)
    if hangul == 0:
        return False
    if hangul >= KOREAN_SHARE * len(text):
        return True
    return hangul / sum(map(str.isalpha, text)) >= KOREAN_SHARE


@dataclass(frozen=True)
class LanguageAxis:
    direction: np.ndarray  # mean Korean vector − mean English vector
    fitted_at: int  # chunks in the index when fitted

    def to_json(self) -> dict:
        return {"direction": [round(float(x), 6) for x in self.direction], "fitted_at": self.fitted_at}

    @classmethod
    def from_json(cls, data: object, dim: int) -> LanguageAxis | None:
        """None for anything malformed: the axis is an optimisation, never a reason to refuse an index."""
        try:
            direction = np.asarray(data["direction"], dtype=np.float32)  # type: ignore[index]
            fitted_at = int(data["fitted_at"])  # type: ignore[index]
        except (TypeError, KeyError, ValueError):
            return None
        if direction.shape != (dim,) or not np.isfinite(direction).all():
            return None
        return cls(direction, fitted_at)


def fit(vectors: np.ndarray, korean: Sequence[bool], total: int) -> LanguageAxis | None:
    """The axis from sampled unit vectors and whether each one's text is Korean; None unless both languages
    have at least MIN_PER_LANGUAGE samples."""
    flags = np.asarray(korean, dtype=bool)
    if len(vectors) != len(flags) or flags.sum() < MIN_PER_LANGUAGE or (~flags).sum() < MIN_PER_LANGUAGE:
        return None
    direction = (vectors[flags].mean(axis=0) - vectors[~flags].mean(axis=0)).astype(np.float32)
    return LanguageAxis(direction, total)


def due(axis: LanguageAxis | None, count: int, fitted_at: int | None) -> bool:
    """Refit when the archive changed size by REFIT_GROWTH since the last fit (or attempt), or never had one."""
    last = axis.fitted_at if axis is not None else fitted_at
    if last is None:
        return count > 0
    return count >= last * REFIT_GROWTH or count * REFIT_GROWTH <= last


def sample_ids(ids: Iterable[int], size: int = SAMPLE) -> list[int]:
    """Evenly spaced over the sorted ids (old and new sessions alike; the same sample for the same archive)."""
    ordered = sorted(ids)
    if len(ordered) <= size:
        return ordered
    step = len(ordered) / size
    return [ordered[int(i * step)] for i in range(size)]


def question_weight(question: str) -> float:
    """The correction's weight for this question: KOREAN_QUESTION_WEIGHT when its text counts as Korean
    (``is_korean``), ENGLISH_QUESTION_WEIGHT otherwise."""
    return KOREAN_QUESTION_WEIGHT if is_korean(question) else ENGLISH_QUESTION_WEIGHT


def korean_shift(query: np.ndarray, axis: LanguageAxis, weight: float) -> float:
    """What ``neutralise`` takes from every Korean passage's score for this question (negative: adds)."""
    return weight * float(np.asarray(query, dtype=np.float32).reshape(-1) @ axis.direction)


def neutralise(
    hits: list[tuple[int, float]], query: np.ndarray, korean_ids: Container[int], axis: LanguageAxis | None,
    weight: float = WEIGHT,
) -> list[tuple[int, float]]:
    """``hits`` (id, cosine) re-scored without the part a question and a passage share for their language alone,
    best first; unchanged without an axis. Only the gap between the languages moves: a Korean question's Korean
    passages lose ``weight`` × its leaning along the axis, an English question's Korean passages gain it."""
    if axis is None or not hits:
        return hits
    shift = korean_shift(query, axis, weight)
    scored = [(chunk_id, score - shift if chunk_id in korean_ids else score) for chunk_id, score in hits]
    scored.sort(key=lambda item: (-item[1], item[0]))
    return scored
