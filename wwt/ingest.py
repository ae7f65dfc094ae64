"""Incremental ingest under a single-writer lock.

Two phases, so a big first history is searchable by words within a minute and by meaning as vectors arrive:

Phase 1 (``ingest``, under the writer lock), ordered so that ``kill -9`` at any point leaves a consistent store
the next run completes:

1. per file, one SQLite transaction: merged messages + the file's new size/mtime/offset/hash + the touched
   sessions recorded in ``dirty_sessions``;
2. per dirty session: chunk (pure), then one transaction replacing the session's chunks and clearing its dirty
   mark. Nothing is embedded here: a chunk whose text has no stored vector is "vector pending", a durable state;
3. flush to the indexes (the first after FIRST_FLUSH_S, then every FLUSH_EVERY_S and at the end): the lexical
   index gets every chunk, the vector index the chunks whose vector is already stored (the same text seen
   before), both saved, the change counter bumped, the index sync marker rewritten. The marker is removed before
   the first chunk change is committed to SQLite, so a crash anywhere in between makes the next open compare
   ids with SQLite and repair (no re-embedding).

Phase 2 (``backfill_vectors``, in slices that each take the writer lock, so the hook's worker can slip a new
turn in between; ``ingest`` runs it to the end unless asked not to, the background worker runs it whenever its
queue is empty): pending texts newest first, embedded in small batches, each batch's vectors committed to
SQLite (the sync marker removed first) and added to the in-memory vector index, which is saved with a counter
bump every BACKFILL_SAVE_EVERY_S and at the end of a slice. A kill loses at most the batch being computed; the
next open adds committed vectors missing from the index from SQLite. ``PAUSE_FILE`` in the data dir pauses it.

Skipping: a file whose size and mtime are unchanged is not opened. Same size, new mtime → its hash decides.
Appended JSONL is parsed from the consumed offset when the bytes before it are unchanged (head + the 4 KiB
before the offset hashed); otherwise, or when the parser says ``requires_full_reparse``, the whole file is
re-parsed and diffed by message id. A file that disappeared is only marked missing: its messages stay.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from wwt import limits
from wwt.chunker import REQUEST_WEIGHT, chunk_session
from wwt.errors import WwtError
from wwt.indexes import Indexes, make_private
from wwt.models import Session
from wwt.sources import remembered
from wwt.store import Store, StoredChunk
from wwt.writer_lock import writer_lock

APPEND_ONLY_SUFFIXES = (".jsonl",)
WAL_SUFFIX = "-wal"  # SQLite sources in WAL mode: see file_state
# Agents whose new conversations no hook announces — OpenCode, Cline, Roo Code, Continue, Goose have none; Cursor's
# and Copilot CLI's hooks exist only where `wwt setup` ran (and Cursor's editor chats have none) —: the resident
# engine looks at their default locations every WWT_ENGINE_SCAN_S seconds and queues what changed
# (``changed_sources``).
SCANNED_PLATFORMS = ("copilot-cli", "cursor", "opencode", "cline", "roo-code", "continue", "goose")
FINGERPRINT_BYTES = 4096
EMBED_BATCH = 16  # texts per embedder call; vectors are committed after each call
FIRST_FLUSH_S = 5.0  # a first ingest publishes its first chunks this soon: search by words works from then on
FLUSH_EVERY_S = 15.0  # ... and then this often, so search sees progress (phase 1 embeds nothing: flushes are cheap)
BACKFILL_FETCH = 512  # pending texts read from SQLite at a time (one index scan + sort each)
BACKFILL_SLICE_S = 20.0  # ``ingest``'s back-fill holds the writer lock this long at a time
BACKFILL_SAVE_EVERY_S = 30.0  # the vector index is saved (search sees new vectors) this often
PAUSE_FILE = "backfill.paused"  # present in the data dir: the back-fill waits (``wwt ingest --pause``)
UNRECOGNISED_LISTED = 50  # names of unrecognised files kept in the summary (all are counted)

Progress = Callable[[int, int, "str | None"], Any]
StopCheck = Callable[[], bool]


class IngestBusy(WwtError):
    """Another wwt process is ingesting right now."""


def _not_the_files_fault(exc: BaseException) -> bool:
    """The store, the disk, a lock or the user stopped the ingest: every file would fail the same way, so the
    ingest stops. Anything else raised while one file is archived (a wwt bug meeting that file's data) costs
    that file only (``_Run.guarded``)."""
    import sqlite3

    from wwt.errors import out_of_space
    from wwt.store import store_damage

    return (isinstance(exc, (WwtError, OSError, sqlite3.OperationalError)) or store_damage(exc)
            or out_of_space(exc))


def shown_path(path: Path | str) -> str:
    """A path as text that any terminal, JSON and SQLite take: bytes that are not UTF-8 in a name (kept by
    Python as lone surrogates) are shown as ``\\xff`` escapes."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


@dataclass
class IngestSummary:
    files_seen: int = 0
    files_skipped: int = 0
    files_parsed: int = 0
    files_missing: int = 0
    sessions: int = 0  # sessions whose messages changed
    messages_added: int = 0
    messages_removed: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    chunks_embedded: int = 0  # texts sent to the model (cache misses)
    vectors_pending: int = 0  # chunks still without a vector when the ingest returned (back-fill paused/deferred)
    vectors_refreshing: int = 0  # of those, chunks whose earlier vector serves until the new one lands
    model_unavailable: str | None = None  # why the model could not be loaded (the vectors wait for it), else None
    bad_lines: int = 0
    seconds: float = 0.0
    index_repair: dict | None = None
    notes: list[str] = field(default_factory=list)  # "path: note" lines, bounded
    files_unrecognised: int = 0  # .json/.jsonl files under the given paths that no parser accepts
    unrecognised: list[str] = field(default_factory=list)  # their paths, the first UNRECOGNISED_LISTED
    # files wwt itself failed on (a bug, not the log's fault): real path → "ExceptionName: one line". Their
    # own transaction was rolled back; the files after them were archived; the next ingest retries them
    failed: dict[str, str] = field(default_factory=dict)

    def note(self, text: str) -> None:
        if len(self.notes) < 200:
            self.notes.append(text)

    def passed_over(self, path: Path) -> None:
        self.files_unrecognised += 1
        if len(self.unrecognised) < UNRECOGNISED_LISTED:
            self.unrecognised.append(shown_path(path))

    def to_dict(self) -> dict:
        return asdict(self)


# ------------------------------------------------------------------------------------------ small rules


class FileState(NamedTuple):
    st_size: int
    st_mtime_ns: int


def file_state(path: Path | str) -> FileState:
    """A source file's size and mtime as change detection sees them. A SQLite database in WAL mode (OpenCode's
    opencode.db, Cursor's state.vscdb) takes new writes into its ``-wal`` file and copies them into the main file
    only at a checkpoint, minutes or hours later: meanwhile the main file's size and mtime do not move, so the
    WAL's are folded in (sizes added, the later mtime). Raises OSError like ``os.stat``."""
    st = os.stat(path)
    if is_append_only(Path(path)):
        return FileState(st.st_size, st.st_mtime_ns)
    try:
        wal = os.stat(f"{path}{WAL_SUFFIX}")
    except OSError:
        return FileState(st.st_size, st.st_mtime_ns)
    return FileState(st.st_size + wal.st_size, max(st.st_mtime_ns, wal.st_mtime_ns))


def fingerprint(path: Path, upto: int, whole: bool) -> str:
    """Hash identifying a file's content up to ``upto``: the whole file for rewritten formats (and its SQLite
    WAL, see ``file_state``), the head and the bytes just before the offset for append-only ones (cheap, and
    catches a rewrite before the offset)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        if whole:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
            try:
                with open(f"{path}{WAL_SUFFIX}", "rb") as wal:
                    h.update(WAL_SUFFIX.encode())
                    for block in iter(lambda: wal.read(1 << 20), b""):
                        h.update(block)
            except OSError:
                pass
        else:
            h.update(fh.read(min(FINGERPRINT_BYTES, upto)))
            tail_start = max(0, upto - FINGERPRINT_BYTES)
            fh.seek(tail_start)
            h.update(fh.read(upto - tail_start))
            h.update(str(upto).encode())
    return h.hexdigest()[:32]


def is_append_only(path: Path) -> bool:
    return path.suffix.lower() in APPEND_ONLY_SUFFIXES


def resume_offset(path: Path, size: int, row: Any) -> int:
    """Where to resume parsing: the consumed offset when only bytes after it can have changed, else 0."""
    if row is None or not is_append_only(path) or row.consumed_offset <= 0:
        return 0
    if size < row.consumed_offset or size < row.size:
        return 0  # shrank: rewritten
    try:
        same = fingerprint(path, row.consumed_offset, whole=False) == row.content_hash
    except OSError:
        return 0
    return row.consumed_offset if same else 0


def iter_log_files(
    paths: Iterable[Path] | None, unrecognised: list[Path] | None = None, store: Store | None = None
) -> Iterator[tuple[Path, Any]]:
    """(file, the parser that reads it) for explicit files/folders (any depth), or every platform's default
    locations. Candidate files no parser accepts are appended to ``unrecognised`` when given. With ``store``, a
    file archived before and unchanged since (same size and mtime) comes with its stored platform name and is
    not opened to detect its format (a re-ingest of thousands of files only stats them)."""
    from wwt import parsers

    if paths is not None:
        roots: list[Path] | None = [Path(p).expanduser() for p in paths]
    elif store is not None:
        roots = log_roots(store)
    else:
        roots = None
    known = _unchanged_platforms(store) if store is not None else None
    for path, found in parsers.discover(roots, unrecognised, known):
        yield Path(path), found


PARSE_REVISIONS_KEY = "parse_revisions"


def parsers_changed(recorded: dict[str, Any], current: dict[str, int]) -> list[str]:
    """Platforms whose parser is newer than the one that read this archive's files (an archive that recorded no
    revision for a platform was read by its revision 1)."""
    def revision(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) else 1

    return sorted(p for p, rev in current.items() if revision(recorded.get(p, 1)) < rev)


def read_again_after_parser_changes(store: Store, summary: IngestSummary | None = None) -> list[str]:
    """When a platform's parser changed what it makes of a file since this archive read its files
    (``wwt.parsers.PARSE_REVISIONS``), mark those files to be parsed whole again by the next ingest that meets
    them (``Store.read_again``), and record the revisions, in one transaction. Returns the platforms."""
    from wwt import parsers

    try:
        recorded = json.loads(store.get_meta(PARSE_REVISIONS_KEY) or "{}")
    except ValueError:
        recorded = {}
    if not isinstance(recorded, dict):
        recorded = {}
    current = parsers.parse_revisions()
    changed = parsers_changed(recorded, current)
    if not changed and recorded == current:
        return []
    files = store.read_again(changed, PARSE_REVISIONS_KEY, json.dumps(current, sort_keys=True))
    if files and summary is not None:
        summary.note(f"{files} file(s) of {', '.join(changed)} are read again: wwt now reads them better than "
                     "when they were archived")
    return changed


def changed_sources(store: Store, platforms: Iterable[str] = SCANNED_PLATFORMS) -> list[tuple[Path, str]]:
    """New or changed log files under ``log_roots(store, platforms)`` (those whose ``file_state`` differs from
    the archive's), each with the platform of the parser that reads it. Unchanged files are only stat-ed; files
    the worker parked (``Store.parked_paths``) are left out until ``wwt worker --retry-parked``."""
    from wwt import parsers

    roots = log_roots(store, platforms)
    if not roots:
        return []
    parked = store.parked_paths()
    found = parsers.discover(roots, None, _unchanged_platforms(store))
    return [
        (Path(path), parser.platform)
        for path, parser in found
        if not isinstance(parser, str) and str(path) not in parked and str(Path(path).resolve()) not in parked
    ]


def log_roots(store: Store, platforms: Iterable[str] | None = None) -> list[Path]:
    """Where logs are looked for without paths: the default locations of ``platforms`` (None: every parser's)
    and the locations the user named (``wwt.sources``, kept in the store's data dir)."""
    from wwt import parsers

    wanted = None if platforms is None else set(platforms)
    chosen = [p for p in parsers.PARSERS if wanted is None or p.platform in wanted]
    return [*(root for parser in chosen for root in parser.default_roots()), *remembered(store.path.parent)]


def _unchanged_platforms(store: Store) -> Callable[[str], str | None]:
    stored = {row.path: row for row in store.all_files() if not row.missing and row.platform}

    def known(real: str) -> str | None:
        row = stored.get(real)
        if row is None:
            return None
        try:
            st = file_state(real)
        except OSError:
            return None
        return row.platform if (row.size, row.mtime_ns) == (st.st_size, st.st_mtime_ns) else None

    return known


def _platform_of(found: Any) -> str | None:
    if found is None or isinstance(found, str):
        return found
    return getattr(found, "platform", None)


# ------------------------------------------------------------------------------------------ locking


def _locked(store: Store, timeout: float) -> Any:
    from filelock import Timeout

    lock = writer_lock(store.path.parent, timeout)
    try:
        lock.acquire()
    except Timeout:
        raise IngestBusy("another wwt ingest is running; try again when it finishes") from None
    return lock


# ------------------------------------------------------------------------------------------ ingest


class _Run:
    def __init__(self, store: Store, indexes: Indexes,
                 while_parsing: Callable[[], AbstractContextManager[Any]] | None = None) -> None:
        self.store = store
        self.indexes = indexes
        self.while_parsing = while_parsing or nullcontext
        self.summary = IngestSummary()
        self.added: set[int] = set()
        self.removed: set[int] = set()
        self.last_flush = time.monotonic()
        self.flushed = False
        self.unsynced = False
        self.failed_sessions: set[str] = set()  # chunking failed this run: not retried after every file

    def guarded(self, what: str, key: str, work: Callable[[], Any]) -> bool:
        """Run one file's or one session's work; an unexpected error (a bug meeting this data) is noted and
        costs only it: its transaction was rolled back, the ingest goes on with the next. False when it failed."""
        try:
            work()
            return True
        except Exception as exc:  # noqa: BLE001 - see _not_the_files_fault
            if _not_the_files_fault(exc):
                raise
            reason = f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:300]
            self.summary.failed.setdefault(key, reason)
            self.summary.note(f"{what}: wwt failed on it ({reason}); the rest was archived and the next ingest "
                              "retries it")
            return False

    # ---- files -----------------------------------------------------------------------------------

    def process_file(self, path: Path, found: Any) -> None:
        """Archive one file's new messages; ``found`` is the parser discovery chose (or its platform name)."""
        from wwt.parsers import parse_file

        parser = None if found is None or isinstance(found, str) else found
        platform = _platform_of(found)
        s = self.summary
        key = str(path.resolve())
        if limits.well_formed(key) != key:  # SQLite keeps text: a name that is not UTF-8 cannot be a key
            s.note(f"{shown_path(path)}: skipped, its name is not valid UTF-8 (rename it to archive it)")
            return
        try:
            st = file_state(path)
        except OSError as exc:
            s.note(f"{shown_path(path)}: cannot read ({exc.strerror})")
            return
        row = self.store.get_file(key)
        if row is not None and not row.missing and row.size == st.st_size and row.mtime_ns == st.st_mtime_ns:
            s.files_skipped += 1
            return
        try:
            start = resume_offset(path, st.st_size, row)
            if row is not None and (start == st.st_size or (start == 0 and row.size == st.st_size)):
                # Touched but not changed (mtime only): the hash says so, no parse needed.
                whole = not is_append_only(path)
                upto = row.consumed_offset if not whole else st.st_size
                if upto > 0 and fingerprint(path, upto, whole) == row.content_hash:
                    with self.store.transaction():
                        self.store.upsert_file(key, row.platform, st.st_size, st.st_mtime_ns,
                                               row.consumed_offset, row.content_hash)
                    s.files_skipped += 1
                    return
            with self.while_parsing():
                sessions, report = parse_file(path, start, parser)
                if start and report.requires_full_reparse:
                    start = 0
                    sessions, report = parse_file(path, 0, parser)
        except OSError as exc:
            s.note(f"{shown_path(path)}: cannot read ({exc.strerror})")
            return
        s.files_parsed += 1
        s.bad_lines += report.bad_lines
        for text in report.notes[:3]:
            s.note(f"{shown_path(path.name)}: {text}")
        consumed = report.end_offset if (report.end_offset and is_append_only(path)) else st.st_size
        whole = not is_append_only(path)
        content_hash = fingerprint(path, consumed if not whole else st.st_size, whole) if consumed else None
        self.merge(key, report.platform or platform, st, consumed, content_hash, sessions, full=start == 0)

    def merge(
        self, key: str, platform: str | None, st: Any, consumed: int, content_hash: str | None,
        sessions: list[Session], full: bool,
    ) -> None:
        store, s = self.store, self.summary
        touched: set[str] = set()
        changed: set[str] = set()
        with store.transaction():
            file_id = store.upsert_file(key, platform, st.st_size, st.st_mtime_ns, consumed, content_hash)
            parsed_ids = set()
            for session in sessions:
                if store.is_forgotten(session.session_id):
                    continue
                parsed_ids.add(session.session_id)
                root = _resolve_root(store, session)
                store.upsert_session(session, root, file_id)
                added, removed = store.merge_messages(session.session_id, session.messages, file_id, full)
                s.messages_added += added
                s.messages_removed += removed
                if added or removed:
                    changed.add(session.session_id)
                if added or removed or full:  # a full parse may also have edited message text
                    touched.add(session.session_id)
            if full:
                for sid in store.file_session_ids(file_id):
                    if sid not in parsed_ids:  # the file no longer holds this session at all (rewritten)
                        _, removed = store.merge_messages(sid, [], file_id, full=True)
                        s.messages_removed += removed
                        touched.add(sid)
                        changed.add(sid)
            store.mark_dirty(touched)
        s.sessions += len(changed)

    # ---- chunks ----------------------------------------------------------------------------------

    def rechunk_dirty(self, key: str | None = None) -> None:
        """Chunk the sessions whose messages changed; a session wwt fails to chunk stays dirty (the next ingest
        retries it) and is blamed on ``key``, the file being archived (None: left by an earlier run)."""
        for sid in self.store.dirty_sessions():
            if sid in self.failed_sessions:
                continue
            what = f"session {sid} not indexed"
            if not self.guarded(what, key or f"session {sid}", lambda sid=sid: self.rechunk(sid)):
                self.failed_sessions.add(sid)

    def rechunk(self, session_id: str) -> None:
        store, s = self.store, self.summary
        rows = store.session_messages(session_id)
        root = store.session_root(session_id) or session_id
        chunks = chunk_session(
            [r.to_message() for r in rows], session_id=session_id, root_session_id=root, seqs=[r.seq for r in rows]
        )
        existing = store.chunk_keys(session_id)
        stored = [
            StoredChunk(
                chunk_key=c.chunk_key, session_id=c.session_id, root_session_id=c.root_session_id,
                first_seq=c.first_seq, last_seq=c.last_seq, start_ts=c.start_ts, end_ts=c.end_ts,
                embed_text=c.embed_text, lexical_text=c.lexical_text, display_text=c.display_text,
                embed_hash=c.embed_hash, requests=c.requests,
            )
            for c in chunks
        ]
        if set(existing) != {c.chunk_key for c in chunks}:
            self.unsync()  # before SQLite changes: a crash from here on makes the next open compare ids
        with store.transaction():
            added, removed = store.replace_chunks(session_id, stored)
            store.clear_dirty(session_id)
        s.chunks_added += len(added)
        s.chunks_removed += len(removed)
        self.added.update(added)
        self.added.difference_update(removed)
        self.removed.update(removed)

    # ---- indexes ---------------------------------------------------------------------------------

    def unsync(self) -> None:
        if not self.unsynced:
            self.indexes.mark_unsynced()
            self.unsynced = True

    def flush(self, force: bool = True) -> None:
        wait = FLUSH_EVERY_S if self.flushed else FIRST_FLUSH_S
        if not force and time.monotonic() - self.last_flush < wait:
            return
        self.flushed = True
        self.last_flush = time.monotonic()
        if not self.added and not self.removed:
            return
        self.unsync()
        self.indexes.apply(self.store, self.added, self.removed)
        counter = self.store.bump_change_counter()
        self.indexes.mark_synced(counter)
        self.unsynced = False
        self.added.clear()
        self.removed.clear()


def _file_key(path: Path) -> str:
    """The path a file is known by in the store (its real path), or as given when it cannot be resolved."""
    try:
        return str(path.resolve())
    except (OSError, RuntimeError):
        return str(path)


def _resolve_root(store: Store, session: Session) -> str:
    """The conversation a session belongs to: itself, or its parent's root (a stub parent if unseen)."""
    parent = session.parent_session_id
    if not parent or parent == session.session_id:
        return session.session_id
    root = store.session_root(parent)
    if root is None:
        store.ensure_stub_session(parent, session)
        return parent
    return root


def ingest(
    paths: list[Path] | None,
    store: Store,
    indexes: Indexes,
    embedder_factory: Callable[[], Any],
    progress: Progress | None = None,
    lock_timeout: float = -1,
    backfill: bool = True,
    vector_progress: Progress | None = None,
    while_parsing: Callable[[], AbstractContextManager[Any]] | None = None,
) -> IngestSummary:
    """Ingest ``paths`` (files/folders) or every platform's default log locations when ``None``: phase 1
    (archive + lexical index) under the writer lock, then — with ``backfill`` — the vectors still pending, in
    slices (``vector_progress(total chunks, chunks with a vector, None)`` after each batch).
    ``while_parsing``: entered around each file's parse, where nothing of the store or the indexes is touched —
    ``Memory`` lets its searches run there instead of waiting for a whole large file."""
    started = time.monotonic()
    lock = _locked(store, lock_timeout)
    try:
        # Another process may have committed since these indexes were loaded: saving a stale in-memory
        # vector graph over the newer file would silently drop its chunks.
        indexes.reload_if_changed()
        run = _Run(store, indexes, while_parsing)
        repairs = [indexes.open_repair]  # what opening them mended is reported by the next ingest
        indexes.open_repair = None
        if indexes.needs_repair(store):
            repairs.append(indexes.repair(store))
        mended = [r for r in repairs if r is not None and r.changed]  # a new archive's first indexes: none
        if mended:
            run.summary.index_repair = asdict(mended[-1])
        read_again_after_parser_changes(store, run.summary)
        passed_over: list[Path] = []
        files = list(iter_log_files(paths, passed_over if paths is not None else None, store))
        run.summary.files_seen = len(files)
        for path in passed_over:  # only for given paths: the default folders hold other agent files too
            run.summary.passed_over(path)
        found = {p.resolve() for p, _ in files}
        for p in paths or []:
            if Path(p).is_file() and Path(p).resolve() not in found:
                run.summary.note(f"{shown_path(p)}: not a recognised agent log")
        run.rechunk_dirty()  # work an interrupted run left behind
        for done, (path, parser) in enumerate(files):
            if progress is not None:
                progress(len(files), done, str(path))
            key = _file_key(path)
            what = f"{shown_path(path)} not archived"
            if run.guarded(what, key, lambda path=path, parser=parser: run.process_file(path, parser)):
                run.rechunk_dirty(key)
            run.flush(force=False)
        if progress is not None:
            progress(len(files), len(files), None)
        run.summary.files_missing = _mark_missing(store, paths, {str(p.resolve()) for p, _ in files})
        run.flush()
        store.set_meta("last_ingest", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    finally:
        lock.release()
    summary = run.summary
    if backfill:
        while True:
            result = backfill_vectors(store, indexes, embedder_factory, max_seconds=BACKFILL_SLICE_S,
                                      progress=vector_progress, lock_timeout=lock_timeout, notes=summary.notes)
            summary.chunks_embedded += result.embedded
            if result.stopped != "time":
                break
    with_vector, total = store.vector_progress()
    summary.vectors_pending = total - with_vector
    summary.vectors_refreshing = store.refreshing_vectors()
    summary.seconds = round(time.monotonic() - started, 3)
    return summary


# ------------------------------------------------------------------------------------------ vector back-fill


@dataclass
class BackfillResult:
    embedded: int = 0  # texts sent to the model
    with_vector: int = 0  # chunks with a stored vector afterwards
    total: int = 0  # all chunks
    seconds: float = 0.0
    stopped: str = "done"  # done | time (max_seconds reached) | stop (should_stop) | paused | busy (lock held)

    @property
    def pending(self) -> int:
        return self.total - self.with_vector


def is_paused(data_dir: Path) -> bool:
    return (Path(data_dir) / PAUSE_FILE).exists()


def set_paused(data_dir: Path, paused: bool) -> None:
    """``wwt ingest --pause/--resume``: a flag file, so every process (CLI, worker, engine) sees it."""
    flag = Path(data_dir) / PAUSE_FILE
    if paused:
        flag.touch(mode=0o600, exist_ok=True)
    else:
        flag.unlink(missing_ok=True)


def backfill_vectors(
    store: Store,
    indexes: Indexes,
    embedder_factory: Callable[[], Any],
    max_seconds: float | None = None,
    should_stop: StopCheck | None = None,
    progress: Progress | None = None,
    lock_timeout: float = 0,
    notes: list[str] | None = None,
) -> BackfillResult:
    """Embed chunks whose vector is pending, newest first, until none is left, ``max_seconds`` pass,
    ``should_stop()`` says so (checked between batches) or the pause flag appears. Takes the writer lock
    (``lock_timeout`` seconds; 0 = give up at once with ``stopped="busy"``); loads the model only when there is
    work. The one entry point for every caller: ``ingest``, the background worker, a resident engine."""
    data_dir = store.path.parent
    if is_paused(data_dir):
        with_vector, total = store.vector_progress()
        return BackfillResult(with_vector=with_vector, total=total, stopped="paused")
    try:
        lock = _locked(store, lock_timeout)
    except IngestBusy:
        with_vector, total = store.vector_progress()
        return BackfillResult(with_vector=with_vector, total=total, stopped="busy")
    try:
        indexes.reload_if_changed()
        if indexes.needs_repair(store):
            indexes.repair(store)
        return _Backfill(store, indexes, embedder_factory, progress, notes).run(max_seconds, should_stop)
    finally:
        lock.release()


class _Backfill:
    def __init__(self, store: Store, indexes: Indexes, embedder_factory: Callable[[], Any],
                 progress: Progress | None, notes: list[str] | None) -> None:
        self.store, self.indexes, self.factory, self.progress = store, indexes, embedder_factory, progress
        self.notes = notes
        self.embedder: Any = None
        self.unsynced = False
        self.last_save = time.monotonic()

    def run(self, max_seconds: float | None, should_stop: StopCheck | None) -> BackfillResult:
        store = self.store
        started = time.monotonic()
        deadline = None if max_seconds is None else started + max_seconds
        result = BackfillResult()
        result.with_vector, result.total = store.vector_progress()
        embed_s = 0.0
        max_zero = max_seconds is not None and max_seconds <= 0  # a zero budget: see the state, embed nothing

        def halt() -> str | None:
            # at least one batch per slice: loading the model on a busy machine must not use up a slice
            if deadline is not None and time.monotonic() >= deadline and (result.embedded or max_zero):
                return "time"
            if should_stop is not None and should_stop():
                return "stop"
            if is_paused(store.path.parent):
                return "paused"
            return None

        # On an exception nothing below runs: the sync marker stays removed and the next open adds the
        # vectors already committed to SQLite to the index.
        while result.stopped == "done":
            items = store.pending_vectors(BACKFILL_FETCH)
            if not items:
                break
            if self.embedder is None:
                self.embedder = self.factory()
                _check_model(store, self.embedder, self.notes)
            for start in range(0, len(items), EMBED_BATCH):
                reason = halt()
                if reason:
                    result.stopped = reason
                    break
                t0 = time.monotonic()
                added = self.embed(items[start : start + EMBED_BATCH])
                embed_s += time.monotonic() - t0
                result.embedded += len(items[start : start + EMBED_BATCH])
                result.with_vector += added
                if self.progress is not None:
                    self.progress(result.total, result.with_vector, None)
                if time.monotonic() - self.last_save >= BACKFILL_SAVE_EVERY_S:
                    self.save()
        self.save()
        if result.embedded >= EMBED_BATCH and embed_s > 0:
            store.set_meta("backfill_rate", f"{result.embedded / embed_s:.3f}")  # for `wwt status`'s ETA
        result.with_vector, result.total = store.vector_progress()
        result.seconds = round(time.monotonic() - started, 3)
        return result

    def embed(self, part: list[tuple[str, str, list[str]]]) -> int:
        """One batch: vectors committed to SQLite, then added to the in-memory index (replacing the vector a
        chunk had before its recipe changed). Returns chunks covered."""
        from wwt.embedder import chunk_vectors

        vectors = chunk_vectors(self.embedder, [(text, requests) for _, text, requests in part], REQUEST_WEIGHT)
        dim = int(vectors.shape[1])
        if not self.unsynced:
            self.indexes.mark_unsynced()  # before SQLite changes: a kill from here on makes the next open repair
            self.unsynced = True
        self.store.put_vectors((item[0], dim, vectors[i].tobytes()) for i, item in enumerate(part))
        owners = self.store.chunk_ids_for_hashes(item[0] for item in part)
        ids: list[int] = []
        rows: list[int] = []
        for i, (h, *_) in enumerate(part):
            for chunk_id in owners.get(h, []):
                ids.append(chunk_id)
                rows.append(i)
        if ids and dim == self.indexes.dim:
            from wwt.language_axis import is_korean

            korean = [is_korean(part[i][1]) for i in rows]
            self.indexes.vector.add(ids, vectors[rows], korean=korean)
        return len(ids)

    def save(self) -> None:
        self.last_save = time.monotonic()
        if not self.unsynced:
            return
        self.indexes.vector.save()
        self.indexes.refresh_stamp()
        make_private(self.indexes.index_dir)  # hnswlib writes its files under the umask: vectors are private
        counter = self.store.bump_change_counter()
        self.indexes.mark_synced(counter)
        self.unsynced = False


def _check_model(store: Store, embedder: Any, notes: list[str] | None) -> None:
    """Cached vectors are only valid for the model that made them: record it, warn on a change."""
    info = getattr(embedder, "info", None)
    manifest = getattr(info, "manifest", None)
    label = getattr(manifest, "label", None)
    if not label:
        return
    known = store.get_meta("embed_model")
    if known is None:
        store.set_meta("embed_model", label)
    elif known != label and notes is not None and len(notes) < 200:
        notes.append(
            f"embedding model changed ({known} → {label}); run `wwt reset` and re-ingest to re-embed old chunks"
        )


def _mark_missing(store: Store, paths: list[Path] | None, seen: set[str]) -> int:
    """Files the agents deleted: flagged, never purged (the archive outlives the agents' cleanup)."""
    roots = None if paths is None else [str(Path(p).expanduser().resolve()) for p in paths]
    missing = 0
    for row in store.all_files():
        if row.path in seen or row.missing:
            continue
        if roots is not None and not any(row.path == r or row.path.startswith(r.rstrip("/") + "/") for r in roots):
            continue
        if not Path(row.path).exists():
            store.mark_file_missing(row.path)
            missing += 1
    return missing


def reindex(store: Store, index_dir: Path, lock_timeout: float = -1) -> Indexes:
    """Rebuild both indexes from SQLite without re-embedding."""
    from wwt.indexes import rebuild

    lock = _locked(store, lock_timeout)
    try:
        indexes = rebuild(store, index_dir)
        counter = store.bump_change_counter()
        indexes.mark_synced(counter)
        return indexes
    finally:
        lock.release()


def forget(store: Store, indexes: Indexes, session_id: str | None = None, project: str | None = None,
           lock_timeout: float = -1) -> int:
    """Delete conversations (with their subagents) from SQLite and both indexes for good; later ingests of
    their still-present logs will not bring them back. Returns how many conversations were removed."""
    lock = _locked(store, lock_timeout)
    try:
        victims = store.sessions_to_forget(session_id, project)
        if not victims:
            return 0
        conversations = sum(1 for sid in victims if store.session_root(sid) == sid)
        store.conn.execute("PRAGMA secure_delete = ON")
        indexes.mark_unsynced()
        texts = store.chunk_lexical_texts(list(victims))  # their tokens are cached beside the index too
        with store.transaction():
            chunk_ids = store.delete_sessions(victims)
        store.prune_embeddings()
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        indexes.apply(store, [], chunk_ids)
        indexes.lexical.forget_tokens(texts)
        counter = store.bump_change_counter()
        indexes.mark_synced(counter)
        return conversations
    finally:
        lock.release()
