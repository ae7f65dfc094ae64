"""Qwen Code parser: fixtures written after Qwen Code's ChatRecordingService (docs/formats-notes.md), with the
expectations read off the files by hand: typed text vs @-expanded parts, thoughts, a failed shell call,
injected notifications, slash commands, titles, subagent transcripts, bad and cut lines, resume."""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path

from parser_helpers import all_text, counts, only_session, run_parser, user_texts, write_jsonl

from wwt.models import FLAG_ERROR, FLAG_QUEUED
from wwt.parsers import discover, parse_file, parser_for
from wwt.parsers.common import read_head
from wwt.parsers.qwen_code import QwenCodeParser

OWN = Path(__file__).parent / "fixtures" / "qwen-code" / "projects" / "-home-mina-src-ledger"
MAIN = OWN / "chats" / "7b1e0c52-9d3a-4f61-8a2e-5c4d3b2a1f00.jsonl"
SUB = OWN / "subagents" / "7b1e0c52-9d3a-4f61-8a2e-5c4d3b2a1f00" / "agent-explore-7f3c.jsonl"
OLDER = Path(__file__).parent / "fixtures" / "qwen" / "3c9d7e12-6a4b-4c8d-9e0f-1a2b3c4d5e6f.jsonl"
PARSER = QwenCodeParser()
parse = partial(run_parser, PARSER)
only = partial(only_session, PARSER)


def test_main_chat_session_metadata():
    session, report = only(MAIN)
    assert session.session_id == "7b1e0c52-9d3a-4f61-8a2e-5c4d3b2a1f00"
    assert session.platform == "qwen-code"
    assert session.cwd == "/home/mina/src/ledger" and session.project == "ledger"
    assert session.git_branch == "fix/rounding"
    assert session.title == "Refund half-cent rounding"
    assert session.started_at == "2026-08-02T09:00:05Z"  # the first message, not the session_source line
    assert session.ended_at == "2026-08-02T09:03:00Z"  # the cut last line is not a message
    assert session.parent_session_id is None


def test_main_chat_messages_by_role_and_kind():
    session, report = only(MAIN)
    # u1 (typed text), a1 (thought + text + call), t1 (failed result), m1 (queued), /memory add …, a2, u2
    assert counts(session) == {
        ("user", "text"): 4,
        ("assistant", "thinking"): 1,
        ("assistant", "text"): 2,
        ("assistant", "tool_call"): 1,
        ("user", "tool_result"): 1,
    }
    assert user_texts(session) == [
        "why does @ledger/refunds.py round half-cents down?",  # displayText, not the file contents pasted in
        "use Decimal with ROUND_HALF_UP please",
        "/memory add refunds round half up",
        "thanks, commit it",
    ]
    assert "--- Content from referenced files ---" not in all_text(session)
    assert "Background shell bg-3" not in all_text(session)  # a notification is not the user's words


def test_tool_call_and_failed_result():
    session, _ = only(MAIN)
    call = next(m for m in session.messages if m.kind == "tool_call")
    assert call.native_id == "q1-a1#call:call_shell_1"
    assert call.tool_name == "run_shell_command" and call.text == "run_shell_command: pytest -q tests/test_refunds.py"
    result = next(m for m in session.messages if m.kind == "tool_result")
    assert result.native_id == "q1-t1#result:call_shell_1"
    assert FLAG_ERROR in result.flags and "FAILED test_refund_total_half_cent" in result.text
    assert result.timestamp == "2026-08-02T09:00:12Z"


def test_thought_parts_are_thinking_and_queued_input_is_flagged():
    session, _ = only(MAIN)
    thinking = next(m for m in session.messages if m.kind == "thinking")
    assert thinking.text == "The int() cast truncates toward zero."
    answer = next(m for m in session.messages if m.native_id == "q1-a1")
    assert "truncates toward zero" not in answer.text and answer.parent_id == "q1-u1"
    queued = next(m for m in session.messages if m.native_id == "q1-m1")
    assert FLAG_QUEUED in queued.flags


def test_bad_and_cut_lines_and_skipped_records_are_counted():
    _, report = only(MAIN)
    assert report.lines == 13  # 12 complete lines + the cut last one
    assert report.bad_lines == 2  # "this line is not json" and the cut last line
    assert report.skipped_messages == 2  # the notification and the bare /stats
    assert report.unknown_records == 0
    assert report.end_offset < MAIN.stat().st_size  # a resume re-reads the cut line once it is complete


