"""The engine: one process per user and data dir holding the model, Kiwi, the store and both indexes warm.

Started on demand by a client (``python -m wwt.engine.server``), it takes ``<key>.lock`` first (so racing
starters leave exactly one engine), replaces a stale socket file, binds ``<key>.sock`` 0600 in the private
runtime folder and serves, one thread per connection, after checking that the peer runs as our uid:

- ``cli``: a ``wwt search|show|status`` command, run by the same ``wwt.cli`` code over the engine's one
  ``Memory`` with the client's folder, terminal and environment (``wwt.engine.context``); the reply carries its
  stdout, stderr and exit code.
- ``mcp``: after the handshake frame the connection is the agent's MCP byte stream; the ``mcp`` SDK serves one
  session on it with the same tools as the stdio server (``wwt.mcp_server``).
- ``status``, ``stop``, ``warm``, ``nudge`` (the hook queued work).

It also runs the hook's ingest queue itself (one ingest thread holding ``worker.lock``, the same
``worker.drain_once`` as the standalone worker) and exits after ``WWT_ENGINE_IDLE_S`` (default 600 s)
without a client, request or ingest. A client of a newer version (``ipc.engine_key``), or one naming a
model when it was started without one (``ipc.settings_verdict``), makes it exit so that client can start a
fresh one. A failing request is logged and answered with an error; the engine goes on. Logs go to the data
dir's ``ingest.log``."""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import json
import logging
import logging.handlers
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wwt.engine import context, ipc

DEFAULT_IDLE_S = 600.0
LOCK_WAIT_S = 3.0  # an engine that is exiting (version skew, stop) may still hold the lock a moment
STANDBY_WAIT_S = 12.0  # an engine a hook starts (--for ingest) waits this long: an exiting one may take its
# STOP_GRACE_S to let requests and the ingest thread finish, and the hook's row must not wait for the next hook
READ_TIMEOUT_S = 10.0  # a client has this long to send its whole request (not per byte: slow-loris); an MCP
# session as long for each message it has begun (idle between messages it may be for hours)
MAX_CONNECTIONS = 256  # connections served at once (MCP sessions included); more are refused at once
FD_RESERVE = 64  # descriptors kept for the engine's own files (indexes, SQLite, model, log) below the cap
ACCEPT_BACKOFF_S = 0.1  # after accept() fails for lack of memory: let connections finish
FLOOD_LOG_S = 10.0  # a flood is logged once per this long (with what it cost since), and when it is over
_RESOURCE_ERRNOS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
STOP_GRACE_S = 5.0
QUEUE_POLL_S = 2.0
SCAN_S = 300.0  # WWT_ENGINE_SCAN_S: how often agents without hooks are looked at (0: never)
SCAN_FIRST_S = 10.0  # the first look, after the engine has answered whoever started it
QUIET_WAIT_S = 5.0  # Kiwi and the MCP SDK wait at most this long for the first searches to be answered


def rss_bytes(pid: int | str = "self") -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def setup_logging(home: Path) -> logging.Logger:
    from wwt.worker import file_logger

    return file_logger("wwt.engine", home / "ingest.log", "engine")


def take_lock(path: Path, wait_s: float) -> int | None:
    """Our exclusive engine lock (held for life), or None when another engine keeps it past ``wait_s``."""
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.ftruncate(fd, 0)  # who holds it: a client tells a stopped engine from a busy one (ipc.engine_stuck)
            os.write(fd, f"{os.getpid()}\n".encode())
            return fd
        except OSError:
            if time.monotonic() >= deadline:
                os.close(fd)
                return None
            time.sleep(0.05)


