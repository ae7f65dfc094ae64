"""Background ingest worker started by ``wwt hook``: one at a time, debounced, retrying, self-terminating.

A turn-end hook fires on every turn, so the worker waits for a quiet moment (no hook call for
``WWT_WORKER_DEBOUNCE_S``, default 2 s — but never longer than ``WWT_WORKER_MAX_WAIT_S``, default 10 s, since
many busy sessions are never quiet) before ingesting, ingests the queued files through ``Memory`` (which
takes the single-writer lock), and exits after ``WWT_WORKER_IDLE_S`` (default 20 s) without work. The model
loads once per worker life. Failures stay in the queue and are retried (the store gives up after a few
attempts and parks the row with its error for ``wwt status``/``wwt doctor``; ``wwt worker --retry-parked``
queues parked rows again). One row's failure never stops the rest of its batch. When the queue is empty it
back-fills pending vectors (``wwt.ingest.backfill_vectors``, newest first, in slices a new hook item
interrupts), niced, unless paused."""

from __future__ import annotations

import logging
import logging.handlers
import os
import stat
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from wwt import paths
from wwt.engine import ipc
from wwt.hook import TOUCH_FILE, WORKER_LOCK

LOG_MAX_BYTES = 1_000_000
LOG_BACKUPS = 3
CLAIM_BATCH = 50
BACKFILL_SLICE_S = 30.0  # a back-fill slice between looks at the queue
WORKER_NICE = 10
BACKFILL_RETRY_S = 60.0  # after a failed back-fill slice (e.g. the model cannot load): the queue still drains
_BACKFILL_FAILED_UNTIL = [0.0]


def debounce_pause(quiet: float, waited: float, debounce_s: float, max_wait_s: float) -> float:
    """How long to wait for a quiet moment before ingesting (0: ingest now). A hook ran ``quiet`` seconds ago
    (negative: a future mtime, a clock change — never wait on it); we have waited ``waited`` already and
    never wait longer than ``max_wait_s`` in all, whatever ``debounce_s`` says."""
    if not 0 <= quiet < debounce_s or waited >= max_wait_s:
        return 0.0
    return min(debounce_s - quiet, max_wait_s - waited) + 0.05


def setup_logging() -> logging.Logger:
    return file_logger("wwt.worker", paths.log_path(), "worker")


