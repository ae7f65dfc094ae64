"""What differs per agent: package, how it is pointed at the fake model with telemetry and updates off, how
its non-interactive session and ``mcp list`` are run, where its transcript lands, its plugin commands.

Each setting below was read in the installed package (node_modules) of the version pinned in
``cli_versions.json``; the comments say where."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from world import World

PROMPT = "What did we find out about the nightly reconcile job and refunds before? Search your memory (wwt). marker {marker}"


@dataclass
class Agent:
    key: str  # wwt setup --agent <key>
    platform: str  # wwt's platform name
    package: str
    binary: str
    env: Callable[[World], dict[str, str]]
    configure: Callable[[World], None]  # config files written before `wwt setup` (provider, telemetry off)
    session: Callable[[World, str], list[str]]  # the non-interactive run of one prompt
    transcripts: Callable[[World], list[Path]]  # the session logs the CLI wrote
    mcp_list: list[str]
    connected: re.Pattern[str]  # a line of `mcp list` saying wwt is connected
    listed: re.Pattern[str]  # any line of `mcp list` naming wwt
    plugin: Callable[[World, Path], list[list[str]]] | None = None  # argvs installing wwt's plugin from the repo
    plugin_mcp_list: re.Pattern[str] | None = None
    after_setup: Callable[[World], None] | None = None  # what the user does after `wwt setup` (trust a hook)
    side_files: Callable[[World], list[Path]] | None = None  # files beside the transcript its parser reads
    hooked: bool = True  # False: wwt registers no hook (its sessions come in by the engine's scan)
    # CONNECTs the CLI makes with no setting to stop them, each with why: refused by the test's proxy (nothing
    # leaves 127.0.0.1), allowed in the check so that any other attempt still fails it
    refusals_allowed: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _files(root: Path, pattern: str) -> list[Path]:
    return sorted(p for p in root.glob(pattern) if p.is_file()) if root.exists() else []


# ---------------------------------------------------------------------------------------------- Claude Code
# Names from the binary's strings (bin/claude.exe of @anthropic-ai/claude-code 2.1.332): ANTHROPIC_BASE_URL,
# DISABLE_TELEMETRY, DISABLE_ERROR_REPORTING, DISABLE_AUTOUPDATER, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC
# (covers the rest: feature flags, release notes, model access probes), DISABLE_GROWTHBOOK.


def _claude_env(world: World) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": world.fake.url,
        "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-a-local-test",
        "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_AUTOUPDATER": "1",
        "DISABLE_UPDATES": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_GROWTHBOOK": "1",
        "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1", "DISABLE_INSTALLATION_CHECKS": "1",
    }


def _claude_configure(world: World) -> None:
    (world.home / ".claude").mkdir(parents=True, exist_ok=True)


def _claude_session(world: World, prompt: str) -> list[str]:
    return ["claude", "-p", prompt, "--allowedTools", "mcp__wwt", "--output-format", "json",
            "--model", "claude-sonnet-4-5"]


def _claude_transcripts(world: World) -> list[Path]:
    return [p for p in _files(world.home / ".claude" / "projects", "*/*.jsonl") if "ledger" not in p.parent.name]


def _claude_plugin(world: World, repo: Path) -> list[list[str]]:
    return [["claude", "plugin", "validate", str(repo)],
            ["claude", "plugin", "marketplace", "add", str(repo)],
            ["claude", "plugin", "install", "wwt@wwt", "--scope", "user"]]


CLAUDE = Agent(
    key="claude", platform="claude-code", package="@anthropic-ai/claude-code", binary="claude",
    env=_claude_env, configure=_claude_configure, session=_claude_session, transcripts=_claude_transcripts,
    mcp_list=["claude", "mcp", "list"],
    connected=re.compile(r"^wwt: .*(✓|Connected)", re.M),
    listed=re.compile(r"^(plugin:wwt:)?wwt\b", re.M),
    plugin=_claude_plugin,
    plugin_mcp_list=re.compile(r"^plugin:wwt:wwt: .*(✓|Connected)", re.M),
)


# ---------------------------------------------------------------------------------------------------- Codex
# config.toml keys from the Rust binary of @openai/codex 0.171.0 (vendor/*/bin/codex) and `codex features list`:
# a model provider with base_url + wire_api "responses"; check_for_update_on_startup, [analytics], [feedback],
# [otel] off. The `plugins` feature syncs the curated plugin marketplace from github.com/api.github.com and asks
# chatgpt.com at every start, `codex mcp list` included (seen as CONNECTs through the test's proxy): switched off.
# `codex mcp list` does not connect to servers: it shows the entry as enabled; the session proves the connection.


def _codex_env(world: World) -> dict[str, str]:
    return {"WWT_TEST_FAKE_KEY": "sk-fake-key-for-a-local-test", "RUST_LOG": "error"}


def _codex_configure(world: World) -> None:
    folder = world.home / ".codex"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(f'''model = "gpt-5-codex"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "Fake model on 127.0.0.1"
base_url = "{world.fake.url}/v1"
wire_api = "responses"
env_key = "WWT_TEST_FAKE_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"

[features]
plugins = false
''', encoding="utf-8")


def codex_trust_hooks(world: World) -> None:
    """What a user does in Codex's /hooks after `wwt setup`: trust wwt's new hooks. Codex's own app-server
    lists each hook with its key and current hash (``hooks/list``); the trust is that hash in config.toml."""
    requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "wwt-test", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {}}]
    proc = subprocess.Popen(["codex", "app-server"], cwd=world.project, env={**world.env, "PWD": str(world.project)}, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
    proc.stdin.flush()
    hooks: list[dict] = []
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            reply = json.loads(line) if line.startswith("{") else {}
            if reply.get("id") == 2:
                hooks = [h for d in reply.get("result", {}).get("data", []) for h in d.get("hooks", [])]
                break
    finally:
        proc.kill()
        proc.wait()
    ours = [h for h in hooks if "wwt hook" in (h.get("command") or "")]
    assert ours, f"codex app-server hooks/list shows no wwt hook: {hooks}"
    with open(world.home / ".codex" / "config.toml", "a", encoding="utf-8") as config:
        for hook in ours:
            config.write(f'\n[hooks.state.{json.dumps(hook["key"])}]\ntrusted_hash = {json.dumps(hook["currentHash"])}\n')


def _codex_session(world: World, prompt: str) -> list[str]:
    return ["codex", "exec", prompt]


def _codex_transcripts(world: World) -> list[Path]:
    return _files(world.home / ".codex" / "sessions", "**/rollout-*.jsonl")


CODEX = Agent(
    key="codex", platform="codex-cli", package="@openai/codex", binary="codex",
    env=_codex_env, configure=_codex_configure, session=_codex_session, transcripts=_codex_transcripts,
    mcp_list=["codex", "mcp", "list"],
    connected=re.compile(r"^wwt\s.*\benabled\b", re.M),
    listed=re.compile(r"^wwt\s", re.M),
    after_setup=codex_trust_hooks,
)


# ----------------------------------------------------------------------------------------------- Gemini CLI
# From bundle/*.js of @google/gemini-cli 0.61.0: GOOGLE_GEMINI_BASE_URL (the genai client's base URL) with
# GEMINI_API_KEY; settings general.enableAutoUpdate/enableAutoUpdateNotification, privacy.usageStatisticsEnabled,
# telemetry.enabled. Folder trust is on by default and headless runs exit 55 in an untrusted folder: the test
# trusts the project as a user does in the trust dialog (~/.gemini/trustedFolders.json, TRUST_FOLDER).
# Headless `gemini -p` offers no tool of an MCP server that is not trusted or allowed: wwt's tools are absent
# from the request unless `--allowed-mcp-server-names wwt` (or --allowed-tools, or "trust": true on the entry).


def _gemini_env(world: World) -> dict[str, str]:
    return {"GEMINI_API_KEY": "fake-key-for-a-local-test", "GOOGLE_GEMINI_BASE_URL": world.fake.url}


def _gemini_configure(world: World) -> None:
    folder = world.home / ".gemini"
    folder.mkdir(parents=True, exist_ok=True)
    settings = {"general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
                "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
                "security": {"auth": {"selectedType": "gemini-api-key"}}}
    (folder / "settings.json").write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    (folder / "trustedFolders.json").write_text(json.dumps({str(world.project): "TRUST_FOLDER"}) + "\n")


def _gemini_session(world: World, prompt: str) -> list[str]:
    return ["gemini", "--allowed-mcp-server-names", "wwt", "-p", prompt]


def _gemini_transcripts(world: World) -> list[Path]:
    return _files(world.home / ".gemini" / "tmp", "*/chats/session-*.json*")


def _gemini_side_files(world: World) -> list[Path]:
    return _files(world.home / ".gemini" / "tmp", "*/.project_root") + _files(world.home / ".gemini", "projects.json")


def _gemini_plugin(world: World, repo: Path) -> list[list[str]]:
    return [["gemini", "extensions", "validate", str(repo)], ["gemini", "extensions", "link", str(repo)]]


GEMINI = Agent(
    key="gemini", platform="gemini-cli", package="@google/gemini-cli", binary="gemini",
    env=_gemini_env, configure=_gemini_configure, session=_gemini_session, transcripts=_gemini_transcripts,
    mcp_list=["gemini", "mcp", "list"],
    connected=re.compile(r"✓ wwt: .*Connected", re.M),
    listed=re.compile(r"\bwwt\b.*\((stdio|sse|http)\)", re.M),
    plugin=_gemini_plugin, side_files=_gemini_side_files,
)


# ------------------------------------------------------------------------------------------------ Qwen Code
# From chunks/*.js of @qwen-code/qwen-code 0.24.4: OPENAI_API_KEY + OPENAI_MODEL + OPENAI_BASE_URL select its
# OpenAI-compatible auth (getAuthTypeFromEnv); settings general.enableAutoUpdate, privacy.usageStatisticsEnabled,
# telemetry.enabled. Folder trust is off unless security.folderTrust.enabled. MCP tools are deferred behind
# tool_search and run through the tool_call bridge; in headless mode a call that needs approval goes to an LLM
# classifier (a forced respond_in_schema call with shouldBlock), which the fake model answers like a model would.


def _qwen_env(world: World) -> dict[str, str]:
    return {"OPENAI_API_KEY": "fake-key-for-a-local-test", "OPENAI_BASE_URL": f"{world.fake.url}/v1",
            "OPENAI_MODEL": "qwen3-coder-plus"}


def _qwen_configure(world: World) -> None:
    folder = world.home / ".qwen"
    folder.mkdir(parents=True, exist_ok=True)
    settings = {"general": {"enableAutoUpdate": False}, "privacy": {"usageStatisticsEnabled": False},
                "telemetry": {"enabled": False}, "security": {"auth": {"selectedType": "openai"}}}
    (folder / "settings.json").write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")


def _qwen_session(world: World, prompt: str) -> list[str]:
    return ["qwen", "-p", prompt]


def _qwen_transcripts(world: World) -> list[Path]:
    return _files(world.home / ".qwen" / "projects", "*/chats/*.jsonl")


QWEN = Agent(
    key="qwen", platform="qwen-code", package="@qwen-code/qwen-code", binary="qwen",
    env=_qwen_env, configure=_qwen_configure, session=_qwen_session, transcripts=_qwen_transcripts,
    mcp_list=["qwen", "mcp", "list"],
    connected=re.compile(r"✓.*\bwwt: .*Connected", re.M),
    listed=re.compile(r"\bwwt\b.*\((stdio|sse|http)\)", re.M),
)


# -------------------------------------------------------------------------------------------------- OpenCode
# From the strings of the opencode-linux-x64 binary 1.18.33: OPENCODE_DISABLE_AUTOUPDATE, _MODELS_FETCH (models.dev),
# _SHARE, _LSP_DOWNLOAD, _DEFAULT_PLUGINS, _CLAUDE_CODE (reading ~/.claude); a provider with
# npm "@ai-sdk/openai-compatible" and options.baseURL. No hooks in OpenCode for commands: wwt registers the MCP
# server only and the engine's scan (WWT_ENGINE_SCAN_S) archives its sessions (opencode.db, SQLite).


def _opencode_env(world: World) -> dict[str, str]:
    return {"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_SHARE": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
            "OPENCODE_DISABLE_CLAUDE_CODE": "1", "WWT_ENGINE_SCAN_S": "3"}


def _opencode_configure(world: World) -> None:
    folder = world.home / ".config" / "opencode"
    folder.mkdir(parents=True, exist_ok=True)
    config = {"$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled",
              "model": "fake/fake-model",
              "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake model on 127.0.0.1",
                                    "options": {"baseURL": f"{world.fake.url}/v1", "apiKey": "fake-key"},
                                    "models": {"fake-model": {"name": "Fake model", "tool_call": True}}}}}
    (folder / "opencode.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def _opencode_session(world: World, prompt: str) -> list[str]:
    return ["opencode", "run", prompt]


def _opencode_transcripts(world: World) -> list[Path]:
    return _files(world.home / ".local" / "share" / "opencode", "opencode.db")


OPENCODE = Agent(
    key="opencode", platform="opencode", package="opencode-ai", binary="opencode",
    env=_opencode_env, configure=_opencode_configure, session=_opencode_session, transcripts=_opencode_transcripts,
    mcp_list=["opencode", "mcp", "list"],
    connected=re.compile(r"✓ wwt\b.*connected", re.M),
    listed=re.compile(r"\bwwt\b", re.M),
    hooked=False,
    refusals_allowed={"registry.npmjs.org:443": "OpenCode 1.18 installs @opencode-ai/plugin into each config folder "
                                                "in the background at every start; no setting turns it off"},
)


# ---------------------------------------------------------------------------------------------- Copilot CLI
# `copilot help environment` of @github/copilot 1.0.102 (its JS is inside the native binary): BYOK with
# COPILOT_PROVIDER_BASE_URL (+ _TYPE openai, _API_KEY) and COPILOT_MODEL; COPILOT_OFFLINE=true "skips all
# network access: GitHub authentication, telemetry, web tools, GitHub MCP server, and auto-update";
# COPILOT_AUTO_UPDATE=false; --disable-client-telemetry. `copilot mcp list` reads the configs without starting
# the servers (it shows "wwt (local)"): the session proves the connection.


def _copilot_env(world: World) -> dict[str, str]:
    return {"COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": f"{world.fake.url}/v1",
            "COPILOT_PROVIDER_TYPE": "openai", "COPILOT_PROVIDER_API_KEY": "fake-key-for-a-local-test",
            "COPILOT_MODEL": "fake-model", "COPILOT_AUTO_UPDATE": "false"}


def _copilot_configure(world: World) -> None:
    (world.home / ".copilot").mkdir(parents=True, exist_ok=True)


def _copilot_session(world: World, prompt: str) -> list[str]:
    return ["copilot", "-p", prompt, "--disable-client-telemetry"]


def _copilot_transcripts(world: World) -> list[Path]:
    return _files(world.home / ".copilot" / "session-state", "*/events.jsonl")


def _copilot_side_files(world: World) -> list[Path]:
    return _files(world.home / ".copilot" / "session-state", "*/workspace.yaml")


COPILOT = Agent(
    key="copilot", platform="copilot-cli", package="@github/copilot", binary="copilot",
    env=_copilot_env, configure=_copilot_configure, session=_copilot_session, transcripts=_copilot_transcripts,
    mcp_list=["copilot", "mcp", "list"],
    connected=re.compile(r"^\s*wwt \(local\)", re.M),
    listed=re.compile(r"^\s*wwt\b", re.M),
    side_files=_copilot_side_files,
)


AGENTS = {a.key: a for a in (CLAUDE, CODEX, GEMINI, QWEN, OPENCODE, COPILOT)}


def jsonl(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out
