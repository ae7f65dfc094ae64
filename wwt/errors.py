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
