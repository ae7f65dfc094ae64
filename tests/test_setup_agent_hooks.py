"""`wwt setup` registers a wwt hook with Cursor and GitHub Copilot CLI, and the hook makes their sessions searchable.

* Cursor (1.7+): the user's ``~/.cursor/hooks.json``, ``{"version": 1, "hooks": {<event>: [{"command": …}]}}``
  (cursor.com/docs/agent/hooks); each hook gets one JSON object on stdin: ``hook_event_name``,
  ``conversation_id``, ``generation_id``, ``workspace_roots`` and, in newer versions, ``transcript_path``.
* Copilot CLI: every ``*.json`` in ``~/.copilot/hooks/`` (``$COPILOT_HOME/hooks``), entries
  ``{"type": "command", "bash": …, "timeoutSec": …}``; PascalCase events (``Stop``, ``SessionEnd``) get the
  snake_case payload (``session_id``, ``transcript_path``, ``cwd``) (docs.github.com copilot hooks-reference).

The user's own hooks stay, a second run changes nothing, uninstall gives every byte back, a file that is not
JSON is refused with one line and nothing is written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_hook import (
    HOOK_LIMIT_S,
    _stop_worker,
    queued_paths,
    run_hook,
    session_archived,
    wait_for,
    wait_worker_gone,
)
from test_setup import _clean_path

from wwt.errors import WwtError
from wwt.hook import transcript_of
from wwt.setup import copilot, cursor
from wwt.setup.plan import run

FIXTURE_HOME = Path(__file__).parent / "fixtures" / "homes" / "full"
CURSOR_FIX = Path(__file__).parent / "fixtures" / "cursor"
COPILOT_FIX = Path(__file__).parent / "fixtures" / "copilot-cli"
# A user's own hooks as Cursor's docs show them: a formatter after each edit, an audit script at the end.
CURSOR_HOOKS = ('{\n  "version": 1,\n  "hooks": {\n    "afterFileEdit": [\n      { "command": "./hooks/format.sh" }\n'
                '    ],\n    "stop": [\n      { "command": "./hooks/audit.sh" }\n    ]\n  }\n}\n')
CURSOR_ID = "0c9e5a77-2b1d-4f3e-8a6c-7d5e4f3a2b1c"  # the CLI transcript in tests/fixtures/cursor/home
CURSOR_TRANSCRIPT = Path(".cursor/projects/home-ana-code-orbit/agent-transcripts") / f"{CURSOR_ID}.jsonl"
COPILOT_ID = "4f2a9c1e-8b7d-4e60-9a35-d1c2b3a4e5f6"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    shutil.copytree(FIXTURE_HOME, h)
    (h / ".cursor").mkdir()
    (h / ".cursor" / "hooks.json").write_text(CURSOR_HOOKS)
    (h / ".copilot").mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("WWT_HOME", str(tmp_path / "wwt-data"))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", _clean_path())
    return h


def test_cursor_gets_a_hook_beside_the_users_own(home: Path) -> None:
    run(only=["cursor"], use_agent_cli=False)
    data = json.loads((home / ".cursor" / "hooks.json").read_text())
    assert data["version"] == 1
    assert data["hooks"]["afterFileEdit"] == [{"command": "./hooks/format.sh"}]
    stop = data["hooks"]["stop"]
    assert stop[0] == {"command": "./hooks/audit.sh"} and len(stop) == 2  # theirs first, ours after
    assert stop[1]["command"].endswith("-m wwt hook cursor") and list(stop[1]) == ["command"]
    assert data["hooks"]["sessionEnd"] == [stop[1]]
    assert cursor.registered_hooks() == {"stop": [stop[1]], "sessionEnd": [stop[1]]}


def test_copilot_gets_a_hooks_file_of_its_own_in_the_user_hooks_folder(home: Path) -> None:
    run(only=["copilot"], use_agent_cli=False)
    data = json.loads((home / ".copilot" / "hooks" / "wwt.json").read_text())
    assert data["version"] == 1 and set(data["hooks"]) == {"Stop", "SessionEnd"}
    [entry] = data["hooks"]["Stop"]
    assert entry["type"] == "command" and entry["bash"].endswith("-m wwt hook copilot-cli")
    assert 0 < entry["timeoutSec"] <= 30
    assert data["hooks"]["SessionEnd"] == [entry]
    assert [h["command"] for h in copilot.registered_hooks()["Stop"]] == [entry["bash"]]  # what doctor runs


def test_copilot_home_moves_the_hooks_folder(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "copilot-home"
    elsewhere.mkdir()
    monkeypatch.setenv("COPILOT_HOME", str(elsewhere))
    run(only=["copilot"], use_agent_cli=False)
    assert (elsewhere / "hooks" / "wwt.json").is_file() and not (home / ".copilot" / "hooks").exists()
    run(uninstall=True, only=["copilot"], use_agent_cli=False)
    assert not (elsewhere / "hooks" / "wwt.json").exists()


def test_a_second_run_changes_nothing_and_uninstall_gives_every_byte_back(home: Path) -> None:
    run(use_agent_cli=False)
    files = [home / ".cursor" / "hooks.json", home / ".copilot" / "hooks" / "wwt.json"]
    wired = [p.read_bytes() for p in files]
    run(use_agent_cli=False)
    assert [p.read_bytes() for p in files] == wired
    run(uninstall=True, use_agent_cli=False)
    assert (home / ".cursor" / "hooks.json").read_text() == CURSOR_HOOKS
    assert not (home / ".copilot" / "hooks" / "wwt.json").exists()  # created by setup: removed again


def test_a_hooks_file_created_by_setup_is_removed_again(home: Path) -> None:
    (home / ".cursor" / "hooks.json").unlink()
    run(only=["cursor"], use_agent_cli=False)
    assert "wwt hook cursor" in (home / ".cursor" / "hooks.json").read_text()
    run(uninstall=True, only=["cursor"], use_agent_cli=False)
    assert not (home / ".cursor" / "hooks.json").exists()


@pytest.mark.parametrize("text", ['{"version": 1, "hooks": {"stop": [', '{"version": 1, "hooks": {"stop": {}}}'])
def test_a_hooks_file_wwt_cannot_read_is_refused_and_nothing_is_written(home: Path, text: str) -> None:
    path = home / ".cursor" / "hooks.json"
    path.write_text(text)
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    with pytest.raises(WwtError) as err:
        run(use_agent_cli=False)
    assert str(path) in str(err.value) and "\n" not in str(err.value)
    assert {p: p.read_bytes() for p in home.rglob("*") if p.is_file()} == before


# --- the hook itself: what Cursor and Copilot CLI send, and what wwt makes of it --------------------------------

def cursor_stop_payload(transcript: Path | None) -> dict:
    """A ``stop`` payload shaped like Cursor's docs (common fields + ``status``/``loop_count``)."""
    payload = {"conversation_id": CURSOR_ID, "generation_id": "5e1f2a3b-0000-4000-8000-00000000a001",
               "model": "claude-4-sonnet", "hook_event_name": "stop", "cursor_version": "1.7.52",
               "workspace_roots": ["/home/ana/code/orbit"], "user_email": "ana@example.com",
               "status": "completed", "loop_count": 0}
    if transcript is not None:
        payload["transcript_path"] = str(transcript)
    return payload