def file_logger(name: str, path: Path, tag: str) -> logging.Logger:
    """The data dir's rotating ``ingest.log`` (0600), shared by the worker and the engine; ``tag`` names the
    writer on every line."""
    log = logging.getLogger(name)
    if not log.handlers:
        handler: logging.Handler
        try:
            if not path.exists():
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
            handler = logging.handlers.RotatingFileHandler(path, maxBytes=LOG_MAX_BYTES, backupCount=LOG_BACKUPS,
                                                           encoding="utf-8")
        except OSError as exc:  # a log we cannot write must not stop capture: stderr instead (`wwt doctor` says)
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter(f"wwt {tag}: %(message)s"))
            log.addHandler(handler)
            log.setLevel(logging.INFO)
            log.propagate = False
            log.warning("cannot write %s (%s): logging here instead", path, exc.strerror or exc)
            return log
        handler.setFormatter(logging.Formatter(f"%(asctime)s {tag}[%(process)d] %(levelname)s %(message)s",
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


NOT_FOUND = "transcript file not found"


def unreadable_reason(path: str) -> str | None:
    """Why a queued path cannot be a transcript to ingest, or None. Only a regular file we can open is; a
    folder (an ingest would walk it), a FIFO or device (reading would block) or any path the OS refuses
    (too long, a NUL byte, not encodable, a symlink loop, no permission) is named here without opening it
    for more than a non-blocking check."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a special file"
            return f"not a transcript file ({kind})"
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
        os.close(fd)
    except FileNotFoundError:
        return NOT_FOUND
    except OSError as exc:
        return f"cannot read the transcript: {exc.strerror or type(exc).__name__}"
    except ValueError as exc:  # NUL byte, or text that is no file name on this system
        reason = "a NUL byte" if "null" in str(exc) else "characters no file name can have"
        return f"not a usable path ({reason})"
    return None


def short(path: str, limit: int = 200) -> str:
    """A queued path for the log: at most ``limit`` characters (a hostile payload can be megabytes)."""
    return path if len(path) <= limit else f"{path[: limit - 40]}…{path[-39:]} ({len(path)} chars)"


# The store, the model or the disk failed: no queued file is to blame, so none is charged an attempt.
def _not_the_rows_fault(exc: BaseException) -> bool:
    from wwt.errors import ModelUnavailable, StoreError, out_of_space
    from wwt.store import store_damage

    return isinstance(exc, (StoreError, ModelUnavailable)) or store_damage(exc) or out_of_space(exc)


def drain_once(memory, store, log: logging.Logger) -> int:
    """Claim a batch, ingest it, settle every queue row; returns how many rows were handled.

    A row's own problem (a path that is no readable file, a file the ingest fails on) marks that row failed
    with the reason and the rest of the batch goes on; after QUEUE_MAX_ATTEMPTS failures the row is parked.
    A failure that is nobody's row (store damaged, model missing, disk full) hands the rows back uncharged
    and is raised: the worker stops and says why in the log."""
    items = store.claim_queue(CLAIM_BATCH)
    if not items:
        return 0
    by_path: dict[str, list[int]] = {}
    for item in items:
        by_path.setdefault(item.path, []).append(item.id)
    ready: list[str] = []
    for p, ids in by_path.items():
        reason = unreadable_reason(p)
        if reason is None:
            ready.append(p)
            continue
        if reason == NOT_FOUND:  # a session that never wrote its transcript (every `claude mcp list` fires
            store.finish_queue(ids)  # SessionEnd for one), or one deleted since: nothing to archive, no failure
            log.info("queued transcript not there (never written, or deleted since): %s", short(p))
            continue
        store.finish_queue(ids, error=reason)
        log.warning("queued path refused (%s; retried, then parked): %s", reason, short(p))
    if not ready:
        return len(items)
    started = time.monotonic()
    try:
        summary = memory.ingest([Path(p) for p in ready], backfill=False)  # vectors: backfill_once
    except Exception as exc:  # noqa: BLE001 - find the file to blame, one at a time
        if _not_the_rows_fault(exc):
            store.release_queue([i for p in ready for i in by_path[p]])
            raise
        log.warning("ingest of %d file(s) failed (%s: %s); retrying them one by one",
                    len(ready), type(exc).__name__, _one_line(exc))
        for n, p in enumerate(ready):
            try:
                _ingest_one(memory, store, log, p, by_path[p])
            except BaseException:
                store.release_queue([i for q in ready[n + 1 :] for i in by_path[q]])
                raise
        time.sleep(min(2.0 * max(item.attempts for item in items), 10.0))  # a moment before the retry
        return len(items)
    failed = getattr(summary, "failed", None) or {}  # files wwt failed on: the others were archived
    for p in ready:
        reason = failed.get(_real_path(p))
        if reason is not None:
            store.finish_queue(by_path[p], error=reason)
            log.error("ingest of %s failed (retried, then parked): %s", short(p), reason)
    store.finish_queue([i for p in ready if _real_path(p) not in failed for i in by_path[p]])
    log.info("ingested %d file(s) in %.1fs: %s", len(ready), time.monotonic() - started, _describe(summary))
    return len(items)


def _real_path(path: str) -> str:
    """A queued path as the ingest keys its file (the real path)."""
    try:
        return str(Path(path).resolve())
    except (OSError, RuntimeError):
        return path


def _ingest_one(memory, store, log: logging.Logger, path: str, ids: list[int]) -> None:
    try:
        summary = memory.ingest([Path(path)], backfill=False)
    except Exception as exc:  # noqa: BLE001 - this file's own failure: the row carries it
        if _not_the_rows_fault(exc):
            store.release_queue(ids)
            raise
        reason = f"{type(exc).__name__}: {_one_line(exc)}"
        store.finish_queue(ids, error=reason)
        log.error("ingest of %s failed (retried, then parked): %s", short(path), reason)
        return
    failed = getattr(summary, "failed", None) or {}
    if _real_path(path) in failed:
        store.finish_queue(ids, error=failed[_real_path(path)])
        log.error("ingest of %s failed (retried, then parked): %s", short(path), failed[_real_path(path)])
        return
    store.finish_queue(ids)
    log.info("ingested %s: %s", short(path), _describe(summary))


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:299] + "…"


def backfill_once(memory, store, log: logging.Logger) -> bool:
    """One slice of the vector back-fill while the queue is empty (a new hook item stops it between batches).
    True when there may be more to do right away."""
    from wwt.errors import ModelUnavailable

    if time.monotonic() < _BACKFILL_FAILED_UNTIL[0]:
        return False
    try:
        result = memory.backfill(max_seconds=BACKFILL_SLICE_S, should_stop=lambda: store.queue_size() > 0)
    except Exception as exc:  # noqa: BLE001 - the vectors stay pending; a later slice retries
        if _not_the_rows_fault(exc) and not isinstance(exc, ModelUnavailable):
            raise  # a damaged store or a full disk stops the worker with its one line
        log.error("vector back-fill failed, retrying in %.0f s: %s: %s", BACKFILL_RETRY_S, type(exc).__name__,
                  _one_line(exc))
        _BACKFILL_FAILED_UNTIL[0] = time.monotonic() + BACKFILL_RETRY_S
        return False
    if result.embedded:
        log.info("back-filled %d vector(s) in %.1fs; %d chunk(s) still pending", result.embedded, result.seconds,
                 result.pending)
    return result.stopped == "time" or (result.embedded > 0 and result.pending > 0)


def lower_priority() -> None:
    """Embedding is background work: the agent the user talks to comes first."""
    try:
        os.nice(WORKER_NICE)
    except (AttributeError, OSError):
        pass


def _describe(summary: object) -> str:
    fields = ("sessions", "messages_added", "chunks_added", "chunks_embedded", "bad_lines")
    parts = [f"{f}={getattr(summary, f)}" for f in fields if hasattr(summary, f)]
    return ", ".join(parts) or str(summary)[:200]


def retry_parked() -> int:
    """Queue the parked rows again (``wwt worker --retry-parked``); returns how many."""
    from wwt.store import Store

    with Store.open(paths.store_path()) as store:
        return store.retry_parked()


def run(debounce_s: float | None = None, idle_exit_s: float | None = None, max_wait_s: float | None = None) -> int:
    """The worker loop. Returns 0 (also when another worker already runs: it will do the work)."""
    debounce_s = ipc.env_seconds("WWT_WORKER_DEBOUNCE_S", 2.0) if debounce_s is None else debounce_s
    max_wait_s = ipc.env_seconds("WWT_WORKER_MAX_WAIT_S", 10.0) if max_wait_s is None else max_wait_s
    idle_exit_s = ipc.env_seconds("WWT_WORKER_IDLE_S", 20.0) if idle_exit_s is None else idle_exit_s
    data_dir = paths.data_dir()
    log = setup_logging()
    lower_priority()
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
                    if pause := debounce_pause(quiet, waited, debounce_s, max_wait_s):
                        waiting_since = waiting_since if waiting_since is not None else time.monotonic()
                        time.sleep(pause)
                        continue
                    waiting_since = None
                    if drain_once(memory, store, log):
                        last_work = time.monotonic()
                        continue
                    if backfill_once(memory, store, log):
                        last_work = time.monotonic()
                        continue
                    from wwt.team.auto import push_if_due  # nothing archived is waiting: share it

                    push_if_due(data_dir, paths.store_path(), log)
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
    """Run the worker; 1 when it had to stop (the reason, one line, in ingest.log and on stderr — which is
    nowhere for a worker a hook started, and the terminal for ``wwt worker``)."""
    from wwt.errors import WwtError
    from wwt.store import store_damage, store_damage_error

    os.environ.pop("WWT_REDACT", None)  # a hook's background work always redacts, whoever started it
    try:
        return run()
    except WwtError as exc:
        message = str(exc)
    except Exception as exc:  # noqa: BLE001 - detached process: the log is the only place to tell
        if not store_damage(exc):
            setup_logging().exception("worker crashed: %s", exc)
            _tell(f"worker crashed: {type(exc).__name__}: {_one_line(exc)} (see {paths.log_path()})")
            return 1
        message = str(store_damage_error(paths.store_path(), exc))
    setup_logging().error("worker stopped: %s", message)
    _tell(message)
    return 1


def _tell(message: str) -> None:
    try:
        sys.stderr.write(f"wwt: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
