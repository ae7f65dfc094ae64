"""Background push: the ingest worker (``wwt/worker.py``), once its queue and the vector back-fill are done, pushes
the shared projects to the team server — at most every ``PUSH_EVERY_S``, and after a failure not again for
``RETRY_AFTER_S`` (an unreachable server costs one connect timeout per retry, never the local ingest). The
result, or the one-line error, lands in ``team.json`` for ``wwt team status``."""

from __future__ import annotations

import logging
import time
from datetime import datetime, timezone
from pathlib import Path

PUSH_EVERY_S = 60.0
RETRY_AFTER_S = 300.0
_next_try: dict[str, float] = {}


def push_if_due(data_dir: Path, store_path: Path, log: logging.Logger | None = None,
                now: float | None = None) -> bool:
    """Push when this data dir is in a team, shares something, has the driver, and is due. True when a push ran
    and succeeded. Never raises."""
    from wwt.team import config

    now = time.monotonic() if now is None else now
    key = str(data_dir)
    if now < _next_try.get(key, 0.0):
        return False
    conf = config.load(data_dir)
    if conf is None or not conf.shares_anything or not store_path.exists():
        return False
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return False
    from wwt.team.push import push

    _next_try[key] = now + PUSH_EVERY_S
    try:
        report = push(conf, store_path)
    except Exception as exc:  # the server, the network, a lost connection: the next try resumes
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        _next_try[key] = now + RETRY_AFTER_S
        conf.last_error = f"background push: {reason}"
        config.save(data_dir, conf)
        if log:
            log.warning("team push failed: %s", reason)
        return False
    conf.last_push = datetime.now(timezone.utc).isoformat(timespec="seconds")
    conf.last_error = None
    config.save(data_dir, conf)
    if log and (report.chunks or report.deleted_chunks or report.deleted_sessions):
        log.info("team push: %d chunk(s) sent, %d deleted in %.1fs", report.chunks, report.deleted_chunks,
                 report.seconds)
    return True
