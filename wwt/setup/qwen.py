"""Qwen Code: hooks (Stop, SessionEnd) + MCP server, both in the user's ``~/.qwen/settings.json``.

Qwen Code is a Gemini CLI fork, but its hooks follow Claude Code (QwenLM/qwen-code
``docs/users/features/hooks.md``, ``packages/core/src/hooks/hookEventHandler.ts``): Claude's event names, a
``{session_id, transcript_path, cwd, hook_event_name, timestamp}`` payload on stdin, timeouts in milliseconds, and
hooks run unless the user set ``disableAllHooks`` — a switch for all of their hooks, so setup leaves it alone and
says so (doctor fails on it). ``mcpServers`` entries and ``qwen mcp add|remove -s user`` are Gemini's."""

from __future__ import annotations

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
from wwt.setup.configfile import FileEdit, json_transform, parse_json_object, read_text
from wwt.setup.state import SetupState

PLATFORM = "qwen-code"
LABEL = "Qwen Code"
BINARY = "qwen"
CLI_SCOPE = ("-s", "user")
EVENTS = ("Stop", "SessionEnd")
HOOK_TIMEOUT_MS = 10000


def config_dir() -> Path:
    return home() / ".qwen"


def settings_path() -> Path:
    return config_dir() / "settings.json"


def mcp_config_path() -> Path:
    return settings_path()


def detected() -> bool:
    return config_dir().is_dir()


def hook_edits(command: str, uninstall: bool, state: SetupState) -> list[FileEdit]:
    path = settings_path()
    handler = {"type": "command", "name": "wwt", "command": command, "timeout": HOOK_TIMEOUT_MS}
    change = json_hook_change(path, EVENTS, handler, uninstall, state, "qwen")
    return [FileEdit(path, json_transform(path, change), f"{LABEL} hooks ({', '.join(EVENTS)})")]


def mcp_entry(argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    return stdio_entry(argv, env)


def mcp_edit(argv: list[str], env: dict[str, str], uninstall: bool, state: SetupState) -> FileEdit:
    return json_mcp_edit(mcp_config_path(), LABEL, None if uninstall else mcp_entry(argv, env), state, "qwen")


def registered_mcp() -> dict[str, Any] | None:
    return json_registered_mcp(mcp_config_path())


def cli_add(argv: list[str], env: dict[str, str]) -> list[str]:
    return mcp_cli_add(BINARY, SERVER_NAME, argv, env, CLI_SCOPE)


def cli_remove() -> list[str]:
    return mcp_cli_remove(BINARY, SERVER_NAME, CLI_SCOPE)


def registered_hooks() -> dict[str, list[dict[str, Any]]]:
    return json_registered_hooks(settings_path(), EVENTS)


def hooks_enabled() -> bool:
    """False when the user switched every hook off (``"disableAllHooks": true``)."""
    data = parse_json_object(read_text(settings_path()), settings_path())
    return data.get("disableAllHooks") is not True


def approvals() -> list[str]:
    if hooks_enabled():
        return []
    return [f"Qwen Code runs no hooks while \"disableAllHooks\" is true in {settings_path()}: remove it (or set "
            "it to false) for automatic capture; until then run `wwt ingest`."]
