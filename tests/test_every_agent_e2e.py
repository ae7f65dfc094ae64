"""Every agent end to end, as a user meets them: a fake HOME holding logs of all twelve agents in their default
folders (Claude Code, Gemini CLI, Codex CLI, Qwen Code, Copilot CLI, Cursor's CLI chat store, OpenCode's older
per-project tree, Cline, Roo Code, Continue, Goose's sessions.db) and a repository with an Aider history, plus
every agent's own config files.

* `wwt setup` (real CLI, no agent binary on PATH) wires hooks + MCP for Claude Code, Gemini CLI, Codex CLI, Qwen
  Code, Cursor and Copilot CLI and the MCP server for OpenCode, Cline and Roo Code, a second run changes nothing,
  and `--uninstall` gives every file of the HOME back byte for byte; no log is ever touched.
* After a real `wwt ingest` (real ONNX model, tantivy, hnswlib, SQLite), a phrase from each agent's session
  finds it through the real CLI (`wwt search --source <platform> --json`) and through a real MCP client session
  over stdio (`search_memory` with `source`), with the right agent and resume line.
* `wwt status` names all twelve agents.

The logs are the hand-written fixtures of the parser tests, several of them in the shapes the connectors learned
last (Qwen records glued on one line, Copilot events without ids, Cursor's store.db, OpenCode's info/ tree)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_helpers import text_of, wwt_mcp_session
from test_setup import _clean_path

from wwt.models import PLATFORM_NAMES, PLATFORMS

FIX = Path(__file__).parent / "fixtures"
AGENT_ENV = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_RUNTIME_DIR", "COPILOT_HOME", "XDG_DATA_HOME",
             "XDG_CONFIG_HOME", "WWT_DEBUG", "WWT_EXCLUDE_SESSION_ID", "CLAUDE_SESSION_ID", "CLAUDE_CODE_SESSION_ID",
             "GEMINI_SESSION_ID", "CODEX_THREAD_ID", "CODEX_SESSION_ID")
REPO = Path("src") / "quillpad"  # the Aider repository, under HOME

# Where each agent keeps the fixture's log (relative to HOME), copied from tests/fixtures.
LOGS = {
    ".claude/projects/-home-mina-src-ledger/7a9e4c21-3b5d-4f60-8a71-c2d3e4f5a6b7.jsonl":
        "claude/7a9e4c21-3b5d-4f60-8a71-c2d3e4f5a6b7.jsonl",
    ".gemini/tmp/h0/chats/session-2026-05-02T09-15-7c1e2a9b.jsonl": "gemini/session-2026-05-02T09-15-7c1e2a9b.jsonl",
    ".codex/sessions/2026/03/04/rollout-2026-03-04T10-20-30-0199aaaa-1111-7222-8333-444455556666.jsonl":
        "codex/rollout-2026-03-04T10-20-30-0199aaaa-1111-7222-8333-444455556666.jsonl",
    ".qwen/projects/-home-mina-src-invoicer/chats/9e4b1c07-2d5f-4a8e-b3c6-71d0e2f4a5b8.jsonl":
        "qwen/glued/9e4b1c07-2d5f-4a8e-b3c6-71d0e2f4a5b8.jsonl",
    ".copilot/session-state": "copilot-cli/no-event-ids",
    ".cursor/chats": "cursor/chats",
    ".local/share/opencode/project": "opencode/legacy/project",
    ".config/Code/User/globalStorage/saoudrizwan.claude-dev": "cline/saoudrizwan.claude-dev",
    ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline": "cline/rooveterinaryinc.roo-cline",
    str(REPO / ".aider.chat.history.md"): "aider/quillpad/.aider.chat.history.md",
    ".continue/sessions": "continue/sessions",
    ".local/share/goose/sessions": "goose/db/sessions",
}

# MCP configs that hold the user's own servers (Cursor's, Copilot CLI's, OpenCode's, Cline's): theirs stay.
MCP_CONFIGS = {
    ".copilot/mcp-config.json": '{\n  "mcpServers": {\n    "github": {\n      "type": "local",\n'
                                '      "command": "npx",\n      "args": ["-y", "@github/mcp"],\n      "tools": ["*"]\n'
                                '    }\n  }\n}\n',
    ".cursor/mcp.json": '{"mcpServers":{"linear":{"url":"https://mcp.linear.example/sse"}}}',
}
CLINE_SETTINGS = ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"
# OpenCode's and Cline's configs as a user has them: no server yet (Cline writes this file on its first start).
OTHER_CONFIGS = {
    ".config/opencode/opencode.json": '{\n  "$schema": "https://opencode.ai/config.json",\n  "theme": "tokyonight"\n}\n',
    CLINE_SETTINGS: '{\n  "mcpServers": {}\n}',
}
# Files setup creates (and uninstall removes): Cursor's user hooks, Copilot CLI's hooks file, Roo Code's settings.
CREATED = (".cursor/hooks.json", ".copilot/hooks/wwt.json",
           ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json")

# platform: (phrase from the session, session id, project, resume line with {home} for HOME, or None)
SESSIONS = {
    "claude-code": ("why does the nightly reconcile job drop cents on refunds", "7a9e4c21-3b5d-4f60-8a71-c2d3e4f5a6b7",
                    "ledger", "cd /home/mina/src/ledger && claude --resume 7a9e4c21-3b5d-4f60-8a71-c2d3e4f5a6b7"),
    "gemini-cli": ("로그인 페이지에서 세션 토큰이 만료되면 어떻게 처리", "7c1e2a9b-5d2f-4e0a-9b3c-1f2e3d4c5b6a", None,
                   "gemini --resume 7c1e2a9b-5d2f-4e0a-9b3c-1f2e3d4c5b6a"),
    "codex-cli": ("로그인 재시도 로직이 왜 두 번 실행되는지", "0199aaaa-1111-7222-8333-444455556666", "hangul-app",
                  "codex resume 0199aaaa-1111-7222-8333-444455556666"),
    "qwen-code": ("invoice export skips archived customers", "9e4b1c07-2d5f-4a8e-b3c6-71d0e2f4a5b8", "invoicer",
                  "cd /home/mina/src/invoicer && qwen --resume 9e4b1c07-2d5f-4a8e-b3c6-71d0e2f4a5b8"),
    "copilot-cli": ("tile cache never evicts its entries", "b81c4d2e-5f36-4a7b-9c08-e1d2f3a4b5c6", "tilemap",
                    "copilot --resume b81c4d2e-5f36-4a7b-9c08-e1d2f3a4b5c6"),
    "cursor": ("metrics flush drops the last batch on shutdown", "c5e8a1f0-3b7d-4c29-9e64-2a1b0d9f8e71", "orbit",
               "cursor-agent --resume c5e8a1f0-3b7d-4c29-9e64-2a1b0d9f8e71"),
    "opencode": ("debounce the search box request on every keystroke", "ses_8d1e4f2a6b3cLegacyTree01", "lumen",
                 "cd /home/ana/code/lumen && opencode --session ses_8d1e4f2a6b3cLegacyTree01"),
    "aider": ("PDF export drops footnotes after the first page", None, "quillpad",
              "cd {home}/src/quillpad && aider --restore-chat-history"),
    "cline": ("settings page shows stale plan names after an upgrade", "1767950000000", "acme-portal", None),
    "roo-code": ("invoice cron to BullMQ repeatable jobs", "1767960000000", "billing-worker", None),
    "continue": ("harbour tide parser drops the final row of every month", "3f2a9c1e-7b4d-4e8a-9c6f-1d2e3f4a5b6c",
                 "tide tables", None),
    "goose": ("webhook retry test fails one run in five on CI", "20251108_1", "hookshot",
              "goose session --resume --session-id 20251108_1"),
}


def _env(home: Path, data: Path, model_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in AGENT_ENV}
    env.update(HOME=str(home), WWT_HOME=str(data), WWT_MODEL_DIR=str(model_dir), COLUMNS="120", NO_COLOR="1",
               PATH=_clean_path())
    return env


def wwt(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wwt", *args], capture_output=True, text=True, env=env,
                          cwd=str(cwd), stdin=subprocess.DEVNULL, timeout=600)


def make_home(home: Path) -> None:
    for dest, src in LOGS.items():
        target, source = home / dest, FIX / src
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy(source, target)
    shutil.copytree(FIX / "homes" / "full", home, dirs_exist_ok=True)  # Claude, Gemini, Codex, Qwen configs
    for rel, text in {**MCP_CONFIGS, **OTHER_CONFIGS}.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_bytes(text.encode("utf-8"))


def tree(root: Path) -> dict[str, tuple]:
    """Every file and link below ``root`` by content and mode, but setup's backups (``<file>.wwt-backup-<time>``,
    written beside each config before it is changed, and kept on purpose)."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            if ".wwt-backup-" in name:
                continue
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_file():
                out[rel] = ("file", p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, model_dir: Path) -> dict:
    root = tmp_path_factory.mktemp("every-agent")
    home = root / "home"
    make_home(home)
    env = _env(home, root / "data", model_dir)
    first = wwt("ingest", env=env, cwd=root)  # the agents' default folders
    assert first.returncode == 0, first.stderr[-1500:]
    second = wwt("ingest", str(home / REPO), env=env, cwd=root)  # Aider keeps its history in the repository
    assert second.returncode == 0, second.stderr[-1500:]
    return {"root": root, "home": home, "env": env}


