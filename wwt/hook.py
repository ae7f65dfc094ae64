"""``wwt hook <platform>``: what an agent runs at the end of a turn/session. Must return fast and never fail.

It reads the agent's JSON from stdin (Codex's legacy ``notify`` passes it as the last argv instead), records
the transcript in the store's durable queue, starts ONE detached worker if none runs, and exits 0 — printing
nothing, since Gemini parses hook stdout as JSON and Claude/Codex need no reply. Only stdlib + ``wwt.store``
(sqlite3) are imported here: no model, no Kiwi, no tantivy (a test pins this).

Reading stdin is bounded in time and memory (``wwt.limits``): it stops at end of input, at a complete JSON
object, when nothing came for ``HOOK_STDIN_IDLE_S`` (an agent — or anything else — may keep the pipe open) or
after ``HOOK_STDIN_MAX_S`` in all; a payload streaming in is read to its end, so the agent's write never fails.
It keeps at most
``HOOK_MAX_STDIN_BYTES`` and drains the rest, and scans the whole stream as it passes for the top-level
``transcript_path``/``session_id``/``cwd``/``hook_event_name``, so a payload too big to keep (a Gemini
``AfterAgent`` with a huge ``prompt_response``) still names its transcript."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from wwt.limits import HOOK_MAX_STDIN_BYTES, HOOK_STDIN_IDLE_S, HOOK_STDIN_MAX_S, MAX_PATH_CHARS

MAX_STDIN_BYTES = HOOK_MAX_STDIN_BYTES  # a Stop payload may carry the last assistant message; cap it anyway
SCANNED_KEYS = ("transcript_path", "session_id", "thread-id", "conversation_id", "cwd", "hook_event_name")
TOUCH_FILE = "queue.touch"  # mtime = the last hook call; the worker debounces on it
WORKER_LOCK = "worker.lock"
SPAWN_FILE = "worker.spawn"  # "<pid> <time>" of the last worker a hook started (it takes its lock a bit later)
SPAWN_GRACE_S = 10.0


class HookInputError(ValueError):
    """The agent's payload gives no transcript we can queue."""


# Agents whose hooks call ``wwt hook <platform>`` (the others are read from their log folders on ingest).
HOOK_PLATFORMS = ("claude-code", "gemini-cli", "codex-cli", "qwen-code", "cursor", "copilot-cli")


def normalise_platform(name: str) -> str:
    """The platform a hook is registered for, by name or alias (the same ones ``--source`` takes)."""
    from wwt.models import platform_of

    platform = platform_of(name[:64])
    if platform not in HOOK_PLATFORMS:
        raise HookInputError(f"unknown platform {name[:64]!r} (use {', '.join(HOOK_PLATFORMS)})")
    return platform


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