def test_subagent_transcript_is_its_own_session_under_the_parent():
    session, _ = only(SUB)
    assert session.session_id == "7b1e0c52-9d3a-4f61-8a2e-5c4d3b2a1f00:agent-explore-7f3c"
    assert session.parent_session_id == "7b1e0c52-9d3a-4f61-8a2e-5c4d3b2a1f00"
    assert user_texts(session) == ["Find every caller of refund_total"]
    assert counts(session) == {("user", "text"): 1, ("assistant", "text"): 1}


def test_older_fixture_with_function_call_parts():
    session, report = only(OLDER)
    assert session.session_id == "3c9d7e12-6a4b-4c8d-9e0f-1a2b3c4d5e6f"
    assert counts(session) == {
        ("user", "text"): 1, ("assistant", "text"): 2, ("assistant", "tool_call"): 1, ("user", "tool_result"): 1,
    }
    assert session.git_branch == "main" and session.project == "ledger"
    assert report.bad_lines == 0


def test_resume_from_offset_yields_only_the_appended_messages(tmp_path):
    folder = tmp_path / "projects" / "-x" / "chats"
    folder.mkdir(parents=True)
    path = folder / OLDER.name
    lines = OLDER.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:2]))
    first, report = parse(path)
    assert counts(first[0]) == {("user", "text"): 1, ("assistant", "text"): 1, ("assistant", "tool_call"): 1}
    offset = report.end_offset
    assert offset == path.stat().st_size
    with open(path, "ab") as fh:
        fh.write(b"".join(lines[2:]))
    more, report2 = parse(path, offset)
    assert counts(more[0]) == {("user", "tool_result"): 1, ("assistant", "text"): 1}
    assert report2.end_offset == path.stat().st_size


def test_detection_needs_the_qwen_envelope(tmp_path):
    assert PARSER.detect(MAIN, read_head(MAIN))  # first line is a bookkeeping system record, then a message
    assert PARSER.detect(SUB, read_head(SUB))
    assert parser_for(MAIN).platform == "qwen-code"
    # a Qwen-looking system line alone outside a Qwen chats folder says nothing
    lone = tmp_path / "x.jsonl"
    lone.write_bytes(MAIN.read_bytes().splitlines(keepends=True)[0])
    assert not PARSER.detect(lone, read_head(lone))
    # a first line longer than the detection head still counts when it opens a parts message
    long_line = tmp_path / "long.jsonl"
    big = "y" * 20000
    long_line.write_text(
        '{"uuid":"u","parentUuid":null,"sessionId":"s","timestamp":"2026-08-02T09:00:00Z","type":"user",'
        f'"message":{{"role":"user","parts":[{{"text":"{big}"}}]}}}}\n'
    )
    assert PARSER.detect(long_line, read_head(long_line))


def test_parse_file_redacts_and_keeps_platform(tmp_path):
    path = tmp_path / "projects" / "-x" / "chats" / "s.jsonl"
    path.parent.mkdir(parents=True)
    shutil.copy(OLDER, path)
    text = path.read_text().replace("add a unit test", "use key AKIAIOSFODNN7EXAMPLE to add a unit test")
    path.write_text(text)
    sessions, report = parse_file(path)
    assert report.platform == "qwen-code"
    assert "AKIAIOSFODNN7EXAMPLE" not in all_text(sessions[0]) and report.redactions >= 1


# A rewind, written as Qwen Code's ChatRecordingService.rewindRecording does (QwenLM/qwen-code: a ``system``
# record, subtype ``rewind``, parented to the last record kept, ``systemPayload.truncatedCount``; its
# sessionService test "accepts the abandoned branch created by a rewind marker" resumes root → rewind →
# replacement), in the shape of jazzyalex/agent-sessions stage0/agents/qwen/019f…0004.jsonl (commit 651e854f).
REWOUND = Path(__file__).parent / "fixtures" / "qwen" / "5d2e8f14-7c3a-4b9e-a1d6-0f2e3c4b5a69.jsonl"


def test_a_rewind_drops_the_abandoned_turn_and_its_title():
    session, report = only(REWOUND)
    assert user_texts(session) == ["list the ledger accounts with a negative balance",
                                   "archive them instead of deleting"]
    assert "Deleting acc-104" not in all_text(session)
    assert session.title == "Negative ledger balances"  # the abandoned branch's title went with it
    assert counts(session) == {("user", "text"): 2, ("assistant", "text"): 3, ("assistant", "tool_call"): 1,
                               ("user", "tool_result"): 1}


