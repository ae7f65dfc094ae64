"""The resident engine (wwt/engine/) as users and agents meet it: real `wwt` processes, a real engine process,
real MCP client sessions over stdio, real kills. Every test runs in its own short runtime folder and stops
every engine it started (no engine outlives a test)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES, claimed_queue_rows
from engine_helpers import alive, engine_pids, kill_engines_in
from mcp_helpers import text_of, wwt_mcp_session

from wwt.engine import ipc

CLAUDE = REAL_FIXTURES / "claude-code"
CODEX = REAL_FIXTURES / "codex-cli"
GO_SESSION = "e9f146fa-3b20-48d0-9be4-d99ca901cae4"  # VibeCodingTracker: go.mod toolchain, in Chinese
CODEX_GO_SESSION = "01996135-afde-7911-97f0-d863511eca56"
SPOTTER = "55604662-cf2a-4331-851a-ec234028f8ca"  # "mix phx.server doesnt seem to start"
CLIENT_HEAVY = ("onnxruntime", "kiwipiepy", "numpy", "tantivy", "hnswlib", "sentencepiece", "typer", "rich", "mcp")
CLIENT_START_UP_FREE = ("pathlib", "typing", "socket", "selectors", "threading", "subprocess", "struct", "hashlib",
                        "tempfile", "shutil", "logging", "wwt.cli")


def _ingest(home: Path, model_dir: Path, *paths: Path) -> None:
    env = dict(os.environ, WWT_HOME=str(home), WWT_MODEL_DIR=str(model_dir), WWT_ENGINE="off")
    subprocess.run([sys.executable, "-m", "wwt", "ingest", *map(str, paths)], env=env, check=True,
                   capture_output=True, timeout=600)


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory, model_dir: Path) -> Path:
    """A data dir with a few real conversations, ingested in-process once for the module."""
    home = tmp_path_factory.mktemp("engine") / "data"
    _ingest(home, model_dir, CLAUDE / "VibeCodingTracker__claude_code.jsonl", CLAUDE / "spotter__short.jsonl",
            CLAUDE / "agentlogs__crud.jsonl", CODEX / "VibeCodingTracker__codex.jsonl")
    return home


@pytest.fixture
def runtime() -> Path:
    """A short private runtime folder for this test's engines; every engine in it is stopped afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="wwt-rt-"))
    yield folder
    kill_engines_in(folder)
    shutil.rmtree(folder, ignore_errors=True)


def engine_env(home: Path, runtime: Path, model_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("WWT_DEBUG", "WWT_ENGINE_VERSION")}
    env.update(WWT_HOME=str(home), WWT_RUNTIME_DIR=str(runtime), WWT_MODEL_DIR=str(model_dir), WWT_ENGINE="on",
               WWT_ENGINE_IDLE_S="60", NO_COLOR="1", COLUMNS="120", HOME=str(home.parent))
    env.update(extra)
    return env


def wwt(*args: str, env: dict[str, str], cwd: Path | None = None, timeout: float = 300,
        python_args: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *python_args, "-m", "wwt", *args], capture_output=True, text=True,
                          env=env, cwd=str(cwd or "/"), stdin=subprocess.DEVNULL, timeout=timeout)


def location(env: dict[str, str]) -> ipc.Location:
    return ipc.Location(Path(env["WWT_HOME"]), Path(env["WWT_RUNTIME_DIR"]))


def raw_call(env: dict[str, str], request: dict, timeout: float = 30) -> dict | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.connect(str(location(env).socket))
    try:
        ipc.send(sock, request)
        return ipc.recv(sock, ipc.MAX_REPLY_BYTES)
    finally:
        sock.close()


