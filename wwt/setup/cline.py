"""Cline (VS Code extension ``saoudrizwan.claude-dev``, and the Cline CLI's ``~/.cline/data``): the MCP server in
``<storage>/settings/cline_mcp_settings.json`` of each installation found. No hook: Cline's task logs are read
by ``wwt ingest`` and the engine's scan.

The file is ``{"mcpServers": {<name>: {command, args?, env?, type?: "stdio", disabled?, autoApprove?,
timeout?}}}`` (cline/cline ``src/services/mcp/schemas.ts``; the name from ``GlobalFileNames.mcpSettings``).
Where the extension keeps its storage (each VS Code-family editor's ``globalStorage``) is the parser's
knowledge (``wwt.parsers.cline``), not repeated here. Roo Code (``roo.py``) is the same with its own names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wwt.parsers.cline import ClineParser
from wwt.setup.common import json_mcp_edit, json_registered_mcp, stdio_entry
from wwt.setup.configfile import FileEdit
from wwt.setup.state import SetupState

PLATFORM = "cline"
LABEL = "Cline"
BINARY = "cline"
EVENTS: tuple[str, ...] = ()  # no wwt hook
MCP_CLI = False
SETTINGS_FILE = "cline_mcp_settings.json"


def storage_roots() -> list[Path]:
    """Every place Cline may keep its data: the parent of each task folder the parser reads."""
    return [root.parent for root in ClineParser().default_roots()]


def installations(roots: list[Path]) -> list[Path]:
    return [root for root in roots if root.is_dir()]


def installation_name(root: Path) -> str:
    """The editor whose ``…/<editor>/User/globalStorage/<extension>`` this is, or the folder (the CLI's)."""
    return root.parents[2].name if root.parent.name == "globalStorage" else str(root)


def installation_tag(agent: str, root: Path) -> str:
    """A state prefix per installation (``cline:Code``, ``cline:VSCodium``, …): the settings files of two
    editors share a name, and each must remember on its own what it held before setup."""
    return f"{agent}:{installation_name(root)}"


def settings_edits(roots: list[Path], name: str, label: str, agent: str, argv: list[str], env: dict[str, str],
                   uninstall: bool, state: SetupState) -> list[FileEdit]:
    """Our server in (or out of) the settings file of every installation whose storage folder exists."""
    entry = None if uninstall else stdio_entry(argv, env)
    edits = []
    for root in installations(roots):
        edit = json_mcp_edit(root / "settings" / name, label, entry, state, installation_tag(agent, root))
        edit.what += f" in {installation_name(root)}"
        edits.append(edit)
    return edits


def registered_in(roots: list[Path], name: str) -> dict[str, Any] | None:
    for root in installations(roots):
        found = json_registered_mcp(root / "settings" / name)
        if found is not None:
            return found
    return None


def config_dir() -> Path:
    roots = storage_roots()
    return next(iter(installations(roots)), roots[0])


def detected() -> bool:
    return bool(installations(storage_roots()))


def hook_edits(command: str, uninstall: bool, state: SetupState) -> list[FileEdit]:
    return []


def mcp_edit(argv: list[str], env: dict[str, str], uninstall: bool, state: SetupState) -> list[FileEdit]:
    return settings_edits(storage_roots(), SETTINGS_FILE, LABEL, "cline", argv, env, uninstall, state)


def registered_mcp() -> dict[str, Any] | None:
    return registered_in(storage_roots(), SETTINGS_FILE)


def registered_hooks() -> dict[str, list[dict[str, Any]]]:
    return {}


def approvals() -> list[str]:
    return []