def test_setup_wires_the_agents_again_changes_nothing_and_uninstall_gives_every_byte_back(
    tmp_path: Path, model_dir: Path
) -> None:
    home = tmp_path / "home"
    make_home(home)
    env = _env(home, tmp_path / "data", model_dir)
    before = tree(home)

    setup = wwt("setup", "--no-ingest", "--no-agent-cli", env=env, cwd=tmp_path)
    assert setup.returncode == 0, setup.stderr[-1500:]
    wired = tree(home)
    assert "wwt" in json.loads((home / ".claude.json").read_text())["mcpServers"]
    assert "wwt" in (home / ".claude/settings.json").read_text()
    assert "wwt" in json.loads((home / ".gemini/settings.json").read_text())["mcpServers"]
    assert "[mcp_servers.wwt]" in (home / ".codex/config.toml").read_text()
    qwen = json.loads((home / ".qwen/settings.json").read_text())
    assert "wwt" in qwen["mcpServers"] and any("wwt" in json.dumps(qwen["hooks"][e]) for e in ("Stop", "SessionEnd"))
    for rel in MCP_CONFIGS:  # Cursor, Copilot CLI: their servers and ours
        servers = json.loads((home / rel).read_text())["mcpServers"]
        assert "wwt" in servers and len(servers) == 2, rel
    opencode = json.loads((home / ".config/opencode/opencode.json").read_text())
    assert opencode["theme"] == "tokyonight" and opencode["mcp"]["wwt"]["type"] == "local"
    assert set(json.loads((home / CLINE_SETTINGS).read_text())["mcpServers"]) == {"wwt"}
    assert set(json.loads((home / CREATED[2]).read_text())["mcpServers"]) == {"wwt"}  # Roo Code
    assert "wwt hook cursor" in json.dumps(json.loads((home / CREATED[0]).read_text())["hooks"]["stop"])
    assert "wwt hook copilot-cli" in json.dumps(json.loads((home / CREATED[1]).read_text())["hooks"]["Stop"])
    changed = {rel for rel in wired if wired[rel] != before.get(rel)}
    assert changed and all(rel.startswith((".claude", ".gemini", ".codex", ".qwen", *MCP_CONFIGS, *OTHER_CONFIGS,
                                           *CREATED)) for rel in changed), changed
    assert set(CREATED) | set(OTHER_CONFIGS) <= changed
    for rel in LOGS:  # every log as it was (Cline's and Roo's settings files lie beside their task logs)
        assert all(wired[k] == before[k] for k in before if (k == rel or k.startswith(rel + "/"))
                   and "/settings/" not in k), rel

    again = wwt("setup", "--no-ingest", "--no-agent-cli", env=env, cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-1500:]
    assert tree(home) == wired  # idempotent: nothing added twice, nothing rewritten

    undo = wwt("setup", "--uninstall", "--no-agent-cli", env=env, cwd=tmp_path)
    assert undo.returncode == 0, undo.stderr[-1500:]
    assert tree(home) == before  # every file of the HOME, byte for byte and mode for mode


