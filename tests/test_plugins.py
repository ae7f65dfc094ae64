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
import shutil
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
CODEX_EVENTS = {  # + SessionEnd, Interrupt, PreModelRequest: the hooks.json keys of Codex CLI 0.171.0's binary
    "SessionStart", "SubagentStart", "PreToolUse", "PermissionRequest", "PostToolUse", "PreCompact",
    "PostCompact", "UserPromptSubmit", "SubagentStop", "Stop", "SessionEnd", "Interrupt", "PreModelRequest",
}
CODEX_MCP_KEYS = {"command", "args", "env", "env_vars", "cwd", "startup_timeout_sec", "tool_timeout_sec",
                  "enabled", "enabled_tools", "disabled_tools", "tools"}
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
    assert tuple(events) == codex.EVENTS
    for event, [handler] in events.items():
        assert handler == codex.handler(codex.PLUGIN_HOOK_COMMAND, event) == {
            "type": "command", "command": "wwt hook codex-cli", "timeout": 3 if event == "SessionEnd" else 10}

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


# ------------------------------------------------------------- wwt setup / doctor with a plugin installed

FIXTURE_HOME = Path(__file__).parent / "fixtures" / "homes" / "full"
NO_PLUGIN_AGENTS = shutil.ignore_patterns(".qwen")  # the agents here are those wwt ships a plugin for
CONFIG_FILES = (".claude/settings.json", ".claude.json", ".gemini/settings.json", ".codex/config.toml",
                ".codex/hooks.json")
