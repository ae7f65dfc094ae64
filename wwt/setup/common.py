"""Pieces shared by the three agents: how our hook/MCP entries look, how we recognise them, env lookups.

Our entries are recognised by their command containing ``wwt hook`` (hooks) or by the server name ``wwt``
(MCP), so ``--uninstall`` removes exactly what setup added and nothing else.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wwt.setup.configfile import ConfigFormatError, FileEdit, json_transform, parse_json_object, read_text
from wwt.setup.state import SetupState

HOOK_MARK = "wwt hook"
SERVER_NAME = "wwt"
PROPAGATED_ENV = ("WWT_HOME", "WWT_MODEL_DIR")


def home() -> Path:
    """``$HOME`` first (tests and sandboxes override it), then the password database."""
    raw = os.environ.get("HOME")
    return Path(raw) if raw else Path.home()


def wwt_base_command() -> list[str]:
    """How an agent should start this installation of wwt: the ``wwt`` script beside the running Python
    (not whatever ``wwt`` is first on PATH, which may be another install), else ``python -m wwt``."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == "wwt" and argv0.exists():
        return [os.path.abspath(argv0)]
    sibling = Path(sys.executable).parent / "wwt"
    if sibling.exists() and os.access(sibling, os.X_OK):
        return [str(sibling)]
    found = shutil.which("wwt")
    if found and Path(found).parent == Path(sys.executable).parent:
        return [found]
    return [os.path.abspath(sys.executable), "-m", "wwt"]


def hook_base_command() -> list[str]:
    """Hooks run on every turn, so they use ``<this python> -m wwt hook``: ``wwt/__main__.py`` dispatches it
    before the CLI (typer, rich) is imported, which keeps the hook near 100 ms instead of ~300+ ms. The venv's
    python path is kept as is (not symlink-resolved), or the venv would be lost."""
    return [os.path.abspath(sys.executable), "-m", "wwt"]


def propagated_env() -> dict[str, str]:
    """wwt settings the agent-launched processes must share with this shell (a custom data dir/model)."""
    return {k: os.environ[k] for k in PROPAGATED_ENV if os.environ.get(k)}


def hook_command(platform: str, base: list[str] | None = None, env: dict[str, str] | None = None) -> str:
    """A shell command line (all three agents run hook commands through a shell)."""
    base = base if base is not None else hook_base_command()
    env = env if env is not None else propagated_env()
    prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items()))
    line = shlex.join([*base, "hook", platform])
    return f"{prefix} {line}" if prefix else line


def mcp_argv(base: list[str] | None = None) -> list[str]:
    base = base if base is not None else wwt_base_command()
    return [*base, "mcp"]


def is_our_handler(handler: Any) -> bool:
    return isinstance(handler, dict) and HOOK_MARK in str(handler.get("command", ""))


def _event_groups(hooks: dict[str, Any], event: str, where: str) -> list[Any]:
    groups = hooks.get(event)
    if groups is None:
        return []
    if not isinstance(groups, list):
        raise ConfigFormatError(f"{where}: hooks.{event} is not a list; not touching it")
    return groups


def upsert_hook(hooks: dict[str, Any], event: str, handler: dict[str, Any], where: str) -> None:
    """Make exactly one of our handlers exist under ``event``, equal to ``handler``; others untouched."""
    groups = _event_groups(hooks, event, where)
    placed = False
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            continue
        kept = []
        for h in group["hooks"]:
            if is_our_handler(h):
                if placed:
                    continue  # a duplicate from an earlier install: drop it
                placed = True
                kept.append(h if h == handler else dict(handler))
            else:
                kept.append(h)
        if kept != group["hooks"]:
            group["hooks"] = kept
    groups[:] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]
    if not placed:
        groups.append({"hooks": [dict(handler)]})
    hooks[event] = groups


def remove_hooks(hooks: dict[str, Any], event: str, where: str, keep_empty: bool = False) -> None:
    """Drop our handlers under ``event``, and the groups/event lists that held only ours (an event list the user
    had before, even empty, stays with ``keep_empty``)."""
    groups = _event_groups(hooks, event, where)
    if not groups:
        return
    new_groups = []
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            kept = [h for h in group["hooks"] if not is_our_handler(h)]
            if not kept and group["hooks"]:
                continue
            if len(kept) != len(group["hooks"]):
                group = {**group, "hooks": kept}
        new_groups.append(group)
    if new_groups or keep_empty:
        hooks[event] = new_groups
    else:
        del hooks[event]


