"""The vector leg: an hnswlib cosine index over chunk embeddings, persisted atomically.

``path`` is a folder the index owns. A save writes ``vectors-<gen>.hnsw`` and ``vectors-<gen>.ids.npy`` (the
live ids) and then atomically replaces the small ``vectors.json`` manifest naming that generation, so a crash
mid-save leaves the previous generation intact and readers never see half a file.

Filtered search never comes back empty while a matching id exists: small allowed sets are scored exactly by
brute force over their stored vectors; larger ones use hnswlib's in-search filter, with a brute-force
fallback if the graph walk returns fewer than asked.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import hnswlib
import numpy as np

from wwt.lexical_index import IndexCorrupt
from wwt.lru import LruDict

if TYPE_CHECKING:
    from wwt.language_axis import LanguageAxis

FORMAT_VERSION = 1
MANIFEST = "vectors.json"
# Chosen by benchmarks/vector_params.py (benchmarks/RESULTS.md): at 50k e5-like vectors M=16/efC=200/ef=96 gives
# recall@10 1.000 at ~0.5 ms/query on one thread; M=24 gained nothing measurable for twice the build time.
DEFAULT_M = 16
DEFAULT_EF_CONSTRUCTION = 200
DEFAULT_EF_SEARCH = 96
# Allowed sets up to this size are scored exactly. hnswlib's get_items costs ~25-40 us per id (50k index: 3 ms
# for 200 ids, 25 ms for 1,000), while the filtered graph walk took 39 ms at 200 ids and 17 ms at 1,000; above
# this size the filtered walk is used (with an exact fallback if it returns fewer than asked).
BRUTE_FORCE_MAX = 1_000
# The matrices of the last few exactly-scored scopes are kept (≤ 1.5 MB each): the default scope is the
# current project, so an MCP server or a warm process asks about the same small set again and again, and
# fetching it from hnswlib costs more than the rest of the search (11 ms of 28 ms for a 501-chunk project).
SCOPE_CACHE_SIZE = 8
# One language's vectors are kept in memory (≤ 15 MB) when it has at most this many chunks and is under a quarter of
# the index: the vector leg asks for that language's best alone (wwt.search.vector_leg), and hnswlib's filtered
# walk over a small minority visits much of the majority on the way (1,500–5,000 English ids beside 68k Korean:
# 8–18 ms, against 0.1–0.5 ms scored from memory; benchmarks/vector_leg.py). Built on first need (50–170 ms there),
# then kept in step by add/delete.
LANGUAGE_ROWS_MAX = 10_000
INITIAL_CAPACITY = 1_024


class VectorIndex:
    """Cosine index over ``dim``-dimensional vectors keyed by integer chunk ids."""

    def __init__(
        self,
        path: Path,
        dim: int = 384,
        create: bool = True,
        m: int = DEFAULT_M,
        ef_construction: int = DEFAULT_EF_CONSTRUCTION,
        ef_search: int = DEFAULT_EF_SEARCH,
    ) -> None:
        self.path = Path(path)
        self.dim = dim
        self.ef_search = ef_search
        self._m = m
        self._ef_construction = ef_construction
        self._alive: set[int] = set()
        self._korean: set[int] = set()  # live ids whose chunk text is Korean (wwt.language_axis.is_korean)
        self.language_axis: LanguageAxis | None = None
        self._axis_tried: int | None = None  # index size at the last fit attempt (a one-language archive has none)
        self.unlabelled = False  # an index saved before languages were recorded: the writer labels it once
        self._gen: str | None = None
        self._scopes = LruDict(SCOPE_CACHE_SIZE)  # frozenset of ids -> (sorted ids, their vectors)
        self._live_parts = LruDict(SCOPE_CACHE_SIZE)  # id(scope) -> (scope, scope ∩ live ids)
        self._rows: dict[bool, _LanguageRows] = {}  # a small language's vectors, by is-Korean (LANGUAGE_ROWS_MAX)
        manifest_path = self.path / MANIFEST
        if manifest_path.exists():
            self._index = self._load(manifest_path)
        elif self.path.exists() and any(p.name.endswith(".hnsw") for p in self.path.iterdir()):
            raise IndexCorrupt(f"vector index at {self.path} has data files but no {MANIFEST}")
        elif not create:
            raise IndexCorrupt(f"vector index missing at {self.path}")
        else:
            self._index = self._new_index(INITIAL_CAPACITY)

    def _new_index(self, capacity: int) -> hnswlib.Index:
        index = hnswlib.Index(space="cosine", dim=self.dim)
        index.init_index(
            max_elements=capacity,
            ef_construction=self._ef_construction,
            M=self._m,
            allow_replace_deleted=True,
        )
        index.set_ef(self.ef_search)
        index.set_num_threads(1)
        return index

    def _load(self, manifest_path: Path) -> hnswlib.Index:
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            if manifest.get("format") != FORMAT_VERSION:
                raise IndexCorrupt(f"vector index at {self.path} has format {manifest.get('format')!r}")
            if manifest.get("dim") != self.dim:
                raise IndexCorrupt(f"vector index at {self.path} holds {manifest.get('dim')}-d vectors")
            gen = str(manifest["gen"])
            self._m = int(manifest.get("M", self._m))
            self._ef_construction = int(manifest.get("ef_construction", self._ef_construction))
            ids = np.load(self.path / f"vectors-{gen}.ids.npy", allow_pickle=False)
            index = hnswlib.Index(space="cosine", dim=self.dim)
            index.load_index(
                str(self.path / f"vectors-{gen}.hnsw"),
                max_elements=int(manifest.get("capacity", 0)),
                allow_replace_deleted=True,
            )
        except IndexCorrupt:
            raise
        except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
            raise IndexCorrupt(f"vector index at {self.path} is unreadable: {exc}") from exc
        self._alive = {int(i) for i in ids.tolist()}
        if len(self._alive) > index.element_count:
            raise IndexCorrupt(f"vector index at {self.path}: id list does not match the graph")
        self._load_languages(manifest, gen)
        self._gen = gen
        index.set_ef(self.ef_search)
        index.set_num_threads(1)
        return index

    def _load_languages(self, manifest: dict, gen: str) -> None:
        """Korean ids and the axis from a save; an index saved before they were recorded is ``unlabelled``."""
        from wwt.language_axis import LanguageAxis

        if not manifest.get("languages"):
            self.unlabelled = bool(self._alive)
            return
        try:
            korean = np.load(self.path / f"vectors-{gen}.korean.npy", allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise IndexCorrupt(f"vector index at {self.path} is unreadable: {exc}") from exc
        self._korean = {int(i) for i in korean.tolist()} & self._alive
        self.language_axis = LanguageAxis.from_json(manifest.get("language_axis"), self.dim)
        tried = manifest.get("language_axis_tried")
        self._axis_tried = int(tried) if isinstance(tried, int) else None

    def _refit_language_axis(self) -> None:
        from wwt.language_axis import due, fit, sample_ids

        count = len(self._alive)
        if not due(self.language_axis, count, self._axis_tried):
            return
        sample = sample_ids(self._alive)
        vectors = np.asarray(self._index.get_items(sample), dtype=np.float32) if sample else np.zeros((0, self.dim))
        self.language_axis = fit(vectors, [i in self._korean for i in sample], count)
        self._axis_tried = count

    # ----- writes ----------------------------------------------------------------------------------------

    def add(self, ids: Sequence[int], vectors: np.ndarray, korean: Sequence[bool] | None = None) -> None:
        """Insert or replace vectors by id (in memory; ``save`` persists). ``korean``: per id, whether its chunk's
        text is Korean (the language axis; unknown = not Korean)."""
        self._scopes.forget_all()
        self._live_parts.forget_all()
        vectors = np.asarray(vectors, dtype=np.float32)
        if len(ids) == 0:
            return
        if vectors.ndim != 2 or vectors.shape != (len(ids), self.dim):
            raise ValueError(f"expected {len(ids)} vectors of dim {self.dim}, got shape {vectors.shape}")
        flags = list(korean) if korean is not None else [False] * len(ids)
        for chunk_id, flag in zip(ids, flags, strict=True):
            (self._korean.add if flag else self._korean.discard)(int(chunk_id))
        labels = np.asarray([int(i) for i in ids], dtype=np.int64)
        if len(set(labels.tolist())) != len(labels):  # last write wins for duplicate ids in one call
            last = {int(label): row for row, label in enumerate(labels)}
            rows = np.asarray(sorted(last.values()))
            labels, vectors = labels[rows], vectors[rows]
        known = set(self._index.get_ids_list()) if self._index.element_count else set()
        is_new = np.asarray([int(label) not in known for label in labels], dtype=bool)
        for label in labels[~is_new]:
            if int(label) not in self._alive:  # deleted earlier: revive its slot, then overwrite the vector
                self._index.unmark_deleted(int(label))
        needed = self._index.element_count + int(is_new.sum())
        if needed > self._index.get_max_elements():
            self._index.resize_index(max(needed, int(self._index.get_max_elements() * 1.5)))
        if (~is_new).any():
            self._index.add_items(vectors[~is_new], labels[~is_new], replace_deleted=False)
        if is_new.any():
            self._index.add_items(vectors[is_new], labels[is_new], replace_deleted=True)
        self._alive.update(int(label) for label in labels)
        if self._rows:  # each label's language once, for both languages' rows
            is_korean = np.asarray([int(label) in self._korean for label in labels], dtype=bool)
            for language, rows in list(self._rows.items()):
                rows.drop(labels)
                mine = is_korean == language
                rows.put(labels[mine], vectors[mine])
                if len(rows) > LANGUAGE_ROWS_MAX:
                    del self._rows[language]

    def delete(self, ids: Iterable[int]) -> int:
        """Mark ids deleted (their slots are reused by later adds). Returns how many were present."""
        self._scopes.forget_all()
        self._live_parts.forget_all()
        removed: list[int] = []
        for chunk_id in ids:
            chunk_id = int(chunk_id)
            if chunk_id in self._alive:
                self._index.mark_deleted(chunk_id)
                self._alive.discard(chunk_id)
                self._korean.discard(chunk_id)
                removed.append(chunk_id)
        for rows in self._rows.values():
            rows.drop(removed)
        return len(removed)

    def label_languages(self, korean_ids: Iterable[int]) -> None:
        """Set which live ids are Korean (the writer's one-time labelling of an index saved before languages were
        recorded); the axis is refitted at the next save."""
        self._live_parts.forget_all()
        self._rows.clear()
        self._korean = {int(i) for i in korean_ids} & self._alive
        self.unlabelled = False
        self.language_axis, self._axis_tried = None, None

    def save(self) -> None:
        """Persist atomically: new generation files first, then the manifest swap, then old files removed."""
        self.path.mkdir(parents=True, exist_ok=True)
        gen = uuid.uuid4().hex[:12]
        graph_path = self.path / f"vectors-{gen}.hnsw"
        ids_path = self.path / f"vectors-{gen}.ids.npy"
        self._index.save_index(str(graph_path))
        _save_ids(ids_path, self._alive)
        if not self.unlabelled:
            _save_ids(self.path / f"vectors-{gen}.korean.npy", self._korean & self._alive)
            self._refit_language_axis()
        _fsync_file(graph_path)
        manifest = {
            "format": FORMAT_VERSION,
            "dim": self.dim,
            "gen": gen,
            "M": self._m,
            "ef_construction": self._ef_construction,
            "capacity": int(self._index.get_max_elements()),
            "count": len(self._alive),
        }
        if not self.unlabelled:
            manifest["languages"] = True  # vectors-<gen>.korean.npy holds the Korean ids
            manifest["language_axis"] = self.language_axis.to_json() if self.language_axis is not None else None
            manifest["language_axis_tried"] = self._axis_tried
        tmp = self.path / f"{MANIFEST}.{gen}.tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(manifest, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path / MANIFEST)
        self._gen = gen
        for stale in self.path.iterdir():
            if stale.name.startswith("vectors-") and gen not in stale.name:
                stale.unlink(missing_ok=True)
            elif stale.name.endswith(".tmp") and stale.name != tmp.name:
                stale.unlink(missing_ok=True)

    # ----- reads -----------------------------------------------------------------------------------------

    def count(self) -> int:
        return len(self._alive)

    def korean_count(self) -> int:
        """How many of the vectors are of Korean chunks (``wwt.language_axis.is_korean``)."""
        return len(self._korean)

    def neutralise(
        self, hits: list[tuple[int, float]], query: np.ndarray, weight: float | None = None
    ) -> list[tuple[int, float]]:
        """``hits`` re-scored without what a question and a passage share for their language alone
        (``wwt.language_axis``; ``weight`` defaults to its WEIGHT); unchanged for a one-language archive."""
        from wwt.language_axis import WEIGHT, neutralise

        return neutralise(hits, query, self._korean, self.language_axis, WEIGHT if weight is None else weight)

    def all_ids(self) -> set[int]:
        return set(self._alive)

    def missing(self, ids: Iterable[int]) -> list[int]:
        """The given ids this index holds no vector for (chunks whose vector is still being back-filled)."""
        return [i for i in ids if int(i) not in self._alive]

    def get_vectors(self, ids: Sequence[int]) -> np.ndarray:
        """Stored (unit-length) vectors for live ids, in the given order; unknown/deleted ids raise KeyError."""
        missing = [i for i in ids if int(i) not in self._alive]
        if missing:
            raise KeyError(f"ids not in the vector index: {missing[:5]}")
        if not ids:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray(self._index.get_items([int(i) for i in ids]), dtype=np.float32)

    def search(
        self, vector: np.ndarray, k: int, allowed: set[int] | None = None, korean: bool | None = None
    ) -> list[tuple[int, float]]:
        """``(id, cosine similarity)`` best first (ties by id); only ids in ``allowed`` when it is given, and only
        Korean chunks (``korean`` True) or only the others (False) when ``korean`` is given."""
        if k <= 0 or not self._alive:
            return []
        query = _unit(np.asarray(vector, dtype=np.float32).reshape(-1))
        if query.shape[0] != self.dim:
            raise ValueError(f"query vector has dim {query.shape[0]}, index has {self.dim}")
        if korean is not None:
            candidates = self._language_part(korean, allowed)
        elif allowed is not None:
            candidates = self._live_part(allowed)
        else:
            return self._graph(query, min(k, len(self._alive)), None)
        if not candidates:
            return []
        if len(candidates) <= BRUTE_FORCE_MAX:
            return self._exact(query, candidates, k)
        rows = self._language_rows(korean) if korean is not None else None
        if rows is not None:
            return rows.best(query, k, None if allowed is None else candidates)
        results = self._graph(query, min(k, len(candidates)), candidates)
        if len(results) < min(k, len(candidates)):
            return self._exact(query, candidates, k)
        return results

    def _graph(self, query: np.ndarray, k: int, allowed: set[int] | None) -> list[tuple[int, float]]:
        ef = max(self.ef_search, k)
        self._index.set_ef(ef)
        row_filter = None if allowed is None else allowed.__contains__
        while True:
            try:
                labels, distances = self._index.knn_query(query, k=k, num_threads=1, filter=row_filter)
                break
            except RuntimeError:  # fewer than k reachable live points: retry asking for fewer
                if k <= 1:
                    return []
                k = max(1, k // 2)
        self._index.set_ef(self.ef_search)
        pairs = [(int(label), 1.0 - float(dist)) for label, dist in zip(labels[0], distances[0], strict=True)]
        pairs.sort(key=lambda item: (-item[1], item[0]))
        return pairs

    def _exact(self, query: np.ndarray, candidates: set[int], k: int) -> list[tuple[int, float]]:
        ids, matrix = self._scope_matrix(candidates)
        scores = matrix @ query
        order = np.lexsort((np.asarray(ids), -scores))[:k]
        return [(ids[i], float(scores[i])) for i in order]


    def _live_part(self, allowed: set[int]) -> set[int]:
        """``allowed`` ∩ live ids. The store hands out the same scope object until its next ingest, so the
        intersection (~2 ms at 25k ids) is kept per object — the entry holds the object, so its id cannot be
        reused while cached — until a write here."""
        if not isinstance(allowed, frozenset):  # a mutable set may change under the same id
            return self._alive.intersection(allowed)
        entry = self._live_parts.recall(id(allowed))
        if entry is not None and entry[0] is allowed:
            return entry[1]
        live = self._alive.intersection(allowed)  # C-level; ids are ints (numpy ints hash alike)
        self._live_parts.remember(id(allowed), (allowed, live))
        return live

    def _language_part(self, korean: bool, allowed: set[int] | None) -> frozenset[int]:
        """The live ids of one language (``allowed``'s only, when given), kept like ``_live_part`` until a write:
        the vector leg asks for a language's best again and again for the same scope (``wwt.search.vector_leg``)."""
        key = ("language", korean, None if allowed is None else id(allowed))
        entry = self._live_parts.recall(key)
        if entry is not None and entry[0] is allowed:
            return entry[1]
        scope = self._alive if allowed is None else self._live_part(allowed)
        part = frozenset(scope & self._korean if korean else scope - self._korean)
        if allowed is None or isinstance(allowed, frozenset):
            self._live_parts.remember(key, (allowed, part))
        return part

    def _language_rows(self, korean: bool) -> _LanguageRows | None:
        """The language's vectors kept in memory, when it is small enough for that (LANGUAGE_ROWS_MAX)."""
        rows = self._rows.get(korean)
        if rows is not None:
            return rows
        size = len(self._korean) if korean else len(self._alive) - len(self._korean)
        if size > LANGUAGE_ROWS_MAX or size * 4 > len(self._alive):
            return None
        ids = sorted(self._korean if korean else self._alive - self._korean)
        rows = _LanguageRows(self.dim)
        rows.put(np.asarray(ids, dtype=np.int64), np.asarray(self._index.get_items(ids), dtype=np.float32))
        self._rows[korean] = rows
        return rows

    def _scope_matrix(self, candidates: set[int]) -> tuple[list[int], np.ndarray]:
        key = frozenset(candidates)
        cached = self._scopes.recall(key)
        if cached is not None:
            return cached
        ids = sorted(candidates)
        entry = (ids, np.asarray(self._index.get_items(ids), dtype=np.float32))
        if len(ids) <= BRUTE_FORCE_MAX:
            self._scopes.remember(key, entry)
        return entry


class _LanguageRows:
    """One language's (id, unit vector) rows in memory, scored exactly."""

    def __init__(self, dim: int) -> None:
        self.ids = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, dim), dtype=np.float32)

    def __len__(self) -> int:
        return len(self.ids)

    def drop(self, ids: Iterable[int]) -> None:
        gone = np.fromiter((int(i) for i in ids), dtype=np.int64)
        if len(gone) and len(self.ids):
            keep = ~np.isin(self.ids, gone)
            self.ids, self.matrix = self.ids[keep], self.matrix[keep]

    def put(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add rows for ids not held (``drop`` them first to replace); vectors are made unit-length, as the
        cosine index stores them."""
        if len(ids):
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            unit = vectors / np.where(norms > 0, norms, 1.0)
            self.ids = np.concatenate([self.ids, np.asarray(ids, dtype=np.int64)])
            self.matrix = np.vstack([self.matrix, unit.astype(np.float32)])

    def best(self, query: np.ndarray, k: int, allowed: set[int] | frozenset[int] | None) -> list[tuple[int, float]]:
        scores = self.matrix @ query
        ids = self.ids
        if allowed is not None:
            inside = np.fromiter((int(i) in allowed for i in ids), dtype=bool, count=len(ids))
            ids, scores = ids[inside], scores[inside]
        if len(ids) > k:  # the best k first (linear), then only they are sorted
            top = np.argpartition(-scores, k - 1)[:k]
            ids, scores = ids[top], scores[top]
        order = np.lexsort((ids, -scores))[:k]
        return [(int(ids[i]), float(scores[i])) for i in order]


def _save_ids(path: Path, ids: Iterable[int]) -> None:
    with open(path, "wb") as handle:
        np.save(handle, np.asarray(sorted(ids), dtype=np.int64), allow_pickle=False)
        handle.flush()
        os.fsync(handle.fileno())


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def _fsync_file(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())
