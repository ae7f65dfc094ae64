"""SQLite (WAL) source of truth: files, sessions, every kept message, chunks, vectors, the ingest queue.

Only ``sqlite3`` is imported here so the hook can enqueue without paying for numpy or the model. Vectors are
float32 blobs; callers convert. Chunk vectors live in ``embeddings`` keyed by the hash of the embedded text,
which doubles as the embedding cache (the same text is never embedded twice).

Recovery when the store cannot be read (``StoreError``): move the file away
(``mv ~/.wwt/wwt.sqlite3 ~/.wwt/wwt.sqlite3.bad``) and run ``wwt ingest`` to rebuild from the agents' logs
that still exist; messages archived from logs the agents have since deleted are only in the moved file.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import astuple, dataclass
from pathlib import Path

from wwt import paths
from wwt.errors import StoreError, UsageError, out_of_space
from wwt.models import FLAG_SUBAGENT, Filters, Message, Session, time_key
from wwt.own_tools import QUOTED_NOTICE

APP_ID = "whatwasthat"
SCHEMA_VERSION = 6
SQLITE_MAGIC = b"SQLite format 3\x00"
QUEUE_CLAIM_TIMEOUT_S = 600  # a claim older than this is considered abandoned (worker killed)
QUEUE_MAX_ATTEMPTS = 3  # failed attempts before a queue row is parked (kept, shown, retried on request)
QUEUE_ERROR_CHARS = 500
ALLOWED_CACHE_SIZE = 32  # filter scopes remembered per Store (cleared on every committed ingest anyway)

_RECOVERY = "move it away (e.g. `mv {p} {p}.bad`) and run `wwt ingest` to rebuild it from the agents' logs"


# --------------------------------------------------------------------------------------------- schema

_V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    platform TEXT,
    size INTEGER NOT NULL DEFAULT 0,
    mtime_ns INTEGER NOT NULL DEFAULT 0,
    consumed_offset INTEGER NOT NULL DEFAULT 0,
    content_hash TEXT,
    missing INTEGER NOT NULL DEFAULT 0,
    ingested_at TEXT
);
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL UNIQUE,
    platform TEXT NOT NULL,
    parent_session_id TEXT,
    root_session_id TEXT NOT NULL,
    project TEXT, project_path TEXT, cwd TEXT, git_branch TEXT,
    started_at TEXT, ended_at TEXT, title TEXT,
    source_path TEXT,
    stub INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sessions_root ON sessions(root_session_id);
CREATE INDEX sessions_project ON sessions(project);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    native_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL,
    timestamp TEXT, tool_name TEXT, parent_id TEXT,
    flags TEXT NOT NULL DEFAULT '',
    UNIQUE(session_id, native_id)
);
CREATE INDEX messages_seq ON messages(session_id, seq);
CREATE TABLE message_files (
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    file_id INTEGER NOT NULL,
    PRIMARY KEY (message_id, file_id)
) WITHOUT ROWID;
CREATE INDEX message_files_file ON message_files(file_id);
CREATE TABLE session_files (
    session_id TEXT NOT NULL, file_id INTEGER NOT NULL, PRIMARY KEY (session_id, file_id)
) WITHOUT ROWID;
CREATE TABLE embeddings (text_hash TEXT PRIMARY KEY, dim INTEGER NOT NULL, vector BLOB NOT NULL);
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: an index entry can never point at another chunk
    chunk_key TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL,
    root_session_id TEXT NOT NULL,
    first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL,
    embed_text TEXT NOT NULL, lexical_text TEXT NOT NULL, display_text TEXT NOT NULL,
    embed_hash TEXT NOT NULL
);
CREATE INDEX chunks_session ON chunks(session_id);
CREATE INDEX chunks_root ON chunks(root_session_id);
"""

# v2: per-chunk time ranges, the durable ingest queue used by the hook, sessions whose messages changed
# but whose chunks are not rebuilt yet (survives a crash between the two), sessions forgotten for good.
_V2 = """
ALTER TABLE chunks ADD COLUMN start_ts TEXT;
ALTER TABLE chunks ADD COLUMN end_ts TEXT;
CREATE TABLE ingest_queue (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    platform TEXT,
    session_id TEXT,
    enqueued_at REAL NOT NULL,
    claimed_at REAL,
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT
);
CREATE INDEX ingest_queue_path ON ingest_queue(path);
CREATE TABLE dirty_sessions (session_id TEXT PRIMARY KEY);
CREATE TABLE forgotten (session_id TEXT PRIMARY KEY, forgotten_at TEXT NOT NULL);
"""

# v3: a narrow covering index for time-filtered scope queries (a scan of the wide chunks rows cost ~0.5 s
# at 100k chunks; the index scan costs a tenth of that).
_V3 = """
CREATE INDEX chunks_time ON chunks(end_ts, start_ts, session_id, root_session_id);
"""

# v4: the reason of a queue row's last failed attempt (a row is parked — ``error`` set — only after
# QUEUE_MAX_ATTEMPTS; until then ``last_error`` says why it is being retried).
_V4 = """
ALTER TABLE ingest_queue ADD COLUMN last_error TEXT;
"""

# v5: chunks find their vector by embed_hash. A chunk whose hash has no ``embeddings`` row is "lexical indexed,
# vector pending" — a durable state the back-fill (wwt.ingest.backfill_vectors) works through after a kill (the
# index covers the pending scan: the wide rows are not read).
_V5 = """
CREATE INDEX chunks_embed ON chunks(embed_hash, end_ts, start_ts);
"""

# v6: wwt's own tool calls and results (a recall inside an agent session) are no longer indexed as that
# session's content (wwt/own_tools.py): the sessions holding them are re-chunked by the next ingest.
_V6 = """
INSERT OR IGNORE INTO dirty_sessions(session_id)
    SELECT DISTINCT session_id FROM messages WHERE (kind IN ('tool_call', 'tool_result') AND (
        tool_name LIKE '%search_memory' OR tool_name LIKE '%search_all' OR tool_name LIKE '%get_session'
        OR tool_name LIKE '%ingest_session' OR tool_name LIKE '%wwt%'))
        OR (kind IN ('tool_result', 'text') AND instr(text, '""" + QUOTED_NOTICE.replace("'", "''") + """') > 0);
"""

MIGRATIONS: dict[int, str] = {1: _V1, 2: _V2, 3: _V3, 4: _V4, 5: _V5, 6: _V6}


# --------------------------------------------------------------------------------------------- rows


@dataclass
class ChunkHit:
    id: int
    chunk_key: str
    session_id: str  # the ROOT conversation
    source_session_id: str  # the session the messages come from (a subagent's own id for subagent chunks)
    text: str  # display text
    start_ts: str | None
    end_ts: str | None
    first_seq: int  # message range inside source_session_id
    last_seq: int
    platform: str
    project: str | None
    project_path: str | None
    cwd: str | None
    git_branch: str | None
    started_at: str | None
    ended_at: str | None
    title: str | None
    source_path: str | None


