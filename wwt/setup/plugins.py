"""Is wwt's own plugin/extension installed and enabled in an agent? Then the plugin provides the hooks and the MCP
server, and ``wwt setup`` must not register a second copy (two hook runs per turn, two sets of MCP tools).

Read-only: where each agent records what it installed —
Claude Code ``<config>/plugins/installed_plugins.json`` (user scope) + ``enabledPlugins`` in ``settings.json``;
Gemini CLI ``~/.gemini/extensions/<dir>/gemini-extension.json`` (or the source of a linked one) +
``extension-enablement.json``; Qwen Code the same layout under ``~/.qwen/extensions`` with ``qwen-extension.json``
and ``.qwen-extension-install.json`` (``qwen extensions install`` converts a Gemini extension such as wwt's into
one: QwenLM/qwen-code ``packages/core/src/extension``); Codex ``[plugins."wwt@<marketplace>"]`` in
``config.toml``. A file that cannot be read counts as "no plugin": setup then wires the agent as before."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, NamedTuple

import tomlkit

from wwt.setup import claude, codex, gemini, qwen
from wwt.setup.common import home

PLUGIN_NAME = "wwt"


class Installed(NamedTuple):
    """The agent's id for the installed plugin (``wwt@<marketplace>``; ``wwt`` for a Gemini extension) and
    where its files are."""

    ident: str
    where: str

    def __str__(self) -> str:
        return f"{self.ident} ({self.where})"


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _plugin_keys(keys: Any) -> list[str]:
    """``wwt@<marketplace>`` ids among ``keys``."""
    return [k for k in keys if isinstance(k, str) and k.split("@", 1)[0] == PLUGIN_NAME and "@" in k]


def claude_plugin() -> Installed | None:
    """Where Claude Code installed the wwt plugin for the user (every project), if it is enabled there."""
    installed = _json(claude.config_dir() / "plugins" / "installed_plugins.json")
    plugins = installed.get("plugins") if isinstance(installed, dict) else None
    if not isinstance(plugins, dict):
        return None
    settings = _json(claude.settings_path())
    enabled = settings.get("enabledPlugins") if isinstance(settings, dict) else None
    enabled = enabled if isinstance(enabled, dict) else {}
    for key in _plugin_keys(plugins):
        entries = plugins[key] if isinstance(plugins[key], list) else [plugins[key]]  # v2 list, v1 one object
        for entry in entries:
            if not isinstance(entry, dict) or entry.get("scope", "user") != "user":
                continue  # a project/local install covers one project only: setup still wires the rest
            if enabled.get(key) is False:
                continue
            return Installed(key, str(entry.get("installPath") or claude.config_dir() / "plugins"))
    return None


def _gemini_rule_matches(rule: str, path: str) -> tuple[bool, bool]:
    """(matches, disables) for one extension-enablement rule, as Gemini CLI reads them: ``!`` disables, a
    trailing ``*`` covers subfolders, paths compared with leading and trailing slashes."""
    disable = rule.startswith("!")
    base = rule[1:] if disable else rule
    subdirs = base.endswith("*")
    base = base[:-1] if subdirs else base
    base = "/" + base.strip("/") + "/" if base.strip("/") else "/"
    pattern = re.escape(base) + (".*" if subdirs else "")
    return re.fullmatch(pattern, path) is not None, disable


def _extension(root: Path, manifest_name: str, install_name: str, homes: list[str]) -> Installed | None:
    """The wwt extension in ``root`` (Gemini CLI's layout, which Qwen Code shares), if it is enabled for the user's
    home: a folder whose manifest (or, for a linked one, the manifest at its source) is named wwt, and no
    disabling rule in ``extension-enablement.json`` that matches one of ``homes`` last."""
    try:
        folders = sorted(p for p in root.iterdir() if p.is_dir())
    except OSError:
        return None
    for folder in folders:
        source = folder
        meta = _json(folder / install_name)
        if isinstance(meta, dict) and meta.get("type") == "link" and isinstance(meta.get("source"), str):
            source = Path(meta["source"])  # `… extensions link`: the manifest stays at the source
        manifest = _json(source / manifest_name)
        if isinstance(manifest, dict) and manifest.get("name") == PLUGIN_NAME:
            break
    else:
        return None
    enablement = _json(root / "extension-enablement.json")
    rules = enablement.get(PLUGIN_NAME, {}).get("overrides", []) if isinstance(enablement, dict) else []
    enabled = True  # extensions are enabled by default; the last matching rule wins
    for rule in rules if isinstance(rules, list) else []:
        if isinstance(rule, str):
            found = [_gemini_rule_matches(rule, here) for here in homes]
            if any(matches for matches, _ in found):
                enabled = not found[0][1]
    return Installed(PLUGIN_NAME, str(folder)) if enabled else None


def _slashed(path: str) -> str:
    return "/" + path.strip("/") + "/"


def gemini_extension() -> Installed | None:
    """Where Gemini CLI installed the wwt extension, if it is enabled for the user's home (the user scope)."""
    return _extension(gemini.config_dir() / "extensions", "gemini-extension.json", ".gemini-extension-install.json",
                      [_slashed(str(home()))])


def qwen_extension() -> Installed | None:
    """Where Qwen Code installed the wwt extension, if it is enabled for the user's home. Qwen matches each rule
    against the folder as given and as its real path (a symlinked home)."""
    here = str(home())
    return _extension(qwen.config_dir() / "extensions", "qwen-extension.json", ".qwen-extension-install.json",
                      list(dict.fromkeys([_slashed(here), _slashed(os.path.realpath(here))])))


def codex_plugin() -> Installed | None:
    """The wwt plugin id Codex lists as enabled in ``config.toml`` (installs go to ``plugins/cache``)."""
    try:
        doc = tomlkit.parse(codex.config_path().read_text(encoding="utf-8")).unwrap()
    except (OSError, ValueError, tomlkit.exceptions.ParseError):
        return None
    plugins = doc.get("plugins")
    if not isinstance(plugins, dict):
        return None
    for key in _plugin_keys(plugins):
        entry = plugins[key]
        if isinstance(entry, dict) and entry.get("enabled", True) is not False:
            marketplace = key.split("@", 1)[1]
            return Installed(key, str(codex.config_dir() / "plugins" / "cache" / marketplace / PLUGIN_NAME))
    return None


FINDERS = {claude.PLATFORM: claude_plugin, gemini.PLATFORM: gemini_extension, codex.PLATFORM: codex_plugin,
           qwen.PLATFORM: qwen_extension}


def installed(platform: str) -> Installed | None:
    """The enabled wwt plugin of this agent, or None."""
    finder = FINDERS.get(platform)
    return finder() if finder else None


__all__ = ["PLUGIN_NAME", "Installed", "installed", "claude_plugin", "gemini_extension", "codex_plugin",
           "qwen_extension"]