def status_of(env: dict[str, str]) -> dict:
    proc = wwt("engine", "status", "--json", env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def quick_status(env: dict[str, str]) -> dict:
    """The engine's status straight from its socket ({} while there is none): fast enough to catch a short
    ingest turn, which a `wwt engine status` process under load can miss."""
    try:
        return raw_call(env, {"op": "status", "key": ipc.engine_key(env)}, timeout=5) or {}
    except (OSError, ValueError, ipc.FrameError):
        return {}


def start_engine(env: dict[str, str]) -> dict:
    proc = wwt("engine", "start", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return status_of(env)


def wait_for(predicate, timeout: float = 60.0, every: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)
    return False


def off(env: dict[str, str]) -> dict[str, str]:
    return dict(env, WWT_ENGINE="off")


# --------------------------------------------------------------------------------------------- CLI


def test_a_search_starts_the_engine_and_answers_exactly_like_the_in_process_cli(archive, runtime, model_dir):
    env = engine_env(archive, runtime, model_dir)
    queries = [("search", "--all", "go.mod toolchain version"), ("search", "--all", "고랭 버전", "--json"),
               ("search", "--all", "phoenix server does not start", "-n", "2"),
               ("show", GO_SESSION[:8], "-n", "4"), ("status",), ("search", "--all", "x", "--limit", "0"),
               ("search", "--project", "nope", "x")]
    first = wwt(*queries[0], env=env)
    assert first.returncode == 0, first.stderr
    assert GO_SESSION in first.stdout
    [pid] = engine_pids(runtime)
    assert alive(pid)
    for args in queries:
        through_engine = wwt(*args, env=env)
        in_process = wwt(*args, env=off(env))
        assert (through_engine.returncode, through_engine.stdout, through_engine.stderr) == (
            in_process.returncode, in_process.stdout, in_process.stderr), args
    assert engine_pids(runtime) == [pid]  # one engine served them all
    assert status_of(env)["requests"] >= len(queries)


def test_the_project_scope_comes_from_the_clients_folder_not_the_engines(archive, runtime, model_dir, tmp_path):
    env = engine_env(archive, runtime, model_dir)
    spotter = tmp_path / "spotter"  # a folder named like the archived project: the default scope
    spotter.mkdir()
    elsewhere = tmp_path / "unrelated"
    elsewhere.mkdir()
    here = wwt("search", "server start", env=env, cwd=spotter)
    assert here.returncode == 0 and SPOTTER in here.stdout, here.stderr
    assert "VibeCodingTracker" not in here.stdout and "agentlogs" not in here.stdout  # spotter only
    there = wwt("search", "server start", env=env, cwd=elsewhere)
    assert there.returncode == 1 and "no sessions for project 'unrelated'" in there.stderr


def test_a_relative_wwt_home_is_the_clients_folder_also_inside_the_engine(archive, runtime, model_dir, tmp_path):
    # `WWT_HOME=data wwt search` in the folder that holds ./data: the engine (started from `/`) must serve that
    # archive; the same relative name run in another folder is another, empty data dir, with its own engine.
    shutil.copytree(archive, tmp_path / "here" / "data")
    (tmp_path / "there").mkdir()
    env = engine_env(archive, runtime, model_dir, WWT_HOME="data")
    here = wwt("search", "--all", "mix phx.server", env=env, cwd=tmp_path / "here")
    assert here.returncode == 0 and SPOTTER in here.stdout, here.stderr
    there = wwt("search", "--all", "mix phx.server", env=env, cwd=tmp_path / "there")
    assert there.returncode == 1 and "no data yet" in there.stderr and str(tmp_path / "there" / "data") in there.stderr
    assert not (tmp_path / "there" / "data").exists()  # a search never creates a data dir


def test_a_relative_runtime_folder_is_the_clients_folder_also_for_the_engine(archive, runtime, model_dir, tmp_path):
    # `WWT_RUNTIME_DIR=rt`: the engine is started from `/`; it must bind its socket in <client folder>/rt, where
    # the client waits for it — not in /rt, which left the client waiting WWT_ENGINE_START_S for nothing.
    here = tmp_path / "here"
    here.mkdir()
    env = engine_env(archive, runtime, model_dir, WWT_RUNTIME_DIR="rt", WWT_ENGINE_START_S="600")
    try:
        proc = wwt("search", "--all", "mix phx.server", env=env, cwd=here, timeout=120)
        assert proc.returncode == 0 and SPOTTER in proc.stdout, proc.stderr
        assert engine_pids(here / "rt")  # the engine that answered lives in the client's rt folder
    finally:
        kill_engines_in(here / "rt")


def _imported(stderr: str) -> set[str]:
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_a_warm_client_imports_no_model_no_kiwi_no_numpy(archive, runtime, model_dir):
    env = engine_env(archive, runtime, model_dir)
    start_engine(env)
    proc = wwt("search", "--all", "고랭 버전", env=env, python_args=("-X", "importtime"))
    assert proc.returncode == 0 and CODEX_GO_SESSION in proc.stdout
    imported = {name.split(".")[0] for name in _imported(proc.stderr)}
    assert imported.isdisjoint(CLIENT_HEAVY), imported & set(CLIENT_HEAVY)
    # Nor the standard library a socket round trip does not need: a warm `wwt search` is mostly start-up.
    # (Counted beyond what the bare interpreter imports here: an editable install's finder loads pathlib.)
    floor = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], capture_output=True, text=True,
                           env=env, cwd="/", check=True)
    extra = _imported(proc.stderr) - _imported(floor.stderr)
    assert extra.isdisjoint(CLIENT_START_UP_FREE), extra & set(CLIENT_START_UP_FREE)


