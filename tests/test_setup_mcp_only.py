"""`wwt setup` registers the MCP server with Cursor (the editor
and its CLI read ``~/.cursor/mcp.json``, ``mcpServers`` → ``{command, args, env}``: cursor.com/docs/mcp) and
GitHub Copilot CLI (``~/.copilot/mcp-config.json``, or under ``$COPILOT_HOME``; ``mcpServers`` →
``{type: "local", command, args, env, tools}``: docs.github.com …/copilot-cli/customize-copilot/add-mcp-servers).
Only a file edit (neither CLI has a documented non-interactive ``mcp add``); the user's other servers and layout
stay; a second run changes nothing; uninstall gives every byte back and removes a file setup created."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_setup import _clean_path

from wwt.setup.plan import run

FIXTURE_HOME = Path(__file__).parent / "fixtures" / "homes" / "full"
CURSOR_MCP = '{\n  "mcpServers": {\n    "linear": {\n      "url": "https://mcp.linear.example/sse"\n    }\n  }\n}\n'
COPILOT_MCP = ('{\n  "mcpServers": {\n    "playwright": {\n      "type": "local",\n      "command": "npx",\n'
               '      "args": ["-y", "@playwright/mcp@latest"],\n      "tools": ["*"]\n    }\n  }\n}\n')


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    shutil.copytree(FIXTURE_HOME, h)
    (h / ".cursor").mkdir()
    (h / ".cursor" / "mcp.json").write_text(CURSOR_MCP)
    (h / ".copilot").mkdir()
    (h / ".copilot" / "mcp-config.json").write_text(COPILOT_MCP)
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("WWT_HOME", str(tmp_path / "wwt-data"))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", _clean_path())
    return h


def test_cursor_and_copilot_get_the_mcp_server_beside_theirs(home: Path) -> None:
    run(use_agent_cli=False)
    cursor = json.loads((home / ".cursor" / "mcp.json").read_text())
    assert set(cursor["mcpServers"]) == {"linear", "wwt"}
    ours = cursor["mcpServers"]["wwt"]
    claude = json.loads((home / ".claude.json").read_text())["mcpServers"]["wwt"]
    assert (ours["command"], ours["args"]) == (claude["command"], claude["args"])  # the same server
    copilot = json.loads((home / ".copilot" / "mcp-config.json").read_text())
    assert set(copilot["mcpServers"]) == {"playwright", "wwt"}
    entry = copilot["mcpServers"]["wwt"]
    assert entry["type"] == "local" and entry["tools"] == ["*"] and entry["args"] == ours["args"]
    assert (home / ".cursor" / "mcp.json").read_text().startswith(CURSOR_MCP[:60])  # their entry as they wrote it


def test_a_second_run_changes_nothing_and_uninstall_gives_every_byte_back(home: Path) -> None:
    run(use_agent_cli=False)
    wired = {p: (home / p).read_bytes() for p in (".cursor/mcp.json", ".copilot/mcp-config.json")}
    run(use_agent_cli=False)
    assert {p: (home / p).read_bytes() for p in wired} == wired
    run(uninstall=True, use_agent_cli=False)
    assert (home / ".cursor" / "mcp.json").read_text() == CURSOR_MCP
    assert (home / ".copilot" / "mcp-config.json").read_text() == COPILOT_MCP


def test_a_missing_config_is_created_and_removed_again(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (home / ".cursor" / "mcp.json").unlink()
    elsewhere = home / "copilot-home"
    elsewhere.mkdir()
    monkeypatch.setenv("COPILOT_HOME", str(elsewhere))
    run(use_agent_cli=False)
    assert "wwt" in json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]
    assert "wwt" in json.loads((elsewhere / "mcp-config.json").read_text())["mcpServers"]
    assert "wwt" not in (home / ".copilot" / "mcp-config.json").read_text()  # COPILOT_HOME moves it
    run(uninstall=True, use_agent_cli=False)
    assert not (home / ".cursor" / "mcp.json").exists() and not (elsewhere / "mcp-config.json").exists()


def test_an_agent_that_is_not_installed_is_left_alone(home: Path) -> None:
    shutil.rmtree(home / ".cursor")
    run(use_agent_cli=False)
    assert not (home / ".cursor").exists()
