"""Cursor parser: a CLI agent transcript (role/message lines, no times) and editor databases built from SQL
(global cursorDiskKV + a workspace database naming the chat's folder), written after the shapes documented by
readers of Cursor's storage (docs/formats-notes.md); expectations by hand."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from functools import partial
from pathlib import Path

from parser_helpers import all_text, counts, only_session, run_parser, user_texts

from wwt.models import FLAG_ERROR
from wwt.parsers import discover, parser_for
from wwt.parsers.common import read_head
from wwt.parsers.cursor import CursorParser

OWN = Path(__file__).parent / "fixtures" / "cursor"
TRANSCRIPT = (OWN / "home" / ".cursor" / "projects" / "home-ana-code-orbit" / "agent-transcripts"
              / "0c9e5a77-2b1d-4f3e-8a6c-7d5e4f3a2b1c.jsonl")
GLOBAL = OWN / "User" / "globalStorage" / "state.vscdb"
WORKSPACE = OWN / "User" / "workspaceStorage" / "5d41402abc4b2a76b9719d911017c592" / "state.vscdb"
CHAT = "7e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b"
OLD_CHAT = "1a2b3c4d-0000-4000-8000-00000000abcd"
PARSER = CursorParser()
parse = partial(run_parser, PARSER)
only = partial(only_session, PARSER)


def _dump(path: Path) -> list[str]:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def test_database_fixtures_are_their_sql_scripts(tmp_path):
    for sql, db in ((OWN / "User" / "build.sql", GLOBAL), (OWN / "User" / "workspace.sql", WORKSPACE)):
        built = tmp_path / (sql.stem + ".db")
        conn = sqlite3.connect(built)
        conn.executescript(sql.read_text())
        conn.commit()
        conn.close()
        assert _dump(built) == _dump(db)


def test_transcript_takes_the_file_times_and_the_typed_query():
    os.utime(TRANSCRIPT, (1767261600, 1767261600))  # 2026-01-01T10:00:00Z
    (session,), report = parse(TRANSCRIPT)
    assert session.session_id == "0c9e5a77-2b1d-4f3e-8a6c-7d5e4f3a2b1c" and session.platform == "cursor"
    assert session.project == "orbit" and session.ended_at == "2026-01-01T10:00:00Z"
    assert counts(session) == {("user", "text"): 2, ("assistant", "text"): 2}
    assert user_texts(session) == [
        "the orbit daemon leaks a file descriptor per reconnect, find where the socket is not closed",
        "add a regression test that counts open fds",
    ]
    assert "OS Version" not in all_text(session)  # <user_info> is context Cursor adds
    assert all(m.timestamp is None for m in session.messages)
    assert report.bad_lines == 1


def test_transcript_resume_reads_appended_lines_only(tmp_path):
    folder = tmp_path / "projects" / "p" / "agent-transcripts"
    folder.mkdir(parents=True)
    path = folder / TRANSCRIPT.name
    lines = TRANSCRIPT.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:2]))
    (first,), report = parse(path)
    with open(path, "ab") as fh:
        fh.write(b"".join(lines[2:]))
    (more,), _ = parse(path, report.end_offset)
    assert user_texts(more) == ["add a regression test that counts open fds"]
    assert not {m.native_id for m in first.messages} & {m.native_id for m in more.messages}


def test_editor_chats_from_the_global_database():
    sessions, report = parse(GLOBAL)
    by_id = {s.session_id: s for s in sessions}
    assert set(by_id) == {CHAT, OLD_CHAT}  # the empty chat gives no session
    chat = by_id[CHAT]
    assert chat.title == "Retry budget for flaky uploads"
    assert chat.project == "orbit" and chat.cwd == "/home/ana/code/orbit"  # from the workspace database
    assert chat.started_at == "2026-01-07T10:00:00Z" and chat.ended_at == "2026-01-07T10:05:00Z"
    assert counts(chat) == {("user", "text"): 1, ("assistant", "thinking"): 1, ("assistant", "tool_call"): 2,
                            ("user", "tool_result"): 2, ("assistant", "text"): 1}
    assert user_texts(chat) == ["uploads to the orbit bucket give up after one 503; give them a retry budget with jitter"]
    assert chat.messages[0].timestamp == "2026-01-07T10:00:05Z"
    calls = [m for m in chat.messages if m.kind == "tool_call"]
    assert calls[0].text == "read_file: {\"target_file\":\"orbit/upload.py\"}"
    assert calls[1].text == "run_terminal_cmd: pytest -q tests/test_upload.py"
    results = [m for m in chat.messages if m.kind == "tool_result"]
    assert FLAG_ERROR not in results[0].flags and FLAG_ERROR in results[1].flags
    assert report.bad_lines == 1  # bubble b-005 is not JSON (b-missing is simply absent)
    old = by_id[OLD_CHAT]
    assert old.title is None and old.project is None
    assert counts(old) == {("user", "text"): 1, ("assistant", "text"): 1}


def test_the_editor_database_is_never_changed(tmp_path):
    user = tmp_path / "Cursor" / "User"
    shutil.copytree(OWN / "User", user)
    db = user / "globalStorage" / "state.vscdb"
    before = _dump(db)
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("DELETE FROM cursorDiskKV WHERE key LIKE 'composerData:%'")
    sessions, _ = parse(db)
    assert len(sessions) == 2  # the editor's uncommitted delete is not seen, and did not block us
    writer.execute("ROLLBACK")
    writer.execute("PRAGMA journal_mode=DELETE")
    writer.close()
    assert _dump(db) == before  # the content is the editor's alone (its journal switches touch the header)


def test_detection_and_discovery(tmp_path, monkeypatch):
    assert PARSER.detect(TRANSCRIPT, read_head(TRANSCRIPT)) and parser_for(TRANSCRIPT).platform == "cursor"
    assert PARSER.detect(GLOBAL, read_head(GLOBAL)) and parser_for(GLOBAL).platform == "cursor"
    assert parser_for(WORKSPACE) is None  # a workspace database lists chats; the global one holds them
    vscode = tmp_path / "Code" / "User" / "globalStorage"
    vscode.mkdir(parents=True)
    shutil.copy(GLOBAL, vscode / "state.vscdb")
    assert parser_for(vscode / "state.vscdb") is None  # VS Code's own database is not Cursor's
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    shutil.copytree(OWN / "home", tmp_path / "home")
    shutil.copytree(OWN / "User", tmp_path / "config" / "Cursor" / "User")
    found = sorted((p.name, x.platform) for p, x in discover() if x.platform == "cursor")
    assert found == [(TRANSCRIPT.name, "cursor"), ("state.vscdb", "cursor")]


# Shapes other readers meet in Cursor CLI transcripts, re-created in our words after jazzyalex/agent-sessions
# Resources/Fixtures/stage0/agents/cursor/{small,schema_drift}.jsonl and subagent/subagents/child.jsonl
# (commit 651e854f4dbfaaa1161ffc9015045921ed30cf12) and its CursorSessionParser tests (a subagent lives in
# agent-transcripts/<parent uuid>/subagents/<uuid>.jsonl).
COPIED = OWN / "copied" / "orbit-fd-leak.jsonl"
NESTED = (OWN / "nested" / ".cursor" / "projects" / "home-ana-code-orbit" / "agent-transcripts"
          / "3f1c2b4a-5d6e-4f70-8a91-b2c3d4e5f607")


def test_a_transcript_copied_out_of_agent_transcripts_is_still_cursors():
    assert parser_for(COPIED).platform == "cursor"
    (session,), report = parse(COPIED)
    assert counts(session) == {("user", "text"): 1, ("assistant", "thinking"): 1, ("assistant", "text"): 2,
                               ("assistant", "tool_call"): 1, ("user", "tool_result"): 1}
    assert user_texts(session) == ["Which test covers the reconnect path?"]


def test_lines_of_other_shapes_are_not_taken_for_a_transcript(tmp_path):
    chat = tmp_path / "chat.jsonl"
    chat.write_text('{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "hello"}\n')
    wrapped = tmp_path / "wrapped.jsonl"  # pi-style: a typed envelope around the message
    wrapped.write_text('{"type": "message", "id": "m1", "message": {"role": "user", "content": [{"type": "text",'
                       ' "text": "hi"}]}}\n')
    plain = tmp_path / "plain.jsonl"  # role + message, but the content is a bare string: too little to go on
    plain.write_text('{"role": "user", "message": {"content": "hi"}}\n')
    assert [parser_for(p) for p in (chat, wrapped, plain)] == [None, None, None]


def test_a_subagent_transcript_is_a_session_under_its_parent():
    child = NESTED / "subagents" / "9a8b7c6d-1e2f-4a3b-8c4d-5e6f7a8b9c0d.jsonl"
    (session,), _ = parse(child)
    assert session.session_id == "9a8b7c6d-1e2f-4a3b-8c4d-5e6f7a8b9c0d"
    assert session.parent_session_id == "3f1c2b4a-5d6e-4f70-8a91-b2c3d4e5f607" and session.project == "orbit"
    (parent,), _ = parse(NESTED / f"{NESTED.name}.jsonl")
    assert parent.session_id == NESTED.name and parent.parent_session_id is None


def test_keys_and_block_spellings_of_other_versions_are_read():
    path = NESTED / f"{NESTED.name}.jsonl"
    assert parser_for(path).platform == "cursor"  # extra keys beside role/message, inside agent-transcripts
    (session,), report = parse(path)
    call = next(m for m in session.messages if m.kind == "tool_call")
    result = next(m for m in session.messages if m.kind == "tool_result")
    assert call.tool_name == "Task" and "count /proc/self/fd" in call.text
    assert result.tool_name == "Task" and result.text == "12 descriptors open, 10 of them sockets"
    assert user_texts(session) == ["count the open descriptors after ten reconnects"]


def test_a_first_prompt_longer_than_the_detection_head_is_still_a_transcript(tmp_path):
    """Cursor prepends <user_info>, rules and the project layout to the first prompt, so its line can outgrow
    what detection reads (kenn-io/agentsview's isCursorJSONL test keeps a first line over 4 KB)."""
    folder = tmp_path / ".cursor" / "projects" / "home-ana-code-orbit" / "agent-transcripts"
    folder.mkdir(parents=True)
    context = "<user_info>\nOS Version: linux 6.8\nShell: zsh\n</user_info>\n<rules>\n" + "- prefer small diffs\n" * 900
    prompt = context + "</rules>\n<user_query>\nwhy does orbit reconnect twice on resume?\n</user_query>"
    path = write_lines(folder / "5b6c7d8e-9f00-4a1b-8c2d-3e4f5a6b7c8d.jsonl", [
        {"role": "user", "message": {"content": [{"type": "text", "text": prompt}]}},
        {"role": "assistant", "message": {"content": [{"type": "text", "text": "resume() calls connect() twice."}]}},
    ])
    assert len(path.read_bytes().split(b"\n")[0]) > 16 * 1024
    assert parser_for(path).platform == "cursor"
    (session,), _ = parse(path)
    assert user_texts(session) == ["why does orbit reconnect twice on resume?"]


def write_lines(path: Path, records: list[dict]) -> Path:
    """Lines as Cursor writes them: compact JSON, one object a line."""
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records), encoding="utf-8")
    return path


