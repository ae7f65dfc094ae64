"""Writes of the archive: files, sessions, messages, chunks; sessions left dirty; forgetting."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from wwt.models import Message, Session
from wwt.store.rows import (
    FileRow,
    StoredChunk,
    _file_row,
    _flags_text,
    _now_iso,
    merge_order,
    requests_text,
    time_key_sql,
)

# What a full parse compares with what is stored (a message whose text, time, role, kind, tool or flags the log now
# gives differently is rewritten in place).
_MESSAGE_ROWS = ("SELECT id, native_id, seq, text, role, kind, timestamp, tool_name, flags FROM messages"
                 " WHERE session_id=? ORDER BY seq")


def stored_differently(row: sqlite3.Row, message: Message) -> bool:
    """Whether ``message``, parsed whole again, says something its stored ``row`` does not."""
    return (row["text"], row["role"], row["kind"], row["timestamp"], row["tool_name"], row["flags"] or "") != (
        message.text, message.role, message.kind, message.timestamp, message.tool_name, _flags_text(message.flags))


def follows_in_time(rows: Sequence[sqlite3.Row], messages: Sequence[Message], by_nid: dict) -> bool:
    """Whether a whole parse that shares no message with what is stored is a later part of the conversation (every
    new message dated no earlier than every stored one): another file continuing the session, e.g. Gemini CLI's
    next ``session-*.json`` of a resumed chat. Such a part goes after the stored messages, not before them."""
    if not rows or any(m.native_id in by_nid for m in messages):
        return False
    stored = [r["timestamp"] for r in rows]
    parsed = [m.timestamp for m in messages]
    if not all(stored) or not all(parsed) or not parsed:
        return False
    return min(parsed) >= max(stored)


class ArchiveWrites:
    conn: sqlite3.Connection
    path: Path

    # ---- files (ingest) ----------------------------------------------------------------------------

    def get_file(self, path: str) -> FileRow | None:
        r = self.conn.execute("SELECT * FROM files WHERE path=?", (path,)).fetchone()
        return _file_row(r) if r else None

    def all_files(self) -> list[FileRow]:
        return [_file_row(r) for r in self.conn.execute("SELECT * FROM files ORDER BY path")]

    def read_again(self, platforms: Sequence[str], revisions_key: str, revisions: str) -> int:
        """Forget how far these platforms' present files were read, so the next ingest that meets each parses it
        whole and diffs it by message id (as for a rewritten file; their messages stay until then), and record
        ``revisions`` (the parsers' now) under ``revisions_key`` — one transaction. Returns how many files."""
        marks = ",".join("?" * len(platforms))
        with self.transaction():
            files = self.conn.execute(
                "UPDATE files SET mtime_ns=-1, consumed_offset=0, content_hash=NULL"
                f" WHERE missing=0 AND platform IN ({marks})", list(platforms),
            ).rowcount if platforms else 0
            self._set_meta(revisions_key, revisions)
        return files

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
            _MESSAGE_ROWS, (session_id,)
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
                    _MESSAGE_ROWS, (session_id,)
                ).fetchall()
                by_nid = {r["native_id"]: r for r in rows}
        continues = full and follows_in_time(rows, messages, by_nid)
        order = merge_order([r["native_id"] for r in rows], parsed_ids, incremental=not full or continues)
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
                if full and stored_differently(existing, m):
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
                # Same key ⇒ same content; positions may shift when messages are inserted mid-session, and the
                # vector's recipe may have changed (a new embed_hash: the vector it had stays until the new lands).
                self.conn.execute(
                    "UPDATE chunks SET first_seq=?, last_seq=?, root_session_id=?, requests=?,"
                    " stale_hash=CASE WHEN EXISTS (SELECT 1 FROM embeddings e WHERE e.text_hash=?) THEN NULL"
                    " WHEN embed_hash=? THEN stale_hash"
                    " WHEN EXISTS (SELECT 1 FROM embeddings e WHERE e.text_hash=chunks.embed_hash) THEN embed_hash"
                    " ELSE stale_hash END, embed_hash=? WHERE id=?",
                    (c.first_seq, c.last_seq, c.root_session_id, requests_text(c.requests), c.embed_hash,
                     c.embed_hash, c.embed_hash, current[key]),
                )
                continue
            cur = self.conn.execute(
                "INSERT INTO chunks(chunk_key, session_id, root_session_id, first_seq, last_seq, start_ts, end_ts,"
                " embed_text, lexical_text, display_text, embed_hash, requests) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (c.chunk_key, c.session_id, c.root_session_id, c.first_seq, c.last_seq, c.start_ts, c.end_ts,
                 c.embed_text, c.lexical_text, c.display_text, c.embed_hash, requests_text(c.requests)),
            )
            added.append(cur.lastrowid)
        return added, removed

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
