"""Claude Code parser: every real fixture with expectations read from the files themselves (jq), plus small
hand-made fixtures for rewinds, Korean/NFD text, secrets and broken files."""

from __future__ import annotations

import shutil
import unicodedata
from collections import Counter
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES
from parser_helpers import counts, user_texts, write_jsonl

from wwt.models import (
    FLAG_COMPACTION_SUMMARY,
    FLAG_ERROR,
    FLAG_SIDECHAIN,
    FLAG_SUBAGENT,
    Session,
)
from wwt.parsers import parse_file
from wwt.parsers.claude_code import ClaudeCodeParser, dropped_lines

REAL = (REAL_FIXTURES / "claude-code")
MINE = Path(__file__).parent / "fixtures" / "claude"

NOISE_MARKERS = (
    "<system-reminder>",
    "<command-name>",
    "<command-message>",
    "<local-command-stdout>",
    "Caveat: The messages below",
    "[Request interrupted by user",
)


def parse_one(path: Path) -> Session:
    sessions, report = parse_file(path)
    assert report.platform == "claude-code", report.notes
    assert len(sessions) == 1, (len(sessions), report.notes)
    return sessions[0]


def assert_no_noise(session: Session) -> None:
    for message in session.messages:
        if message.kind == "text":
            for marker in NOISE_MARKERS:
                assert marker not in message.text, (marker, message.text[:200])


# ------------------------------------------------------------------------------------------ real files


def test_vibecodingtracker_cjk_session_with_resume_copy():
    s = parse_one(REAL / "VibeCodingTracker__claude_code.jsonl")
    # Stem is not a UUID (renamed fixture) → first sessionId in the file.
    assert s.session_id == "e9f146fa-3b20-48d0-9be4-d99ca901cae4"
    assert (s.project, s.project_path, s.git_branch) == ("claude-code", "/home/wei/repo/claude-code", "main")
    assert (s.started_at, s.ended_at) == ("2025-08-28T12:57:08.611Z", "2025-08-28T13:13:47.562Z")
    prompts = user_texts(s)
    assert len(prompts) == 4
    assert prompts[0].startswith("幫我檢查一下 go.mod 裡面")
    assert prompts[1] == "toolchain不用保留吧?"
    assert prompts[2] == "幫我查一下 golang文檔 透過 context7"
    assert prompts[3].startswith("不對 幫我查一下pydantic文檔的Field用法")
    c = counts(s)
    # 30 distinct tool_use ids; 31 tool_result blocks: one is a line copied on resume (same uuid, new
    # timestamp and sessionId) and one has empty content (nothing to index).
    assert c[("assistant", "tool_call")] == 30
    assert c[("user", "tool_result")] == 29
    assert c[("assistant", "thinking")] == 5
    assert c[("assistant", "text")] == 6
    assert sum(FLAG_ERROR in m.flags for m in s.messages) == 2
    tool_names = {m.tool_name for m in s.messages if m.kind == "tool_call"}
    assert any(name.startswith("mcp__context7__") for name in tool_names)
    assert all(m.tool_name for m in s.messages if m.kind == "tool_result")
    assert_no_noise(s)


def test_agentlogs_compact_summary_is_assistant_and_commands_are_dropped():
    s = parse_one(REAL / "agentlogs__compact.jsonl")
    assert s.session_id == "0e26ec2f-937e-482c-b889-bc126f996913"
    assert (s.project, s.git_branch) == ("studio", "main")
    assert user_texts(s) == ["how are you doing"]  # /clear and /compact are bare commands
    summaries = [m for m in s.messages if FLAG_COMPACTION_SUMMARY in m.flags]
    assert len(summaries) == 1
    assert summaries[0].role == "assistant"
    assert summaries[0].text.startswith("This session is being continued from a previous conversation")
    assert counts(s) == Counter({("assistant", "text"): 2, ("assistant", "thinking"): 1, ("user", "text"): 1})
    assert_no_noise(s)


def test_agentlogs_crud_tools_and_results():
    s = parse_one(REAL / "agentlogs__crud.jsonl")
    assert s.session_id == "8122657c-fe54-4dc9-89a3-20049e8a84f7"
    assert (s.project, s.git_branch) == ("claudecode", "main")
    assert len(user_texts(s)) == 1 and user_texts(s)[0].startswith("create a file `JOKE.md`")
    c = counts(s)
    assert c[("assistant", "tool_call")] == 9
    # 9 result blocks, one with empty content (the `rm` Bash call) → nothing to keep
    assert c[("user", "tool_result")] == 8
    assert c[("assistant", "text")] == 6
    assert all("<system-reminder>" not in m.text for m in s.messages)