# The Cursor CLI's chat store: ``~/.cursor/chats/<md5 of the workspace path>/<agent id>/store.db``, an SQLite blob
# store written by the CLI's SQLiteBlobStoreWithMetadata (``blobs (id TEXT PRIMARY KEY, data BLOB)``, ``meta (key
# TEXT PRIMARY KEY, value TEXT)``, WAL), the metadata JSON hex-encoded in meta row '0'. Its root blob lists the
# message blobs (protobuf field 1) and the workspace (field 9); messages are ``{role, content}`` JSON with
# text/reasoning/tool-call/tool-result parts — as readers' fixtures build it (chenhg5/tape
# internal/source/cursor/cursor_test.go, commit 76b427ed; Mai0313/VibeCodingTracker src/core/src/session/cursor.rs,
# commit 7acc4bc). Written by hand in store.sql; store.db is that script run.
STORE = OWN / "chats" / "6eceb9f57ad67c264fe91770fbfa3f57" / "c5e8a1f0-3b7d-4c29-9e64-2a1b0d9f8e71" / "store.db"


def test_the_chat_store_fixture_is_its_sql_script(tmp_path):
    built = tmp_path / "store.db"
    conn = sqlite3.connect(built)
    conn.executescript((STORE.parent / "store.sql").read_text())
    conn.commit()
    conn.close()
    assert _dump(built) == _dump(STORE)


