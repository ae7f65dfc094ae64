"""SQLite (WAL) source of truth: files, sessions, every kept message, chunks, vectors, the ingest queue.

A package by job — ``schema`` (tables and migrations), ``rows`` (what it hands out, and the pure rules over
them), ``reads`` (search and presentation; ``SearchStore`` names what the search legs need), ``queue`` (the
capture queue), ``archive`` (writes), ``vectors`` (the embedding cache and the indexes' feed), ``damage``
(a damaged file in one line) — and one entry point, ``Store`` (``core``).

Only ``sqlite3`` is imported here so the hook can enqueue without paying for numpy or the model. Vectors are
float32 blobs; callers convert. Chunk vectors live in ``embeddings`` keyed by the hash of the embedded text,
which doubles as the embedding cache (the same text is never embedded twice).

Recovery when the store cannot be read (``StoreError``): move the file away
(``mv ~/.wwt/wwt.sqlite3 ~/.wwt/wwt.sqlite3.bad``) and run ``wwt ingest`` to rebuild from the agents' logs
that still exist; messages archived from logs the agents have since deleted are only in the moved file.
"""

from wwt.store.core import Store
from wwt.store.damage import store_damage, store_damage_error
from wwt.store.queue import QUEUE_CLAIM_TIMEOUT_S, QUEUE_ERROR_CHARS, QUEUE_MAX_ATTEMPTS
from wwt.store.reads import ALLOWED_CACHE_SIZE, SearchStore
from wwt.store.rows import (
    ChunkHit,
    FileRow,
    MessageRow,
    QueueItem,
    SessionRow,
    StoredChunk,
    merge_order,
    time_key_sql,
)
from wwt.store.schema import APP_ID, MIGRATIONS, SCHEMA_VERSION, SQLITE_MAGIC

__all__ = [
    "ALLOWED_CACHE_SIZE", "APP_ID", "MIGRATIONS", "QUEUE_CLAIM_TIMEOUT_S", "QUEUE_ERROR_CHARS", "QUEUE_MAX_ATTEMPTS",
    "SCHEMA_VERSION", "SQLITE_MAGIC", "ChunkHit", "FileRow", "MessageRow", "QueueItem", "SearchStore", "SessionRow",
    "Store", "StoredChunk", "merge_order", "store_damage", "store_damage_error", "time_key_sql",
]
