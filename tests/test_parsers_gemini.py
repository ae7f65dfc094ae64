"""Gemini CLI parser: every real fixture with expectations read off the files by hand, plus the layouts and
edge cases the real set lacks (Korean + $rewindTo, .project_root, hashed-folder copies, resume, bad bytes)."""

from __future__ import annotations

import hashlib
import json
import shutil
import unicodedata
from functools import partial
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from parser_helpers import all_text, counts, only_session, run_parser, write_jsonl

from wwt.models import FLAG_ERROR, FLAG_SUBAGENT
from wwt.parsers.common import NAMES_CHARS, read_head
from wwt.parsers.gemini_cli import GeminiCliParser, gemini_home, project_hash, superseded_by

REAL = (REAL_FIXTURES / "gemini-cli")
OWN = Path(__file__).parent / "fixtures" / "gemini"
KOREAN = OWN / "session-2026-05-02T09-15-7c1e2a9b.jsonl"
PARSER = GeminiCliParser()
parse = partial(run_parser, PARSER)
only = partial(only_session, PARSER)




# ------------------------------------------------------------------------------------------ real files


def test_real_fixture_set_is_fully_covered() -> None:
    assert sorted(p.name for p in REAL.iterdir()) == sorted(REAL_EXPECTATIONS)


REAL_EXPECTATIONS = {
    "VibeCodingTracker@3d28cf6__test_conversation_gemini.json": "legacy_string_content",
    "VibeCodingTracker@000760c__test_conversation_gemini.json": "legacy_parts",
    "VibeCodingTracker__gemini.jsonl": "jsonl_real",
    "agent-sessions__jsonl_v040.jsonl": "jsonl_v040",
    "agent-sessions__large.json": "large",
    "agent-sessions__small.json": "small",
    "agent-sessions__schema_drift.json": "checkpoint",
}


def test_legacy_json_with_string_content_and_thoughts() -> None:
    path = REAL / "VibeCodingTracker@3d28cf6__test_conversation_gemini.json"
    assert PARSER.detect(path, read_head(path))
    session, report = only(path)
    assert session.session_id == "2d9ea14f-1e4e-44f6-8bf5-7a7819cb1cd9"
    assert session.platform == "gemini-cli"
    # 14 records: one user prompt, 13 gemini answers each with text and thoughts, no tool calls
    assert counts(session) == {("user", "text"): 1, ("assistant", "text"): 13, ("assistant", "thinking"): 13}
    first = session.messages[0]
    assert first.native_id == "16d30d0c-fc9c-4378-9bcf-ed3c18a9ea1d"
    assert first.text.startswith('## 任務：將專案描述中的 "Vibe Coding Tracker" 改為 "Vibe Code Tracker"')
    assert session.messages[1].kind == "thinking"  # thoughts precede the answer text
    assert session.messages[1].text.startswith("Inspecting the Project: I'm currently focused")
    assert session.started_at == "2025-10-11T13:00:34.434Z"
    assert session.ended_at == "2025-10-11T13:02:03.227Z"
    assert session.project is None and session.git_branch is None  # loose file: no project folder
    assert report.bad_lines == 0 and report.skipped_messages == 0 and report.unknown_records == 0


def test_legacy_json_with_parts_and_tool_calls() -> None:
    session, report = only(REAL / "VibeCodingTracker@000760c__test_conversation_gemini.json")
    assert session.session_id == "8a20078e-2d5e-4f81-a640-9b879bbb7e6d"
    # user parts prompt; gemini #2: 3 read_file; gemini #3: 36 thoughts (one thinking message) + 4 write_file;
    # gemini #4: final text with 2 thoughts
    assert counts(session) == {
        ("user", "text"): 1,
        ("assistant", "thinking"): 3,
        ("assistant", "tool_call"): 7,
        ("user", "tool_result"): 7,
        ("assistant", "text"): 1,
    }
    assert session.messages[0].text.startswith("請幫我依照專案實際狀況更新 README.md README.zh-CN.md")
    calls = [m for m in session.messages if m.kind == "tool_call"]
    assert [m.tool_name for m in calls] == ["read_file"] * 3 + ["write_file"] * 4
    assert calls[0].text == "read_file: README.md"
    results = [m for m in session.messages if m.kind == "tool_result"]
    assert all(len(m.text) <= 2000 + 500 + 100 + NAMES_CHARS for m in results)  # bounded
    assert any("[…" in m.text and "chars omitted" in m.text for m in results)
    assert not any(FLAG_ERROR in m.flags for m in results)
    assert session.messages[-1].text.startswith("已經幫你整理好囉！")
    assert report.bad_lines == 0