def test_a_cli_chat_store_is_a_session():
    assert parser_for(STORE) is not None and parser_for(STORE).platform == "cursor"
    (session,), report = parse(STORE)
    assert session.session_id == "c5e8a1f0-3b7d-4c29-9e64-2a1b0d9f8e71"
    assert session.title == "Flush metrics on shutdown"
    assert session.started_at == "2026-01-01T10:00:00Z"
    assert session.cwd == "/home/ana/code/orbit" and session.project == "orbit"
    assert user_texts(session) == [
        "the metrics flush drops the last batch on shutdown, make it flush before exit",
        "add a test for it",
    ]
    assert counts(session) == {
        ("user", "text"): 2, ("assistant", "thinking"): 1, ("assistant", "text"): 3,
        ("assistant", "tool_call"): 2, ("user", "tool_result"): 2,
    }
    calls = [m for m in session.messages if m.kind == "tool_call"]
    assert [c.tool_name for c in calls] == ["Read", "Shell"]
    results = [m for m in session.messages if m.kind == "tool_result"]
    assert [FLAG_ERROR in r.flags for r in results] == [False, True]
    assert "timer.cancel()" in results[0].text
    assert "OS Version" not in all_text(session)  # the system prompt and <user_info> are not indexed
    assert report.bad_lines == 0


