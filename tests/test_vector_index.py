"""The vector index over real hnswlib: cosine similarity, filters that never come back empty, atomic saves."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from wwt import vector_index
from wwt.lexical_index import IndexCorrupt
from wwt.vector_index import MANIFEST, VectorIndex

DIM = 32


def unit_rows(n: int, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def exact_top(vectors: np.ndarray, ids: list[int], query: np.ndarray, k: int) -> list[int]:
    scores = vectors @ (query / np.linalg.norm(query))
    return [ids[i] for i in np.argsort(-scores, kind="stable")[:k]]


@pytest.fixture
def filled(tmp_path: Path) -> tuple[VectorIndex, np.ndarray, list[int]]:
    vectors = unit_rows(500)
    ids = [1000 + i for i in range(500)]
    index = VectorIndex(tmp_path / "vec", dim=DIM)
    index.add(ids, vectors)
    return index, vectors, ids


def test_search_returns_cosine_similarity_best_first(filled) -> None:
    index, vectors, ids = filled
    results = index.search(vectors[7], 5)
    assert results[0][0] == ids[7]
    assert results[0][1] == pytest.approx(1.0, abs=1e-5)
    expected = {ids[i]: float(vectors[i] @ vectors[7]) for i in range(len(ids))}
    for chunk_id, score in results:
        assert score == pytest.approx(expected[chunk_id], abs=1e-5)
    assert [s for _, s in results] == sorted((s for _, s in results), reverse=True)


def test_recall_on_a_small_set_is_exact(filled) -> None:
    index, vectors, ids = filled
    queries = unit_rows(20, seed=1)
    for query in queries:
        assert [i for i, _ in index.search(query, 10)] == exact_top(vectors, ids, query, 10)


def test_unnormalised_query_gives_the_same_ranking(filled) -> None:
    index, vectors, _ = filled
    assert [i for i, _ in index.search(vectors[3] * 7.5, 5)] == [i for i, _ in index.search(vectors[3], 5)]


def test_filter_restricts_results_and_is_exact_for_small_sets(filled) -> None:
    index, vectors, ids = filled
    allowed = {ids[i] for i in range(0, 500, 50)}  # 10 far-apart ids
    results = index.search(vectors[7], 5, allowed=allowed)
    assert len(results) == 5
    assert {i for i, _ in results} <= allowed
    positions = sorted(ids.index(i) for i in allowed)
    assert [i for i, _ in results] == exact_top(
        vectors[positions], [ids[p] for p in positions], vectors[7], 5
    )


def test_filter_never_comes_back_empty_while_matches_exist_on_the_graph_path(filled, monkeypatch) -> None:
    index, vectors, ids = filled
    monkeypatch.setattr(vector_index, "BRUTE_FORCE_MAX", 0)  # force the hnswlib filtered walk
    allowed = {ids[499], ids[250], 424242}  # 424242 is not in the index
    results = index.search(vectors[0], 10, allowed=allowed)
    assert {i for i, _ in results} == {ids[499], ids[250]}


def test_filter_with_no_live_match_is_empty(filled) -> None:
    index, vectors, ids = filled
    assert index.search(vectors[0], 5, allowed={1, 2, 3}) == []
    assert index.search(vectors[0], 5, allowed=set()) == []
    index.delete([ids[0]])
    assert index.search(vectors[0], 5, allowed={ids[0]}) == []


def test_delete_removes_from_results_and_counts(filled) -> None:
    index, vectors, ids = filled
    assert index.delete([ids[7], 999_999]) == 1
    assert ids[7] not in {i for i, _ in index.search(vectors[7], 20)}
    assert index.count() == 499
    assert ids[7] not in index.all_ids()


def test_readding_a_deleted_id_revives_it_with_the_new_vector(filled) -> None:
    index, vectors, ids = filled
    index.delete([ids[7]])
    index.add([ids[7]], vectors[8:9])
    top = index.search(vectors[8], 2)
    assert {i for i, _ in top} == {ids[7], ids[8]}
    assert index.count() == 500


def test_new_ids_reuse_deleted_slots_and_grow_past_capacity(tmp_path: Path) -> None:
    index = VectorIndex(tmp_path / "vec", dim=DIM)
    vectors = unit_rows(vector_index.INITIAL_CAPACITY + 300, seed=3)
    index.add(list(range(len(vectors))), vectors)
    assert index.count() == len(vectors)
    index.delete(range(100))
    index.add([50_000 + i for i in range(100)], vectors[:100])
    assert index.count() == len(vectors)
    assert index.search(vectors[5], 1)[0][0] == 50_005


def test_updating_an_id_replaces_its_vector(filled) -> None:
    index, vectors, ids = filled
    index.add([ids[0]], vectors[9:10])
    assert index.count() == 500
    np.testing.assert_allclose(index.get_vectors([ids[0]])[0], vectors[9], atol=1e-5)


def test_wrong_shapes_are_rejected(filled) -> None:
    index, _, _ = filled
    with pytest.raises(ValueError):
        index.add([1, 2], unit_rows(3))
    with pytest.raises(ValueError):
        index.search(np.ones(DIM + 1, dtype=np.float32), 3)


def test_empty_index_returns_nothing(tmp_path: Path) -> None:
    index = VectorIndex(tmp_path / "vec", dim=DIM)
    assert index.search(unit_rows(1)[0], 5) == []
    assert index.count() == 0


def test_save_and_reload_keep_vectors_and_deletions(filled, tmp_path: Path) -> None:
    index, vectors, ids = filled
    index.delete([ids[7]])
    index.save()
    reopened = VectorIndex(tmp_path / "vec", dim=DIM, create=False)
    assert reopened.count() == 499
    assert reopened.all_ids() == set(ids) - {ids[7]}
    assert reopened.search(vectors[3], 5) == index.search(vectors[3], 5)
    assert ids[7] not in {i for i, _ in reopened.search(vectors[7], 20)}
    reopened.add([ids[7]], vectors[7:8])  # deleted slot revived after a reload
    assert reopened.search(vectors[7], 1)[0][0] == ids[7]


def test_save_is_atomic_a_failed_save_leaves_the_previous_generation(
    filled, tmp_path: Path, monkeypatch
) -> None:
    index, vectors, ids = filled
    index.save()
    before = json.loads((tmp_path / "vec" / MANIFEST).read_text())
    index.add([1], unit_rows(1, seed=9))

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(vector_index.os, "replace", crash)
    with pytest.raises(OSError):
        index.save()
    monkeypatch.undo()
    assert json.loads((tmp_path / "vec" / MANIFEST).read_text()) == before
    reopened = VectorIndex(tmp_path / "vec", dim=DIM)
    assert reopened.count() == 500 and 1 not in reopened.all_ids()


def test_save_leaves_only_the_current_generation(filled, tmp_path: Path) -> None:
    index, _, _ = filled
    index.save()
    index.save()
    names = sorted(p.name for p in (tmp_path / "vec").iterdir())
    generations = {name.split(".")[0] for name in names if name != MANIFEST}
    assert MANIFEST in names and len(generations) == 1  # the graph, its live ids and its Korean ids


def test_missing_index_raises_when_not_creating(tmp_path: Path) -> None:
    with pytest.raises(IndexCorrupt):
        VectorIndex(tmp_path / "nothing", dim=DIM, create=False)


def test_corrupt_files_raise_index_corrupt(filled, tmp_path: Path) -> None:
    index, _, _ = filled
    index.save()
    manifest = json.loads((tmp_path / "vec" / MANIFEST).read_text())
    (tmp_path / "vec" / f"vectors-{manifest['gen']}.hnsw").write_bytes(b"\x00garbage")
    with pytest.raises(IndexCorrupt):
        VectorIndex(tmp_path / "vec", dim=DIM)
    (tmp_path / "vec" / MANIFEST).write_text("{")
    with pytest.raises(IndexCorrupt):
        VectorIndex(tmp_path / "vec", dim=DIM)


def test_dimension_mismatch_raises_index_corrupt(filled, tmp_path: Path) -> None:
    index, _, _ = filled
    index.save()
    with pytest.raises(IndexCorrupt):
        VectorIndex(tmp_path / "vec", dim=DIM * 2)


def test_a_repeated_small_scope_is_scored_from_a_cache_that_writes_invalidate(filled, monkeypatch) -> None:
    index, vectors, ids = filled
    scope = set(ids[:50])
    first = index.search(vectors[3], 5, scope)
    fetches: list[int] = []

    class Counting:  # hnswlib's methods are read-only: wrap the index instead
        def __init__(self, real) -> None:
            self.real = real

        def get_items(self, labels):
            fetches.append(len(labels))
            return self.real.get_items(labels)

        def __getattr__(self, name):
            return getattr(self.real, name)

    monkeypatch.setattr(index, "_index", Counting(index._index))
    assert index.search(vectors[3], 5, set(ids[:50])) == first
    assert fetches == []  # the same scope again: no fetch from hnswlib

    index.add([ids[10]], vectors[3:4])  # id 10 now holds the query's own vector
    after_add = index.search(vectors[3], 5, scope)
    assert {after_add[0][0], after_add[1][0]} == {ids[3], ids[10]} and fetches == [50]
    index.delete([ids[10]])
    assert ids[10] not in [i for i, _ in index.search(vectors[3], 5, scope)]


def test_the_scope_cache_is_bounded(filled) -> None:
    index, vectors, ids = filled
    for start in range(0, 20 * 10, 10):
        index.search(vectors[0], 3, set(ids[start : start + 10]))
    assert len(index._scopes) == vector_index.SCOPE_CACHE_SIZE


def test_a_large_scope_handed_out_again_is_not_re_intersected_until_a_write(filled, monkeypatch) -> None:
    index, vectors, ids = filled
    monkeypatch.setattr(vector_index, "BRUTE_FORCE_MAX", 100)  # 300 ids: the filtered graph walk
    scope = frozenset(ids[:300])
    first = index.search(vectors[5], 5, scope)
    assert index._live_parts[id(scope)][0] is scope
    assert index.search(vectors[5], 5, scope) == first
    index.delete([ids[5]])
    assert index._live_parts == {}
    assert ids[5] not in [i for i, _ in index.search(vectors[5], 5, scope)]
