"""The store's schema: version 1 and each migration since, applied in order by ``Store.open``."""

from __future__ import annotations

from wwt.own_tools import QUOTED_NOTICE

APP_ID = "whatwasthat"
SCHEMA_VERSION = 7
SQLITE_MAGIC = b"SQLite format 3\x00"

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

# v7: a chunk's vector blends in its user turns (``requests``, JSON; '' = none) — a new recipe, so a new
# ``embed_hash`` — and every session is re-chunked by the next ingest to get it. Until the back-fill embeds the new
# vector, ``stale_hash`` names the vector the chunk had: the index keeps it (and a rebuild reads it) instead of
# leaving the chunk without one (issue 29).
_V7 = """
ALTER TABLE chunks ADD COLUMN requests TEXT NOT NULL DEFAULT '';
ALTER TABLE chunks ADD COLUMN stale_hash TEXT;
CREATE INDEX chunks_stale ON chunks(stale_hash) WHERE stale_hash IS NOT NULL;
INSERT OR IGNORE INTO dirty_sessions(session_id) SELECT DISTINCT session_id FROM chunks;
"""

MIGRATIONS: dict[int, str] = {1: _V1, 2: _V2, 3: _V3, 4: _V4, 5: _V5, 6: _V6, 7: _V7}