@dataclass
class SessionRow:
    session_id: str
    platform: str
    parent_session_id: str | None
    root_session_id: str
    project: str | None
    project_path: str | None
    cwd: str | None
    git_branch: str | None
    started_at: str | None
    ended_at: str | None
    title: str | None
    source_path: str | None
    message_count: int = 0
    chunk_count: int = 0
    subagent_ids: tuple[str, ...] = ()


@dataclass
class MessageRow:
    session_id: str  # the session the message belongs to (a subagent's id for subagent messages)
    seq: int  # position inside session_id
    native_id: str
    role: str
    kind: str
    text: str
    timestamp: str | None
    tool_name: str | None
    flags: frozenset[str]

    def to_message(self) -> Message:
        return Message(
            native_id=self.native_id, role=self.role, kind=self.kind, text=self.text,
            timestamp=self.timestamp, tool_name=self.tool_name, flags=self.flags,
        )


@dataclass
class QueueItem:
    id: int
    path: str
    platform: str | None
    session_id: str | None
    attempts: int
    error: str | None = None  # parked rows: why the worker gave up


@dataclass
class FileRow:
    id: int
    path: str
    platform: str | None
    size: int
    mtime_ns: int
    consumed_offset: int
    content_hash: str | None
    missing: bool


@dataclass
class StoredChunk:
    """What the chunker's output becomes in SQLite (see ``wwt.chunker.Chunk``)."""

    chunk_key: str
    session_id: str
    root_session_id: str
    first_seq: int
    last_seq: int
    start_ts: str | None
    end_ts: str | None
    embed_text: str
    lexical_text: str
    display_text: str
    embed_hash: str


def _flags_text(flags: Iterable[str]) -> str:
    return ",".join(sorted(flags))


def _flags_set(text: str) -> frozenset[str]:
    return frozenset(f for f in text.split(",") if f)


def merge_order(existing: Sequence[str], parsed: Sequence[str], incremental: bool = False) -> list[str]:
    """Order of a session's messages after merging a parse into what is stored.

    Stored messages keep their relative order; a parsed message not yet stored goes right after its
    predecessor in the parse — or first for a whole-file parse, last for an incremental one (it only holds
    what was appended). Copies of a session merge by native id."""
    known = set(existing)
    order = list(existing)
    inserts: dict[str | None, list[str]] = {}
    anchor: str | None = order[-1] if incremental and order else None
    for nid in parsed:
        if nid in known:
            anchor = nid
            continue
        inserts.setdefault(anchor, []).append(nid)
        known.add(nid)
        anchor = nid
    if not inserts:
        return order
    result: list[str] = []
    result.extend(_expand(None, inserts))
    for nid in order:
        result.append(nid)
        result.extend(_expand(nid, inserts))
    return result


def _expand(anchor: str | None, inserts: dict[str | None, list[str]]) -> list[str]:
    """The messages inserted after ``anchor``, each followed by what was inserted after it (depth first).

    A stack, not recursion: a parse of 50,000 new messages is one chain 50,000 deep."""
    out: list[str] = []
    stack = list(reversed(inserts.get(anchor, ())))
    while stack:
        nid = stack.pop()
        out.append(nid)
        stack.extend(reversed(inserts.get(nid, ())))
    return out


# --------------------------------------------------------------------------------------------- store