def our_handlers(hooks: Any, event: str) -> list[dict[str, Any]]:
    """Our handlers registered under ``event`` (for doctor and tests)."""
    if not isinstance(hooks, dict) or not isinstance(hooks.get(event), list):
        return []
    return [
        h
        for g in hooks[event]
        if isinstance(g, dict) and isinstance(g.get("hooks"), list)
        for h in g["hooks"]
        if is_our_handler(h)
    ]


def dict_at(data: dict[str, Any], key: str, where: str, create: bool = True) -> dict[str, Any] | None:
    value = data.get(key)
    if value is None:
        if not create:
            return None
        value = data[key] = {}
    if not isinstance(value, dict):
        raise ConfigFormatError(f"{where}: '{key}' is not an object; not touching it")
    return value


def made_tag(agent: str, path: Path, key: str) -> str:
    """State key recording whether ``key`` existed in ``path`` before setup (``agent`` prefix: claude, …)."""
    return f"{agent}:made:{path.name}#{key}"


def holds_only_ours(value: Any) -> bool:
    """Non-empty and nothing in it but our entries (our server; event lists whose groups hold only our
    handlers): what an earlier setup made, so an install whose state was lost still uninstalls cleanly."""
    if isinstance(value, dict):
        return bool(value) and (set(value) == {SERVER_NAME} or all(holds_only_ours(v) for v in value.values()))
    if isinstance(value, list):
        return bool(value) and all(
            isinstance(g, dict) and isinstance(g.get("hooks"), list) and bool(g["hooks"])
            and all(is_our_handler(h) for h in g["hooks"])
            for g in value
        )
    return False


def remember_made(state: SetupState, tag: str, container: dict[str, Any], key: str) -> None:
    """The first setup records whether ``container[key]`` was the user's (absent, or only ours = not theirs)."""
    state.remember(tag, key in container and not holds_only_ours(container[key]), None)


def open_dict(data: dict[str, Any], key: str, path: Path, state: SetupState, agent: str) -> dict[str, Any]:
    """``data[key]`` as an object, created when missing; the first setup remembers whether it was there."""
    remember_made(state, made_tag(agent, path, key), data, key)
    found = dict_at(data, key, str(path))
    assert found is not None
    return found


def drop_if_made(data: dict[str, Any], key: str, path: Path, state: SetupState, agent: str) -> None:
    """Uninstall: delete ``data[key]`` once empty, unless the user had it before setup (an empty
    ``"mcpServers": {}`` of their own stays)."""
    prior = state.prior(made_tag(agent, path, key))
    if not data[key] and not (prior is not None and prior[0]):
        del data[key]


def json_hook_change(path: Path, events: tuple[str, ...], handler: dict[str, Any], uninstall: bool,
                     state: SetupState, agent: str) -> Callable[[dict[str, Any]], None]:
    """The edit of a JSON config's ``hooks`` object (Claude settings, Gemini settings, Codex hooks.json): our
    ``handler`` under each event, or on uninstall none of ours (and no ``hooks`` key left that setup made)."""

    def change(data: dict[str, Any]) -> None:
        if uninstall:
            hooks = dict_at(data, "hooks", str(path), create=False)
            if hooks is None:
                return
            for event in events:
                prior = state.prior(made_tag(agent, path, f"hooks.{event}"))
                remove_hooks(hooks, event, str(path), keep_empty=prior is not None and prior[0])
            drop_if_made(data, "hooks", path, state, agent)
            return
        hooks = open_dict(data, "hooks", path, state, agent)
        for event in events:
            remember_made(state, made_tag(agent, path, f"hooks.{event}"), hooks, event)
            upsert_hook(hooks, event, handler, str(path))

    return change


