"""The engine under a flood from its own user (issue 24): thousands of connections that send nothing, and
slow-loris clients that send a byte now and then. The engine must stay up, log what happened, drop the
connections that hold it, and searches must still be answered."""

from __future__ import annotations

import contextlib
import resource
import socket
import subprocess
import sys
import time

from _shared import REAL_FIXTURES
from engine_helpers import alive, engine_pids
from test_engine import _ingest, engine_env, location, runtime, wait_for, wwt  # noqa: F401

ENGINE_NOFILE = 400  # the engine's descriptor limit in this test, so the flood really runs it out (EMFILE)


def flooded(log) -> bool:
    """The engine logged the flood: accept() out of descriptors, or its connection cap reached."""
    text = log.read_text()
    return "accept failed" in text or "refusing more" in text


def _low_nofile() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (ENGINE_NOFILE, ENGINE_NOFILE))


def _search(env: dict[str, str], limit_fds: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wwt", "search", "--all", "JOKE.md"], capture_output=True,
                          text=True, env=env, cwd="/", stdin=subprocess.DEVNULL, timeout=300,
                          preexec_fn=_low_nofile if limit_fds else None)


def test_two_thousand_connections_and_fifty_slow_loris_clients_do_not_stop_the_engine(tmp_path, runtime, model_dir):  # noqa: F811
    home = tmp_path / "data"
    _ingest(home, model_dir, REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl")
    env = engine_env(home, runtime, model_dir, WWT_ENGINE_IDLE_S="120")
    first = _search(env, limit_fds=True)  # the engine it starts inherits the low descriptor limit
    assert first.returncode == 0 and "JOKE" in first.stdout, first.stderr
    [pid] = [p for p in engine_pids(runtime) if alive(p)]
    path = location(env).socket_path
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    flood: list[socket.socket] = []
    loris: list[socket.socket] = []
    try:
        connected = 0
        log = home / "ingest.log"
        deadline = time.monotonic() + 90
        # connect until the engine has run out of descriptors (it logs the failed accept) or 2,000 are open;
        # in waves, so the listen backlog drains between them however slowly a loaded machine lets it
        while connected < 2000 and time.monotonic() < deadline:
            for _ in range(100):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.setblocking(False)
                try:
                    s.connect(path)
                    connected += 1
                    flood.append(s)
                except OSError:  # the backlog is full: the kernel's refusal, not the engine's
                    s.close()
            time.sleep(0.1)
            if flooded(log) and connected > ENGINE_NOFILE // 2:
                break
        assert flooded(log), connected  # out of descriptors, or at its connection cap: either way it said so
        assert alive(pid)
        for _ in range(50):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(1)
            with contextlib.suppress(OSError):
                s.connect(path)
                s.send(b"\x00")  # the first byte of a frame header, then almost nothing
            loris.append(s)
        during = _search(env)
        assert during.returncode == 0 and "JOKE" in during.stdout, during.stderr
        assert alive(pid)
        started = time.monotonic()
        dropped = 0
        while time.monotonic() - started < 25 and dropped < len(loris):
            dropped = 0
            for s in loris:
                try:
                    s.send(b"\x00")  # one byte every second: the engine must not wait for the rest forever
                    s.setblocking(False)
                    if s.recv(64) == b"":
                        dropped += 1
                except (BlockingIOError, TimeoutError):
                    pass
                except OSError:
                    dropped += 1
                finally:
                    s.settimeout(1)
            time.sleep(1)
        assert dropped == len(loris), f"{dropped} of {len(loris)} slow clients dropped"
    finally:
        for s in flood + loris:
            s.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert alive(pid)
    assert wait_for(lambda: _search(env).returncode == 0, 60, 1)
    after = wwt("engine", "status", env=env)
    assert str(pid) in after.stdout, after.stdout + after.stderr  # the same engine, still serving
    assert flooded(log)