def test_a_rewind_to_the_start_keeps_only_what_follows(tmp_path):
    lines = REWOUND.read_text().splitlines(keepends=True)
    path = tmp_path / REWOUND.name
    path.write_text("".join(lines[:8]) + lines[8].replace('"parentUuid": "5d2e8f14-0000-4000-8000-000000000005"',
                                                          '"parentUuid": null') + "".join(lines[9:]))
    session, _ = only(path)
    assert user_texts(session) == ["archive them instead of deleting"] and session.title is None


def test_a_rewind_appended_after_a_parse_asks_for_a_whole_reparse(tmp_path):
    lines = REWOUND.read_bytes().splitlines(keepends=True)
    path = tmp_path / REWOUND.name
    path.write_bytes(b"".join(lines[:8]))
    (first,), report = parse(path)
    assert "now delete those three accounts" in user_texts(first)
    with open(path, "ab") as fh:
        fh.write(b"".join(lines[8:]))
    _, more = parse(path, report.end_offset)
    assert more.requires_full_reparse


def test_hook_context_parts_are_not_the_users_words(tmp_path):
    """Qwen Code adds a UserPromptSubmit/SessionStart hook's context as its own part, wrapped in
    ``<qwen:…-context>`` (Qwen's hooks docs; agent-sessions' QwenIntegrationTests replays a record without
    ``systemPayload``, where only the model-bound parts are left to read)."""
    record = {
        "uuid": "0d4c3b2a-0000-4000-8000-000000000001", "parentUuid": None,
        "sessionId": "0d4c3b2a-1e2f-4a5b-8c6d-7e8f9a0b1c2d", "timestamp": "2026-08-04T08:00:00.000Z",
        "type": "user", "cwd": "/home/mina/src/ledger", "version": "0.21.13",
        "message": {"role": "user", "parts": [
            {"text": "<qwen:session-start-context>\nLedger amounts are integer cents.\n</qwen:session-start-context>"},
            {"text": "why is the refund total off by one cent?"},
            {"text": "<qwen:user-prompt-submit-context>\nCurrent branch: fix/rounding\n"
                     "</qwen:user-prompt-submit-context>"},
        ]},
    }
    path = write_jsonl(tmp_path / "chats" / "0d4c3b2a-1e2f-4a5b-8c6d-7e8f9a0b1c2d.jsonl", [record])
    session, _ = only(path)
    assert user_texts(session) == ["why is the refund total off by one cent?"]


# Records glued on one line: Qwen's writer appends ``JSON.stringify(record) + "\n"`` (jsonl-utils), so a write
# that lost its newline, or a crash that cut a record before the next append, leaves two records on one line.
# The fixture's first line holds a prompt and its answer with no newline between them; its last line holds an
# answer, a prompt cut short, the same prompt written again whole, and its answer.
GLUED = Path(__file__).parent / "fixtures" / "qwen" / "glued" / "9e4b1c07-2d5f-4a8e-b3c6-71d0e2f4a5b8.jsonl"


def test_records_glued_on_one_line_are_all_read():
    assert parser_for(GLUED) is not None and parser_for(GLUED).platform == "qwen-code"
    session, report = only(GLUED)
    assert user_texts(session) == [
        "why does the invoice export skip archived customers",
        "keep archived customers but mark them in a status column",
        "run the export tests",
    ]
    assert [m.text for m in session.messages if m.role == "assistant"] == [
        "The export query filters on customers.archived_at IS NULL, so archived customers never reach the CSV writer.",
        "Added a status column that reads archived or active, and dropped the archived_at filter.",
        "All twelve export tests pass with the new status column.",
    ]
    assert session.started_at == "2026-09-14T08:12:03.417Z" and session.ended_at == "2026-09-14T08:15:09.128Z"
    assert report.bad_lines == 1  # only the cut record is lost; a glued pair loses nothing
    assert report.end_offset == GLUED.stat().st_size


def test_a_glued_line_resumed_from_its_start_is_read_again_whole(tmp_path):
    path = tmp_path / "projects" / "-x" / "chats" / GLUED.name
    path.parent.mkdir(parents=True)
    lines = GLUED.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:2]))
    _, report = parse(path)
    with open(path, "ab") as fh:
        fh.write(lines[2])
    more, _ = parse(path, report.end_offset)
    assert [m.text for m in more[0].messages if m.role == "user"] == ["run the export tests"]
    assert len({m.native_id for m in more[0].messages}) == len(more[0].messages) == 3


