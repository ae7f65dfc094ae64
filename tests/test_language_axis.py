"""The Korean↔English axis of the vector leg: which chunks are Korean, how scores move, and that the labels and
the axis live with the vector index (saved, reloaded, and filled in once for an index saved before them)."""

from __future__ import annotations

import ast
import inspect
import json
import os
from pathlib import Path

import numpy as np
import pytest

from wwt.language_axis import KOREAN_SHARE, LanguageAxis, fit, is_korean, korean_share, neutralise, sample_ids
from wwt.vector_index import MANIFEST, VectorIndex

KORQUAD = Path(os.environ.get("WWT_SHARED", Path(__file__).resolve().parents[2] / "shared")) / "data" / "korquad"
DIM = 16


def korquad_paragraphs(n: int) -> list[str]:
    data = json.loads((KORQUAD / "KorQuAD_v1.0_dev.json").read_text(encoding="utf-8"))["data"]
    return [p["context"] for article in data for p in article["paragraphs"]][:n]


def docstrings(n: int) -> list[str]:
    found = [ast.get_docstring(node) for node in ast.walk(ast.parse(inspect.getsource(json)))
             if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))]
    return [doc for doc in found if doc and len(doc) > 100][:n]


def test_korean_prose_is_korean_and_english_documentation_is_not() -> None:
    assert all(is_korean(text) for text in korquad_paragraphs(50))
    assert not any(is_korean(text) for text in docstrings(5))


def test_a_korean_developer_chat_full_of_identifiers_is_still_korean() -> None:
    assert is_korean("user: redis TTL을 300초로 줄였는데 캐시 적중률이 떨어졌어요. maxmemory-policy는 allkeys-lru 그대로예요")
    assert not is_korean("user: set maxmemory-policy to allkeys-lru (캐시)")


def test_the_quick_verdict_is_the_share_of_letters_rule_on_any_mix() -> None:
    """is_korean skips counting letters where the Hangul decide alone; it must still be exactly the share rule —
    spaces, digits, punctuation, jamo, accented Latin and Hangul in every proportion, around the 30 % line."""
    import random

    rng = random.Random(29)
    alphabet = ["가", "한", "ㄱ", "ㅏ", "a", "Z", "é", " ", "\n", "1", ".", "_", "—"]
    texts = ["", "123 ...", "ㄱ", "a가", "aa가", "aaa가", "가 1234567", "ééé가", "\udcff가 x", "\U0001f600한",
             *korquad_paragraphs(20), *docstrings(3)]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 40))) for _ in range(5000)]
    assert [is_korean(t) for t in texts] == [korean_share(t) >= KOREAN_SHARE for t in texts]


def language_vectors(n: int, lean: float, seed: int) -> np.ndarray:
    """Unit vectors sharing a language component ``lean`` along dimension 0 (e5 does this for real)."""
    rows = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32) * 0.3
    rows[:, 0] += lean
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_the_axis_points_from_the_english_passages_to_the_korean_ones() -> None:
    vectors = np.vstack([language_vectors(30, 1.0, 1), language_vectors(30, -1.0, 2)])
    axis = fit(vectors, [True] * 30 + [False] * 30, total=60)
    assert axis is not None and axis.direction[0] > 0.5 and axis.fitted_at == 60
    assert fit(vectors[:35], [True] * 30 + [False] * 5, total=35) is None  # one language: nothing to bridge


def test_a_korean_question_stops_preferring_korean_passages_for_their_language_alone() -> None:
    axis = LanguageAxis(np.eye(DIM, dtype=np.float32)[0], fitted_at=100)
    korean_query = np.eye(DIM, dtype=np.float32)[0] * 0.6 + np.eye(DIM, dtype=np.float32)[1] * 0.8
    hits = [(1, 0.90), (2, 0.88), (3, 0.86), (4, 0.85)]  # 1 and 2 are Korean
    moved = neutralise(hits, korean_query, {1, 2}, axis, weight=0.5)
    assert [chunk_id for chunk_id, _ in moved] == [3, 4, 1, 2]  # each Korean one lost 0.3; order within kept
    english_query = -korean_query
    assert [i for i, _ in neutralise([(3, 0.9), (1, 0.7)], english_query, {1}, axis)][0] == 1
    assert neutralise(hits, korean_query, {1, 2}, None) == hits  # a one-language archive: unchanged


