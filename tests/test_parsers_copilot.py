"""Copilot CLI parser: fixtures written after the CLI's event log (session-state/<id>/events.jsonl +
workspace.yaml) and the older history-session-state JSON (docs/formats-notes.md); expectations by hand."""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path

from parser_helpers import all_text, counts, only_session, run_parser, user_texts, write_jsonl

from wwt.models import FLAG_ERROR
from wwt.parsers import parser_for
from wwt.parsers.common import read_head
from wwt.parsers.copilot_cli import CopilotCliParser

OWN = Path(__file__).parent / "fixtures" / "copilot-cli"
SID = "4f2a9c1e-8b7d-4e60-9a35-d1c2b3a4e5f6"
EVENTS = OWN / "session-state" / SID / "events.jsonl"
LEGACY = OWN / "history-session-state" / "7d3e2f10-1c4b-4a59-8e6d-0f9a8b7c6d5e.json"
PARSER = CopilotCliParser()
parse = partial(run_parser, PARSER)
only = partial(only_session, PARSER)


def test_event_log_session_metadata():
    session, _ = only(EVENTS)
    assert session.session_id == SID and session.platform == "copilot-cli"
    assert session.cwd == "/home/jun/work/tide-api/src"
    assert session.project == "tide-api" and session.project_path == "/home/jun/work/tide-api"  # the git root
    assert session.git_branch == "feat/webhooks"
    assert session.title == "Stop webhook retries on 410 Gone"  # workspace.yaml summary
    assert session.started_at == "2026-09-10T14:00:00Z"
    assert session.ended_at == "2026-09-10T14:00:20Z"


def test_event_log_messages():
    session, _ = only(EVENTS)
    assert counts(session) == {
        ("user", "text"): 1,
        ("assistant", "thinking"): 1,
        ("assistant", "text"): 2,
        ("assistant", "tool_call"): 2,
        ("user", "tool_result"): 2,
    }
    # the typed content, not transformedContent with the injected <current_datetime>
    assert user_texts(session) == [
        "webhook deliveries retry forever when the receiver returns 410 Gone; stop retrying on 410"
    ]
    assert "current_datetime" not in all_text(session)
    calls = [m for m in session.messages if m.kind == "tool_call"]
    assert [c.text for c in calls][0] == "bash: grep -rn should_retry tide/"
    assert calls[1].tool_name == "edit" and calls[1].native_id == "e-010#call:toolu_02"
    results = [m for m in session.messages if m.kind == "tool_result"]
    assert FLAG_ERROR not in results[0].flags and "def should_retry" in results[0].text
    assert FLAG_ERROR in results[1].flags and results[1].text == "old_str not found in tide/delivery.py"


def test_event_log_counts_noise_unknown_bad_and_cut_lines():
    _, report = only(EVENTS)
    assert report.skipped_messages == 1  # a user.message holding only a <system-reminder>
    assert report.unknown_records == 1  # "future.kind"
    assert report.bad_lines == 1  # the cut last line
    assert report.end_offset < EVENTS.stat().st_size


def test_event_log_resume_reads_only_new_events(tmp_path):
    folder = tmp_path / "session-state" / SID
    folder.mkdir(parents=True)
    lines = EVENTS.read_bytes().splitlines(keepends=True)
    path = folder / "events.jsonl"
    path.write_bytes(b"".join(lines[:4]))
    (first,), report = parse(path)
    assert user_texts(first) and first.session_id == SID
    with open(path, "ab") as fh:
        fh.write(b"".join(lines[4:14]))
    (more,), report2 = parse(path, report.end_offset)
    assert more.session_id == SID  # from the folder name: session.start is before the offset
    assert counts(more) == {("assistant", "thinking"): 1, ("assistant", "text"): 2, ("assistant", "tool_call"): 2,
                            ("user", "tool_result"): 2}


def test_legacy_history_json():
    session, report = only(LEGACY)
    assert session.session_id == "7d3e2f10-1c4b-4a59-8e6d-0f9a8b7c6d5e"
    assert counts(session) == {("user", "text"): 1, ("assistant", "tool_call"): 1, ("user", "tool_result"): 1,
                               ("assistant", "text"): 1}
    assert all(m.timestamp == "2025-10-08T21:10:16.398Z" for m in session.messages)
    call = next(m for m in session.messages if m.kind == "tool_call")
    assert call.text == "bash: crontab -l"
    result = next(m for m in session.messages if m.kind == "tool_result")
    assert result.tool_name == "bash" and "1-6" in result.text
    assert report.bad_lines == 1  # the stray 42 in chatMessages
    sessions, again = parse(LEGACY, 100)
    assert again.requires_full_reparse and len(sessions[0].messages) == 4  # rewritten whole: never a tail


