"""One engine per user and data dir, whatever environment an agent starts wwt with (issue 25).

Codex starts its MCP servers with a minimal environment — a few names such as HOME, PATH, USER, LANG, plus
what the server's registration sets (``wwt setup`` registers WWT_HOME, and WWT_MODEL_DIR only when the user
had it then) —, no XDG_RUNTIME_DIR. Four engines of ~600 MB for one data dir were seen. Here real clients with
such environments (no WWT_RUNTIME_DIR: the real address) meet real engines, and the test counts the engine
processes serving the data dir from /proc."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES
from engine_helpers import alive
from mcp_helpers import text_of, wwt_mcp_session
from test_engine import _ingest

from wwt.engine import ipc

JOKE_SESSION = "8122657c"  # agentlogs__crud.jsonl: the session that mentions JOKE.md


@pytest.fixture
def home(tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch):
    """A data dir with one real conversation; every engine serving it is stopped afterwards."""
    monkeypatch.delenv("WWT_RUNTIME_DIR", raising=False)  # the address a user's clients really compute
    data = tmp_path / "data"
    _ingest(data, model_dir, REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl")
    yield data
    for pid in engines_serving(data):
        os.kill(pid, signal.SIGCONT)
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while engines_serving(data) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in engines_serving(data):
        os.kill(pid, signal.SIGKILL)


def engines_serving(data: Path) -> list[int]:
    """Live engine processes whose data dir is ``data``, found by their command line and environment."""
    found = []
    wanted = f"WWT_HOME={data}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"wwt.engine.server" in argv and wanted in environ and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def terminal_env(data: Path, model_dir: Path, tmp_path: Path, tag: str) -> dict[str, str]:
    """A desktop terminal: everything the test runs with, its own XDG_RUNTIME_DIR and TMPDIR, the model named."""
    xdg = tmp_path / f"xdg-{tag}"
    xdg.mkdir(mode=0o700, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("WWT_RUNTIME_DIR", "WWT_DEBUG", "WWT_ENGINE_VERSION")}
    env.update(WWT_HOME=str(data), WWT_MODEL_DIR=str(model_dir), WWT_ENGINE="on", XDG_RUNTIME_DIR=str(xdg),
               TMPDIR=str(xdg), HOME=str(data.parent), NO_COLOR="1", COLUMNS="120")
    return env


def minimal_env(data: Path, **registered: str) -> dict[str, str]:
    """`env -i` plus what an agent like Codex passes through and what the registration sets: no
    XDG_RUNTIME_DIR, no TMPDIR, no WWT_MODEL_DIR (HF_HUB_OFFLINE only so nothing here reaches a network)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(data.parent), "USER": "root",
           "LANG": "C.UTF-8", "WWT_HOME": str(data), "HF_HUB_OFFLINE": "1"}
    env.update(registered)
    return env


def wwt(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wwt", *args], capture_output=True, text=True, env=env,
                          cwd=str(cwd), stdin=subprocess.DEVNULL, timeout=300)


