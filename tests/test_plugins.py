"""The one-click installs shipped in this repository — a Claude Code plugin + marketplace, a Gemini CLI extension,
a Codex plugin + marketplace — checked against each agent's documented schema, and their commands run the way
the agents run them: the ``wwt`` console script found on PATH, fed the agent's stdin JSON, or spoken to by a
real MCP client over stdio.

Schemas: Claude Code "Plugins reference" and "Plugin marketplaces" (plugin.json fields, kebab-case name,
``hooks/hooks.json`` and ``.mcp.json`` at the plugin root, ``source`` starting with ``./`` resolved from the
marketplace root, reserved marketplace names); Gemini CLI ``docs/extensions/reference.md`` (``name`` +
``version`` required, name lowercase with dashes matching the install folder, hooks only in
``hooks/hooks.json``, timeouts in ms); Codex ``codex-rs/core-plugins`` (``.codex-plugin/plugin.json``, paths
``./``-relative without ``..``, ``.agents/plugins/marketplace.json`` read before ``.claude-plugin/``, policy
enums, ``hooks/hooks.json`` in the hooks.json shape)."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from wwt import __version__
from wwt.setup import claude, codex, gemini
from wwt.setup.common import SERVER_NAME, is_our_handler
from wwt.store import Store

ROOT = Path(__file__).resolve().parent.parent
CLAUDE_PLUGIN = ROOT / "plugins" / "claude-code"
CODEX_PLUGIN = ROOT / "plugins" / "codex-cli"
GEMINI_EXTENSION = ROOT  # `gemini extensions install <repo>` takes the repository root (no subfolder support)

KEBAB = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")  # Claude Code plugin/marketplace names
SEMVER = re.compile(r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$")
RESERVED_MARKETPLACES = {
    "claude-code-marketplace", "claude-code-plugins", "claude-plugins-official", "claude-plugins-community",
    "claude-community", "anthropic-marketplace", "anthropic-plugins", "agent-skills", "anthropic-agent-skills",
    "knowledge-work-plugins", "life-sciences", "first-party-plugins", "healthcare",
}
# Event names each agent documents for hooks (Claude "Plugins reference" table; Gemini core/src/hooks/types.ts
# HookEventName; Codex developers.openai.com/codex/hooks).
CLAUDE_EVENTS = {
    "SessionStart", "Setup", "UserPromptSubmit", "UserPromptExpansion", "PreToolUse", "PermissionRequest",
    "PermissionDenied", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification", "MessageDisplay",
    "SubagentStart", "SubagentStop", "TaskCreated", "TaskCompleted", "Stop", "StopFailure", "TeammateIdle",
    "InstructionsLoaded", "ConfigChange", "CwdChanged", "FileChanged", "WorktreeCreate", "WorktreeRemove",
    "PreCompact", "PostCompact", "Elicitation", "ElicitationResult", "SessionEnd",
}
GEMINI_EVENTS = {
    "BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "Notification", "SessionStart", "SessionEnd",
    "PreCompress", "BeforeModel", "AfterModel", "BeforeToolSelection",
}
CODEX_EVENTS = {
    "SessionStart", "SubagentStart", "PreToolUse", "PermissionRequest", "PostToolUse", "PreCompact",
    "PostCompact", "UserPromptSubmit", "SubagentStop", "Stop",
}
CODEX_MCP_KEYS = {"command", "args", "env", "env_vars", "cwd", "startup_timeout_sec", "tool_timeout_sec",
                  "enabled", "enabled_tools", "disabled_tools"}
HOOK_LIMIT_S = 1.5  # as in test_hook.py: generous on this shared 2-core machine
HEAVY = ("onnxruntime", "sentencepiece", "kiwipiepy", "tantivy", "hnswlib", "numpy", "typer", "rich")


def load(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), path
    return data


def pep440(version: str) -> str:
    """The plugin manifests spell the package's PEP 440 version in semver (``2.0.0.dev0`` ↔ ``2.0.0-dev.0``)."""
    return version.replace("-dev.", ".dev").replace("-rc.", "rc")


def handlers(hooks_file: dict) -> dict[str, list[dict]]:
    """event → command handlers, checking the ``{"hooks": {event: [{"hooks": [...]}]}}`` shape on the way."""
    assert set(hooks_file) == {"hooks"}
    out: dict[str, list[dict]] = {}
    for event, groups in hooks_file["hooks"].items():
        assert isinstance(groups, list) and groups
        for group in groups:
            assert isinstance(group, dict) and isinstance(group["hooks"], list) and group["hooks"]
            out.setdefault(event, []).extend(group["hooks"])
    return out