def test_jsonl_recording_last_write_wins_and_noise_excluded() -> None:
    path = REAL / "VibeCodingTracker__gemini.jsonl"
    assert PARSER.detect(path, read_head(path))
    session, report = only(path)
    assert session.session_id == "0ab84937-9fe7-4284-986a-33c832af0b6a"
    assert counts(session) == {
        ("user", "text"): 2,  # "/init" (displayContent) and the zh-Hant request
        ("assistant", "thinking"): 5,
        ("assistant", "tool_call"): 12,  # 5 + 3 + 1 + 1 + 2 from the final version of each message
        ("user", "tool_result"): 12,
        ("assistant", "text"): 2,
    }
    assert report.skipped_messages == 3  # two info notices + "System: Please continue."
    assert report.unknown_records == 0 and report.bad_lines == 0
    users = [m.text for m in session.messages if m.role == "user" and m.kind == "text"]
    assert users == ["/init", "幫我做一個小修改 請幫我將上面確保執行時要透過 uv run 來執行 避免環境有問題"]
    text = all_text(session)
    assert "You are an AI agent that brings the power of Gemini" not in text  # expanded /init prompt
    assert "System: Please continue." not in text
    assert "Empty GEMINI.md created" not in text and "Request cancelled." not in text
    # ids written twice appear once, with the tool calls of their last version
    ids = [m.native_id for m in session.messages]
    assert len(ids) == len(set(ids))
    assert sum(1 for i in ids if i.startswith("52e62e67-5d6b-4a2c-b12d-11b87fe3e4a4#call:")) == 5
    # the continuation prompt's functionResponse duplicates the update_topic result already kept
    assert sum(1 for i in ids if i.endswith("#result:jyi4d5mc")) == 1
    assert session.started_at == "2026-04-23T12:52:52.759Z"
    assert session.ended_at == "2026-04-23T12:58:35.591Z"  # last $set lastUpdated


def test_jsonl_v040_minimal() -> None:
    session, report = only(REAL / "agent-sessions__jsonl_v040.jsonl")
    assert session.session_id == "gemini_stage0_jsonl"
    assert [(m.role, m.kind, m.text) for m in session.messages] == [
        ("user", "text", "Say hello and list files."),
        ("assistant", "tool_call", "run_shell_command: ls -F"),
        ("user", "tool_result", "Output: AgentSessions/\nREADME.md\nProcess Group PGID: 12345"),
        ("assistant", "text", "Hello! I listed the files."),
    ]
    assert session.messages[1].tool_name == "run_shell_command"
    assert session.messages[1].timestamp == "2026-04-29T21:39:35.364Z"
    assert session.ended_at == "2026-04-29T21:39:33.156Z"
    assert report.end_offset == (REAL / "agent-sessions__jsonl_v040.jsonl").stat().st_size


def test_legacy_json_large_with_model_type_info_and_failed_command() -> None:
    session, report = only(REAL / "agent-sessions__large.json")
    assert session.session_id == "session-2025-12-16T23-47-b4f17607"
    assert counts(session) == {
        ("user", "text"): 2,
        ("assistant", "thinking"): 1,
        ("assistant", "tool_call"): 2,
        ("user", "tool_result"): 2,
        ("assistant", "text"): 2,  # the non-standard type:"model" messages with parts
    }
    assert report.skipped_messages == 1  # info "Request cancelled."
    results = [m for m in session.messages if m.kind == "tool_result"]
    assert [FLAG_ERROR in m.flags for m in results] == [False, True]  # "Exit Code: 1" on the ls
    assert [m.text for m in session.messages if m.kind == "text"] == [
        "Run a command",
        "Captured multiline output.",
        "Step 1",
        "Ok",
    ]