def test_detection(tmp_path):
    assert PARSER.detect(EVENTS, read_head(EVENTS)) and parser_for(EVENTS).platform == "copilot-cli"
    assert PARSER.detect(LEGACY, read_head(LEGACY))
    other = tmp_path / "events.jsonl"
    other.write_text('{"type":"message","payload":{},"id":"x"}\n')
    assert not PARSER.detect(other, read_head(other))
    copy = tmp_path / "x.json"
    shutil.copy(OWN / "session-state" / SID / "workspace.yaml", copy)
    assert not PARSER.detect(copy, read_head(copy))


def _genuine_shaped_events() -> list[dict]:
    """A turn as Copilot CLI 1.0.x writes it: ``tool.execution_complete`` names no tool (genuine logs:
    Mai0313/VibeCodingTracker tests/fixtures/sessions/copilot.jsonl at 7acc4bcc, CLI 1.0.34, and
    jazzyalex/agent-sessions stage0/agents/copilot/small.jsonl at 651e854f); the events are our own."""
    sid = "2b7c9e40-5d1a-4f3b-9c8e-7a6b5c4d3e2f"
    start = {"type": "session.start", "data": {"sessionId": sid, "copilotVersion": "1.0.34",
             "startTime": "2026-09-11T09:00:00.000Z", "context": {"cwd": "/home/jun/work/tide-api"}},
             "id": "s-1", "timestamp": "2026-09-11T09:00:00.000Z", "parentId": None}
    ask = {"type": "user.message", "data": {"content": "which queue does the retry worker read?"}, "id": "s-2",
           "timestamp": "2026-09-11T09:00:05.000Z", "parentId": "s-1"}
    request = {"type": "assistant.message", "data": {"messageId": "m-9", "content": "", "toolRequests": [
        {"toolCallId": "toolu_q1", "name": "grep", "arguments": {"pattern": "RETRY_QUEUE"}, "type": "function"}]},
        "id": "s-3", "timestamp": "2026-09-11T09:00:07.000Z", "parentId": "s-2"}
    started = {"type": "tool.execution_start", "data": {"toolCallId": "toolu_q1", "toolName": "grep",
               "arguments": {"pattern": "RETRY_QUEUE"}}, "id": "s-4", "timestamp": "2026-09-11T09:00:07.100Z",
               "parentId": "s-3"}
    done = {"type": "tool.execution_complete", "data": {"toolCallId": "toolu_q1", "success": True,
            "result": {"content": "tide/worker.py:8:RETRY_QUEUE = 'tide.retry'"}}, "id": "s-5",
            "timestamp": "2026-09-11T09:00:07.300Z", "parentId": "s-4"}
    return [start, ask, request, started, done]


def test_a_tool_result_is_named_after_its_call(tmp_path):
    path = write_jsonl(tmp_path / "session-state" / "2b7c9e40-5d1a-4f3b-9c8e-7a6b5c4d3e2f" / "events.jsonl",
                       _genuine_shaped_events())
    (session,), _ = parse(path)
    (result,) = [m for m in session.messages if m.kind == "tool_result"]
    assert result.tool_name == "grep"
    # A result appended after a parse that already read its call is named too.
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:4]))
    _, report = parse(path)
    with open(path, "ab") as fh:
        fh.write(lines[4])
    (more,), _ = parse(path, report.end_offset)
    assert [(m.kind, m.tool_name) for m in more.messages] == [("tool_result", "grep")]


