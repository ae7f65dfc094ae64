"""Cursor: the MCP server in ``~/.cursor/mcp.json`` (read by the editor and by its CLI agent; ``mcpServers`` →
``{command, args, env}``, cursor.com/docs/mcp) and a hook in the user's ``~/.cursor/hooks.json``.

Hooks (Cursor 1.7 and later; cursor.com/docs/agent/hooks, and the hooks files other tools install, e.g.
Braintrust's Cursor extension): a ``{"version": 1, "hooks": {<event>: [{"command": …}]}}`` file, the user-level
one in ``~/.cursor``; each command gets one JSON object on stdin with ``hook_event_name``, ``conversation_id``,
``workspace_roots`` and, in newer versions, ``transcript_path`` (null when transcripts are off). We listen to
``stop`` (the agent loop of a turn ended) and ``sessionEnd``; ``wwt hook cursor`` queues the transcript, or the
conversation's files found by its id, or the editor's chat database, and exits 0 at once (a hook's output can
steer Cursor, so it prints nothing). MCP is a file edit only (no documented non-interactive ``mcp add``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wwt.setup.common import (
    flat_hook_change,
    flat_registered_hooks,
    home,
    json_mcp_edit,
    json_registered_mcp,
    stdio_entry,
)
from wwt.setup.configfile import FileEdit, json_transform
from wwt.setup.state import SetupState

PLATFORM = "cursor"
LABEL = "Cursor"
BINARY = "cursor-agent"
EVENTS = ("stop", "sessionEnd")
MCP_CLI = False


def config_dir() -> Path:
    return home() / ".cursor"


def mcp_config_path() -> Path:
    return config_dir() / "mcp.json"


def hooks_path() -> Path:
    return config_dir() / "hooks.json"


def detected() -> bool:
    return config_dir().is_dir()


def hook_edits(command: str, uninstall: bool, state: SetupState) -> list[FileEdit]:
    path = hooks_path()
    change = flat_hook_change(path, EVENTS, {"command": command}, uninstall, state, "cursor")
    return [FileEdit(path, json_transform(path, change), f"{LABEL} hooks ({', '.join(EVENTS)})")]


def mcp_edit(argv: list[str], env: dict[str, str], uninstall: bool, state: SetupState) -> FileEdit:
    return json_mcp_edit(mcp_config_path(), LABEL, None if uninstall else stdio_entry(argv, env), state, "cursor")


def registered_mcp() -> dict[str, Any] | None:
    return json_registered_mcp(mcp_config_path())


def registered_hooks() -> dict[str, list[dict[str, Any]]]:
    return flat_registered_hooks(hooks_path(), EVENTS)


def approvals() -> list[str]:
    return []