def test_the_chat_store_is_never_changed_nor_waited_for(tmp_path):
    db = tmp_path / "chats" / "h" / STORE.parent.name / "store.db"
    db.parent.mkdir(parents=True)
    shutil.copy(STORE, db)
    before = _dump(db)
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("DELETE FROM blobs")
    sessions, _ = parse(db)
    assert len(sessions) == 1 and len(sessions[0].messages) == 10  # the uncommitted delete is not seen
    writer.execute("ROLLBACK")
    writer.execute("PRAGMA journal_mode=DELETE")
    writer.close()
    assert _dump(db) == before


def test_chat_stores_are_found_by_default_and_other_store_dbs_are_not_cursors(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    target = tmp_path / "home" / ".cursor" / STORE.relative_to(OWN)
    target.parent.mkdir(parents=True)
    shutil.copy(STORE, target)
    found = [(p.name, x.platform) for p, x in discover() if x.platform == "cursor"]
    assert found == [("store.db", "cursor")]
    other = tmp_path / "app" / "store.db"
    other.parent.mkdir()
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE items (id TEXT PRIMARY KEY, data BLOB)")
    conn.commit()
    conn.close()
    assert parser_for(other) is None


def test_a_store_whose_root_names_a_missing_or_foreign_blob_keeps_the_rest(tmp_path):
    db = tmp_path / "store.db"
    shutil.copy(STORE, db)
    conn = sqlite3.connect(db)
    tool_result = conn.execute("SELECT id FROM blobs WHERE CAST(data AS TEXT) LIKE '%tool-result%toolu_orbit_7%'"
                               ).fetchone()[0]
    conn.execute("DELETE FROM blobs WHERE id = ?", (tool_result,))
    conn.execute("UPDATE blobs SET data = X'00ff' WHERE CAST(data AS TEXT) LIKE '{\"role\":\"user\"%add a test for it%'")
    conn.commit()
    conn.close()
    (session,), report = parse(db)
    assert user_texts(session) == ["the metrics flush drops the last batch on shutdown, make it flush before exit"]
    assert len(session.messages) == 8 and report.bad_lines == 2


def test_a_live_store_whose_schema_is_still_in_its_wal_is_recognised_by_where_it_lives(tmp_path):
    """The CLI keeps the store in WAL mode: until a checkpoint, the CREATE TABLE statements sit in ``store.db-wal``
    and the main file's head holds only the SQLite header."""
    chat = tmp_path / ".cursor" / "chats" / "6eceb9f57ad67c264fe91770fbfa3f57" / STORE.parent.name
    chat.mkdir(parents=True)
    db = chat / "store.db"
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.executescript((STORE.parent / "store.sql").read_text())
    writer.commit()
    try:
        assert b"CREATE TABLE blobs" not in read_head(db)  # the case under test
        assert parser_for(db) is not None and parser_for(db).platform == "cursor"
        (session,), _ = parse(db)
        assert session.title == "Flush metrics on shutdown" and len(session.messages) == 10
        elsewhere = tmp_path / "other" / "store.db"  # the same live file outside Cursor's chats folder: not claimed
        elsewhere.parent.mkdir()
        elsewhere.write_bytes(db.read_bytes())
        assert parser_for(elsewhere) is None
    finally:
        writer.close()


def test_the_user_query_parts_are_those_the_tag_regex_finds():
    """The typed prompt is read from the ``<user_query>`` parts by substring search; the rule is the regex
    ``<user_query>\\s*(.*?)\\s*</user_query>`` (DOTALL, every match): same parts on random mixes of tags, text,
    ASCII and Unicode whitespace, unclosed and nested tags."""
    import random
    import re

    from wwt.parsers.cursor import _user_queries

    rule = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.DOTALL)
    pieces = ["<user_query>", "</user_query>", "<user_query", "user_query>", "why does it fail?", " ", "\n",
              "\t", "\u3000", "\xa0", "\u2028", "x", "<user_info>OS: linux</user_info>", "한국어", "</", "<"]
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 14)))
        assert _user_queries(text) == rule.findall(text), text


