"""The transcripts the agents' real CLIs wrote in the end-to-end run (tests/fixtures/agents/<platform>/, scrubbed),
read by wwt's parsers: the newest formats, pinned. Not marked ``agents``: no CLI needed, runs with the unit tests.

Each fixture is one session of the same script (tests/agents/fake_model.py): the user's prompt with a marker word,
an assistant call of wwt's search tool (and, where the CLI defers MCP tools, a tool-search call before it), the
tool's result (wwt's reply, which quotes an older session), and the fake model's text answer. What the parser must
get from it is therefore known without the parser: platform, project from the working folder, the four kinds of
message in order, the tool's name as the CLI called it, and no stray records counted as messages."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_model import ANSWER

from wwt.own_tools import is_own_tool
from wwt.parsers import parse_file, parser_for

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agents"
PROJECT_CWD = "/home/dev/src/tidewater"
MARKER = "quokka"


def _sessions_files() -> list[tuple[str, Path]]:
    out = []
    for platform_dir in sorted(p for p in FIXTURES.iterdir() if p.is_dir()) if FIXTURES.is_dir() else []:
        for path in sorted(platform_dir.rglob("*")):
            if path.is_file() and parser_for(path) is not None:
                out.append((platform_dir.name, path))
    return out


FILES = _sessions_files()


def test_every_agent_of_the_suite_has_a_pinned_transcript() -> None:
    from agents import AGENTS

    have = {platform for platform, _ in FILES}
    missing = sorted(a.platform for a in AGENTS.values() if a.platform not in have)
    assert missing == [], f"no fixture from the real CLI for {missing}: run WWT_WRITE_AGENT_FIXTURES=1 pytest -m agents"


@pytest.mark.parametrize(("platform", "path"), FILES, ids=[f"{p}:{f.name}" for p, f in FILES])
def test_the_real_cli_transcript_parses_as_the_session_it_was(platform: str, path: Path) -> None:
    sessions, report = parse_file(path)
    assert report.bad_lines == 0, report
    ours = [s for s in sessions if any(MARKER in m.text for m in s.messages if m.role == "user")]
    assert len(ours) == 1, [(s.session_id, len(s.messages)) for s in sessions]
    session = ours[0]
    assert session.platform == platform
    assert session.project == "tidewater", (session.project, session.cwd)
    assert session.cwd == PROJECT_CWD
    assert session.started_at and session.ended_at and session.started_at <= session.ended_at

    messages = session.messages
    users = [m for m in messages if m.role == "user" and m.kind == "text"]
    assert len(users) == 1 and MARKER in users[0].text and "nightly reconcile job" in users[0].text, users
    assert "<system-reminder>" not in users[0].text and "environment_context" not in users[0].text

    calls = [m for m in messages if m.kind == "tool_call"]
    wwt_calls = [m for m in calls if m.tool_name and is_own_tool(m.tool_name)]
    assert len(wwt_calls) == 1 and "search_memory" in wwt_calls[0].tool_name, [(m.tool_name, m.text) for m in calls]
    assert "nightly reconcile job" in wwt_calls[0].text

    results = [m for m in messages if m.kind == "tool_result" and m.tool_name and is_own_tool(m.tool_name)]
    assert len(results) == 1 and "session(s) for" in results[0].text and "reconcile" in results[0].text, \
        [(m.kind, m.tool_name, m.text[:80]) for m in messages]

    answers = [m for m in messages if m.role == "assistant" and m.kind == "text"]
    assert [m.text.strip() for m in answers] == [ANSWER], answers

    order = [messages.index(m) for m in (users[0], wwt_calls[0], results[0], answers[0])]
    assert order == sorted(order), [(m.role, m.kind) for m in messages]


def test_copilot_cli_1_0_names_its_session_in_workspace_yaml_name() -> None:
    """Copilot CLI 1.0.102 writes the session's name as ``name:`` (``user_named: false``: its own name from the
    first prompt) where older versions wrote ``summary:``; the title is that name."""
    events = [path for platform, path in FILES if platform == "copilot-cli" and path.name == "events.jsonl"]
    assert events, "no Copilot CLI fixture"
    workspace = (events[0].parent / "workspace.yaml").read_text(encoding="utf-8")
    named = next(line.split(":", 1)[1].strip() for line in workspace.splitlines() if line.startswith("name:"))
    assert "summary:" not in workspace and "user_named: false" in workspace
    sessions, _report = parse_file(events[0])
    assert sessions[0].title == named[:100] and named.startswith("What did we find out")