def json_registered_hooks(path: Path, events: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    data = parse_json_object(read_text(path), path)
    return {event: our_handlers(data.get("hooks"), event) for event in events}


def stdio_entry(argv: list[str], env: dict[str, str], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A JSON ``mcpServers`` entry starting ``argv`` (Claude adds ``"type": "stdio"`` first)."""
    entry: dict[str, Any] = {**(extra or {}), "command": argv[0], "args": argv[1:]}
    if env:
        entry["env"] = dict(env)
    return entry


def json_mcp_edit(path: Path, label: str, entry: dict[str, Any] | None, state: SetupState, agent: str) -> FileEdit:
    """Put ``entry`` as our server under ``mcpServers`` of a JSON config, or remove ours (``entry`` None)."""

    def change(data: dict[str, Any]) -> None:
        if entry is None:
            servers = dict_at(data, "mcpServers", str(path), create=False)
            if servers is not None and SERVER_NAME in servers:
                del servers[SERVER_NAME]
                drop_if_made(data, "mcpServers", path, state, agent)
            return
        open_dict(data, "mcpServers", path, state, agent)[SERVER_NAME] = entry

    return FileEdit(path, json_transform(path, change), f"{label} MCP server '{SERVER_NAME}' (user scope)")


def json_registered_mcp(path: Path) -> dict[str, Any] | None:
    servers = parse_json_object(read_text(path), path).get("mcpServers")
    return servers.get(SERVER_NAME) if isinstance(servers, dict) else None


def mcp_matches(found: dict[str, Any] | None, argv: list[str], env: dict[str, str]) -> bool:
    """Is the registered server exactly this command line and environment?"""
    return bool(found) and found.get("command") == argv[0] and list(found.get("args", [])) == argv[1:] and (
        dict(found.get("env") or {}) == env
    )


def mcp_cli_add(binary: str, server: str, argv: list[str], env: dict[str, str], scope: tuple[str, ...],
                separator: bool = False) -> list[str]:
    """``<agent> mcp add`` for the agents whose CLI takes ``-e KEY=VALUE`` (Claude Code, Gemini CLI, Qwen
    Code); ``separator`` (Claude) puts the name before the options — its ``-e <env...>`` is variadic and took the name
    as one more value ("Invalid environment variable format: wwt") — and ``--`` before the server's argv."""
    envs = [x for k, v in sorted(env.items()) for x in ("-e", f"{k}={v}")]
    if separator:  # Claude's `-e` takes several values: the name goes first, and `--` ends the values
        return [binary, "mcp", "add", server, *scope, *envs, "--", *argv]
    return [binary, "mcp", "add", *scope, *envs, server, *argv]


def mcp_cli_remove(binary: str, server: str, scope: tuple[str, ...]) -> list[str]:
    return [binary, "mcp", "remove", *scope, server]



def is_our_flat_handler(handler: Any) -> bool:
    """Cursor's and Copilot CLI's entries name the command directly (``command``, or Copilot's ``bash``)."""
    return isinstance(handler, dict) and any(HOOK_MARK in str(handler.get(k, "")) for k in ("command", "bash"))


def flat_hook_change(path: Path, events: tuple[str, ...], handler: dict[str, Any], uninstall: bool,
                     state: SetupState, agent: str) -> Callable[[dict[str, Any]], None]:
    """The edit of a ``{"version": 1, "hooks": {event: [handler, …]}}`` file (Cursor's ``hooks.json``, a
    Copilot CLI hooks file): exactly one of our handlers per event, or on uninstall none, and no ``hooks`` or
    ``version`` key left that setup added."""

    def change(data: dict[str, Any]) -> None:
        if uninstall:
            hooks = dict_at(data, "hooks", str(path), create=False)
            if hooks is None:
                return
            for event in events:
                entries = _event_groups(hooks, event, str(path))
                kept = [h for h in entries if not is_our_flat_handler(h)]
                prior = state.prior(made_tag(agent, path, f"hooks.{event}"))
                if kept or (prior is not None and prior[0]):
                    if len(kept) != len(entries):
                        hooks[event] = kept
                elif event in hooks:
                    del hooks[event]
            drop_if_made(data, "hooks", path, state, agent)
            prior = state.prior(made_tag(agent, path, "version"))
            if "hooks" not in data and prior is not None and not prior[0]:
                data.pop("version", None)
            return
        remember_made(state, made_tag(agent, path, "version"), data, "version")
        data.setdefault("version", 1)
        hooks = open_dict(data, "hooks", path, state, agent)
        for event in events:
            entries = _event_groups(hooks, event, str(path))
            remember_made(state, made_tag(agent, path, f"hooks.{event}"), hooks, event)
            ours = [h for h in entries if is_our_flat_handler(h)]
            if ours == [handler]:
                continue
            kept = [h for h in entries if not is_our_flat_handler(h)]
            hooks[event] = [*kept, dict(handler)] if not ours else _replace_first(entries, handler)

    return change


def _replace_first(entries: list[Any], handler: dict[str, Any]) -> list[Any]:
    """Our first handler becomes ``handler`` where it stands; later copies (an earlier install's) go."""
    out, placed = [], False
    for h in entries:
        if is_our_flat_handler(h):
            if not placed:
                out.append(dict(handler))
                placed = True
            continue
        out.append(h)
    return out


def flat_registered_hooks(path: Path, events: tuple[str, ...], key: str = "command") -> dict[str, list[dict[str, Any]]]:
    """Our handlers per event in a flat hooks file, each with its command under ``command`` (for doctor)."""
    hooks = parse_json_object(read_text(path), path).get("hooks")
    out: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        entries = hooks.get(event) if isinstance(hooks, dict) else None
        out[event] = [{**h, "command": h.get(key)} for h in entries or [] if is_our_flat_handler(h)] \
            if isinstance(entries, list) else []
    return out
