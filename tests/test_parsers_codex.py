"""Codex CLI parser: every real rollout with expectations read off the files by hand, plus what the real set
lacks (.jsonl.zst, resume from an offset, truncated tail, invalid UTF-8, subagent threads, headerless files)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from functools import partial
from pathlib import Path

import pytest
import zstandard
from _shared import REAL_FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from parser_helpers import all_text, counts, only_session, run_parser, user_texts, write_jsonl

from wwt.models import (
    FLAG_COMPACTION_SUMMARY,
    FLAG_ERROR,
    FLAG_INTERRUPTED,
    FLAG_SUBAGENT,
)
from wwt.parsers.codex_cli import CodexCliParser, codex_output_text, session_id_from_name
from wwt.parsers.common import read_head

REAL = (REAL_FIXTURES / "codex-cli")
OWN = Path(__file__).parent / "fixtures" / "codex"
OWN_ID = "0199aaaa-1111-7222-8333-444455556666"
OWN_ROLLOUT = OWN / f"rollout-2026-03-04T10-20-30-{OWN_ID}.jsonl"
PARSER = CodexCliParser()
parse = partial(run_parser, PARSER)
only = partial(only_session, PARSER)




def envelope(ts: str, kind: str, payload: dict) -> dict:
    return {"timestamp": ts, "type": kind, "payload": payload}


INJECTED_MARKERS = (
    "<permissions instructions>",
    "# AGENTS.md instructions",
    "<environment_context>",
    "<INSTRUCTIONS>",
)

# ------------------------------------------------------------------------------------------ real files

REAL_FILES = {
    "VibeCodingTracker__codex.jsonl",
    "VibeCodingTracker__codex_session_rate_limits.jsonl",
    "agent-sessions__codex_053_rate_limit.jsonl",
    "agent-sessions__large.jsonl",
    "agent-sessions__schema_drift.jsonl",
    "agent-sessions__small.jsonl",
    "agentlogs__crud.jsonl",
    "agentlogs__images.jsonl",
    "claude-code-log__rollout-44444444-4444-4444-8444-444444444444.jsonl",
    "claude-code-log__rollout-66666666-6666-4666-8666-666666666666.jsonl",
}


def test_real_fixture_set_is_fully_covered() -> None:
    assert {p.name for p in REAL.iterdir()} == REAL_FILES


def test_agentlogs_crud_exec_session() -> None:
    path = REAL / "agentlogs__crud.jsonl"
    assert PARSER.detect(path, read_head(path))
    session, report = only(path)
    assert session.session_id == "019bf4b5-e7b0-75a0-8bf2-05fbf1b13c9b"
    assert session.platform == "codex-cli"
    assert session.cwd == session.project_path == "/Users/philipp/dev/agentlogs/fixtures"
    assert session.project == "fixtures"
    assert session.git_branch == "main"
    # 3 of the 4 reasoning items have a readable summary; 3 exec_command + 1 apply_patch
    assert counts(session) == {
        ("user", "text"): 1,
        ("assistant", "thinking"): 3,
        ("assistant", "tool_call"): 4,
        ("user", "tool_result"): 4,
        ("assistant", "text"): 1,
    }
    assert user_texts(session) == [
        "create a file `JOKE.md` with a random joke with a title and a footer with some random text, then read "
        "this file, then make change to the file, then delete the file."
    ]
    assert report.skipped_messages == 3  # developer permissions, AGENTS.md, environment_context
    text = all_text(session)
    assert not any(marker in text for marker in INJECTED_MARKERS)
    assert "gAAAAA" not in text  # encrypted reasoning is opaque and dropped
    calls = [m for m in session.messages if m.kind == "tool_call"]
    assert [m.tool_name for m in calls] == ["exec_command", "exec_command", "apply_patch", "exec_command"]
    assert calls[1].text == "exec_command: cat /Users/philipp/dev/agentlogs/fixtures/JOKE.md"
    assert calls[3].text == "exec_command: rm /Users/philipp/dev/agentlogs/fixtures/JOKE.md"
    patch_result = [m for m in session.messages if m.kind == "tool_result"][2]
    assert patch_result.tool_name == "apply_patch"  # matched through call_id
    assert patch_result.text.startswith("Success. Updated the following files:")
    assert (
        session.messages[-1].text
        == "Created `JOKE.md`, read it, updated the footer line, and deleted the file."
    )
    assert session.started_at == "2026-01-25T10:32:00.688Z"
    assert session.ended_at == "2026-01-25T10:32:11.486Z"
    assert report.unknown_records == 0 and report.bad_lines == 0


def test_agentlogs_images_session_drops_base64_and_pairs_copies() -> None:
    session, report = only(REAL / "agentlogs__images.jsonl")
    assert session.session_id == "019c16bd-a0fc-7293-855d-2948ce5dc471"
    assert session.project == "agentlogs" and session.git_branch == "main"
    assert counts(session) == {
        ("user", "text"): 3,
        ("assistant", "thinking"): 9,
        ("assistant", "tool_call"): 10,
        ("user", "tool_result"): 10,
        ("assistant", "text"): 3,
    }
    assert user_texts(session) == [
        "why does the claude code label break here on the /team dashboard? [Image #1]",
        "lets increase the width",
        "commit",
    ]
    text = all_text(session)
    assert "data:image" not in text and "iVBORw0KGgo" not in text and "<image" not in text
    assert not any(marker in text for marker in INJECTED_MARKERS)
    assistant = [m.text for m in session.messages if m.role == "assistant" and m.kind == "text"]
    assert assistant[-1] == "Committed as `web: Widen agent usage axis`.\n\nWant me to push?"
    # one reasoning item with two summary parts = one thinking message holding both
    two_part = [m for m in session.messages if m.text.startswith("**Analyzing label wrapping cause**")]
    assert len(two_part) == 1 and "**Explaining label break on team dashboard**" in two_part[0].text
    assert report.skipped_messages == 3


def test_vibecodingtracker_039_vscode_session() -> None:
    session, report = only(REAL / "VibeCodingTracker__codex.jsonl")
    assert session.session_id == "01996135-afde-7911-97f0-d863511eca56"
    assert session.cwd == "/proj/ds906659/gai/claude-code" and session.project == "claude-code"
    assert session.git_branch == "main"
    # 9 assistant messages stored twice (response_item + agent_message) → 9; 18 function calls; reasoning
    # items all have empty summaries
    assert counts(session) == {
        ("user", "text"): 1,
        ("assistant", "text"): 9,
        ("assistant", "tool_call"): 18,
        ("user", "tool_result"): 18,
    }
    (prompt,) = user_texts(session)
    assert prompt.startswith("幫我檢查一下 go.mod 裡面 為何 go版本是 1.24?")  # IDE preface stripped
    assert prompt.endswith("最後幫我把 TODO.md 刪除")
    assert "Context from my IDE setup" not in prompt and "My request for Codex" not in prompt
    calls = [m for m in session.messages if m.kind == "tool_call"]
    assert Counter(m.tool_name for m in calls) == {"shell": 14, "update_plan": 4}
    assert calls[1].text == "shell: bash -lc ls -la"
    results = [m for m in session.messages if m.kind == "tool_result"]
    assert results[0].text == "Plan updated"
    assert "patch rejected: empty patch" in [m.text for m in results]
    assert results[2].text.startswith("module claude-code-helper")  # JSON-string output unwrapped
    assert not any(FLAG_ERROR in m.flags for m in results)  # every exit_code is 0
    assert report.skipped_messages == 1  # environment_context


def test_agent_sessions_large_unknown_item_types_counted() -> None:
    session, report = only(REAL / "agent-sessions__large.jsonl")
    assert session.session_id == "019b2ea4-aaaa-bbbb-cccc-58208e1f0000"
    assert session.cwd == "/tmp/large" and session.git_branch is None
    assert counts(session) == {("user", "text"): 6, ("assistant", "text"): 7}
    assert user_texts(session) == ["Start", "Step 1", "Step 2", "Step 3", "Step 4", "Step 5"]
    assert report.unknown_records == 2  # non-standard tool_call / tool_result response items
    assert report.skipped_messages == 1


def test_agent_sessions_small_record_zoo() -> None:
    session, report = only(REAL / "agent-sessions__small.jsonl")
    assert session.session_id == "019fc8be-3658-7ca3-9e29-000000000000"  # the first of 7 session_meta
    assert session.cwd == "/tmp/repo" and session.git_branch == "main"
    assert session.parent_session_id is None  # the file's own thread is a cli session
    assert counts(session) == {
        ("user", "text"): 4,  # "List the files" (paired) + 2 user_message events + 1 item_completed
        ("assistant", "thinking"): 1,
        ("assistant", "tool_call"): 7,
        ("user", "tool_result"): 5,
        ("assistant", "text"): 10,  # 1 answer, 2 AgentMessage items, 2 inter-agent, 5 compaction summaries
    }
    assert user_texts(session)[0] == "List the files"
    assert [m.text for m in session.messages if m.kind == "text" and m.role == "assistant"][
        0
    ] == "Found 2 files."
    assert sum(1 for m in session.messages if FLAG_COMPACTION_SUMMARY in m.flags) == 5
    assert (
        sum(1 for m in session.messages if FLAG_SUBAGENT in m.flags) == 2
    )  # inter-agent agent_message items
    assert sum(1 for n in report.notes if "extra session_meta" in n) == 6
    assert any(FLAG_INTERRUPTED in m.flags for m in session.messages)  # turn_aborted
    # non-ISO "[trimmed for fixture]" timestamps become None, never a crash
    assert session.messages[-1].timestamp is None
    assert session.started_at == "2026-08-03T10:48:56Z"
    assert report.bad_lines == 0 and report.unknown_records == 0


@pytest.mark.parametrize(
    ("name", "unknown"),
    [
        ("VibeCodingTracker__codex_session_rate_limits.jsonl", 0),  # headerless: token counts + empty message
        ("agent-sessions__codex_053_rate_limit.jsonl", 1),  # account/rateLimits/updated event
        ("agent-sessions__schema_drift.jsonl", 4),  # four non-envelope lines; world_state is known
    ],
)
def test_files_without_conversation_yield_nothing(name: str, unknown: int) -> None:
    path = REAL / name
    sessions, report = parse(path)
    assert sessions == []
    assert report.unknown_records == unknown and report.bad_lines == 0
    assert report.end_offset == path.stat().st_size


def test_schema_drift_is_not_detected_as_codex() -> None:
    path = REAL / "agent-sessions__schema_drift.jsonl"
    assert not PARSER.detect(path, read_head(path))


def test_pre_envelope_legacy_rollout() -> None:
    path = REAL / "claude-code-log__rollout-44444444-4444-4444-8444-444444444444.jsonl"
    assert PARSER.detect(path, read_head(path))
    session, _ = only(path)
    assert session.session_id == "44444444-4444-4444-8444-444444444444"
    assert [(m.role, m.kind, m.text) for m in session.messages] == [
        ("user", "text", "Open the synthetic legacy session."),
        ("assistant", "text", "The synthetic legacy session is open."),
    ]
    assert all(m.timestamp == "2026-01-04T05:06:07Z" for m in session.messages)  # header time


def test_pre_envelope_with_state_markers_tools_and_git(tmp_path: Path) -> None:
    thread = "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
    path = write_jsonl(
        tmp_path / f"rollout-2025-07-01T10-00-00-{thread}.jsonl",
        [
            {
                "id": thread,
                "timestamp": "2025-07-01T10:00:00.000Z",
                "instructions": "INSTRUCTIONS-MARKER",
                "git": {"branch": "fix/parser", "commit_hash": "abc"},
                "cwd": "/w/legacy-app",
            },
            {"record_type": "state"},
            {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": "<environment_context>\n<cwd>/w</cwd>\n</environment_context>",
                    }
                ],
            },
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "why does make test hang?"}],
            },
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "Checking the Makefile"}],
                "encrypted_content": "xyz",
            },
            {
                "type": "function_call",
                "name": "shell",
                "arguments": '{"command":["make","-n","test"]}',
                "call_id": "c1",
            },
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": '{"output":"pytest -x\\n","metadata":{"exit_code":0}}',
            },
            {"record_type": "state"},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "It waits on a fixture server."}],
            },
        ],
    )
    assert PARSER.detect(path, read_head(path))
    session, report = only(path)
    assert session.session_id == thread
    assert session.git_branch == "fix/parser" and session.cwd == "/w/legacy-app"
    assert [(m.role, m.kind, m.text) for m in session.messages] == [
        ("user", "text", "why does make test hang?"),
        ("assistant", "thinking", "Checking the Makefile"),
        ("assistant", "tool_call", "shell: make -n test"),
        ("user", "tool_result", "pytest -x\n"),
        ("assistant", "text", "It waits on a fixture server."),
    ]
    assert session.messages[3].tool_name == "shell"
    assert "INSTRUCTIONS-MARKER" not in all_text(session)
    assert report.skipped_messages == 1 and report.unknown_records == 0


def test_malformed_last_line_counted() -> None:
    path = REAL / "claude-code-log__rollout-66666666-6666-4666-8666-666666666666.jsonl"
    session, report = only(path)
    assert session.session_id == "66666666-6666-4666-8666-666666666666"
    assert session.project == "synthetic-project"
    assert user_texts(session) == ["Safe line before malformed input."]
    assert report.bad_lines == 1


# ------------------------------------------------------------------------------------------ own fixture


def test_own_rollout_noise_pairing_errors_and_bounds() -> None:
    session, report = only(OWN_ROLLOUT)
    assert session.session_id == OWN_ID
    assert session.git_branch == "feature/login-retry" and session.project == "hangul-app"
    assert session.title == "로그인 재시도 중복 수정"  # thread_name_updated
    assert counts(session) == {
        ("user", "text"): 2,
        ("assistant", "thinking"): 1,
        ("assistant", "tool_call"): 5,
        ("user", "tool_result"): 4,
        ("assistant", "text"): 2,
    }
    assert user_texts(session) == [
        "로그인 재시도 로직이 왜 두 번 실행되는지 봐줘 [Image #1]",
        "테스트도 돌려줘",
    ]
    text = all_text(session)
    for absent in (
        *INJECTED_MARKERS,
        "<user_instructions>",
        "Prefer small commits",
        "<turn_aborted>",
        "BASE-INSTRUCTIONS-MARKER",
        "base64",
        "ENCRYPTED",
    ):
        assert absent not in text
    # developer, AGENTS.md, environment_context, user_instructions, turn_aborted
    assert report.skipped_messages == 5
    assert report.unknown_records == 1  # future_record_kind
    results = {m.tool_name: m for m in session.messages if m.kind == "tool_result"}
    assert FLAG_ERROR in results["exec_command"].flags  # "Process exited with code 1"
    assert FLAG_ERROR in results["view_image"].flags  # {content, success: false}
    assert FLAG_ERROR not in results["apply_patch"].flags
    long_result = results["exec_command"].text
    assert "chars omitted" in long_result and long_result.endswith("Tests: 1 failed, 12 passed\n")
    assert len(long_result) < 2700
    interrupted = [m for m in session.messages if FLAG_INTERRUPTED in m.flags]
    assert [m.text for m in interrupted] == ["shell: bash -lc npm test"]
    summary = [m for m in session.messages if FLAG_COMPACTION_SUMMARY in m.flags]
    assert [m.role for m in summary] == ["assistant"] and summary[0].text.startswith("Summary: fixed double")
    ids = [m.native_id for m in session.messages]
    assert len(set(ids)) == len(ids)


def test_zstd_rollout_is_streamed(tmp_path: Path) -> None:
    target = tmp_path / (OWN_ROLLOUT.name + ".zst")
    target.write_bytes(zstandard.ZstdCompressor().compress(OWN_ROLLOUT.read_bytes()))
    assert PARSER.detect(target, read_head(target))
    plain, _ = only(OWN_ROLLOUT)
    packed, report = only(target)
    assert [(m.native_id, m.kind, m.text) for m in packed.messages] == [
        (m.native_id, m.kind, m.text) for m in plain.messages
    ]
    assert packed.session_id == OWN_ID
    assert report.end_offset == OWN_ROLLOUT.stat().st_size  # decompressed bytes


def test_zstd_streaming_compressor_output_and_resume(tmp_path: Path) -> None:
    target = tmp_path / "rollout-x.jsonl.zst"
    with open(target, "wb") as fh, zstandard.ZstdCompressor().stream_writer(fh) as writer:
        writer.write(OWN_ROLLOUT.read_bytes())
    lines = OWN_ROLLOUT.read_bytes().splitlines(keepends=True)
    offset = sum(len(line) for line in lines[:22])  # after the first assistant answer pair
    sessions, report = parse(target, start_offset=offset)
    assert sessions[0].session_id == OWN_ID
    assert user_texts(sessions[0]) == ["테스트도 돌려줘"]


def test_zstd_with_several_frames(tmp_path: Path) -> None:
    data = OWN_ROLLOUT.read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1
    compressor = zstandard.ZstdCompressor()
    target = tmp_path / "rollout-frames.jsonl.zst"
    target.write_bytes(compressor.compress(data[:cut]) + compressor.compress(data[cut:]))
    plain, _ = only(OWN_ROLLOUT)
    packed, report = only(target)
    assert [m.text for m in packed.messages] == [m.text for m in plain.messages]
    assert report.bad_lines == 0 and report.end_offset == len(data)


def test_truncated_zstd_keeps_complete_lines(tmp_path: Path) -> None:
    data = OWN_ROLLOUT.read_bytes()
    compressor = zstandard.ZstdCompressor()
    cut = data.index(b"\n", len(data) // 2) + 1
    whole_first = compressor.compress(data[:cut])
    second = compressor.compress(data[cut:])
    target = tmp_path / "rollout-cut.jsonl.zst"
    target.write_bytes(whole_first + second[: len(second) // 2])
    session, report = only(target)
    assert report.bad_lines == 1 and any("truncated" in n for n in report.notes)
    assert report.end_offset >= cut  # everything of the intact first frame was consumed
    assert session.messages and session.session_id == OWN_ID


def test_registry_routes_codex_files(tmp_path: Path) -> None:
    from wwt.parsers import parse_file, parser_for

    target = tmp_path / (OWN_ROLLOUT.name + ".zst")
    target.write_bytes(zstandard.ZstdCompressor().compress(OWN_ROLLOUT.read_bytes()))
    for path in (OWN_ROLLOUT, target, REAL / "agentlogs__crud.jsonl"):
        assert parser_for(path) is not None and parser_for(path).platform == "codex-cli"
    sessions, report = parse_file(target)
    assert report.platform == "codex-cli" and sessions[0].session_id == OWN_ID


def test_corrupt_zstd_is_counted_not_raised(tmp_path: Path) -> None:
    target = tmp_path / "rollout-bad.jsonl.zst"
    good = zstandard.ZstdCompressor().compress(OWN_ROLLOUT.read_bytes())
    target.write_bytes(good[: len(good) // 2] + b"\x00garbage" * 10)
    sessions, report = parse(target)
    assert report.bad_lines >= 1
    assert all(s.session_id == OWN_ID for s in sessions)


# ------------------------------------------------------------------------------------------ resume & damage


def test_resume_from_offset_on_appended_rollout(tmp_path: Path) -> None:
    path = tmp_path / "sessions" / "2026" / "03" / "04" / OWN_ROLLOUT.name
    path.parent.mkdir(parents=True)
    lines = OWN_ROLLOUT.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:22]))
    first, report = parse(path)
    size = path.stat().st_size
    assert report.end_offset == size
    assert user_texts(first[0]) == ["로그인 재시도 로직이 왜 두 번 실행되는지 봐줘 [Image #1]"]
    with open(path, "ab") as fh:
        fh.write(b"".join(lines[22:]))
    sessions, report = parse(path, start_offset=size)
    (tail,) = sessions
    assert tail.session_id == OWN_ID and tail.git_branch == "feature/login-retry"  # header re-read
    assert user_texts(tail) == ["테스트도 돌려줘"]
    assert [m.kind for m in tail.messages] == ["text", "tool_call", "text"]
    assert all(int(m.native_id) >= size for m in tail.messages)  # ids are stable byte offsets
    assert report.end_offset == path.stat().st_size and not report.requires_full_reparse
    # native ids agree with a full parse
    full, _ = only(path)
    assert {m.native_id for m in tail.messages} <= {m.native_id for m in full.messages}


def test_truncated_last_line_then_completed(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / f"rollout-2026-03-05T00-00-00-{OWN_ID}.jsonl",
        [
            envelope("2026-03-05T00:00:00Z", "session_meta", {"id": OWN_ID, "cwd": "/w/p"}),
            envelope("2026-03-05T00:00:01Z", "event_msg", {"type": "user_message", "message": "first"}),
        ],
    )
    good = path.stat().st_size
    tail = json.dumps(
        envelope("2026-03-05T00:00:02Z", "event_msg", {"type": "agent_message", "message": "late"})
    )
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(tail[:30])
    session, report = only(path)
    assert [m.text for m in session.messages] == ["first"]
    assert report.bad_lines == 1 and report.end_offset == good
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(tail[30:] + "\n")
    sessions, report = parse(path, start_offset=good)
    assert [m.text for m in sessions[0].messages] == ["late"]


def test_invalid_utf8_salvaged_and_bad_timestamp_none(tmp_path: Path) -> None:
    path = tmp_path / f"rollout-2026-03-05T00-00-00-{OWN_ID}.jsonl"
    path.write_bytes(
        b'{"timestamp":"2026-03-05T00:00:00Z","type":"session_meta","payload":{"id":"'
        + OWN_ID.encode()
        + b'"}}\n'
        b'{"timestamp":"yesterday","type":"event_msg","payload":{"type":"user_message","message":"bad \xff byte \xed\x95\x9c"}}\n'
    )
    session, report = only(path)
    assert report.bad_lines == 1
    assert session.messages[0].text == "bad \ufffd byte 한"
    assert session.messages[0].timestamp is None


def test_headerless_fragment_takes_id_from_file_name(tmp_path: Path) -> None:
    thread = "019c0000-aaaa-7bbb-8ccc-dddddddddddd"
    path = write_jsonl(
        tmp_path / f"rollout-2026-03-05T09-00-00-{thread}.jsonl",
        [
            envelope("2026-03-05T00:00:01Z", "turn_context", {"cwd": "/w/frag", "model": "gpt-5"}),
            envelope(
                "2026-03-05T00:00:02Z",
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "continue the migration"}],
                },
            ),
        ],
    )
    session, _ = only(path)
    assert session.session_id == thread == session_id_from_name(path)
    assert session.cwd == "/w/frag"  # from turn_context when there is no session_meta


def test_subagent_thread_links_parent(tmp_path: Path) -> None:
    parent = "019c1111-0000-7000-8000-000000000001"
    child = "019c1111-0000-7000-8000-000000000002"
    path = write_jsonl(
        tmp_path / f"rollout-2026-03-05T09-00-00-{child}.jsonl",
        [
            envelope(
                "2026-03-05T00:00:00Z",
                "session_meta",
                {
                    "id": child,
                    "cwd": "/w/p",
                    "source": {"subagent": {"thread_spawn": {"parent_thread_id": parent, "depth": 1}}},
                },
            ),
            envelope(
                "2026-03-05T00:00:01Z",
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "review the diff"}],
                },
            ),
            envelope(
                "2026-03-05T00:00:02Z",
                "response_item",
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "Looks fine."}],
                },
            ),
            # history copied from the parent thread on fork: a second session_meta does not change identity
            envelope("2026-03-05T00:00:03Z", "session_meta", {"id": parent, "cwd": "/w/p"}),
        ],
    )
    session, report = only(path)
    assert session.session_id == child and session.parent_session_id == parent
    assert all(FLAG_SUBAGENT in m.flags for m in session.messages)
    assert any("extra session_meta" in n for n in report.notes)


def test_archived_and_codex_home_roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "ch"))
    assert PARSER.default_roots() == [tmp_path / "ch" / "sessions", tmp_path / "ch" / "archived_sessions"]
    monkeypatch.delenv("CODEX_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert PARSER.default_roots()[0] == tmp_path / "h" / ".codex" / "sessions"
    archived = tmp_path / "ch" / "archived_sessions" / OWN_ROLLOUT.name
    archived.parent.mkdir(parents=True)
    shutil.copy(OWN_ROLLOUT, archived)
    assert PARSER.detect(archived, read_head(archived))


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ('{"output":"ok\\n","metadata":{"exit_code":0,"duration_seconds":0.1}}', ("ok\n", False)),
        ('{"output":"boom","metadata":{"exit_code":2}}', ("boom", True)),
        (
            "Chunk ID: 1\nProcess exited with code 127\nOutput:\nnot found",
            ("Chunk ID: 1\nProcess exited with code 127\nOutput:\nnot found", True),
        ),
        (
            [
                {"type": "input_text", "text": "a.txt"},
                {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
            ],
            ("a.txt", False),
        ),
        ({"content": "denied", "success": False}, ("denied", True)),
        ("plain text", ("plain text", False)),
    ],
)
def test_tool_output_shapes(output: object, expected: tuple[str, bool]) -> None:
    assert codex_output_text(output) == expected


def test_detect_rejects_other_agents_logs() -> None:
    gemini = (REAL_FIXTURES / "gemini-cli/VibeCodingTracker__gemini.jsonl")
    claude = (REAL_FIXTURES / "claude-code/spotter__short.jsonl")
    assert not PARSER.detect(gemini, read_head(gemini))
    assert not PARSER.detect(claude, read_head(claude))


# ------------------------------------------------------------------------------------------ never raises


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
ITEM_TYPES = st.sampled_from(
    sorted(
        {
            "message",
            "reasoning",
            "function_call",
            "function_call_output",
            "custom_tool_call",
            "custom_tool_call_output",
            "local_shell_call",
            "web_search_call",
            "agent_message",
            "user_message",
            "item_completed",
            "turn_aborted",
            "thread_name_updated",
            "nonsense",
        }
    )
)
FIELDS = st.sampled_from(
    [
        "role",
        "content",
        "summary",
        "name",
        "arguments",
        "input",
        "output",
        "call_id",
        "message",
        "item",
        "action",
        "id",
        "cwd",
        "git",
        "source",
        "thread_name",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    records=st.lists(
        st.tuples(
            st.sampled_from(
                ["session_meta", "response_item", "event_msg", "turn_context", "compacted", "other"]
            ),
            ITEM_TYPES,
            st.dictionaries(FIELDS, JSON_VALUES, max_size=4),
            JSON_VALUES,
        ),
        max_size=8,
    )
)
def test_arbitrary_shapes_never_raise(tmp_path: Path, records: list) -> None:
    path = tmp_path / f"rollout-2026-01-01T00-00-00-{OWN_ID}.jsonl"
    lines = []
    for kind, item_type, fields, timestamp in records:
        payload = {"type": item_type, **fields}
        lines.append(json.dumps({"timestamp": timestamp, "type": kind, "payload": payload}))
        lines.append(json.dumps({"type": item_type, **fields}))  # bare (legacy-shaped) item too
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    sessions, _ = parse(path)
    for session in sessions:
        assert all(isinstance(m.text, str) and m.role in ("user", "assistant") for m in session.messages)


def test_detect_tolerates_junk_first_line_and_huge_session_meta(tmp_path: Path) -> None:
    meta = envelope(
        "2026-03-05T00:00:00Z",
        "session_meta",
        {"id": OWN_ID, "cwd": "/w/p", "base_instructions": {"text": "x" * 20000}},
    )
    prompt = envelope("2026-03-05T00:00:01Z", "event_msg", {"type": "user_message", "message": "hi there"})
    big = write_jsonl(tmp_path / "exported.jsonl", [meta, prompt])  # no "rollout-" in the name
    assert len(read_head(big)) < len(json.dumps(meta))
    assert PARSER.detect(big, read_head(big))
    junk = tmp_path / "junk-first.jsonl"
    junk.write_bytes(b'{"type": "user", "mess\n' + OWN_ROLLOUT.read_bytes())
    assert PARSER.detect(junk, read_head(junk))
    session, report = only(junk)
    assert session.session_id == OWN_ID and report.bad_lines == 1


def test_zstd_without_a_decompressor_is_skipped_with_a_clear_note(tmp_path: Path, monkeypatch) -> None:
    import wwt.parsers.codex_cli as codex_cli
    from wwt.parsers import parse_file

    target = tmp_path / "rollout-2025-09-01T10-00-00-00000000-0000-4000-8000-000000000000.jsonl.zst"
    target.write_bytes(zstandard.ZstdCompressor().compress(OWN_ROLLOUT.read_bytes()))
    monkeypatch.setattr(codex_cli, "zstd_backend", lambda: None)
    sessions, report = parse_file(target)
    assert sessions == []
    assert any("whatwasthat[zstd]" in note for note in report.notes)


# ------------------------------------------------------------- TypeScript-era rollouts and untyped items
# The Codex CLI before the Rust rewrite (codex-cli/src/utils/storage/save-rollout.ts in openai/codex) saved
# each session as ONE pretty-printed JSON object, rewritten whole after every turn (2 s debounce):
# ``~/.codex/sessions/rollout-YYYY-MM-DD-<uuid>.json`` = ``{"session": {timestamp, id, instructions},
# "items": [Responses-API items]}``. ``instructions`` is the user's configured system text, not a prompt.

TS_ID = "6f1b2c3d-4e5a-4b6c-8d7e-9f0a1b2c3d4e"
TS_ROLLOUT = OWN / f"rollout-2025-04-22-{TS_ID}.json"


def test_typescript_era_json_rollout_is_read() -> None:
    from wwt.parsers import parser_for

    assert parser_for(TS_ROLLOUT) is not None and parser_for(TS_ROLLOUT).platform == "codex-cli"
    session, report = only(TS_ROLLOUT)
    assert session.session_id == TS_ID
    assert session.started_at == "2025-04-22T14:05:31.204Z"
    assert user_texts(session) == [
        "rename the Invoice.total field to amount_due across the repo",
        "also update the CSV export header",  # an item with role + content but no "type"
    ]
    assert "run the linter" not in all_text(session)  # the instructions are never the user's words
    assert counts(session) == {("user", "text"): 2, ("assistant", "thinking"): 1, ("assistant", "tool_call"): 2,
                               ("user", "tool_result"): 2, ("assistant", "text"): 2}
    results = [m for m in session.messages if m.kind == "tool_result"]
    assert [m.tool_name for m in results] == ["shell", "shell"]
    assert [FLAG_ERROR in m.flags for m in results] == [False, True]  # exit_code 1 in the output metadata
    assert results[0].text.startswith("billing/invoice.py:12:")
    assert report.bad_lines == 0


def test_typescript_era_rollout_is_found_in_a_folder_walk(tmp_path: Path) -> None:
    from wwt.parsers import discover

    sessions_dir = tmp_path / ".codex" / "sessions"
    sessions_dir.mkdir(parents=True)
    shutil.copy(TS_ROLLOUT, sessions_dir / TS_ROLLOUT.name)
    (sessions_dir / "notes.json").write_text('{"session": {"id": "x"}, "items": []}', encoding="utf-8")
    found = [(p.name, parser.platform) for p, parser in discover([tmp_path])]
    assert found == [(TS_ROLLOUT.name, "codex-cli")]


def test_broken_typescript_era_rollout_is_counted_not_fatal(tmp_path: Path) -> None:
    from wwt.parsers import parse_file

    path = tmp_path / TS_ROLLOUT.name
    path.write_bytes(TS_ROLLOUT.read_bytes()[:-300])  # cut while being rewritten
    sessions, report = parse_file(path)
    assert sessions == [] and report.bad_lines == 1 and report.platform == "codex-cli"
    doc = json.loads(TS_ROLLOUT.read_text(encoding="utf-8"))
    doc["items"].insert(1, "not an item")
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    (session,), report = parse_file(path)
    assert report.bad_lines == 1 and len(user_texts(session)) == 2


def test_response_item_without_type_keeps_its_text(tmp_path: Path) -> None:
    """The Responses API accepts an input message as just ``{role, content}`` (``type`` optional): such an
    item in a rollout is a message like any other, in the envelope and in a pre-envelope file."""
    path = write_jsonl(tmp_path / f"rollout-2026-03-05T08-00-00-{OWN_ID}.jsonl", [
        envelope("2026-03-05T08:00:00.000Z", "session_meta", {"id": OWN_ID, "cwd": "/w/app"}),
        envelope("2026-03-05T08:00:01.000Z", "response_item",
                 {"role": "user", "content": [{"type": "input_text", "text": "why is the cache cold after deploy"}]}),
        envelope("2026-03-05T08:00:05.000Z", "response_item",
                 {"role": "assistant", "content": [{"type": "output_text", "text": "The warmup job runs before the new pods are ready."}]}),
    ])
    session, report = only(path)
    assert [(m.role, m.text) for m in session.messages] == [
        ("user", "why is the cache cold after deploy"),
        ("assistant", "The warmup job runs before the new pods are ready."),
    ]
    assert report.unknown_records == 0

    legacy = write_jsonl(tmp_path / f"rollout-2025-06-01T08-00-00-{OWN_ID}.jsonl", [
        {"id": OWN_ID, "timestamp": "2025-06-01T08:00:00.000Z", "instructions": None},
        {"record_type": "state"},
        {"role": "user", "content": [{"type": "input_text", "text": "bump the base image"}]},
    ])
    session, report = only(legacy)
    assert user_texts(session) == ["bump the base image"] and report.unknown_records == 0


def test_a_patch_codex_could_not_apply_is_a_failed_result():
    """Codex answers a patch it cannot apply with ``apply_patch verification failed: …`` (a genuine 0.153 rollout,
    Nandani2024-tech/Btw_Codex ``1/full.jsonl``, 52e03ba0; other public readers treat it as a failure too)."""
    from wwt.parsers.codex_cli import codex_output_text

    assert codex_output_text("apply_patch verification failed: invalid patch: multiple operations target "
                             "/srv/app/cache.py")[1] is True
    assert codex_output_text("Success. Updated the following files:\nM /srv/app/cache.py\n")[1] is False
    assert codex_output_text("the notes say apply_patch verification failed once")[1] is False  # a mention