def test_racing_clients_start_exactly_one_engine(archive, runtime, model_dir):
    env = engine_env(archive, runtime, model_dir)
    procs = [subprocess.Popen([sys.executable, "-m", "wwt", "search", "--all", "JOKE.md"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/")
             for _ in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [e for _, e in outs]
    assert all("8122657c" in out for out, _ in outs)
    assert len([p for p in engine_pids(runtime) if alive(p)]) == 1
    assert status_of(env)["requests"] >= 3


def test_with_the_engine_off_nothing_is_started(archive, runtime, model_dir):
    env = off(engine_env(archive, runtime, model_dir))
    proc = wwt("search", "--all", "JOKE.md", env=env)
    assert proc.returncode == 0 and "8122657c" in proc.stdout
    assert list(runtime.iterdir()) == []
    assert "engine disabled" in wwt("engine", "status", env=env).stdout


def test_engine_status_and_stop(archive, runtime, model_dir):
    env = engine_env(archive, runtime, model_dir)
    assert "no engine running" in wwt("engine", "status", env=env).stdout
    info = start_engine(env)
    assert info["warm"] and info["pid"] in engine_pids(runtime) and info["rss_bytes"] > 50_000_000
    assert info["data_dir"] == str(archive) and info["clients"] == 0 and 0 < info["exits_in_s"] <= 60
    text = wwt("engine", "status", env=env).stdout
    assert f"engine pid {info['pid']}" in text and "RSS" in text and "exits after" in text
    stopped = wwt("engine", "stop", env=env)
    assert f"engine {info['pid']} stopped" in stopped.stdout
    assert wait_for(lambda: not alive(info["pid"]), 10)
    assert not location(env).socket.exists()


def test_an_idle_engine_exits_by_itself(archive, runtime, model_dir):
    env = engine_env(archive, runtime, model_dir, WWT_ENGINE_IDLE_S="2")
    pid = start_engine(env)["pid"]
    assert wait_for(lambda: not alive(pid), 30)
    assert not location(env).socket.exists() and not location(env).info.exists()


def test_reset_stops_the_engine_so_nothing_is_served_from_a_deleted_archive(tmp_path, runtime, model_dir):
    home = tmp_path / "data"
    _ingest(home, model_dir, CLAUDE / "agentlogs__crud.jsonl")
    env = engine_env(home, runtime, model_dir)
    pid = start_engine(env)["pid"]
    assert "8122657c" in wwt("search", "--all", "JOKE.md", env=env).stdout
    assert wwt("reset", "--yes", env=env).returncode == 0
    assert wait_for(lambda: not alive(pid), 10)
    after = wwt("search", "--all", "JOKE.md", env=env)
    assert after.returncode == 1 and "no data yet" in after.stderr and after.stdout == ""


# --------------------------------------------------------------------------------------------- faults


def test_engine_killed_during_a_search_the_client_answers_in_process(archive, runtime, model_dir):
    env = engine_env(archive, runtime, model_dir)
    loc = location(env).prepare()
    engine = subprocess.Popen([sys.executable, "-m", "wwt.engine.server"], env=env, cwd="/",
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(loc.socket.exists, 30)
        # the first search waits for the engine's warm-up (seconds): kill it while the request is in there
        client = subprocess.Popen([sys.executable, "-m", "wwt", "search", "--all", "go.mod toolchain"], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/")
        assert wait_for(lambda: raw_call(env, {"op": "status", "key": ipc.engine_key(env)})["clients"] >= 1, 30)
        engine.send_signal(signal.SIGKILL)
        out, err = client.communicate(timeout=300)
    finally:
        engine.kill()
        engine.wait()
    assert client.returncode == 0 and GO_SESSION in out
    assert len(err.strip().splitlines()) == 1 and "engine stopped during the request" in err


def test_a_stopped_engine_is_not_waited_for(archive, runtime, model_dir, tmp_path):
    # SIGSTOP (a debugger, `kill -STOP`, a frozen process): the kernel still accepts connections on its socket,
    # but nothing answers. With timeouts far longer than the subprocess may run, the CLI and `wwt mcp` must
    # notice at once and answer in-process (before: WWT_ENGINE_TIMEOUT_S, 120 s by default, per command).
    env = engine_env(archive, runtime, model_dir, WWT_ENGINE_TIMEOUT_S="3600", WWT_ENGINE_START_S="3600")
    pid = start_engine(env)["pid"]
    os.kill(pid, signal.SIGSTOP)
    try:
        for args, expect in ((("search", "--all", "go.mod toolchain"), GO_SESSION), (("show", SPOTTER[:8]), SPOTTER)):
            proc = wwt(*args, env=env, timeout=120)
            assert proc.returncode == 0 and expect in proc.stdout, proc.stderr
            assert proc.stderr.strip() == f"wwt: the engine (pid {pid}) is stopped; answering in-process"

        async def body(session) -> None:
            found = await session.call_tool("search_all", {"query": "mix phx.server doesnt seem to start"})
            assert not found.is_error and SPOTTER in text_of(found)

        world = {"env": env, "root": tmp_path}
        asyncio.run(asyncio.wait_for(wwt_mcp_session(world, body), timeout=120))
        assert f"the engine (pid {pid}) is stopped; serving MCP in-process" in (tmp_path / "server-stderr.log").read_text()
    finally:
        os.kill(pid, signal.SIGCONT)
        os.kill(pid, signal.SIGKILL)
    assert wait_for(lambda: not alive(pid), 10)

    # A stopped engine that had taken the lock but not yet bound its socket (a dead one's file is still there):
    # nothing will ever listen, and no other engine can start while it holds the lock.
    loc = location(env)
    stand_in = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, signal, sys; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600); "
        "fcntl.flock(fd, fcntl.LOCK_EX); os.write(fd, str(os.getpid()).encode()); os.kill(os.getpid(), signal.SIGSTOP)"
    ), loc.lock_path])
    try:
        assert wait_for(lambda: ipc.process_state(stand_in.pid) == "stopped", 30)
        if not loc.socket.exists():  # the killed engine's socket file is normally still there
            dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            dead.bind(loc.socket_path)
            dead.close()
        proc = wwt("search", "--all", "JOKE.md", env=env, timeout=120)
        assert proc.returncode == 0 and "8122657c" in proc.stdout, proc.stderr
        assert proc.stderr.strip() == f"wwt: the engine (pid {stand_in.pid}) is stopped; answering in-process"
    finally:
        stand_in.kill()
        stand_in.wait()


def test_a_stale_socket_file_is_replaced(archive, runtime, model_dir):
    env = engine_env(archive, runtime, model_dir)
    loc = location(env).prepare()
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(loc.socket))  # a socket file nobody listens on, as a killed engine leaves it
    dead.close()
    proc = wwt("search", "--all", "JOKE.md", env=env)
    assert proc.returncode == 0 and "8122657c" in proc.stdout and proc.stderr == ""
    assert status_of(env)["pid"] in engine_pids(runtime)


