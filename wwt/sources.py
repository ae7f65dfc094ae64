"""Log locations the user named, read on every ingest beside the agents' default folders.

Aider has no central folder: each repository keeps its own ``.aider.chat.history.md``. ``wwt setup --source
REPO`` (or its question when run in a terminal) remembers such folders in ``<data dir>/sources.json``; every
``wwt ingest`` without paths and the engine's look at hookless agents then read them too. A missing or damaged
file is an empty list (the archive never depends on it); a remembered folder that has gone is skipped by
discovery like any missing default folder.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from wwt.errors import UsageError

SOURCES_FILE = "sources.json"


def remembered(data_dir: Path) -> list[Path]:
    """The folders and files remembered in ``data_dir`` (in the order they were named)."""
    try:
        data = json.loads((data_dir / SOURCES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return []
    paths = data.get("paths") if isinstance(data, dict) else None
    if not isinstance(paths, list):
        return []
    return [Path(p) for p in paths if isinstance(p, str) and p.startswith("/") and "\x00" not in p]


def remember(data_dir: Path, paths: Iterable[Path | str]) -> list[Path]:
    """Add ``paths`` (each must exist; kept absolute, resolved) to what ``data_dir`` remembers; returns the
    ones that were new. Raises UsageError naming a path that does not exist."""
    from wwt.fileio import atomic_write

    known = remembered(data_dir)
    added: list[Path] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.exists():
            raise UsageError(f"no such file or folder: {str(raw)[:200]}")
        path = path.resolve()
        if path not in known and path not in added:
            added.append(path)
    if added:
        body = json.dumps({"paths": [str(p) for p in [*known, *added]]}, ensure_ascii=False, indent=1)
        atomic_write(data_dir / SOURCES_FILE, body + "\n")
    return added