def test_agentlogs_inline_sidechain_and_summary_title():
    s = parse_one(REAL / "agentlogs__subagent.jsonl")
    assert s.session_id == "609efeca-2f51-4118-b077-e91c9fe63f73"
    assert s.title == "Tailwind Studio: Component Catalog Architecture Design"
    assert user_texts(s)[0] == "ask a subagent how he's doing"
    sidechain = [m for m in s.messages if FLAG_SIDECHAIN in m.flags]
    assert sidechain and sidechain[0].role == "user"
    assert sidechain[0].text.startswith("Hey there! Just checking in")
    c = counts(s)
    assert (c[("assistant", "tool_call")], c[("user", "tool_result")], c[("assistant", "thinking")]) == (1, 1, 2)
    assert c[("assistant", "text")] == 3


def test_agentlogs_todos():
    s = parse_one(REAL / "agentlogs__todos.jsonl")
    assert s.session_id == "0db46778-18a1-4d84-853f-d4dc72a07a1b"
    calls = [m for m in s.messages if m.kind == "tool_call"]
    assert len(calls) == 5 and {m.tool_name for m in calls} == {"TodoWrite"}
    assert "Complete first task" in calls[0].text
    assert counts(s)[("user", "tool_result")] == 5
    assert user_texts(s) == ["create a todo list with 3 items, then check off each step by step then clear it"]


def test_dag_rewind_keeps_latest_branch_and_compaction_continuation():
    s = parse_one(REAL / "claude-code-log__dag_compact_after_rewind.jsonl")
    assert s.session_id == "s1"
    assert user_texts(s) == ["Start", "Second attempt", "Keep going", "After compaction"]
    texts = [m.text for m in s.messages]
    assert "First attempt" not in texts and "First answer" not in texts
    assert [m.text for m in s.messages if m.role == "assistant" and not m.flags] == [
        "Ready",
        "Second answer",
        "Kept going",
        "Final answer",
    ]
    assert sum(FLAG_COMPACTION_SUMMARY in m.flags for m in s.messages) == 1
    assert s.git_branch is None  # no gitBranch in this file


def test_medium_conversation_without_messages_yields_nothing_but_reads_every_line():
    sessions, report = parse_file(REAL / "episodic-memory__medium-conversation.jsonl")
    assert sessions == []
    assert (report.lines, report.bad_lines, report.unknown_records) == (23, 0, 0)
    assert report.end_offset == (REAL / "episodic-memory__medium-conversation.jsonl").stat().st_size


def test_short_conversation_with_leading_summary_line_is_parsed():
    s = parse_one(REAL / "episodic-memory__short-conversation.jsonl")
    assert s.session_id == "982581eb-41b9-46da-86c1-ac34168117a8"
    assert s.title == "Prerequisites Checking: Unveiling Hidden Requirements and Technical Nuances"
    assert s.git_branch == "feature-branch"
    assert s.project == "tool"  # basename of the (non-existent here) cwd
    assert counts(s) == Counter({("user", "text"): 1, ("assistant", "text"): 1})


def test_tiny_oldest_format_string_content():
    s = parse_one(REAL / "episodic-memory__tiny-conversation.jsonl")
    assert s.session_id == "67a8478e-78dc-44ab-82ea-f65c8ead85f6"
    assert (s.project, s.git_branch) == ("streaming", "feature-branch")
    assert user_texts(s)[0].startswith("Lately, I've noticed you being very tentative.")
    c = counts(s)
    assert (c[("assistant", "tool_call")], c[("user", "tool_result")], c[("assistant", "text")]) == (1, 1, 3)


def test_spotter_short_drops_command_echo_and_interrupt_marker():
    s = parse_one(REAL / "spotter__short.jsonl")
    assert s.session_id == "55604662-cf2a-4331-851a-ec234028f8ca"
    assert (s.project, s.git_branch) == ("spotter", "master")
    assert user_texts(s) == ["mix phx.server doesnt seem to start"]
    calls = [m for m in s.messages if m.kind == "tool_call"]
    assert [m.text for m in calls] == ["Bash: mix phx.server 2>&1 | head -80", "Glob: mix.exs in /home/marco/projects/spotter"]
    assert sum(FLAG_ERROR in m.flags for m in s.messages) == 2
    # one "\n\n" text block carries nothing and is not kept
    assert counts(s)[("assistant", "text")] == 1 and counts(s)[("assistant", "thinking")] == 1
    assert_no_noise(s)


def test_spotter_tool_heavy():
    s = parse_one(REAL / "spotter__tool_heavy.jsonl")
    assert s.session_id == "d6e0bada-1959-4eec-a9d2-0bfade768d8f"
    assert user_texts(s) == [  # /mcp is a bare command; its stdout echo is noise
        "start phoenix in background",
        "scrolling back in xterm.js still does not work (maybe because outer web catches it)? "
        "websearch xterm.js tmux interactions",
    ]
    c = counts(s)
    assert (c[("assistant", "tool_call")], c[("user", "tool_result")]) == (6, 6)
    assert_no_noise(s)


