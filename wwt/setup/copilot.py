"""GitHub Copilot CLI: the MCP server in ``~/.copilot/mcp-config.json`` (``$COPILOT_HOME`` moves the folder;
``mcpServers`` → ``{type: "local", command, args, env, tools}``, docs.github.com copilot-cli
add-mcp-servers; ``tools: ["*"]`` lets Copilot call all of the server's tools) and a hook.

Hooks (docs.github.com …/copilot/reference/hooks-reference): besides a repository's ``.github/hooks/*.json``
the CLI loads every ``*.json`` in the user-level folder ``~/.copilot/hooks/`` (``$COPILOT_HOME/hooks/``), each
``{"version": 1, "hooks": {<event>: [{"type": "command", "bash": …, "timeoutSec": …}]}}``. Setup writes its own
file there, ``wwt.json``, so no file of the user's is touched. Events are named in PascalCase (``Stop``,
``SessionEnd``): that selects the payload with snake_case fields (``session_id``, ``transcript_path``, ``cwd``),
the shape ``wwt hook`` already reads. (The ``hooks`` key of ``config.json`` is not used: the CLI rewrites that
file.) MCP is a file edit only (``/mcp add`` is an interactive form)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wwt.parsers.copilot_cli import copilot_home
from wwt.setup.common import (
    flat_hook_change,
    flat_registered_hooks,
    json_mcp_edit,
    json_registered_mcp,
    stdio_entry,
)
from wwt.setup.configfile import FileEdit, json_transform
from wwt.setup.state import SetupState

PLATFORM = "copilot-cli"
LABEL = "Copilot CLI"
BINARY = "copilot"
EVENTS = ("Stop", "SessionEnd")
HOOK_TIMEOUT_S = 10
MCP_CLI = False


def config_dir() -> Path:
    return copilot_home()


def mcp_config_path() -> Path:
    return config_dir() / "mcp-config.json"


def hooks_path() -> Path:
    return config_dir() / "hooks" / "wwt.json"


def detected() -> bool:
    return config_dir().is_dir()


def hook_edits(command: str, uninstall: bool, state: SetupState) -> list[FileEdit]:
    path = hooks_path()
    handler = {"type": "command", "bash": command, "timeoutSec": HOOK_TIMEOUT_S}
    change = flat_hook_change(path, EVENTS, handler, uninstall, state, "copilot")
    return [FileEdit(path, json_transform(path, change), f"{LABEL} hooks ({', '.join(EVENTS)})")]


def mcp_entry(argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    return {**stdio_entry(argv, env, {"type": "local"}), "tools": ["*"]}


def mcp_edit(argv: list[str], env: dict[str, str], uninstall: bool, state: SetupState) -> FileEdit:
    return json_mcp_edit(mcp_config_path(), LABEL, None if uninstall else mcp_entry(argv, env), state, "copilot")


def registered_mcp() -> dict[str, Any] | None:
    return json_registered_mcp(mcp_config_path())


def registered_hooks() -> dict[str, list[dict[str, Any]]]:
    return flat_registered_hooks(hooks_path(), EVENTS, key="bash")


def approvals() -> list[str]:
    return []
