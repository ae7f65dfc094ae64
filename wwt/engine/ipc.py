"""The engine's transport: where its socket lives, what a frame is, who may talk to it. Standard library only —
the thin clients (``wwt search``, ``wwt mcp``, the hook) import this before anything else.

Files live in a private runtime folder (``$WWT_RUNTIME_DIR``, else ``/tmp/wwt-<uid>`` — never a folder that an
agent's environment moves, such as ``$XDG_RUNTIME_DIR`` — else, when that one is another user's or a symlink,
``<data dir>/run`` or ``~/.cache/wwt/run``; 0700, owned by the user), named by a hash of the data dir so
each ``WWT_HOME`` gets its own engine and the socket path stays far below the ~100-byte limit:
``<key>.sock`` (0600), ``<key>.lock`` (flock held by the live engine) and ``<key>.json`` (pid, version).

A frame is a 4-byte big-endian length and that many bytes of UTF-8 JSON. Requests are bounded by
``MAX_REQUEST_BYTES``, replies by ``MAX_REPLY_BYTES``.

What a thin client imports is what ``wwt search`` waits for before it can ask (issue 12's latency target), so
this module imports only what that needs: ``json``, ``os``, ``sys``, ``zlib`` and the ``_socket`` core that
``socket`` wraps (``socket`` itself adds its enum conversions and ``selectors``; pathlib and typing are left out
too). Paths are kept as text; ``Location`` hands out ``Path`` objects to the engine and tests on request."""

from __future__ import annotations

import json
import os
import stat
import sys
import zlib

try:  # the C socket type ``socket.socket`` subclasses: connect, sendall, recv, settimeout, shutdown, close
    import _socket as socket_core
except ImportError:  # pragma: no cover - an interpreter without it
    import socket as socket_core  # type: ignore[no-redef]

SHUT_WR = socket_core.SHUT_WR
MSG_PEEK = socket_core.MSG_PEEK

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import socket
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any

PROTOCOL = 1
MAX_REQUEST_BYTES = 1 << 20
MAX_REPLY_BYTES = 64 << 20
MAX_SOCKET_PATH = 100  # sun_path is 104 bytes on macOS, 108 on Linux
HEADER_BYTES = 4  # big-endian frame length
# Model overrides read from the environment at start. They are not part of the engine's address or key: an
# agent may start ``wwt mcp`` with a minimal environment (Codex), and that must reach the same engine. A client
# that sets none of them takes the data dir's engine as it is (without an override the model is the data
# dir's own, ``$WWT_HOME/models``); one that sets them is compared by ``settings_verdict``. Not WWT_REDACT:
# what is stored is the data dir's to say.
KEY_ENV = ("WWT_MODEL_DIR", "WWT_MODEL_MANIFEST")
OFF_VALUES = ("off", "0", "no", "false")
# What an MCP session reads from its own process's environment (wwt.mcp_server.SESSION_ENV_VARS: which agent
# session it runs in); the pipe forwards these with the handshake.
MCP_ENV = ("WWT_EXCLUDE_SESSION_ID", "CLAUDE_SESSION_ID", "CLAUDE_CODE_SESSION_ID", "GEMINI_SESSION_ID",
           "CODEX_THREAD_ID", "CODEX_SESSION_ID")


MAX_ENV_SECONDS = 30 * 86400.0  # a longer duration from the environment means "as long as possible"


def env_seconds(name: str, default: float, environ: Mapping[str, str] | None = None) -> float:
    """A duration setting (``WWT_ENGINE_TIMEOUT_S``, ``WWT_WORKER_DEBOUNCE_S``, …): a number of seconds ≥ 0,
    at most ``MAX_ENV_SECONDS``; anything else (empty, text, nan, negative) is ``default``. Garbage must never
    reach a socket timeout or a sleep, which raise on nan, inf and huge values."""
    raw = (os.environ if environ is None else environ).get(name)
    try:
        value = float(raw) if raw else default
    except ValueError:
        return default
    if value != value or value < 0:  # nan, negative
        return default
    return min(value, MAX_ENV_SECONDS)


class EngineUnavailable(Exception):
    """No engine can be used here (disabled, no Unix sockets, unsafe runtime folder): run in-process."""


class FrameError(Exception):
    """A frame that is too big, truncated or not a JSON object."""


