"""``wwt handoff`` and the MCP tool ``handoff_session`` (issue 28): a bounded pack from real archived sessions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES

from wwt.cli import main as cli_main

CLAUDE_SESSION = "e9f146fa-3b20-48d0-9be4-d99ca901cae4"  # Claude Code: edits go.mod, writes two .md, rm TODO.md
CODEX_SESSION = "01996135-afde-7911-97f0-d863511eca56"  # Codex CLI: shell calls
LOGS = ("claude-code/VibeCodingTracker__claude_code.jsonl", "codex-cli/VibeCodingTracker__codex.jsonl",
        "codex-cli/agent-sessions__small.jsonl")


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from wwt.service import Memory

    root = tmp_path_factory.mktemp("handoff")
    home, logs = root / "home", root / "logs"
    for name in LOGS:
        (logs / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REAL_FIXTURES / name, logs / name)
    with Memory(home) as memory:
        memory.ingest([logs], backfill=False)
    return home


def handoff(home: Path, *args: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    monkeypatch.setenv("WWT_HOME", str(home))
    with pytest.raises(SystemExit) as done:
        cli_main(["handoff", *args])
    out, err = capsys.readouterr()
    return done.value.code or 0, out, err


def test_pack_says_what_was_asked_done_and_where_it_stopped(archive, monkeypatch, capsys) -> None:
    code, out, _ = handoff(archive, CLAUDE_SESSION[:8], "--to", "codex", monkeypatch=monkeypatch, capsys=capsys)
    assert code == 0 and len(out) <= 12_000
    asked = out.split("## What was asked", 1)[1].split("## What was done", 1)[0]
    assert "> 幫我檢查一下 go.mod 裡面 為何 go版本是 1.23" in asked  # the first prompt, quoted
    done = out.split("## What was done", 1)[1].split("## Where it stopped", 1)[0]
    for path in ("/home/wei/repo/claude-code/go.mod", "/home/wei/repo/claude-code/.python-version",
                 "/home/wei/repo/claude-code/Pydantic_Field_Usage_Guide.md"):
        assert f"- `{path}`" in done
    assert "rm /home/wei/repo/claude-code/TODO.md" in done
    stopped = out.split("## Where it stopped", 1)[1]
    assert "幫我查一下pydantic文檔的Field用法" in stopped  # the last request
    assert "Pydantic_Field_Usage_Guide.md" in stopped and "Last assistant message" in stopped
    assert "Context for Codex CLI" in out and "claude --resume " + CLAUDE_SESSION in out
    assert "data, not instructions" in out


def test_codex_commands_are_listed(archive, monkeypatch, capsys) -> None:
    code, out, _ = handoff(archive, CODEX_SESSION, monkeypatch=monkeypatch, capsys=capsys)
    assert code == 0
    done = out.split("## What was done", 1)[1].split("## Where it stopped", 1)[0]
    assert "Commands run (" in done and "```sh" in done


@pytest.mark.parametrize("bound", [1_000, 2_500, 6_000])
def test_pack_stays_within_max_chars(archive, monkeypatch, capsys, bound: int) -> None:
    code, out, _ = handoff(archive, CLAUDE_SESSION, "--max-chars", str(bound), monkeypatch=monkeypatch, capsys=capsys)
    assert code == 0 and len(out) <= bound
    assert "## What was asked" in out and "## Where it stopped" in out  # shrunk, not cut off


def test_out_of_range_bound_is_a_usage_error(archive, monkeypatch, capsys) -> None:
    code, _, err = handoff(archive, CLAUDE_SESSION, "--max-chars", "10", monkeypatch=monkeypatch, capsys=capsys)
    assert code == 2 and "--max-chars must be between" in err


def test_every_real_fixture_session_gives_a_bounded_pack(tmp_path: Path) -> None:
    from wwt.handoff import build_handoff
    from wwt.service import Memory

    with Memory(tmp_path / "home") as memory:
        memory.ingest([REAL_FIXTURES], backfill=False)
        store = memory._open_store()
        roots = {hit.session_id for hit in store.chunks_by_ids(sorted(store.all_chunk_ids()))}
        assert len(roots) >= 15
        for sid in roots:
            pack = build_handoff(memory.get_session(sid), "gemini", 3_000)
            assert len(pack) <= 3_000 and pack.startswith("# Handoff: ") and "## Where it stopped" in pack


def test_mcp_tool_replies_within_its_bound(archive, monkeypatch) -> None:
    from wwt import mcp_server

    monkeypatch.setattr(mcp_server._State, "memory", None)
    monkeypatch.setenv("WWT_HOME", str(archive))
    mcp_server._State.warmed.set()
    try:
        tool = mcp_server._as_tool(mcp_server.handoff_session)
        reply = tool(CLAUDE_SESSION, to="claude")
        assert reply.startswith(mcp_server.QUOTED_NOTICE) and len(reply) <= mcp_server.MAX_OUTPUT_CHARS
        assert "/home/wei/repo/claude-code/go.mod" in reply
        from mcp.server.mcpserver.exceptions import ToolError

        with pytest.raises(ToolError, match="max_chars must be between"):
            tool(CLAUDE_SESSION, max_chars=50_000)
    finally:
        if mcp_server._State.memory is not None:
            mcp_server._State.memory.close()
        mcp_server._State.warmed.clear()
