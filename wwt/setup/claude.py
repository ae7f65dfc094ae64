"""Claude Code: hooks in ``settings.json`` (Stop, SessionEnd), MCP server in ``.claude.json`` (user scope).

Both honour ``CLAUDE_CONFIG_DIR`` (agent-log-formats §1.1/§1.5/§1.6)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from wwt.setup.common import (
    SERVER_NAME,
    home,
    json_hook_change,
    json_mcp_edit,
    json_registered_hooks,
    json_registered_mcp,
    mcp_cli_add,
    mcp_cli_remove,
    stdio_entry,
)
from wwt.setup.configfile import FileEdit, json_transform
from wwt.setup.state import SetupState

PLATFORM = "claude-code"
LABEL = "Claude Code"
BINARY = "claude"
CLI_SCOPE = ("--scope", "user")
EVENTS = ("Stop", "SessionEnd")
HOOK_TIMEOUT_S = 10


def config_dir() -> Path:
    raw = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(raw).expanduser() if raw else home() / ".claude"


def settings_path() -> Path:
    return config_dir() / "settings.json"


def mcp_config_path() -> Path:
    raw = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(raw).expanduser() / ".claude.json") if raw else home() / ".claude.json"


def detected() -> bool:
    return config_dir().is_dir() or mcp_config_path().exists()


def hook_edits(command: str, uninstall: bool, state: SetupState) -> list[FileEdit]:
    path = settings_path()
    handler = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}
    change = json_hook_change(path, EVENTS, handler, uninstall, state, "claude")
    return [FileEdit(path, json_transform(path, change), f"{LABEL} hooks ({', '.join(EVENTS)})")]


def mcp_entry(argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    return stdio_entry(argv, env, {"type": "stdio"})


def mcp_edit(argv: list[str], env: dict[str, str], uninstall: bool, state: SetupState) -> FileEdit:
    return json_mcp_edit(mcp_config_path(), LABEL, None if uninstall else mcp_entry(argv, env), state, "claude")


def registered_mcp() -> dict[str, Any] | None:
    return json_registered_mcp(mcp_config_path())


def cli_add(argv: list[str], env: dict[str, str]) -> list[str]:
    return mcp_cli_add(BINARY, SERVER_NAME, argv, env, CLI_SCOPE, separator=True)


def cli_remove() -> list[str]:
    return mcp_cli_remove(BINARY, SERVER_NAME, CLI_SCOPE)


def registered_hooks() -> dict[str, list[dict[str, Any]]]:
    return json_registered_hooks(settings_path(), EVENTS)


def approvals() -> list[str]:
    return []