def test_legacy_json_small() -> None:
    session, _ = only(REAL / "agent-sessions__small.json")
    assert session.session_id == "session-2026-01-16T18-34-3739ef95"
    assert [(m.role, m.kind, m.text) for m in session.messages] == [
        ("user", "text", "Hello"),
        ("assistant", "thinking", "Short reasoning placeholder."),
        ("assistant", "text", "Hi!"),
    ]


def test_checkpoint_shaped_file_is_not_a_session() -> None:
    path = REAL / "agent-sessions__schema_drift.json"
    assert not PARSER.detect(path, read_head(path))
    sessions, report = parse(path)
    assert sessions == []
    assert any("not a Gemini chat session" in n for n in report.notes)


# ------------------------------------------------------------------------------- own fixtures & layouts


def test_korean_rewind_set_and_nfc(tmp_path: Path) -> None:
    session, report = only(KOREAN)
    assert session.session_id == "7c1e2a9b-5d2f-4e0a-9b3c-1f2e3d4c5b6a"
    users = [m.text for m in session.messages if m.role == "user" and m.kind == "text"]
    # u2 and g2 were removed by {"$rewindTo": "u2"}; u3 was written in NFD and comes back NFC
    assert users == [
        "로그인 페이지에서 세션 토큰이 만료되면 어떻게 처리해야 해?",
        "refreshToken 함수에 재시도 로직을 추가해줘",
    ]
    assert all(m.text == unicodedata.normalize("NFC", m.text) for m in session.messages)
    assert "되감기로" not in all_text(session) and "처음부터 다시" not in all_text(session)
    assert session.title == "세션 토큰 만료 처리와 재시도 로직"  # from $set.summary
    failed = [m for m in session.messages if FLAG_ERROR in m.flags]
    assert [(m.tool_name, m.text) for m in failed] == [
        ("replace", "Failed to edit, could not find the string to replace.")
    ]
    assert report.skipped_messages == 1 and not report.requires_full_reparse


def make_project(home: Path, slug: str, root: str, chat: Path) -> Path:
    folder = home / ".gemini" / "tmp" / slug
    (folder / "chats").mkdir(parents=True)
    (folder / ".project_root").write_text(root + "\n", encoding="utf-8")
    return Path(shutil.copy(chat, folder / "chats" / chat.name))


def test_project_from_project_root_marker(tmp_path: Path) -> None:
    chat = make_project(tmp_path, "hangul-app", "/home/dev/code/hangul-app", KOREAN)
    session, _ = only(chat)
    assert session.project == "hangul-app"
    assert session.project_path == "/home/dev/code/hangul-app"
    assert session.cwd == "/home/dev/code/hangul-app"


def test_project_from_projects_json_when_marker_missing(tmp_path: Path) -> None:
    folder = tmp_path / ".gemini" / "tmp" / "hangul-app-1"
    chat = folder / "chats" / KOREAN.name
    chat.parent.mkdir(parents=True)
    shutil.copy(KOREAN, chat)
    (tmp_path / ".gemini" / "projects.json").write_text(
        json.dumps({"projects": {"/srv/other/hangul-app": "hangul-app-1"}}), encoding="utf-8"
    )
    session, _ = only(chat)
    assert session.project_path == "/srv/other/hangul-app"


