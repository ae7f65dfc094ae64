"""Where wwt keeps its data. ``WWT_HOME`` overrides ``~/.wwt``; the folder is private to the user (0700)."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir(create: bool = True) -> Path:
    """The data dir (``$WWT_HOME`` or ``~/.wwt``), created 0700 on first use."""
    raw = os.environ.get("WWT_HOME")
    path = Path(raw).expanduser() if raw else Path.home() / ".wwt"
    if create and not path.exists():
        path.mkdir(parents=True, exist_ok=True)
        os.chmod(path, 0o700)
    return path


def store_path() -> Path:
    return data_dir() / "wwt.sqlite3"


def index_dir() -> Path:
    return data_dir() / "index"


def models_dir() -> Path:
    return data_dir() / "models"


def log_path() -> Path:
    return data_dir() / "ingest.log"