def test_reasoning_written_on_the_message_is_thinking_once(tmp_path):
    """Copilot CLI 1.0.34 writes a turn's reasoning as ``assistant.message`` ``data.reasoningText`` (beside an
    opaque ``reasoningOpaque``) and no ``assistant.reasoning`` event (VibeCodingTracker's genuine log); other
    logs carry an ``assistant.reasoning`` event (agent-sessions' small.jsonl). Our own events in those shapes:"""
    start, ask, *_ = _genuine_shaped_events()
    think = {"type": "assistant.message", "data": {"messageId": "m-10", "content": "The retry worker reads tide.retry.",
             "reasoningText": "The queue name is a constant in tide/worker.py.", "reasoningOpaque": "b3BhcXVl"},
             "id": "s-6", "timestamp": "2026-09-11T09:00:09.000Z", "parentId": "s-2"}
    event = {"type": "assistant.reasoning", "data": {"reasoningId": "r-1", "content": "Check the scheduler too."},
             "id": "s-7", "timestamp": "2026-09-11T09:00:10.000Z", "parentId": "s-6"}
    repeat = {"type": "assistant.message", "data": {"messageId": "m-11", "content": "The scheduler uses it as well.",
              "reasoningText": "Check the scheduler too."}, "id": "s-8", "timestamp": "2026-09-11T09:00:11.000Z",
              "parentId": "s-7"}
    path = write_jsonl(tmp_path / "session-state" / "2b7c9e40-5d1a-4f3b-9c8e-7a6b5c4d3e2f" / "events.jsonl",
                       [start, ask, think, event, repeat])
    (session,), _ = parse(path)
    assert [(m.kind, m.text) for m in session.messages if m.role == "assistant"] == [
        ("thinking", "The queue name is a constant in tide/worker.py."),
        ("text", "The retry worker reads tide.retry."),
        ("thinking", "Check the scheduler too."),
        ("text", "The scheduler uses it as well."),
    ]


# Events written without an ``id`` (nor ``parentId``): ``{type, data, timestamp}`` only, the shape of
# wesm/agentsview internal/parser/copilot_test.go's session logs (commit aea2eb1). Re-created by hand.
NO_IDS = OWN / "no-event-ids" / "b81c4d2e-5f36-4a7b-9c08-e1d2f3a4b5c6" / "events.jsonl"


def test_events_without_an_id_are_read():
    assert parser_for(NO_IDS) is not None and parser_for(NO_IDS).platform == "copilot-cli"
    session, report = only(NO_IDS)
    assert session.session_id == "b81c4d2e-5f36-4a7b-9c08-e1d2f3a4b5c6"
    assert session.git_branch == "render-cache" and session.project == "tilemap"
    assert counts(session) == {
        ("user", "text"): 1, ("assistant", "tool_call"): 1, ("user", "tool_result"): 1, ("assistant", "text"): 1,
    }
    result = next(m for m in session.messages if m.kind == "tool_result")
    assert result.tool_name == "grep" and "tiles.ts:88" in result.text
    assert len({m.native_id for m in session.messages}) == 4  # ids made from byte offsets stay distinct
    assert report.unknown_records == 0 and report.bad_lines == 0