def test_the_registered_cursor_hook_makes_the_session_searchable(
    home: Path, tmp_path: Path, model_dir: Path
) -> None:
    shutil.copytree(CURSOR_FIX / "home" / ".cursor", home / ".cursor", dirs_exist_ok=True)
    run(only=["cursor"], use_agent_cli=False)
    [handler] = [h for h in json.loads((home / ".cursor" / "hooks.json").read_text())["hooks"]["stop"]
                 if "wwt hook" in h["command"]]
    env = {k: v for k, v in os.environ.items() if k not in ("COPILOT_HOME", "XDG_CONFIG_HOME")}
    env.update(WWT_MODEL_DIR=str(model_dir), WWT_WORKER_DEBOUNCE_S="0.3", WWT_WORKER_IDLE_S="2")
    payload = json.dumps(cursor_stop_payload(home / CURSOR_TRANSCRIPT))
    proc, elapsed = run_hook(handler["command"], payload, env)  # through a shell, as Cursor runs it
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""
    assert elapsed < HOOK_LIMIT_S
    data = Path(env["WWT_HOME"])
    assert wait_for(lambda: session_archived(data, CURSOR_ID)), (data / "ingest.log").read_text()[-2000:]
    found = subprocess.run([sys.executable, "-m", "wwt", "search", "--all", "--source", "cursor", "--json",
                            "daemon leaks a file descriptor per reconnect"],
                           capture_output=True, text=True, env=env, timeout=300, stdin=subprocess.DEVNULL)
    assert found.returncode == 0, found.stderr[-1000:]
    hits = json.loads(found.stdout)["results"]
    assert hits and hits[0]["session_id"] == CURSOR_ID and hits[0]["platform"] == "cursor"
    wait_worker_gone(data)