def bind(path: Path) -> socket.socket:
    """Listen on ``path`` (0600 from the start). We hold the lock, so a file there is a dead engine's."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(64)
    return sock


class Engine:
    def __init__(self, loc: ipc.Location, listener: socket.socket, log: logging.Logger, purpose: str) -> None:
        from wwt import __version__, mcp_server
        from wwt.service import Memory

        self.loc = loc
        self.home = loc.home
        self.listener = listener
        self.log = log
        self.purpose = purpose
        self.key = ipc.engine_key()
        self.settings = ipc.model_settings()  # the model overrides it was started with (ipc.settings_verdict)
        self.version = os.environ.get("WWT_ENGINE_VERSION") or __version__
        self.idle_s = ipc.env_seconds("WWT_ENGINE_IDLE_S", DEFAULT_IDLE_S)
        self.started_at = time.time()
        self.started = time.monotonic()
        self.last_active = time.monotonic()
        self.lock = threading.Lock()
        self.active = 0
        self.mcp_conns: set[socket.socket] = set()
        self.requests = 0
        self.failures = 0
        self.ingesting = False
        self.stopping = threading.Event()
        self.nudged = threading.Event()
        self.warmed = threading.Event()
        self.socket_ino = os.stat(loc.socket).st_ino
        self.memory = Memory(self.home)
        self._mcp: Any = None
        self._height: int | None = None
        self._mcp_lock = threading.Lock()
        self.max_connections = connection_cap()
        self._flood: dict[str, int] = {}  # what a flood cost since it was last logged
        self._flood_logged = -FLOOD_LOG_S
        self._flood_seen = 0.0
        self._spare_fd: int | None = _spare_descriptor()  # given up to refuse a connection when out of them
        self.cli_busy = 0  # CLI requests being answered (``_first_answers_out``)
        context.SHARED["memory"] = self.memory
        context.install_routers()
        mcp_server._State.memory = self.memory  # MCP sessions in here use the engine's one Memory

    # ------------------------------------------------------------------------------------------ lifecycle

    def serve(self) -> int:
        threading.Thread(target=self.warm_up, name="wwt-engine-warm", daemon=True).start()
        threading.Thread(target=self.ingest_loop, name="wwt-engine-ingest", daemon=True).start()
        self.listener.settimeout(0.5)
        self.log.info("engine %s started for %s (idle exit after %.0fs, socket %s)", self.version, self.home,
                      self.idle_s, self.loc.socket)
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                self._flood_over()
                self._check_idle()
                continue
            except OSError as exc:
                if self.stopping.is_set():
                    break
                self._accept_failed(exc)
                continue
            with self.lock:
                full = self.active >= self.max_connections
                if not full:
                    self.active += 1
                    self.last_active = time.monotonic()
            if full:
                self._refuse(conn)
                continue
            conn.settimeout(READ_TIMEOUT_S)
            try:
                threading.Thread(target=self.handle, args=(conn,), name="wwt-engine-conn", daemon=True).start()
            except RuntimeError:  # no thread to be had: this connection is refused, the engine goes on
                with self.lock:
                    self.active -= 1
                self._refuse(conn)
        self._shutdown()
        return 0

    def _accept_failed(self, exc: OSError) -> None:
        """accept() failed: out of descriptors or memory under a flood (EMFILE…), or an aborted connection.
        Logged once per burst. Out of descriptors, the spare one is given up for a moment to take the waiting
        connection and refuse it (the client answers in-process at once instead of waiting in the backlog for a
        flood's connections to time out); otherwise the engine waits a moment for connections to finish."""
        name = errno.errorcode.get(exc.errno or 0, str(exc))
        self._note_flood(f"accept failed ({name})")
        if self._spare_fd is None:  # taken by another thread the last time it was given up
            self._spare_fd = _spare_descriptor()
        if exc.errno in (errno.EMFILE, errno.ENFILE) and self._spare_fd is not None:
            os.close(self._spare_fd)
            self._spare_fd = None
            try:
                conn, _ = self.listener.accept()
            except OSError:
                time.sleep(ACCEPT_BACKOFF_S)
            else:
                self._refuse(conn)
            self._spare_fd = _spare_descriptor()
        elif exc.errno in _RESOURCE_ERRNOS:
            time.sleep(ACCEPT_BACKOFF_S)
        elif exc.errno == errno.EBADF:  # the listener itself is gone
            self.stop("listening socket closed")

    def _note_flood(self, what: str) -> None:
        """Count one refused connection, failed accept or dropped slow client; log at most once per
        FLOOD_LOG_S with the counts since the last line (and once more when it is over: ``_flood_over``)."""
        now = time.monotonic()
        counts: dict[str, int] = {}
        active = 0
        with self.lock:
            self._flood[what] = self._flood.get(what, 0) + 1
            self._flood_seen = now
            due = now - self._flood_logged >= FLOOD_LOG_S
            if due:
                self._flood_logged = now
                counts, self._flood = self._flood, {}
                active = self.active
        if due:
            self.log.warning("flood: %s; %d connection(s) open (at most %d served at once)",
                             ", ".join(f"{k} ×{v}" for k, v in counts.items()), active, self.max_connections)

    def _flood_over(self) -> None:
        with self.lock:
            if not self._flood or time.monotonic() - self._flood_seen < FLOOD_LOG_S:
                return
            counts, self._flood = self._flood, {}
        self.log.info("flood over; since the last line: %s", ", ".join(f"{k} ×{v}" for k, v in counts.items()))

    def _refuse(self, conn: socket.socket) -> None:
        """Over the cap (or out of descriptors): one short reply (the client answers in-process) and the
        connection closed."""
        self._note_flood("refused (busy)")
        with contextlib.suppress(OSError):
            conn.settimeout(0.2)
            ipc.send(conn, {"ok": False, "error": "the engine is busy"})
        with contextlib.suppress(OSError):
            conn.close()

    def _check_idle(self) -> None:
        with self.lock:
            busy = self.active or self.ingesting
            idle_for = 0.0 if busy else time.monotonic() - self.last_active
        if idle_for >= self.idle_s:
            self.stop(f"idle for {idle_for:.0f}s")
        elif not self.home.exists():
            self.stop("the data dir is gone")
        else:
            try:
                ours = os.stat(self.loc.socket).st_ino == self.socket_ino
            except OSError:
                ours = False
            if not ours:
                self.stop("our socket file was removed or replaced")

    def stop(self, reason: str) -> None:
        if not self.stopping.is_set():
            self.log.info("engine stopping: %s", reason)
            self.stopping.set()
            self.nudged.set()
            with contextlib.suppress(OSError):
                self.listener.close()

    def _shutdown(self) -> None:
        with contextlib.suppress(OSError):
            if os.stat(self.loc.socket).st_ino == self.socket_ino:
                self.loc.socket.unlink()
        with contextlib.suppress(OSError):
            self.loc.info.unlink()
        with self.lock:
            conns = list(self.mcp_conns)
        for conn in conns:  # MCP pipes notice and move their session to the next engine
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + STOP_GRACE_S
        while time.monotonic() < deadline:
            with self.lock:
                if not self.active and not self.ingesting:
                    break
            time.sleep(0.05)
        self.log.info("engine exits after %d request(s)", self.requests)

    def warm_up(self) -> None:
        """Model and indexes first (what the first search needs), then Kiwi, then the MCP SDK — those two once
        the first searches are answered (``_first_answers_out``)."""
        from wwt import mcp_server
        from wwt.lexical import get_kiwi

        try:
            mcp_server.warm_up(kiwi=False)
            self._first_answers_out()
            with contextlib.suppress(Exception):  # a Korean query reports it when it needs Kiwi
                get_kiwi()
            self.mcp_server()  # the SDK (~1 s, ~35 MB): the next agent's handshake is then answered at once
            self.log.info("engine warm after %.1fs", time.monotonic() - self.started)
        except Exception:  # noqa: BLE001 - the requests report their own errors
            self.log.exception("warm-up failed")
        finally:
            self.warmed.set()

    def _first_answers_out(self) -> None:
        """Wait (at most QUIET_WAIT_S) until the CLI requests in flight are answered — and, in an engine a
        search started, until that search was. Kiwi's load holds the GIL for about a second and the MCP SDK's
        import takes another: a first English search answered meanwhile waited them out (issue 25)."""
        deadline = time.monotonic() + QUIET_WAIT_S
        while time.monotonic() < deadline and not self.stopping.is_set():
            with self.lock:
                busy = self.cli_busy or (self.purpose == "cli" and not self.requests)
            if not busy:
                return
            time.sleep(0.02)

    def mcp_server(self) -> Any:
        with self._mcp_lock:
            if self._mcp is None:
                from wwt.mcp_server import build_server

                self._mcp = build_server()
            return self._mcp

    # ------------------------------------------------------------------------------------------ requests

    def handle(self, conn: socket.socket) -> None:
        reply: dict[str, Any] | None = None
        cli = False
        try:
            peer = ipc.peer_uid(conn)
            if not ipc.peer_allowed(peer, os.getuid()):
                self.log.warning("refused a connection from uid %s", peer)
                return
            request = ipc.recv(conn, ipc.MAX_REQUEST_BYTES, deadline=time.monotonic() + READ_TIMEOUT_S)
            if request is None:
                return
            cli = request.get("op") == "cli"
            with self.lock:
                self.requests += 1
                self.cli_busy += cli
            key = str(request.get("key"))
            if key != self.key and ipc.newer_version(key, self.key):
                self.log.info("client of a newer wwt (%s, we are %s): exiting for a fresh engine", key[:80],
                              self.key)
                ipc.send(conn, {"ok": False, "skew": self.key})
                self.stop("version skew")
                return
            if key != self.key and request.get("op") not in ("nudge", "status", "stop"):  # those serve anyone
                reply = {"ok": False, "mismatch": self.key, "error": "the engine runs another wwt"}
                return
            if (verdict := self._settings_verdict(request)) == ipc.REPLACE:
                self.log.info("a client names a model and this engine was started without one: exiting for a "
                              "fresh engine")
                ipc.send(conn, {"ok": False, "skew": self.key})
                self.stop("model override")
                return
            if verdict == ipc.DIFFER:
                reply = {"ok": False, "mismatch": self.key, "settings": self.settings,
                         "error": "the engine runs another model"}
                return
            if "home" in request and os.path.realpath(str(request["home"])) != os.path.realpath(self.home):
                reply = {"ok": False, "error": "this engine serves another data dir"}  # a name clash: unlikely
                return
            op = request.get("op")
            if op == "mcp":
                self.serve_mcp(conn, request)
                return
            reply = self.dispatch(str(op), request)
        except ipc.FrameError as exc:
            reply = {"ok": False, "error": str(exc)}
        except TimeoutError:  # a client that sent nothing whole in time (slow-loris)
            self._note_flood("dropped a client that sent no whole request in time")
            return
        except ConnectionError:  # a client that left
            return
        except Exception as exc:  # noqa: BLE001 - one bad request never takes the engine down
            with self.lock:
                self.failures += 1
            self.log.exception("request failed")
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:500]}
        finally:
            if reply is not None:
                with contextlib.suppress(OSError):
                    ipc.send(conn, reply)
            with contextlib.suppress(OSError):
                conn.close()
            with self.lock:
                self.active -= 1
                self.cli_busy -= cli
                self.last_active = time.monotonic()

    def _settings_verdict(self, request: dict[str, Any]) -> str:
        """``ipc.settings_verdict`` for a request's model overrides; nudge/status/stop serve anyone."""
        given = request.get("settings")
        if request.get("op") in ("nudge", "status", "stop") or not isinstance(given, dict):
            return ipc.SAME
        return ipc.settings_verdict({str(k): str(v) for k, v in given.items()}, self.settings)

    def dispatch(self, op: str, request: dict[str, Any]) -> dict[str, Any]:
        if op == "cli":
            return self.serve_cli(request)
        if op == "status":
            return self.status()
        if op == "warm":
            self.warmed.wait(timeout=float(request.get("timeout", 120)))
            return self.status()
        if op == "nudge":
            self.nudged.set()
            return {"ok": True, "pid": os.getpid()}
        if op == "stop":
            reply = self.status()
            self.stop("asked to stop")
            return reply
        raise ValueError(f"unknown op {op[:40]!r}")

    def status(self) -> dict[str, Any]:
        with self.lock:
            clients = self.active - 1  # not counting the request asking
            idle_for = time.monotonic() - self.last_active
            info = {
                "ok": True, "pid": os.getpid(), "version": self.version, "key": self.key, "settings": self.settings,
                "data_dir": str(self.home), "socket": str(self.loc.socket), "started_at": self.started_at,
                "uptime_s": round(time.monotonic() - self.started, 1), "rss_bytes": rss_bytes(),
                "clients": clients, "mcp_sessions": len(self.mcp_conns), "requests": self.requests,
                "failures": self.failures, "idle_exit_s": self.idle_s, "ingesting": self.ingesting,
                "warm": self.warmed.is_set(), "started_for": self.purpose,
                "exits_in_s": None if clients or self.ingesting else round(max(0.0, self.idle_s - idle_for), 1),
            }
        return info

    def serve_cli(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run a served ``wwt`` command exactly as a one-shot process would, output captured."""
        from rich.console import Console

        from wwt.engine.client import CLI_SERVED

        argv = request.get("argv")
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise ValueError("argv must be a non-empty list of strings")
        if argv[0] not in CLI_SERVED:
            return {"ok": False, "error": f"the engine does not run {argv[0][:40]!r}"}
        env = {str(k): str(v) for k, v in dict(request.get("env") or {}).items()}
        width = context.sane_width(int(request.get("width") or 80))
        out, err = io.StringIO(), io.StringIO()

        height = self._console_height()

        def console(buffer: io.StringIO, color: Any, tty_key: str) -> Console:
            tty = env.get(tty_key) == "1"
            return Console(file=buffer, highlight=False, width=width, height=height, force_terminal=tty,
                           color_system=color if tty else None, no_color="NO_COLOR" in env, legacy_windows=False)

        client = context.Client(cwd=str(request.get("cwd") or "/"), env=env,
                                out=console(out, request.get("color"), "__tty_stdout"),
                                err=console(err, request.get("color_err"), "__tty_stderr"),
                                stdout=out, stderr=err)
        token = context.CURRENT.set(client)
        code: int = 0
        _kiwi_early(argv)
        try:
            from wwt import cli

            cli.main(list(argv))
        except SystemExit as exc:
            if isinstance(exc.code, int):
                code = exc.code
            elif exc.code is not None:
                err.write(f"{exc.code}\n")
                code = 1
        finally:
            context.CURRENT.reset(token)
        return {"ok": True, "code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}

    def _console_height(self) -> int:
        """The height a request's console would find (the engine's own: no terminal, so ``LINES`` or 25),
        worked out once: given only a width, rich asks the OS for the terminal size on every line it prints."""
        if self._height is None:
            from rich.console import Console

            self._height = Console(file=io.StringIO()).size.height
        return self._height

    def serve_mcp(self, conn: socket.socket, hello: dict[str, Any]) -> None:
        """One MCP session over this connection, with the agent's folder and session env."""
        import anyio

        from wwt.mcp_server import serve_socket

        server = self.mcp_server()
        env = {str(k): str(v) for k, v in dict(hello.get("env") or {}).items() if k in ipc.MCP_ENV}
        client = context.Client(cwd=str(hello.get("cwd") or "/"), env=env)
        conn.settimeout(None)
        ipc.send(conn, {"ok": True, "pid": os.getpid()})
        with self.lock:
            self.mcp_conns.add(conn)
        token = context.CURRENT.set(client)
        try:
            anyio.run(serve_socket, server, _MessageDeadline(conn, READ_TIMEOUT_S, self._note_flood))
        except Exception:  # noqa: BLE001 - a broken session ends, the engine stays
            self.log.exception("MCP session failed")
        finally:
            context.CURRENT.reset(token)
            with self.lock:
                self.mcp_conns.discard(conn)

    # ------------------------------------------------------------------------------------------ ingest

    def ingest_loop(self) -> None:
        """The hook's queue, drained here: waits for a nudge (or polls), debounces like the worker, ingests
        through a second ``Memory`` so searches keep going on the first one meanwhile. With the queue empty it
        back-fills pending vectors (issue 14) in slices a new queue item interrupts, as the worker does."""
        from wwt import worker
        from wwt.ingest import is_paused
        from wwt.store import Store

        debounce_s = ipc.env_seconds("WWT_WORKER_DEBOUNCE_S", 2.0)
        max_wait_s = ipc.env_seconds("WWT_WORKER_MAX_WAIT_S", 10.0)
        scan_s = ipc.env_seconds("WWT_ENGINE_SCAN_S", SCAN_S)
        next_scan = time.monotonic() + min(SCAN_FIRST_S, scan_s)
        store: Any = None
        lock_fd: int | None = None
        vectors_checked_at: int | None = None  # change counter when no vector was found pending
        try:
            while not self.stopping.is_set():
                announced = self.nudged.wait(timeout=QUEUE_POLL_S)  # a hook (or the engine's own start) woke it
                self.nudged.clear()
                if self.stopping.is_set() or not self.memory.has_data():
                    continue
                try:
                    if store is None:
                        store = Store.open(self.memory.store_path)
                    scanned_only = False  # the queue holds only what the engine's own scan found
                    if scan_s > 0 and time.monotonic() >= next_scan:
                        next_scan = time.monotonic() + scan_s
                        if lock_fd is None:
                            lock_fd = self._own_queue(store)
                        if lock_fd is not None and not is_paused(self.home):
                            scanned_only = store.queue_size() == 0 and not announced
                            self._queue_changed_sources(store)
                    queued = store.queue_size()
                    if queued == 0 and vectors_checked_at == store.change_counter():
                        continue  # nothing queued, nothing to embed since the last look
                    if lock_fd is None:
                        lock_fd = self._own_queue(store)
                        if lock_fd is None:
                            continue  # a standalone worker holds it and does the work
                    if queued == 0:
                        if is_paused(self.home):
                            continue  # `wwt ingest --pause`: no writer, no second copy of the indexes opened
                        counter = store.change_counter()
                        if not store.has_pending_vectors():
                            vectors_checked_at = counter
                            continue
                        self._write(lambda writer, queue=store: worker.backfill_once(writer, queue, self.log)
                                    and queue.queue_size() == 0, activity=False)
                        continue
                    waiting_since = time.monotonic()
                    while not self.stopping.is_set():
                        quiet = worker.seconds_since_last_hook(self.home)
                        pause = worker.debounce_pause(quiet, time.monotonic() - waiting_since, debounce_s,
                                                      max_wait_s)
                        if not pause:
                            break
                        time.sleep(pause)
                    self._write(lambda writer, queue=store: worker.drain_once(writer, queue, self.log),
                                activity=not scanned_only)
                except Exception:  # noqa: BLE001 - rows stay queued; the next turn retries
                    self.log.exception("ingest turn failed")
                    time.sleep(QUEUE_POLL_S)
        finally:
            if store is not None:
                store.close()

    def _own_queue(self, store: Any) -> int | None:
        """Become the queue's worker (``worker.lock``), re-queueing what a killed worker had claimed; None while
        a standalone worker holds it (it does the work)."""
        lock_fd = _try_worker_lock(self.home)
        if lock_fd is not None and (released := store.release_claims()):
            self.log.warning("re-queued %d item(s) a killed worker had claimed", released)
        return lock_fd

    def _queue_changed_sources(self, store: Any) -> None:
        """Agents no hook may announce (``ingest.SCANNED_PLATFORMS``: Cursor, OpenCode, Copilot CLI, Cline, Roo Code,
        Continue, Goose) are scanned: their default locations are looked at every WWT_ENGINE_SCAN_S seconds and
        what changed since it was archived is queued like a hook's file."""
        from wwt.ingest import changed_sources

        changed = changed_sources(store)
        for path, platform in changed:
            store.enqueue(str(path), platform, None)
        if changed:
            self.log.info("queued %d changed file(s) of agents without hooks", len(changed))

    def _write(self, step: Callable[[Any], bool], activity: bool = True) -> None:
        """Run ``step`` on a writer ``Memory`` until it says there is nothing more to do right away; the engine
        counts as busy (no idle exit) meanwhile. Only work someone asked for (``activity``: a hook's files)
        restarts the idle countdown: what the engine's own scan of hookless agents found, and vector back-fill,
        must not keep it resident for ever while such an agent keeps writing."""
        from wwt.service import Memory

        with self.lock:
            self.ingesting = True
        writer = Memory(self.home)
        try:
            while not self.stopping.is_set() and step(writer):
                pass
        finally:
            writer.close()
            with self.lock:
                self.ingesting = False
                if activity:
                    self.last_active = time.monotonic()