def test_a_log_of_only_glued_lines_is_still_recognised(tmp_path):
    path = tmp_path / GLUED.name  # outside a chats folder: the records alone decide
    path.write_bytes(GLUED.read_bytes().splitlines(keepends=True)[0])
    assert parser_for(path) is not None and parser_for(path).platform == "qwen-code"
    session, report = only(path)
    assert len(session.messages) == 2 and report.bad_lines == 0


def test_qwens_prompt_log_and_saved_chats_are_not_sessions(tmp_path):
    """Qwen Code's other state (QwenLM/qwen-code packages/core/src/core/logger.ts): ``tmp/<project hash>/logs.json``
    lists the prompts typed (for the ↑ history) and ``checkpoint-<tag>.json`` is a ``/chat save`` snapshot of the
    history: both copy what the chat log records, so neither is read (it would only duplicate messages)."""
    folder = tmp_path / ".qwen" / "tmp" / "5f0c3a"
    folder.mkdir(parents=True)
    prompts = folder / "logs.json"
    prompts.write_text('[\n  {\n    "sessionId": "9e4b1c07-2d5f-4a8e-b3c6-71d0e2f4a5b8",\n    "messageId": 0,\n'
                       '    "type": "user",\n    "message": "run the export tests",\n'
                       '    "timestamp": "2026-09-14T08:15:02.310Z"\n  }\n]')
    saved = folder / "checkpoint-invoices.json"
    saved.write_text('[\n  {\n    "role": "user",\n    "parts": [\n      {\n        "text": "run the export tests"\n'
                     '      }\n    ]\n  }\n]')
    assert parser_for(prompts) is None and parser_for(saved) is None


LEGACY = (Path(__file__).parent / "fixtures" / "qwen-code" / "legacy" / ".qwen" / "tmp"
          / "0c3a287bdd595c5f317bcf27678a5b1147109b4cbea4f0fac8a3fd6373525d44" / "chats"
          / "session-2025-10-14T09-12-4d1a7c2e.json")


def test_a_legacy_whole_file_recording_is_qwens_not_geminis():
    """Before its JSONL log, Qwen Code kept Gemini CLI's recorder under its own data folder: one
    ``ConversationRecord`` rewritten whole in ``~/.qwen/tmp/<sha256 of the project root>/chats/session-*.json``
    (a Qwen Code fork's ``chatRecordingService.ts`` + ``config/storage.ts``; Qwen's own VS Code companion
    ``qwenSessionReader.ts`` still lists these files). It is a Qwen session, not a Gemini one."""
    assert parser_for(LEGACY) is not None and parser_for(LEGACY).platform == "qwen-code"
    sessions, report = parse_file(LEGACY)
    assert len(sessions) == 1
    session = sessions[0]
    assert session.platform == "qwen-code"
    assert session.session_id == "4d1a7c2e-0b6f-4e39-9a51-7c8d2e3f4a60"
    assert session.started_at == "2025-10-14T09:12:03.118Z" and session.ended_at == "2025-10-14T09:14:47.902Z"
    assert counts(session) == {
        ("user", "text"): 2,
        ("assistant", "thinking"): 1,
        ("assistant", "tool_call"): 1,
        ("user", "tool_result"): 1,
        ("assistant", "text"): 1,
    }
    assert user_texts(session) == ["why does the tally total drop the last row?", "ok, fix it and add a test"]
    assert "Request cancelled." not in all_text(session)  # an ``info`` notice is the UI's, skipped and counted
    assert report.skipped_messages == 1 and report.unknown_records == 0 and report.bad_lines == 0