def test_legacy_hashed_folder_copy_is_deduplicated(tmp_path: Path) -> None:
    root = "/home/dev/code/hangul-app"
    slug_copy = make_project(tmp_path, "hangul-app", root, KOREAN)
    hashed = tmp_path / ".gemini" / "tmp" / project_hash(root) / "chats" / KOREAN.name
    hashed.parent.mkdir(parents=True)
    shutil.copy(KOREAN, hashed)
    assert project_hash(root) == hashlib.sha256(root.encode()).hexdigest()
    assert superseded_by(hashed) == slug_copy
    sessions, report = parse(hashed)
    assert sessions == [] and any("duplicate of" in n for n in report.notes)
    assert len(parse(slug_copy)[0]) == 1
    # without the slug copy, the hashed folder is parsed and its project found via the sibling's marker
    slug_copy.unlink()
    (tmp_path / ".gemini" / "tmp" / "hangul-app" / "chats").rmdir()
    session, _ = only(hashed)
    assert session.project == "hangul-app"


def test_legacy_json_superseded_by_migrated_jsonl(tmp_path: Path) -> None:
    chats = tmp_path / "chats"
    chats.mkdir()
    legacy = chats / "session-2026-01-16T18-34-3739ef95.json"
    shutil.copy(REAL / "agent-sessions__small.json", legacy)
    assert len(parse(legacy)[0]) == 1
    write_jsonl(legacy.with_name(legacy.name + "l"), [{"sessionId": "session-2026-01-16T18-34-3739ef95"}])
    sessions, report = parse(legacy)
    assert sessions == [] and report.notes


def test_subagent_file_links_parent(tmp_path: Path) -> None:
    parent_id = "0ab84937-9fe7-4284-986a-33c832af0b6a"
    sub = write_jsonl(
        tmp_path / "tmp" / "proj" / "chats" / parent_id / "sub-1.jsonl",
        [
            {
                "sessionId": "sub-1",
                "projectHash": "x",
                "startTime": "2026-05-01T00:00:00Z",
                "kind": "subagent",
            },
            {
                "id": "s1",
                "timestamp": "2026-05-01T00:00:01Z",
                "type": "user",
                "content": "find the config loader",
            },
            {
                "id": "s2",
                "timestamp": "2026-05-01T00:00:02Z",
                "type": "gemini",
                "content": "It is in config.py",
            },
        ],
    )
    session, _ = only(sub)
    assert session.parent_session_id == parent_id
    assert all(FLAG_SUBAGENT in m.flags for m in session.messages)


def test_resume_from_offset_returns_only_new_messages(tmp_path: Path) -> None:
    path = tmp_path / "session-2026-05-03T10-00-aaaabbbb.jsonl"
    head = [
        {"sessionId": "aaaabbbb-1111", "projectHash": "h", "startTime": "2026-05-03T10:00:00Z"},
        {
            "id": "a",
            "timestamp": "2026-05-03T10:00:01Z",
            "type": "user",
            "content": [{"text": "첫 번째 질문"}],
        },
        {"id": "b", "timestamp": "2026-05-03T10:00:02Z", "type": "gemini", "content": "첫 번째 답"},
    ]
    write_jsonl(path, head)
    first, report = parse(path)
    size = path.stat().st_size
    assert report.end_offset == size and len(first[0].messages) == 2
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"$set": {"lastUpdated": "2026-05-03T10:01:00Z"}}) + "\n")
        fh.write(
            json.dumps(
                {"id": "c", "timestamp": "2026-05-03T10:01:00Z", "type": "user", "content": "두 번째 질문"},
                ensure_ascii=False,
            )
            + "\n"
        )
        fh.write(
            json.dumps(
                {"id": "d", "timestamp": "2026-05-03T10:01:05Z", "type": "gemini", "content": "두 번째 답"},
                ensure_ascii=False,
            )
            + "\n"
        )
    sessions, report = parse(path, start_offset=size)
    assert len(sessions) == 1
    assert sessions[0].session_id == "aaaabbbb-1111"  # identity read from the first line
    assert [m.native_id for m in sessions[0].messages] == ["c", "d"]
    assert report.end_offset == path.stat().st_size and not report.requires_full_reparse
    # a rewind appended later rewrites history: the consumer must reparse the whole file
    size = path.stat().st_size
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"$rewindTo": "c"}) + "\n")
    sessions, report = parse(path, start_offset=size)
    assert report.requires_full_reparse and sessions == []
    full, _ = parse(path)
    assert [m.native_id for m in full[0].messages] == ["a", "b"]


