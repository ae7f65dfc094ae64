"""Team memory on PostgreSQL + pgvector (issue #27): several machines push their shared projects' archive to one
server, and ``wwt search --team`` searches it with the same two legs and the same fusion as local search.

Importing ``wwt.team`` needs nothing beyond the base install; ``require_driver()`` is where psycopg is asked for
(the ``[team]`` extra)."""

from __future__ import annotations

from wwt.errors import WwtError

INSTALL_HINT = "wwt team needs the [team] extra: pip install 'whatwasthat[team]' (psycopg + pgvector)"


def require_driver() -> None:
    """Raise one line saying how to install the driver when psycopg is missing."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise WwtError(INSTALL_HINT) from None