def test_an_engine_of_another_version_is_replaced(archive, runtime, model_dir):
    env = engine_env(archive, runtime, model_dir)
    old = start_engine(dict(env, WWT_ENGINE_VERSION="1.0.9"))
    assert old["version"] == "1.0.9"
    proc = wwt("search", "--all", "JOKE.md", env=env)
    assert proc.returncode == 0 and "8122657c" in proc.stdout and proc.stderr == ""
    assert wait_for(lambda: not alive(old["pid"]), 10)
    new = status_of(env)
    assert new["pid"] != old["pid"] and new["version"] != "1.0.9"


def test_clients_of_an_older_wwt_or_other_settings_answer_in_process_and_leave_the_engine_alone(
        archive, runtime, model_dir):
    """Two kinds of clients (say, an agent's MCP registered with other settings, and the terminal) must never
    keep replacing each other's engine: only a newer wwt makes an engine step down."""
    env = engine_env(archive, runtime, model_dir)
    newer = start_engine(dict(env, WWT_ENGINE_VERSION="99.0"))
    other_settings = dict(env, WWT_REDACT="0")
    for client_env in (env, other_settings, env):
        proc = wwt("search", "--all", "JOKE.md", env=client_env)
        assert proc.returncode == 0 and "8122657c" in proc.stdout and proc.stderr == ""
    assert alive(newer["pid"]) and status_of(env)["pid"] == newer["pid"]
    assert status_of(env)["requests"] >= 3  # it was asked each time, and answered "not me"


def test_which_version_is_newer():
    assert ipc.newer_version("2.0.0.dev0|a", "1.0.9|a")
    assert ipc.newer_version("2.1.0|a", "2.0.9|b")
    assert not ipc.newer_version("2.0.0|a", "2.0.0|b")  # same version, other settings
    assert not ipc.newer_version("1.0.9|a", "2.0.0.dev0|a")