def test_resume_after_a_tool_call_drops_its_result_repeated_in_the_next_prompt(tmp_path: Path) -> None:
    """The continuation prompt repeats the call's result (same call id, later message id): a full parse keeps
    it once, from the call; a parse resumed between the two must not store it a second time."""
    call = {
        "id": "g1", "timestamp": "2026-05-03T10:00:02Z", "type": "gemini", "content": "",
        "toolCalls": [{"id": "call-7", "name": "update_topic", "args": {"topic": "x"}, "status": "success",
                       "result": [{"functionResponse": {"id": "call-7", "name": "update_topic",
                                                        "response": {"output": "Strategic Intent: done"}}}]}],
    }
    path = write_jsonl(tmp_path / "session-2026-05-03T10-00-cccc.jsonl", [
        {"sessionId": "cccc-1", "projectHash": "h", "startTime": "2026-05-03T10:00:00Z"},
        {"id": "u1", "timestamp": "2026-05-03T10:00:01Z", "type": "user", "content": "정리해 줘"},
        call,
    ])
    offset = path.stat().st_size
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"$set": {"lastUpdated": "2026-05-03T10:00:03Z"}}) + "\n")
        fh.write(json.dumps({"id": "u2", "timestamp": "2026-05-03T10:00:04Z", "type": "user",
                             "content": [{"text": "System: Please continue."}],
                             "displayContent": [{"functionResponse": {
                                 "id": "call-7", "name": "update_topic",
                                 "response": {"output": "Strategic Intent: done"}}}]}) + "\n")
        fh.write(json.dumps({"id": "g2", "timestamp": "2026-05-03T10:00:05Z", "type": "gemini",
                             "content": "끝났습니다"}, ensure_ascii=False) + "\n")
    (full,), _ = parse(path)
    assert [m.native_id for m in full.messages if m.kind == "tool_result"] == ["g1#result:call-7"]
    (tail,), report = parse(path, start_offset=offset)
    assert [m.native_id for m in tail.messages] == ["g2"]
    assert report.end_offset == path.stat().st_size and not report.requires_full_reparse


def test_truncated_last_line_is_reread_on_resume(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [
            {"sessionId": "trunc-1", "startTime": "2026-05-03T10:00:00Z"},
            {"id": "a", "timestamp": "2026-05-03T10:00:01Z", "type": "user", "content": "complete line"},
        ],
    )
    good = path.stat().st_size
    partial = json.dumps({"id": "b", "type": "gemini", "content": "half written answer"})
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(partial[:25])
    sessions, report = parse(path)
    assert [m.text for m in sessions[0].messages] == ["complete line"]
    assert report.bad_lines == 1 and report.end_offset == good
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(partial[25:] + "\n")
    sessions, report = parse(path, start_offset=good)
    assert [m.text for m in sessions[0].messages] == ["half written answer"]


def test_invalid_utf8_line_is_salvaged(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        b'{"sessionId":"utf-1","startTime":"2026-05-03T10:00:00Z"}\n'
        b'{"id":"a","timestamp":"2026-05-03T10:00:01Z","type":"user","content":"caf\xff \xed\x95\x9c\xea\xb8\x80"}\n'
        b'{"id":"b","timestamp":"not a time","type":"gemini","content":"ok"}\n'
    )
    session, report = only(path)
    assert report.bad_lines == 1
    assert session.messages[0].text == "caf\ufffd 한글"
    assert session.messages[1].timestamp is None  # junk timestamp → None, no crash


