"""Cursor: the MCP server in ``~/.cursor/mcp.json`` (read by the editor and by its CLI agent; ``mcpServers`` →
``{command, args, env}``, cursor.com/docs/mcp). No hook: Cursor's logs are read by ``wwt ingest`` and the
engine's scan. Registered by a file edit only (no documented non-interactive ``mcp add``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wwt.setup.common import home, json_mcp_edit, json_registered_mcp, stdio_entry
from wwt.setup.configfile import FileEdit
from wwt.setup.state import SetupState

PLATFORM = "cursor"
LABEL = "Cursor"
BINARY = "cursor-agent"
EVENTS: tuple[str, ...] = ()  # no wwt hook
MCP_CLI = False


def config_dir() -> Path:
    return home() / ".cursor"


def mcp_config_path() -> Path:
    return config_dir() / "mcp.json"


def detected() -> bool:
    return config_dir().is_dir()


def hook_edits(command: str, uninstall: bool, state: SetupState) -> list[FileEdit]:
    return []


def mcp_edit(argv: list[str], env: dict[str, str], uninstall: bool, state: SetupState) -> FileEdit:
    return json_mcp_edit(mcp_config_path(), LABEL, None if uninstall else stdio_entry(argv, env), state, "cursor")


def registered_mcp() -> dict[str, Any] | None:
    return json_registered_mcp(mcp_config_path())


def registered_hooks() -> dict[str, list[dict[str, Any]]]:
    return {}


def approvals() -> list[str]:
    return []