def test_the_sample_spreads_over_the_whole_archive_and_is_stable() -> None:
    ids = list(range(10_000, 0, -1))
    sample = sample_ids(ids, size=100)
    assert len(sample) == 100 and sample == sample_ids(ids, size=100)
    assert sample[0] == 1 and sample[-1] > 9_800


def test_labels_and_the_axis_are_saved_with_the_index_and_come_back(tmp_path: Path) -> None:
    index = VectorIndex(tmp_path / "vec", dim=DIM)
    ids = list(range(1, 61))
    index.add(ids, np.vstack([language_vectors(30, 1.0, 3), language_vectors(30, -1.0, 4)]),
              korean=[True] * 30 + [False] * 30)
    index.save()
    again = VectorIndex(tmp_path / "vec", dim=DIM, create=False)
    assert again.language_axis is not None and again.language_axis.direction[0] > 0.5
    query = np.eye(DIM, dtype=np.float32)[0]
    lowered = dict(again.neutralise([(1, 0.9), (40, 0.9)], query))
    assert lowered[1] < lowered[40]  # id 1 is Korean, 40 English
    again.delete([1])
    assert dict(again.neutralise([(1, 0.9)], query))[1] == 0.9  # a deleted id is no longer Korean


def test_an_index_saved_before_languages_were_recorded_is_labelled_once_from_sqlite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from wwt.indexes import Indexes

    index = VectorIndex(tmp_path / "vec", dim=DIM)
    index.add([1, 2], language_vectors(2, 1.0, 5))
    index.save()
    manifest = json.loads((tmp_path / "vec" / MANIFEST).read_text())
    for key in ("languages", "language_axis", "language_axis_tried"):
        manifest.pop(key)  # as an older wwt wrote it
    (tmp_path / "vec" / MANIFEST).write_text(json.dumps(manifest))
    old = VectorIndex(tmp_path / "vec", dim=DIM, create=False)
    assert old.unlabelled

    class Store:
        def iter_embed_texts(self):
            yield [{"id": 1, "embed_text": korquad_paragraphs(1)[0]}, {"id": 2, "embed_text": docstrings(1)[0]}]

    holder = Indexes.__new__(Indexes)
    holder.vector = old
    holder._label_languages(Store())
    assert not old.unlabelled and old._korean == {1}
    assert old.language_axis is None  # two chunks: too few to fit an axis from (MIN_PER_LANGUAGE)


def test_the_correction_is_weighed_by_the_question_s_language() -> None:
    """Issue 29: e5 pulls a Korean question towards Korean passages far harder than an English one towards English
    passages, so a Korean question gets the full correction and an English one none (benchmarks/recall_xlang.py)."""
    from wwt.language_axis import ENGLISH_QUESTION_WEIGHT, KOREAN_QUESTION_WEIGHT, question_weight

    assert question_weight("창 여러 개 켜면 튕기던 거 어떻게 고쳤지?") == KOREAN_QUESTION_WEIGHT == 1.0
    assert question_weight("the app spins forever after a long idle") == ENGLISH_QUESTION_WEIGHT == 0.0
    assert question_weight("go.mod에서 go 버전이랑 toolchain 버전이 다르게 잡혀 있던 거") == KOREAN_QUESTION_WEIGHT
    axis = LanguageAxis(np.eye(DIM, dtype=np.float32)[0], fitted_at=100)
    leaning = np.eye(DIM, dtype=np.float32)[0] * 0.6 + np.eye(DIM, dtype=np.float32)[1] * 0.8
    hits = [(1, 0.90), (3, 0.80)]  # 1 is Korean; an English question's vector leans Korean too (e5 is uncentred)
    english = neutralise(hits, leaning, {1}, axis, weight=question_weight("why did the builds crawl"))
    assert english == hits  # an English question: its Korean answer no longer pushed down
    korean = neutralise(hits, leaning, {1}, axis, weight=question_weight("빌드가 왜 느렸지"))
    assert [i for i, _ in korean] == [3, 1]  # a Korean question: its Korean passages lose 0.6


