"""User-facing errors: each carries one clear line that the CLI/MCP print instead of a traceback."""


class WwtError(Exception):
    """An error the user can act on. `str(err)` is the one line to show; `exit_code` is for the CLI."""

    exit_code: int = 1


class ModelUnavailable(WwtError):
    """The embedding model is missing, corrupt, or could not be downloaded."""


class StoreError(WwtError):
    """The SQLite store is unreadable, corrupt, or from a newer wwt."""


class UsageError(WwtError):
    """Bad user input (unknown project, bad date, …)."""

    exit_code = 2


def out_of_space(exc: BaseException) -> bool:
    """A write failed because the disk (or a file-size limit) is full: SQLite says FULL or IOERR_WRITE,
    the OS says ENOSPC/EFBIG/EDQUOT, and tantivy/hnswlib only say it in their message."""
    import errno

    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        return True
    if getattr(exc, "sqlite_errorname", "") in ("SQLITE_FULL", "SQLITE_IOERR_WRITE", "SQLITE_IOERR_FSYNC",
                                                 "SQLITE_IOERR_TRUNCATE", "SQLITE_IOERR_SHMSIZE"):
        return True
    text = str(exc).lower()
    return any(s in text for s in ("no space left", "file too large", "disk is full", "disk quota"))


def file_problem(exc: BaseException) -> str | None:
    """"cannot use <path>: <reason>" for an OS error about a named file or folder — a folder where wwt keeps a
    file, a file where it keeps a folder, permissions, a name too long: something the user can see and fix,
    not an "unexpected error". None for anything else (a full disk has its own line: ``out_of_space``)."""
    import os

    if not isinstance(exc, OSError) or out_of_space(exc):
        return None
    name = exc.filename2 if exc.filename2 is not None else exc.filename  # a rename: its target
    if name is None or isinstance(name, int):
        return None
    return f"cannot use {os.fsdecode(name)}: {exc.strerror or exc}; fix or move it away and rerun"
