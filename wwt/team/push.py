"""``wwt team push``: what changed in the shared projects goes to the team server.

The local archive (SQLite, opened read-only: ingest and search are never blocked) is compared with what the server
holds for this machine — chunk keys and whether each has its vector, message keys, session ids. What is missing is
sent in batches (COPY into a temp table, then INSERT … ON CONFLICT DO UPDATE on the stable keys, one transaction per
batch with the machine's pushed count), what the server holds but the archive no longer shares (forgotten,
unshared, re-chunked) is deleted. A kill or a lost connection mid-push loses at most the batch in flight; the next
push starts from what the server committed, so a push is resumable and idempotent without a separate log."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

BATCH = 500
MAX_POSITIONS = 255  # a tsvector lexeme keeps at most 256 positions
MAX_POSITION = 16383
MAX_LEXEME_BYTES = 2046


@dataclass
class PushReport:
    chunks: int = 0
    messages: int = 0
    sessions: int = 0
    deleted_chunks: int = 0
    deleted_sessions: int = 0
    deleted_messages: int = 0
    pending_vectors: int = 0  # chunks sent without a vector yet (sent again once embedded)
    seconds: float = 0.0
    batches: int = 0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def _lexeme(token: str) -> str | None:
    if not token or len(token.encode("utf-8")) > MAX_LEXEME_BYTES:
        return None
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(tokens: Sequence[str]) -> str:
    """wwt's own lexical tokens as a tsvector literal — each token one lexeme, its positions kept (so term
    frequency = number of positions); PostgreSQL's parser never sees the text."""
    positions: dict[str, list[int]] = {}
    for i, token in enumerate(tokens, start=1):
        spots = positions.setdefault(token, [])
        if len(spots) < MAX_POSITIONS:
            spots.append(min(i, MAX_POSITION))
    parts = []
    for token, spots in positions.items():
        lexeme = _lexeme(token)
        if lexeme is not None:
            parts.append(lexeme + ":" + ",".join(str(p) for p in sorted(set(spots))))
    return " ".join(parts)


def tsquery_literal(tokens: Iterable[str]) -> str:
    """Any of ``tokens`` as a tsquery literal."""
    return " | ".join(lex for lex in (_lexeme(t) for t in dict.fromkeys(tokens)) if lex)


def vector_literal(blob: bytes | None) -> str | None:
    if blob is None:
        return None
    vec = np.frombuffer(blob, dtype=np.float32)
    return "[" + ",".join(map(repr, vec.tolist())) + "]"


def _local(store_path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True, timeout=30)
    conn.execute("PRAGMA query_only = 1")
    return conn


def _marks(values: Sequence[str]) -> str:
    return ",".join("?" * len(values))


def local_sessions(conn: sqlite3.Connection, projects: Sequence[str]) -> list[tuple]:
    if not projects:
        return []
    return conn.execute(
        "SELECT s.session_id, s.root_session_id, s.platform, r.project, r.cwd, r.git_branch, s.started_at,"
        " s.ended_at, s.title FROM sessions s JOIN sessions r ON r.session_id = s.root_session_id"
        f" WHERE r.project IN ({_marks(projects)})", list(projects)).fetchall()