def resolve_inside(root: Path, rel: str) -> Path:
    """A manifest path: ``./``-relative, no ``..``, inside ``root`` (all three agents refuse anything else)."""
    assert rel.startswith("./") and ".." not in Path(rel).parts, rel
    target = (root / rel).resolve()
    assert target.is_relative_to(root.resolve()), rel
    return target


# ---------------------------------------------------------------------------------------------- schemas


def test_claude_marketplace_lists_the_plugin_folder() -> None:
    market = load(ROOT / ".claude-plugin" / "marketplace.json")
    assert KEBAB.match(market["name"]) and market["name"] not in RESERVED_MARKETPLACES
    assert market["owner"]["name"]
    [entry] = market["plugins"]
    assert KEBAB.match(entry["name"])
    plugin_dir = resolve_inside(ROOT, entry["source"])  # relative to the marketplace root, not .claude-plugin/
    assert plugin_dir == CLAUDE_PLUGIN.resolve()
    assert load(plugin_dir / ".claude-plugin" / "plugin.json")["name"] == entry["name"]


def test_claude_plugin_manifest_hooks_and_mcp_server() -> None:
    manifest = load(CLAUDE_PLUGIN / ".claude-plugin" / "plugin.json")
    assert KEBAB.match(manifest["name"]) and SEMVER.match(manifest["version"])
    assert isinstance(manifest["description"], str) and manifest["description"]
    assert isinstance(manifest["author"], dict) and manifest["author"]["name"]
    assert isinstance(manifest.get("keywords", []), list)
    assert sorted(p.name for p in (CLAUDE_PLUGIN / ".claude-plugin").iterdir()) == ["plugin.json"]
    # default locations, so no component path fields are needed (a path field would replace or add to them)
    assert not {"hooks", "mcpServers", "commands", "agents", "skills"} & set(manifest)

    events = handlers(load(CLAUDE_PLUGIN / "hooks" / "hooks.json"))
    assert set(events) <= CLAUDE_EVENTS
    assert tuple(events) == claude.EVENTS  # the events `wwt setup` wires for Claude Code
    for [handler] in events.values():
        assert handler == {"type": "command", "command": "wwt hook claude-code", "timeout": claude.HOOK_TIMEOUT_S}

    servers = load(CLAUDE_PLUGIN / ".mcp.json")["mcpServers"]
    assert servers == {SERVER_NAME: {"command": "wwt", "args": ["mcp"]}}


def test_gemini_extension_manifest_and_hooks() -> None:
    manifest = load(GEMINI_EXTENSION / "gemini-extension.json")
    assert re.fullmatch(r"[a-z0-9-]+", manifest["name"]) and manifest["version"]
    assert manifest["name"] == "wwt"  # Gemini expects the install folder ~/.gemini/extensions/<name>
    assert "hooks" not in manifest  # Gemini reads hooks only from hooks/hooks.json
    assert manifest["mcpServers"] == {SERVER_NAME: {"command": "wwt", "args": ["mcp"]}}
    assert not (GEMINI_EXTENSION / "GEMINI.md").exists()  # it would be loaded as context into every session

    events = handlers(load(GEMINI_EXTENSION / "hooks" / "hooks.json"))
    assert set(events) <= GEMINI_EVENTS
    assert tuple(events) == gemini.EVENTS
    for [handler] in events.values():
        assert handler == {"type": "command", "name": "wwt", "command": "wwt hook gemini-cli",
                           "timeout": gemini.HOOK_TIMEOUT_MS}  # milliseconds in Gemini