def test_spotter_subagent_parent_keeps_command_with_arguments():
    s = parse_one(REAL / "spotter__subagent.jsonl")
    assert s.session_id == "491e126e-1e71-469c-ade2-fcc8af567c74"
    prompts = user_texts(s)
    assert prompts[0].startswith("/handgemacht:create-beads websearch to learn how to fastest setup credo")
    assert prompts[1] == "create the beads"
    c = counts(s)
    assert (c[("assistant", "tool_call")], c[("user", "tool_result")], c[("assistant", "thinking")]) == (16, 16, 4)
    assert c[("assistant", "text")] == 7  # 8 text blocks, one is only "\n\n"
    assert_no_noise(s)


def _subagent_layout(tmp_path: Path, parent: str, name: str, meta: str | None = None) -> Path:
    folder = tmp_path / "projects" / "-home-u-spotter" / parent / "subagents"
    folder.mkdir(parents=True)
    stem = name.split("__", 1)[1].removesuffix(".jsonl")
    target = folder / f"{stem}.jsonl"
    shutil.copy(REAL / name, target)
    if meta:
        shutil.copy(REAL / meta, folder / f"{stem}.meta.json")
    return target


def test_spotter_subagent_file_is_its_own_session_linked_to_parent(tmp_path):
    parent = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
    path = _subagent_layout(tmp_path, parent, "spotter__agent-aac57f5.jsonl")
    s = parse_one(path)
    assert s.session_id == f"{parent}:agent-aac57f5"
    assert s.parent_session_id == parent
    assert (s.project, s.git_branch) == ("spotter-4te", "spotter-4te")
    assert all(FLAG_SUBAGENT in m.flags for m in s.messages)
    c = counts(s)
    assert (c[("assistant", "tool_call")], c[("user", "tool_result")], c[("assistant", "text")]) == (12, 12, 3)
    assert user_texts(s)[0].startswith("Search hex.pm for the latest versions")


def test_spotter_subagent_fixture_at_its_flat_path_is_still_a_subagent():
    s = parse_one(REAL / "spotter__agent-aac57f5.jsonl")
    assert s.session_id == "ae4a77f8-aedd-4bc1-888f-c94edc91af04:agent-aac57f5"
    assert s.parent_session_id == "ae4a77f8-aedd-4bc1-888f-c94edc91af04"


def test_acompact_transcript_keeps_only_the_summary(tmp_path):
    parent = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
    path = _subagent_layout(tmp_path, parent, "spotter__agent-acompact-946d2b.jsonl")
    sessions, report = parse_file(path)
    (s,) = sessions
    assert s.session_id == f"{parent}:agent-acompact-946d2b"
    assert user_texts(s) == []  # the summarisation prompt is never a user prompt
    assert report.skipped_messages == 1
    (summary,) = s.messages
    assert summary.role == "assistant" and FLAG_COMPACTION_SUMMARY in summary.flags
    assert "Initial Request" in summary.text


def test_agent_sessions_subagent_trio(tmp_path):
    parent_id = "0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f"
    project = tmp_path / "projects" / "-tmp"
    project.mkdir(parents=True)
    shutil.copy(REAL / f"agent-sessions__{parent_id}.jsonl", project / f"{parent_id}.jsonl")
    sub = _subagent_layout(
        tmp_path,
        parent_id,
        "agent-sessions__agent-a0ad4f44468bdf20d.jsonl",
        meta="agent-sessions__agent-a0ad4f44468bdf20d.meta.json",
    )
    parent = parse_one(project / f"{parent_id}.jsonl")
    assert parent.session_id == parent_id and parent.parent_session_id is None
    assert user_texts(parent) == ["Delegate a repo search to a subagent"]
    assert [m.tool_name for m in parent.messages if m.kind == "tool_call"] == ["Task"]
    child = parse_one(sub)
    assert child.session_id == f"{parent_id}:agent-a0ad4f44468bdf20d"
    assert child.parent_session_id == parent_id
    assert child.title == "subagent: general-purpose"  # from the .meta.json sidecar
    assert user_texts(child) == ["Search the repo for TODO comments"]
    results = [m for m in child.messages if m.kind == "tool_result"]
    assert [m.text for m in results] == ["a.txt:1: TODO fix"]  # kept although its line is isMeta
    assert results[0].tool_name is None  # this composite's tool_use carries no id to link it


