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