def test_a_request_that_breaks_its_handler_does_not_break_the_engine(archive, runtime, model_dir):
    env = engine_env(archive, runtime, model_dir)
    pid = start_engine(env)["pid"]
    key = ipc.engine_key(env)
    bad = raw_call(env, {"op": "cli", "key": key, "argv": [{"not": "a string"}]})
    assert bad["ok"] is False and "argv" in bad["error"]
    assert raw_call(env, {"op": "no-such-op", "key": key})["ok"] is False
    assert raw_call(env, {"op": "cli", "key": key, "argv": ["reset", "--yes"]})["ok"] is False  # not served
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(location(env).socket))
    sock.sendall((ipc.MAX_REQUEST_BYTES + 1).to_bytes(4, "big"))  # an oversized frame is refused unread
    assert "limit" in ipc.recv(sock, ipc.MAX_REPLY_BYTES)["error"]
    sock.close()
    proc = wwt("search", "--all", "JOKE.md", env=env)
    assert proc.returncode == 0 and "8122657c" in proc.stdout
    assert status_of(env)["pid"] == pid


def test_socket_and_runtime_folder_are_private(archive, runtime, model_dir):
    runtime.chmod(0o755)  # a loose folder is tightened before use
    env = engine_env(archive, runtime, model_dir)
    start_engine(env)
    assert stat.S_IMODE(runtime.stat().st_mode) == 0o700
    assert stat.S_IMODE(location(env).socket.stat().st_mode) == 0o600
    assert stat.S_IMODE(location(env).lock.stat().st_mode) == 0o600


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to own a folder as another user")
def test_a_runtime_folder_owned_by_someone_else_is_not_used(archive, runtime, model_dir):
    foreign = runtime / "foreign"
    foreign.mkdir(mode=0o700)
    os.chown(foreign, 65534, 65534)
    env = engine_env(archive, foreign, model_dir)
    proc = wwt("search", "--all", "JOKE.md", env=env)
    assert proc.returncode == 0 and "8122657c" in proc.stdout  # answered in-process
    assert list(foreign.iterdir()) == []


def test_only_our_uid_may_talk_to_the_engine():
    assert ipc.peer_allowed(1000, 1000)
    assert not ipc.peer_allowed(1001, 1000)
    assert not ipc.peer_allowed(0, 1000)
    a, b = socket.socketpair(socket.AF_UNIX)
    try:
        assert ipc.peer_uid(a) == os.getuid()
    finally:
        a.close()
        b.close()


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to run a client as another user")
def test_a_client_of_another_uid_is_refused(archive, runtime, model_dir):
    env = engine_env(archive, runtime, model_dir)
    start_engine(env)
    loc = location(env)
    runtime.chmod(0o755)  # open the doors the folder and socket modes normally keep shut
    loc.socket.chmod(0o777)
    probe = ("import socket, sys\n"
             "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
             "try:\n    s.sendall(b'\\x00\\x00\\x00\\x02{}'); got = s.recv(100)\n"
             "except OSError:\n    got = b''\n"
             "print(repr(got))\n")
    python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable  # one "nobody" may run
    proc = subprocess.run([python, "-c", probe, str(loc.socket)], capture_output=True, text=True, cwd="/",
                          timeout=60, preexec_fn=lambda: (os.setgid(65534), os.setuid(65534)))
    assert proc.returncode == 0 and proc.stdout.strip() == "b''", proc.stdout + proc.stderr  # closed, no answer
    assert "refused a connection from uid 65534" in (archive / "ingest.log").read_text()


# --------------------------------------------------------------------------------------------- hook + ingest


def _stats(home: Path) -> tuple[int, int, int]:
    from wwt.store import Store

    with Store.open(home / "wwt.sqlite3") as store:
        s = store.stats()
        return s["sessions"], s["messages"], store.queue_size()


def _hook(env: dict[str, str], transcript: Path, session_id: str) -> float:
    payload = json.dumps({"session_id": session_id, "transcript_path": str(transcript), "cwd": "/",
                          "hook_event_name": "Stop"})
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "wwt", "hook", "claude-code"], input=payload, text=True,
                          env=env, capture_output=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == ""
    return time.perf_counter() - started


def test_the_hook_starts_the_engine_which_ingests_the_queue(tmp_path, runtime, model_dir):
    home = tmp_path / "data"
    _ingest(home, model_dir, CLAUDE / "agentlogs__crud.jsonl")
    env = engine_env(home, runtime, model_dir, WWT_WORKER_DEBOUNCE_S="0.2")
    transcript = tmp_path / f"{SPOTTER}.jsonl"
    shutil.copy(CLAUDE / "spotter__short.jsonl", transcript)
    _hook(env, transcript, SPOTTER)
    assert wait_for(lambda: _stats(home)[2] == 0 and _stats(home)[0] == 2, 120, 0.3), (home / "ingest.log").read_text()
    assert "started engine" in (home / "ingest.log").read_text()
    proc = wwt("search", "--all", "mix phx.server", env=env)
    assert SPOTTER in proc.stdout and proc.stderr == ""
    assert len([p for p in engine_pids(runtime) if alive(p)]) == 1  # the search used the hook's engine
    assert not (home / "worker.spawn").exists()  # no separate worker process