def push(config: Any, store_path: Path, progress: Callable[[str], None] | None = None,
         batch: int = BATCH, pg: Any = None) -> PushReport:
    """Push the shared projects of the archive at ``store_path`` for ``config`` (a ``TeamConfig``). ``pg``: an open
    psycopg connection (tests, benchmarks), else one is made from ``config.url``."""
    from wwt.lexical import tokenize_many
    from wwt.team.schema import connect

    started = time.monotonic()
    report = PushReport()
    conn = pg or connect(config.url)
    local = _local(store_path)
    try:
        machine = config.machine_id
        shared = list(config.shared)
        # one push per machine at a time (the worker's background push and `wwt team push`): the second waits
        conn.execute("SELECT pg_advisory_lock(hashtext('wwt_push:' || %s))", (machine,))
        conn.commit()
        sessions = local_sessions(local, shared)
        session_ids = [row[0] for row in sessions]
        # sessions: small rows, upserted whole every push
        with conn.transaction():
            remote_sessions = {r[0] for r in conn.execute(
                "SELECT session_id FROM wwt_sessions WHERE machine_id = %s", (machine,))}
            gone = sorted(remote_sessions - set(session_ids))
            if gone:
                conn.execute("DELETE FROM wwt_chunks WHERE machine_id = %s AND session_id = ANY(%s)", (machine, gone))
                conn.execute("DELETE FROM wwt_messages WHERE machine_id = %s AND session_id = ANY(%s)", (machine, gone))
                conn.execute("DELETE FROM wwt_sessions WHERE machine_id = %s AND session_id = ANY(%s)", (machine, gone))
                report.deleted_sessions = len(gone)
            _upsert(conn, "wwt_sessions",
                    ["session_id", "root_session_id", "platform", "project", "cwd", "git_branch", "started_at",
                     "ended_at", "title"], [(machine, *row) for row in sessions], ["machine_id", "session_id"])
            report.sessions = len(sessions)

        # chunks: what the server lacks, or holds without the vector the archive now has
        remote = {k: has for k, has in conn.execute(
            "SELECT chunk_key, embedding IS NOT NULL FROM wwt_chunks WHERE machine_id = %s", (machine,))}
        conn.commit()
        rows = local.execute(
            "SELECT c.chunk_key, c.root_session_id, c.session_id, r.project, r.platform, r.git_branch, r.cwd,"
            " c.first_seq, c.last_seq, c.start_ts, c.end_ts, c.display_text, c.lexical_text,"
            " e.text_hash IS NOT NULL FROM chunks c JOIN sessions r ON r.session_id = c.root_session_id"
            " LEFT JOIN embeddings e ON e.text_hash = c.embed_hash"
            f" WHERE r.project IN ({_marks(shared)}) ORDER BY c.id", shared).fetchall() if shared else []
        local_keys = {row[0] for row in rows}
        stale = sorted(set(remote) - local_keys)
        if stale:
            with conn.transaction():
                conn.execute("DELETE FROM wwt_chunks WHERE machine_id = %s AND chunk_key = ANY(%s)", (machine, stale))
            report.deleted_chunks = len(stale)
        todo = [row for row in rows if row[0] not in remote or (row[13] and not remote[row[0]])]
        report.pending_vectors = sum(1 for row in rows if not row[13])
        columns = ["chunk_key", "session_id", "source_session_id", "project", "platform", "git_branch", "cwd",
                   "first_seq", "last_seq", "start_ts", "end_ts", "text", "embedding", "lex", "lex_len"]
        for start in range(0, len(todo), batch):
            part = todo[start:start + batch]
            keys = [row[0] for row in part]
            vectors = dict(local.execute(
                "SELECT c.chunk_key, e.vector FROM chunks c JOIN embeddings e ON e.text_hash = c.embed_hash"
                f" WHERE c.chunk_key IN ({_marks(keys)})", keys).fetchall())
            token_lists = tokenize_many([row[12] or "" for row in part])
            values = [
                (machine, *row[:12], vector_literal(vectors.get(row[0])), tsvector_literal(tokens), len(tokens))
                for row, tokens in zip(part, token_lists, strict=True)
            ]
            with conn.transaction():
                _upsert(conn, "wwt_chunks", columns, values, ["machine_id", "chunk_key"],
                        casts={"embedding": "vector", "lex": "tsvector", "first_seq": "integer",
                               "last_seq": "integer", "lex_len": "integer"})
                conn.execute("UPDATE wwt_machines SET pushed_chunks = pushed_chunks + %s, last_push = now()"
                             " WHERE machine_id = %s", (len(part), machine))
            report.chunks += len(part)
            report.batches += 1
            if progress:
                progress(f"{report.chunks}/{len(todo)} chunks")

        # messages: by key; text never changes under a key (a rewritten message gets a new native id)
        remote_messages = {(s, n) for s, n in conn.execute(
            "SELECT session_id, native_id FROM wwt_messages WHERE machine_id = %s", (machine,))}
        conn.commit()
        local_messages = local.execute(
            "SELECT session_id, native_id, seq, role, kind, text, timestamp, tool_name FROM messages"
            f" WHERE session_id IN ({_marks(session_ids)})", session_ids).fetchall() if session_ids else []
        local_message_keys = {(m[0], m[1]) for m in local_messages}
        extra = remote_messages - local_message_keys
        if extra:
            with conn.transaction():
                conn.execute(
                    "DELETE FROM wwt_messages m USING unnest(%s::text[], %s::text[]) AS x(s, n)"
                    " WHERE m.machine_id = %s AND m.session_id = x.s AND m.native_id = x.n",
                    ([s for s, _ in extra], [n for _, n in extra], machine))
            report.deleted_messages = len(extra)
        missing = [m for m in local_messages if (m[0], m[1]) not in remote_messages]
        for start in range(0, len(missing), batch * 4):
            part = missing[start:start + batch * 4]
            with conn.transaction():
                _upsert(conn, "wwt_messages",
                        ["session_id", "native_id", "seq", "role", "kind", "text", "timestamp", "tool_name"],
                        [(machine, *m) for m in part], ["machine_id", "session_id", "native_id"],
                        casts={"seq": "integer"})
            report.messages += len(part)
        with conn.transaction():
            conn.execute("UPDATE wwt_machines SET last_push = now() WHERE machine_id = %s", (machine,))
    finally:
        local.close()
        if pg is None:
            conn.close()  # the advisory lock goes with the session
        else:
            _unlock(conn, config.machine_id)
    report.seconds = time.monotonic() - started
    return report