def test_agent_sessions_record_zoo():
    sessions, report = parse_file(REAL / "agent-sessions__small.jsonl")
    (s,) = sessions
    assert s.session_id == "ses_stage0_small"
    assert s.title == "Stage0 small fixture"  # custom-title beats ai-title and summary
    assert (s.cwd, s.git_branch) == ("/tmp", "main")  # "[trimmed for fixture]" values are ignored
    texts = user_texts(s)
    assert texts[0] == "Hello"
    summary = [m for m in s.messages if FLAG_COMPACTION_SUMMARY in m.flags]
    assert [m.text for m in summary] == ["Summary of prior context."]
    assert summary[0].role == "assistant"
    assistant = [m.text for m in s.messages if m.role == "assistant" and m.kind == "text"]
    assert "Done." not in assistant  # superseded by supersedesUuids
    assert any(t.startswith("Partial reply") for t in assistant)
    assert sum(FLAG_ERROR in m.flags for m in s.messages) == 1  # the user-rejected tool use
    # started, result, frame-link, relocated: unknown, skipped, counted (bridge-session and atis-latch are known
    # bookkeeping since genuine 2.1.2xx logs showed them: test_session_bookkeeping_lines_of_newer_versions…)
    assert report.unknown_records == 4
    assert report.bad_lines == 0
    assert all(m.text != "<synthetic>" for m in s.messages)


# --------------------------------------------------------------------------------------- own fixtures


def test_rewind_keeps_branch_ending_at_last_written_leaf():
    s = parse_one(MINE / "rewind_two_branches.jsonl")
    assert user_texts(s) == ["set up the orders table", "use PostgreSQL with a jsonb column", "add an index on created_at"]
    assert all("MySQL" not in m.text for m in s.messages)
    assert s.git_branch == "feature/rewind" and s.project == "shop-api"


def test_rewind_rule_prefers_branch_with_newest_line():
    from wwt.parsers.claude_code import _Line

    skeleton = [
        _Line(0, "p", None, None, True),
        _Line(1, "x", "p", None, True),  # first attempt
        _Line(2, "y", "p", None, True),  # rewind: second attempt
        _Line(3, "x2", "x", None, False),  # written LAST, continues the first attempt
    ]
    assert dropped_lines(skeleton) == {2}


def test_forks_made_of_tool_results_are_not_rewinds():
    from wwt.parsers.claude_code import _Line

    skeleton = [_Line(0, "a", None, None), _Line(1, "r1", "a", None), _Line(2, "r2", "a", None)]
    assert dropped_lines(skeleton) == set()


def test_korean_nfd_text_is_normalised_to_nfc_and_reminders_removed():
    s = parse_one(MINE / "korean_nfd.jsonl")
    prompts = user_texts(s)
    assert prompts == ["로그인 버그 고쳐줘. 세션 만료가 너무 빨라", "테스트도 추가해줘"]
    assert all(unicodedata.is_normalized("NFC", p) for p in prompts)
    assert s.project == "웹앱" and unicodedata.is_normalized("NFC", s.cwd)


def test_secrets_are_redacted_in_prompts_and_tool_output():
    sessions, report = parse_file(MINE / "secrets.jsonl")
    (s,) = sessions
    joined = "\n".join(m.text for m in s.messages)
    for secret in ("AKIAIOSFODNN7EXAMPLE", "Sup3rSecret", "sk_live_51HxAbCdEfGhIjKlMnOp", "ghp_0123456789abc"):
        assert secret not in joined
    assert "[REDACTED:aws_access_key]" in joined and "postgres://app:[REDACTED:url_password]@db.internal" in joined
    assert "DEBUG=true" in joined
    assert report.redactions >= 5


def test_redaction_can_be_disabled(monkeypatch, tmp_path):
    from wwt.settings import save

    monkeypatch.setenv("WWT_HOME", str(tmp_path))
    save("redact", False)  # the data dir's setting (`wwt config redact off`), not the environment
    sessions, report = parse_file(MINE / "secrets.jsonl")
    assert "AKIAIOSFODNN7EXAMPLE" in user_texts(sessions[0])[0] and report.redactions == 0


def test_truncated_last_line_is_counted_and_resumable():
    path = MINE / "truncated_last_line.jsonl"
    sessions, report = parse_file(path)
    assert user_texts(sessions[0]) == ["rename the helper to parse_orders"]
    assert report.bad_lines == 1
    data = path.read_bytes()
    assert report.end_offset == data.rindex(b"\n") + 1  # resume re-reads the unfinished line


def test_invalid_utf8_line_is_counted_and_salvaged():
    sessions, report = parse_file(MINE / "invalid_utf8.jsonl")
    (s,) = sessions
    assert report.bad_lines == 1
    assert user_texts(s)[0] == "why is the build slow"
    assert any(t.startswith("see log:") and "\ufffd" in t for t in user_texts(s))
    assert [m.text for m in s.messages if m.role == "assistant"] == ["The slow step is the docker layer cache."]


def _chain(uuid: str, parent: str | None, rtype: str, **extra) -> dict:
    return {"parentUuid": parent, "isSidechain": False, "sessionId": "q", "cwd": "/w/app", "type": rtype,
            "uuid": uuid, "timestamp": "2026-03-06T10:00:00.000Z", **extra}