def test_a_hook_during_an_engine_exit_is_not_stranded(tmp_path, runtime, model_dir):
    # An engine that is exiting (idle, `wwt engine stop`, version skew) has removed its socket and stopped its
    # ingest thread, but holds its lock for up to its stop grace. A hook in that window used to take it for an
    # engine starting up and leave its row for the next hook — the user's last turn was not archived. Here a
    # stand-in holds the lock for 2 s without listening, as such an engine does, then exits.
    home = tmp_path / "data"
    _ingest(home, model_dir, CLAUDE / "agentlogs__crud.jsonl")
    env = engine_env(home, runtime, model_dir, WWT_WORKER_DEBOUNCE_S="0", WWT_ENGINE_SCAN_S="0")
    loc = location(env).prepare()
    exiting = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600); "
        "fcntl.flock(fd, fcntl.LOCK_EX); os.write(fd, str(os.getpid()).encode()); print(flush=True); time.sleep(2)"
    ), loc.lock_path], stdout=subprocess.PIPE)
    try:
        exiting.stdout.readline()  # it holds the lock now
        transcript = tmp_path / f"{SPOTTER}.jsonl"
        shutil.copy(CLAUDE / "spotter__short.jsonl", transcript)
        _hook(env, transcript, SPOTTER)
        assert exiting.poll() is None, "the stand-in must still hold the lock when the hook runs"
    finally:
        exiting.wait()
    assert wait_for(lambda: _stats(home)[2] == 0 and _stats(home)[0] == 2, 90, 0.3), (home / "ingest.log").read_text()


def test_engine_killed_during_an_ingest_loses_nothing(tmp_path, runtime, model_dir):
    logs = sorted(CLAUDE.glob("*.jsonl"))
    expected_home = tmp_path / "expected"
    _ingest(expected_home, model_dir, *logs)
    home = tmp_path / "data"
    _ingest(home, model_dir, logs[0])
    env = engine_env(home, runtime, model_dir, WWT_WORKER_DEBOUNCE_S="0")
    copies = []
    for log in logs:
        copies.append(tmp_path / "logs" / log.name)
        copies[-1].parent.mkdir(exist_ok=True)
        shutil.copy(log, copies[-1])
    for i, copy in enumerate(copies):
        _hook(env, copy, f"s{i}")
    db = home / "wwt.sqlite3"
    assert wait_for(lambda: claimed_queue_rows(db, timeout=0.5) > 0 or quick_status(env).get("ingesting"), 120, 0.01)
    victim = engine_pids(runtime)[0]
    os.kill(victim, signal.SIGKILL)
    assert wait_for(lambda: not alive(victim), 10)
    _hook(env, copies[0], "s0")  # the next turn's hook starts a fresh engine, which finishes the queue
    assert wait_for(lambda: _stats(home)[2] == 0, 300, 0.3)
    assert wait_for(lambda: _stats(home)[:2] == _stats(expected_home)[:2], 120, 0.3)
    assert wwt("search", "--all", "mix phx.server", env=env).stdout.count(SPOTTER) >= 1


def test_the_engine_back_fills_the_vectors_a_first_ingest_left_pending(tmp_path, runtime, model_dir):
    """Issue 14: phase 1 leaves vectors pending (here: paused); once resumed, the resident engine embeds them
    itself while its queue is empty, without a separate worker process."""
    from wwt import ingest as ingest_mod
    from wwt.store import Store

    home = tmp_path / "data"
    home.mkdir()
    ingest_mod.set_paused(home, True)
    _ingest(home, model_dir, CLAUDE / "spotter__short.jsonl", CLAUDE / "agentlogs__crud.jsonl")

    def progress() -> tuple[int, int]:
        with Store.open(home / "wwt.sqlite3") as store:
            return store.vector_progress()

    done, total = progress()
    assert done == 0 < total
    ingest_mod.set_paused(home, False)
    env = engine_env(home, runtime, model_dir)
    start_engine(env)
    assert wait_for(lambda: progress() == (total, total), 300, 0.5), (home / "ingest.log").read_text()
    assert "back-filled" in (home / "ingest.log").read_text()
    assert not (home / "worker.spawn").exists()
    proc = wwt("search", "--all", "mix phx.server", env=env)
    assert SPOTTER in proc.stdout and proc.stderr == ""


# --------------------------------------------------------------------------------------------- MCP


