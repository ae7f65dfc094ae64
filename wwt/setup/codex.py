"""Codex CLI: ``Stop`` and ``SessionEnd`` hooks in ``$CODEX_HOME/hooks.json``, the hooks feature flag and the
MCP server in ``$CODEX_HOME/config.toml`` (edited with tomlkit: comments and order survive). Codex asks the
user to trust new hooks in ``/hooks`` (agent-log-formats §3.5/§3.6) and records it as
``[hooks.state."<key>"] trusted_hash``; ``hook_trust`` reads that back so doctor and setup stop asking.

Codex 0.17x reads ``SessionEnd`` from hooks.json (its session-end input: ``session_id``, ``transcript_path`` —
may be null —, ``cwd``, ``hook_event_name``, ``reason``) and clamps that hook's timeout to 3 s; older builds
ignore keys they do not know (their ``HookEvents`` has no ``deny_unknown_fields``), so both are always written."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import tomlkit

from wwt.setup.common import (
    SERVER_NAME,
    home,
    is_our_handler,
    json_hook_change,
    json_registered_hooks,
    remember_made,
)
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
EVENTS = ("Stop", "SessionEnd")
HOOK_TIMEOUT_S = 10
SESSION_END_TIMEOUT_S = 3  # Codex clamps a SessionEnd hook to 3 s ("clamping SessionEnd hook timeout to 3s")
TIMEOUTS = {"Stop": HOOK_TIMEOUT_S, "SessionEnd": SESSION_END_TIMEOUT_S}
EVENT_LABELS = {"Stop": "stop", "SessionEnd": "session_end"}  # how Codex spells them in a hook's trust key
MCP_CLI = False  # `codex mcp add` cannot set startup_timeout_sec: setup writes [mcp_servers.wwt] itself
MCP_STARTUP_TIMEOUT_S = 30
PLUGIN_HOOK_COMMAND = "wwt hook codex-cli"  # what the Codex plugin's hooks run
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
    key = feature_key(version)
    switch = f"codex:features.{key}"

    changes = [json_hook_change(hpath, (event,), handler(command, event), uninstall, state, "codex")
               for event in EVENTS]

    def change_hooks(data: dict[str, Any]) -> None:
        for change in changes:
            change(data)

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
            out["startup_timeout_sec"] = MCP_STARTUP_TIMEOUT_S
            tools = tomlkit.inline_table()  # inline: wwt's entry stays one table, removed whole on uninstall
            for name, setting in read_only_approvals().items():
                inline_setting = tomlkit.inline_table()
                inline_setting.update(setting)
                tools[name] = inline_setting
            out["tools"] = tools
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


def read_only_approvals() -> dict[str, Any]:
    """``[mcp_servers.wwt.tools.<tool>] approval_mode = "approve"`` for wwt's read-only tools: Codex asks before
    every MCP call under some approval policies (and ``codex exec`` refuses what it would ask about); searching
    and reading the archive change nothing, archiving a file (ingest_session) still asks. wwt's own entry only."""
    from wwt.own_tools import READ_ONLY_TOOLS

    return {name: {"approval_mode": "approve"} for name in READ_ONLY_TOOLS}


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


def handler(command: str, event: str) -> dict[str, Any]:
    """Our hooks.json handler for ``event``."""
    return {"type": "command", "command": command, "timeout": TIMEOUTS[event]}


def trust_hash(event: str, entry: dict[str, Any], matcher: str | None = None) -> str:
    """The hash Codex keeps as ``trusted_hash`` for a command hook (codex-rs/hooks discovery
    ``command_hook_hash`` → codex-rs/config ``version_for_toml``): SHA-256 of the compact JSON, keys sorted, of
    ``{"event_name": <snake_case event>, "matcher"?, "hooks": [<the handler as Codex normalised it>]}`` — timeout
    defaulted to 600 s, at least 1, a SessionEnd one at most 3; ``async`` false; unset fields left out."""
    import hashlib
    import json

    timeout = entry.get("timeout", entry.get("timeoutSec"))
    timeout = max(1, int(timeout)) if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) else 600
    if event == "SessionEnd":
        timeout = min(timeout, SESSION_END_TIMEOUT_S)
    normalised: dict[str, Any] = {"type": "command", "command": str(entry.get("command", "")), "timeout": timeout,
                                  "async": bool(entry.get("async", False))}
    if isinstance(entry.get("statusMessage"), str):
        normalised["statusMessage"] = entry["statusMessage"]
    identity: dict[str, Any] = {"event_name": EVENT_LABELS[event], "hooks": [normalised]}
    if matcher is not None and event not in ("Stop", "UserPromptSubmit"):  # Codex drops a matcher on these
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