def _try_worker_lock(home: Path) -> int | None:
    """``worker.lock`` for the engine's life, so hooks see a worker running and never start a second one."""
    import fcntl

    from wwt.hook import WORKER_LOCK

    fd = os.open(home / WORKER_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def _kiwi_early(argv: list[str]) -> None:
    """A command with Korean (or Han) text needs Kiwi: start loading it now, beside the model's load, instead of
    after it (a cold Korean search waited for the two in turn)."""
    from wwt import lexical

    if lexical._kiwi is None and any(lexical._HANGUL_OR_HAN.search(arg) for arg in argv[1:]):
        threading.Thread(target=_quietly, args=(lexical.get_kiwi,), name="wwt-engine-kiwi", daemon=True).start()


def _load_kiwi() -> None:
    from wwt import lexical

    lexical.get_kiwi()


def _preload_model() -> None:
    """Load the model (sentencepiece + ONNX: ~1 s in native code that lets the GIL go) while the engine imports
    the rest and opens the indexes; the warm-up search then finds it in ``load_embedder``'s cache. Only a
    model already on disk: a download, or a model that cannot load, is left to the warm-up, which reports it."""
    from wwt.embedder import load_embedder
    from wwt.model_source import resolve_model

    resolve_model(allow_download=False)
    load_embedder()


def _quietly(step: Callable[[], Any]) -> None:
    with contextlib.suppress(Exception):  # whoever needs it next reports the failure
        step()


def write_info(loc: ipc.Location, purpose: str) -> None:
    from wwt import __version__

    info = {"pid": os.getpid(), "version": os.environ.get("WWT_ENGINE_VERSION") or __version__,
            "key": ipc.engine_key(), "data_dir": str(loc.home), "started_at": time.time(), "started_for": purpose}
    tmp = loc.info.with_name(f"{loc.info.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(info, fh)
    os.replace(tmp, loc.info)


def _raise_descriptor_limit() -> None:
    """Open-file soft limit up to the hard one (often 1,024 → 4,096+ on Linux; macOS starts at 256 and refuses
    more than its per-process maximum, so smaller steps are tried there): every client holds one."""
    try:
        import resource
    except ImportError:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return
    ceiling = 1 << 16 if hard == resource.RLIM_INFINITY else hard
    for want in (ceiling, 10240, 4096):
        if soft < want <= ceiling:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
                return
            except (ValueError, OSError):
                continue


def connection_cap() -> int:
    """Connections served at once: MAX_CONNECTIONS, fewer when the descriptor limit leaves no room for them
    beside the engine's own files (FD_RESERVE), so a flood meets a busy reply before the engine runs out."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, ValueError, OSError):
        return MAX_CONNECTIONS
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(8, min(MAX_CONNECTIONS, soft - FD_RESERVE))


def _spare_descriptor() -> int | None:
    """One descriptor held in reserve: out of them (EMFILE), the engine closes it to accept a waiting connection
    and refuse it, instead of leaving it in the backlog."""
    try:
        return os.open(os.devnull, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None


class _MessageDeadline(io.RawIOBase):
    """An MCP connection's incoming bytes, read without a deadline between messages (agents keep a session open
    for hours) but with ``limit_s`` for the rest of a message once its first byte has come: a client sending a
    byte now and then cannot hold the session's thread for ever (slow-loris). Past it the session reads the end
    of its input and closes. Messages are JSON lines; the ``wwt mcp`` pipe sends each whole."""

    def __init__(self, conn: socket.socket, limit_s: float, note: Callable[[str], None]) -> None:
        super().__init__()
        self.conn = conn
        self.limit_s = limit_s
        self.note = note
        self.begun: float | None = None  # when the unfinished message's first byte came
        self.expired = False

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.conn.fileno()

    def readinto(self, buffer: Any) -> int:
        import select

        if self.expired:
            return 0
        if self.begun is not None:
            left = self.begun + self.limit_s - time.monotonic()
            poller = select.poll()  # not select(): descriptors past 1,024 once the limit was raised
            poller.register(self.conn.fileno(), select.POLLIN)
            if left <= 0 or not poller.poll(left * 1000):
                self.expired = True
                self.note("dropped an MCP client that sent no whole message in time")
                return 0
        n = self.conn.recv_into(buffer)
        if n:
            got = memoryview(buffer)[:n].tobytes()
            if got.endswith(b"\n"):
                self.begun = None  # between messages: idle for as long as it likes
            elif self.begun is None or b"\n" in got:
                self.begun = time.monotonic()  # a new message has begun
        return n

    def makefile(self, mode: str) -> Any:
        """What ``mcp_server.serve_socket`` reads and writes: this reader for ``rb``, the socket's own for ``wb``."""
        return io.BufferedReader(self) if "r" in mode else self.conn.makefile(mode)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wwt.engine.server")
    parser.add_argument("--for", dest="purpose", default="cli", choices=("cli", "mcp", "ingest"))
    parser.add_argument("--kiwi", action="store_true", help="the command that starts it is Korean: load Kiwi now")
    args = parser.parse_args(argv)
    os.environ.pop("WWT_REDACT", None)  # whoever started it: hook-queued transcripts are always redacted
    _raise_descriptor_limit()
    try:
        loc = ipc.Location().prepare()
    except ipc.EngineUnavailable:
        return 1
    lock_fd = take_lock(loc.lock, STANDBY_WAIT_S if args.purpose == "ingest" else LOCK_WAIT_S)
    if lock_fd is None:
        return 0  # another engine serves this data dir
    home = loc.home
    if not home.exists():
        home.mkdir(parents=True, exist_ok=True)
        home.chmod(0o700)
    threading.Thread(target=_quietly, args=(_preload_model,), name="wwt-engine-model", daemon=True).start()
    if args.kiwi:  # a Korean first command: Kiwi's load (~1 s) beside the model's, not after the command arrives
        threading.Thread(target=_quietly, args=(_load_kiwi,), name="wwt-engine-kiwi", daemon=True).start()
    log = setup_logging(home)
    try:
        listener = bind(loc.socket)
        write_info(loc, args.purpose)
        engine = Engine(loc, listener, log, args.purpose)
    except Exception:  # noqa: BLE001 - detached: the log is the only place to tell
        log.exception("engine failed to start")
        return 1
    signal.signal(signal.SIGTERM, lambda *_: engine.stop("SIGTERM"))
    threading.excepthook = lambda hook: log.error("thread %s crashed: %s", getattr(hook.thread, "name", "?"),
                                                  hook.exc_value)
    code = engine.serve()
    logging.shutdown()
    os._exit(code)  # threads blocked in reads (MCP sessions) must not keep a finished engine alive


if __name__ == "__main__":
    sys.exit(main())