def test_a_legacy_recording_with_qwen_typed_answers_keeps_them(tmp_path):
    """Qwen's companion reader types the model's turns ``"qwen"`` in these files (``type: 'user' | 'qwen'``):
    such an answer is the assistant's, not an unknown record."""
    chats = tmp_path / ".qwen" / "tmp" / ("ab" * 32) / "chats"
    chats.mkdir(parents=True)
    path = chats / "session-2025-11-02T16-40-9b2c4d6e.json"
    path.write_text(
        '{"sessionId": "9b2c4d6e-1f3a-4b5c-8d7e-0a1b2c3d4e5f", "projectHash": "' + "ab" * 32 + '",\n'
        ' "startTime": "2025-11-02T16:40:10.000Z", "lastUpdated": "2025-11-02T16:40:19.500Z",\n'
        ' "messages": [\n'
        '  {"id": "m1", "timestamp": "2025-11-02T16:40:10.000Z", "type": "user", "content": "list the cron jobs"},\n'
        '  {"id": "m2", "timestamp": "2025-11-02T16:40:19.500Z", "type": "qwen",'
        ' "content": "There are two: nightly-backup and weekly-report."}\n'
        ' ]}\n', encoding="utf-8")
    assert parser_for(path) is not None and parser_for(path).platform == "qwen-code"
    sessions, report = parse_file(path)
    assert [(m.role, m.kind, m.text, m.timestamp) for m in sessions[0].messages] == [
        ("user", "text", "list the cron jobs", "2025-11-02T16:40:10Z"),
        ("assistant", "text", "There are two: nightly-backup and weekly-report.", "2025-11-02T16:40:19.500Z"),
    ]
    assert report.unknown_records == 0


def test_legacy_recordings_are_looked_for_in_the_runtime_folder(tmp_path, monkeypatch):
    runtime = tmp_path / "qwen-data"
    chats = runtime / "tmp" / LEGACY.parent.parent.name / "chats"
    chats.mkdir(parents=True)
    shutil.copy(LEGACY, chats / LEGACY.name)
    monkeypatch.setenv("QWEN_RUNTIME_DIR", str(runtime))
    assert runtime / "tmp" in PARSER.default_roots()
    assert parser_for(chats / LEGACY.name).platform == "qwen-code"  # under $QWEN_RUNTIME_DIR, not ``.qwen``


REALTIME = (Path(__file__).parent / "fixtures" / "qwen-code" / "projects" / "-home-ines-code-tally" / "chats"
            / "2f8e6c4a-1b3d-4e5f-9a7b-8c6d4e2f0a1b.jsonl")


def test_what_the_user_said_in_a_realtime_voice_chat_is_theirs():
    """A Realtime (voice) exchange is written as a ``user`` and an ``assistant`` record with subtype
    ``realtime_message`` (QwenLM/qwen-code ``chatRecordingService.ts`` ``recordRealtimeConversation``; the
    user's has ``provenance: real_user``): the spoken question is the user's words like a typed prompt."""
    session, report = only(REALTIME)
    assert [(m.role, m.kind, m.timestamp) for m in session.messages] == [
        ("user", "text", "2026-09-03T07:40:00.100Z"),
        ("assistant", "text", "2026-09-03T07:40:03.500Z"),
        ("user", "text", "2026-09-03T07:40:21Z"),
        ("assistant", "text", "2026-09-03T07:40:22.800Z"),
        ("user", "text", "2026-09-03T07:41:05Z"),
    ]
    assert user_texts(session)[1] == "does round half even explain the missing cent on invoice forty two"
    assert report.unknown_records == 0 and report.skipped_messages == 0


def test_discovery_follows_the_runtime_folder_set_in_qwens_settings(tmp_path, monkeypatch):
    """Besides ``$QWEN_RUNTIME_DIR``, ``advanced.runtimeOutputDir`` in ``~/.qwen/settings.json`` moves where Qwen
    Code writes its chats (QwenLM/qwen-code ``config/storage.ts`` ``getRuntimeBaseDir``: env, then the setting, then
    ``~/.qwen``; ``~`` expanded). Chats left in ``~/.qwen`` from before the setting are still found."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("QWEN_RUNTIME_DIR", raising=False)
    (home / ".qwen").mkdir(parents=True)
    (home / ".qwen" / "settings.json").write_text(
        '{\n  "advanced": {\n    "runtimeOutputDir": "~/agent-data/qwen"\n  }\n}\n', encoding="utf-8")
    moved = home / "agent-data" / "qwen" / "projects" / "-home-mina-src-ledger" / "chats" / MAIN.name
    moved.parent.mkdir(parents=True)
    shutil.copy(MAIN, moved)
    before = home / ".qwen" / "projects" / "-home-ines-code-tally" / "chats" / REALTIME.name
    before.parent.mkdir(parents=True)
    shutil.copy(REALTIME, before)
    assert home / "agent-data" / "qwen" / "projects" in PARSER.default_roots()
    found = sorted(p.name for p, x in discover(PARSER.default_roots()) if getattr(x, "platform", x) == "qwen-code")
    assert found == sorted([MAIN.name, REALTIME.name])
