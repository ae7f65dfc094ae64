"""The current project, as the default search scope: the git root's folder name, else the cwd's folder name.

Parsers name a session's project after the basename of its project root, so the same rule here makes
`wwt search` from inside a repo find that repo's sessions. No git subprocess: walking up for `.git` (a folder,
or a file in worktrees/submodules) is instant and works without git installed.
"""

from __future__ import annotations

import os
from pathlib import Path


def find_project_root(cwd: Path | str | None = None) -> Path:
    """The nearest ancestor of ``cwd`` (itself included) holding ``.git``; ``cwd`` itself when there is none."""
    start = Path(cwd if cwd is not None else os.getcwd()).expanduser().resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def current_project(cwd: Path | str | None = None) -> str | None:
    """The project name for ``cwd``; ``None`` at the filesystem root, which names no project."""
    name = find_project_root(cwd).name
    return name or None