class TopLevelScanner:
    """Incremental scan of a JSON object's byte stream for a few top-level string values, in bounded memory
    and fast on huge strings (the search for a string's end runs in C). Nested objects and strings never
    match: only keys at depth 1 count. Feed chunks with ``feed``; ``found`` holds what was seen (last wins)."""

    _OUTSIDE = re.compile(rb'["{}\[\],:]')
    _STRING_BODY = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)  # up to the closing quote (or a lone \ at the end)
    MAX_VALUE_BYTES = 4 * MAX_PATH_CHARS

    def __init__(self, keys: tuple[str, ...] = SCANNED_KEYS) -> None:
        self.keys = {k.encode() for k in keys}
        self.found: dict[str, str] = {}
        self.depth = 0
        self.top_object = False
        self.expect_key = False
        self.expect_value = False
        self.key: bytes | None = None
        self.in_string = False
        self.escape = False
        self.capture: bytearray | None = None

    def feed(self, chunk: bytes) -> None:
        i, n = 0, len(chunk)
        while i < n:
            if self.in_string:
                if self.escape:
                    self._keep(chunk[i : i + 1])
                    self.escape, i = False, i + 1
                    continue
                match = self._STRING_BODY.match(chunk, i)
                j = match.end() if match else i
                self._keep(chunk[i:j])
                if j >= n:
                    return
                if chunk[j] == 0x5C:  # a backslash ends the chunk: the escaped byte comes with the next one
                    self._keep(b"\\")
                    self.escape, i = True, j + 1
                else:
                    self.in_string, i = False, j + 1
                    self._string_done()
                continue
            match = self._OUTSIDE.search(chunk, i)
            if match is None:
                return
            c, i = chunk[match.start()], match.end()
            at_top = self.depth == 1 and self.top_object
            if c == 0x22:  # "
                self.in_string = True
                wanted = at_top and (self.expect_key or (self.expect_value and self.key in self.keys))
                self.capture = bytearray() if wanted else None
            elif c in (0x7B, 0x5B):  # { [
                if self.depth == 0:
                    self.top_object = c == 0x7B
                    self.expect_key = self.top_object
                elif at_top:
                    self.expect_value = False
                self.depth += 1
            elif c in (0x7D, 0x5D):  # } ]
                self.depth = max(0, self.depth - 1)
            elif at_top and c == 0x3A:  # :
                self.expect_value = True
            elif at_top and c == 0x2C:  # ,
                self.expect_key, self.expect_value, self.key = True, False, None

    def _keep(self, data: bytes) -> None:
        if self.capture is not None:
            if len(self.capture) + len(data) > self.MAX_VALUE_BYTES:
                self.capture = None  # too long for a key we want or a path: not one of ours
            else:
                self.capture += data

    def _string_done(self) -> None:
        raw, self.capture = self.capture, None
        if self.depth != 1 or not self.top_object:
            return
        if self.expect_key:
            self.key, self.expect_key = (bytes(raw) if raw is not None else None), False
        elif self.expect_value:
            self.expect_value = False
            if raw is not None and self.key in self.keys:
                try:
                    self.found[self.key.decode()] = json.loads(b'"' + bytes(raw) + b'"')
                except ValueError:
                    pass


def read_stdin(
    fd: int, idle_s: float = HOOK_STDIN_IDLE_S, max_s: float = HOOK_STDIN_MAX_S, keep: int = MAX_STDIN_BYTES
) -> tuple[bytes, bool, dict[str, str]]:
    """(the first ``keep`` bytes, True when the whole input is in them, top-level fields scanned from all of
    it). Stops at end of input, at a complete JSON object, after ``idle_s`` without data or ``max_s`` in all,
    so a writer that keeps the pipe open cannot hold the hook."""
    import select

    hard_stop = time.monotonic() + max_s
    idle_stop = time.monotonic() + idle_s
    kept = bytearray()
    scanner = TopLevelScanner()
    ended = dropped = False
    while True:
        left = min(hard_stop, idle_stop) - time.monotonic()
        if left <= 0:
            break
        try:
            ready, _, _ = select.select([fd], [], [], left)
        except (OSError, ValueError):  # not selectable: one bounded read
            ready = [fd]
        if not ready:
            break
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            continue
        if not chunk:
            ended = True
            break
        idle_stop = time.monotonic() + idle_s
        scanner.feed(chunk)
        room = keep - len(kept)
        kept += chunk[:room]
        dropped = dropped or len(chunk) > room
        if not dropped and chunk.rstrip().endswith(b"}") and _complete_json(kept):
            ended = True  # a whole object and a writer that does not close: nothing more is coming
            break
    return bytes(kept), ended and not dropped, scanner.found


def _complete_json(data: bytes | bytearray) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


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


def find_qwen_chat(session_id: str) -> str | None:
    """Qwen sends ``transcript_path: ""`` when it has no recording path to give: its chat file is
    ``projects/<project>/chats/<session_id>.jsonl``, one level per project, so a glob finds it."""
    if not session_id or not re.fullmatch(r"[A-Za-z0-9_-]{1,128}", session_id):
        return None
    from wwt.parsers.qwen_paths import qwen_runtime_dirs  # only here: a payload without its path is rare

    for runtime in qwen_runtime_dirs():  # where discovery looks: $QWEN_RUNTIME_DIR or the settings' folder, ~/.qwen
        found = sorted((runtime / "projects").glob(f"*/chats/{session_id}.jsonl"))
        if found:
            return str(found[0])
    return None