def test_queued_input_is_kept_once_and_flagged(tmp_path):
    from wwt.models import FLAG_QUEUED

    path = write_jsonl(
        tmp_path / "queued.jsonl",
        [_chain("u1", None, "user", message={"role": "user", "content": "refactor the parser"}),
        _chain("q1", "u1", "attachment", attachment={"type": "queued_command", "prompt": "also update the docs"}),
        _chain("q2", "q1", "attachment", attachment={"type": "queued_command", "prompt": [{"type": "text", "text": "and bump the version"}]}),
        _chain("u2", "q2", "user", message={"role": "user", "content": "and bump the version"}),
        _chain("s1", "u2", "system", subtype="local_command",
               content="<command-name>/model</command-name><command-args>opus</command-args>")],
    )
    s = parse_one(path)
    assert user_texts(s) == ["refactor the parser", "also update the docs", "and bump the version", "/model opus"]
    queued = [m.text for m in s.messages if FLAG_QUEUED in m.flags]
    assert queued == ["also update the docs"]  # the second one arrived again as a normal user line


def test_background_task_notifications_are_not_the_users_words(tmp_path):
    """Claude Code tells the model a background agent or shell finished with a ``<task-notification>`` prompt it
    queues itself (a ``queued_command`` attachment with ``commandMode: task-notification``, or a user line) —
    kenn-io/agentsview testdata/claude/queued_system_messages.jsonl and other readers' tests show both."""
    note = "<task-notification>\n<task-id>a3f9c2e1</task-id>\n<status>completed</status>\n" \
           "<summary>Agent \"audit the migrations\" completed</summary>\n</task-notification>"
    path = write_jsonl(
        tmp_path / "notified.jsonl",
        [_chain("u1", None, "user", message={"role": "user", "content": "audit the migrations in the background"}),
         _chain("q1", "u1", "attachment", attachment={"type": "queued_command", "commandMode": "task-notification",
                                                       "prompt": note}),
         _chain("u2", "q1", "user", message={"role": "user", "content": note}),
         _chain("u3", "u2", "user", message={"role": "user", "content": "summarise what it found"}),
         # 2.1.8x+ marks who wrote a user line (agent-sessions' claude/schema_drift.jsonl: origin.kind)
         _chain("u4", "u3", "user", origin={"kind": "task-notification"},
                message={"role": "user", "content": "Agent finished: 3 migrations lack a down step"}),
         _chain("u5", "u4", "user", origin={"kind": "human"}, message={"role": "user", "content": "fix those three"})],
    )
    s = parse_one(path)
    assert user_texts(s) == ["audit the migrations in the background", "summarise what it found", "fix those three"]


