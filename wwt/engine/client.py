"""Thin clients of the engine — standard library only, so ``wwt search`` asks before it imports anything heavy.

``run_cli(argv)`` sends a CLI command (with the caller's folder, terminal and a few env vars) and prints the
engine's answer; ``mcp_pipe()`` turns ``wwt mcp`` into a byte pipe between the agent's stdio and an MCP session
inside the engine; ``nudge()`` tells the engine the hook queued something. Each returns None when no engine
can serve (disabled, unsafe runtime folder, engine died mid-request): the caller then runs in-process, as
every command did before the engine existed, after at most one line on stderr.

Start on demand: a client that finds no engine starts one detached (``python -m wwt.engine.server``); the
engine takes a lock before it binds the socket, so when several clients race exactly one engine survives and
all of them connect to it. The first request waits for the engine's warm-up instead of loading a second copy.

Start-up matters here: ``wwt search`` against a warm engine is mostly this process starting, so it imports only
``ipc`` (see there) and ``json``/``os``/``sys``/``time``; ``threading`` (the MCP pipe) and ``subprocess``
(starting an engine) load when used."""

from __future__ import annotations

import json
import os
import sys
import time

from wwt.engine import ipc

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import socket
    from typing import Any

CLI_SERVED = frozenset({"search", "show", "status"})  # commands the engine runs; the rest run in-process
CLI_STARTS_ENGINE = frozenset({"search"})  # show/status use a running engine but do not start one for that
CLI_ENV = ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TERM", "COLORTERM", "TZ", "WWT_DEBUG")
CONNECT_TIMEOUT_S = 2.0
STUCK_CHECK_S = 0.5  # while waiting for the engine, look this often whether it is stopped or gone
SKEW_EXIT_WAIT_S = 10.0


def _note(message: str) -> None:
    sys.stderr.write(f"wwt: {message}\n")
    sys.stderr.flush()


def location() -> ipc.Location | None:
    if not ipc.enabled():
        return None
    from wwt import paths

    if paths.foreign_data_dir(paths.data_dir_name()):
        return None  # refused in-process, in one line, at once (an engine could not open it either)
    try:
        return ipc.Location().prepare()
    except ipc.EngineUnavailable as exc:
        if os.environ.get("WWT_DEBUG"):
            _note(f"engine unavailable: {exc}")
        return None


def unavailable() -> str | None:
    """Why no engine can run for this data dir here (``wwt engine start`` says it), or None."""
    if not ipc.enabled():
        return "the engine is off (WWT_ENGINE=off, or no Unix sockets)"
    from wwt import paths

    if problem := paths.foreign_data_dir(paths.data_dir_name()):
        return problem
    try:
        ipc.Location().prepare()
    except ipc.EngineUnavailable as exc:
        return str(exc)
    return None


def connect(loc: ipc.Location) -> socket.socket | None:
    """A connection to the running engine, or None (no socket file, or a stale one nobody listens on)."""
    sock = ipc.unix_socket()
    sock.settimeout(CONNECT_TIMEOUT_S)
    try:
        sock.connect(loc.socket_path)
    except OSError:
        sock.close()
        return None
    return sock


# Hangul and Han, as wwt.lexical._HANGUL_OR_HAN (a test keeps them equal): the scripts Kiwi tokenizes
KIWI_RANGES = (("\u1100", "\u11ff"), ("\u3130", "\u318f"), ("\ua960", "\ua97f"), ("\uac00", "\ud7af"),
               ("\u3400", "\u4dbf"), ("\u4e00", "\u9fff"))


def needs_kiwi(argv: Any) -> bool:
    """A command holding Hangul or Han text: its search needs Kiwi (the lexical leg's Korean tokenizer)."""
    return isinstance(argv, list) and any(
        isinstance(arg, str) and any(low <= ch <= high for ch in arg for low, high in KIWI_RANGES)
        for arg in argv[1:])


