"""``Store``: one SQLite (WAL) connection — opening, schema checks and migrations, meta, transactions — with the
reads, the capture queue, the archive writes and the vector rows mixed in from their own modules."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from wwt import paths
from wwt.errors import StoreError
from wwt.store.archive import ArchiveWrites
from wwt.store.damage import (
    _OPEN_HERE,
    _OPEN_LOCK,
    _RECOVERY,
    _check_header,
    _guarded,
    _open_error,
    _open_here,
)
from wwt.store.queue import CaptureQueue
from wwt.store.reads import Reads
from wwt.store.rows import _now_iso
from wwt.store.schema import APP_ID, MIGRATIONS, SCHEMA_VERSION
from wwt.store.vectors import VectorRows


class Store(Reads, CaptureQueue, ArchiveWrites, VectorRows):
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


# Every query method: a damaged page becomes the one-line StoreError wherever a command happens to reach it.
for _klass in Store.__mro__[::-1]:
    for _name, _fn in list(vars(_klass).items()):
        if callable(_fn) and not isinstance(_fn, (type, classmethod, staticmethod)) and not _name.startswith("_") \
                and _name not in ("open", "transaction", "close"):
            setattr(Store, _name, _guarded(_fn))
del _klass, _name, _fn