def test_a_line_without_data_or_with_another_agents_envelope_is_still_not_an_event(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text('{"type":"user.message","content":"hi","timestamp":"2026-10-02T13:40:12.000Z"}\n')
    assert not PARSER.detect(path, read_head(path))
    path.write_text('{"type":"response_item","payload":{"type":"message"},"timestamp":"2026-10-02T13:40:12Z"}\n')
    assert not PARSER.detect(path, read_head(path))


# Copilot CLI writes a skill it loads as a ``user.message`` of its own: ``data.source`` is ``skill-<name>``
# and/or the content is a ``<skill-context name=…>`` block (kenn-io/agentsview
# internal/parser/copilot_test.go, 5386007, skips both). The user never typed it. Re-created by hand, with a
# ``session.start`` whose ``data`` holds ``cwd`` directly and a tool request carrying ``input`` (the shapes of
# Dicklesworthstone/coding_agent_session_search tests/connector_copilot_cli.rs, 2a1fc6f).
SKILLS = OWN / "skill-turns" / "9c41e7a2-3b58-4d06-8f1e-2a7d6c5b4e39" / "events.jsonl"


def test_a_loaded_skill_is_not_the_users_words():
    session, report = only(SKILLS)
    assert user_texts(session) == ["draft the notes for the ledger export fixes since the last tag"]
    assert "skill-context" not in all_text(session) and "Added, Fixed" not in all_text(session)
    assert report.skipped_messages == 3
    assert counts(session) == {("user", "text"): 1, ("assistant", "text"): 2, ("assistant", "tool_call"): 1,
                               ("user", "tool_result"): 1}


def test_events_the_clis_schema_names_that_hold_no_conversation_are_not_unknown():
    """``system.message`` (the model's instructions), ``skill.invoked`` (a skill file's text),
    ``permission.requested``: kinds the CLI's event schema lists; skipped, not counted as unknown."""
    session, report = only(SKILLS)
    assert report.unknown_records == 0 and report.bad_lines == 0
    assert "terminal assistant" not in all_text(session) and "newest first" not in all_text(session)
    assert session.started_at == "2026-11-04T08:15:00Z" and session.ended_at == "2026-11-04T08:15:12Z"


def test_a_start_event_naming_its_folder_directly_sets_the_project():
    session, _ = only(SKILLS)  # session.start data {sessionId, cwd}: no context object
    assert session.cwd == "/home/rosa/src/ledgerly" and session.project == "ledgerly"


def test_a_tool_request_with_input_keeps_its_arguments():
    session, _ = only(SKILLS)
    (call,) = [m for m in session.messages if m.kind == "tool_call"]
    assert call.tool_name == "bash" and "git describe --tags --abbrev=0" in call.text


# What the CLI's own event schema says (github/copilot-sdk nodejs/src/generated/session-events.ts, cc0438d):
# an event's ``agentId`` names the sub-agent instance that wrote it (absent for the main agent), ``ephemeral:
# true`` marks a transient event never meant for the log, ``user.message`` ``source`` is ``skill-…`` for a hidden
# skill or ``agent-…`` for a prompt from another agent, ``isAutopilotContinuation`` a prompt autopilot wrote.
# (A public reader of session-state also drops events with ``agentId`` or ``ephemeral`` and user messages with a
# ``source``.) Events re-created by hand.
SUBAGENT = OWN / "subagent-events" / "e3f1a2b4-7c6d-4e5f-9a8b-1c2d3e4f5a6b" / "events.jsonl"


def test_a_sub_agents_events_are_its_own_session_under_the_main_one():
    sessions, report = parse(SUBAGENT)
    main, sub = sessions
    assert main.session_id == "e3f1a2b4-7c6d-4e5f-9a8b-1c2d3e4f5a6b" and main.parent_session_id is None
    assert sub.session_id == "e3f1a2b4-7c6d-4e5f-9a8b-1c2d3e4f5a6b:agent-explore-7f2c"
    assert sub.parent_session_id == main.session_id and sub.project == main.project == "parcel-scale"
    assert user_texts(main) == ["the scale reports grams as kilograms after a tare, find where units are mixed"]
    assert [(m.role, m.kind) for m in sub.messages] == [
        ("user", "text"), ("assistant", "tool_call"), ("user", "tool_result"), ("assistant", "text")]
    assert sub.messages[2].tool_name == "grep"
    assert (sub.started_at, sub.ended_at) == ("2026-11-20T16:00:08Z", "2026-11-20T16:00:12Z")
    assert counts(main) == {("user", "text"): 1, ("assistant", "text"): 2, ("assistant", "tool_call"): 1,
                            ("user", "tool_result"): 1}


def test_transient_autopilot_and_agent_written_events_are_not_the_users_words():
    (main, _sub), report = parse(SUBAGENT)
    assert "The tare path conv" not in [m.text for m in main.messages]  # the ephemeral partial answer
    assert "Continue with the remaining steps" not in all_text(main)
    assert "explore agent finished" not in all_text(main)
    assert report.skipped_messages == 2  # the autopilot continuation and the other agent's prompt
    assert main.ended_at == "2026-11-20T16:00:20Z"


def test_sub_agent_events_marked_the_older_way_are_its_own_session_too():
    """Before ``agentId``, the schema marked a sub-agent's ``assistant.message`` and tool events with
    ``data.parentToolCallId`` (the call that started it; now deprecated, session-events.ts)."""
    path = OWN / "subagent-parent-call" / "5b6c7d8e-9f01-4a2b-8c3d-4e5f6a7b8c9d" / "events.jsonl"
    (main, sub), _ = parse(path)
    assert sub.session_id == "5b6c7d8e-9f01-4a2b-8c3d-4e5f6a7b8c9d:agent-call-explore-9"
    assert sub.parent_session_id == main.session_id
    assert [(m.role, m.kind) for m in sub.messages] == [
        ("assistant", "tool_call"), ("user", "tool_result"), ("assistant", "text")]
    assert [(m.role, m.kind) for m in main.messages] == [
        ("user", "text"), ("assistant", "tool_call"), ("user", "tool_result"), ("assistant", "text")]
    assert main.messages[2].tool_name == "task"


def _instruction_discovery_events() -> list[dict]:
    """A turn in which the CLI finds an AGENTS.md below the working folder (the shape of a genuine Copilot CLI
    1.0.72 events.jsonl: JeffreyCA/azure-dev ``0/full.jsonl`` on its entire/checkpoints ref, 091d53d9): it writes
    an empty ``user.message`` with ``source: "system"``, a ``system.notification`` of kind
    ``instruction_discovered``, then the file's text as a ``user.message`` with ``source: "instruction-discovery"``
    wrapped in ``<system_reminder>``; typed messages carry no ``source``. A later ``session.context_changed``
    moves the session to another branch; ``model.*`` events (a model turn or call starting: a genuine 1.0.91 log,
    dev-mskhan/test-copilot ``0/full.jsonl``, 1239443f) hold no conversation. The events and their words are our
    own."""
    sid = "6c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
    ts = "2026-11-28T10:00:{:02d}.000Z".format

    def event(n: int, etype: str, data: dict) -> dict:
        return {"type": etype, "data": data, "id": f"d-{n}", "timestamp": ts(n), "parentId": f"d-{n - 1}"}

    context = {"cwd": "/home/mina/src/kettle", "gitRoot": "/home/mina/src/kettle", "branch": "main"}
    return [
        {"type": "session.start", "data": {"sessionId": sid, "copilotVersion": "1.0.72-1", "startTime": ts(0),
                                           "context": context}, "id": "d-0", "timestamp": ts(0), "parentId": None},
        event(1, "user.message", {"content": "the brew timer test fails on windows runners, make it less flaky",
                                  "attachments": [], "delivery": "idle", "interactionId": "i-1"}),
        event(2, "user.message", {"content": "", "source": "system", "delivery": "steering", "interactionId": "i-1"}),
        event(3, "system.notification", {"content": "Discovered instruction: timer/AGENTS.md",
                                         "kind": {"type": "instruction_discovered", "sourcePath": "timer/AGENTS.md"}}),
        event(4, "user.message", {"content": "\n<system_reminder>\nCustom instructions from timer/AGENTS.md. Apply "
                                             "these to any code you write here:\n\n# Kettle timer\nAlways run the "
                                             "fake clock in tests.\n</system_reminder>",
                                  "source": "instruction-discovery", "interactionId": "i-1"}),
        event(5, "model.turn_started", {"turnId": "t-1"}),  # per model turn and call in 1.0.9x logs: no text
        event(6, "model.model_call_started", {"model": "gpt-5.1"}),
        event(7, "assistant.message", {"messageId": "m-1", "content": "The timer test sleeps on the real clock; "
                                                                      "I switched it to the fake clock."}),
        event(8, "session.context_changed", {**context, "branch": "fix/timer-flake"}),
        event(9, "user.message", {"content": "commit it on its own branch", "delivery": "idle",
                                  "interactionId": "i-2"}),
        event(10, "assistant.message", {"messageId": "m-2", "content": "Committed on fix/timer-flake."}),
    ]


def test_instructions_the_cli_discovers_are_not_the_users_words(tmp_path):
    path = write_jsonl(tmp_path / "session-state" / "6c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f" / "events.jsonl",
                       _instruction_discovery_events())
    (session,), report = parse(path)
    assert user_texts(session) == ["the brew timer test fails on windows runners, make it less flaky",
                                   "commit it on its own branch"]
    assert "fake clock in tests" not in all_text(session) and "system_reminder" not in all_text(session)
    assert report.skipped_messages == 2 and report.unknown_records == 0


def test_the_branch_a_session_moved_to_is_its_branch(tmp_path):
    """Like Claude Code's parser (the last ``gitBranch`` it reads), the branch the session ended on."""
    path = write_jsonl(tmp_path / "session-state" / "6c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f" / "events.jsonl",
                       _instruction_discovery_events())
    (session,), _ = parse(path)
    assert session.git_branch == "fix/timer-flake"
    assert session.cwd == "/home/mina/src/kettle" and session.project == "kettle"


def test_a_shell_command_that_exited_non_zero_is_a_failed_result(tmp_path):
    """Copilot CLI 1.0.9x reports a shell command that exited 1 with ``success: true`` and
    ``shellExecution.exitCode: 1`` (a genuine 1.0.91 log, dev-mskhan/test-copilot ``0/full.jsonl``, 1239443f)."""
    events = _genuine_shaped_events()
    done = events[-1]
    done["data"] = {"toolCallId": "toolu_q1", "success": True, "shellExecution": {"exitCode": 1},
                    "result": {"content": "grep: tide/: No such file or directory\n<shellId: 3 completed with exit code 1>"}}
    ok = {**done, "id": "s-6", "data": {**done["data"], "shellExecution": {"exitCode": 0}}}
    path = write_jsonl(tmp_path / "session-state" / "2b7c9e40-5d1a-4f3b-9c8e-7a6b5c4d3e2f" / "events.jsonl",
                       [*events, ok])
    (session,), _ = parse(path)
    failed, passed = [m for m in session.messages if m.kind == "tool_result"]
    assert FLAG_ERROR in failed.flags and FLAG_ERROR not in passed.flags