@pytest.mark.parametrize(
    ("name", "content"),
    [
        (
            "logs.json",
            [{"sessionId": "x", "messageId": 0, "type": "user", "message": "hi", "timestamp": "t"}],
        ),
        ("checkpoint-mytag.json", {"history": [{"role": "user", "parts": [{"text": "hi"}]}]}),
        ("random.json", {"foo": 1}),
    ],
)
def test_json_files_that_are_not_sessions(tmp_path: Path, name: str, content: object) -> None:
    path = tmp_path / name
    path.write_text(json.dumps(content), encoding="utf-8")
    assert not PARSER.detect(path, read_head(path))
    sessions, report = parse(path)
    assert sessions == [] and report.notes


def test_broken_json_file_counts_and_yields_nothing(tmp_path: Path) -> None:
    path = tmp_path / "session-x.json"
    path.write_text('{"sessionId": "x", "messages": [', encoding="utf-8")
    sessions, report = parse(path)
    assert sessions == [] and report.bad_lines == 1


def test_legacy_json_cut_mid_write_keeps_the_messages_before_the_cut(tmp_path: Path) -> None:
    """The legacy ``.json`` is rewritten whole on every message (not atomically): a crash mid-write leaves a
    cut file, which must lose only what the cut destroyed."""
    text = (REAL / "VibeCodingTracker@3d28cf6__test_conversation_gemini.json").read_text(encoding="utf-8")
    path = tmp_path / "session-2025-10-11T13-00-2d9ea14f.json"
    path.write_text(text[: text.rindex('"timestamp"')], encoding="utf-8")  # inside the last gemini answer
    session, report = only(path)
    assert session.session_id == "2d9ea14f-1e4e-44f6-8bf5-7a7819cb1cd9"
    assert counts(session) == {("user", "text"): 1, ("assistant", "text"): 12, ("assistant", "thinking"): 12}
    assert report.bad_lines == 1
    path.write_text(text[: text.index('"messages"')], encoding="utf-8")  # cut before the list: nothing to keep
    sessions, report = parse(path)
    assert sessions == [] and report.bad_lines == 1


def test_legacy_json_with_one_broken_message_keeps_the_others(tmp_path: Path) -> None:
    text = (REAL / "VibeCodingTracker@3d28cf6__test_conversation_gemini.json").read_text(encoding="utf-8")
    path = tmp_path / "session-2025-10-11T13-00-2d9ea14f.json"
    path.write_text(text.replace('"type": "gemini",', '"type": "gemini",,', 1), encoding="utf-8")
    session, report = only(path)
    assert counts(session) == {("user", "text"): 1, ("assistant", "text"): 12, ("assistant", "thinking"): 12}
    assert report.bad_lines == 1 and session.ended_at == "2025-10-11T13:02:03.227Z"


def test_default_roots_honour_gemini_cli_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert PARSER.default_roots() == [tmp_path / "home" / ".gemini" / "tmp"]
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "alt"))
    assert gemini_home() == tmp_path / "alt" / ".gemini"
    assert PARSER.default_roots() == [tmp_path / "alt" / ".gemini" / "tmp"]


def test_legacy_json_resume_returns_whole_conversation(tmp_path: Path) -> None:
    path = REAL / "agent-sessions__small.json"
    sessions, report = parse(path, start_offset=100)
    assert len(sessions[0].messages) == 3  # rewritten-whole format: always complete
    assert report.requires_full_reparse and report.end_offset == path.stat().st_size


def test_registry_routes_gemini_files(tmp_path: Path) -> None:
    from wwt.parsers import parse_file, parser_for

    for path in (KOREAN, REAL / "VibeCodingTracker__gemini.jsonl", REAL / "agent-sessions__large.json"):
        assert parser_for(path) is not None and parser_for(path).platform == "gemini-cli"
    sessions, report = parse_file(KOREAN)
    assert report.platform == "gemini-cli" and sessions[0].session_id.startswith("7c1e2a9b")


def test_detect_rejects_other_agents_logs() -> None:
    codex = (REAL_FIXTURES / "codex-cli/agentlogs__crud.jsonl")
    claude = (REAL_FIXTURES / "claude-code/spotter__short.jsonl")
    assert not PARSER.detect(codex, read_head(codex))
    assert not PARSER.detect(claude, read_head(claude))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
