"""The data dir's single-writer lock: one process writes the archive and the indexes at a time (an ingest, or an
index repair on open). Its own module, below both the ingest and the indexes that take it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

LOCK_FILE = "ingest.lock"


def writer_lock(data_dir: Path, timeout: float = -1) -> Any:
    """The single-writer lock in ``data_dir`` (``timeout`` seconds, -1 = wait); a ``filelock.FileLock``."""
    from filelock import FileLock

    return FileLock(str(Path(data_dir) / LOCK_FILE), timeout=timeout, mode=0o600)