def test_the_index_passes_the_question_s_weight_on(tmp_path: Path) -> None:
    index = VectorIndex(tmp_path / "vec", dim=DIM)
    index.add(list(range(1, 61)), np.vstack([language_vectors(30, 1.0, 5), language_vectors(30, -1.0, 6)]),
              korean=[True] * 30 + [False] * 30)
    index.save()
    query = np.eye(DIM, dtype=np.float32)[0]
    assert dict(index.neutralise([(1, 0.9), (40, 0.9)], query, weight=0.0)) == {1: 0.9, 40: 0.9}
    assert dict(index.neutralise([(1, 0.9)], query, weight=1.0))[1] < dict(index.neutralise([(1, 0.9)], query))[1]


def test_a_korean_question_finds_its_english_answer_behind_more_korean_chunks_than_the_leg_reads(
    tmp_path: Path,
) -> None:
    """Issue 29, at archive size: the correction moves every Korean chunk's score by the same amount, so the
    corrected best are each language's own best. A Korean question outscores an English answer with every Korean
    chunk before the correction; with 1,200 of them (the leg used to re-score the first 4 × its depth) the answer
    must still come first, in a scope too, while the raw scores (the "nothing relevant" check's) stay raw."""
    from wwt.search import vector_leg

    unit = np.eye(DIM, dtype=np.float32)
    rng = np.random.default_rng(29)
    korean = 0.95 * unit[0] + 0.1 * unit[1] + rng.standard_normal((1200, DIM)).astype(np.float32) * 0.05
    others = -0.3 * unit[0] + 0.9 * unit[5] + rng.standard_normal((100, DIM)).astype(np.float32) * 0.05
    answer = (0.7 * unit[1] + 0.7 * unit[3])[None, :]
    vectors = np.vstack([korean, others, answer])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = list(range(1, len(vectors) + 1))
    answer_id = ids[-1]
    index = VectorIndex(tmp_path / "vec", dim=DIM)
    index.add(ids, vectors, korean=[True] * 1200 + [False] * 101)
    index.language_axis = LanguageAxis(unit[0], fitted_at=len(ids))
    question = 0.6 * unit[0] + 0.8 * unit[1]  # a Korean question about the English answer's topic

    raw, corrected = vector_leg(index, question, 50, None, weight=1.0)
    assert corrected[0][0] == answer_id
    assert answer_id not in {i for i, _ in index.search(question, 200)}  # the old window would not have held it
    assert [i for i, _ in raw] == [i for i, _ in index.search(question, 50)]  # raw: the plain nearest, unmoved
    scope = frozenset(ids[600:])
    assert vector_leg(index, question, 50, scope, weight=1.0)[1][0][0] == answer_id
    assert vector_leg(index, question, 50, frozenset(ids[:1200]), weight=1.0)[1][0][0] <= 1200  # out of scope


def test_the_index_searches_one_language_at_a_time(tmp_path: Path) -> None:
    index = VectorIndex(tmp_path / "vec", dim=DIM)
    index.add(list(range(1, 1301)), np.vstack([language_vectors(700, 1.0, 7), language_vectors(600, -1.0, 8)]),
              korean=[True] * 700 + [False] * 600)
    query = np.eye(DIM, dtype=np.float32)[0]
    assert {i for i, _ in index.search(query, 40, korean=True)} <= set(range(1, 701))
    assert {i for i, _ in index.search(-query, 40, korean=False)} <= set(range(701, 1301))
    assert len(index.search(query, 40, korean=False)) == 40  # the other language's best, however far
    small = frozenset(range(650, 760))  # a scope both languages share: exact scoring below BRUTE_FORCE_MAX
    assert {i for i, _ in index.search(query, 200, small, korean=True)} == set(range(650, 701))
    index.delete([650])
    index.label_languages(range(651, 700))  # relabelled: what the index reads as Korean changes with it
    assert {i for i, _ in index.search(query, 200, small, korean=True)} == set(range(651, 700))


