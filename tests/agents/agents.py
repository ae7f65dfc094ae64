"""What differs per agent: package, how it is pointed at the fake model with telemetry and updates off, how
its non-interactive session and ``mcp list`` are run, where its transcript lands, its plugin commands.

Each setting below was read in the installed package (node_modules) of the version pinned in
``cli_versions.json``; the comments say where."""

from __future__ import annotations

import json
import re
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


AGENTS = {a.key: a for a in (CLAUDE,)}


def jsonl(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out
