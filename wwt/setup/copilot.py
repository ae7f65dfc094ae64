"""GitHub Copilot CLI: the MCP server in ``~/.copilot/mcp-config.json`` (``$COPILOT_HOME`` moves the folder;
``mcpServers`` → ``{type: "local", command, args, env, tools}``, docs.github.com copilot-cli
add-mcp-servers; ``tools: ["*"]`` lets Copilot call all of the server's tools). No hook: its logs are read by
``wwt ingest`` and the engine's scan. Registered by a file edit only (``/mcp add`` is an interactive form)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wwt.parsers.copilot_cli import copilot_home
from wwt.setup.common import json_mcp_edit, json_registered_mcp, stdio_entry
from wwt.setup.configfile import FileEdit
from wwt.setup.state import SetupState

PLATFORM = "copilot-cli"
LABEL = "Copilot CLI"
BINARY = "copilot"
EVENTS: tuple[str, ...] = ()  # no wwt hook
MCP_CLI = False


def config_dir() -> Path:
    return copilot_home()


def mcp_config_path() -> Path:
    return config_dir() / "mcp-config.json"


def detected() -> bool:
    return config_dir().is_dir()


def hook_edits(command: str, uninstall: bool, state: SetupState) -> list[FileEdit]:
    return []


def mcp_entry(argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    return {**stdio_entry(argv, env, {"type": "local"}), "tools": ["*"]}


def mcp_edit(argv: list[str], env: dict[str, str], uninstall: bool, state: SetupState) -> FileEdit:
    return json_mcp_edit(mcp_config_path(), LABEL, None if uninstall else mcp_entry(argv, env), state, "copilot")


def registered_mcp() -> dict[str, Any] | None:
    return json_registered_mcp(mcp_config_path())


def registered_hooks() -> dict[str, list[dict[str, Any]]]:
    return {}


def approvals() -> list[str]:
    return []
