"""Where wwt keeps its data. ``WWT_HOME`` overrides ``~/.wwt``; the folder is private to the user (0700)."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the thin client's start-up)
if TYPE_CHECKING:
    from pathlib import Path


def data_dir_name() -> str:
    """The data dir's absolute path as text, without pathlib: the engine's thin client (``wwt search`` with an
    engine running) needs only this, and pathlib's imports are a noticeable part of its start-up. A relative
    ``WWT_HOME`` is taken from the current folder (``pin_home`` fixes it for child processes)."""
    raw = os.environ.get("WWT_HOME")
    if not raw:
        return os.path.join(os.path.expanduser("~"), ".wwt")
    try:
        return os.path.abspath(os.path.expanduser(raw))
    except OSError:  # relative, in a folder that was deleted: nothing to resolve it against
        return os.path.expanduser(raw)


def pin_home() -> None:
    """Resolve a relative (or ``~``) ``WWT_HOME``, ``WWT_RUNTIME_DIR`` and model override once, at start-up,
    against the folder wwt was started in, and put the absolute paths back in the environment: the worker and the engine are
    started from ``/`` and would otherwise read another folder's data or bind their socket where no client
    looks, and one relative name run from two folders must not share an engine."""
    for name in ("WWT_HOME", "WWT_RUNTIME_DIR", "WWT_MODEL_DIR", "WWT_MODEL_MANIFEST"):
        raw = os.environ.get(name)
        if not raw:
            continue
        try:
            pinned = os.path.abspath(os.path.expanduser(raw))
        except OSError:  # relative, in a folder that was deleted: left as it is
            continue
        if pinned != raw:
            os.environ[name] = pinned


def data_dir(create: bool = True) -> Path:
    """The data dir (``$WWT_HOME`` or ``~/.wwt``), created 0700 on first use."""
    from pathlib import Path

    path = Path(data_dir_name())
    if create and not path.exists():
        path.mkdir(parents=True, exist_ok=True)
        os.chmod(path, 0o700)
    problem = foreign_data_dir(str(path))
    if problem:
        from wwt.errors import WwtError

        raise WwtError(problem)
    return path


def foreign_data_dir(path: str) -> str | None:
    """Why the data dir at ``path`` must not be used, or None. A folder another user owns, or one anyone may
    write to, lets that user read the archive or swap its files (plant sessions, a database that is not ours):
    refused with one line instead of used silently."""
    import stat

    try:
        info = os.stat(path)
    except OSError:
        return None  # missing or unreadable: whoever opens it says so
    if not stat.S_ISDIR(info.st_mode):
        return None
    if info.st_uid != os.getuid():
        return (f"data dir {path} belongs to another user (uid {info.st_uid}): not used — set WWT_HOME to a "
                "folder of your own")
    if info.st_mode & 0o002:
        return (f"data dir {path} can be written by any user (mode {stat.S_IMODE(info.st_mode):o}): not used — "
                f"`chmod 700 {path}` if it is yours")
    return None


def store_path() -> Path:
    return data_dir() / "wwt.sqlite3"


def index_dir() -> Path:
    return data_dir() / "index"


def models_dir() -> Path:
    return data_dir() / "models"


def log_path() -> Path:
    return data_dir() / "ingest.log"