def _home() -> Path:
    return Path(os.environ.get("HOME") or Path.home())


_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


def find_cursor_files(conversation_id: str) -> str | None:
    """Cursor may send no ``transcript_path`` (older versions, transcripts off): the conversation's CLI
    transcript (``~/.cursor/projects/<project>/agent-transcripts/<id>.jsonl`` or ``<id>/<id>.jsonl``) or CLI
    chat store (``~/.cursor/chats/<workspace hash>/<id>/store.db``), as wwt.parsers.cursor reads them; else the
    editor's chat database (global ``state.vscdb``), which holds every editor chat."""
    root = _home() / ".cursor"
    if conversation_id and _SAFE_ID.fullmatch(conversation_id):
        for pattern in (f"projects/*/agent-transcripts/{conversation_id}.jsonl",
                        f"projects/*/agent-transcripts/{conversation_id}/{conversation_id}.jsonl",
                        f"chats/*/{conversation_id}/store.db"):
            found = sorted(root.glob(pattern))
            if found:
                return str(found[0])
    if sys.platform == "darwin":
        user = _home() / "Library" / "Application Support" / "Cursor" / "User"
    else:
        raw = os.environ.get("XDG_CONFIG_HOME")
        user = (Path(raw).expanduser() if raw else _home() / ".config") / "Cursor" / "User"
    db = user / "globalStorage" / "state.vscdb"
    return str(db) if db.is_file() else None


def find_copilot_events(session_id: str) -> str | None:
    """Copilot CLI's ``SessionEnd`` names no transcript: its events are
    ``$COPILOT_HOME/session-state/<id>/events.jsonl`` (older versions: ``session-state/<id>.jsonl``)."""
    if not session_id or not _SAFE_ID.fullmatch(session_id):
        return None
    raw = os.environ.get("COPILOT_HOME")
    state = (Path(raw).expanduser() if raw else _home() / ".copilot") / "session-state"
    for candidate in (state / session_id / "events.jsonl", state / f"{session_id}.jsonl"):
        if candidate.is_file():
            return str(candidate)
    return None


def transcript_of(platform: str, payload: dict[str, Any]) -> tuple[str, str | None]:
    """(absolute transcript path, session id) from an agent's payload (agent-log-formats §1.5, §2.4, §3.5;
    Cursor's ``conversation_id``, Copilot CLI's snake_case payloads of its PascalCase events)."""
    session_id = (payload.get("session_id") or payload.get("thread-id") or payload.get("conversation_id")
                  or os.environ.get("GEMINI_SESSION_ID"))
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
    if platform == "qwen-code" and session_id:
        found = find_qwen_chat(session_id)
        if found:
            return found, session_id
    if platform == "cursor":
        found = find_cursor_files(session_id or "")
        if found:
            return found, session_id
    if platform == "copilot-cli" and session_id:
        found = find_copilot_events(session_id)
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
    """The worker (or the engine's ingest thread) holds an exclusive flock on worker.lock for its whole life;
    one a hook spawned moments ago has not taken it yet (``worker_starting``)."""
    from wwt.engine.ipc import lock_held

    try:
        if lock_held(data_dir / WORKER_LOCK):
            return True
    except ImportError:  # pragma: no cover - not POSIX: let the worker's own lock sort it out
        return False
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


TAKE_OVER_LOCK_S = 30.0  # how long a take-over waits for the writer's lock (a stopped engine may hold it)


def take_over(path: str) -> int:
    """Archive one queued transcript in this process (by words: vectors are the engine's to add once it runs
    again). Run detached by the hook when the engine that owns the queue is stopped; its row stays queued for
    the engine, which then finds the file unchanged. 0 when archived, 1 when it could not be."""
    from wwt.errors import WwtError
    from wwt.service import Memory

    os.environ.pop("WWT_REDACT", None)  # the agent's environment does not decide what is stored
    try:
        with Memory.open() as memory:
            summary = memory.ingest([Path(path)], backfill=False, lock_timeout=TAKE_OVER_LOCK_S)
    except WwtError as exc:
        log_line(f"take-over of {path} failed: {exc}")
        return 1
    failed = getattr(summary, "failed", None) or {}
    if failed:  # wwt's own failure on this file (its row stays queued for the engine, which retries it)
        log_line(f"take-over of {path} failed: {next(iter(failed.values()))}")
        return 1
    log_line(f"took over {path} from a stopped engine: {summary.messages_added} message(s) archived")
    return 0