VERSION = load(CLAUDE_PLUGIN / ".claude-plugin" / "plugin.json")["version"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake HOME with realistic agent configs (as in test_setup.py) and no agent binary on PATH."""
    h = tmp_path / "home"
    shutil.copytree(FIXTURE_HOME, h, ignore=NO_PLUGIN_AGENTS)
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("WWT_HOME", str(tmp_path / "wwt-data"))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", os.pathsep.join([str(wwt_script().parent), "/usr/bin", "/bin"]))
    return h


def install_claude_plugin(home: Path, scope: str = "user", enabled: bool = True) -> None:
    """What `/plugin install wwt@wwt` leaves behind: a cached copy, installed_plugins.json (v2), enabledPlugins."""
    cache = home / ".claude/plugins/cache/wwt/wwt" / VERSION
    shutil.copytree(CLAUDE_PLUGIN, cache)
    (home / ".claude/plugins/installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": {
        "wwt@wwt": [{"scope": scope, "installPath": str(cache), "version": VERSION,
                     "installedAt": "2026-12-01T10:00:00.000Z", "lastUpdated": "2026-12-01T10:00:00.000Z"}]}}))
    settings = home / ".claude/settings.json"
    data = json.loads(settings.read_text())
    data["enabledPlugins"]["wwt@wwt"] = enabled
    settings.write_text(json.dumps(data, indent=2) + "\n")


def install_gemini_extension(home: Path, enabled: bool = True) -> None:
    """What `gemini extensions install <repo>` leaves behind: a copy, its install metadata, an enablement rule."""
    ext = home / ".gemini/extensions/wwt"
    (ext / "hooks").mkdir(parents=True)
    shutil.copy(GEMINI_EXTENSION / "gemini-extension.json", ext)
    shutil.copy(GEMINI_EXTENSION / "hooks/hooks.json", ext / "hooks")
    (ext / ".gemini-extension-install.json").write_text(json.dumps({"source": str(ROOT), "type": "local"}))
    rules = [f"{home}/*"] + ([] if enabled else [f"!{home}/*"])
    (home / ".gemini/extensions/extension-enablement.json").write_text(json.dumps({"wwt": {"overrides": rules}}))


def install_codex_plugin(home: Path, enabled: bool = True) -> None:
    """What `codex plugin add wwt@wwt` leaves behind: a cached copy and a [plugins."wwt@wwt"] table."""
    shutil.copytree(CODEX_PLUGIN, home / ".codex/plugins/cache/wwt/wwt" / VERSION)
    with open(home / ".codex/config.toml", "a") as fh:
        fh.write(f'\n[plugins."wwt@wwt"]\nenabled = {"true" if enabled else "false"}\n')


def install_all(home: Path) -> None:
    install_claude_plugin(home)
    install_gemini_extension(home)
    install_codex_plugin(home)


def config_texts(home: Path) -> dict[str, str | None]:
    return {rel: (home / rel).read_text() if (home / rel).exists() else None for rel in CONFIG_FILES}


def setup_entries(home: Path) -> dict[str, int]:
    """How many wwt hook handlers / MCP servers `wwt setup` has in each agent's own config files."""
    counts = {}
    for agent in (claude, gemini, codex):
        hooks = sum(len(v) for v in agent.registered_hooks().values())
        counts[agent.PLATFORM] = hooks + (agent.registered_mcp() is not None)
    return counts


def test_setup_registers_nothing_where_the_plugin_is_installed(home: Path) -> None:
    from wwt.setup.plan import run

    install_all(home)
    before = config_texts(home)
    plan, done = run(use_agent_cli=False)
    assert config_texts(home) == before  # not a byte added, no ~/.codex/hooks.json created
    assert setup_entries(home) == {"claude-code": 0, "gemini-cli": 0, "codex-cli": 0}
    said = "\n".join(plan.skipped)
    for ident in ("wwt@wwt (", "wwt ("):
        assert f"the wwt plugin {ident}" in said
    assert said.count("registers no second copy") == 3
    assert not any("/hooks" in note for note in plan.notes)  # no Codex trust reminder for setup's own hook


def test_setup_without_a_plugin_wires_every_agent_as_before(home: Path) -> None:
    from wwt.setup.plan import run
    from wwt.setup.plugins import installed

    assert [installed(a.PLATFORM) for a in (claude, gemini, codex)] == [None, None, None]  # hookify@… is not ours
    plan, _ = run(use_agent_cli=False)
    assert setup_entries(home) == {"claude-code": 3, "gemini-cli": 3, "codex-cli": 3}
    assert not any("wwt plugin" in line for line in plan.skipped)


def test_setup_run_before_the_plugin_removes_its_own_copy_and_uninstall_restores(home: Path) -> None:
    from wwt.setup.plan import run

    run(use_agent_cli=False)
    assert setup_entries(home) == {"claude-code": 3, "gemini-cli": 3, "codex-cli": 3}
    # the user now installs the plugins; what the files would be had setup never run:
    pristine = home.parent / "pristine"
    shutil.copytree(FIXTURE_HOME, pristine, ignore=NO_PLUGIN_AGENTS)
    install_all(pristine)
    install_all(home)

    plan, done = run(use_agent_cli=False)
    assert setup_entries(home) == {"claude-code": 0, "gemini-cli": 0, "codex-cli": 0}
    assert any("removed" in line and "hooks.json" in line for line in done)  # the hooks.json setup created
    expected = config_texts(pristine)
    for rel, text in config_texts(home).items():
        if rel.endswith(".json") and text is not None:
            assert json.loads(text) == json.loads(expected[rel]), rel
        else:
            assert text == expected[rel], rel  # TOML comments and order too; absent files stay absent

    before_uninstall = config_texts(home)
    plan, _ = run(uninstall=True, use_agent_cli=False)
    assert config_texts(home) == before_uninstall  # nothing of setup's left to remove; the plugins stay
    assert sum("stays installed" in line for line in plan.skipped) == 3
    assert any("claude plugin uninstall wwt@wwt" in line for line in plan.skipped)


@pytest.mark.parametrize("agent", ["claude-code", "gemini-cli", "codex-cli"])
def test_a_disabled_plugin_does_not_stop_setup(home: Path, agent: str) -> None:
    from wwt.setup.plan import run

    {"claude-code": lambda: install_claude_plugin(home, enabled=False),
     "gemini-cli": lambda: install_gemini_extension(home, enabled=False),
     "codex-cli": lambda: install_codex_plugin(home, enabled=False)}[agent]()
    run(use_agent_cli=False)
    assert setup_entries(home)[agent] > 0


def test_a_claude_plugin_installed_for_one_project_does_not_stop_setup(home: Path) -> None:
    from wwt.setup.plan import run

    install_claude_plugin(home, scope="project")
    run(use_agent_cli=False)
    assert setup_entries(home)["claude-code"] == 3


def test_unreadable_plugin_records_mean_no_plugin(home: Path) -> None:
    from wwt.setup.plugins import installed

    install_all(home)
    (home / ".claude/plugins/installed_plugins.json").write_text("{not json")
    (home / ".gemini/extensions/wwt/gemini-extension.json").write_text("")
    assert installed("claude-code") is None and installed("gemini-cli") is None
    assert installed("codex-cli") is not None


def test_a_linked_gemini_extension_counts(home: Path) -> None:
    """`gemini extensions link <checkout>` keeps only install metadata in ~/.gemini/extensions/wwt/."""
    from wwt.setup.plugins import installed

    ext = home / ".gemini/extensions/wwt"
    ext.mkdir(parents=True)
    (ext / ".gemini-extension-install.json").write_text(json.dumps({"source": str(ROOT), "type": "link"}))
    assert installed("gemini-cli") is not None
    (ext / ".gemini-extension-install.json").write_text(json.dumps({"source": str(CLAUDE_PLUGIN), "type": "link"}))
    assert installed("gemini-cli") is None  # a link to something that is not the wwt extension


def test_setup_dry_run_cli_says_which_plugin_provides_the_wiring(home: Path, tmp_path: Path) -> None:
    install_all(home)
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")}
    env.update(HOME=str(home), WWT_HOME=str(tmp_path / "wwt-data"), PATH=os.environ["PATH"])
    proc = subprocess.run(["wwt", "setup", "--dry-run", "--no-ingest"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("provides the hooks and MCP server") == 3
    assert "# nothing to change" in proc.stdout


def test_doctor_accepts_the_plugin_and_names_what_it_needs(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from wwt.doctor import FAIL, OK, WARN, check_agent
    from wwt.setup.plan import run

    run(use_agent_cli=False)
    install_all(home)
    for agent in (claude, gemini, codex):
        findings = check_agent(agent)
        assert findings[0].status == OK and "wwt plugin" in findings[0].message
        assert any(f.status == WARN and "registered too" in f.message for f in findings)  # setup's copy remains
    run(use_agent_cli=False)
    for agent in (claude, gemini, codex):
        assert [f for f in check_agent(agent) if f.status in (FAIL, WARN)] == []
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no wwt on PATH: the plugin's commands cannot run
    for agent in (claude, gemini, codex):
        [fail] = [f for f in check_agent(agent) if f.status == FAIL]
        assert "not on PATH" in fail.message and "pipx" in fail.fix
