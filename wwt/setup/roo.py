"""Roo Code (VS Code extension ``rooveterinaryinc.roo-cline``, a Cline fork): the MCP server in
``<globalStorage>/rooveterinaryinc.roo-cline/settings/mcp_settings.json`` of each editor where the extension
keeps its storage (RooCodeInc/Roo-Code ``GlobalFileNames.mcpSettings``; ``mcpServers`` → ``{command, args?,
env?, type?, disabled?, alwaysAllow?}``). Same code as Cline (``cline.py``); no hook."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wwt.parsers.cline import editor_global_storage
from wwt.parsers.roo_code import EXTENSION_ID
from wwt.setup.cline import installations, registered_in, settings_edits
from wwt.setup.configfile import FileEdit
from wwt.setup.state import SetupState

PLATFORM = "roo-code"
LABEL = "Roo Code"
BINARY = "roo"
EVENTS: tuple[str, ...] = ()  # no wwt hook
MCP_CLI = False
SETTINGS_FILE = "mcp_settings.json"


def storage_roots() -> list[Path]:
    return editor_global_storage(EXTENSION_ID)


def config_dir() -> Path:
    roots = storage_roots()
    return next(iter(installations(roots)), roots[0])


def detected() -> bool:
    return bool(installations(storage_roots()))


def hook_edits(command: str, uninstall: bool, state: SetupState) -> list[FileEdit]:
    return []


def mcp_edit(argv: list[str], env: dict[str, str], uninstall: bool, state: SetupState) -> list[FileEdit]:
    return settings_edits(storage_roots(), SETTINGS_FILE, LABEL, "roo", argv, env, uninstall, state)


def registered_mcp() -> dict[str, Any] | None:
    return registered_in(storage_roots(), SETTINGS_FILE)


def registered_hooks() -> dict[str, list[dict[str, Any]]]:
    return {}


def approvals() -> list[str]:
    return []