def spawn(loc: ipc.Location, purpose: str = "cli", kiwi: bool = False) -> Any:
    """Start an engine fully detached (own session, no inherited stdio); it logs to the data dir's log.
    ``kiwi``: the command that starts it is Korean — Kiwi loads from the engine's first moment, beside its
    imports and the model, not after the command arrives. Returns the ``subprocess.Popen``, or None."""
    import subprocess

    try:
        return subprocess.Popen(
            [sys.executable, "-m", "wwt.engine.server", "--for", purpose, *(["--kiwi"] if kiwi else [])],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            cwd="/",
        )
    except OSError:
        return None


def obtain(loc: ipc.Location, start: bool, purpose: str = "cli", kiwi: bool = False) -> socket.socket | None:
    """Connect to the engine, starting one first when ``start`` and none runs; None when none comes up in
    ``WWT_ENGINE_START_S`` (default 20 s) or the one started died."""
    sock = connect(loc)
    if sock is not None or not start:
        return sock
    proc = None if ipc.lock_held(loc.lock_path) else spawn(loc, purpose, kiwi)
    deadline = time.monotonic() + ipc.env_seconds("WWT_ENGINE_START_S", 20.0)
    delay = 0.005
    checked = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(delay)
        delay = min(delay * 1.5, 0.05)
        sock = connect(loc)
        if sock is not None:
            return sock
        if proc is not None and proc.poll() is not None and not ipc.lock_held(loc.lock_path):
            return connect(loc)  # ours gave up and nobody else holds the lock: no engine is coming
        if proc is None and time.monotonic() - checked >= STUCK_CHECK_S:
            checked = time.monotonic()
            if why := ipc.engine_stuck(loc.lock_path):  # the lock's holder is stopped: nobody will bind
                raise EngineStuck(why)
    return None


