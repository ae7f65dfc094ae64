"""Gemini CLI: hooks (AfterAgent, SessionEnd) + ``hooksConfig.enabled`` + MCP server, all in the user's
``~/.gemini/settings.json`` (agent-log-formats §2.4/§2.5). Hook timeouts are in milliseconds here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wwt.setup.common import (
    SERVER_NAME,
    dict_at,
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

PLATFORM = "gemini-cli"
LABEL = "Gemini CLI"
BINARY = "gemini"
CLI_SCOPE = ("-s", "user")
EVENTS = ("AfterAgent", "SessionEnd")
HOOK_TIMEOUT_MS = 10000
SWITCH = "gemini:hooksConfig.enabled"


def config_dir() -> Path:
    return home() / ".gemini"


def settings_path() -> Path:
    return config_dir() / "settings.json"


def mcp_config_path() -> Path:
    return settings_path()


def detected() -> bool:
    return config_dir().is_dir()


def hook_edits(command: str, uninstall: bool, state: SetupState) -> list[FileEdit]:
    path = settings_path()
    handler = {"type": "command", "name": "wwt", "command": command, "timeout": HOOK_TIMEOUT_MS}
    change_hooks = json_hook_change(path, EVENTS, handler, uninstall, state, "gemini")

    def change(data: dict[str, Any]) -> None:
        change_hooks(data)
        if uninstall:
            prior = state.prior(SWITCH)
            cfg = dict_at(data, "hooksConfig", str(path), create=False)
            if prior is not None and cfg is not None:
                existed, value = prior
                if existed:
                    cfg["enabled"] = value
                else:
                    cfg.pop("enabled", None)
                    if not cfg:
                        del data["hooksConfig"]
            return
        cfg = dict_at(data, "hooksConfig", str(path))
        if cfg.get("enabled") is not True:
            state.remember(SWITCH, "enabled" in cfg, cfg.get("enabled"))
            cfg["enabled"] = True

    return [FileEdit(path, json_transform(path, change), f"{LABEL} hooks ({', '.join(EVENTS)}) + hooksConfig.enabled")]


def mcp_entry(argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    return stdio_entry(argv, env)


def mcp_edit(argv: list[str], env: dict[str, str], uninstall: bool, state: SetupState) -> FileEdit:
    return json_mcp_edit(mcp_config_path(), LABEL, None if uninstall else mcp_entry(argv, env), state, "gemini")


def registered_mcp() -> dict[str, Any] | None:
    return json_registered_mcp(mcp_config_path())


def cli_add(argv: list[str], env: dict[str, str]) -> list[str]:
    return mcp_cli_add(BINARY, SERVER_NAME, argv, env, CLI_SCOPE)


def cli_remove() -> list[str]:
    return mcp_cli_remove(BINARY, SERVER_NAME, CLI_SCOPE)


def registered_hooks() -> dict[str, list[dict[str, Any]]]:
    return json_registered_hooks(settings_path(), EVENTS)


def hooks_enabled() -> bool:
    data = parse_json_object(read_text(settings_path()), settings_path())
    cfg = data.get("hooksConfig")
    return not (isinstance(cfg, dict) and cfg.get("enabled") is False)


def approvals() -> list[str]:
    return []