@pytest.mark.parametrize("lean", [0.9, 0.3, -0.3, -0.9])
def test_the_corrected_leg_is_the_correction_applied_to_every_chunk(tmp_path: Path, lean: float) -> None:
    """Whatever the question leans to, the leg's corrected best are those of the correction applied to the whole
    archive (the exact answer), not just to the chunks nearest before it."""
    from wwt.search import vector_leg

    rng = np.random.default_rng(int(lean * 10) + 50)
    vectors = np.vstack([language_vectors(900, 1.0, 11), language_vectors(700, -1.0, 12)])
    ids = list(range(1, 1601))
    index = VectorIndex(tmp_path / "vec", dim=DIM)
    index.add(ids, vectors, korean=[True] * 900 + [False] * 700)
    axis = LanguageAxis(np.eye(DIM, dtype=np.float32)[0], fitted_at=1600)
    index.language_axis = axis
    for _ in range(5):
        question = rng.standard_normal(DIM).astype(np.float32) * 0.3
        question[0] = lean
        question /= np.linalg.norm(question)
        exact = neutralise([(i, float(v @ question)) for i, v in zip(ids, vectors, strict=True)], question,
                           set(range(1, 901)), axis, weight=1.0)
        _, corrected = vector_leg(index, question, 50, None, weight=1.0)
        assert [i for i, _ in corrected[:20]] == [i for i, _ in exact[:20]]


def test_a_small_language_is_searched_from_rows_kept_in_step_with_the_index(tmp_path: Path) -> None:
    """A language of a few thousand chunks beside a big other one is scored from its vectors in memory (the filtered
    graph walk over it is slow); whatever is added, replaced, moved between languages or deleted, its best are the
    exact best of that language's live chunks, in a scope too."""
    rng = np.random.default_rng(7)
    index = VectorIndex(tmp_path / "vec", dim=DIM)
    index.add(list(range(1, 5001)), language_vectors(5000, 1.0, 21), korean=[True] * 5000)
    index.add(list(range(5001, 6201)), language_vectors(1200, -1.0, 22), korean=[False] * 1200)

    def exact(query: np.ndarray, korean: bool, scope: frozenset[int] | None = None) -> list[int]:
        ids = sorted(i for i in index.all_ids() if ((i in index._korean) == korean) and (scope is None or i in scope))
        vectors = index.get_vectors(ids)
        scores = vectors @ (query / np.linalg.norm(query))
        return [ids[i] for i in np.lexsort((np.asarray(ids), -scores))[:10]]

    def check(query: np.ndarray) -> None:
        got = [i for i, _ in index.search(query, 10, korean=False)]
        assert got == exact(query, False)
        scope = frozenset(range(3000, 5800))
        assert [i for i, _ in index.search(query, 10, scope, korean=False)] == exact(query, False, scope)

    queries = [rng.standard_normal(DIM).astype(np.float32) for _ in range(3)]
    for query in queries:
        check(query)
    assert False in index._rows  # the English rows are kept; the Korean majority goes on by the graph
    assert True not in index._rows
    index.add([5001, 5002], -language_vectors(2, -1.0, 23), korean=[False, False])  # vectors replaced
    index.add([10, 6300], language_vectors(2, -1.0, 24), korean=[False, False])  # a Korean chunk turns English; a new one
    index.add([5003], language_vectors(1, 1.0, 25), korean=[True])  # an English chunk turns Korean
    index.delete(iter([5004, 5005]))  # any iterable, read once
    for query in queries:
        check(query)
    assert {10, 6300} <= set(index._rows[False].ids.tolist()) and not {5003, 5004} & set(index._rows[False].ids.tolist())
    index.label_languages(range(1, 5001))
    assert not index._rows
    for query in queries:
        check(query)