TRUSTED, UNTRUSTED, CHANGED, OFF = "trusted", "untrusted", "changed", "off"


def _hook_states() -> dict[str, Any]:
    """``[hooks.state]`` of config.toml (tomllib: read-only and quick; doctor runs this)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = None
    text = read_text(config_path())
    if not text:
        return {}
    try:
        doc: Any = tomllib.loads(text) if tomllib else parse_toml(text, config_path()).unwrap()
    except ValueError:
        return {}
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    states = hooks.get("state") if isinstance(hooks, dict) else None
    return states if isinstance(states, dict) else {}


def hook_trust(command: str | None = None, plugin: str | None = None) -> dict[str, str]:
    """Per event, whether Codex will run wwt's hook: ``trusted``, ``untrusted`` (never trusted), ``changed``
    (trusted once, different since — Codex asks again) or ``off`` (switched off in /hooks).

    Setup's own hooks: keys ``<CODEX_HOME>/hooks.json:<event>:<group>:<handler>`` for our handlers there (or,
    before setup wrote them, ``command`` as it will be). The plugin's (``plugin`` = ``wwt@<marketplace>``): keys
    ``<plugin>:hooks/hooks.json:<event>:…``, whose hash Codex follows with the plugin files' own after a ``/``
    — only the hook's part is compared here."""
    states = _hook_states()
    out: dict[str, str] = {}
    if plugin is not None:  # plugins/codex-cli/hooks/hooks.json holds exactly these (tests/test_plugins.py)
        wanted = {event: [(0, 0, handler(PLUGIN_HOOK_COMMAND, event))] for event in EVENTS}
        prefixes = [f"{plugin}:hooks/hooks.json"]
    else:
        prefixes = [os.path.abspath(hooks_path()), os.path.realpath(hooks_path())]
        wanted = {event: [] for event in EVENTS}
        try:
            data = json.loads(read_text(hooks_path()) or "{}")
        except ValueError:
            data = {}
        hooks = data.get("hooks") if isinstance(data, dict) else None
        for event in EVENTS:
            groups = hooks.get(event) if isinstance(hooks, dict) else None
            for g, group in enumerate(groups if isinstance(groups, list) else []):
                entries = group.get("hooks") if isinstance(group, dict) else None
                for h, entry in enumerate(entries if isinstance(entries, list) else []):
                    if is_our_handler(entry):
                        wanted[event].append((g, h, entry))
            if command is not None and not any(e.get("command") == command for _, _, e in wanted[event]):
                wanted[event] = [(-1, -1, handler(command, event))]  # what setup is about to write there
    for event, found in wanted.items():
        if not found:
            continue
        status = UNTRUSTED
        for g, h, entry in found:
            digest = trust_hash(event, entry)
            if g >= 0 and plugin is None:  # the path as Codex spells it (CODEX_HOME as given, or resolved)
                keys = [f"{p}:{EVENT_LABELS[event]}:{g}:{h}" for p in dict.fromkeys(prefixes)]
            else:
                keys = [k for k in states if any(k.startswith(f"{p}:{EVENT_LABELS[event]}:") for p in prefixes)]
            for key in keys:
                state = states.get(key)
                if not isinstance(state, dict):
                    continue
                if state.get("enabled") is False:
                    status = OFF
                    break
                trusted = str(state.get("trusted_hash", ""))
                if trusted.split("/", 1)[0] == digest:
                    status = TRUSTED
                    break
                if trusted:
                    status = CHANGED
            if status in (TRUSTED, OFF):
                break
        out[event] = status
    return out


def approvals() -> list[str]:
    from wwt.setup.common import hook_base_command, hook_command, propagated_env

    try:
        trust = hook_trust(hook_command(PLATFORM, hook_base_command(), propagated_env()))
    except (ConfigFormatError, OSError):
        trust = {event: UNTRUSTED for event in EVENTS}
    waiting = [event for event in EVENTS if trust.get(event, UNTRUSTED) in (UNTRUSTED, CHANGED)]
    if not waiting:
        return []
    return [f"Codex: open Codex and trust wwt's {' and '.join(waiting)} hook{'s' if len(waiting) > 1 else ''} in "
            "/hooks (Codex does not run new hooks until trusted)."]