def spawn_take_over(path: str) -> int:
    """``take_over(path)`` in a detached process (the agent never waits on it); returns its pid."""
    return _spawn_detached(
        [sys.executable, "-c", "import sys; from wwt.hook import take_over; sys.exit(take_over(sys.argv[1]))", path],
        env=dict(os.environ, WWT_ENGINE="off"),
    )


def spawn_worker() -> int:
    """Start the background worker fully detached (own session, no inherited stdio) so the agent never
    waits on it; returns its pid."""
    return _spawn_detached([sys.executable, "-m", "wwt.worker"])


def _spawn_detached(argv: list[str], env: dict[str, str] | None = None) -> int:
    """``argv`` in its own session, no inherited stdio, from ``/``: nothing of it reaches the agent; its pid."""
    import subprocess

    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, close_fds=True, cwd="/", env=env)
    return proc.pid


SESSION_END_EVENTS = ("sessionend", "session_end")  # Claude/Gemini/Qwen/Codex "SessionEnd", Cursor "sessionEnd"


def session_over(payload: dict[str, Any]) -> bool:
    """The payload ends a session (nothing is written to its transcript afterwards)."""
    event = payload.get("hook_event_name")
    return isinstance(event, str) and event.replace("-", "_").lower() in SESSION_END_EVENTS


def handle(platform: str, raw: str | dict[str, Any]) -> str:
    """Queue the transcript named in ``raw`` (JSON text, or fields already scanned from it) and make sure a
    worker will ingest it; returns a log line."""
    from wwt import paths
    from wwt.store import Store

    platform = normalise_platform(platform)
    payload = raw if isinstance(raw, dict) else parse_payload(raw)
    path, session_id = transcript_of(platform, payload)
    if session_over(payload) and not os.path.lexists(path):
        # e.g. every `claude mcp list` ends a session that never wrote its transcript: nothing will come, so
        # no queue row, no worker, no engine start (a Stop for a missing file is queued: it may still appear)
        return f"nothing to archive: {path[:300]} was never written ({platform} session end)"
    data_dir = paths.data_dir()
    with Store.open(paths.store_path()) as store:
        store.enqueue(path, platform, session_id)
    touch = data_dir / TOUCH_FILE
    touch.touch(mode=0o600)
    os.utime(touch)
    # --- resident engine (issue 12): it drains the queue itself; nudge it, or start it, never wait for it
    from wwt.engine.client import nudge

    if (engine := nudge()) is not None:
        from wwt.engine.client import STUCK_MARK

        if engine.startswith(STUCK_MARK):  # the engine holding the lock is stopped: this transcript cannot wait
            pid = spawn_take_over(path)
            return f"queued {path} ({platform}); {engine[len(STUCK_MARK):]}: archived by process {pid} instead"
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
        raw: str | dict[str, Any] = ""
        if len(argv) > 1:
            raw = argv[-1]  # Codex legacy notify: JSON as the last argument (its stdin is not ours to wait on)
        elif not sys.stdin.isatty():
            kept, whole, scanned = read_stdin(sys.stdin.fileno())
            try:
                raw = kept.decode("utf-8") if whole else scanned
            except UnicodeDecodeError:
                raise HookInputError("hook input is not UTF-8") from None
            if not whole and not scanned.get("transcript_path"):
                raise HookInputError(f"no complete payload on stdin and no transcript_path in it ({len(kept)} bytes "
                                     "kept; the writer went quiet or never closed)")
        log_line(handle(platform, raw))
    except HookInputError as exc:
        log_line(f"ignored hook call: {exc}")
    except Exception as exc:  # noqa: BLE001 - the agent must never see a failure from us
        log_line(f"hook failed: {type(exc).__name__}: {exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