def test_lines_without_their_chain_keys_are_still_a_transcript(tmp_path):
    """Other readers' fixtures keep Claude Code lines to ``type``, ``message`` and ``timestamp`` (kenn-io/agentsview
    internal/parser/testdata/claude/valid_session.jsonl and truncated.jsonl at 53860074): outside ~/.claude
    such a file is still Claude Code's, and a cut last line costs only itself. Our own lines in that shape:"""
    lines = [
        {"type": "user", "timestamp": "2026-03-07T09:00:00Z", "message": {"content": "why do the invoice totals drift?"},
         "cwd": "/w/billing"},
        {"type": "assistant", "timestamp": "2026-03-07T09:00:04Z", "message": {"model": "claude-sonnet-4-5", "content": [
            {"type": "text", "text": "Checking the rounding."},
            {"type": "tool_use", "id": "toolu_b1", "name": "Grep", "input": {"pattern": "round("}}]}},
        {"type": "user", "timestamp": "2026-03-07T09:01:00Z", "message": {"content": "use banker's rounding"}},
    ]
    path = write_jsonl(tmp_path / "exported" / "drift.jsonl", lines)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"type":"assistant","timestamp":"2026-03-07T09:01:05Z","message":{"content":[{"type":"te')
    s = parse_one(path)
    assert user_texts(s) == ["why do the invoice totals drift?", "use banker's rounding"]
    assert counts(s) == {("user", "text"): 2, ("assistant", "text"): 1, ("assistant", "tool_call"): 1}
    assert s.cwd == "/w/billing" and s.session_id == "drift"
    chat = write_jsonl(tmp_path / "chat.jsonl", [  # an OpenAI-style export is no transcript
        {"type": "user", "timestamp": "2026-03-07T09:00:00Z", "role": "user", "message": {"content": "hi"}}])
    assert ClaudeCodeParser().detect(chat, chat.read_bytes()) is False


def test_synthetic_and_meta_lines_are_not_messages(tmp_path):
    path = write_jsonl(
        tmp_path / "meta.jsonl",
        [_chain("m1", None, "user", isMeta=True, message={"role": "user", "content": "skill body: always use uv"}),
        _chain("u1", "m1", "user", message={"role": "user", "content": "run the tests"}),
        _chain("a1", "u1", "assistant", message={"role": "assistant", "model": "<synthetic>", "content": [{"type": "text", "text": "API Error: 500"}]}),
        _chain("a2", "a1", "assistant", message={"role": "assistant", "content": [{"type": "thinking", "thinking": "", "signature": "x"}, {"type": "redacted_thinking", "data": "zz"}, {"type": "text", "text": "All 12 tests pass."}]}),
        {"type": "tag", "tag": "x"},
        {"type": "brand-new-record", "sessionId": "q"}],
    )
    sessions, report = parse_file(path)
    (s,) = sessions
    assert [(m.role, m.kind, m.text) for m in s.messages] == [
        ("user", "text", "run the tests"),
        ("assistant", "text", "All 12 tests pass."),
    ]
    assert report.unknown_records == 1 and report.skipped_messages == 2


def test_huge_tool_output_is_bounded(tmp_path):
    big = "line\n" * 50_000
    path = write_jsonl(
        tmp_path / "big.jsonl",
        [_chain("a1", None, "assistant", message={"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "yes line"}}]}),
        _chain("u1", "a1", "user", message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": big, "is_error": True}]})],
    )
    s = parse_one(path)
    result = s.messages[1]
    assert result.kind == "tool_result" and result.tool_name == "Bash" and FLAG_ERROR in result.flags
    assert len(result.text) < 3000 and "chars omitted" in result.text


def test_empty_file_yields_nothing(tmp_path):
    sessions, report = parse_file(MINE / "empty.jsonl")
    assert sessions == [] and report.bad_lines == 0


def test_incremental_parse_reads_only_new_lines(tmp_path):
    src = (MINE / "rewind_two_branches.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "11111111-2222-4333-8444-555555555555.jsonl"
    path.write_bytes(b"".join(src[:2]))
    first, report1 = parse_file(path)
    assert report1.end_offset == len(b"".join(src[:2]))
    assert user_texts(first[0]) == ["set up the orders table"]
    with open(path, "ab") as fh:
        fh.write(b"".join(src[2:4]))  # a normal continuation
    second, report2 = parse_file(path, start_offset=report1.end_offset)
    assert user_texts(second[0]) == ["use MySQL with utf8mb4"]
    assert not report2.requires_full_reparse
    assert second[0].session_id == first[0].session_id == path.stem
    with open(path, "ab") as fh:
        fh.write(b"".join(src[4:6]))  # the user rewinds to a1 and asks again
    third, report3 = parse_file(path, start_offset=report2.end_offset)
    assert report3.requires_full_reparse
    full, _ = parse_file(path)
    assert "use MySQL with utf8mb4" not in user_texts(full[0])


def test_detect_uses_content_then_location(tmp_path, monkeypatch):
    parser = ClaudeCodeParser()
    assert parser.detect(REAL / "spotter__short.jsonl", (REAL / "spotter__short.jsonl").read_bytes()[:8192])
    assert not parser.detect(MINE / "not_a_session.jsonl", (MINE / "not_a_session.jsonl").read_bytes())
    assert not parser.detect(MINE / "empty.jsonl", b"")
    # first line longer than the head: the line's opening decides
    assert parser.detect(Path("x.jsonl"), b'{"parentUuid":null,"message":{"content":"' + b"x" * 9000)
    assert parser.detect(Path("x.jsonl"), b'{"type":"file-history-snapshot","snapshot":{"a":"' + b"x" * 9000)
    assert not parser.detect(Path("x.jsonl"), b'{"timestamp":"t","type":"session_meta","payload":{"' + b"x" * 9000)
    # a corrupt first line does not hide the transcript behind it
    assert parser.detect(Path("x.jsonl"), b'{"type": "us\n' + (REAL / "spotter__short.jsonl").read_bytes()[:4000])
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    inside = tmp_path / "cfg" / "projects" / "-x" / "abc.jsonl"
    inside.parent.mkdir(parents=True)
    inside.write_bytes(b"")
    assert parser.default_roots() == [tmp_path / "cfg" / "projects"]
    assert parser.detect(inside, b"")


@pytest.mark.parametrize("name", sorted(p.name for p in REAL.glob("*.jsonl")))
def test_every_real_file_parses_without_bad_lines_or_noise(name):
    sessions, report = parse_file(REAL / name)
    assert report.bad_lines == 0
    assert report.end_offset == (REAL / name).stat().st_size
    for s in sessions:
        assert s.platform == "claude-code"
        assert_no_noise(s)
        ids = [m.native_id for m in s.messages]
        assert len(ids) == len(set(ids))


# ------------------------------------------------------- layouts found by running other projects' fixtures
# Fixtures below are written by hand after the shapes other log readers met in the wild (issue 11); each
# test says which writer behaviour it stands for. Notes on the formats: docs/formats-notes.md.

WORKFLOW_PARENT = "5f3c2a10-8d4e-4b6a-9c1f-2e7d8a9b0c11"


def test_workflow_subagent_attaches_to_the_parent_conversation(tmp_path):
    """Workflow runs nest their agents one level deeper (``<session>/subagents/workflows/<run>/agent-*.jsonl``)
    and write ``sessionId`` as ``<parent uuid>#agent-<id>``: the parent is the uuid, never an id with ``#``."""
    folder = tmp_path / "projects" / "-home-mina-src-ledger" / WORKFLOW_PARENT / "subagents" / "workflows" / "wf-run-3"
    folder.mkdir(parents=True)
    path = folder / "agent-wf7c21d0.jsonl"
    shutil.copy(MINE / "agent-wf7c21d0.jsonl", path)
    s = parse_one(path)
    assert s.parent_session_id == WORKFLOW_PARENT
    assert s.session_id == f"{WORKFLOW_PARENT}:agent-wf7c21d0"
    assert all(FLAG_SUBAGENT in m.flags for m in s.messages)
    assert counts(s) == {("user", "text"): 1, ("assistant", "tool_call"): 1, ("user", "tool_result"): 1,
                         ("assistant", "text"): 1}


def test_workflow_subagent_away_from_its_folder_still_names_the_uuid_parent(tmp_path):
    """Copied elsewhere (no folder to read), the ``#agent-…`` suffix of ``sessionId`` is cut off."""
    path = tmp_path / "agent-wf7c21d0.jsonl"
    shutil.copy(MINE / "agent-wf7c21d0.jsonl", path)
    s = parse_one(path)
    assert s.parent_session_id == WORKFLOW_PARENT
    assert "#" not in s.session_id


INLINE_MAIN = "7a9e4c21-3b5d-4f60-8a71-c2d3e4f5a6b7"


def test_main_transcript_with_inline_agent_lines_stays_the_main_session():
    """A main transcript may carry a Task subagent's lines inline (``isSidechain: true`` + ``agentId``): the
    file is still the user's conversation, those lines are flagged sidechain."""
    s = parse_one(MINE / f"{INLINE_MAIN}.jsonl")
    assert (s.session_id, s.parent_session_id) == (INLINE_MAIN, None)
    assert user_texts(s)[0] == "why does the nightly reconcile job drop cents on refunds?"
    assert s.title == "why does the nightly reconcile job drop cents on refunds?"
    main = [m for m in s.messages if FLAG_SIDECHAIN not in m.flags]
    side = [m for m in s.messages if FLAG_SIDECHAIN in m.flags]
    assert [m.text for m in side] == [
        "Find where refunds are rounded in ledger/",
        "refund_total() in ledger/refunds.py truncates with int(amount * 100) / 100.",
    ]
    assert len(main) == 4 and not any(FLAG_SUBAGENT in m.flags for m in s.messages)


def test_renamed_main_transcript_with_inline_agent_lines_stays_main(tmp_path):
    """Without a UUID file name the first conversation line decides: it is the user's, so the file is main."""
    path = tmp_path / "fixture__inline.jsonl"
    shutil.copy(MINE / f"{INLINE_MAIN}.jsonl", path)
    s = parse_one(path)
    assert (s.session_id, s.parent_session_id) == (INLINE_MAIN, None)
    assert not any(FLAG_SUBAGENT in m.flags for m in s.messages)


def test_qwen_code_chat_log_is_not_claimed_as_claude(tmp_path):
    """Qwen Code (QwenLM/qwen-code ``chatRecordingService``) writes Claude's envelope (uuid, parentUuid,
    sessionId, type, cwd, version) around a Gemini ``message: {role, parts}``: this parser reads none of it,
    so it must not claim the file — not even under a ``.claude/projects`` folder."""
    qwen = Path(__file__).parent / "fixtures" / "qwen" / "3c9d7e12-6a4b-4c8d-9e0f-1a2b3c4d5e6f.jsonl"
    parser = ClaudeCodeParser()
    assert not parser.detect(qwen, qwen.read_bytes())
    inside = tmp_path / ".claude" / "projects" / "-home-mina-src-ledger" / qwen.name
    inside.parent.mkdir(parents=True)
    shutil.copy(qwen, inside)
    assert not parser.detect(inside, inside.read_bytes())


def test_qwen_line_longer_than_the_detection_head_is_not_claimed(tmp_path):
    """The first line may not fit in the bytes ``detect`` sees (a pasted log as the first prompt)."""
    record = {"uuid": "d1", "parentUuid": None, "sessionId": "q", "timestamp": "2026-07-16T08:30:00.000Z",
              "type": "user", "cwd": "/w", "version": "0.9.1",
              "message": {"role": "user", "parts": [{"text": "log:\n" + "x" * 20_000}]}}
    path = write_jsonl(tmp_path / "q.jsonl", [record])
    from wwt.parsers.common import read_head

    assert not ClaudeCodeParser().detect(path, read_head(path))
    claude = {"parentUuid": None, "isSidechain": False, "sessionId": "c", "type": "user", "uuid": "u1",
              "message": {"role": "user", "content": "log:\n" + "x" * 20_000}}
    path = write_jsonl(tmp_path / "c.jsonl", [claude])
    assert ClaudeCodeParser().detect(path, read_head(path))


def test_resumed_parse_of_renamed_files_keeps_each_files_role(tmp_path):
    """An incremental parse that starts on an inline agent line still belongs to the main session, and one
    that starts inside a renamed subagent transcript still belongs to the subagent."""
    main = tmp_path / "fixture__inline.jsonl"
    shutil.copy(MINE / f"{INLINE_MAIN}.jsonl", main)
    offset = main.read_bytes().index(b'{"parentUuid":null,"isSidechain":true')
    sessions, _ = parse_file(main, offset)
    (s,) = sessions
    assert (s.session_id, s.parent_session_id) == (INLINE_MAIN, None)
    assert s.messages[0].text == "Find where refunds are rounded in ledger/"
    assert FLAG_SIDECHAIN in s.messages[0].flags and FLAG_SUBAGENT not in s.messages[0].flags

    sub = tmp_path / "spotter__agent-aac57f5.jsonl"
    shutil.copy(REAL / "spotter__agent-aac57f5.jsonl", sub)
    data = sub.read_bytes()
    sessions, _ = parse_file(sub, data.index(b"\n", len(data) // 2) + 1)
    (s,) = sessions
    assert s.session_id == "ae4a77f8-aedd-4bc1-888f-c94edc91af04:agent-aac57f5"
    assert s.messages and all(FLAG_SUBAGENT in m.flags for m in s.messages)


def _toolsearch_session(tmp_path: Path) -> Path:
    """Claude Code 2.1.2xx (genuine logs: Soph/energy-import-export and darthzen/lab-memory ``0/full.jsonl`` on
    their entire/checkpoints refs, bad4cb08 / b1c97a92; StefanJonssonInExchange/branch-pruner 3e8ec703 and
    Esdeveniments/esdeveniments-frontend 631c7c50 for the bookkeeping lines): a ``ToolSearch`` result is a list of
    ``tool_reference`` blocks; ``atis-latch`` and ``bridge-session`` lines carry no conversation; a session with no
    title record ends with a ``last-prompt`` line naming its latest prompt. Lines re-created in our words."""
    search = {"type": "tool_use", "id": "toolu_s1", "name": "ToolSearch", "input": {"query": "select:WebFetch"}}
    found = {"type": "tool_result", "tool_use_id": "toolu_s1",
             "content": [{"type": "tool_reference", "tool_name": "WebFetch"},
                         {"type": "tool_reference", "tool_name": "WebSearch"}]}
    return write_jsonl(tmp_path / "ts.jsonl", [
        {"type": "atis-latch", "atis": "", "sessionId": "q"},
        _chain("u1", None, "user", message={"role": "user", "content": "compare the two tariff files for March"}),
        _chain("a1", "u1", "assistant", message={"role": "assistant", "content": [search]}),
        _chain("r1", "a1", "user", message={"role": "user", "content": [found]}),
        {"type": "bridge-session", "bridgeSessionId": "cse_01", "lastSequenceNum": 0},
        _chain("a2", "r1", "assistant", message={"role": "assistant", "content": [
            {"type": "text", "text": "March differs only in the night rate."}]}),
        _chain("u2", "a2", "user", message={"role": "user", "content": "commit the notes\nand push"}),
        {"type": "last-prompt", "lastPrompt": "commit the notes\nand push", "sessionId": "q"},
    ])


def test_a_tool_search_result_names_the_tools_it_found(tmp_path):
    s = parse_one(_toolsearch_session(tmp_path))
    (result,) = [m for m in s.messages if m.kind == "tool_result"]
    assert result.tool_name == "ToolSearch" and "WebFetch" in result.text and "WebSearch" in result.text


def test_session_bookkeeping_lines_of_newer_versions_are_not_unknown(tmp_path):
    _, report = parse_file(_toolsearch_session(tmp_path))
    assert report.unknown_records == 0 and report.bad_lines == 0


def test_without_a_title_record_the_first_prompt_names_the_session_not_the_last(tmp_path):
    s = parse_one(_toolsearch_session(tmp_path))
    assert s.title == "compare the two tariff files for March" and s.title_is_first_prompt