async def _mcp_session(env: dict[str, str], cwd: Path, body) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "wwt", "mcp"], env=env, cwd=str(cwd))
    with open(cwd / "mcp-stderr.log", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await body(session)


def test_four_agents_share_one_engine_with_their_own_folder_and_session(archive, runtime, model_dir, tmp_path):
    env = engine_env(archive, runtime, model_dir)
    folders = []
    for name in ("spotter", "claudecode", "agentlogs", "elsewhere"):  # the first two are archived projects
        (tmp_path / name).mkdir()
        folders.append(tmp_path / name)
    seen: dict[str, tuple[str, str, str]] = {}

    async def agent(index: int, folder: Path) -> None:
        agent_env = dict(env, CLAUDE_SESSION_ID=SPOTTER) if index == 0 else env

        async def body(session) -> None:
            tools = sorted(t.name for t in (await session.list_tools()).tools)
            assert tools == ["get_session", "handoff_session", "ingest_session", "search_all", "search_memory"]
            scoped = text_of(await session.call_tool("search_memory", {"query": "server start"}))
            everywhere = text_of(await session.call_tool("search_all", {"query": "mix phx.server"}))
            page = text_of(await session.call_tool("get_session", {"session_id": GO_SESSION[:8], "end": 2}))
            seen[folder.name] = (scoped, everywhere, page)

        await _mcp_session(agent_env, folder, body)

    async def all_agents() -> None:
        await asyncio.wait_for(asyncio.gather(*(agent(i, f) for i, f in enumerate(folders))), timeout=300)

    asyncio.run(all_agents())
    assert len([p for p in engine_pids(runtime) if alive(p)]) == 1
    assert "in project spotter" in seen["spotter"][0]
    assert SPOTTER not in seen["spotter"][1]  # that agent said it is session SPOTTER: never search yourself
    assert SPOTTER in seen["agentlogs"][1] and SPOTTER in seen["elsewhere"][1]
    assert "in project claudecode" in seen["claudecode"][0] and "in project spotter" not in seen["claudecode"][0]
    assert all(page.startswith(f"session {GO_SESSION}") for _, _, page in seen.values())


def test_an_mcp_session_survives_its_engine_being_killed(archive, runtime, model_dir, tmp_path):
    env = engine_env(archive, runtime, model_dir)

    async def body(session) -> None:
        first = await session.call_tool("search_all", {"query": "JOKE.md"})
        assert "8122657c" in text_of(first)
        [pid] = engine_pids(runtime)
        os.kill(pid, signal.SIGKILL)
        assert wait_for(lambda: not alive(pid), 10)
        again = await session.call_tool("search_all", {"query": "mix phx.server"})
        assert not again.is_error and SPOTTER in text_of(again)
        assert [p for p in engine_pids(runtime) if alive(p)] != [pid]

    asyncio.run(asyncio.wait_for(_mcp_session(env, tmp_path, body), timeout=300))
    assert "reconnecting this MCP session" in (tmp_path / "mcp-stderr.log").read_text()


def test_an_mcp_session_whose_engine_is_stopped_is_answered_in_process(archive, runtime, model_dir, tmp_path):
    # SIGSTOP in the middle of an agent's session (a debugger, `kill -STOP`, a laptop's frozen cgroup): the
    # connection stays open and nothing answers. The session's next request must still be answered — by
    # `wwt mcp` itself — instead of hanging the agent's tool call for as long as the engine stays stopped.
    env = engine_env(archive, runtime, model_dir, WWT_ENGINE_TIMEOUT_S="3600", WWT_ENGINE_START_S="3600")
    stopped: list[int] = []

    async def body(session) -> None:
        first = await session.call_tool("search_all", {"query": "JOKE.md"})
        assert "8122657c" in text_of(first)
        [pid] = engine_pids(runtime)
        os.kill(pid, signal.SIGSTOP)
        stopped.append(pid)
        again = await asyncio.wait_for(session.call_tool("search_all", {"query": "mix phx.server"}), 120)
        assert not again.is_error and SPOTTER in text_of(again)
        page = await asyncio.wait_for(session.call_tool("get_session", {"session_id": GO_SESSION[:8], "end": 2}), 60)
        assert text_of(page).startswith(f"session {GO_SESSION}")

    try:
        asyncio.run(asyncio.wait_for(_mcp_session(env, tmp_path, body), timeout=300))
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
    [pid] = stopped
    assert f"the engine (pid {pid}) is stopped; serving this MCP session in-process" in (
        tmp_path / "mcp-stderr.log").read_text()


def test_the_mcp_pipe_process_is_small(archive, runtime, model_dir, tmp_path):
    env = engine_env(archive, runtime, model_dir)
    start_engine(env)
    rss: list[int] = []

    async def body(session) -> None:
        assert "8122657c" in text_of(await session.call_tool("search_all", {"query": "JOKE.md"}))
        pipes = [p for p in _pids_running("wwt", "mcp") if _runtime_of(p) == str(runtime)]
        rss.extend(_rss(p) for p in pipes)

    asyncio.run(asyncio.wait_for(_mcp_session(env, tmp_path, body), timeout=300))
    assert rss and max(rss) < 40 * 1024 * 1024, rss


def _pids_running(*argv_tail: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                args = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            words = [a.decode(errors="replace") for a in args if a]
            if words[-len(argv_tail):] == list(argv_tail) and any("python" in w for w in words[:1]):
                found.append(int(entry.name))
    return found


def _runtime_of(pid: int) -> str | None:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return None
    for item in environ:
        if item.startswith(b"WWT_RUNTIME_DIR="):
            return item.split(b"=", 1)[1].decode()
    return None


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


OPENCODE_DB = Path(__file__).parent / "fixtures" / "opencode" / "db" / "opencode.db"


def test_the_engine_picks_up_new_messages_of_an_agent_without_hooks(tmp_path, runtime, model_dir):
    """OpenCode announces nothing (wwt has no hook for it): the engine looks at its store where OpenCode keeps
    it and archives what was written since — here a message still in the database's WAL."""
    db = tmp_path / "share" / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    shutil.copy(OPENCODE_DB, db)
    home = tmp_path / "data"
    _ingest(home, model_dir, db)  # what `wwt setup` archived
    env = engine_env(home, runtime, model_dir, XDG_DATA_HOME=str(tmp_path / "share"), WWT_ENGINE_SCAN_S="1",
                     WWT_WORKER_DEBOUNCE_S="0.2")
    start_engine(env)
    app = sqlite3.connect(db)
    app.execute("PRAGMA journal_mode=WAL")
    app.execute("PRAGMA wal_autocheckpoint=0")
    session = "ses_4a1b2c3d4e5fAbCdEfGhIjKl"
    with app:
        app.execute("INSERT INTO message VALUES ('msg_07', ?, 1767261800000, 1767261800000, ?)",
                    (session, json.dumps({"role": "user", "time": {"created": 1767261800000}})))
        app.execute("INSERT INTO part VALUES ('prt_0701', 'msg_07', ?, 1767261800000, 1767261800000, ?)",
                    (session, json.dumps({"type": "text", "text": "pin the flaky orbit test to a fixed quokka seed"})))

    def archived() -> bool:
        with sqlite3.connect(home / "wwt.sqlite3") as conn:
            return conn.execute("SELECT COUNT(*) FROM messages WHERE text LIKE '%quokka seed%'").fetchone()[0] > 0

    assert wait_for(archived, 120, 0.5), (home / "ingest.log").read_text()
    app.close()
    hits = json.loads(wwt("search", "--all", "fixed quokka seed", "--json", env=env).stdout)
    assert hits["results"][0]["session_id"] == session


def test_an_agent_without_hooks_that_keeps_writing_does_not_keep_the_engine_resident(tmp_path, runtime, model_dir):
    """The engine archives what a hookless agent writes, but that is its own errand, not someone using wwt: with
    OpenCode writing a message every second and nobody searching, it still leaves after its idle time."""
    db = tmp_path / "share" / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    shutil.copy(OPENCODE_DB, db)
    home = tmp_path / "data"
    _ingest(home, model_dir, db)
    env = engine_env(home, runtime, model_dir, XDG_DATA_HOME=str(tmp_path / "share"), WWT_ENGINE_SCAN_S="1",
                     WWT_WORKER_DEBOUNCE_S="0.2", WWT_ENGINE_IDLE_S="6")
    pid = int(start_engine(env)["pid"])
    app = sqlite3.connect(db)
    session = "ses_4a1b2c3d4e5fAbCdEfGhIjKl"

    def archived(n: int) -> bool:
        with sqlite3.connect(home / "wwt.sqlite3") as conn:
            return conn.execute("SELECT COUNT(*) FROM messages WHERE text LIKE ?", (f"%wombat note {n}%",)).fetchone()[0] > 0

    deadline = time.monotonic() + 90
    written = 0
    while alive(pid) and time.monotonic() < deadline:
        written += 1
        stamp = 1767261800000 + written * 1000
        with app:
            app.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (f"msg_w{written}", session, stamp, stamp,
                        json.dumps({"role": "user", "time": {"created": stamp}})))
            app.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (f"prt_w{written}", f"msg_w{written}", session,
                        stamp, stamp, json.dumps({"type": "text", "text": f"keep the wombat note {written} short"})))
        time.sleep(1.0)
    app.close()
    assert not alive(pid), f"the engine was still running after {written} writes in 90 s"
    assert archived(1)  # it did archive what it found meanwhile
