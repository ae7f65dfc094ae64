"""The two derived indexes (tantivy + hnswlib) under one folder, kept in step with SQLite.

SQLite is the truth; the indexes are rebuilt or repaired from it without re-embedding (vectors are stored
in SQLite). Crash safety: before touching the indexes the ingest removes ``SYNC_FILE``; after both indexes
are saved and the store's change counter is bumped it writes the counter there. On open, a missing or
outdated ``SYNC_FILE`` means "compare ids with SQLite and repair": ids in SQLite but not in an index are
added from stored text/vectors, ids in an index but not in SQLite are deleted.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wwt.errors import WwtError

if TYPE_CHECKING:
    from wwt.store import Store

LEXICAL_DIR = "lexical"
VECTOR_DIR = "vectors"  # a folder VectorIndex owns; its manifest changes on every save
VECTOR_MANIFEST = "vectors.json"
SYNC_FILE = "synced.json"
DIM = 384


@dataclass
class RepairReport:
    lexical_added: int = 0
    lexical_removed: int = 0
    vector_added: int = 0
    vector_removed: int = 0
    rebuilt: tuple[str, ...] = ()  # damaged (unreadable) indexes recreated
    created: tuple[str, ...] = ()  # indexes that did not exist yet (a new data dir): not damage

    @property
    def changed(self) -> bool:
        """Something was actually mended: creating the first, empty indexes of a new archive is not a repair
        (a missing index that SQLite's chunks had to be re-added to is)."""
        return bool(self.lexical_added or self.lexical_removed or self.vector_added or self.vector_removed
                    or self.rebuilt)


class Indexes:
    """``.lexical`` (LexicalIndex) and ``.vector`` (VectorIndex) in ``index_dir``.

    Opening never deletes or rewrites anything (a reader may open while the ingest worker saves): an index
    that is missing or unreadable is listed in ``broken`` and replaced by an empty stand-in (a scratch
    folder / an unsaved in-memory graph). ``repair`` — run by the writer under the ingest lock — recreates it
    in place from SQLite."""

    def __init__(
        self, index_dir: Path, lexical: Any, vector: Any, broken: tuple[str, ...], dim: int,
        absent: tuple[str, ...] = (),
    ) -> None:
        self.index_dir = index_dir
        self.lexical = lexical
        self.vector = vector
        self.broken = broken
        self.absent = absent  # the part of ``broken`` that was missing or empty, not unreadable
        self.dim = dim
        self.open_repair: RepairReport | None = None  # what ``open(store=…)`` mended, for the ingest to report
        self._vector_stamp = _stamp(index_dir / VECTOR_DIR / VECTOR_MANIFEST)
        self._scratch: tempfile.TemporaryDirectory | None = None

    @classmethod
    def open(cls, index_dir: Path, dim: int = DIM, store: Store | None = None) -> Indexes:
        """With ``store``, out-of-step or broken indexes are repaired from SQLite right away when no ingest
        is running (an ingest that is running repairs them itself); without it the caller decides."""
        index_dir = Path(index_dir)
        index_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(index_dir, 0o700)
        broken: list[str] = []
        absent = tuple(
            name for name, folder in (("lexical", LEXICAL_DIR), ("vector", VECTOR_DIR))
            if not _has_files(index_dir / folder)
        )
        scratch: list[tempfile.TemporaryDirectory] = []
        lexical = _open_lexical(index_dir / LEXICAL_DIR, broken, scratch)
        vector = _open_vector(index_dir / VECTOR_DIR, dim, broken)
        indexes = cls(index_dir, lexical, vector, tuple(broken), dim, absent=absent)
        indexes._scratch = scratch[0] if scratch else None
        if store is not None and indexes.needs_repair(store):
            from filelock import Timeout

            from wwt.writer_lock import writer_lock

            try:
                with writer_lock(store.path.parent, timeout=0):
                    if indexes.needs_repair(store):
                        indexes.open_repair = indexes.repair(store)
            except Timeout:
                pass
        return indexes

    def close(self) -> None:
        close = getattr(self.lexical, "close", None)
        if close is not None:
            close()
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None

    # ---- readers -------------------------------------------------------------------------------------

    def reload_if_changed(self) -> None:
        """Pick up what another process (the ingest worker) committed, including a repaired index."""
        from wwt.lexical_index import LexicalIndex
        from wwt.vector_index import VectorIndex

        if "lexical" in self.broken:
            try:
                fresh = LexicalIndex(self.index_dir / LEXICAL_DIR, create=False)
            except (WwtError, OSError, ValueError):
                fresh = None
            if fresh is not None:
                self.lexical.close()
                self.lexical = fresh
                if self._scratch is not None:
                    self._scratch.cleanup()
                    self._scratch = None
                self.broken = tuple(b for b in self.broken if b != "lexical")
                self.absent = tuple(b for b in self.absent if b != "lexical")
        else:
            self.lexical.reload()
        stamp = _stamp(self.index_dir / VECTOR_DIR / VECTOR_MANIFEST)
        if stamp != self._vector_stamp:
            try:
                self.vector = VectorIndex(self.index_dir / VECTOR_DIR, self.dim)
            except (WwtError, OSError, ValueError, RuntimeError):
                return  # caught mid-save or damaged: keep what we have, the next reload retries
            self._vector_stamp = stamp
            self.broken = tuple(b for b in self.broken if b != "vector")
            self.absent = tuple(b for b in self.absent if b != "vector")

    # ---- sync bookkeeping ----------------------------------------------------------------------------

    def synced_counter(self) -> int | None:
        try:
            return int(json.loads((self.index_dir / SYNC_FILE).read_text())["change_counter"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def mark_unsynced(self) -> None:
        (self.index_dir / SYNC_FILE).unlink(missing_ok=True)

    def mark_synced(self, counter: int) -> None:
        tmp = self.index_dir / (SYNC_FILE + ".tmp")
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as fh:
            fh.write(json.dumps({"change_counter": counter}))
        os.replace(tmp, self.index_dir / SYNC_FILE)

    def refresh_stamp(self) -> None:
        """After the writer saved the vector index itself: no reload of what it already holds."""
        self._vector_stamp = _stamp(self.index_dir / VECTOR_DIR / VECTOR_MANIFEST)

    def needs_repair(self, store: Store) -> bool:
        return bool(self.broken) or self.synced_counter() != store.change_counter()

    def verify_against(self, store: Store) -> bool:
        """True when the lexical index holds exactly SQLite's chunk ids and the vector index exactly those
        with a stored vector (a chunk whose vector is still pending is consistent without one)."""
        return (set(self.lexical.all_ids()) == store.all_chunk_ids()
                and set(self.vector.all_ids()) == store.vector_chunk_ids())

    # ---- writes --------------------------------------------------------------------------------------

    def apply(self, store: Store, added: Iterable[int], removed: Iterable[int]) -> None:
        """Mirror an ingest's chunk changes (ids already committed in SQLite) into both indexes and save."""
        if self.broken:
            self.repair(store)  # makes both match SQLite, which already holds these changes
            return
        added, removed = sorted(set(added)), sorted(set(removed))
        if removed:
            self.lexical.delete(removed)
            self.vector.delete(removed)
        if added:
            self._add_rows(store, added)
        self._label_languages(store)
        self.lexical.commit()
        self.vector.save()
        self._vector_stamp = _stamp(self.index_dir / VECTOR_DIR / VECTOR_MANIFEST)
        make_private(self.index_dir)

    def repair(self, store: Store) -> RepairReport:
        """Make the lexical index hold exactly SQLite's chunk ids and the vector index exactly those with a
        stored vector (no embedding: vectors come from SQLite; pending ones are the back-fill's job)."""
        report = RepairReport(
            rebuilt=tuple(b for b in self.broken if b not in self.absent),
            created=tuple(b for b in self.broken if b in self.absent),
        )
        if self.broken:
            self._recreate_broken()
        truth = store.all_chunk_ids()
        vec_truth = store.vector_chunk_ids()  # chunks whose vector is still pending are not missing
        lex_ids = set(self.lexical.all_ids())
        vec_ids = set(self.vector.all_ids())
        lex_missing, lex_extra = truth - lex_ids, lex_ids - truth
        vec_missing, vec_extra = vec_truth - vec_ids, vec_ids - vec_truth
        if lex_extra:
            self.lexical.delete(sorted(lex_extra))
        if vec_extra:
            self.vector.delete(sorted(vec_extra))
        if lex_missing or vec_missing:
            self._add_rows(store, sorted(lex_missing | vec_missing), lexical_ids=lex_missing, vector_ids=vec_missing)
        self._label_languages(store)
        self.lexical.commit()
        self.vector.save()
        self._vector_stamp = _stamp(self.index_dir / VECTOR_DIR / VECTOR_MANIFEST)
        make_private(self.index_dir)
        report.lexical_added, report.lexical_removed = len(lex_missing), len(lex_extra)
        report.vector_added, report.vector_removed = len(vec_missing), len(vec_extra)
        self.broken = self.absent = ()
        self.mark_synced(store.change_counter())
        return report

    def _recreate_broken(self) -> None:
        """Writer only: reopen each broken index in place (it may have been mid-save when we opened), else
        delete and recreate it empty."""
        from wwt.lexical_index import LexicalIndex
        from wwt.vector_index import VectorIndex

        if "lexical" in self.broken:
            self.lexical.close()
            path = self.index_dir / LEXICAL_DIR
            try:
                self.lexical = LexicalIndex(path)
            except (WwtError, OSError, ValueError):
                shutil.rmtree(path, ignore_errors=True)
                self.lexical = LexicalIndex(path)
            if self._scratch is not None:
                self._scratch.cleanup()
                self._scratch = None
        if "vector" in self.broken:
            path = self.index_dir / VECTOR_DIR
            try:
                self.vector = VectorIndex(path, self.dim)
            except (WwtError, OSError, ValueError, RuntimeError):
                shutil.rmtree(path, ignore_errors=True)
                self.vector = VectorIndex(path, self.dim)

    def _add_rows(
        self, store: Store, ids: list[int], lexical_ids: set[int] | None = None, vector_ids: set[int] | None = None
    ) -> None:
        import numpy as np

        from wwt.language_axis import is_korean
        from wwt.lexical_index import LexDoc

        for rows in store.iter_index_rows(ids):
            docs = [
                LexDoc(
                    id=r["id"], text=r["lexical_text"], session_id=r["root_session_id"], project=r["project"],
                    platform=r["platform"], git_branch=r["git_branch"], cwd=r["cwd"], start_ts=r["start_ts"],
                    end_ts=r["end_ts"],
                )
                for r in rows
                if lexical_ids is None or r["id"] in lexical_ids
            ]
            if docs:
                self.lexical.add(docs)
            vec_rows = [
                r for r in rows
                if r["vector"] is not None and r["dim"] == self.dim and (vector_ids is None or r["id"] in vector_ids)
            ]
            if vec_rows:
                matrix = np.stack([np.frombuffer(r["vector"], dtype=np.float32) for r in vec_rows])
                korean = [is_korean(r["embed_text"]) for r in vec_rows]
                self.vector.add([r["id"] for r in vec_rows], matrix, korean=korean)

    def _label_languages(self, store: Store) -> None:
        """Once, for a vector index saved before chunk languages were recorded: label every chunk from SQLite."""
        if not getattr(self.vector, "unlabelled", False):
            return
        from wwt.language_axis import is_korean

        korean = [r["id"] for rows in store.iter_embed_texts() for r in rows if is_korean(r["embed_text"])]
        self.vector.label_languages(korean)


def rebuild(store: Store, index_dir: Path, dim: int = DIM) -> Indexes:
    """``wwt reindex``: throw both indexes away and rebuild them from SQLite (no re-embedding)."""
    index_dir = Path(index_dir)
    shutil.rmtree(index_dir / LEXICAL_DIR, ignore_errors=True)
    shutil.rmtree(index_dir / VECTOR_DIR, ignore_errors=True)
    (index_dir / SYNC_FILE).unlink(missing_ok=True)
    indexes = Indexes.open(index_dir, dim)
    indexes.repair(store)
    return indexes


def open_synced(store: Store, index_dir: Path, dim: int = DIM) -> tuple[Indexes, RepairReport | None]:
    """Open and, when a crash or a damaged file left them out of step with SQLite, repair them."""
    indexes = Indexes.open(index_dir, dim)
    if indexes.needs_repair(store):
        return indexes, indexes.repair(store)
    return indexes, None


def _open_lexical(path: Path, broken: list[str], scratch: list[tempfile.TemporaryDirectory]) -> Any:
    from wwt.lexical_index import LexicalIndex

    if _has_files(path):
        try:
            return LexicalIndex(path, create=False)
        except (WwtError, OSError, ValueError):
            pass
    broken.append("lexical")  # missing counts too: whatever SQLite holds must be (re)added
    holder = tempfile.TemporaryDirectory(prefix="wwt-lexical-")
    scratch.append(holder)
    return LexicalIndex(Path(holder.name))


def _open_vector(path: Path, dim: int, broken: list[str]) -> Any:
    from wwt.vector_index import VectorIndex

    if _has_files(path):
        try:
            return VectorIndex(path, dim)
        except (WwtError, OSError, ValueError, RuntimeError):
            pass
    broken.append("vector")
    return VectorIndex(path / "unsaved-stand-in", dim)  # in memory only: never saved by a reader


def _has_files(folder: Path) -> bool:
    """An index folder with something in it; False for a new archive's (missing or empty) one."""
    try:
        return folder.exists() and (not folder.is_dir() or any(folder.iterdir()))
    except OSError:
        return True  # there but unreadable: damaged, not new


def make_private(folder: Path) -> None:
    """Index files hold conversation text (tantivy stores terms, hnswlib vectors): 0700 folders, 0600 files,
    whatever the umask the libraries created them with."""
    for root, dirs, files in os.walk(folder):
        for name, mode in [(d, 0o700) for d in dirs] + [(f, 0o600) for f in files]:
            path = os.path.join(root, name)
            try:
                if os.stat(path).st_mode & 0o077:
                    os.chmod(path, mode)
            except OSError:
                continue  # replaced under us by a concurrent save: the next save fixes it


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)