FIELDS = OWN / "bubble-fields" / "User"
MOON, STARS, TIDES = (f"9d8c7b6a-{n}-4e2f-9a0b-5c4d3e2f1a0{i}" for i, n in ((1, "1111"), (2, "2222"), (3, "3333")))


def _fields_db() -> Path:
    db = FIELDS / "globalStorage" / "state.vscdb"
    built = sqlite3.connect(":memory:")
    built.executescript((FIELDS / "build.sql").read_text())
    assert list(built.iterdump()) == _dump(db)  # the committed database is its script
    built.close()
    return db


def test_bubble_words_and_times_in_the_fields_other_versions_use():
    """``rawText`` for a user bubble, ``content`` for an answer, ``timestamp`` for a bubble's time."""
    sessions, report = parse(_fields_db())
    moon = {s.session_id: s for s in sessions}[MOON]
    assert [(m.role, m.kind, m.text, m.timestamp) for m in moon.messages] == [
        ("user", "text", "why does the moon phase round up at exactly half?", "2026-01-09T23:06:45Z"),
        ("assistant", "text", "round() uses banker's rounding; the phase code wants floor(x + 0.5).",
         "2026-01-09T23:07:30Z"),
    ]
    assert report.bad_lines == 0 and report.skipped_messages == 0


def test_a_chat_no_workspace_database_lists_takes_its_folder_from_its_bubbles():
    """``workspaceProjectDir``, else the first ``workspaceUris`` entry (a local ``file://`` or a remote
    ``vscode-remote://`` folder, percent-decoded)."""
    sessions = {s.session_id: s for s in parse(_fields_db())[0]}
    assert [(sessions[c].cwd, sessions[c].project) for c in (MOON, STARS, TIDES)] == [
        ("/srv/astro/moonclock", "moonclock"), ("/home/ida/star charts", "star charts"), ("/opt/tides/job", "job"),
    ]
    assert sessions[STARS].title == "Star chart legend"