def engine_status(env: dict[str, str], cwd: Path) -> dict:
    proc = wwt("engine", "status", "--json", env=env, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def wait_for(predicate, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def mcp_search_in_engine(env: dict[str, str], root: Path) -> tuple[str, list[str]]:
    """A real MCP session under ``env``: the tool's answer, and which heavy libraries the `wwt mcp` process
    itself had loaded while it answered (none: the engine answered)."""
    seen: dict[str, object] = {}

    async def body(session) -> None:
        seen["text"] = text_of(await session.call_tool("search_all", {"query": "JOKE.md"}))
        pipes = [pid for pid in _pids_of("-m", "wwt", "mcp") if _env_of(pid).get("WWT_HOME") == env["WWT_HOME"]]
        assert pipes, "the wwt mcp process was not found"
        maps = "".join(Path(f"/proc/{pid}/maps").read_text() for pid in pipes)
        seen["loaded"] = [lib for lib in ("onnxruntime", "kiwipiepy", "sentencepiece", "tantivy") if lib in maps]

    asyncio.run(asyncio.wait_for(wwt_mcp_session({"env": env, "root": root}, body), timeout=300))
    return str(seen["text"]), list(seen["loaded"])  # type: ignore[arg-type]


def _pids_of(*argv_tail: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = [a.decode(errors="replace") for a in (entry / "cmdline").read_bytes().split(b"\0") if a]
            except OSError:
                continue
            if argv[-len(argv_tail):] == list(argv_tail):
                found.append(int(entry.name))
    return found


def _env_of(pid: int) -> dict[str, str]:
    try:
        items = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return {}
    return dict(item.decode(errors="replace").split("=", 1) for item in items if b"=" in item)


def test_a_minimal_environment_reaches_the_engine_a_terminal_started(home, model_dir, tmp_path):
    terminal = terminal_env(home, model_dir, tmp_path, "a")
    first = wwt("search", "--all", "JOKE.md", env=terminal, cwd=tmp_path)
    assert first.returncode == 0 and JOKE_SESSION in first.stdout, first.stderr
    [engine] = engines_serving(home)

    codex = minimal_env(home)  # registered before the user set WWT_MODEL_DIR: only WWT_HOME
    text, loaded = mcp_search_in_engine(codex, tmp_path)
    assert JOKE_SESSION in text
    assert loaded == [], f"wwt mcp answered in-process (loaded {loaded}) instead of through the engine"
    by_codex = wwt("search", "--all", "JOKE.md", env=codex, cwd=tmp_path)
    assert by_codex.returncode == 0 and JOKE_SESSION in by_codex.stdout and by_codex.stderr == ""

    other_terminal = terminal_env(home, model_dir, tmp_path, "b")  # another XDG_RUNTIME_DIR
    again = wwt("search", "--all", "JOKE.md", env=other_terminal, cwd=tmp_path)
    assert again.returncode == 0 and JOKE_SESSION in again.stdout and again.stderr == ""
    assert engines_serving(home) == [engine]
    assert engine_status(codex, tmp_path)["requests"] >= 4  # every client above was served by it


def test_an_engine_started_from_a_minimal_environment_hands_over_to_a_client_that_names_the_model(
        home, model_dir, tmp_path):
    """The hook or Codex may start the engine first, with no WWT_MODEL_DIR: a client that names the model
    gets an engine with it (the old one steps down), and the minimal clients then use that one — never two."""
    codex = minimal_env(home)
    first = wwt("search", "--all", "JOKE.md", env=codex, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    [started_bare] = engines_serving(home)

    terminal = terminal_env(home, model_dir, tmp_path, "a")
    named = wwt("search", "--all", "JOKE.md", env=terminal, cwd=tmp_path)
    assert named.returncode == 0 and JOKE_SESSION in named.stdout and named.stderr == ""
    assert wait_for(lambda: not alive(started_bare), 15)
    [engine] = engines_serving(home)
    assert engine_status(terminal, tmp_path)["settings"] == {"WWT_MODEL_DIR": str(model_dir)}

    text, loaded = mcp_search_in_engine(codex, tmp_path)
    assert JOKE_SESSION in text and loaded == []
    assert engines_serving(home) == [engine]


def test_a_client_naming_another_model_says_so_and_leaves_the_engine_alone(home, model_dir, tmp_path):
    terminal = terminal_env(home, model_dir, tmp_path, "a")
    assert wwt("search", "--all", "JOKE.md", env=terminal, cwd=tmp_path).returncode == 0
    [engine] = engines_serving(home)
    elsewhere = tmp_path / "model-copy"
    elsewhere.symlink_to(model_dir, target_is_directory=True)  # another path: the user's second override
    other = dict(terminal, WWT_MODEL_DIR=str(elsewhere))
    proc = wwt("search", "--all", "JOKE.md", env=other, cwd=tmp_path)
    assert proc.returncode == 0 and JOKE_SESSION in proc.stdout  # answered in-process, with its own model
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and str(model_dir) in lines[0] and "wwt engine stop" in lines[0], proc.stderr
    assert engines_serving(home) == [engine]


def test_model_overrides_decide_only_between_explicit_settings():
    named = {"WWT_MODEL_DIR": "/models/e5"}
    assert ipc.settings_verdict({}, named) == ipc.SAME  # a minimal environment takes the engine as it is
    assert ipc.settings_verdict(named, named) == ipc.SAME
    assert ipc.settings_verdict(named, {}) == ipc.REPLACE  # explicit beats none: converges, never ping-pong
    assert ipc.settings_verdict(named, {"WWT_MODEL_DIR": "/models/other"}) == ipc.DIFFER
    assert ipc.engine_key({"WWT_MODEL_DIR": "/x"}) == ipc.engine_key({})  # not part of the key


# ------------------------------------------------------------------- runtime folder taken by another user (24)

AS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not AS_ROOT, reason="simulating another local user needs chown (run as root)")


def planted(path: Path) -> Path:
    """A folder another local user (nobody) made where ours belongs, open to all as such a folder would be."""
    import pwd

    nobody = pwd.getpwnam("nobody")
    path.mkdir(mode=0o777)
    path.chmod(0o777)
    os.chown(path, nobody.pw_uid, nobody.pw_gid)
    return path


@needs_root
def test_a_data_dir_too_long_for_a_socket_falls_back_to_the_users_cache_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("WWT_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(ipc, "shared_runtime_dir", lambda: str(planted(tmp_path / "wwt-planted")))
    data = tmp_path / ("d" * 90)  # <data dir>/run/<key>.sock would pass the 108-byte limit of a socket path
    data.mkdir(mode=0o700)
    loc = ipc.Location(str(data))
    assert loc.dir_path == ipc.user_runtime_dir() and "another user" in (loc.passed_over or "")
    assert len(os.fsencode(loc.socket_path)) <= ipc.MAX_SOCKET_PATH


@needs_root
def test_doctor_says_where_the_engine_went_and_when_it_has_nowhere_to_go(tmp_path, monkeypatch):
    from wwt import doctor

    monkeypatch.delenv("WWT_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("WWT_ENGINE", "on")
    shared = str(planted(tmp_path / "wwt-planted"))
    monkeypatch.setattr(ipc, "shared_runtime_dir", lambda: shared)
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    monkeypatch.setenv("WWT_HOME", str(data))
    [moved] = doctor.check_runtime()
    assert moved.status == doctor.WARN and shared in moved.message and str(data / "run") in moved.message

    long_data = tmp_path / ("d" * 90)
    long_data.mkdir(mode=0o700)
    monkeypatch.setenv("WWT_HOME", str(long_data))
    monkeypatch.setattr(ipc, "user_runtime_dir", lambda: str(planted(tmp_path / "cache-planted")))
    [nowhere] = doctor.check_runtime()
    assert nowhere.status == doctor.WARN and nowhere.message.startswith("no engine: ") and shared in nowhere.message


@needs_root
def test_a_runtime_folder_that_is_not_ours_is_named_by_engine_start_and_doctor(home, tmp_path):
    foreign = planted(tmp_path / "rt")
    env = dict(terminal_env(home, Path(os.environ["WWT_MODEL_DIR"]), tmp_path, "a"), WWT_RUNTIME_DIR=str(foreign))
    start = wwt("engine", "start", env=env, cwd=tmp_path)
    assert start.returncode == 1 and f"no engine can run here: runtime folder {foreign}" in start.stdout, start
    doctor = wwt("doctor", env=env, cwd=tmp_path)
    assert "no engine:" in doctor.stdout and str(foreign) in doctor.stdout, doctor.stdout  # it said nothing
    search = wwt("search", "--all", "JOKE.md", env=env, cwd=tmp_path)  # still answered, in-process
    assert search.returncode == 0 and JOKE_SESSION in search.stdout
    assert list(foreign.iterdir()) == []