def wait_for_exit(loc: ipc.Location, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while ipc.lock_held(loc.lock_path):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _exchange(sock: socket.socket, request: dict[str, Any], timeout: float, loc: ipc.Location,
              limit: int = ipc.MAX_REPLY_BYTES) -> dict[str, Any] | None:
    sock.settimeout(timeout)
    ipc.send(sock, request)
    await_reply(sock, loc, timeout)
    return ipc.recv(sock, limit)


def await_reply(sock: socket.socket, loc: ipc.Location, timeout: float) -> None:
    """Wait up to ``timeout`` until the engine's reply starts, looking every STUCK_CHECK_S whether the engine is
    stopped (SIGSTOP: the kernel still accepts the connection, nothing answers) — then ``EngineStuck`` at once
    instead of after the whole timeout. Leaves the socket's timeout at what is left of ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("timed out")
        sock.settimeout(min(STUCK_CHECK_S, left))
        try:
            sock.recv(1, ipc.MSG_PEEK)  # returns when a reply (or the end of the connection) is there
            break
        except TimeoutError:
            if why := ipc.engine_stuck(loc.lock_path):
                raise EngineStuck(why) from None
    sock.settimeout(max(0.001, deadline - time.monotonic()))


def call(op: str, payload: dict[str, Any] | None = None, *, start: bool = False, purpose: str = "cli",
         timeout: float | None = None, loc: ipc.Location | None = None) -> dict[str, Any] | None:
    """One request/reply with the engine; None when there is no engine (and ``start`` is False or it could
    not start). A version skew makes the old engine exit; the request then goes to a fresh one. Raises
    ``EngineLost`` when the engine died (or went silent past ``timeout``) during the request."""
    loc = loc or location()
    if loc is None:
        return None
    request = {"op": op, "key": ipc.engine_key(), "settings": ipc.model_settings(), "protocol": ipc.PROTOCOL,
               "home": loc.home_path, **(payload or {})}
    timeout = ipc.env_seconds("WWT_ENGINE_TIMEOUT_S", 120.0) if timeout is None else timeout
    kiwi = op == "cli" and needs_kiwi((payload or {}).get("argv"))
    for _attempt in range(2):
        sock = obtain(loc, start=start, purpose=purpose, kiwi=kiwi)
        if sock is None:
            return None
        try:
            reply = _exchange(sock, request, timeout, loc)
        except (OSError, ipc.FrameError) as exc:
            raise EngineLost(str(exc) or type(exc).__name__) from None
        finally:
            sock.close()
        if reply is None:
            raise EngineLost("connection closed")
        if "skew" not in reply:
            return reply
        wait_for_exit(loc, SKEW_EXIT_WAIT_S)  # the old engine leaves by itself; start=True brings a new one
        if not start:
            return None
    return None


def other_model(settings: Any) -> str:
    """The line a client prints when the data dir's engine runs with other model overrides than its own."""
    theirs = ", ".join(f"{k}={v}" for k, v in dict(settings or {}).items())[:300] or "no model override"
    ours = ", ".join(f"{k}={v}" for k, v in ipc.model_settings().items())[:300]
    return (f"the engine for this data dir runs with {theirs}, not {ours} (`wwt engine stop` lets the next "
            "command start one with yours)")


class EngineLost(Exception):
    """The engine closed the connection or stopped answering in the middle of a request."""


class EngineStuck(EngineLost):
    """The engine holding the lock is stopped (or gone): it cannot answer, so nobody waits for it."""


# --------------------------------------------------------------------------------------------------- CLI


def _color_system(env: dict[str, str], tty: bool) -> str | None:
    """What rich would pick for the client's terminal (decided here: the engine has no terminal)."""
    if not tty or "NO_COLOR" in env or env.get("TERM") == "dumb":
        return None
    if env.get("COLORTERM", "").lower() in ("truecolor", "24bit"):
        return "truecolor"
    return "256" if "256color" in env.get("TERM", "") else "standard"


def _terminal_width(env: dict[str, str]) -> int:
    """``shutil.get_terminal_size`` without importing shutil: ``COLUMNS`` (when > 0), else the terminal,
    else 80."""
    try:
        if (columns := int(env["COLUMNS"])) > 0:
            return columns
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return 80


def cli_request(argv: list[str]) -> dict[str, Any]:
    env = {name: os.environ[name] for name in CLI_ENV if name in os.environ}
    tty_out, tty_err = sys.stdout.isatty(), sys.stderr.isatty()
    env["__tty_stdout"], env["__tty_stderr"] = ("1" if tty_out else ""), ("1" if tty_err else "")
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = "/"
    width = _terminal_width(env) if tty_out or "COLUMNS" in env else 80
    return {"argv": argv, "cwd": cwd, "env": env, "width": width,
            "color": _color_system(env, tty_out), "color_err": _color_system(env, tty_err)}


def run_cli(argv: list[str]) -> int | None:
    """Run ``wwt <argv>`` in the engine; its exit code, or None to run it in-process instead."""
    if not argv or argv[0] not in CLI_SERVED or (loc := location()) is None:
        return None
    if not os.path.exists(os.path.join(loc.home_path, "wwt.sqlite3")):
        return None  # nothing archived yet: the in-process command says so without starting an engine
    try:
        reply = call("cli", cli_request(argv), start=argv[0] in CLI_STARTS_ENGINE, loc=loc)
    except EngineStuck as exc:
        _note(f"{exc}; answering in-process")
        return None
    except EngineLost as exc:
        _note(f"the engine stopped during the request ({exc}); answering in-process")
        return None
    if reply is None or reply.get("mismatch"):
        if reply is not None and "settings" in reply:
            _note(f"{other_model(reply['settings'])}; answering in-process")
        return None  # no engine, or one of an older wwt: in-process, silently
    if not reply.get("ok"):
        _note(f"the engine could not answer ({str(reply.get('error'))[:200]}); answering in-process")
        return None
    try:
        sys.stdout.write(reply.get("stdout", ""))
        sys.stdout.flush()
    except OSError as exc:  # `> /dev/full`, `| head -0`
        return output_failure(exc)
    sys.stderr.write(reply.get("stderr", ""))
    sys.stderr.flush()
    return int(reply.get("code", 0))


def output_failure(exc: OSError) -> int:
    """The answer could not be written to standard output (a full device, a reader that left): one line —
    none for a closed pipe, whose reader wants nothing more — and exit code 1. Standard output then points at
    /dev/null so the interpreter's last flush cannot fail a second time with a traceback."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass
    if not isinstance(exc, BrokenPipeError):
        _note(f"cannot write the output: {exc.strerror or exc}")
    return 1


# ------------------------------------------------------------------------------------------------ engine cmd


def status() -> dict[str, Any] | None:
    """The running engine's status (pid, uptime, RSS, clients, idle timer), or None when none runs."""
    try:
        return call("status", start=False, timeout=10.0)
    except EngineLost:
        return None


def stop(timeout: float = 10.0) -> dict[str, Any] | None:
    """Ask the running engine to exit and wait until it has; its last status, or None when none ran."""
    loc = location()
    if loc is None:
        return None
    try:
        reply = call("stop", start=False, timeout=timeout)
    except EngineLost:
        reply = None
    if reply is None and not ipc.lock_held(loc.lock_path):
        return None
    wait_for_exit(loc, timeout)
    return reply or {}


def start(timeout: float = 120.0) -> dict[str, Any] | None:
    """Start an engine (if none runs) and wait until it is warm; its status."""
    try:
        return call("warm", start=True, timeout=timeout)
    except EngineLost:
        return None


STUCK_MARK = "engine stuck: "  # what nudge() starts its answer with when the engine cannot read the queue


def nudge() -> str | None:
    """From the hook: tell the engine the queue has work, starting one when none runs (never waits for it).
    None when the engine is disabled here (the hook then starts its worker as before)."""
    loc = location()
    if loc is None:
        return None
    sock = connect(loc)
    listening = sock is not None
    if sock is not None:
        try:
            sock.settimeout(0.2)
            ipc.send(sock, {"op": "nudge", "key": ipc.engine_key(), "settings": ipc.model_settings(),
                            "protocol": ipc.PROTOCOL, "home": loc.home_path})
            reply = ipc.recv(sock, ipc.MAX_REQUEST_BYTES)
            if reply is not None and "skew" not in reply:
                return f"nudged engine {reply.get('pid')}"
        except (OSError, ipc.FrameError):
            pass
        finally:
            sock.close()
    if ipc.lock_held(loc.lock_path):
        if listening and (why := ipc.engine_stuck(loc.lock_path)):
            return f"{STUCK_MARK}{why}"  # stopped (SIGSTOP, a debugger): the hook takes the row over
        if listening:
            return "engine busy; it reads the queue on its next look"
        # Locked but not listening: an engine starting (it reads the queue once it runs) or one exiting (its
        # ingest has stopped: this row would wait for the next hook). A standby waits for the lock and serves
        # only if the holder goes away; otherwise it leaves.
        proc = spawn(loc, "ingest")
        standby = f"; standby engine {proc.pid} takes over if it exits" if proc is not None else ""
        return "engine starting or exiting" + standby
    proc = spawn(loc, "ingest")
    return f"started engine {proc.pid}" if proc is not None else None


# ------------------------------------------------------------------------------------------------ MCP pipe

class _Pipe:
    """stdio ↔ engine socket. Remembers the session's ``initialize`` exchange so that, if the engine dies, a
    fresh engine gets the same handshake (its answer swallowed) and the agent's session carries on; requests
    that were in flight are sent again (every wwt tool is safe to repeat: reads, or an idempotent ingest)."""

    def __init__(self, loc: ipc.Location, hello: dict[str, Any]) -> None:
        import threading

        self.loc = loc
        self.hello = hello
        self.lock = threading.Lock()
        self.sock: socket.socket | None = None
        self.init_line: bytes | None = None
        self.initialized_line: bytes | None = None
        self.pending: dict[str, bytes] = {}  # id → request line, until its answer arrives
        self.swallow: Any = None
        self.init_answered = False  # the agent has its initialize answer (from us or an engine)
        self.stdin_closed = False
        self.why = ""
        self.in_process = False
        self.out = sys.stdout.buffer

    def open(self) -> socket.socket | None:
        """A connection past the MCP handshake frame; retried for ~3× ``WWT_ENGINE_START_S`` (an engine that is
        starting under load may take a while to import the SDK). None, with ``self.why``, when none came."""
        deadline = time.monotonic() + 3 * ipc.env_seconds("WWT_ENGINE_START_S", 20.0)
        while time.monotonic() < deadline:
            try:
                sock = obtain(self.loc, start=True, purpose="mcp")
            except EngineStuck as exc:
                self.why = str(exc)
                return None
            if sock is None:
                self.why = "no engine came up"
                time.sleep(0.2)
                continue
            try:
                reply = _exchange(sock, self.hello, max(1.0, deadline - time.monotonic()), self.loc,
                                  ipc.MAX_REQUEST_BYTES)
            except EngineStuck as exc:
                sock.close()
                self.why = str(exc)
                return None
            except (OSError, ipc.FrameError) as exc:
                sock.close()
                self.why = f"handshake failed: {exc}"
                time.sleep(0.2)
                continue
            if reply is not None and reply.get("ok"):
                sock.settimeout(None)
                return sock
            sock.close()
            if reply is None:  # the engine went away during the handshake: try the next one
                self.why = "the engine closed the connection"
                time.sleep(0.2)
                continue
            if "skew" in reply:
                wait_for_exit(self.loc, SKEW_EXIT_WAIT_S)
                continue
            self.why = other_model(reply["settings"]) if "settings" in reply else str(reply.get("error"))[:200]
            return None
        return None

    def _track_request(self, line: bytes) -> None:
        try:
            msg = json.loads(line)
        except ValueError:
            return
        if not isinstance(msg, dict):
            return
        method = msg.get("method")
        if method == "initialize":
            self.init_line = line
        elif method == "notifications/initialized":
            self.initialized_line = line
        if method is not None and "id" in msg and method != "initialize":
            self.pending[_id_key(msg["id"])] = line

    def pump_stdin(self) -> None:
        stdin = sys.stdin.buffer
        while True:
            line = stdin.readline()
            if not line:
                break
            with self.lock:
                sock = self.sock
                if sock is None and (reply := self._answer_locally(line)) is not None:
                    self.out.write(reply)  # before any engine is there: nothing else writes to stdout yet
                    self.out.flush()
                    continue
                self._track_request(line)
            try:
                if sock is not None:
                    sock.sendall(line)
            except OSError:
                pass  # the reader side notices the dead engine and reconnects
        with self.lock:
            self.stdin_closed = True
            sock = self.sock
        try:
            if sock is not None:
                sock.shutdown(ipc.SHUT_WR)
        except OSError:
            pass

    def _answer_locally(self, line: bytes) -> bytes | None:
        """While no engine is connected yet (a cold start): the recorded answer to ``initialize`` or
        ``tools/list`` (``wwt.mcp_handshake``), so the agent sees wwt's tools at once; the engine gets the
        handshake when it is up (its answer swallowed). Called under ``self.lock``."""
        from wwt import mcp_handshake

        if self.init_answered and b'"initialize"' in line:
            return None  # a second initialize: the engine's to answer (an error)
        reply = mcp_handshake.local_reply(line)
        if reply is None:
            return None
        if b'"initialize"' in line and json.loads(line).get("method") == "initialize":
            self.init_line = line
            self.init_answered = True
        return reply

    def _deliver(self, line: bytes) -> None:
        try:
            msg = json.loads(line)
        except ValueError:
            msg = None
        if isinstance(msg, dict) and "id" in msg and "method" not in msg:
            key = _id_key(msg["id"])
            with self.lock:
                self.pending.pop(key, None)
                if self.swallow is not None and key == self.swallow:
                    self.swallow = None
                    return  # the answer to a replayed handshake: the agent already had one
                if self.init_line is not None and key == _id_key(json.loads(self.init_line).get("id")):
                    self.init_answered = True
        self.out.write(line)
        self.out.flush()

    def reconnect(self) -> bool:
        _note("the engine stopped; reconnecting this MCP session to a fresh one")
        sock = self.open()
        return sock is not None and self._switch_to(sock)

    def _switch_to(self, sock: socket.socket) -> bool:
        """Carry the session over to ``sock``: the handshake again (its answer swallowed) and every request
        still unanswered."""
        with self.lock:
            replay = [line for line in (self.init_line, self.initialized_line) if line is not None]
            replay += list(self.pending.values())
            if self.init_line is not None and self.init_answered:
                self.swallow = _id_key(json.loads(self.init_line).get("id"))
            try:
                for line in replay:
                    sock.sendall(line)
            except OSError:
                sock.close()
                return False
            self.sock = sock
            if self.stdin_closed:
                sock.shutdown(ipc.SHUT_WR)
        return True

    def serve_in_process(self) -> socket.socket:
        """A socket to an MCP server on a thread of this process: where the session goes when its engine is
        stopped (SIGSTOP keeps the connection open and answers nothing; it may stay so for hours)."""
        import socket as socket_module
        import threading

        ours, theirs = socket_module.socketpair()

        def serve() -> None:
            import anyio

            from wwt import mcp_server

            try:
                server = mcp_server.build_server()
                mcp_server.start_warm_up()
                anyio.run(mcp_server.serve_socket, server, theirs)
            except Exception as exc:  # noqa: BLE001 - one line for the agent's log, never a traceback
                _note(f"in-process MCP server failed: {type(exc).__name__}: {exc}")
            finally:
                theirs.close()

        threading.Thread(target=serve, name="wwt-mcp-in-process", daemon=True).start()
        self.in_process = True
        return ours

    def _engine_stopped(self) -> str | None:
        """Why the engine cannot answer the requests waiting on it, or None (nothing waits, or it may answer)."""
        with self.lock:
            waiting = bool(self.pending) and not self.in_process
        return ipc.engine_stuck(self.loc.lock_path) if waiting else None

    def start_pump(self) -> None:
        import threading

        threading.Thread(target=self.pump_stdin, name="wwt-mcp-stdin", daemon=True).start()

    def run(self) -> int:
        import select

        buffer = b""
        while True:
            sock = self.sock
            if sock is not None and not select.select([sock], [], [], STUCK_CHECK_S)[0]:
                why = self._engine_stopped()  # nothing came for a while: is anyone there to answer?
                if why is not None:
                    _note(f"{why}; serving this MCP session in-process")
                    sock.close()
                    if not self._switch_to(self.serve_in_process()):
                        return 1
                continue
            try:
                chunk = sock.recv(1 << 16) if sock is not None else b""
            except OSError:
                chunk = b""
            if chunk:
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    self._deliver(line + b"\n")
                continue
            with self.lock:
                done = self.stdin_closed
            if done:
                return 0
            buffer = b""
            if sock is not None:
                sock.close()
            if not self.reconnect():
                _note(f"no engine could take over this MCP session ({self.why}); it ends")
                return 1


def _id_key(value: Any) -> str:
    return json.dumps(value)


def mcp_pipe() -> int | None:
    """``wwt mcp`` through the engine: an exit code, or None to serve MCP in-process."""
    loc = location()
    if loc is None:
        return None
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = "/"
    env = {name: os.environ[name] for name in ipc.MCP_ENV if name in os.environ}
    hello = {"op": "mcp", "key": ipc.engine_key(), "settings": ipc.model_settings(), "protocol": ipc.PROTOCOL,
             "home": loc.home_path, "cwd": cwd, "env": env}
    pipe = _Pipe(loc, hello)
    pipe.start_pump()  # initialize and tools/list are answered while the engine starts (wwt.mcp_handshake)
    sock = pipe.open()
    if sock is None:
        _note(f"{pipe.why}; serving MCP in-process" if pipe.why.startswith("the engine ")
              else f"no engine ({pipe.why}); serving MCP in-process")
        sock = pipe.serve_in_process()
    if not pipe._switch_to(sock):
        _note("could not hand this MCP session to a server; it ends")
        return 1
    try:
        return pipe.run()
    except KeyboardInterrupt:
        return 0
    except Exception as exc:  # noqa: BLE001 - one line for the agent's log, never a traceback
        _note(f"MCP pipe failed: {type(exc).__name__}: {exc}")
        return 1
