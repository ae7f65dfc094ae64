"""`wwt setup` for Qwen Code: hooks and the MCP server in the user's ``~/.qwen/settings.json``.

What Qwen Code reads, from its own docs and code (QwenLM/qwen-code ``docs/users/features/hooks.md``,
``packages/core/src/hooks/hookEventHandler.ts``, ``packages/cli/src/commands/mcp/add.ts``): user hooks live under
``hooks`` in ``~/.qwen/settings.json`` with Claude Code's event names (``Stop`` before the model ends its answer,
``SessionEnd``), command hooks get ``{session_id, transcript_path, cwd, hook_event_name, timestamp, …}`` on stdin,
timeouts are milliseconds, hooks run unless ``disableAllHooks`` is true, and ``mcpServers`` entries are
``{command, args, env}`` (``qwen mcp add -s user -e K=V <name> <command> [args…]``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from test_setup import _clean_path, fake_agent_on_path, snapshot

from wwt.hook import transcript_of
from wwt.setup.common import our_handlers
from wwt.setup.plan import run
from wwt.store import Store

# a user's Qwen settings as the docs show them: their own hooks and MCP server, the v2 nested settings
QWEN_SETTINGS = """{
  "model": {"name": "qwen3-coder-plus"},
  "security": {"auth": {"selectedType": "openai"}},
  "mcpServers": {
    "github": {"command": "docker", "args": ["run", "-i", "--rm", "ghcr.io/github/github-mcp-server"],
               "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "$GITHUB_TOKEN"}, "trust": false}
  },
  "hooks": {
    "UserPromptSubmit": [
      {"hooks": [{"type": "command", "command": "~/.qwen/hooks/prompt-check.sh", "timeout": 10000}]}
    ]
  }
}
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    (h / ".qwen").mkdir(parents=True)
    (h / ".qwen/settings.json").write_text(QWEN_SETTINGS)
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("WWT_HOME", str(tmp_path / "wwt-data"))
    monkeypatch.delenv("QWEN_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("PATH", _clean_path())
    return h


def settings(home: Path) -> dict:
    return json.loads((home / ".qwen/settings.json").read_text())


def test_a_machine_with_only_qwen_gets_qwen_hooks_and_mcp_server(home: Path) -> None:
    plan, _ = run(use_agent_cli=False)
    assert [a.PLATFORM for a in plan.agents] == ["qwen-code"]
    data = settings(home)
    for event in ("Stop", "SessionEnd"):
        [ours] = our_handlers(data["hooks"], event)
        assert ours["type"] == "command" and ours["command"].endswith("-m wwt hook qwen-code")
        assert ours["timeout"] >= 1000
    assert data["hooks"]["UserPromptSubmit"] == json.loads(QWEN_SETTINGS)["hooks"]["UserPromptSubmit"]
    assert data["mcpServers"]["github"] == json.loads(QWEN_SETTINGS)["mcpServers"]["github"]
    server = data["mcpServers"]["wwt"]
    assert set(server) <= {"command", "args", "env"} and server["args"][-1] == "mcp"
    assert os.access(server["command"], os.X_OK)
    assert server["env"]["WWT_HOME"] == os.environ["WWT_HOME"]
    assert not (home / ".claude").exists() and not (home / ".gemini").exists() and not (home / ".codex").exists()


def test_setup_again_changes_nothing_and_uninstall_gives_every_byte_back(home: Path) -> None:
    before = snapshot(home)
    run(use_agent_cli=False)
    once = snapshot(home)
    _, done = run(use_agent_cli=False)
    assert snapshot(home) == once and all(line.startswith("unchanged") for line in done)
    run(uninstall=True, use_agent_cli=False)
    after = {k: v for k, v in snapshot(home).items() if ".wwt-backup-" not in k}
    assert after == before


def test_dry_run_shows_the_qwen_diff_and_writes_nothing(home: Path) -> None:
    before = snapshot(home)
    _, diff = run(dry_run=True, only=["qwen"], use_agent_cli=False)
    assert snapshot(home) == before
    assert f"+++ {home / '.qwen/settings.json'}" in diff
    assert sum(1 for line in diff.splitlines() if line.startswith("+") and "wwt hook qwen-code" in line) == 2


def test_a_missing_settings_file_is_created_and_removed_again(tmp_path: Path, home: Path) -> None:
    (home / ".qwen/settings.json").unlink()
    run(use_agent_cli=False)
    assert our_handlers(settings(home)["hooks"], "Stop")
    run(uninstall=True, use_agent_cli=False)
    assert not (home / ".qwen/settings.json").exists() and (home / ".qwen").is_dir()


def test_hooks_the_user_switched_off_stay_off_and_doctor_says_so(home: Path) -> None:
    from wwt.doctor import FAIL, OK, run_checks

    path = home / ".qwen/settings.json"
    path.write_text(QWEN_SETTINGS.replace('"model"', '"disableAllHooks": true,\n  "model"', 1))
    plan, _ = run(use_agent_cli=False)
    assert settings(home)["disableAllHooks"] is True  # the user's own switch for all their hooks: not ours to flip
    assert any("disableAllHooks" in note for note in plan.notes)
    findings = [f for f in run_checks() if f.area == "Qwen Code"]
    assert any(f.status == FAIL and "disableAllHooks" in f.message for f in findings)
    assert any(f.status == OK and "Stop hook registered" in f.message for f in findings)


def test_doctor_checks_qwen_like_the_other_agents(home: Path) -> None:
    from wwt.doctor import FAIL, INFO, OK, run_checks

    findings = [f for f in run_checks() if f.area == "Qwen Code"]
    assert any(f.status == FAIL and "no wwt hook for Stop" in f.message for f in findings)
    assert any(f.status == FAIL and "MCP server 'wwt' not registered" in f.message for f in findings)
    run(use_agent_cli=False)
    findings = [f for f in run_checks() if f.area == "Qwen Code"]
    # wired; the one reminder left is about Qwen's tool_search bridge (an INFO: the user's setting, not ours)
    assert findings and all(f.status == OK or (f.status == INFO and "tool_search" in f.message)
                            for f in findings), findings


def test_the_qwen_cli_registers_the_mcp_server_when_it_is_on_path(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = fake_agent_on_path(tmp_path, monkeypatch, "qwen", ".qwen/settings.json")
    run(only=["qwen"])
    [call] = [json.loads(line) for line in log.read_text().splitlines()]
    assert call[:5] == ["qwen", "mcp", "add", "-s", "user"]
    assert call[5:7] == ["-e", "WWT_HOME=" + os.environ["WWT_HOME"]]
    assert call[-1] == "mcp" and "wwt" in call
    run(only=["qwen"], uninstall=True)
    assert json.loads(log.read_text().splitlines()[-1]) == ["qwen", "mcp", "remove", "-s", "user", "wwt"]
    assert "wwt" not in settings(home).get("mcpServers", {})
    assert not any(our_handlers(settings(home).get("hooks", {}), e) for e in ("Stop", "SessionEnd"))


# ------------------------------------------------------------------------------------------------ the hook


def qwen_stop_payload(transcript: str, session_id: str, cwd: str) -> dict:
    """What Qwen Code sends a Stop hook (hookEventHandler.ts createBaseInput + fireStopEvent)."""
    return {"session_id": session_id, "transcript_path": transcript, "cwd": cwd, "hook_event_name": "Stop",
            "timestamp": "2026-08-01T10:00:00.000Z", "stop_hook_active": False,
            "last_assistant_message": "Renamed the helper and updated the tests."}


def test_the_registered_qwen_hook_queues_the_transcript_qwen_names(home: Path, tmp_path: Path) -> None:
    run(use_agent_cli=False)
    [handler] = our_handlers(settings(home)["hooks"], "Stop")
    sid = "3c9d7e12-6a4b-4c8d-9e0f-1a2b3c4d5e6f"
    chats = home / ".qwen/projects/-home-dev-src-ledger/chats"
    chats.mkdir(parents=True)
    transcript = chats / f"{sid}.jsonl"
    transcript.write_bytes((Path(__file__).parent / "fixtures/qwen" / f"{sid}.jsonl").read_bytes())
    env = dict(os.environ, WWT_WORKER_DEBOUNCE_S="30", WWT_ENGINE="off")
    proc = subprocess.run(handler["command"], shell=True, input=json.dumps(qwen_stop_payload(
        str(transcript), sid, "/home/dev/src/ledger")), capture_output=True, text=True, env=env, timeout=30)
    assert proc.returncode == 0 and proc.stdout == ""  # Qwen reads a hook's stdout as its decision
    data = Path(os.environ["WWT_HOME"])
    with Store.open(data / "wwt.sqlite3", readonly=True) as store:
        rows = store.conn.execute("SELECT path, platform, session_id FROM ingest_queue").fetchall()
    assert [tuple(r) for r in rows] == [(str(transcript), "qwen-code", sid)]
    _stop_worker(data)


def test_an_empty_qwen_transcript_path_is_found_by_session_id(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sid = "0b7f9a1c-2d3e-4f50-8a6b-7c8d9e0f1a2b"
    chats = home / ".qwen/projects/-home-dev-src-ledger/chats"
    chats.mkdir(parents=True)
    (chats / f"{sid}.jsonl").write_text("{}\n")
    (chats / "ffffffff-0000-4000-8000-000000000000.jsonl").write_text("{}\n")
    assert transcript_of("qwen-code", qwen_stop_payload("", sid, "/home/dev/src/ledger")) == (
        str(chats / f"{sid}.jsonl"), sid)
    runtime = home / "qwen-runtime"  # Qwen's QWEN_RUNTIME_DIR moves the session data
    (runtime / "projects/p/chats").mkdir(parents=True)
    (runtime / "projects/p/chats" / f"{sid}.jsonl").write_text("{}\n")
    monkeypatch.setenv("QWEN_RUNTIME_DIR", str(runtime))
    assert transcript_of("qwen-code", qwen_stop_payload("", sid, "/x"))[0] == str(runtime / f"projects/p/chats/{sid}.jsonl")
    from wwt.hook import HookInputError

    with pytest.raises(HookInputError, match="no transcript"):
        transcript_of("qwen-code", qwen_stop_payload("", "../../etc/passwd", "/x"))


def test_an_empty_qwen_transcript_path_is_found_where_qwens_settings_moved_the_data(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``advanced.runtimeOutputDir`` in ``~/.qwen/settings.json`` (Qwen Code's config/storage.ts) moves the session
    data as ``$QWEN_RUNTIME_DIR`` does; the hook looks where the parser's discovery looks."""
    monkeypatch.delenv("QWEN_RUNTIME_DIR", raising=False)
    sid = "5c2e8d41-7a9b-4c3d-9e1f-2a4b6c8d0e1f"
    moved = home / "work/qwen-data"
    chats = moved / "projects/-home-dev-src-atlas/chats"
    chats.mkdir(parents=True)
    (chats / f"{sid}.jsonl").write_text("{}\n")
    (home / ".qwen").mkdir(exist_ok=True)
    (home / ".qwen/settings.json").write_text(json.dumps({"advanced": {"runtimeOutputDir": str(moved)}}))
    assert transcript_of("qwen-code", qwen_stop_payload("", sid, "/home/dev/src/atlas")) == (
        str(chats / f"{sid}.jsonl"), sid)


def _stop_worker(data: Path) -> None:
    from test_hook import _stop_worker as stop

    stop(data)


# What `qwen extensions install <wwt checkout>` leaves behind (QwenLM/qwen-code packages/core/src/extension:
# variables.ts, extension-converter.ts, extensionManager.ts): wwt's Gemini extension converted into a copy at
# ~/.qwen/extensions/wwt/ with qwen-extension.json, install metadata beside it, and enablement rules in
# ~/.qwen/extensions/extension-enablement.json (`!` disables, `*` covers subfolders, the last match wins).
def install_qwen_extension(home: Path, rules: list[str] | None = None, link_to: Path | None = None) -> Path:
    ext = home / ".qwen/extensions/wwt"
    ext.mkdir(parents=True)
    manifest = json.loads((Path(__file__).resolve().parent.parent / "gemini-extension.json").read_text())
    if link_to is None:
        (ext / "qwen-extension.json").write_text(json.dumps(manifest, indent=2))
        (ext / ".qwen-extension-install.json").write_text(json.dumps({"source": "/src/wwt", "type": "local"}))
    else:  # `qwen extensions link <folder>`: only the install metadata is in ~/.qwen/extensions/wwt/
        (ext / ".qwen-extension-install.json").write_text(json.dumps({"source": str(link_to), "type": "link"}))
    if rules is not None:
        (home / ".qwen/extensions/extension-enablement.json").write_text(json.dumps({"wwt": {"overrides": rules}}))
    return ext


def test_setup_registers_nothing_in_qwen_where_the_wwt_extension_is_installed(home: Path) -> None:
    install_qwen_extension(home, rules=[f"{home}/*"])
    before = snapshot(home)
    plan, _ = run(use_agent_cli=False)
    assert snapshot(home) == before  # no second set of hooks and MCP server beside the extension's
    [line] = [s for s in plan.skipped if "Qwen Code" in s]
    assert "wwt plugin wwt (" in line and "registers no second copy" in line
    plan, _ = run(uninstall=True, use_agent_cli=False)
    assert any("qwen extensions uninstall wwt" in s for s in plan.skipped)


def test_setup_run_before_the_qwen_extension_removes_its_own_copy(home: Path) -> None:
    before = snapshot(home)
    run(use_agent_cli=False)
    assert our_handlers(settings(home)["hooks"], "Stop")
    install_qwen_extension(home)  # no enablement file: enabled everywhere
    run(use_agent_cli=False)
    data = settings(home)
    assert not our_handlers(data.get("hooks", {}), "Stop") and "wwt" not in data.get("mcpServers", {})
    assert json.loads(snapshot(home)[".qwen/settings.json"]) == json.loads(before[".qwen/settings.json"])


@pytest.mark.parametrize("case", ["disabled for the home folder", "linked elsewhere", "another extension"])
def test_a_qwen_extension_that_is_not_an_enabled_wwt_does_not_stop_setup(home: Path, tmp_path: Path,
                                                                         case: str) -> None:
    from wwt.setup.plugins import installed

    if case == "disabled for the home folder":
        install_qwen_extension(home, rules=[f"{home}/*", f"!{home}/*"])
    elif case == "linked elsewhere":
        other = tmp_path / "other-extension"
        other.mkdir()
        (other / "qwen-extension.json").write_text(json.dumps({"name": "not-wwt", "version": "1.0.0"}))
        install_qwen_extension(home, link_to=other)
    else:
        (home / ".qwen/extensions/security").mkdir(parents=True)
        (home / ".qwen/extensions/security/qwen-extension.json").write_text('{"name": "qwen-cli-security"}')
    assert installed("qwen-code") is None
    run(use_agent_cli=False)
    assert our_handlers(settings(home)["hooks"], "Stop")


def test_a_linked_qwen_extension_and_a_rule_on_the_real_home_path_count(home: Path, tmp_path: Path) -> None:
    from wwt.setup.plugins import installed

    source = tmp_path / "wwt-checkout"
    source.mkdir()
    (source / "qwen-extension.json").write_text(json.dumps({"name": "wwt", "version": "2.0.0"}))
    install_qwen_extension(home, link_to=source)
    assert installed("qwen-code") is not None
    real = tmp_path / "real-home"
    home.rename(real)
    home.symlink_to(real)  # HOME is a symlink; Qwen also matches rules against the canonical path
    (real / ".qwen/extensions/extension-enablement.json").write_text(json.dumps({"wwt": {"overrides": [f"!{real}/*"]}}))
    assert installed("qwen-code") is None
