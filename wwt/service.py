"""``Memory`` — the one API the CLI, the MCP server and the hooks use.

Everything heavy (SQLite, tantivy, hnswlib, Kiwi, the ONNX model) loads on first use, so ``wwt status`` does not
pay for the model and ``wwt --help`` pays for nothing. A long-lived ``Memory`` (the MCP server) checks the
store's change counter before each search and reloads the indexes when the ingest worker has committed new
data, so it never needs a restart. One re-entrant lock serialises index reloads and searches: concurrent MCP
calls are safe, and searches are fast enough that serialising them costs nothing a user would notice. An ingest
through a ``Memory`` that serves searches writes through a private second one, so those searches never wait for it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import errno
import os
import shutil
import stat
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wwt import limits, paths
from wwt.errors import ModelUnavailable, StoreError, UsageError, WwtError, out_of_space
from wwt.models import Filters
from wwt.search import SearchOutcome, SessionHit


class NoDataYet(WwtError):
    """Nothing has been ingested in this data dir."""


class UnknownProject(UsageError):
    """A project name that no archived session carries."""


class UnknownSession(UsageError):
    """A session id (or prefix) that matches no archived session."""


@dataclass
class SessionView:
    """One page of an archived conversation."""

    session: Any  # wwt.store.SessionRow
    messages: list[Any]  # wwt.store.MessageRow, in order
    start: int
    end: int | None
    total: int | None = None


@dataclass
class ResetPlan:
    """What ``reset`` removes (path, bytes) and what it keeps on purpose."""

    delete: list[tuple[Path, int]] = field(default_factory=list)
    keep: list[Path] = field(default_factory=list)


STORE_SIDE_FILES = ("-wal", "-shm", "-journal")
EXPLICIT_BACKFILL_S = 60.0  # an ingest of given paths embeds at most this long; the worker does the rest
MODEL_RETRY_S = 60.0  # after the model failed to load, searches go by words alone this long before trying again


def pending_vectors_notice(home: Path) -> str:
    """Results found by words alone because no chunk has its vector yet: why, and what brings them."""
    from wwt.ingest import is_paused

    if is_paused(home):
        return "words only: the vectors are paused (`wwt ingest --resume` adds them)"
    return ("words only: no conversation has its vector yet — the model is loading or missing (`wwt model` says "
            "which); results by meaning follow once they are added")


def _one_writer(method: Callable[..., Any]) -> Callable[..., Any]:
    """Run a ``Memory`` method that writes under ``_writing`` (see ``Memory.__init__``)."""
    import functools

    @functools.wraps(method)
    def run(self: Memory, *args: Any, **kwargs: Any) -> Any:
        with self._writing:
            return method(self, *args, **kwargs)

    return run


class Memory:
    def __init__(self, home: Path | str | None = None) -> None:
        self.home = Path(home).expanduser() if home is not None else paths.data_dir(create=False)
        self._lock = threading.RLock()
        # Taken before ``_lock`` by whatever takes the writer's file lock (ingest, back-fill, reindex, forget,
        # reset): one writer at a time in this process, and none waiting for the file lock while holding
        # ``_lock`` — an ingest hands ``_lock`` to searches while it parses (``_lock_released``).
        self._writing = threading.RLock()
        self._writer_only = False  # a private writer made by ``_writer_for_ingest``: it never hands off again
        self._store: Any = None
        self._indexes: Any = None
        self._embedder: Any = None  # (a one-shot process no longer preloads it on a side thread: the engine
        # keeps it loaded for every later search — wwt/engine/)
        self._seen_counter: int | None = None
        self._model_failure: tuple[float, str] | None = None  # (when, why) the model last failed to load

    @classmethod
    def open(cls, home: Path | str | None = None) -> Memory:
        return cls(home)

    # ------------------------------------------------------------------------------------------ locations

    # Same names as wwt.paths (pinned by a test); computed here so an explicit ``home`` works and looking
    # at a data dir never creates it.
    @property
    def store_path(self) -> Path:
        return self.home / "wwt.sqlite3"

    @property
    def index_dir(self) -> Path:
        return self.home / "index"

    @property
    def log_path(self) -> Path:
        return self.home / "ingest.log"

    @property
    def models_dir(self) -> Path:
        return self.home / "models"

    def has_data(self) -> bool:
        return self.store_path.exists()

    # ------------------------------------------------------------------------------------------ lazy parts

    def _open_store(self, create: bool = False) -> Any:
        with self._lock:
            if self._store is None:
                if not create and not self.has_data():
                    raise NoDataYet(
                        f"no data yet in {self.home} — run `wwt ingest` (or `wwt setup`) first"
                    )
                from wwt.store import Store

                self._prepare_home()
                self._store = Store.open(self.store_path)
            return self._store

    def _prepare_home(self) -> None:
        """The data dir as a private folder (created 0700 on first use), or one line saying why it cannot be
        (a file, a symlink loop or a link to nowhere in its place, a name SQLite cannot take)."""
        where = f"cannot use the data dir {limits.well_formed(str(self.home))} (WWT_HOME)"
        if limits.well_formed(str(self.home)) != str(self.home):
            raise StoreError(f"{where}: its name is not valid UTF-8; set WWT_HOME to another folder")
        try:
            if not os.path.lexists(self.home):
                self.home.mkdir(parents=True)
                self.home.chmod(0o700)  # private like paths.data_dir(): only the user reads the archive
            if not stat.S_ISDIR(os.stat(self.home).st_mode):
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))
        except OSError as exc:
            if out_of_space(exc):
                raise
            raise StoreError(f"{where}: {exc.strerror or exc}; set WWT_HOME to a folder you can write") from None

    def _open_indexes(self) -> Any:
        with self._lock:
            if self._indexes is None:
                from wwt.indexes import Indexes

                self._indexes = Indexes.open(self.index_dir, store=self._open_store())
            return self._indexes

    def _get_embedder(self) -> Any:
        with self._lock:
            if self._embedder is None:
                from wwt.embedder import load_embedder

                self._embedder = load_embedder()
            return self._embedder

    def _search_embedder(self) -> tuple[Any, str | None]:
        """The embedder for a search, or (None, why) when the model cannot be loaded: search then goes by
        words alone instead of failing. A failure is remembered for MODEL_RETRY_S, so a long-lived process
        (the engine, the MCP server) does not retry a download on every question, yet picks up a model
        that appears later."""
        import time

        with self._lock:
            if self._embedder is None and self._model_failure is not None:
                when, why = self._model_failure
                if time.monotonic() - when < MODEL_RETRY_S:
                    return None, why
            try:
                embedder = self._get_embedder()
            except ModelUnavailable as exc:
                self._model_failure = (time.monotonic(), str(exc))
                return None, str(exc)
            self._model_failure = None
            return embedder, None

    def _refresh_indexes(self) -> Any:
        """Reload the indexes when an ingest (here or in the worker) committed since we last looked."""
        store = self._open_store()
        indexes = self._open_indexes()
        counter = store.change_counter()
        if counter != self._seen_counter:
            if self._seen_counter is not None:
                indexes.reload_if_changed()
            self._seen_counter = counter
        return indexes

    def _close_indexes(self) -> None:
        if self._indexes is not None:
            self._indexes.close()
        self._indexes = None

    def close(self) -> None:
        with self._lock:
            self._close_indexes()
            if self._store is not None:
                self._store.close()
            self._store = None
            self._seen_counter = None

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------------------ API

    @_one_writer
    def ingest(
        self,
        paths_: list[Path] | None = None,
        progress: Callable[..., Any] | None = None,
        vector_progress: Callable[..., Any] | None = None,
        backfill: bool = True,
        backfill_seconds: float | None = -1.0,
        lock_timeout: float = -1,
    ) -> Any:
        """Parse, archive, chunk and index ``paths_`` (files or folders), or every platform's default log
        locations when ``None``; then (``backfill``) embed what is pending, newest first, in slices between
        which searches in this process run, for ``backfill_seconds`` (None: to the end, as ``wwt ingest``
        asks). By default to the end for a full ingest, for at most EXPLICIT_BACKFILL_S when ``paths_`` are given
        (an MCP ``ingest_session``: one session's new turn is among the newest chunks; an older backlog is the
        background worker's). Returns ``wwt.ingest.IngestSummary``."""
        from wwt import ingest as ingest_mod

        for path in paths_ or []:
            if not Path(path).exists():
                raise UsageError(f"no such file or folder: {path}")
        writer = self._writer_for_ingest()
        if writer is not None:
            try:
                return writer.ingest(paths_, progress=progress, vector_progress=vector_progress,
                                     backfill=backfill, backfill_seconds=backfill_seconds,
                                     lock_timeout=lock_timeout)
            finally:
                writer.close()
        with self._lock:
            self._open_store(create=True)
            store, indexes = self._open_store(), self._refresh_indexes()  # never write from a stale copy
            summary = ingest_mod.ingest(
                [Path(p) for p in paths_] if paths_ else None,
                store,
                indexes,
                self._get_embedder,
                progress=progress,
                lock_timeout=lock_timeout,
                backfill=False,
                while_parsing=self._lock_released,
            )
            self._seen_counter = store.change_counter()
        if backfill:
            import time

            if backfill_seconds is not None and backfill_seconds < 0:  # the default: by what was asked for
                backfill_seconds = EXPLICIT_BACKFILL_S if paths_ else None
            until = None if backfill_seconds is None else time.monotonic() + backfill_seconds
            while True:
                left = ingest_mod.BACKFILL_SLICE_S if until is None else min(
                    ingest_mod.BACKFILL_SLICE_S, until - time.monotonic())
                try:
                    result = self.backfill(max_seconds=max(0.0, left), progress=vector_progress,
                                           lock_timeout=-1, notes=summary.notes)
                except ModelUnavailable as exc:  # archived and searchable by words: vectors wait for the model
                    with self._lock:
                        with_vector, total = store.vector_progress()
                    summary.vectors_pending = total - with_vector
                    summary.model_unavailable = str(exc)
                    break
                summary.chunks_embedded += result.embedded
                summary.vectors_pending = result.pending
                if result.stopped != "time" or (until is not None and time.monotonic() >= until):
                    break
        else:
            with self._lock:
                with_vector, total = store.vector_progress()
            summary.vectors_pending = total - with_vector
        if summary.vectors_pending:
            with self._lock:
                summary.vectors_refreshing = store.refreshing_vectors()
        else:  # the back-fill finished what the ingest's own count had seen
            summary.vectors_refreshing = 0
        return summary

    def _writer_for_ingest(self) -> Memory | None:
        """A second ``Memory`` over the same data dir (its own SQLite connection and indexes) when this one
        serves searches (its indexes are open: the engine's, the MCP server's), else None. Writing 50,000
        messages, their chunks and the word index takes seconds after the parse; through the writer, searches
        here keep reading the last committed state meanwhile and reload when the ingest commits (the change
        counter), as they do after the hook's worker — instead of waiting for the whole ingest (issue 24). The
        model is shared (``load_embedder`` keeps one per process); the writer's copy of the indexes lives only
        for the call."""
        with self._lock:
            if self._writer_only or self._indexes is None:
                return None
        writer = Memory(self.home)
        writer._writer_only = True
        return writer

    @contextlib.contextmanager
    def _lock_released(self) -> Iterator[None]:
        """While an ingest parses a file (it touches neither the store nor the indexes then), searches and
        reads of this ``Memory`` — the engine's, shared by every client — go ahead instead of waiting for the
        whole file: an MCP ``ingest_session`` of a large log held every search for its parse (9.6 s)."""
        self._lock.release()
        try:
            yield
        finally:
            self._lock.acquire()

    @_one_writer
    def backfill(
        self,
        max_seconds: float | None = None,
        should_stop: Callable[[], bool] | None = None,
        progress: Callable[..., Any] | None = None,
        lock_timeout: float = 0,
        notes: list[str] | None = None,
    ) -> Any:
        """One slice of the vector back-fill (``wwt.ingest.backfill_vectors``); returns its ``BackfillResult``."""
        from wwt import ingest as ingest_mod

        with self._lock:
            store, indexes = self._open_store(), self._refresh_indexes()
            result = ingest_mod.backfill_vectors(
                store, indexes, self._get_embedder, max_seconds=max_seconds, should_stop=should_stop,
                progress=progress, lock_timeout=lock_timeout, notes=notes,
            )
            self._seen_counter = store.change_counter()
            return result

    def pause_backfill(self, paused: bool) -> None:
        """``wwt ingest --pause/--resume`` (laptop on battery): every process's back-fill honours the flag."""
        from wwt.ingest import set_paused

        self.home.mkdir(parents=True, exist_ok=True)
        set_paused(self.home, paused)

    def search(self, query: str, filters: Filters | None = None, limit: int = 10) -> list[SessionHit]:
        return self.search_outcome(query, filters, limit).hits

    def search_outcome(self, query: str, filters: Filters | None = None, limit: int = 10) -> SearchOutcome:
        """Like ``search`` plus the confidence signal (``weak``: nothing in memory clearly answers this)."""
        from wwt.search import run_search

        filters = _well_formed_filters(filters or Filters())
        query = limits.well_formed(query)
        if not query.strip():
            raise UsageError("empty query: say what you are looking for")
        problem: list[str] = []

        def embed_query(text: str) -> Any:
            embedder, why = self._search_embedder()
            if embedder is None:
                problem.append(why or "")
                return None
            return embedder.embed_query(text)

        with self._lock:
            store = self._open_store()
            if filters.project:
                self._check_project(filters.project)
            indexes = self._refresh_indexes()
            outcome = run_search(
                query,
                filters,
                limit,
                store=store,
                lexical=indexes.lexical,
                vector=indexes.vector,
                embed_query=embed_query,
                tokenize=_tokenizer(),
            )
        if problem:
            from wwt.search import words_only_notice

            outcome.words_only = words_only_notice(problem[0])
        elif outcome.hits and indexes.vector.count() == 0:  # nothing embedded yet: found by words alone
            outcome.words_only = pending_vectors_notice(self.home)
        return outcome

    def projects(self) -> list[str]:
        with self._lock:
            return sorted(self._open_store().projects())

    def session_activity(self, session_ids: list[str]) -> dict[str, tuple[str | None, bool]]:
        with self._lock:
            return self._open_store().session_activity(session_ids)

    def has_project(self, project: str) -> bool:
        return project in self.projects()

    def _check_project(self, project: str) -> None:
        known = self.projects()
        if project in known or "/" in project or "\\" in project:  # a project path is checked by the filter
            return
        close = difflib.get_close_matches(project, known, n=3, cutoff=0.5)
        hint = f" — did you mean {', '.join(close)}?" if close else f" — known projects: {_few(known)}"
        raise UnknownProject(f"no sessions for project {project!r}{hint}")

    def resolve_session(self, session_id: str) -> Any:
        session_id = limits.well_formed(session_id)
        with self._lock:
            row = self._open_store().get_session(session_id)
        if row is None:
            raise UnknownSession(f"no archived session matches {session_id!r}")
        return row

    def get_session(self, session_id: str, start: int = 0, end: int | None = None) -> SessionView:
        """A page of the archived conversation (``start``/``end`` are message positions, end exclusive);
        ``session_id`` may be a unique prefix."""
        if start < 0 or (end is not None and end < start):
            raise UsageError("bad range: need 0 ≤ start ≤ end")
        with self._lock:
            row = self.resolve_session(session_id)
            messages = self._open_store().get_messages(row.session_id, start=start, end=end)
        total = getattr(row, "message_count", None)
        return SessionView(session=row, messages=list(messages), start=start, end=end, total=total)

    def chunk_position(self, session_id: str, chunk_key: str) -> tuple[str, int] | None:
        """Where ``chunk_key`` starts: (the session holding its messages, first message position). A subagent
        chunk points into the subagent's own transcript. ``None`` when the chunk is not in that conversation."""
        with self._lock:
            store = self._open_store()
            hit = store.chunk_by_key(chunk_key)
        if hit is None or hit.session_id != session_id:
            return None
        return hit.source_session_id, hit.first_seq

    def status(self) -> dict[str, Any]:
        """Counts, sizes, last ingest. Never loads the model or the indexes."""
        info: dict[str, Any] = {"home": str(self.home), "has_data": self.has_data()}
        if not self.has_data():
            return info
        from wwt.ingest import is_paused

        with self._lock:
            store = self._open_store()
            info.update(store.stats())
            info["backfill_rate"] = float(store.get_meta("backfill_rate", "0") or 0)
        info["backfill_paused"] = is_paused(self.home)
        info["index_bytes"] = _tree_bytes(self.index_dir)
        return info

    @_one_writer
    def reindex(self) -> None:
        """Rebuild both indexes from SQLite (no re-embedding)."""
        from wwt import ingest as ingest_mod

        with self._lock:
            store = self._open_store()
            self._close_indexes()
            self._indexes = ingest_mod.reindex(store, self.index_dir)
            self._seen_counter = store.change_counter()

    def reset_plan(self) -> ResetPlan:
        plan = ResetPlan()
        candidates = [self.store_path, *(Path(str(self.store_path) + s) for s in STORE_SIDE_FILES)]
        candidates += [self.index_dir, self.log_path]
        for path in candidates:
            if path.exists():
                plan.delete.append((path, _tree_bytes(path)))
        if self.models_dir.exists():
            plan.keep.append(self.models_dir)
        return plan

    @_one_writer
    def reset(self) -> ResetPlan:
        """Delete the archive and the indexes (not the downloaded model, not agent settings)."""
        from filelock import FileLock, Timeout

        from wwt.ingest import IngestBusy
        from wwt.writer_lock import LOCK_FILE

        with self._lock:
            plan = self.reset_plan()
            self.close()
            if not plan.delete:
                return plan
            lock = FileLock(str(self.home / LOCK_FILE), timeout=10, mode=0o600)
            try:
                lock.acquire()
            except Timeout:
                raise IngestBusy("an ingest is running; try `wwt reset` again when it finishes") from None
            try:
                for path, _size in plan.delete:
                    if path.is_dir():
                        shutil.rmtree(path)
                    else:
                        path.unlink(missing_ok=True)
            finally:
                lock.release()
            return plan

    def forget_plan(self, session_id: str | None = None, project: str | None = None) -> list[str]:
        """The session ids (roots first, with their subagents) that ``forget`` would delete."""
        if (session_id is None) == (project is None):
            raise UsageError("forget needs exactly one of a session id or --project")
        project = limits.well_formed(project) if project is not None else None
        with self._lock:
            store = self._open_store()
            if session_id is not None:
                return store.sessions_to_forget(session_id=self.resolve_session(session_id).root_session_id)
            self._check_project(project or "")
            return store.sessions_to_forget(project=project)

    @_one_writer
    def forget(self, session_id: str | None = None, project: str | None = None) -> int:
        """Delete one conversation (id or unique prefix; a subagent id forgets its whole conversation) or one
        project from the archive and the indexes. Returns how many sessions were removed."""
        from wwt import ingest as ingest_mod

        if (session_id is None) == (project is None):
            raise UsageError("forget needs exactly one of a session id or --project")
        project = limits.well_formed(project) if project is not None else None
        with self._lock:
            store = self._open_store()
            if session_id is not None:
                session_id = self.resolve_session(session_id).root_session_id
            else:
                self._check_project(project or "")
            removed = ingest_mod.forget(store, self._refresh_indexes(), session_id=session_id, project=project)
            self._seen_counter = store.change_counter()
            return removed


def _well_formed_filters(filters: Filters) -> Filters:
    """The filters' text with lone surrogates replaced (``limits.well_formed``): SQLite refuses them."""
    fields = {name: limits.well_formed(value) for name, value in vars(filters).items() if isinstance(value, str)}
    return dataclasses.replace(filters, **fields)


def _tokenizer() -> Callable[[str], list[str]] | None:
    try:
        from wwt.lexical import tokenize
    except ImportError:
        return None
    return tokenize


def _few(names: list[str], n: int = 8) -> str:
    if not names:
        return "(none)"
    shown = ", ".join(names[:n])
    return shown + (f" … (+{len(names) - n})" if len(names) > n else "")


def _tree_bytes(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    if not path.is_dir():
        return 0
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