# Cursor's plain-text transcripts (``agent-transcripts/<id>.txt`` or ``<id>/<id>.txt``), written before the JSONL
# ones: ``user:`` / ``assistant:`` marker lines, ``[Thinking]``, ``[Tool call] <name>`` and ``[Tool result]``
# markers whose bodies are the indented lines after them (kenn-io/agentsview internal/parser/cursor.go and
# cursor_provider.go, 5386007: a ``.jsonl`` beside a ``.txt`` of the same id wins). Re-created by hand.
TEXT = OWN / "text" / ".cursor" / "projects" / "home-ida-code-tidepool" / "agent-transcripts"
TEXT_MAIN = TEXT / "3f6a1c8e-2d47-4b9a-9e05-7c1b2a3d4e5f.txt"


def test_a_plain_text_transcript_is_a_session():
    session, report = only(TEXT_MAIN)
    assert session.session_id == "3f6a1c8e-2d47-4b9a-9e05-7c1b2a3d4e5f" and session.project == "tidepool"
    assert session.started_at and session.ended_at  # the file's times, as for a JSONL transcript
    assert [(m.role, m.kind, m.tool_name, m.text) for m in session.messages] == [
        ("user", "text", None, "the nightly tide import crashes on leap days, find out why"),
        ("assistant", "thinking", None,
         "The importer builds dates from a day-of-year number.\nDay 366 only exists in leap years."),
        ("assistant", "text", None, "I'll look at the date helper first."),
        ("assistant", "tool_call", "Grep", "Grep: day_of_year in tidepool/importer"),
        ("user", "tool_result", "Grep", "tidepool/importer/dates.py:14: def from_day_of_year(year, n):"),
        ("assistant", "tool_call", "ReadFile", "ReadFile: tidepool/importer/dates.py"),
        ("user", "tool_result", "ReadFile", "13 | # assumes 365 days\n14 | def from_day_of_year(year, n):"),
        ("assistant", "text", None, "The helper assumes every year has 365 days, so day 366 raises in leap years. "
                                    "I switched it to date(year, 1, 1) + timedelta(n - 1)."),
        ("user", "text", None, "add a test for 2028-12-31"),
        ("assistant", "text", None, "Added test_day_366_in_leap_year covering 2028-12-31."),
    ]
    assert "Workspace Path" not in all_text(session)
    assert len({m.native_id for m in session.messages}) == 10
    assert report.bad_lines == 0 and report.unknown_records == 0


def test_plain_text_transcripts_are_found_and_a_jsonl_twin_wins(tmp_path):
    found = {p.name: parser.platform for p, parser in discover([OWN / "text"])}
    assert found == {
        "3f6a1c8e-2d47-4b9a-9e05-7c1b2a3d4e5f.txt": "cursor",
        "b7e2c9d4-6a18-4f3e-8c51-0d9e7f6a5b42.txt": "cursor",  # the nested layout
        "e1d2c3b4-a5f6-4789-8abc-def012345678.txt": "cursor",
        "5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d.txt": "cursor",
        "e1d2c3b4-a5f6-4789-8abc-def012345678.jsonl": "cursor",
    }  # scratch-notes.txt: no role marker first, not a transcript
    nested, _ = only(TEXT / "b7e2c9d4-6a18-4f3e-8c51-0d9e7f6a5b42" / "b7e2c9d4-6a18-4f3e-8c51-0d9e7f6a5b42.txt")
    assert user_texts(nested) == ["which cron file schedules the import?"] and nested.project == "tidepool"
    sessions, report = parse(TEXT / "e1d2c3b4-a5f6-4789-8abc-def012345678.txt")
    assert sessions == [] and any(".jsonl" in note for note in report.notes)
    outside = tmp_path / "notes.txt"
    outside.write_text(TEXT_MAIN.read_text())
    assert parser_for(outside) is None  # a .txt is a transcript only inside agent-transcripts


