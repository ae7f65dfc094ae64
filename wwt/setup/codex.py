"""Codex CLI: ``Stop`` hook in ``$CODEX_HOME/hooks.json``, the hooks feature flag and the MCP server in
``$CODEX_HOME/config.toml`` (edited with tomlkit: comments and order survive). Codex has no SessionEnd hook
and asks the user to trust new hooks in ``/hooks`` (agent-log-formats §3.5/§3.6)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import tomlkit

from wwt.setup.common import SERVER_NAME, home, json_hook_change, json_registered_hooks, remember_made
from wwt.setup.configfile import (
    ConfigFormatError,
    FileEdit,
    json_transform,
    parse_toml,
    read_text,
    toml_transform,
)
from wwt.setup.state import SetupState

PLATFORM = "codex-cli"
LABEL = "Codex CLI"
BINARY = "codex"
EVENTS = ("Stop",)
HOOK_TIMEOUT_S = 10
FEATURE_KEYS = ("hooks", "codex_hooks")  # renamed codex_hooks -> hooks in 0.129
RENAME_VERSION = (0, 129, 0)
TABLE_SWITCH = "codex:table.features"  # did [features] exist before setup?
MCP_TABLE_SWITCH = "codex:table.mcp_servers"


def config_dir() -> Path:
    raw = os.environ.get("CODEX_HOME")
    return Path(raw).expanduser() if raw else home() / ".codex"


def hooks_path() -> Path:
    return config_dir() / "hooks.json"


def config_path() -> Path:
    return config_dir() / "config.toml"


mcp_config_path = config_path


def detected() -> bool:
    return config_dir().is_dir()


def installed_version() -> tuple[int, ...] | None:
    exe = shutil.which(BINARY)
    if not exe:
        return None
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_version(out)


def parse_version(text: str) -> tuple[int, ...] | None:
    m = re.search(r"(\d+)\.(\d+)\.(\d+)", text or "")
    return tuple(int(x) for x in m.groups()) if m else None


def feature_key(version: tuple[int, ...] | None) -> str:
    """``hooks`` for Codex ≥ 0.129; ``codex_hooks`` otherwise (older builds, and unknown versions, since newer
    builds still accept the old name as an alias)."""
    return "hooks" if version is not None and version >= RENAME_VERSION else "codex_hooks"


def _features_table(doc: tomlkit.TOMLDocument, create: bool) -> Any:
    table = doc.get("features")
    if table is None and create:
        doc.add("features", tomlkit.table())
        table = doc["features"]
    if table is not None and not isinstance(table, dict):
        raise ConfigFormatError(f"{config_path()}: 'features' is not a table; not touching it")
    return table


def hook_edits(command: str, uninstall: bool, state: SetupState, version: tuple[int, ...] | None = None) -> list[FileEdit]:
    hpath, cpath = hooks_path(), config_path()
    handler = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}
    key = feature_key(version)
    switch = f"codex:features.{key}"

    change_hooks = json_hook_change(hpath, EVENTS, handler, uninstall, state, "codex")

    def change_flag(doc: tomlkit.TOMLDocument) -> None:
        if uninstall:
            features = _features_table(doc, create=False)
            for k in FEATURE_KEYS:
                prior = state.prior(f"codex:features.{k}")
                if prior is None or features is None:
                    continue
                existed, value = prior
                if existed:
                    features[k] = value
                elif k in features:
                    del features[k]
            table_prior = state.prior(TABLE_SWITCH)
            if features is not None and len(features) == 0 and not (table_prior and table_prior[0]):
                del doc["features"]  # only a table setup created (the user's own empty [features] stays)
            return
        features = _features_table(doc, create=False)
        if features is not None and any(features.get(k) is True for k in FEATURE_KEYS):
            return
        state.remember(TABLE_SWITCH, features is not None, None)
        features = _features_table(doc, create=True)
        state.remember(switch, key in features, features.get(key))
        features[key] = True

    return [
        FileEdit(hpath, json_transform(hpath, change_hooks), f"{LABEL} hooks ({', '.join(EVENTS)})"),
        FileEdit(cpath, toml_transform(cpath, change_flag), f"{LABEL} feature flag [features]"),
    ]


def mcp_edit(argv: list[str], env: dict[str, str], uninstall: bool, state: SetupState) -> FileEdit:
    path = config_path()

    def change(doc: tomlkit.TOMLDocument) -> None:
        servers = doc.get("mcp_servers")
        if servers is not None and not isinstance(servers, dict):
            raise ConfigFormatError(f"{path}: 'mcp_servers' is not a table; not touching it")
        if uninstall:
            if servers is not None and SERVER_NAME in servers:
                del servers[SERVER_NAME]
                prior = state.prior(MCP_TABLE_SWITCH)
                if len(servers) == 0 and not (prior is not None and prior[0]):
                    del doc["mcp_servers"]  # only when setup made it: a [mcp_servers] of the user's stays
            return
        remember_made(state, MCP_TABLE_SWITCH, doc, "mcp_servers")
        def values() -> dict[str, Any]:
            out: dict[str, Any] = {"command": argv[0], "args": argv[1:]}
            if env:
                inline = tomlkit.inline_table()
                inline.update(env)
                out["env"] = inline
            out["startup_timeout_sec"] = 30
            return out

        wanted = values()
        if servers is None:
            servers = tomlkit.table(is_super_table=True)
            doc.add("mcp_servers", servers)
            servers = doc["mcp_servers"]
        current = servers.get(SERVER_NAME)
        if current is not None and current.unwrap() == tomlkit.item(wanted).unwrap():
            return
        if isinstance(current, tomlkit.items.Table):  # an older install's entry: update it where it stands
            for k in [k for k in current if k not in wanted]:
                del current[k]
            for k, v in wanted.items():
                current[k] = v
            return
        if current is not None:
            del servers[SERVER_NAME]
        entry = tomlkit.table()
        for k, v in wanted.items():
            entry[k] = v
        entry.add(tomlkit.nl())
        servers[SERVER_NAME] = entry

    return FileEdit(path, toml_transform(path, change), f"{LABEL} MCP server '{SERVER_NAME}'")


def registered_mcp() -> dict[str, Any] | None:
    doc = parse_toml(read_text(config_path()), config_path())
    servers = doc.get("mcp_servers")
    found = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    return found.unwrap() if found is not None and hasattr(found, "unwrap") else found


def cli_add(argv: list[str], env: dict[str, str]) -> list[str]:
    envs = [x for k, v in sorted(env.items()) for x in ("--env", f"{k}={v}")]
    return [BINARY, "mcp", "add", SERVER_NAME, *envs, "--", *argv]


def cli_remove() -> list[str]:
    return [BINARY, "mcp", "remove", SERVER_NAME]


def registered_hooks() -> dict[str, list[dict[str, Any]]]:
    return json_registered_hooks(hooks_path(), EVENTS)


def hooks_feature_enabled() -> bool:
    doc = parse_toml(read_text(config_path()), config_path())
    features = doc.get("features")
    return isinstance(features, dict) and any(features.get(k) is True for k in FEATURE_KEYS)


def approvals() -> list[str]:
    return ["Codex: open Codex and trust the new wwt Stop hook in /hooks (Codex does not run new hooks until trusted)."]
