"""``wwt hook <platform>``: what an agent runs at the end of a turn/session. Must return fast and never fail.

It reads the agent's JSON from stdin (Codex's legacy ``notify`` passes it as the last argv instead), records
the transcript in the store's durable queue, starts ONE detached worker if none runs, and exits 0 — printing
nothing, since Gemini parses hook stdout as JSON and Claude/Codex need no reply. Only stdlib + ``wwt.store``
(sqlite3) are imported here: no model, no Kiwi, no tantivy (a test pins this)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

PLATFORM_ALIASES = {
    "claude": "claude-code", "claude-code": "claude-code",
    "gemini": "gemini-cli", "gemini-cli": "gemini-cli",
    "codex": "codex-cli", "codex-cli": "codex-cli",
}
MAX_STDIN_BYTES = 4 * 1024 * 1024  # a Stop payload may carry the last assistant message; cap it anyway
TOUCH_FILE = "queue.touch"  # mtime = the last hook call; the worker debounces on it
WORKER_LOCK = "worker.lock"
SPAWN_FILE = "worker.spawn"  # "<pid> <time>" of the last worker a hook started (it takes its lock a bit later)
SPAWN_GRACE_S = 10.0


class HookInputError(ValueError):
    """The agent's payload gives no transcript we can queue."""


def normalise_platform(name: str) -> str:
    try:
        return PLATFORM_ALIASES[name.strip().lower()]
    except KeyError:
        raise HookInputError(f"unknown platform {name!r} (use claude-code, gemini-cli or codex-cli)") from None


def parse_payload(raw: str) -> dict[str, Any]:
    if not raw.strip():
        raise HookInputError("empty hook input")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise HookInputError(f"hook input is not JSON ({exc.msg} at {exc.pos})") from None
    if not isinstance(data, dict):
        raise HookInputError("hook input is not a JSON object")
    return data


def _codex_home() -> Path:
    raw = os.environ.get("CODEX_HOME")
    return Path(raw).expanduser() if raw else Path(os.environ.get("HOME") or Path.home()) / ".codex"


def find_codex_rollout(thread_id: str) -> str | None:
    """Codex may send ``transcript_path: null`` (and legacy notify never sends one): find the rollout by id,
    newest day folders first, then the archive."""
    if not thread_id or "/" in thread_id or "*" in thread_id:
        return None
    root = _codex_home()
    names = (f"-{thread_id}.jsonl", f"-{thread_id}.jsonl.zst")
    sessions = root / "sessions"
    try:
        for year in sorted(os.listdir(sessions), reverse=True):
            for month in sorted(os.listdir(sessions / year), reverse=True):
                for day in sorted(os.listdir(sessions / year / month), reverse=True):
                    folder = sessions / year / month / day
                    for name in os.listdir(folder):
                        if name.startswith("rollout-") and name.endswith(names):
                            return str(folder / name)
    except (FileNotFoundError, NotADirectoryError):
        pass
    try:
        for name in os.listdir(root / "archived_sessions"):
            if name.startswith("rollout-") and name.endswith(names):
                return str(root / "archived_sessions" / name)
    except FileNotFoundError:
        pass
    return None


def transcript_of(platform: str, payload: dict[str, Any]) -> tuple[str, str | None]:
    """(absolute transcript path, session id) from an agent's payload (agent-log-formats §1.5, §2.4, §3.5)."""
    session_id = payload.get("session_id") or payload.get("thread-id") or os.environ.get("GEMINI_SESSION_ID")
    session_id = str(session_id) if session_id else None
    path = payload.get("transcript_path")
    if isinstance(path, str) and path.strip():
        path = os.path.expanduser(path.strip())
        if not os.path.isabs(path) and isinstance(payload.get("cwd"), str):
            path = os.path.join(payload["cwd"], path)
        return os.path.abspath(path), session_id
    if platform == "codex-cli" and session_id:
        found = find_codex_rollout(session_id)
        if found:
            return found, session_id
    if platform == "gemini-cli" and path == "":
        raise HookInputError("Gemini sent no transcript_path (chat recording is off?)")
    raise HookInputError(f"hook input has no transcript_path (event {payload.get('hook_event_name')!r})")


def log_line(message: str) -> None:
    """Append one line to ingest.log without importing logging (the worker rotates the file)."""
    try:
        from wwt import paths

        path = paths.log_path()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} hook[{os.getpid()}] {message}\n")
    except OSError:
        pass


def worker_running(data_dir: Path) -> bool:
    """The worker holds an exclusive flock on worker.lock for its whole life."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: let the worker's own lock sort it out
        return False
    try:
        fd = os.open(data_dir / WORKER_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    return worker_starting(data_dir)


def worker_starting(data_dir: Path, now: float | None = None) -> bool:
    """A worker spawned moments ago that has not taken its lock yet (it is still importing)."""
    try:
        pid_text, started = (data_dir / SPAWN_FILE).read_text().split()
        pid, age = int(pid_text), (time.time() if now is None else now) - float(started)
    except (OSError, ValueError):
        return False
    if not 0 <= age < SPAWN_GRACE_S:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (exited, not yet reaped where PID 1 does not reap) is not a worker
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except OSError:
        return True


def spawn_worker() -> int:
    """Start the background worker fully detached (own session, no inherited stdio) so the agent never
    waits on it; returns its pid."""
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, "-m", "wwt.worker"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        cwd="/",
    )
    return proc.pid


def handle(platform: str, raw: str) -> str:
    """Queue the transcript named in ``raw`` and make sure a worker will ingest it; returns a log line."""
    from wwt import paths
    from wwt.store import Store

    platform = normalise_platform(platform)
    path, session_id = transcript_of(platform, parse_payload(raw))
    data_dir = paths.data_dir()
    with Store.open(paths.store_path()) as store:
        store.enqueue(path, platform, session_id)
    touch = data_dir / TOUCH_FILE
    touch.touch(mode=0o600)
    os.utime(touch)
    # --- resident engine (issue 12): it drains the queue itself; nudge it, or start it, never wait for it
    from wwt.engine.client import nudge

    if (engine := nudge()) is not None:
        return f"queued {path} ({platform}); {engine}"
    # --- end engine: with WWT_ENGINE=off (or no Unix sockets) the background worker ingests, as before
    if worker_running(data_dir):
        return f"queued {path} ({platform}); worker already running"
    pid = spawn_worker()
    spawn = data_dir / SPAWN_FILE
    fd = os.open(spawn, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(f"{pid} {time.time()}\n")
    return f"queued {path} ({platform}); started worker {pid}"


def main(argv: list[str] | None = None) -> int:
    """Entry point; always 0 — a failing hook must never disturb the agent. Problems go to ingest.log."""
    argv = list(sys.argv[1:] if argv is None else argv)
    platform = argv[0] if argv else ""
    try:
        raw = ""
        if not sys.stdin.isatty():
            raw = sys.stdin.read(MAX_STDIN_BYTES)
        if not raw.strip() and len(argv) > 1:
            raw = argv[-1]  # Codex legacy notify: JSON as the last argument
        log_line(handle(platform, raw))
    except HookInputError as exc:
        log_line(f"ignored hook call: {exc}")
    except Exception as exc:  # noqa: BLE001 - the agent must never see a failure from us
        log_line(f"hook failed: {type(exc).__name__}: {exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