# A transcript whose first line is a system line, or a line whose message has no content (kenn-io/agentsview
# internal/parser/cursor_test.go, 5386007, reads the lines after them). Re-created by hand.
LEAD = OWN / "lead-lines" / ".cursor" / "projects" / "home-ida-code-quay" / "agent-transcripts"


def test_a_transcript_opening_with_a_line_that_is_no_message_is_still_read():
    system_first = LEAD / "0c9b8a7d-1e2f-4a3b-8c4d-5e6f7a8b9c0d.jsonl"
    empty_first = LEAD / "6d5c4b3a-2f1e-4d0c-9b8a-7f6e5d4c3b2a.jsonl"
    assert parser_for(system_first) is not None and parser_for(system_first).platform == "cursor"
    assert parser_for(empty_first) is not None and parser_for(empty_first).platform == "cursor"
    session, report = only(system_first)
    assert user_texts(session) == ["why does the berth planner skip slot 0?"] and len(session.messages) == 1
    assert "coding agent" not in all_text(session) and report.unknown_records == 1  # the system line
    session, report = only(empty_first)
    assert user_texts(session) == ["list the berths that are free on Monday"] and len(session.messages) == 1
    assert report.unknown_records == 1  # the line without content


def test_a_plain_text_transcript_may_mark_the_assistant_with_a_bare_a():
    """Some versions write ``A:`` for the assistant's turns (a public reader of agent-transcripts splits on
    ``user:`` / ``A:``)."""
    session, _ = only(TEXT / "5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d.txt")
    assert [(m.role, m.kind, m.text) for m in session.messages] == [
        ("user", "text", "does the importer retry a failed download?"),
        ("assistant", "thinking", "Look for a retry loop around the HTTP fetch."),
        ("assistant", "tool_call", "Grep: retry in tidepool/importer"),
        ("user", "tool_result", "no matches"),
        ("assistant", "text", "No: a failed download raises straight away; nothing retries it."),
    ]


def _task_lines() -> list[dict]:
    """A Cursor agent transcript as the agent writes it in 2026 (the shapes of a genuine transcript, 21nCo/superset
    ``0/full.jsonl`` on an entire/checkpoints ref, 01ca77fd, and of other public exports): a ``<timestamp>`` before
    a prompt, ``[REDACTED]`` where hidden reasoning was (a block of its own, or after the answer), a prompt Cursor
    writes itself when a background task finishes (``<system_notification>`` + a fixed ``<user_query>``, in two
    wordings), and a ``turn_ended`` line. The words are our own."""
    def user(text: str) -> dict:
        return {"role": "user", "message": {"content": [{"type": "text", "text": text}]}}

    def assistant(*blocks: dict) -> dict:
        return {"role": "assistant", "message": {"content": list(blocks)}}

    def text(words: str) -> dict:
        return {"type": "text", "text": words}

    notice = ("<system_notification>\nThe following task has finished. If you were already aware, ignore this "
              "notification and do not restate prior responses.\n\n<task>\nkind: shell\nstatus: success\n"
              "task_id: 4711\ntitle: Rebuild the orders index\n</task>\n</system_notification>\n")
    return [
        user("<timestamp>Friday, Sep 4, 2026, 10:37 AM (UTC+5:30)</timestamp>\n<user_query>\nthe nightly export "
             "times out on the orders table, find what makes it slow\n</user_query>"),
        assistant(text("Checking the export's query plan first.\n\n[REDACTED]"),
                  {"type": "tool_use", "name": "Shell", "input": {"command": "psql -f explain_export.sql"}}),
        assistant(text("[REDACTED]"), {"type": "tool_use", "name": "Read", "input": {"path": "/srv/export/q.sql"}}),
        assistant(text("The export scans orders without the created_at index; I am rebuilding it.\n\n[REDACTED]")),
        user("<timestamp>Friday, Sep 4, 2026, 11:02 AM (UTC+5:30)</timestamp>\n" + notice + "<user_query>Briefly "
             "inform the user about the task result and perform any follow-up actions (if needed). If there's no "
             "follow-ups needed, don't explicitly say that.</user_query>"),
        assistant(text("The index rebuild finished; the export now takes 40 s.")),
        user(notice + "<user_query>Briefly inform the user about the task result and perform any follow-up "
             "actions (if needed).</user_query>"),
        assistant(text("Nothing more to do there.")),
        user("<timestamp>Friday, Sep 4, 2026, 11:15 AM (UTC+5:30)</timestamp>\n<user_query>\nopen a PR with the "
             "index change\n</user_query>"),
        assistant(text("Opened the PR.")),
        {"type": "turn_ended", "status": "success"},
    ]


