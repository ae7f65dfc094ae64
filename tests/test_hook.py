"""The hook entry point as the agents run it (a fresh process fed the agent's real stdin JSON), and the
background worker it starts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES

from wwt.hook import HookInputError, find_codex_rollout, normalise_platform, parse_payload, transcript_of
from wwt.setup.common import our_handlers
from wwt.setup.plan import run as run_setup
from wwt.store import Store

REAL = REAL_FIXTURES
CLAUDE_LOG = REAL / "claude-code" / "spotter__short.jsonl"
CLAUDE_SESSION = "55604662-cf2a-4331-851a-ec234028f8ca"
HEAVY = ("onnxruntime", "sentencepiece", "kiwipiepy", "tantivy", "hnswlib", "numpy", "typer", "rich")
HOOK_LIMIT_S = 1.5  # generous on this shared 2-core machine; the real figure is in benchmarks/hook.py


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    e = dict(os.environ)
    e.update(HOME=str(home), WWT_HOME=str(tmp_path / "data"), WWT_WORKER_DEBOUNCE_S="0.3", WWT_WORKER_IDLE_S="2")
    e.pop("CLAUDE_CONFIG_DIR", None)
    e.pop("CODEX_HOME", None)
    return e


def claude_stop_payload(transcript: Path, cwd: Path) -> str:
    # the shape Claude Code sends to a Stop hook (agent-log-formats §1.5)
    return json.dumps({
        "session_id": CLAUDE_SESSION, "transcript_path": str(transcript), "cwd": str(cwd),
        "permission_mode": "acceptEdits", "hook_event_name": "Stop", "stop_hook_active": False,
        "last_assistant_message": "Done.",
    })


def run_hook(command: str | list[str], payload: str, env: dict[str, str]) -> tuple[subprocess.CompletedProcess, float]:
    started = time.perf_counter()
    proc = subprocess.run(command, input=payload, capture_output=True, text=True, env=env,
                          shell=isinstance(command, str), timeout=30)
    return proc, time.perf_counter() - started


def wait_for(predicate, timeout: float = 90.0, every: float = 0.3) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)
    return False


def session_archived(data: Path, session_id: str) -> bool:
    db = data / "wwt.sqlite3"
    if not db.exists():
        return False
    with Store.open(db, readonly=True) as store:
        return store.get_session(session_id) is not None


def queued_paths(data: Path) -> list[str]:
    with Store.open(data / "wwt.sqlite3", readonly=True) as store:
        return [r[0] for r in store.conn.execute("SELECT path FROM ingest_queue ORDER BY id")]


def wait_worker_gone(data: Path, timeout: float = 30.0) -> None:
    from wwt.hook import worker_running

    assert wait_for(lambda: not worker_running(data), timeout), "worker did not exit when idle"


def test_registered_claude_hook_returns_fast_and_the_worker_archives_the_session(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model_dir: Path
) -> None:
    for key in ("HOME", "WWT_HOME"):
        monkeypatch.setenv(key, env[key])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    run_setup(only=["claude"], use_agent_cli=False)
    settings = json.loads((Path(env["HOME"]) / ".claude/settings.json").read_text())
    [handler] = our_handlers(settings["hooks"], "Stop")

    project = tmp_path / "spotter"
    project.mkdir()
    transcript = project / f"{CLAUDE_SESSION}.jsonl"
    shutil.copy(CLAUDE_LOG, transcript)
    proc, elapsed = run_hook(handler["command"], claude_stop_payload(transcript, project), env)

    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""
    assert elapsed < HOOK_LIMIT_S
    data = Path(env["WWT_HOME"])
    assert wait_for(lambda: session_archived(data, CLAUDE_SESSION)), (data / "ingest.log").read_text()
    wait_worker_gone(data)
    log = (data / "ingest.log").read_text()
    assert "started worker" in log and "ingested 1 file(s)" in log and "worker idle, exiting" in log
    assert queued_paths(data) == []  # the queue row was settled


def test_hook_process_imports_no_heavy_module(env: dict[str, str], tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    env = dict(env, WWT_WORKER_IDLE_S="0.5")
    proc, _ = run_hook([sys.executable, "-X", "importtime", "-m", "wwt", "hook", "claude-code"],
                       claude_stop_payload(transcript, tmp_path), env)
    assert proc.returncode == 0 and proc.stdout == ""
    imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if "|" in line}
    assert "wwt" in imported and "sqlite3" in imported  # the trace is real
    assert imported.isdisjoint(HEAVY), imported & set(HEAVY)
    wait_worker_gone(Path(env["WWT_HOME"]))


@pytest.mark.parametrize(
    ("platform", "payload"),
    [
        # Gemini CLI AfterAgent (§2.4): transcript_path points at the chat file; stdout must stay empty/JSON
        ("gemini-cli", {"session_id": "7b1e3c4d-0000-4000-8000-000000000001", "hook_event_name": "AfterAgent",
                        "cwd": "/work/x", "timestamp": "2026-08-01T10:00:00Z", "prompt": "hi",
                        "prompt_response": "hello", "stop_hook_active": False}),
        # Codex Stop (§3.5)
        ("codex-cli", {"session_id": "019a0000-0000-7000-8000-000000000002", "turn_id": "1",
                       "hook_event_name": "Stop", "cwd": "/work/x", "model": "gpt-5-codex",
                       "permission_mode": "default", "stop_hook_active": False, "last_assistant_message": None}),
    ],
)
def test_gemini_and_codex_payloads_are_queued(env: dict[str, str], tmp_path: Path, platform: str, payload: dict) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("{}\n")
    payload = dict(payload, transcript_path=str(transcript))
    env = dict(env, WWT_WORKER_DEBOUNCE_S="30")  # keep the worker from consuming the row while we look
    proc, elapsed = run_hook([sys.executable, "-m", "wwt", "hook", platform], json.dumps(payload), env)
    assert proc.returncode == 0 and proc.stdout == ""
    assert elapsed < HOOK_LIMIT_S
    data = Path(env["WWT_HOME"])
    assert queued_paths(data) == [str(transcript)]
    assert f"queued {transcript} ({platform})" in (data / "ingest.log").read_text()
    _stop_worker(data)


def _stop_worker(data: Path) -> None:
    pid = int((data / "worker.spawn").read_text().split()[0])  # written by the hook that started it
    try:
        os.kill(pid, 15)
    except ProcessLookupError:
        pass
    wait_worker_gone(data)


@pytest.mark.parametrize("bad", ["", "   \n", "{not json", "[1, 2]", '{"session_id": "x", "hook_event_name": "Stop"}'])
def test_bad_input_exits_zero_silently_logs_and_keeps_the_queue(env: dict[str, str], tmp_path: Path, bad: str) -> None:
    data = Path(env["WWT_HOME"])
    data.mkdir(mode=0o700)
    with Store.open(data / "wwt.sqlite3") as store:
        store.enqueue("/earlier/transcript.jsonl", "claude-code", "s0")
    proc, _ = run_hook([sys.executable, "-m", "wwt", "hook", "claude-code"], bad, env)
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""
    assert queued_paths(data) == ["/earlier/transcript.jsonl"]
    assert "ignored hook call" in (data / "ingest.log").read_text()


def test_unknown_platform_is_logged_not_raised(env: dict[str, str]) -> None:
    # OpenCode is an agent wwt reads but registers no hook with (it runs JS plugins, not commands)
    proc, _ = run_hook([sys.executable, "-m", "wwt", "hook", "opencode"], '{"transcript_path": "/x"}', env)
    assert proc.returncode == 0
    assert "unknown platform 'opencode'" in (Path(env["WWT_HOME"]) / "ingest.log").read_text()


def test_many_turn_end_hooks_start_one_worker(env: dict[str, str], tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    env = dict(env, WWT_WORKER_DEBOUNCE_S="1", WWT_WORKER_IDLE_S="8")
    for _ in range(5):
        proc, _ = run_hook([sys.executable, "-m", "wwt", "hook", "claude-code"], claude_stop_payload(transcript, tmp_path), env)
        assert proc.returncode == 0
    data = Path(env["WWT_HOME"])
    log = (data / "ingest.log").read_text()
    assert log.count("started worker") == 1 and log.count("worker already running") == 4
    wait_worker_gone(data)


# ------------------------------------------------------------------------------------------------ pure parts


def test_platform_names_and_aliases() -> None:
    assert normalise_platform("claude") == "claude-code"
    assert normalise_platform("Codex-CLI") == "codex-cli"
    with pytest.raises(HookInputError):
        normalise_platform("")


def test_payload_must_be_a_json_object() -> None:
    assert parse_payload('{"a": 1}') == {"a": 1}
    for bad in ("", "null", "[]", "{"):
        with pytest.raises(HookInputError):
            parse_payload(bad)


def test_relative_transcript_is_resolved_against_cwd() -> None:
    path, sid = transcript_of("claude-code", {"transcript_path": "t.jsonl", "cwd": "/p", "session_id": "s"})
    assert (path, sid) == ("/p/t.jsonl", "s")


def test_gemini_with_recording_off_is_a_clear_input_error() -> None:
    with pytest.raises(HookInputError, match="recording"):
        transcript_of("gemini-cli", {"transcript_path": "", "session_id": "s"})


def test_codex_null_transcript_is_found_by_thread_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    tid = "019a1b2c-3d4e-7f00-8000-0123456789ab"
    day = tmp_path / "sessions" / "2026" / "08" / "21"
    day.mkdir(parents=True)
    rollout = day / f"rollout-2026-08-21T10-00-00-{tid}.jsonl"
    rollout.write_text("")
    (day / "rollout-2026-08-21T09-00-00-019a0000-0000-7000-8000-000000000000.jsonl").write_text("")
    assert find_codex_rollout(tid) == str(rollout)
    assert transcript_of("codex-cli", {"session_id": tid, "transcript_path": None})[0] == str(rollout)
    # legacy notify payload (JSON as last argv) uses "thread-id"
    assert transcript_of("codex-cli", {"type": "agent-turn-complete", "thread-id": tid})[0] == str(rollout)
    assert find_codex_rollout("../etc") is None


def test_codex_legacy_notify_argv_payload_is_queued(env: dict[str, str], tmp_path: Path) -> None:
    codex_home = tmp_path / "codex"
    tid = "019a1b2c-3d4e-7f00-8000-0123456789ac"
    day = codex_home / "archived_sessions"
    day.mkdir(parents=True)
    rollout = day / f"rollout-2026-08-21T10-00-00-{tid}.jsonl.zst"
    rollout.write_bytes(b"")
    env = dict(env, CODEX_HOME=str(codex_home), WWT_WORKER_DEBOUNCE_S="30")
    notify = json.dumps({"type": "agent-turn-complete", "thread-id": tid, "turn-id": "3", "cwd": "/w"})
    proc = subprocess.run([sys.executable, "-m", "wwt", "hook", "codex", notify], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, env=env, timeout=30)
    assert proc.returncode == 0
    data = Path(env["WWT_HOME"])
    assert queued_paths(data) == [str(rollout)]
    _stop_worker(data)


# --------------------------------------------------------------------------------------- bounded stdin (issue 11)


def hook_with_open_stdin(agent: str, env: dict[str, str], payload: bytes) -> tuple[int, float]:
    """Run `wwt hook <agent>`, write ``payload`` to its stdin and never close it: (exit code, seconds)."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "wwt", "hook", agent], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None
    try:
        if payload:
            proc.stdin.write(payload)
            proc.stdin.flush()  # ... and keep it open
        code = proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the hook waited for a stdin that never closes")
    finally:
        proc.stdin.close()
    return code, time.perf_counter() - started


