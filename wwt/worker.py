"""Background ingest worker started by ``wwt hook``: one at a time, debounced, retrying, self-terminating.

A turn-end hook fires on every turn, so the worker waits for a quiet moment (no hook call for
``WWT_WORKER_DEBOUNCE_S``, default 2 s — but never longer than ``WWT_WORKER_MAX_WAIT_S``, default 10 s, since
many busy sessions are never quiet) before ingesting, ingests the queued files through ``Memory`` (which
takes the single-writer lock), and exits after ``WWT_WORKER_IDLE_S`` (default 20 s) without work. The model
loads once per worker life. Failures stay in the queue and are retried (the store gives up after a few
attempts and keeps the error for ``wwt doctor``)."""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from wwt import paths
from wwt.hook import TOUCH_FILE, WORKER_LOCK

LOG_MAX_BYTES = 1_000_000
LOG_BACKUPS = 3
CLAIM_BATCH = 50


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


def setup_logging() -> logging.Logger:
    log = logging.getLogger("wwt.worker")
    if not log.handlers:
        path = paths.log_path()
        if not path.exists():
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=LOG_MAX_BYTES, backupCount=LOG_BACKUPS,
                                                       encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s worker[%(process)d] %(levelname)s %(message)s",
                                               "%Y-%m-%d %H:%M:%S"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False
    return log


@contextmanager
def worker_lock(data_dir: Path):
    """Exclusive for the worker's life; yields False when another worker holds it."""
    import fcntl

    fd = os.open(data_dir / WORKER_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def seconds_since_last_hook(data_dir: Path, now: float | None = None) -> float:
    try:
        mtime = (data_dir / TOUCH_FILE).stat().st_mtime
    except FileNotFoundError:
        return float("inf")
    return (time.time() if now is None else now) - mtime


def drain_once(memory, store, log: logging.Logger) -> int:
    """Claim a batch, ingest it, settle the queue rows; returns how many rows were handled."""
    items = store.claim_queue(CLAIM_BATCH)
    if not items:
        return 0
    by_path: dict[str, list[int]] = {}
    for item in items:
        by_path.setdefault(item.path, []).append(item.id)
    present = [p for p in by_path if Path(p).exists()]
    for p in by_path:
        if p not in present:
            store.finish_queue(by_path[p], error="transcript file not found")
            log.warning("queued file not found (will retry, then give up): %s", p)
    if not present:
        return len(items)
    ids = [i for p in present for i in by_path[p]]
    started = time.monotonic()
    try:
        summary = memory.ingest([Path(p) for p in present])
    except Exception as exc:  # noqa: BLE001 - keep the rows queued for a retry, log the reason
        store.finish_queue(ids, error=f"{type(exc).__name__}: {exc}")
        log.error("ingest of %d file(s) failed, will retry: %s: %s", len(present), type(exc).__name__, exc)
        time.sleep(min(2.0 * max(item.attempts for item in items), 10.0))
        return len(items)
    store.finish_queue(ids)
    log.info("ingested %d file(s) in %.1fs: %s", len(present), time.monotonic() - started, _describe(summary))
    return len(items)


def _describe(summary: object) -> str:
    fields = ("sessions", "messages_added", "chunks_added", "chunks_embedded", "bad_lines")
    parts = [f"{f}={getattr(summary, f)}" for f in fields if hasattr(summary, f)]
    return ", ".join(parts) or str(summary)[:200]


def run(debounce_s: float | None = None, idle_exit_s: float | None = None, max_wait_s: float | None = None) -> int:
    """The worker loop. Returns 0 (also when another worker already runs: it will do the work)."""
    debounce_s = _env_float("WWT_WORKER_DEBOUNCE_S", 2.0) if debounce_s is None else debounce_s
    max_wait_s = _env_float("WWT_WORKER_MAX_WAIT_S", 10.0) if max_wait_s is None else max_wait_s
    idle_exit_s = _env_float("WWT_WORKER_IDLE_S", 20.0) if idle_exit_s is None else idle_exit_s
    data_dir = paths.data_dir()
    log = setup_logging()
    from wwt.service import Memory
    from wwt.store import Store

    while True:
        with worker_lock(data_dir) as mine:
            if not mine:
                return 0
            log.info("worker started")
            memory = Memory(data_dir)
            store = Store.open(paths.store_path())
            if released := store.release_claims():  # we are the only worker: those claims' owner died
                log.warning("re-queued %d item(s) a killed worker had claimed", released)
            try:
                last_work = time.monotonic()
                waiting_since: float | None = None
                while True:
                    quiet = seconds_since_last_hook(data_dir)
                    waited = 0.0 if waiting_since is None else time.monotonic() - waiting_since
                    # (a future mtime — clock change — must not stall us; nor may a steady stream of hooks from
                    # many sessions, which is never quiet: after max_wait_s we ingest anyway)
                    if 0 <= quiet < debounce_s and waited < max_wait_s:
                        waiting_since = waiting_since if waiting_since is not None else time.monotonic()
                        time.sleep(min(debounce_s - quiet, debounce_s) + 0.05)
                        continue
                    waiting_since = None
                    if drain_once(memory, store, log):
                        last_work = time.monotonic()
                        continue
                    if time.monotonic() - last_work >= idle_exit_s:
                        break
                    time.sleep(0.5)
            finally:
                memory.close()
                log.info("worker idle, exiting")
        # A hook may have queued a file after our last look and seen our lock: take another turn if so.
        with Store.open(paths.store_path()) as check:
            if check.queue_size() == 0:
                store.close()
                return 0
        store.close()


def main(argv: list[str] | None = None) -> int:
    try:
        return run()
    except Exception as exc:  # noqa: BLE001 - detached process: the log is the only place to tell
        setup_logging().exception("worker crashed: %s", exc)
        return 1


if __name__ == "__main__":
    sys.exit(main())