def _task_transcript(tmp_path: Path) -> Path:
    folder = tmp_path / ".cursor" / "projects" / "srv-export" / "agent-transcripts" / "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b"
    folder.mkdir(parents=True)
    path = folder / "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in _task_lines()), encoding="utf-8")
    os.utime(path, (1788502400, 1788502400))  # 2026-09-04T06:13:20Z
    return path


def test_prompts_cursor_writes_when_a_task_finishes_are_not_the_users_words(tmp_path):
    (session,), report = parse(_task_transcript(tmp_path))
    assert user_texts(session) == ["the nightly export times out on the orders table, find what makes it slow",
                                   "open a PR with the index change"]
    assert "system_notification" not in all_text(session) and "Briefly inform" not in all_text(session)
    assert report.skipped_messages == 2 and report.unknown_records == 0 and report.bad_lines == 0


def test_the_hidden_reasoning_placeholder_is_not_an_answer(tmp_path):
    (session,), _ = parse(_task_transcript(tmp_path))
    answers = [m.text for m in session.messages if m.kind == "text" and m.role == "assistant"]
    assert answers == ["Checking the export's query plan first.",
                       "The export scans orders without the created_at index; I am rebuilding it.",
                       "The index rebuild finished; the export now takes 40 s.", "Nothing more to do there.",
                       "Opened the PR."]
    assert "[REDACTED]" not in all_text(session)
    assert counts(session)[("assistant", "tool_call")] == 2


def test_a_prompts_timestamp_dates_it_and_the_session(tmp_path):
    (session,), _ = parse(_task_transcript(tmp_path))
    stamps = [m.timestamp for m in session.messages if m.role == "user" and m.kind == "text"]
    assert stamps == ["2026-09-04T05:07:00Z", "2026-09-04T05:45:00Z"]  # 10:37 and 11:15 at UTC+5:30
    assert session.started_at == "2026-09-04T05:07:00Z" and session.ended_at == "2026-09-04T06:13:20Z"


def test_cursor_prompt_timestamps_in_the_forms_it_writes():
    from wwt.parsers.cursor import prompt_timestamp

    assert prompt_timestamp("<timestamp>Tuesday, May 5, 2026, 3:52 PM (UTC+6)</timestamp>") == "2026-05-05T09:52:00Z"
    assert prompt_timestamp("<timestamp>Saturday, Aug 15, 2026, 6:46 PM (UTC-7)</timestamp>") == "2026-08-16T01:46:00Z"
    assert prompt_timestamp("<timestamp>Monday, January 5, 2026, 12:05 AM (UTC)</timestamp>") == "2026-01-05T00:05:00Z"
    assert prompt_timestamp("<timestamp>Monday, Jan 5, 2026, 12:05 PM (UTC+0)</timestamp>") == "2026-01-05T12:05:00Z"
    assert prompt_timestamp("<timestamp>sometime last week</timestamp>") is None
    assert prompt_timestamp("<timestamp>Friday, Feb 30, 2026, 1:00 PM (UTC+1)</timestamp>") is None
    assert prompt_timestamp("no tag at all") is None


def test_a_prompt_without_a_query_tag_loses_only_cursors_timestamp():
    from wwt.parsers.cursor import user_query_text

    assert user_query_text("<timestamp>Friday, Sep 4, 2026, 10:37 AM (UTC+5:30)</timestamp>\nship it") == "ship it"
    pasted = "why does this fail?\n<event><timestamp>2026-09-04</timestamp></event>"  # the user's own XML stays
    assert user_query_text(pasted) == pasted