def test_a_writer_that_keeps_stdin_open_does_not_hold_the_hook(env: dict[str, str], tmp_path: Path) -> None:
    """The agent (or anything else) writes its payload and never closes the pipe: the hook still returns at
    once and queues the transcript."""
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("{}\n")
    env = dict(env, WWT_WORKER_DEBOUNCE_S="30")
    code, seconds = hook_with_open_stdin("claude", env, claude_stop_payload(transcript, tmp_path).encode())
    assert code == 0 and seconds < HOOK_LIMIT_S
    data = Path(env["WWT_HOME"])
    assert queued_paths(data) == [str(transcript)]
    _stop_worker(data)


def test_a_silent_open_stdin_is_given_up_on_quickly(env: dict[str, str]) -> None:
    """Nothing is ever written and the pipe stays open: the hook logs it and returns."""
    code, seconds = hook_with_open_stdin("gemini", env, b"")
    assert code == 0 and seconds < HOOK_LIMIT_S
    assert "ignored hook call" in (Path(env["WWT_HOME"]) / "ingest.log").read_text()


@pytest.mark.parametrize("where", ["first", "last"])
def test_a_gemini_payload_bigger_than_the_stdin_cap_still_names_its_transcript(
    env: dict[str, str], tmp_path: Path, where: str
) -> None:
    """A Gemini AfterAgent payload (§2.4) carries the whole prompt and response: past MAX_STDIN_BYTES it is not
    kept, but its top-level transcript_path is still found in the stream — wherever it sits, and not fooled by
    the same key inside the response text or a nested object."""
    from wwt.hook import MAX_STDIN_BYTES

    transcript = tmp_path / "chats" / "session-2026-08-01T10-00-7b1e3c4d.jsonl"
    transcript.parent.mkdir()
    transcript.write_text("{}\n")
    decoy = '{"transcript_path": "/decoy/in/the/text.jsonl"}'
    base = {"session_id": "7b1e3c4d-0000-4000-8000-000000000001", "cwd": "/work/x", "hook_event_name": "AfterAgent",
            "timestamp": "2026-08-01T10:00:00Z"}
    big = {"prompt": "summarise the log", "tool": {"transcript_path": "/decoy/nested.jsonl"},
           "prompt_response": decoy + "log line\n" * (MAX_STDIN_BYTES // 9 + 50_000), "stop_hook_active": False}
    payload = ({**base, "transcript_path": str(transcript), **big} if where == "first"
               else {**base, **big, "transcript_path": str(transcript)})
    raw = json.dumps(payload)
    assert len(raw) > MAX_STDIN_BYTES
    env = dict(env, WWT_WORKER_DEBOUNCE_S="30")
    proc, elapsed = run_hook([sys.executable, "-m", "wwt", "hook", "gemini"], raw, env)
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""
    data = Path(env["WWT_HOME"])
    assert queued_paths(data) == [str(transcript)], (data / "ingest.log").read_text()[-500:]
    assert elapsed < HOOK_LIMIT_S
    _stop_worker(data)


def test_a_writer_that_never_stops_is_cut_off(env: dict[str, str]) -> None:
    """Whitespace forever (valid JSON never comes): the hook gives up after its total read limit."""
    import threading

    from wwt.limits import HOOK_STDIN_MAX_S

    proc = subprocess.Popen([sys.executable, "-m", "wwt", "hook", "claude"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None
    stdin = proc.stdin

    def flood() -> None:
        try:
            while True:
                stdin.write(b" " * 4096)
                stdin.flush()
                time.sleep(0.01)
        except (BrokenPipeError, ValueError, OSError):
            pass

    writer = threading.Thread(target=flood, daemon=True)
    started = time.perf_counter()
    writer.start()
    try:
        code = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the hook kept reading a writer that never stops")
    assert code == 0 and time.perf_counter() - started < HOOK_STDIN_MAX_S + HOOK_LIMIT_S
    assert "ignored hook call" in (Path(env["WWT_HOME"]) / "ingest.log").read_text()


def test_a_relative_wwt_home_means_the_folder_the_hook_ran_in_for_the_worker_too(
    env: dict[str, str], tmp_path: Path, model_dir: Path
) -> None:
    # `WWT_HOME=data`: the agent runs the hook in its project folder, and the worker the hook starts runs from
    # `/` — it must still archive into <project>/data, where the hook queued the file, not into /data.
    project = tmp_path / "project"
    project.mkdir()
    transcript = project / f"{CLAUDE_SESSION}.jsonl"
    shutil.copy(CLAUDE_LOG, transcript)
    relative = dict(env, WWT_HOME="data", WWT_ENGINE="off", WWT_MODEL_DIR=str(model_dir))
    proc = subprocess.run([sys.executable, "-m", "wwt", "hook", "claude-code"], input=claude_stop_payload(
        transcript, project), capture_output=True, text=True, env=relative, cwd=str(project), timeout=30)
    assert proc.returncode == 0 and proc.stderr == ""
    data = project / "data"
    assert wait_for(lambda: session_archived(data, CLAUDE_SESSION)), (data / "ingest.log").read_text()
    wait_worker_gone(data)
    assert queued_paths(data) == []


def test_a_relative_wwt_home_in_a_deleted_folder_never_fails_the_hook(env: dict[str, str], tmp_path: Path) -> None:
    # Resolving `WWT_HOME=data` needs the current folder; an agent whose folder was deleted still gets exit 0,
    # nothing on stdout/stderr (the hook's rule), instead of a traceback from the start-up.
    gone = tmp_path / "gone"
    gone.mkdir()
    code = ("import os, subprocess, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); "
            "p = subprocess.run([sys.executable, '-m', 'wwt', 'hook', 'claude-code'], input=b'{}', capture_output=True); "
            "print(p.returncode, repr(p.stdout), repr(p.stderr))")
    out = subprocess.run([sys.executable, "-c", code, str(gone)], capture_output=True, text=True, timeout=60,
                         env=dict(env, WWT_HOME="data", WWT_ENGINE="off"))
    assert out.stdout.strip() == "0 b'' b''", out.stdout + out.stderr
