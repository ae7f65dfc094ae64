"""A damaged or foreign store file: told apart from other SQLite errors, and said in one line."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from wwt.errors import StoreError, out_of_space
from wwt.store.schema import SQLITE_MAGIC

_RECOVERY = "move it away (e.g. `mv {p} {p}.bad`) and run `wwt ingest` to rebuild it from the agents' logs"


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
        def rows(self: Any, *args, **kwargs):  # type: ignore[no-untyped-def]
            try:
                yield from fn(self, *args, **kwargs)
            except sqlite3.DatabaseError as exc:
                if store_damage(exc):
                    raise store_damage_error(self.path, exc) from None
                raise

        return rows

    @functools.wraps(fn)
    def method(self: Any, *args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            return fn(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            if store_damage(exc):
                raise store_damage_error(self.path, exc) from None
            raise

    return method


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
