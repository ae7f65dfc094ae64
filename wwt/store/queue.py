"""The durable capture queue: hooks enqueue transcripts, the worker and the engine claim and finish them."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

from wwt.store.rows import (
    QueueItem,
)

QUEUE_CLAIM_TIMEOUT_S = 600  # a claim older than this is considered abandoned (worker killed)
QUEUE_MAX_ATTEMPTS = 3  # failed attempts before a queue row is parked (kept, shown, retried on request)
QUEUE_ERROR_CHARS = 500


class CaptureQueue:
    conn: sqlite3.Connection
    path: Path

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