class Store:
    def __init__(self, conn: sqlite3.Connection, path: Path, readonly: bool) -> None:
        self.conn = conn
        self.path = path
        self.readonly = readonly
        self._allowed_cache: dict[tuple, frozenset[int]] = {}

    # ---- opening -------------------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path | None = None, readonly: bool = False) -> Store:
        path = Path(path) if path is not None else paths.store_path()
        if not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            os.chmod(path.parent, 0o700)
        if not _open_here(path):  # see _OPEN_HERE: never close a descriptor of a db this process has open
            _check_header(path)
        if readonly and not path.exists():
            raise StoreError(f"no wwt store at {path}: run `wwt ingest` first")
        if not path.exists():
            fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
            os.close(fd)
        try:
            if readonly:
                conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30, isolation_level=None,
                                       check_same_thread=False)
            else:
                conn = sqlite3.connect(str(path), timeout=30, isolation_level=None, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA busy_timeout = 30000")
            store = cls(conn, path, readonly)
            try:
                version = store._identify()  # read-only: a foreign file is refused before anything is written
                if not readonly:
                    conn.execute("PRAGMA journal_mode = WAL")
                    conn.execute("PRAGMA synchronous = NORMAL")
                conn.execute("PRAGMA foreign_keys = ON")
                if version < SCHEMA_VERSION:
                    store._migrate(version, SCHEMA_VERSION)
            except BaseException:
                conn.close()
                raise
        except sqlite3.DatabaseError as exc:
            raise _open_error(path, exc) from None
        if not readonly:
            for suffix in ("", "-wal", "-shm"):
                p = Path(str(path) + suffix)
                if p.exists():
                    os.chmod(p, 0o600)
        with _OPEN_LOCK:
            _OPEN_HERE[str(path)] = _OPEN_HERE.get(str(path), 0) + 1
        store._counted = True
        return store

    def _identify(self) -> int:
        """The on-disk schema version (0 = empty file); refuses foreign and newer files."""
        tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables:
            if self.readonly:
                raise StoreError(f"{self.path} is an empty store: run `wwt ingest` first")
            return 0
        if "meta" not in tables:
            raise StoreError(f"{self.path} is not a wwt store; {_RECOVERY.format(p=self.path)}")
        meta = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("app") != APP_ID:
            raise StoreError(f"{self.path} is not a wwt store; {_RECOVERY.format(p=self.path)}")
        version = int(meta.get("schema_version", "0"))
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer wwt (schema {version}, this wwt reads up to "
                f"{SCHEMA_VERSION}): upgrade wwt (`pip install -U whatwasthat`)"
            )
        if version < SCHEMA_VERSION and self.readonly:
            raise StoreError(f"{self.path} needs an upgrade (schema {version}): run `wwt ingest` once")
        return version

    def _migrate(self, from_version: int, to_version: int) -> None:
        """Apply each migration in its own transaction so a crash leaves a valid older version."""
        for version in range(from_version + 1, to_version + 1):
            with self.transaction():
                if self._version_now() >= version:
                    continue  # another process (a hook, the engine) created or migrated it since we looked
                for statement in MIGRATIONS[version].split(";"):
                    if statement.strip():
                        self.conn.execute(statement)
                if version == 1:
                    self.conn.executemany(
                        "INSERT INTO meta(key, value) VALUES (?, ?)",
                        [("app", APP_ID), ("change_counter", "0"), ("created_at", _now_iso())],
                    )
                self._set_meta("schema_version", str(version))

    def _version_now(self) -> int:
        """The schema version as committed right now (inside a write transaction: nobody can change it)."""
        if not self.conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone():
            return 0
        row = self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row[0]) if row else 0

    def close(self) -> None:
        self.conn.close()
        if getattr(self, "_counted", False):
            self._counted = False
            with _OPEN_LOCK:
                left = _OPEN_HERE.get(str(self.path), 1) - 1
                if left > 0:
                    _OPEN_HERE[str(self.path)] = left
                else:
                    _OPEN_HERE.pop(str(self.path), None)

    def damage(self) -> str | None:
        """SQLite's own check of every page (``PRAGMA quick_check``): None when sound, else its first finding.
        Reads the whole file: for ``wwt doctor``, not for every command."""
        try:
            row = self.conn.execute("PRAGMA quick_check(1)").fetchone()
        except sqlite3.DatabaseError as exc:
            return " ".join(str(exc).split())
        return None if row is None or row[0] == "ok" else str(row[0])

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE so writers queue instead of failing mid-way)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")

    # ---- meta ----------------------------------------------------------------------------------------

    def _set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (key, value),
        )

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction():
            self._set_meta(key, value)

    def schema_version(self) -> int:
        return int(self.get_meta("schema_version", "0") or 0)

    def change_counter(self) -> int:
        return int(self.get_meta("change_counter", "0") or 0)

    def bump_change_counter(self) -> int:
        """Called after SQLite and the indexes are both updated: readers reload when it moves."""
        with self.transaction():
            value = self.change_counter() + 1
            self._set_meta("change_counter", str(value))
            self._set_meta("last_ingest", _now_iso())
        return value

    # ---- reads for search / presentation --------------------------------------------------------------

    _HIT_SQL = """
        SELECT c.id, c.chunk_key, c.root_session_id, c.session_id AS source_session_id, c.display_text,
               c.start_ts, c.end_ts, c.first_seq, c.last_seq,
               COALESCE(r.platform, s.platform) AS platform,
               COALESCE(r.project, s.project) AS project,
               COALESCE(r.project_path, s.project_path) AS project_path,
               COALESCE(r.cwd, s.cwd) AS cwd,
               COALESCE(r.git_branch, s.git_branch) AS git_branch,
               COALESCE(r.started_at, s.started_at) AS started_at,
               COALESCE(r.ended_at, s.ended_at) AS ended_at,
               COALESCE(r.title, s.title) AS title,
               COALESCE(r.source_path, s.source_path) AS source_path
        FROM chunks c
        JOIN sessions s ON s.session_id = c.session_id
        LEFT JOIN sessions r ON r.session_id = c.root_session_id
    """

    def _select_in(self, sql: str, values: Sequence[object], batch: int = 500) -> Iterator[sqlite3.Row]:
        """Rows of ``<sql> IN (values)``, asked ``batch`` values at a time (SQLite's bound-variable limit)."""
        for start in range(0, len(values), batch):
            part = values[start : start + batch]
            yield from self.conn.execute(f"{sql} IN ({','.join('?' * len(part))})", part)

    def chunks_by_ids(self, ids: Sequence[int]) -> list[ChunkHit]:
        """Hits in the order of ``ids``; ids no longer in SQLite (deleted meanwhile) are left out."""
        found: dict[int, ChunkHit] = {}
        id_list = list(ids)
        for r in self._select_in(f"{self._HIT_SQL} WHERE c.id", id_list):
            found[r["id"]] = ChunkHit(
                id=r["id"], chunk_key=r["chunk_key"], session_id=r["root_session_id"],
                source_session_id=r["source_session_id"], text=r["display_text"],
                start_ts=r["start_ts"], end_ts=r["end_ts"], first_seq=r["first_seq"],
                last_seq=r["last_seq"], platform=r["platform"], project=r["project"],
                project_path=r["project_path"], cwd=r["cwd"], git_branch=r["git_branch"],
                started_at=r["started_at"], ended_at=r["ended_at"], title=r["title"],
                source_path=r["source_path"],
            )
        return [found[i] for i in id_list if i in found]

    def chunk_by_key(self, chunk_key: str) -> ChunkHit | None:
        row = self.conn.execute("SELECT id FROM chunks WHERE chunk_key=?", (chunk_key,)).fetchone()
        if row is None:
            return None
        hits = self.chunks_by_ids([row[0]])
        return hits[0] if hits else None

    def chunk_ids_matching(self, filters: Filters) -> frozenset[int] | None:
        """Chunk ids allowed by ``filters`` (root conversation's metadata); ``None`` = no restriction.

        ``project`` matches the project name or project path; ``cwd`` matches that folder or below;
        ``since``/``until`` are ISO strings compared with the chunk's time range (falling back to the
        session's), so pass full timestamps for ``until``.

        Session-level filters select root conversations first (a small table), then their chunks through
        the ``chunks_root`` index; the answer is cached per filter until the next committed ingest, since a
        long-lived searcher (MCP) asks with the same scope (the current project) again and again."""
        if filters.is_empty() and not filters.exclude_session_id:
            return None
        key = (astuple(filters), self.change_counter())
        cached = self._allowed_cache.get(key)
        if cached is not None:
            return cached
        roots, root_args = [], []
        if filters.project:
            roots.append("(project = ? OR project_path = ?)")
            root_args += [filters.project, filters.project]
        if filters.platform:
            roots.append("platform = ?")
            root_args.append(filters.platform)
        if filters.git_branch:
            roots.append("git_branch = ?")
            root_args.append(filters.git_branch)
        if filters.cwd:
            cwd = filters.cwd.rstrip("/") or "/"
            roots.append("(cwd = ? OR cwd LIKE ? ESCAPE '\\')")
            root_args += [cwd, _like_prefix(cwd.rstrip("/") + "/")]
        where, args = [], []
        if roots:
            where.append(
                "c.root_session_id IN (SELECT session_id FROM sessions WHERE session_id = root_session_id AND "
                + " AND ".join(roots) + ")"
            )
            args += root_args
        if filters.since:
            where.append(time_key_sql("COALESCE(c.end_ts, c.start_ts, s.ended_at, s.started_at)") + " >= ?")
            args.append(time_key(filters.since))
        if filters.until:
            where.append(time_key_sql("COALESCE(c.start_ts, c.end_ts, s.started_at, s.ended_at)") + " <= ?")
            args.append(time_key(filters.until))
        if filters.exclude_session_id:
            where.append("c.root_session_id != ?")
            args.append(filters.exclude_session_id)
        join = " JOIN sessions s ON s.session_id = c.session_id" if filters.since or filters.until else ""
        sql = f"SELECT c.id FROM chunks c{join} WHERE " + " AND ".join(where)
        ids = frozenset(r[0] for r in self.conn.execute(sql, args))
        if len(self._allowed_cache) >= ALLOWED_CACHE_SIZE:
            self._allowed_cache.clear()
        self._allowed_cache[key] = ids
        return ids

    def get_session(self, session_id_or_prefix: str) -> SessionRow | None:
        """Exact id, else a unique prefix (≥ 4 chars). Ambiguous prefix → ``UsageError``."""
        key = session_id_or_prefix.strip()
        row = self.conn.execute("SELECT * FROM sessions WHERE session_id = ?", (key,)).fetchone()
        if row is None and len(key) >= 4:
            rows = self.conn.execute(
                "SELECT * FROM sessions WHERE session_id LIKE ? ESCAPE '\\' AND stub = 0 LIMIT 6",
                (_like_prefix(key),),
            ).fetchall()
            if len(rows) > 1:
                listing = ", ".join(r["session_id"] for r in rows[:5])
                raise UsageError(f"session prefix {key!r} is ambiguous: {listing}")
            row = rows[0] if rows else None
        if row is None:
            return None
        sid = row["session_id"]
        msgs = self.conn.execute("SELECT COUNT(*) FROM messages WHERE session_id=?", (sid,)).fetchone()[0]
        chunks = self.conn.execute(
            "SELECT COUNT(*) FROM chunks WHERE root_session_id=?", (sid,)
        ).fetchone()[0]
        subs = tuple(
            r[0]
            for r in self.conn.execute(
                "SELECT session_id FROM sessions WHERE root_session_id=? AND session_id != ? "
                "ORDER BY started_at, session_id",
                (sid, sid),
            )
        )
        return SessionRow(
            session_id=sid, platform=row["platform"], parent_session_id=row["parent_session_id"],
            root_session_id=row["root_session_id"], project=row["project"], project_path=row["project_path"],
            cwd=row["cwd"], git_branch=row["git_branch"], started_at=row["started_at"],
            ended_at=row["ended_at"], title=row["title"], source_path=row["source_path"],
            message_count=msgs, chunk_count=chunks, subagent_ids=subs,
        )

    def session_messages(self, session_id: str) -> list[MessageRow]:
        """Messages of exactly this session, in order."""
        return [
            _message_row(r)
            for r in self.conn.execute(
                "SELECT session_id, seq, native_id, role, kind, text, timestamp, tool_name, flags "
                "FROM messages WHERE session_id=? ORDER BY seq",
                (session_id,),
            )
        ]

    def get_messages(self, session_id: str, start: int = 0, end: int | None = None) -> list[MessageRow]:
        """Messages ``start <= seq < end`` of ``session_id``; for a root conversation its subagents'
        messages are interleaved by time (each flagged ``subagent``, carrying its own session id/seq)."""
        own = [m for m in self.session_messages(session_id) if m.seq >= start and (end is None or m.seq < end)]
        subs = [
            r[0]
            for r in self.conn.execute(
                "SELECT session_id FROM sessions WHERE root_session_id=? AND session_id != ? "
                "ORDER BY started_at, session_id",
                (session_id, session_id),
            )
        ]
        if not subs:
            return own
        lo = own[0].timestamp if own and start > 0 else None
        hi = own[-1].timestamp if own and end is not None else None
        blocks: list[list[MessageRow]] = []
        for sub in subs:
            msgs = self.session_messages(sub)
            msgs = [
                MessageRow(**{**m.__dict__, "flags": m.flags | {FLAG_SUBAGENT}}) for m in msgs
            ]
            first_ts = next((m.timestamp for m in msgs if m.timestamp), None)
            if msgs and (lo is None or (first_ts and time_key(first_ts) >= time_key(lo))) and (
                hi is None or (first_ts and time_key(first_ts) <= time_key(hi))
            ):
                blocks.append(msgs)
        return _interleave(own, blocks)

    def stats(self) -> dict:
        one = lambda sql, *a: self.conn.execute(sql, a).fetchone()[0]  # noqa: E731
        per_platform = {
            r[0]: {"sessions": r[1]}
            for r in self.conn.execute(
                "SELECT platform, COUNT(*) FROM sessions WHERE stub=0 GROUP BY platform ORDER BY platform"
            )
        }
        for r in self.conn.execute(
            "SELECT s.platform, COUNT(*) FROM chunks c JOIN sessions s ON s.session_id=c.session_id "
            "GROUP BY s.platform"
        ):
            per_platform.setdefault(r[0], {"sessions": 0})["chunks"] = r[1]
        db_bytes = sum(
            Path(str(self.path) + s).stat().st_size
            for s in ("", "-wal")
            if Path(str(self.path) + s).exists()
        )
        return {
            "sessions": one("SELECT COUNT(*) FROM sessions WHERE stub=0 AND parent_session_id IS NULL"),
            "subagent_sessions": one("SELECT COUNT(*) FROM sessions WHERE parent_session_id IS NOT NULL"),
            "messages": one("SELECT COUNT(*) FROM messages"),
            "chunks": one("SELECT COUNT(*) FROM chunks"),
            "files": one("SELECT COUNT(*) FROM files"),
            "files_missing": one("SELECT COUNT(*) FROM files WHERE missing=1"),
            "embeddings": one("SELECT COUNT(*) FROM embeddings"),
            "chunks_with_vector": self.vector_progress()[0],
            "queue_pending": one("SELECT COUNT(*) FROM ingest_queue WHERE error IS NULL"),
            "queue_parked": one("SELECT COUNT(*) FROM ingest_queue WHERE error IS NOT NULL"),
            "per_platform": per_platform,
            "db_bytes": db_bytes,
            "last_ingest": self.get_meta("last_ingest"),
            "schema_version": self.schema_version(),
            "change_counter": self.change_counter(),
        }

    def session_activity(self, session_ids: list[str]) -> dict[str, tuple[str | None, bool]]:
        """Per session: when it was last active and whether it holds any answer (an assistant's text)."""
        out: dict[str, tuple[str | None, bool]] = {}
        for start in range(0, len(session_ids), 500):
            part = session_ids[start:start + 500]
            marks = ",".join("?" * len(part))
            for sid, ended, answered in self.conn.execute(
                f"SELECT s.session_id, s.ended_at, EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.session_id "
                f"AND m.role = 'assistant' AND m.kind = 'text') FROM sessions s WHERE s.session_id IN ({marks})", part):
                out[sid] = (ended, bool(answered))
        return out

    def projects(self) -> list[str]:
        return [
            r[0]
            for r in self.conn.execute(
                "SELECT DISTINCT project FROM sessions WHERE project IS NOT NULL AND project != '' "
                "ORDER BY project"
            )
        ]

    # ---- durable ingest queue (hook) -------------------------------------------------------------------

    def enqueue(self, path: str, platform: str | None, session_id: str | None) -> None:
        """Record "this file changed"; a pending unclaimed row for the same path absorbs repeats."""
        with self.transaction():
            row = self.conn.execute(
                "SELECT id FROM ingest_queue WHERE path=? AND claimed_at IS NULL AND error IS NULL", (path,)
            ).fetchone()
            if row is None:
                self.conn.execute(
                    "INSERT INTO ingest_queue(path, platform, session_id, enqueued_at) VALUES (?, ?, ?, ?)",
                    (path, platform, session_id, time.time()),
                )

    def claim_queue(self, limit: int = 100) -> list[QueueItem]:
        """Claim up to ``limit`` items; claims older than QUEUE_CLAIM_TIMEOUT_S (a killed worker) are
        claimable again."""
        now = time.time()
        with self.transaction():
            rows = self.conn.execute(
                "SELECT id, path, platform, session_id, attempts FROM ingest_queue "
                "WHERE (claimed_at IS NULL OR claimed_at < ?) AND error IS NULL ORDER BY id LIMIT ?",
                (now - QUEUE_CLAIM_TIMEOUT_S, limit),
            ).fetchall()
            self.conn.executemany(
                "UPDATE ingest_queue SET claimed_at=?, attempts=attempts+1 WHERE id=?",
                [(now, r["id"]) for r in rows],
            )
        return [QueueItem(r["id"], r["path"], r["platform"], r["session_id"], r["attempts"] + 1) for r in rows]

    def release_claims(self) -> int:
        """Make every claimed row claimable now. Only for the one worker (it holds worker.lock): any claim it
        finds was left by a worker that died, and waiting QUEUE_CLAIM_TIMEOUT_S would strand the last turn."""
        with self.transaction():
            return self.conn.execute(
                "UPDATE ingest_queue SET claimed_at=NULL WHERE claimed_at IS NOT NULL AND error IS NULL"
            ).rowcount

    def finish_queue(self, ids: Sequence[int], error: str | None = None) -> None:
        """Done → rows removed. Error → the reason is kept (``last_error``) and the row retried later; after
        QUEUE_MAX_ATTEMPTS failed attempts it is parked with the error (``parked_queue``, ``retry_parked``)."""
        with self.transaction():
            if error is None:
                self.conn.executemany("DELETE FROM ingest_queue WHERE id=?", [(i,) for i in ids])
                return
            error = error[:QUEUE_ERROR_CHARS]
            for i in ids:
                row = self.conn.execute("SELECT attempts FROM ingest_queue WHERE id=?", (i,)).fetchone()
                if row is None:
                    continue
                parked = error if row[0] >= QUEUE_MAX_ATTEMPTS else None
                self.conn.execute(
                    "UPDATE ingest_queue SET claimed_at=NULL, last_error=?, error=? WHERE id=?", (error, parked, i)
                )

    def release_queue(self, ids: Sequence[int]) -> None:
        """Hand claimed rows back without counting the attempt: the failure was not theirs (the store, the
        model or the disk failed), so they must not be parked for it."""
        with self.transaction():
            self.conn.executemany(
                "UPDATE ingest_queue SET claimed_at=NULL, attempts=MAX(attempts - 1, 0) WHERE id=? AND error IS NULL",
                [(i,) for i in ids],
            )

    def queue_size(self) -> int:
        """Rows still to ingest (parked ones not counted)."""
        return self.conn.execute("SELECT COUNT(*) FROM ingest_queue WHERE error IS NULL").fetchone()[0]

    def oldest_pending(self) -> float | None:
        """When the longest-waiting row still to ingest was queued (epoch seconds), or None."""
        return self.conn.execute("SELECT MIN(enqueued_at) FROM ingest_queue WHERE error IS NULL").fetchone()[0]

    def parked_paths(self) -> set[str]:
        """Paths with a parked row (the worker gave up on them until ``retry_parked``)."""
        return {r[0] for r in self.conn.execute("SELECT DISTINCT path FROM ingest_queue WHERE error IS NOT NULL")}

    def parked_queue(self, limit: int = 100) -> list[QueueItem]:
        """Rows the worker gave up on, newest first, with their error."""
        rows = self.conn.execute(
            "SELECT id, path, platform, session_id, attempts, error FROM ingest_queue WHERE error IS NOT NULL "
            "ORDER BY id DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [QueueItem(r["id"], r["path"], r["platform"], r["session_id"], r["attempts"], r["error"]) for r in rows]

    def retry_parked(self) -> int:
        """Queue every parked row again with fresh attempts (``wwt worker --retry-parked``); a parked row whose
        path is already waiting in the queue is dropped instead. Returns how many rows were re-queued."""
        with self.transaction():
            self.conn.execute(
                "DELETE FROM ingest_queue WHERE error IS NOT NULL AND path IN "
                "(SELECT path FROM ingest_queue WHERE error IS NULL)"
            )
            self.conn.execute(
                "DELETE FROM ingest_queue WHERE error IS NOT NULL AND id NOT IN "
                "(SELECT MAX(id) FROM ingest_queue WHERE error IS NOT NULL GROUP BY path)"
            )
            return self.conn.execute(
                "UPDATE ingest_queue SET error=NULL, attempts=0, claimed_at=NULL, enqueued_at=? "
                "WHERE error IS NOT NULL",
                (time.time(),),
            ).rowcount

    # ---- files (ingest) ----------------------------------------------------------------------------

    def get_file(self, path: str) -> FileRow | None:
        r = self.conn.execute("SELECT * FROM files WHERE path=?", (path,)).fetchone()
        return _file_row(r) if r else None

    def all_files(self) -> list[FileRow]:
        return [_file_row(r) for r in self.conn.execute("SELECT * FROM files ORDER BY path")]

    def upsert_file(
        self, path: str, platform: str | None, size: int, mtime_ns: int, consumed_offset: int,
        content_hash: str | None,
    ) -> int:
        """Inside a caller's transaction. Returns the file id."""
        self.conn.execute(
            "INSERT INTO files(path, platform, size, mtime_ns, consumed_offset, content_hash, missing, ingested_at)"
            " VALUES (?, ?, ?, ?, ?, ?, 0, ?) ON CONFLICT(path) DO UPDATE SET platform=excluded.platform,"
            " size=excluded.size, mtime_ns=excluded.mtime_ns, consumed_offset=excluded.consumed_offset,"
            " content_hash=excluded.content_hash, missing=0, ingested_at=excluded.ingested_at",
            (path, platform, size, mtime_ns, consumed_offset, content_hash, _now_iso()),
        )
        return self.conn.execute("SELECT id FROM files WHERE path=?", (path,)).fetchone()[0]

    def mark_file_missing(self, path: str) -> None:
        """The agent deleted its log: keep every archived message, just remember the file is gone."""
        with self.transaction():
            self.conn.execute("UPDATE files SET missing=1 WHERE path=?", (path,))

    def file_session_ids(self, file_id: int) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT session_id FROM session_files WHERE file_id=?", (file_id,))]

    # ---- sessions and messages (ingest; call inside a transaction) ----------------------------------

    def upsert_session(self, session: Session, root_session_id: str, file_id: int | None) -> None:
        """New non-empty metadata wins; empty fields never erase what an earlier parse found."""
        self.conn.execute(
            """INSERT INTO sessions(session_id, platform, parent_session_id, root_session_id, project,
                   project_path, cwd, git_branch, started_at, ended_at, title, source_path, stub)
               VALUES (?,?,?,?,?,?,?,?,?,?,?,?,0)
               ON CONFLICT(session_id) DO UPDATE SET
                   platform=excluded.platform,
                   parent_session_id=COALESCE(excluded.parent_session_id, parent_session_id),
                   root_session_id=excluded.root_session_id,
                   project=COALESCE(excluded.project, project),
                   project_path=COALESCE(excluded.project_path, project_path),
                   cwd=COALESCE(excluded.cwd, cwd),
                   git_branch=COALESCE(excluded.git_branch, git_branch),
                   started_at=CASE WHEN started_at IS NULL OR (excluded.started_at IS NOT NULL
                       AND """ + time_key_sql("excluded.started_at") + " < " + time_key_sql("started_at") + """)
                       THEN excluded.started_at ELSE started_at END,
                   ended_at=CASE WHEN ended_at IS NULL OR (excluded.ended_at IS NOT NULL
                       AND """ + time_key_sql("excluded.ended_at") + " > " + time_key_sql("ended_at") + """)
                       THEN excluded.ended_at ELSE ended_at END,
                   title=CASE WHEN ? THEN COALESCE(title, excluded.title) ELSE COALESCE(excluded.title, title) END,
                   source_path=CASE WHEN stub=1 THEN excluded.source_path
                       ELSE COALESCE(source_path, excluded.source_path) END,
                   stub=0""",
            (
                session.session_id, session.platform, session.parent_session_id, root_session_id,
                session.project, session.project_path, session.cwd, session.git_branch or None,
                session.started_at, session.ended_at, session.title, session.source_path,
                int(session.title_is_first_prompt),
            ),
        )
        if file_id is not None:
            self.conn.execute(
                "INSERT OR IGNORE INTO session_files(session_id, file_id) VALUES (?, ?)",
                (session.session_id, file_id),
            )

    def ensure_stub_session(self, session_id: str, like: Session) -> None:
        """A subagent arrived before its parent: a placeholder parent carries its metadata until then."""
        self.conn.execute(
            """INSERT OR IGNORE INTO sessions(session_id, platform, root_session_id, project, project_path,
                   cwd, git_branch, started_at, ended_at, source_path, stub)
               VALUES (?,?,?,?,?,?,?,?,?,?,1)""",
            (session_id, like.platform, session_id, like.project, like.project_path, like.cwd,
             like.git_branch or None, like.started_at, like.ended_at, None),
        )

    def session_root(self, session_id: str) -> str | None:
        r = self.conn.execute("SELECT root_session_id FROM sessions WHERE session_id=?", (session_id,)).fetchone()
        return r[0] if r else None

    def merge_messages(
        self, session_id: str, messages: Sequence[Message], file_id: int, full: bool
    ) -> tuple[int, int]:
        """Merge one parse of ``session_id`` from ``file_id``. Returns (added, removed).

        ``full`` parses also drop this file's claim on messages it no longer contains (a rewind); a message
        no file claims any more is deleted. A file that disappears is never parsed, so it drops nothing."""
        rows = self.conn.execute(
            "SELECT id, native_id, seq, text FROM messages WHERE session_id=? ORDER BY seq", (session_id,)
        ).fetchall()
        by_nid = {r["native_id"]: r for r in rows}
        removed = 0
        parsed_ids: list[str] = []
        seen: set[str] = set()
        for m in messages:
            if m.native_id not in seen:
                seen.add(m.native_id)
                parsed_ids.append(m.native_id)
        if full:
            claimed = {
                r[0]: r[1]
                for r in self.conn.execute(
                    "SELECT m.native_id, m.id FROM messages m JOIN message_files f ON f.message_id=m.id "
                    "WHERE m.session_id=? AND f.file_id=?",
                    (session_id, file_id),
                )
            }
            dropped = [mid for nid, mid in claimed.items() if nid not in seen]
            if dropped:
                self.conn.executemany(
                    "DELETE FROM message_files WHERE message_id=? AND file_id=?", [(mid, file_id) for mid in dropped]
                )
                for mid in dropped:
                    left = self.conn.execute(
                        "SELECT COUNT(*) FROM message_files WHERE message_id=?", (mid,)
                    ).fetchone()[0]
                    if left == 0:
                        self.conn.execute("DELETE FROM messages WHERE id=?", (mid,))
                        removed += 1
                rows = self.conn.execute(
                    "SELECT id, native_id, seq, text FROM messages WHERE session_id=? ORDER BY seq", (session_id,)
                ).fetchall()
                by_nid = {r["native_id"]: r for r in rows}
        order = merge_order([r["native_id"] for r in rows], parsed_ids, incremental=not full)
        new_seq = {nid: i for i, nid in enumerate(order)}
        # Shift existing rows whose position changed (rare: only when something is inserted mid-session).
        moved = [(new_seq[r["native_id"]], r["id"]) for r in rows if new_seq[r["native_id"]] != r["seq"]]
        if moved:
            self.conn.executemany("UPDATE messages SET seq=-seq-1 WHERE id=?", [(mid,) for _, mid in moved])
            self.conn.executemany("UPDATE messages SET seq=? WHERE id=?", moved)
        added = 0
        done: set[str] = set()
        for m in messages:
            if m.native_id in done:
                continue
            done.add(m.native_id)
            existing = by_nid.get(m.native_id)
            if existing is None:
                cur = self.conn.execute(
                    "INSERT INTO messages(session_id, native_id, seq, role, kind, text, timestamp, tool_name,"
                    " parent_id, flags) VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (session_id, m.native_id, new_seq[m.native_id], m.role, m.kind, m.text, m.timestamp,
                     m.tool_name, m.parent_id, _flags_text(m.flags)),
                )
                mid = cur.lastrowid
                added += 1
            else:
                mid = existing["id"]
                if full and existing["text"] != m.text:
                    self.conn.execute(
                        "UPDATE messages SET role=?, kind=?, text=?, timestamp=?, tool_name=?, flags=? WHERE id=?",
                        (m.role, m.kind, m.text, m.timestamp, m.tool_name, _flags_text(m.flags), mid),
                    )
            self.conn.execute("INSERT OR IGNORE INTO message_files(message_id, file_id) VALUES (?, ?)", (mid, file_id))
        return added, removed

    # ---- chunks and vectors (ingest) ---------------------------------------------------------------

    def chunk_keys(self, session_id: str) -> dict[str, int]:
        return {
            r[0]: r[1]
            for r in self.conn.execute("SELECT chunk_key, id FROM chunks WHERE session_id=?", (session_id,))
        }

    def replace_chunks(self, session_id: str, chunks: Sequence[StoredChunk]) -> tuple[list[int], list[int]]:
        """Make ``session_id``'s chunks exactly ``chunks``: unchanged keys keep their row id.
        Returns (added ids, removed ids). Call inside a transaction."""
        current = self.chunk_keys(session_id)
        wanted = {c.chunk_key: c for c in chunks}
        removed = [cid for key, cid in current.items() if key not in wanted]
        if removed:
            self.conn.executemany("DELETE FROM chunks WHERE id=?", [(i,) for i in removed])
        added: list[int] = []
        for key, c in wanted.items():
            if key in current:
                # Same key ⇒ same content; positions may shift when messages are inserted mid-session.
                self.conn.execute(
                    "UPDATE chunks SET first_seq=?, last_seq=?, root_session_id=? WHERE id=?",
                    (c.first_seq, c.last_seq, c.root_session_id, current[key]),
                )
                continue
            cur = self.conn.execute(
                "INSERT INTO chunks(chunk_key, session_id, root_session_id, first_seq, last_seq, start_ts, end_ts,"
                " embed_text, lexical_text, display_text, embed_hash) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (c.chunk_key, c.session_id, c.root_session_id, c.first_seq, c.last_seq, c.start_ts, c.end_ts,
                 c.embed_text, c.lexical_text, c.display_text, c.embed_hash),
            )
            added.append(cur.lastrowid)
        return added, removed

    def cached_vectors(self, text_hashes: Iterable[str]) -> dict[str, bytes]:
        hashes = list(dict.fromkeys(text_hashes))
        out: dict[str, bytes] = {}
        for r in self._select_in("SELECT text_hash, vector FROM embeddings WHERE text_hash", hashes):
            out[r[0]] = r[1]
        return out

    def put_vectors(self, items: Iterable[tuple[str, int, bytes]]) -> None:
        """(text_hash, dim, float32 bytes). Its own transaction: embedding work survives a later crash."""
        with self.transaction():
            self.conn.executemany(
                "INSERT OR IGNORE INTO embeddings(text_hash, dim, vector) VALUES (?, ?, ?)", list(items)
            )

    def prune_embeddings(self) -> int:
        """Drop cached vectors no chunk uses (after ``forget``: nothing of a forgotten session stays)."""
        with self.transaction():
            cur = self.conn.execute(
                "DELETE FROM embeddings WHERE text_hash NOT IN (SELECT embed_hash FROM chunks)"
            )
        return cur.rowcount

    def all_chunk_ids(self) -> set[int]:
        return {r[0] for r in self.conn.execute("SELECT id FROM chunks")}

    def vector_chunk_ids(self) -> set[int]:
        """Chunks whose vector is stored: what the vector index must hold (the rest are pending)."""
        return {
            r[0]
            for r in self.conn.execute(
                "SELECT c.id FROM chunks c WHERE EXISTS (SELECT 1 FROM embeddings e WHERE e.text_hash=c.embed_hash)"
            )
        }

    def has_pending_vectors(self) -> bool:
        """Is any chunk still waiting for its vector (the back-fill has work)? Stops at the first one."""
        row = self.conn.execute(
            "SELECT 1 FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.text_hash=c.embed_hash)"
            " LIMIT 1"
        ).fetchone()
        return row is not None

    def pending_vectors(self, limit: int) -> list[tuple[str, str]]:
        """Up to ``limit`` distinct (embed_hash, embed_text) with no stored vector, newest chunks first (the
        sessions a user most likely searches for)."""
        hashes = [
            r[0]
            for r in self.conn.execute(
                "SELECT c.embed_hash, MAX(COALESCE(c.end_ts, c.start_ts, '')) AS t FROM chunks c"
                " WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.text_hash=c.embed_hash)"
                " GROUP BY c.embed_hash ORDER BY t DESC, c.embed_hash LIMIT ?",
                (limit,),
            )
        ]
        texts: dict[str, str] = {}
        for r in self._select_in("SELECT embed_hash, embed_text FROM chunks WHERE embed_hash", hashes):
            texts.setdefault(r[0], r[1])
        return [(h, texts[h]) for h in hashes if h in texts]

    def chunk_ids_for_hashes(self, text_hashes: Iterable[str]) -> dict[str, list[int]]:
        """Every chunk id per embed hash (several chunks may share one text, hence one vector)."""
        hashes = list(dict.fromkeys(text_hashes))
        out: dict[str, list[int]] = {}
        for r in self._select_in("SELECT embed_hash, id FROM chunks WHERE embed_hash", hashes):
            out.setdefault(r[0], []).append(r[1])
        return out

    def has_vectors(self) -> bool:
        return self.conn.execute("SELECT 1 FROM embeddings LIMIT 1").fetchone() is not None

    def vector_progress(self) -> tuple[int, int]:
        """(chunks with a stored vector, all chunks)."""
        total = self.chunk_count()
        pending = self.conn.execute(
            "SELECT COUNT(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.text_hash=c.embed_hash)"
        ).fetchone()[0]
        return total - pending, total

    def chunk_count(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]

    def iter_index_rows(self, ids: Iterable[int] | None = None, batch: int = 500) -> Iterator[list[sqlite3.Row]]:
        """Rows for (re)building indexes: chunk fields + session metadata + vector blob."""
        sql = (
            "SELECT c.id, c.chunk_key, c.root_session_id, c.session_id, c.lexical_text, c.embed_text, c.start_ts,"
            " c.end_ts, COALESCE(r.platform, s.platform) AS platform, COALESCE(r.project, s.project) AS project,"
            " COALESCE(r.project_path, s.project_path) AS project_path, COALESCE(r.cwd, s.cwd) AS cwd,"
            " COALESCE(r.git_branch, s.git_branch) AS git_branch,"
            " COALESCE(r.started_at, s.started_at) AS started_at, e.vector, e.dim"
            " FROM chunks c JOIN sessions s ON s.session_id=c.session_id"
            " LEFT JOIN sessions r ON r.session_id=c.root_session_id"
            " LEFT JOIN embeddings e ON e.text_hash=c.embed_hash"
        )
        if ids is None:
            cur = self.conn.execute(sql + " ORDER BY c.id")
            while True:
                rows = cur.fetchmany(batch)
                if not rows:
                    return
                yield rows
        id_list = sorted(ids)
        for start in range(0, len(id_list), batch):
            part = id_list[start : start + batch]
            marks = ",".join("?" * len(part))
            yield self.conn.execute(sql + f" WHERE c.id IN ({marks}) ORDER BY c.id", part).fetchall()

    def iter_embed_texts(self, batch: int = 500) -> Iterator[list[sqlite3.Row]]:
        """(id, embed_text) of every chunk, in batches (labelling the vector index's languages once)."""
        cur = self.conn.execute("SELECT id, embed_text FROM chunks ORDER BY id")
        while rows := cur.fetchmany(batch):
            yield rows

    # ---- work left by an interrupted ingest ----------------------------------------------------------

    def mark_dirty(self, session_ids: Iterable[str]) -> None:
        self.conn.executemany("INSERT OR IGNORE INTO dirty_sessions(session_id) VALUES (?)", [(s,) for s in session_ids])

    def dirty_sessions(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT session_id FROM dirty_sessions ORDER BY session_id")]

    def clear_dirty(self, session_id: str) -> None:
        self.conn.execute("DELETE FROM dirty_sessions WHERE session_id=?", (session_id,))

    def is_forgotten(self, session_id: str) -> bool:
        return self.conn.execute("SELECT 1 FROM forgotten WHERE session_id=?", (session_id,)).fetchone() is not None

    # ---- forgetting ----------------------------------------------------------------------------------

    def sessions_to_forget(self, session_id: str | None = None, project: str | None = None) -> list[str]:
        """The sessions (roots and their subagents) a forget would delete."""
        roots: list[str] = []
        if session_id:
            row = self.get_session(session_id)
            if row is not None:
                roots.append(row.root_session_id)
        if project:
            roots += [
                r[0]
                for r in self.conn.execute(
                    "SELECT session_id FROM sessions WHERE parent_session_id IS NULL AND (project=? OR project_path=?)",
                    (project, project),
                )
            ]
        out: list[str] = []
        for root in dict.fromkeys(roots):
            out += [r[0] for r in self.conn.execute("SELECT session_id FROM sessions WHERE root_session_id=?", (root,))]
            if root not in out:
                out.append(root)
        return list(dict.fromkeys(out))

    def delete_sessions(self, session_ids: Sequence[str]) -> list[int]:
        """Delete sessions, their messages and chunks (inside a caller's transaction). Returns chunk ids."""
        chunk_ids: list[int] = []
        for sid in session_ids:
            chunk_ids += [r[0] for r in self.conn.execute("SELECT id FROM chunks WHERE session_id=?", (sid,))]
            self.conn.execute("DELETE FROM chunks WHERE session_id=?", (sid,))
            self.conn.execute(
                "DELETE FROM message_files WHERE message_id IN (SELECT id FROM messages WHERE session_id=?)", (sid,)
            )
            self.conn.execute("DELETE FROM messages WHERE session_id=?", (sid,))
            self.conn.execute("DELETE FROM session_files WHERE session_id=?", (sid,))
            self.conn.execute("DELETE FROM sessions WHERE session_id=?", (sid,))
            self.conn.execute("DELETE FROM dirty_sessions WHERE session_id=?", (sid,))
            self.conn.execute(
                "INSERT OR REPLACE INTO forgotten(session_id, forgotten_at) VALUES (?, ?)", (sid, _now_iso())
            )
        return chunk_ids


# --------------------------------------------------------------------------------------------- damage


# sqlite3's message for a text cell that is not UTF-8: a byte flipped inside a page that still parses
_UNDECODABLE = "could not decode to utf-8"


def store_damage(exc: BaseException) -> bool:
    """SQLite says the file is damaged (a malformed page, a page that is no database page). Such a file can
    open fine — its header and schema pages are intact — and fail only when a query reaches the bad page."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name.startswith("SQLITE_CORRUPT") or name == "SQLITE_NOTADB":
        return True
    text = str(exc).lower()
    return "malformed" in text or "file is not a database" in text or text.startswith(_UNDECODABLE)


def store_damage_error(path: Path | str, exc: BaseException) -> StoreError:
    """The one line every command, the worker and the MCP tools give for a damaged store. SQLite's own words
    say what is wrong, except for an undecodable cell, whose message quotes the damaged text itself."""
    reason = " ".join(str(exc).split())
    if reason.lower().startswith(_UNDECODABLE):
        reason = "a stored text is not valid UTF-8"
    return StoreError(f"{path} is damaged ({reason[:200]}); {_RECOVERY.format(p=path)}")


def _guarded(fn):  # type: ignore[no-untyped-def]
    """``fn`` (a Store method) with SQLite's damage errors turned into ``store_damage_error``."""
    import functools
    import inspect

    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def rows(self: Store, *args, **kwargs):  # type: ignore[no-untyped-def]
            try:
                yield from fn(self, *args, **kwargs)
            except sqlite3.DatabaseError as exc:
                if store_damage(exc):
                    raise store_damage_error(self.path, exc) from None
                raise

        return rows

    @functools.wraps(fn)
    def method(self: Store, *args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            return fn(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            if store_damage(exc):
                raise store_damage_error(self.path, exc) from None
            raise

    return method


# Every query method: a damaged page becomes the one-line StoreError wherever a command happens to reach it.
for _name, _fn in list(vars(Store).items()):
    if callable(_fn) and not _name.startswith("_") and _name not in ("open", "transaction", "close"):
        setattr(Store, _name, _guarded(_fn))
del _name, _fn


# --------------------------------------------------------------------------------------------- helpers


# Stores open in this process, by path. POSIX drops every fcntl lock a process holds on a file when it closes
# ANY descriptor of that file, so reading the header of a database another connection here already has open
# would silently release that connection's SQLite locks (seen in the engine, which opens several Stores in
# threads: another process then took the database as unused and removed its WAL under us — "disk I/O error").
# A file SQLite already has open here was checked when it was first opened.
_OPEN_HERE: dict[str, int] = {}
_OPEN_LOCK = threading.Lock()


def _open_here(path: Path) -> bool:
    with _OPEN_LOCK:
        return _OPEN_HERE.get(str(path), 0) > 0


def _open_error(path: Path, exc: sqlite3.DatabaseError) -> StoreError:
    """Why the store would not open, in one line. Only a damaged file gets the advice to move it away (and
    rebuild from the agents' logs, which loses conversations whose logs are gone): a full disk — no room even
    for SQLite's -shm/-wal files —, a lock or an I/O error leave the archive intact."""
    if out_of_space(exc):
        return StoreError(f"cannot open {path}: no space left on the disk (or a file-size limit) for SQLite's "
                          "working files; free some space and rerun — the archive itself is intact")
    if not store_damage(exc):
        return StoreError(f"cannot open {path} ({' '.join(str(exc).split())}); check the disk and the "
                          f"permissions of {path.parent} and rerun — the archive was not changed")
    return StoreError(f"{path} is unreadable ({exc}); {_RECOVERY.format(p=path)}")


def _check_header(path: Path) -> None:
    """A non-SQLite file at the store path is refused before sqlite3 touches (or rewrites) it."""
    try:
        if path.exists() and path.stat().st_size > 0:
            with open(path, "rb") as fh:
                head = fh.read(16)
            if head != SQLITE_MAGIC:
                raise StoreError(f"{path} is not a wwt store (not an SQLite file); {_RECOVERY.format(p=path)}")
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror}") from None


def _message_row(r: sqlite3.Row) -> MessageRow:
    return MessageRow(
        session_id=r["session_id"], seq=r["seq"], native_id=r["native_id"], role=r["role"], kind=r["kind"],
        text=r["text"], timestamp=r["timestamp"], tool_name=r["tool_name"], flags=_flags_set(r["flags"]),
    )


def _file_row(r: sqlite3.Row) -> FileRow:
    return FileRow(
        id=r["id"], path=r["path"], platform=r["platform"], size=r["size"], mtime_ns=r["mtime_ns"],
        consumed_offset=r["consumed_offset"], content_hash=r["content_hash"], missing=bool(r["missing"]),
    )


def _interleave(own: list[MessageRow], blocks: list[list[MessageRow]]) -> list[MessageRow]:
    """Insert each subagent block after the last own message not later than the block's first timestamp."""
    out = list(own)
    for block in blocks:
        first_ts = next((m.timestamp for m in block if m.timestamp), None)
        at = len(out)
        if first_ts is not None:
            for i in range(len(out) - 1, -1, -1):
                ts = out[i].timestamp
                if ts is not None and time_key(ts) <= time_key(first_ts):
                    at = i + 1
                    break
            else:
                at = 0 if any(m.timestamp for m in out) else len(out)
        out[at:at] = block
    return out


def time_key_sql(column: str) -> str:
    """SQL for ``models.time_key`` of a stored timestamp column: a whole second's time gains ``.000`` so that the
    text compares in time order (``…:00.640Z`` sorts before ``…:00Z`` as plain text)."""
    return f"(CASE WHEN length({column}) = 20 THEN substr({column}, 1, 19) || '.000Z' ELSE {column} END)"


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