def test_codex_marketplace_and_plugin_manifest() -> None:
    market = load(ROOT / ".agents" / "plugins" / "marketplace.json")
    assert market["name"] and isinstance(market["plugins"], list)
    [entry] = market["plugins"]
    assert entry["source"]["source"] == "local"
    assert resolve_inside(ROOT, entry["source"]["path"]) == CODEX_PLUGIN.resolve()
    assert entry["policy"]["installation"] in {"AVAILABLE", "NOT_AVAILABLE", "INSTALLED_BY_DEFAULT"}
    assert entry["policy"]["authentication"] in {"ON_INSTALL", "ON_USE"}

    manifest = load(CODEX_PLUGIN / ".codex-plugin" / "plugin.json")
    assert manifest["name"] == entry["name"] and KEBAB.match(manifest["name"])
    assert manifest["version"] and manifest["description"]
    assert sorted(p.name for p in (CODEX_PLUGIN / ".codex-plugin").iterdir()) == ["plugin.json"]
    hooks_path = resolve_inside(CODEX_PLUGIN, manifest["hooks"])
    mcp_path = resolve_inside(CODEX_PLUGIN, manifest["mcpServers"])
    prompts = manifest["interface"]["defaultPrompt"]
    assert 1 <= len(prompts) <= 3 and all(len(" ".join(p.split())) <= 128 for p in prompts)

    events = handlers(load(hooks_path))
    assert set(events) <= CODEX_EVENTS
    assert tuple(events) == codex.EVENTS  # Codex has no SessionEnd
    for [handler] in events.values():
        assert handler == {"type": "command", "command": "wwt hook codex-cli", "timeout": codex.HOOK_TIMEOUT_S}

    servers = load(mcp_path)["mcpServers"]
    assert set(servers) == {SERVER_NAME} and set(servers[SERVER_NAME]) <= CODEX_MCP_KEYS
    assert [servers[SERVER_NAME]["command"], *servers[SERVER_NAME]["args"]] == ["wwt", "mcp"]


def test_every_manifest_carries_the_package_version() -> None:
    versions = {
        load(CLAUDE_PLUGIN / ".claude-plugin" / "plugin.json")["version"],
        load(CODEX_PLUGIN / ".codex-plugin" / "plugin.json")["version"],
        load(GEMINI_EXTENSION / "gemini-extension.json")["version"],
    }
    assert {pep440(v) for v in versions} == {__version__}


def test_setup_recognises_the_plugin_hooks_as_wwt_hooks() -> None:
    """`wwt setup`/`wwt doctor` tell wwt's hooks from the user's by their command: the plugins' too."""
    for path in (CLAUDE_PLUGIN / "hooks/hooks.json", CODEX_PLUGIN / "hooks/hooks.json",
                 GEMINI_EXTENSION / "hooks/hooks.json"):
        for found in handlers(load(path)).values():
            assert all(is_our_handler(h) for h in found)


# ------------------------------------------------------------------------------ the commands, as run


def wwt_script() -> Path:
    """The ``wwt`` console script of this installation (what ``pipx install`` puts on PATH)."""
    script = Path(sys.executable).parent / "wwt"
    if not script.exists():
        pytest.fail(f"no wwt console script beside {sys.executable}: install the package (pip install -e .)")
    return script


@pytest.fixture
def agent_env(tmp_path: Path) -> dict[str, str]:
    """An agent's environment: a PATH holding the ``wwt`` script but not this interpreter's ``python`` first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_", "GEMINI_"))}
    env.update(HOME=str(tmp_path / "home"), WWT_HOME=str(tmp_path / "data"),
               PATH=os.pathsep.join([str(wwt_script().parent), "/usr/bin", "/bin"]))
    (tmp_path / "home").mkdir()
    return env


@pytest.fixture
def worker_held(agent_env: dict[str, str]):
    """Hold worker.lock as a running worker would, so hook calls queue without starting one."""
    data = Path(agent_env["WWT_HOME"])
    data.mkdir(mode=0o700)
    fd = os.open(data / "worker.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    yield data
    os.close(fd)


def payload(platform: str, transcript: Path) -> str:
    """What each agent writes on the hook's stdin (agent-log-formats §1.5, §2.4, §3.5)."""
    if platform == "claude-code":
        return json.dumps({"session_id": "5f0c2f8e-1111-4222-8333-944455556666", "transcript_path": str(transcript),
                           "cwd": str(transcript.parent), "hook_event_name": "Stop", "stop_hook_active": False})
    if platform == "gemini-cli":
        return json.dumps({"session_id": "7b1e3c4d-0000-4000-8000-000000000001", "transcript_path": str(transcript),
                           "cwd": str(transcript.parent), "hook_event_name": "AfterAgent",
                           "timestamp": "2026-08-01T10:00:00Z", "prompt": "hi", "prompt_response": "hello",
                           "stop_hook_active": False})
    return json.dumps({"session_id": "019a0000-0000-7000-8000-000000000002", "turn_id": "1",
                       "transcript_path": str(transcript), "hook_event_name": "Stop", "cwd": str(transcript.parent),
                       "model": "gpt-5-codex", "stop_hook_active": False, "last_assistant_message": None})