FIELDS = st.sampled_from(
    [
        "content",
        "displayContent",
        "thoughts",
        "toolCalls",
        "parts",
        "timestamp",
        "summary",
        "messages",
        "sessionId",
        "kind",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    records=st.lists(
        st.tuples(
            st.sampled_from(["user", "gemini", "model", "info", "other"]),
            st.dictionaries(FIELDS, JSON_VALUES, max_size=4),
            st.sampled_from(["msg", "set", "rewind"]),
        ),
        max_size=8,
    )
)
def test_arbitrary_shapes_never_raise(tmp_path: Path, records: list) -> None:
    lines = [{"sessionId": "fuzz", "startTime": "2026-01-01T00:00:00Z"}]
    for index, (rtype, fields, shape) in enumerate(records):
        if shape == "set":
            lines.append({"$set": fields})
        elif shape == "rewind":
            lines.append({"$rewindTo": f"m{index - 1}"})
        else:
            lines.append({"id": f"m{index}", "type": rtype, **fields})
    jsonl = write_jsonl(tmp_path / "fuzz.jsonl", lines)
    legacy = tmp_path / "fuzz-legacy.json"
    legacy.write_text(json.dumps({"sessionId": "fuzz", "messages": lines[1:]}), encoding="utf-8")
    for path in (jsonl, legacy):
        sessions, _ = parse(path)
        for session in sessions:
            assert all(isinstance(m.text, str) for m in session.messages)


def test_resume_mid_file_reemits_updated_message_with_same_ids() -> None:
    """A message re-appended after the offset (tool calls arriving later) comes back whole under the same
    native ids, so a consumer that upserts by native id ends with the last version."""
    path = REAL / "VibeCodingTracker__gemini.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    offset = sum(len(line) for line in lines[:7])  # after the first write of 52e62e67 and its $set
    (tail,), report = parse(path, start_offset=offset)
    (full,), _ = parse(path)
    assert tail.session_id == full.session_id
    tail_ids = [m.native_id for m in tail.messages]
    assert tail_ids[0] == "52e62e67-5d6b-4a2c-b12d-11b87fe3e4a4#thoughts"
    assert set(tail_ids) <= {m.native_id for m in full.messages}
    assert tail_ids == [m.native_id for m in full.messages][len(full.messages) - len(tail_ids) :]
    assert report.end_offset == path.stat().st_size and not report.requires_full_reparse


def test_detect_tolerates_junk_first_line(tmp_path: Path) -> None:
    path = tmp_path / KOREAN.name
    path.write_bytes(b'{"id": "half\n' + KOREAN.read_bytes())
    assert PARSER.detect(path, read_head(path))
    session, report = only(path)
    assert session.session_id == "7c1e2a9b-5d2f-4e0a-9b3c-1f2e3d4c5b6a" and report.bad_lines == 1
    assert len(session.messages) == len(only(KOREAN)[0].messages)


def test_a_long_tool_result_keeps_the_code_names_of_its_cut_middle() -> None:
    """The 9.7 kB read of src/discordbot/cli.py is cut to head + tail; a method called only in its middle
    (``self.wait_until_ready``) must stay findable, a plain word of the middle must not be listed."""
    session, _ = only(REAL / "VibeCodingTracker__gemini.jsonl")
    messages = session.messages
    (read,) = [r for c, r in zip(messages, messages[1:], strict=False)
               if c.kind == "tool_call" and c.text == "read_file: src/discordbot/cli.py"]
    head, rest = read.text.split("\n[…", 1)
    marker = rest.split("\n", 1)[0]
    assert "wait_until_ready" not in head + rest.split("\n", 1)[1] and "self.wait_until_ready" in marker.split()
    assert marker.startswith(" 5746 chars omitted; names: ") and " minutes " not in marker
    assert "oad_cogs" not in marker.split()  # "load_cogs" cut in two by the head is not a name
    assert len(marker) <= NAMES_CHARS + 60
