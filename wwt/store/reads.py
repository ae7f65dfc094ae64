"""Reads for search and presentation: chunk hits, scopes, sessions and their messages, counts."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import astuple
from pathlib import Path
from typing import Protocol

from wwt.errors import UsageError
from wwt.models import FLAG_SUBAGENT, Filters, time_key
from wwt.store.rows import (
    ChunkHit,
    MessageRow,
    SessionRow,
    _interleave,
    _like_prefix,
    _message_row,
    time_key_sql,
)

ALLOWED_CACHE_SIZE = 32  # filter scopes remembered per Store (cleared on every committed ingest anyway)


class SearchStore(Protocol):
    """What the search legs and the fusion need from storage (``wwt.search.run_search``): a second backend
    (the team store) implements these two and reuses the ranking unchanged. ``chunk_ids_matching`` is the
    scope a question's filters allow (None: everything), ``chunks_by_ids`` the hits' rows in the given order."""

    def chunk_ids_matching(self, filters: Filters) -> frozenset[int] | None: ...

    def chunks_by_ids(self, ids: Sequence[int]) -> list[ChunkHit]: ...


def archive_projects(conn: sqlite3.Connection) -> list[str]:
    """The projects the archive holds sessions of, by name (a session without one belongs to none; the team push
    reads the archive on a read-only connection of its own and asks the same)."""
    return [r[0] for r in conn.execute(
        "SELECT DISTINCT project FROM sessions WHERE project IS NOT NULL AND project != '' ORDER BY project")]


class Reads:
    conn: sqlite3.Connection
    path: Path

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

    def chunk_lexical_texts(self, session_ids: Sequence[str]) -> list[str]:
        """The lexical texts of the chunks of these sessions or grouped under them (``wwt forget``: their cached
        tokens go with them)."""
        found: dict[int, str] = {}
        for column in ("session_id", "root_session_id"):
            found.update((r[0], r[1]) for r in self._select_in(
                f"SELECT id, lexical_text FROM chunks WHERE {column}", list(session_ids)))
        return list(found.values())

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
            "chunks_refreshing": self.refreshing_vectors(),
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
        return archive_projects(self.conn)