def enabled() -> bool:
    """``WWT_ENGINE=off`` (or a platform without Unix sockets) runs everything in-process."""
    if os.environ.get("WWT_ENGINE", "").strip().lower() in OFF_VALUES:
        return False
    return hasattr(socket_core, "AF_UNIX") and os.name == "posix" and hasattr(os, "getuid")


def unix_socket() -> socket.socket:
    """A new Unix stream socket (the C type; it has every method a client uses)."""
    return socket_core.socket(socket_core.AF_UNIX, socket_core.SOCK_STREAM)


def data_dir() -> Path:
    from wwt import paths

    return paths.data_dir(create=False)


def engine_key(environ: Mapping[str, str] | None = None) -> str:
    """The package version: an engine answers clients of its own version (``newer_version`` makes an older one
    step down). ``WWT_ENGINE_VERSION`` overrides it (tests simulate an engine left over from an older wwt).
    Nothing else from the environment is in it — model overrides travel as ``model_settings``."""
    from wwt import __version__

    environ = os.environ if environ is None else environ
    return environ.get("WWT_ENGINE_VERSION") or __version__


def model_settings(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The model overrides (``KEY_ENV``) this process sets, as absolute paths; unset or empty ones left out."""
    environ = os.environ if environ is None else environ
    found = {}
    for name in KEY_ENV:
        value = environ.get(name)
        if value:
            try:
                value = os.path.abspath(os.path.expanduser(value))
            except OSError:  # relative, in a folder that was deleted
                pass
            found[name] = value
    return found


SAME, REPLACE, DIFFER = "same", "replace", "differ"


def settings_verdict(client: Mapping[str, str], engine: Mapping[str, str]) -> str:
    """May a client with these model overrides use an engine started with those? ``SAME``: yes (equal, or the
    client sets none: it takes the data dir's engine as it is). ``REPLACE``: the engine was started without
    overrides (say by a hook or an agent's minimal environment) and the client names a model: the engine steps
    down for one started with the client's. ``DIFFER``: both name other models — the client answers
    in-process after one line (two overrides for one data dir: the user's to settle; no ping-pong)."""
    if not client or dict(client) == dict(engine):
        return SAME
    return REPLACE if not engine else DIFFER


def newer_version(client_key: str, engine_key_: str) -> bool:
    """Does the client run a newer wwt than the engine? Then the engine steps down for a fresh one (an
    upgrade). An older client runs in-process instead, so two kinds of clients never keep replacing each
    other's engine."""
    import re

    def parts(key: str) -> tuple[int, ...]:
        return tuple(int(n) for n in re.findall(r"\d+", key.split("|", 1)[0]))

    return parts(client_key) > parts(engine_key_)


def _digest(data: bytes) -> str:
    """64 bits of checksum: enough to name a data dir's files or tell settings apart, without importing
    hashlib (OpenSSL: +4 MB in every thin client). The engine also compares the full data dir path."""
    return f"{zlib.crc32(data):08x}{zlib.crc32(data[::-1], 0x9E3779B9):08x}"


def ensure_private_dir(path: str | Path) -> str | Path:
    """Create ``path`` 0700 or accept it only if it is a real folder owned by us; tighten a loose mode."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.lstat(path)
    except OSError as exc:
        raise EngineUnavailable(f"cannot use runtime folder {path}: {exc.strerror}") from None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise EngineUnavailable(f"runtime folder {path} is not a folder owned by this user")
    if info.st_mode & 0o077:
        os.chmod(path, 0o700)
    return path


def shared_runtime_dir() -> str:
    """``/tmp/wwt-<uid>``: the same for every process of the user whatever its environment — an agent may start
    ``wwt mcp`` with a minimal one (Codex: no ``XDG_RUNTIME_DIR``, no ``TMPDIR``), and an address that followed
    those would start a second engine for the same data dir."""
    return f"/tmp/wwt-{os.getuid()}"


def own_runtime_dir(home: str) -> str:
    """``<data dir>/run``: used when ``/tmp/wwt-<uid>`` is not ours (another local user pre-created it, or a
    symlink there): the data dir is ours (``paths.foreign_data_dir`` refuses one that is not), and every client of it finds the same."""
    return os.path.join(home, "run")


def user_runtime_dir() -> str:
    """``~/.cache/wwt/run`` of the user's home in the password database (not ``$HOME``, which an agent's
    environment may change): the last resort when ``<data dir>/run`` makes too long a socket path."""
    import pwd

    try:
        root = pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        root = os.path.expanduser("~")
    return os.path.join(root, ".cache", "wwt", "run")


def runtime_choice(home: str) -> tuple[str, str | None]:
    """(the runtime folder for ``home``'s engine, why the shared one was passed over — for ``wwt doctor``).
    ``$WWT_RUNTIME_DIR`` is an explicit override; otherwise the choice follows from the user and the data dir
    alone, so every client of one data dir meets one engine: ``/tmp/wwt-<uid>``, else ``<data dir>/run``,
    else ``~/.cache/wwt/run`` (the first that is ours and short enough for a socket path). Raises
    ``EngineUnavailable`` (with the reason) when none is."""
    raw = os.environ.get("WWT_RUNTIME_DIR")
    if raw:
        return raw, None
    shared = shared_runtime_dir()
    problem = unusable_runtime_dir(shared)
    if problem is None:
        return shared, None
    name = key_of(home)
    for candidate in (own_runtime_dir(home), user_runtime_dir()):
        if _fits(candidate, name) and unusable_runtime_dir(candidate) is None:
            return candidate, problem
    raise EngineUnavailable(f"{problem}, and no folder of ours makes a short enough socket path")


def _fits(folder: str, name: str) -> bool:
    return len(os.fsencode(os.path.join(folder, f"{name}.sock"))) <= MAX_SOCKET_PATH


def unusable_runtime_dir(path: str) -> str | None:
    """Why ``path`` cannot be our private runtime folder, or None (missing is fine: it is created 0700).
    Looks only: ``wwt doctor`` uses it too."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        parent = os.path.dirname(path.rstrip("/")) or "/"
        if os.path.isdir(parent) and not os.access(parent, os.W_OK | os.X_OK):
            return f"{path} cannot be created ({parent} is not writable)"
        return None
    except OSError as exc:
        return f"{path}: {exc.strerror}"
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a folder (a symlink or a file put there)"
    if info.st_uid != os.getuid():
        return f"{path} belongs to another user (uid {info.st_uid})"
    return None


def key_of(home: str | Path) -> str:
    return _digest(os.path.realpath(home).encode("utf-8", "surrogateescape"))


class Location:
    """The engine files for one data dir: ``home_path``, ``dir_path``, ``socket_path``, ``lock_path`` and
    ``info_path`` as text (what the thin client uses), and the same as ``Path`` objects (``home``, ``dir``,
    ``socket``, ``lock``, ``info``) for the engine and tests."""

    def __init__(self, home: str | Path | None = None, base: str | Path | None = None) -> None:
        from wwt import paths

        self.home_path = os.fspath(home) if home is not None else paths.data_dir_name()
        self.passed_over: str | None = None  # why /tmp/wwt-<uid> was not used (for doctor)
        if base is None:
            base, self.passed_over = runtime_choice(self.home_path)
        base = os.fspath(base)
        name = key_of(self.home_path)
        if not _fits(base, name):  # a long WWT_RUNTIME_DIR: the short shared one
            shared = shared_runtime_dir()
            problem = (unusable_runtime_dir(shared) if _fits(shared, name)
                       else f"{shared} makes too long a socket path")
            if problem is not None:
                raise EngineUnavailable(f"{base} is too long a path for a socket, and {problem}")
            base = shared
        self.dir_path = base
        self.socket_path = os.path.join(base, f"{name}.sock")
        self.lock_path = os.path.join(base, f"{name}.lock")
        self.info_path = os.path.join(base, f"{name}.json")

    @property
    def home(self) -> Path:
        return _path(self.home_path)

    @property
    def dir(self) -> Path:
        return _path(self.dir_path)

    @property
    def socket(self) -> Path:
        return _path(self.socket_path)

    @property
    def lock(self) -> Path:
        return _path(self.lock_path)

    @property
    def info(self) -> Path:
        return _path(self.info_path)

    def prepare(self) -> Location:
        ensure_private_dir(self.dir_path)
        return self

    def read_info(self) -> dict[str, Any]:
        try:
            data = json.loads(self.info.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}


def _path(text: str) -> Path:
    from pathlib import Path

    return Path(text)


def lock_held(path: str | Path) -> bool:
    """True when some process holds the flock on ``path`` (a live or starting engine)."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def lock_holder(path: str | Path) -> int | None:
    """The pid the engine wrote into its lock file when it took the lock (None: unknown)."""
    try:
        with open(path, "rb") as fh:
            return int(fh.read(32).split()[0])
    except (OSError, ValueError, IndexError):
        return None


def process_state(pid: int) -> str | None:
    """"stopped" (SIGSTOP, a debugger), "gone" (no such process, a zombie) or None (running, or cannot tell:
    no ``/proc``)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "gone"
    except OSError:
        pass  # another user's pid: it exists
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return None
    if state in (b"T", b"t"):
        return "stopped"
    return "gone" if state in (b"Z", b"X") else None


def engine_stuck(lock_path: str | Path) -> str | None:
    """Why the engine that holds ``lock_path`` cannot answer — "the engine (pid N) is stopped" (or gone, its lock
    kept by a process that inherited it) —, or None when it may still answer: not locked, running, unknown.
    A client checks this instead of waiting ``WWT_ENGINE_TIMEOUT_S`` / ``WWT_ENGINE_START_S`` for nothing."""
    if not lock_held(lock_path):
        return None
    pid = lock_holder(lock_path)
    if pid is None or pid == os.getpid():
        return None
    state = process_state(pid)
    return f"the engine (pid {pid}) is {state}" if state else None


# ------------------------------------------------------------------------------------------------ frames


def encode(obj: dict[str, Any]) -> bytes:
    """A frame. Text that is not UTF-8 — a folder name, argument or environment value with bytes that are not
    (legal on Linux: Python holds them as lone surrogates) — goes as JSON ``\\udcff`` escapes, which the other
    side reads back as the same string: nothing is lost or refused."""
    try:
        data = json.dumps(obj, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        data = json.dumps(obj).encode("ascii")
    return len(data).to_bytes(HEADER_BYTES, "big") + data


def send(sock: socket.socket, obj: dict[str, Any]) -> None:
    sock.sendall(encode(obj))


def _read_exactly(sock: socket.socket, n: int, deadline: float | None = None) -> bytes:
    parts = bytearray()
    while len(parts) < n:
        _time_left(sock, deadline)
        chunk = sock.recv(min(n - len(parts), 1 << 20))
        if not chunk:
            raise FrameError("connection closed mid-frame")
        parts += chunk
    return bytes(parts)


def _time_left(sock: socket.socket, deadline: float | None) -> None:
    """Before each read: a socket timeout of what is left until ``deadline`` (``time.monotonic``), so a peer
    sending a byte now and then cannot hold the reader past it (slow-loris); TimeoutError when it has passed."""
    if deadline is None:
        return
    import time

    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("request not received in time")
    sock.settimeout(left)


def recv(sock: socket.socket, limit: int, deadline: float | None = None) -> dict[str, Any] | None:
    """The next frame, or None when the peer closed the connection between frames. ``deadline``
    (``time.monotonic``): the whole frame must have arrived by then, however the peer spaces its bytes."""
    _time_left(sock, deadline)
    first = sock.recv(HEADER_BYTES)
    if not first:
        return None
    header = first + (_read_exactly(sock, HEADER_BYTES - len(first), deadline) if len(first) < HEADER_BYTES
                      else b"")
    length = int.from_bytes(header, "big")
    if length > limit:
        raise FrameError(f"frame of {length} bytes is over the {limit}-byte limit")
    try:
        obj = json.loads(_read_exactly(sock, length, deadline).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise FrameError("frame is not JSON") from None
    if not isinstance(obj, dict):
        raise FrameError("frame is not a JSON object")
    return obj


# ------------------------------------------------------------------------------------------------ peers


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end, or None where the platform cannot tell."""
    import socket
    import struct

    if hasattr(socket, "SO_PEERCRED"):  # Linux: struct ucred {pid, uid, gid}
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", creds)[1]
    if sys.platform == "darwin" or "bsd" in sys.platform:  # LOCAL_PEERCRED: struct xucred {version, uid, ...}
        try:
            creds = sock.getsockopt(0, 0x001, struct.calcsize("2I"))
            return struct.unpack("2I", creds[: struct.calcsize("2I")])[1]
        except OSError:
            return None
    return None


def peer_allowed(peer: int | None, me: int) -> bool:
    """Only our own uid may use the engine. ``None`` (a platform that cannot say) relies on the 0700 folder."""
    return peer is None or peer == me
