"""Vectors and what feeds the indexes: the embedding cache, pending vectors, index rows."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

from wwt.store.rows import requests_of


class VectorRows:
    conn: sqlite3.Connection
    path: Path

    def cached_vectors(self, text_hashes: Iterable[str]) -> dict[str, bytes]:
        hashes = list(dict.fromkeys(text_hashes))
        out: dict[str, bytes] = {}
        for r in self._select_in("SELECT text_hash, vector FROM embeddings WHERE text_hash", hashes):
            out[r[0]] = r[1]
        return out

    def put_vectors(self, items: Iterable[tuple[str, int, bytes]]) -> None:
        """(text_hash, dim, float32 bytes). Its own transaction: embedding work survives a later crash. The
        chunks these vectors belong to let go of the vector they had before their recipe changed."""
        items = list(items)
        with self.transaction():
            self.conn.executemany("INSERT OR IGNORE INTO embeddings(text_hash, dim, vector) VALUES (?, ?, ?)", items)
            self.conn.executemany("UPDATE chunks SET stale_hash=NULL WHERE embed_hash=? AND stale_hash IS NOT NULL",
                                  [(item[0],) for item in items])

    def prune_embeddings(self) -> int:
        """Drop cached vectors no chunk uses (after ``forget``: nothing of a forgotten session stays)."""
        with self.transaction():
            cur = self.conn.execute(
                "DELETE FROM embeddings WHERE text_hash NOT IN (SELECT embed_hash FROM chunks)"
                " AND text_hash NOT IN (SELECT stale_hash FROM chunks WHERE stale_hash IS NOT NULL)"
            )
        return cur.rowcount

    def all_chunk_ids(self) -> set[int]:
        return {r[0] for r in self.conn.execute("SELECT id FROM chunks")}

    def vector_chunk_ids(self) -> set[int]:
        """Chunks with a stored vector — theirs, or the one they had before their recipe changed: what the vector
        index must hold (the rest are pending)."""
        return {
            r[0]
            for r in self.conn.execute(
                "SELECT c.id FROM chunks c WHERE EXISTS (SELECT 1 FROM embeddings e WHERE e.text_hash=c.embed_hash)"
                " OR (c.stale_hash IS NOT NULL AND EXISTS (SELECT 1 FROM embeddings o WHERE o.text_hash=c.stale_hash))"
            )
        }

    def has_pending_vectors(self) -> bool:
        """Is any chunk still waiting for its vector (the back-fill has work)? Stops at the first one."""
        row = self.conn.execute(
            "SELECT 1 FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.text_hash=c.embed_hash)"
            " LIMIT 1"
        ).fetchone()
        return row is not None

    def pending_vectors(self, limit: int) -> list[tuple[str, str, list[str]]]:
        """Up to ``limit`` distinct (embed_hash, embed_text, requests) with no stored vector, newest chunks first
        (the sessions a user most likely searches for)."""
        hashes = [
            r[0]
            for r in self.conn.execute(
                "SELECT c.embed_hash, MAX(COALESCE(c.end_ts, c.start_ts, '')) AS t FROM chunks c"
                " WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.text_hash=c.embed_hash)"
                " GROUP BY c.embed_hash ORDER BY t DESC, c.embed_hash LIMIT ?",
                (limit,),
            )
        ]
        texts: dict[str, tuple[str, list[str]]] = {}
        for r in self._select_in("SELECT embed_hash, embed_text, requests FROM chunks WHERE embed_hash", hashes):
            if r[0] not in texts:
                texts[r[0]] = (r[1], requests_of(r[2]))
        return [(h, *texts[h]) for h in hashes if h in texts]

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

    def refreshing_vectors(self) -> int:
        """Chunks waiting for a new vector (their recipe changed) whose earlier vector serves meanwhile."""
        return self.conn.execute("SELECT COUNT(*) FROM chunks WHERE stale_hash IS NOT NULL").fetchone()[0]

    def chunk_count(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]

    def iter_index_rows(self, ids: Iterable[int] | None = None, batch: int = 500) -> Iterator[list[sqlite3.Row]]:
        """Rows for (re)building indexes: chunk fields + session metadata + vector blob."""
        sql = (
            "SELECT c.id, c.chunk_key, c.root_session_id, c.session_id, c.lexical_text, c.embed_text, c.start_ts,"
            " c.end_ts, COALESCE(r.platform, s.platform) AS platform, COALESCE(r.project, s.project) AS project,"
            " COALESCE(r.project_path, s.project_path) AS project_path, COALESCE(r.cwd, s.cwd) AS cwd,"
            " COALESCE(r.git_branch, s.git_branch) AS git_branch,"
            " COALESCE(r.started_at, s.started_at) AS started_at, COALESCE(e.vector, o.vector) AS vector,"
            " COALESCE(e.dim, o.dim) AS dim"
            " FROM chunks c JOIN sessions s ON s.session_id=c.session_id"
            " LEFT JOIN sessions r ON r.session_id=c.root_session_id"
            " LEFT JOIN embeddings e ON e.text_hash=c.embed_hash"
            " LEFT JOIN embeddings o ON e.text_hash IS NULL AND o.text_hash=c.stale_hash"
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
