"""`wwt setup` registers the MCP server with OpenCode, Cline and Roo Code (no command hooks there).

* OpenCode: its global config in ``~/.config/opencode`` (``$XDG_CONFIG_HOME``), ``mcp.<name>`` →
  ``{"type": "local", "command": [argv…], "environment": {…}, "enabled": true}`` (opencode.ai/docs/mcp-servers);
  newer files may list servers under an ``mcp.servers`` envelope. OpenCode reads JSONC: a file with comments is
  skipped with one line (an edit would lose them) while every other agent is still wired.
* Cline / Roo Code: ``<editor user data>/User/globalStorage/<extension id>/settings/cline_mcp_settings.json`` /
  ``mcp_settings.json``, ``mcpServers`` → ``{command, args, env, disabled?, autoApprove?}`` (Cline's docs and
  ``src/services/mcp/schemas.ts``), in every editor where the extension keeps its storage.

A second run changes nothing; uninstall gives every byte back; a file that is not JSON is refused with one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_setup import _clean_path

from wwt.errors import WwtError
from wwt.setup import cline, opencode, roo
from wwt.setup.plan import build_plan, run

FIXTURE_HOME = Path(__file__).parent / "fixtures" / "homes" / "full"
# OpenCode's docs: a schema line, a theme, and an organisation's remote server switched on.
OPENCODE = ('{\n  "$schema": "https://opencode.ai/config.json",\n  "theme": "opencode",\n  "mcp": {\n'
            '    "jira": {\n      "type": "remote",\n      "url": "https://jira.example.com/mcp",\n'
            '      "enabled": true\n    }\n  }\n}\n')
OPENCODE_JSONC = ('{\n  "$schema": "https://opencode.ai/config.json",\n  // my servers\n  "mcp": {\n'
                  '    "everything": {\n      "type": "local",\n'
                  '      "command": ["npx", "-y", "@modelcontextprotocol/server-everything"],\n    },\n  },\n}\n')
OPENCODE_V2 = ('{\n  "mcp": {\n    "servers": {\n      "my-server": {\n        "type": "local",\n'
               '        "command": ["npx", "-y", "example-mcp-server"],\n        "disabled": true\n      }\n    }\n'
               '  }\n}\n')
# Cline's docs: a GitHub server with its token and auto-approved tools.
CLINE = ('{\n  "mcpServers": {\n    "github": {\n      "command": "npx",\n      "args": ["-y", '
         '"@modelcontextprotocol/server-github"],\n      "env": {\n        "GITHUB_PERSONAL_ACCESS_TOKEN": "<token>"\n'
         '      },\n      "disabled": false,\n      "autoApprove": []\n    }\n  }\n}')
CLINE_EMPTY = '{\n  "mcpServers": {}\n}'  # what the extension writes on first start
CLINE_STORE = Path(".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json")
CLINE_STORE_VSCODIUM = Path(".config/VSCodium/User/globalStorage/saoudrizwan.claude-dev/settings/"
                            "cline_mcp_settings.json")
ROO_STORE = Path(".config/Code - Insiders/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    shutil.copytree(FIXTURE_HOME, h)
    _write(h / ".config" / "opencode" / "opencode.json", OPENCODE)
    _write(h / CLINE_STORE, CLINE)
    _write(h / CLINE_STORE_VSCODIUM, CLINE_EMPTY)
    (h / ROO_STORE).parent.parent.mkdir(parents=True)  # Roo's storage exists, its settings file not yet
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("WWT_HOME", str(tmp_path / "wwt-data"))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", _clean_path())
    return h


def _claude_server(home: Path) -> dict:
    return json.loads((home / ".claude.json").read_text())["mcpServers"]["wwt"]


def test_opencode_gets_a_local_server_beside_the_users(home: Path) -> None:
    run(use_agent_cli=False)
    data = json.loads((home / ".config" / "opencode" / "opencode.json").read_text())
    assert data["theme"] == "opencode" and set(data["mcp"]) == {"jira", "wwt"}
    ours, claude = data["mcp"]["wwt"], _claude_server(home)
    assert ours["type"] == "local" and ours["enabled"] is True
    assert ours["command"] == [claude["command"], *claude["args"]]  # one argv list: command and arguments
    assert ours.get("environment", {}) == claude.get("env", {})
    assert opencode.registered_mcp() == {"command": claude["command"], "args": claude["args"],
                                         "env": claude.get("env", {})}


def test_opencode_uses_xdg_config_home_and_the_jsonc_file_when_that_is_the_one(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "xdg"
    _write(config / "opencode" / "opencode.jsonc", OPENCODE)  # plain JSON in a .jsonc file: editable
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    run(only=["opencode"], use_agent_cli=False)
    assert "wwt" in json.loads((config / "opencode" / "opencode.jsonc").read_text())["mcp"]
    assert (home / ".config" / "opencode" / "opencode.json").read_text() == OPENCODE
    run(uninstall=True, only=["opencode"], use_agent_cli=False)
    assert (config / "opencode" / "opencode.jsonc").read_text() == OPENCODE


def test_an_opencode_file_with_comments_is_skipped_with_one_line_and_the_others_are_wired(home: Path) -> None:
    (home / ".config" / "opencode" / "opencode.json").unlink()
    path = home / ".config" / "opencode" / "opencode.jsonc"
    _write(path, OPENCODE_JSONC)
    plan, _ = run(use_agent_cli=False)
    [line] = [s for s in plan.skipped if s.startswith("OpenCode:")]
    assert str(path) in line and "comments" in line and "\n" not in line and '"type": "local"' in line
    assert path.read_text() == OPENCODE_JSONC
    assert "wwt" in json.loads((home / CLINE_STORE).read_text())["mcpServers"]  # the rest went on
    entry = line.split('yourself: "wwt": ', 1)[1]
    by_hand = OPENCODE_JSONC.replace('  "mcp": {\n', '  "mcp": {\n    "wwt": ' + entry + ', // added by hand\n')
    path.write_text(by_hand)
    again, _ = run(use_agent_cli=False)
    assert not any(s.startswith("OpenCode:") for s in again.skipped)  # as it should be: nothing to say
    assert opencode.registered_mcp()["command"] == _claude_server(home)["command"]
    undo, _ = run(uninstall=True, use_agent_cli=False)
    [line] = [s for s in undo.skipped if s.startswith("OpenCode:")]
    assert "remove the 'wwt' server" in line and path.read_text() == by_hand


def test_an_opencode_file_with_the_servers_envelope_gets_the_entry_inside_it(home: Path) -> None:
    path = home / ".config" / "opencode" / "opencode.json"
    path.write_text(OPENCODE_V2)
    run(only=["opencode"], use_agent_cli=False)
    servers = json.loads(path.read_text())["mcp"]["servers"]
    assert set(servers) == {"my-server", "wwt"} and "enabled" not in servers["wwt"]
    assert servers["wwt"]["type"] == "local" and opencode.registered_mcp() is not None
    run(uninstall=True, only=["opencode"], use_agent_cli=False)
    assert path.read_text() == OPENCODE_V2


def test_cline_and_roo_are_wired_in_every_editor_that_holds_their_storage(home: Path) -> None:
    run(use_agent_cli=False)
    claude = _claude_server(home)
    for rel, others in ((CLINE_STORE, {"github"}), (CLINE_STORE_VSCODIUM, set()), (ROO_STORE, set())):
        servers = json.loads((home / rel).read_text())["mcpServers"]
        assert set(servers) == others | {"wwt"}, rel
        assert (servers["wwt"]["command"], servers["wwt"]["args"]) == (claude["command"], claude["args"])
    assert json.loads((home / CLINE_STORE).read_text())["mcpServers"]["github"]["autoApprove"] == []
    assert not (home / ".config" / "Cursor" / "User" / "globalStorage" / "saoudrizwan.claude-dev").exists()
    assert cline.registered_mcp() is not None and roo.registered_mcp() is not None


def test_a_second_run_changes_nothing_and_uninstall_gives_every_byte_back(home: Path) -> None:
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    run(use_agent_cli=False)
    wired = {p: p.read_bytes() for p in home.rglob("*") if p.is_file() and ".wwt-backup-" not in p.name}
    run(use_agent_cli=False)
    assert {p: p.read_bytes() for p in home.rglob("*") if p.is_file() and ".wwt-backup-" not in p.name} == wired
    run(uninstall=True, use_agent_cli=False)
    after = {p: p.read_bytes() for p in home.rglob("*") if p.is_file() and ".wwt-backup-" not in p.name}
    assert after == before  # the empty "mcpServers": {} of VSCodium's Cline stays; Roo's new file is gone


@pytest.mark.parametrize("rel", [CLINE_STORE, Path(".config/opencode/opencode.json")])
def test_a_file_that_is_not_json_is_refused_with_one_line_and_nothing_is_written(home: Path, rel: Path) -> None:
    (home / rel).write_text('{"mcpServers": {"github": ')
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    with pytest.raises(WwtError) as err:
        run(use_agent_cli=False)
    assert str(home / rel) in str(err.value) and "\n" not in str(err.value)
    assert {p: p.read_bytes() for p in home.rglob("*") if p.is_file()} == before


def test_agents_without_their_config_folder_are_not_wired(home: Path) -> None:
    shutil.rmtree(home / ".config")
    plan = build_plan(use_agent_cli=False)
    names = {a.PLATFORM for a in plan.agents}
    assert not names & {"opencode", "cline", "roo-code"}
    assert any(s.startswith("OpenCode: not found") for s in plan.skipped)


@pytest.mark.parametrize(("text", "jsonc_only"), [
    (OPENCODE_JSONC, True),
    (OPENCODE, False),
    ('{"url": "https://a.example/x//y", "note": "/* not a comment */",}', True),
    ('{"a": 1', False),
])
def test_jsonc_is_told_from_json_and_from_broken_text(text: str, jsonc_only: bool) -> None:
    assert opencode.is_jsonc_only(text) is jsonc_only