def test_a_cursor_payload_without_transcript_is_found_by_its_conversation_id(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(CURSOR_FIX / "nested" / ".cursor", home / ".cursor", dirs_exist_ok=True)
    shutil.copytree(CURSOR_FIX / "chats", home / ".cursor" / "chats")
    nested = "3f1c2b4a-5d6e-4f70-8a91-b2c3d4e5f607"
    path, sid = transcript_of("cursor", dict(cursor_stop_payload(None), conversation_id=nested))
    assert (Path(path).name, sid) == (f"{nested}.jsonl", nested)
    store = "c5e8a1f0-3b7d-4c29-9e64-2a1b0d9f8e71"  # a CLI chat: its store.db
    path, _ = transcript_of("cursor", dict(cursor_stop_payload(None), conversation_id=store))
    assert Path(path).name == "store.db" and Path(path).parent.name == store
    # an editor chat has no file of its own: the editor's database, which holds every chat
    user = home / "config" / "Cursor" / "User" / "globalStorage"
    user.mkdir(parents=True)
    shutil.copy(CURSOR_FIX / "User" / "globalStorage" / "state.vscdb", user / "state.vscdb")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    path, _ = transcript_of("cursor", dict(cursor_stop_payload(None), conversation_id="not-on-disk-1"))
    assert path == str(user / "state.vscdb")
    # an id is a name, never a path or a pattern: nothing outside Cursor's folders is looked for
    (home / ".cursor" / "chats" / "h" / "x").mkdir(parents=True)
    (home / ".cursor" / "chats" / "h" / "x" / "store.db").write_bytes(b"")  # what "*" would match
    for hostile in ("../chats/x", "*", "x/../../x"):
        path, _ = transcript_of("cursor", dict(cursor_stop_payload(None), conversation_id=hostile))
        assert path == str(user / "state.vscdb"), hostile


@pytest.mark.parametrize("event", ["Stop", "SessionEnd"])
def test_copilot_payloads_are_queued(home: Path, tmp_path: Path, event: str) -> None:
    events = home / ".copilot" / "session-state" / COPILOT_ID / "events.jsonl"
    shutil.copytree(COPILOT_FIX / "session-state", home / ".copilot" / "session-state")
    payload = {"hook_event_name": event, "session_id": COPILOT_ID, "timestamp": "2026-11-02T09:30:00.000Z",
               "cwd": "/home/mina/src/tilemap"}
    if event == "Stop":  # the turn end names its transcript; the session end does not
        payload.update(transcript_path=str(events), stop_reason="end_turn", stop_hook_active=False)
    else:
        payload["reason"] = "user_exit"
    env = dict(os.environ, WWT_WORKER_DEBOUNCE_S="30")
    proc, elapsed = run_hook([sys.executable, "-m", "wwt", "hook", "copilot-cli"], json.dumps(payload), env)
    assert proc.returncode == 0 and proc.stdout == "" and elapsed < HOOK_LIMIT_S
    data = Path(env["WWT_HOME"])
    assert queued_paths(data) == [str(events)]
    _stop_worker(data)
