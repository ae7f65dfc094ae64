"""OpenCode: the MCP server in the user's global config, ``~/.config/opencode/`` (``$XDG_CONFIG_HOME``).

OpenCode merges ``config.json``, ``opencode.json`` and ``opencode.jsonc`` from that folder (anomalyco/opencode,
``packages/opencode/src/config/config.ts``); setup edits the first of ``opencode.jsonc``, ``opencode.json``,
``config.json`` that exists, else creates ``opencode.json``. A server is ``mcp.<name>`` →
``{"type": "local", "command": [argv…], "environment": {…}, "enabled": true}`` (``config/mcp.ts``,
opencode.ai/docs/mcp-servers); a file already using the newer ``mcp.servers`` envelope (``config/v2-compat.ts``,
where ``disabled`` replaces ``enabled``) gets the entry there instead. OpenCode reads its files as JSONC: a file
with comments or trailing commas cannot be rewritten without losing them, so setup says so and skips it. No
hook: OpenCode runs JS plugins, not commands; its sessions are read by ``wwt ingest`` and the engine's scan."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from wwt.setup.common import SERVER_NAME, dict_at, drop_if_made, home, open_dict
from wwt.setup.configfile import (
    ConfigFormatError,
    EditSkipped,
    FileEdit,
    json_transform,
    parse_json_object,
    read_text,
    write_target,
)
from wwt.setup.state import SetupState

PLATFORM = "opencode"
LABEL = "OpenCode"
BINARY = "opencode"
EVENTS: tuple[str, ...] = ()  # no wwt hook
MCP_CLI = False
CONFIG_NAMES = ("opencode.jsonc", "opencode.json", "config.json")
_JSONC_NOISE = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.DOTALL)


def config_dir() -> Path:
    raw = os.environ.get("XDG_CONFIG_HOME")
    return (Path(raw).expanduser() if raw else home() / ".config") / "opencode"


def mcp_config_path() -> Path:
    folder = config_dir()
    found = next((folder / n for n in CONFIG_NAMES if (folder / n).exists() or (folder / n).is_symlink()), None)
    return found or folder / "opencode.json"


def detected() -> bool:
    return config_dir().is_dir()


def hook_edits(command: str, uninstall: bool, state: SetupState) -> list[FileEdit]:
    return []


def strip_jsonc(text: str) -> str:
    """``text`` without JSONC's comments and trailing commas (strings kept as they are)."""
    return _JSONC_NOISE.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)


def is_jsonc_only(text: str) -> bool:
    """Valid for OpenCode (JSONC) but not plain JSON: comments or trailing commas that an edit would lose."""
    try:
        json.loads(strip_jsonc(text))
    except ValueError:
        return False
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


def _servers(data: dict[str, Any], path: Path, state: SetupState, create: bool) -> dict[str, Any] | None:
    """Where servers are listed: ``mcp`` itself, or its ``servers`` envelope when the file uses one."""
    mcp = open_dict(data, "mcp", path, state, "opencode") if create else dict_at(data, "mcp", str(path), create=False)
    if mcp is None:
        return None
    nested = mcp.get("servers")
    envelope = isinstance(nested, dict) and not any(
        k in nested and not isinstance(nested[k], dict) for k in ("type", "enabled"))
    return nested if envelope else mcp


def mcp_entry(argv: list[str], env: dict[str, str], envelope: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "local", "command": list(argv)}
    if env:
        entry["environment"] = dict(env)
    if not envelope:
        entry["enabled"] = True
    return entry


def mcp_edit(argv: list[str], env: dict[str, str], uninstall: bool, state: SetupState) -> FileEdit | list[FileEdit]:
    """The edit of the config file; nothing for a JSONC file that already is as it should be, and
    ``EditSkipped`` (one line: what to add or remove by hand) for one that is not."""
    path = mcp_config_path()
    text = read_text(write_target(path))
    if text is not None and is_jsonc_only(text):
        found = registered_mcp()
        if (found is None) if uninstall else (found == {"command": argv[0], "args": argv[1:], "env": env}):
            return []
        why = f"{path} has comments or trailing commas, which an edit would lose; "
        raise EditSkipped(why + ("remove the 'wwt' server from its \"mcp\" yourself" if uninstall else
                                 f"add this under its \"mcp\" yourself: \"{SERVER_NAME}\": "
                                 + json.dumps(mcp_entry(argv, env, False))))

    def change(data: dict[str, Any]) -> None:
        if uninstall:
            servers = _servers(data, path, state, create=False)
            if servers is not None and SERVER_NAME in servers:
                del servers[SERVER_NAME]
                drop_if_made(data, "mcp", path, state, "opencode")
            return
        servers = _servers(data, path, state, create=True)
        assert servers is not None
        servers[SERVER_NAME] = mcp_entry(argv, env, servers is not data["mcp"])

    return FileEdit(path, json_transform(path, change), f"{LABEL} MCP server '{SERVER_NAME}' (global config)")


def registered_mcp() -> dict[str, Any] | None:
    """Our server as ``{command, args, env}`` (the shape doctor checks), or None."""
    path = mcp_config_path()
    text = read_text(write_target(path))
    try:
        data = parse_json_object(text, path)
    except ConfigFormatError:
        if text is None or not is_jsonc_only(text):
            raise
        data = json.loads(strip_jsonc(text))
    mcp = data.get("mcp")
    if not isinstance(mcp, dict):
        return None
    servers = mcp.get("servers") if isinstance(mcp.get("servers"), dict) else mcp
    found = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    command = found.get("command") if isinstance(found, dict) else None
    if not isinstance(command, list) or not command:
        return None
    return {"command": command[0], "args": command[1:], "env": dict(found.get("environment") or {})}


def registered_hooks() -> dict[str, list[dict[str, Any]]]:
    return {}


def approvals() -> list[str]:
    return []