def _unlock(conn: Any, machine: str) -> None:
    try:
        conn.rollback()
        conn.execute("SELECT pg_advisory_unlock(hashtext('wwt_push:' || %s))", (machine,))
        conn.commit()
    except Exception:  # the connection is gone: so is its lock
        pass


def _upsert(conn: Any, table: str, columns: list[str], rows: list[tuple], key: list[str],
            casts: dict[str, str] | None = None) -> None:
    """COPY ``rows`` (machine_id first, then ``columns``) into a temp table, then INSERT … ON CONFLICT (key) DO
    UPDATE into ``table``. Must run inside a transaction."""
    if not rows:
        return
    casts = casts or {}
    cols = ["machine_id", *columns]
    conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS tmp_{table} ({', '.join(c + ' text' for c in cols)})"
                 " ON COMMIT DELETE ROWS")
    with conn.cursor().copy(f"COPY tmp_{table} ({', '.join(cols)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row([None if v is None else str(v).replace("\x00", "\ufffd") for v in row])
    select = ", ".join(f"{c}::{casts[c]}" if c in casts else c for c in cols)
    updates = ", ".join(f"{c} = excluded.{c}" for c in cols if c not in key)
    conn.execute(f"INSERT INTO {table} ({', '.join(cols)}) SELECT {select} FROM tmp_{table}"
                 f" ON CONFLICT ({', '.join(key)}) DO UPDATE SET {updates}")
    conn.execute(f"TRUNCATE tmp_{table}")


def unshare_remote(conn: Any, machine_id: str, project: str) -> int:
    """Delete this machine's rows of ``project`` from the server; the number of sessions removed."""
    with conn.transaction():
        ids = [r[0] for r in conn.execute(
            "SELECT session_id FROM wwt_sessions WHERE machine_id = %s AND project = %s", (machine_id, project))]
        conn.execute("DELETE FROM wwt_chunks WHERE machine_id = %s AND project = %s", (machine_id, project))
        if ids:
            conn.execute("DELETE FROM wwt_messages WHERE machine_id = %s AND session_id = ANY(%s)", (machine_id, ids))
            conn.execute("DELETE FROM wwt_sessions WHERE machine_id = %s AND session_id = ANY(%s)", (machine_id, ids))
    return len(ids)


def forget_remote(conn: Any, machine_id: str, session_ids: Sequence[str]) -> int:
    """Delete these sessions (ids of roots and subagents) of this machine from the server; sessions removed."""
    ids = list(session_ids)
    with conn.transaction():
        conn.execute("DELETE FROM wwt_chunks WHERE machine_id = %s AND session_id = ANY(%s)", (machine_id, ids))
        conn.execute("DELETE FROM wwt_messages WHERE machine_id = %s AND session_id = ANY(%s)", (machine_id, ids))
        removed = conn.execute("DELETE FROM wwt_sessions WHERE machine_id = %s AND session_id = ANY(%s)",
                               (machine_id, ids)).rowcount
    return removed


def counts(conn: Any, machine_id: str) -> dict[str, int]:
    out = {}
    for table in ("wwt_sessions", "wwt_messages", "wwt_chunks"):
        out[table.removeprefix("wwt_")] = conn.execute(
            f"SELECT count(*) FROM {table} WHERE machine_id = %s", (machine_id,)).fetchone()[0]
    conn.commit()
    return out