PLUGIN_HOOKS = {
    "claude-code": CLAUDE_PLUGIN / "hooks" / "hooks.json",
    "gemini-cli": GEMINI_EXTENSION / "hooks" / "hooks.json",
    "codex-cli": CODEX_PLUGIN / "hooks" / "hooks.json",
}


@pytest.mark.parametrize("platform", sorted(PLUGIN_HOOKS))
def test_plugin_hook_commands_queue_the_transcript_quickly_and_print_nothing(
    platform: str, agent_env: dict[str, str], worker_held: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("")
    commands = {h["command"] for hs in handlers(load(PLUGIN_HOOKS[platform])).values() for h in hs}
    for command in sorted(commands):
        started = time.perf_counter()
        proc = subprocess.run(command, shell=True, input=payload(platform, transcript), capture_output=True,
                              text=True, env=agent_env, timeout=30)
        elapsed = time.perf_counter() - started
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", ""), proc
        assert elapsed < HOOK_LIMIT_S, f"{command}: {elapsed:.2f} s"
    with Store.open(worker_held / "wwt.sqlite3", readonly=True) as store:
        rows = store.conn.execute("SELECT path, platform FROM ingest_queue").fetchall()
    assert [tuple(r) for r in rows] == [(str(transcript), platform)]


def test_the_same_transcript_from_plugin_and_setup_hooks_is_queued_once(
    agent_env: dict[str, str], worker_held: Path, tmp_path: Path
) -> None:
    """If both a plugin and an older `wwt setup` entry fire for one turn, the second call is absorbed."""
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("")
    for command in ("wwt hook claude-code", f"{shlex.quote(sys.executable)} -m wwt hook claude-code"):
        proc = subprocess.run(command, shell=True, input=payload("claude-code", transcript), capture_output=True,
                              text=True, env=agent_env, timeout=30)
        assert proc.returncode == 0
    with Store.open(worker_held / "wwt.sqlite3", readonly=True) as store:
        assert store.conn.execute("SELECT COUNT(*) FROM ingest_queue").fetchone()[0] == 1


def test_the_console_script_hook_imports_no_cli_or_model_module(
    agent_env: dict[str, str], worker_held: Path, tmp_path: Path
) -> None:
    """The plugins run ``wwt hook …`` (the console script), not ``python -m wwt``: it must take the same fast
    path that skips typer/rich and everything heavy."""
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("")
    env = dict(agent_env, PYTHONPROFILEIMPORTTIME="1")
    proc = subprocess.run(["wwt", "hook", "claude-code"], input=payload("claude-code", transcript),
                          capture_output=True, text=True, env=env, timeout=30)
    assert proc.returncode == 0 and proc.stdout == ""
    imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if "|" in line}
    assert "wwt" in imported and "sqlite3" in imported  # the trace is real
    assert imported.isdisjoint(HEAVY), sorted(imported & set(HEAVY))


@pytest.mark.parametrize("mcp_file", [CLAUDE_PLUGIN / ".mcp.json", CODEX_PLUGIN / ".mcp.json",
                                      GEMINI_EXTENSION / "gemini-extension.json"],
                         ids=["claude-code", "codex-cli", "gemini-cli"])
def test_plugin_mcp_server_command_answers_a_real_mcp_client(
    mcp_file: Path, agent_env: dict[str, str], model_dir: Path, tmp_path: Path
) -> None:
    server = load(mcp_file)["mcpServers"][SERVER_NAME]
    env = dict(agent_env, WWT_MODEL_DIR=str(model_dir))

    async def talk() -> tuple[str, list[str]]:
        params = StdioServerParameters(command=server["command"], args=server["args"], env=env, cwd=str(tmp_path))
        with open(tmp_path / "server-stderr.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    init = await asyncio.wait_for(session.initialize(), timeout=60)
                    tools = await session.list_tools()
                    return init.server_info.name, [t.name for t in tools.tools]

    name, tools = asyncio.run(talk())
    assert name
    assert {"search_memory", "search_all", "get_session", "ingest_session"} <= set(tools)