def _expected(platform: str, home: Path) -> tuple[str, str | None, str | None, str | None]:
    phrase, sid, project, resume = SESSIONS[platform]
    return phrase, sid, project, resume.format(home=home) if resume else None


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_cli_finds_each_agents_session_by_a_phrase_from_it(world: dict, platform: str) -> None:
    phrase, sid, project, resume = _expected(platform, world["home"])
    result = wwt("search", "--all", "--source", platform, "--json", phrase, env=world["env"], cwd=world["root"])
    assert result.returncode == 0, result.stderr[-1000:]
    results = json.loads(result.stdout)["results"]
    assert results, f"nothing found for {phrase!r} in {platform}"
    hit = results[0]
    assert hit["platform"] == platform
    if sid is not None:
        assert hit["session_id"] == sid
    else:
        assert hit["session_id"].startswith("aider-")
    assert hit["project"] == project
    assert hit["resume_line"] == resume


def test_an_mcp_client_finds_each_agents_session_by_a_phrase_from_it(world: dict) -> None:
    replies: dict[str, str] = {}

    async def body(session) -> None:
        for platform in PLATFORMS:
            phrase = SESSIONS[platform][0]
            reply = await session.call_tool("search_memory", {"query": phrase, "source": platform, "cwd": "/"})
            replies[platform] = text_of(reply)

    asyncio.run(asyncio.wait_for(wwt_mcp_session({"root": world["root"], "env": world["env"]}, body), timeout=300))
    for platform in PLATFORMS:
        _, sid, project, resume = _expected(platform, world["home"])
        text = replies[platform]
        first = text.split("\n[2] ", 1)[0]  # the top result's block
        assert "[1] " in first, (platform, text[:500])
        header = next(line for line in first.splitlines() if line.startswith("[1] "))
        assert f" · {PLATFORM_NAMES[platform]} · " in header, (platform, header)
        assert header.startswith(f"[1] {project or '(no project)'}"), (platform, header)
        session_line = next(line for line in first.splitlines() if line.startswith("    session: "))
        if sid is not None:
            assert session_line.split()[1] == sid, (platform, session_line)
        if resume is None:
            assert "    resume: " not in first, (platform, first)
        else:
            assert f"    resume: {resume}" in first.splitlines(), (platform, first)


def test_status_names_every_agent(world: dict) -> None:
    result = wwt("status", env=world["env"], cwd=world["root"])
    assert result.returncode == 0, result.stderr[-500:]
    for platform in PLATFORMS:
        assert PLATFORM_NAMES[platform] in result.stdout, platform



def test_the_mcp_server_names_every_agent_it_remembers(world: dict) -> None:
    """Cursor and Copilot CLI now load the server too: its instructions must not say it knows three agents."""
    names: list[str] = []

    async def run() -> None:
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(command=sys.executable, args=["-m", "wwt", "mcp"], env=world["env"],
                                       cwd=str(world["root"]))
        with open(world["root"] / "server-stderr.log", "a") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    result = await session.initialize()
                    names.append(result.instructions or "")

    asyncio.run(asyncio.wait_for(run(), timeout=120))
    for platform in PLATFORMS:
        assert PLATFORM_NAMES[platform] in names[0], platform
