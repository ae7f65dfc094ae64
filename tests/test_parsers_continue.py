"""Continue parser: session files written the way Continue's ``HistoryManager.save`` writes them
(``JSON.stringify(session, undefined, 2)``, keys sessionId/title/workspaceDirectory/history first, a
``sessions.json`` index beside them) — one from the IDE (message ids, ``tool`` messages, a folder URI), one from
the ``cn`` CLI (results only in ``toolCallStates``, a plain cwd) and an empty one; expectations by hand."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from parser_helpers import all_text, counts, run_parser, user_texts

from wwt.models import FLAG_COMPACTION_SUMMARY, FLAG_ERROR
from wwt.parsers import discover, parse_file, parser_for
from wwt.parsers.common import read_head
from wwt.parsers.continue_dev import ContinueParser

SESSIONS = Path(__file__).parent / "fixtures" / "continue" / "sessions"
IDE = SESSIONS / "3f2a9c1e-7b4d-4e8a-9c6f-1d2e3f4a5b6c.json"
CLI = SESSIONS / "c0ffee00-5a1e-4b2c-8d3e-9f0a1b2c3d4e.json"
EMPTY = SESSIONS / "0d0d0d0d-1111-4222-8333-444455556666.json"
SAVED = 1_767_990_000  # 2026-01-09T20:20:00Z: the file's last save, set on the copies


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    shutil.copytree(SESSIONS, folder)
    for path in folder.iterdir():
        os.utime(path, (SAVED, SAVED))
    return folder


def test_an_ide_session(tmp_path):
    (session,), report = run_parser(ContinueParser(), _copy(tmp_path) / IDE.name)
    assert session.session_id == "3f2a9c1e-7b4d-4e8a-9c6f-1d2e3f4a5b6c" and session.platform == "continue"
    assert session.title == "Tide table parser drops the last row"
    assert session.cwd == "/home/dev/tide tables" and session.project == "tide tables"  # file:// URI, %20 decoded
    # dateCreated in sessions.json is the start, the file's mtime the end
    assert session.started_at == "2026-01-09T09:13:20Z" and session.ended_at == "2026-01-09T20:20:00Z"
    assert counts(session) == {("user", "text"): 2, ("assistant", "thinking"): 2, ("assistant", "text"): 3,
                               ("assistant", "tool_call"): 2, ("user", "tool_result"): 2}
    assert user_texts(session) == ["the harbour tide parser drops the final row of every month, why?",
                                   "thanks, and keep the header row skip as is"]
    text = all_text(session)
    # attached files, prompt logs, the system message and the image's base64 are no one's words
    for absent in ("ATTACHED_FILE_BODY", "PROMPT_LOG_TEXT", "important_rules", "iVBORw0KGgo"):
        assert absent not in text
    calls = [(m.native_id, m.text) for m in session.messages if m.kind == "tool_call"]
    assert calls == [("a-1#call:call_read_1", 'read_file: {"filepath":"src/tides/parse.py"}'),
                     ("a-2#call:call_run_1", "run_terminal_command: pytest tests/test_tides.py -q")]
    results = [m for m in session.messages if m.kind == "tool_result"]
    # one result each (the tool message; the toolCallStates output is the same result again), named after its call
    assert [(m.native_id, m.tool_name, FLAG_ERROR in m.flags) for m in results] == [
        ("r-1", "read_file", False), ("r-2", "run_terminal_command", True)]
    thinking = [m for m in session.messages if m.kind == "thinking"]
    assert thinking[1].text == "Probably an off-by-one in the month slicing."
    assert thinking[1].timestamp == "2026-01-09T09:13:30Z"  # reasoning.startAt
    (summary,) = [m for m in session.messages if FLAG_COMPACTION_SUMMARY in m.flags]
    assert summary.role == "assistant" and summary.text.startswith("The user asked why the tide parser")
    assert report.skipped_messages == 1 and report.unknown_records == 1  # the system message, the unknown role
    assert report.lines == 10 and report.bad_lines == 0


def test_a_cli_session_keeps_its_results_in_the_tool_states(tmp_path):
    (session,), report = run_parser(ContinueParser(), _copy(tmp_path) / CLI.name)
    assert session.title is None  # "Untitled Session" is the CLI's placeholder
    assert session.cwd == "/home/dev/harbor-cli" and session.project == "harbor-cli"
    assert session.started_at == "2026-01-09T12:00:00Z"
    assert [(m.role, m.kind) for m in session.messages] == [
        ("user", "text"), ("assistant", "text"), ("assistant", "tool_call"), ("assistant", "tool_call"),
        ("user", "tool_result"), ("user", "tool_result"), ("assistant", "text")]
    results = [m for m in session.messages if m.kind == "tool_result"]
    assert [(m.tool_name, FLAG_ERROR in m.flags) for m in results] == [("Search", False), ("Bash", True)]
    assert "remote rejected the push" in results[1].text
    assert [m.native_id for m in session.messages][:3] == ["#0", "#1", "#1#call:toolu_01"]  # no ids: positions
    assert report.unknown_records == 0 and report.skipped_messages == 0


def test_without_the_index_the_session_is_timed_by_its_file(tmp_path):
    folder = _copy(tmp_path)
    (folder / "sessions.json").unlink()
    (session,), _ = run_parser(ContinueParser(), folder / CLI.name)
    assert session.started_at == session.ended_at == "2026-01-09T20:20:00Z"


def test_an_empty_session_yields_nothing_and_says_so():
    sessions, report = parse_file(EMPTY)
    assert sessions == [] and report.platform == "continue" and report.notes[0] == "no conversation messages"


def test_bad_input_is_skipped_and_counted(tmp_path):
    data = json.loads(CLI.read_text(encoding="utf-8"))
    data["history"][1:1] = ["not an item", {"contextItems": []}, {"message": "just a string"}]
    broken = tmp_path / "c0ffee00-5a1e-4b2c-8d3e-9f0a1b2c3d4e.json"
    broken.write_text(json.dumps(data, indent=2), encoding="utf-8")
    (session,), report = run_parser(ContinueParser(), broken)
    assert report.bad_lines == 3 and report.lines == 6
    assert len(session.messages) == 7  # everything the good items hold is still there
    cut = tmp_path / "cut" / CLI.name
    cut.parent.mkdir()
    cut.write_bytes(CLI.read_bytes()[:400])  # a save cut short
    sessions, report = run_parser(ContinueParser(), cut)
    assert sessions == [] and report.bad_lines == 1 and report.notes == ["malformed JSON"]


def test_a_resume_is_a_whole_reparse():
    sessions, report = run_parser(ContinueParser(), CLI, 100)
    assert report.requires_full_reparse and len(sessions[0].messages) == 7


def test_detection_claims_sessions_only(tmp_path):
    for path in (IDE, CLI, EMPTY):
        assert parser_for(path).platform == "continue"
    index = SESSIONS / "sessions.json"
    assert parser_for(index) is None  # the index is no session
    assert not ContinueParser().detect(index, read_head(index))
    other = tmp_path / "chat.json"  # a Copilot CLI legacy session: sessionId, but no history/workspaceDirectory
    other.write_text(json.dumps({"sessionId": "x", "startTime": "2026-01-01T00:00:00Z", "chatMessages": []}))
    assert not ContinueParser().detect(other, read_head(other))


def test_discovery_follows_continue_global_dir(tmp_path, monkeypatch):
    home = tmp_path / "continue-home"
    shutil.copytree(SESSIONS, home / "sessions")
    monkeypatch.setenv("CONTINUE_GLOBAL_DIR", str(home))
    monkeypatch.setenv("HOME", str(tmp_path / "nohome"))
    found = sorted(p.name for p, parser in discover() if getattr(parser, "platform", parser) == "continue")
    assert found == sorted([IDE.name, CLI.name, EMPTY.name])


def test_a_rewritten_index_is_read_again(tmp_path):
    folder = _copy(tmp_path)
    (first,), _ = run_parser(ContinueParser(), folder / CLI.name)
    index = folder / "sessions.json"
    entries = json.loads(index.read_text(encoding="utf-8"))
    entries[1]["dateCreated"] = "1767963600000"  # one hour later
    index.write_text(json.dumps(entries, indent=2) + "\n", encoding="utf-8")
    (again,), _ = run_parser(ContinueParser(), folder / CLI.name)
    assert (first.started_at, again.started_at) == ("2026-01-09T12:00:00Z", "2026-01-09T13:00:00Z")


COMPACTED = Path(__file__).parent / "fixtures" / "continue" / "compacted" / "sessions" / (
    "7a1c9e35-2d4b-4f6a-8e0c-b1d3f5a7c9e2.json")


def test_a_cli_compaction_is_one_summary_and_its_automatic_continue_is_not_the_users(tmp_path):
    """The ``cn`` CLI compacts by replacing the history with one assistant item whose content IS the summary, also
    kept as ``conversationSummary`` (extensions/cli/src/compaction.ts ``compactChatHistory``); after an automatic
    compaction it appends a user message ``continue`` itself (stream/streamChatResponse.ts
    ``handleAutoContinuation``). Our own session in that shape:"""
    (session,), report = run_parser(ContinueParser(), COMPACTED)
    assert [(m.role, m.kind, FLAG_COMPACTION_SUMMARY in m.flags) for m in session.messages] == [
        ("assistant", "text", True),  # the summary once, flagged, not also as an answer
        ("assistant", "text", False), ("user", "text", False), ("assistant", "text", False),
    ]
    assert user_texts(session) == ["good, bump the patch version"]
    assert session.messages[0].text.startswith("Summary of the conversation so far")
    assert report.skipped_messages == 1 and report.unknown_records == 0
