"""Goose parser: the older ``<id>.jsonl`` sessions (a SessionMetadata line, then one serde-serialised Message a
line, as goose's storage.rs writes them) and the newer ``sessions.db`` (built from tests/fixtures/goose/db/goose.sql,
goose's own schema at version 13); expectations by hand."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from parser_helpers import all_text, counts, run_parser, user_texts

from wwt.models import FLAG_ERROR, FLAG_SUBAGENT
from wwt.parsers import discover, parse_file, parser_for
from wwt.parsers.common import read_head
from wwt.parsers.goose import GooseParser
from wwt.search import resume_command

OWN = Path(__file__).parent / "fixtures" / "goose"
LEDGER = OWN / "jsonl" / "sessions" / "20250620_013617.jsonl"
OLDEST = OWN / "jsonl" / "sessions" / "payments-retry.jsonl"
DB = OWN / "db" / "sessions" / "sessions.db"


def test_a_jsonl_session():
    (session,), report = run_parser(GooseParser(), LEDGER)
    assert session.session_id == "20250620_013617" and session.platform == "goose"
    assert session.title == "Ledger rounding bug"
    assert session.cwd == "/home/dev/ledger-svc" and session.project == "ledger-svc"
    assert session.started_at == "2025-06-20T01:36:17Z" and session.ended_at == "2025-06-20T01:36:40Z"
    assert counts(session) == {("user", "text"): 2, ("assistant", "thinking"): 1, ("assistant", "text"): 2,
                               ("assistant", "tool_call"): 2, ("user", "tool_result"): 2}
    # the screenshot's text without its image; the model-only summary is nobody's words
    assert user_texts(session) == ["ledger totals are off by one cent when splitting invoices three ways",
                                   "here is the invoice screenshot, the cent goes missing on the last line"]
    text = all_text(session)
    assert "SUMMARY_ONLY_FOR_MODEL" not in text and "iVBORw0KGgo" not in text and "Context compacted" not in text
    # thinking, text and call keep the order of the message's content
    assert [m.kind for m in session.messages[1:4]] == ["thinking", "text", "tool_call"]
    results = [m for m in session.messages if m.kind == "tool_result"]
    assert [(m.tool_name, FLAG_ERROR in m.flags) for m in results] == [("developer__shell", False),
                                                                       ("developer__shell", True)]
    assert results[1].text == "-32603: command exited with status 1: 2 failed"
    assert report.skipped_messages == 1 and report.unknown_records == 1  # the summary; the unknown content type
    # ids are message positions (a rewrite with a new description moves every byte offset)
    assert [m.native_id for m in session.messages][:3] == ["#0", "#1#0", "#1"]


def test_the_oldest_jsonl_has_no_working_dir():
    (session,), report = run_parser(GooseParser(), OLDEST)
    assert session.session_id == "payments-retry" and session.title is None and session.cwd is None
    assert [m.role for m in session.messages] == ["user", "assistant"]
    assert session.started_at == "2025-02-21T20:59:20Z"


def test_the_sqlite_store():
    sessions, report = run_parser(GooseParser(), DB)
    assert [s.session_id for s in sessions] == ["20251108_1", "20251108_3"]  # hidden and empty ones: none
    main, sub = sessions
    assert main.title == "Flaky webhook retry test" and main.project == "hookshot"
    assert main.started_at == "2025-11-08T10:00:00Z" and main.ended_at == "2025-11-08T10:06:40Z"
    assert counts(main) == {("user", "text"): 1, ("assistant", "text"): 2, ("assistant", "thinking"): 1,
                            ("assistant", "tool_call"): 2, ("user", "tool_result"): 2}
    results = [m for m in main.messages if m.kind == "tool_result"]
    assert "RESOURCE_TEXT" in results[0].text and FLAG_ERROR not in results[0].flags
    assert results[1].text == "4 failed, 16 passed" and FLAG_ERROR in results[1].flags  # isError: true
    assert main.messages[0].native_id == "msg_20251108_1_1"
    assert "MODEL_ONLY_SUMMARY" not in all_text(main)
    assert all(FLAG_SUBAGENT in m.flags for m in sub.messages) and len(sub.messages) == 2
    assert "HIDDEN_NAMING_PROMPT" not in "".join(all_text(s) for s in sessions)
    # the broken content_json row, the unknown role, the model-only summary
    assert report.bad_lines == 1 and report.unknown_records == 1 and report.skipped_messages == 1


def test_the_store_is_opened_read_only_and_never_changed(tmp_path):
    db = tmp_path / "sessions" / "sessions.db"
    db.parent.mkdir()
    shutil.copy(DB, db)
    before = db.read_bytes()
    db.chmod(0o444)
    sessions, report = run_parser(GooseParser(), db, 100)
    assert len(sessions) == 2 and report.requires_full_reparse
    assert db.read_bytes() == before


def test_a_jsonl_beside_the_store_is_left_to_it(tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copy(LEDGER, folder / LEDGER.name)
    shutil.copy(DB, folder / "sessions.db")
    sessions, report = parse_file(folder / LEDGER.name)
    assert sessions == [] and any("sessions.db" in note for note in report.notes)


def test_bad_lines_are_counted_and_the_rest_kept(tmp_path):
    path = tmp_path / LEDGER.name
    lines = LEDGER.read_bytes().split(b"\n")
    junk = [b'{"role":"user","created":17503', b'["not a message"]', b'{"kind":"note"}']
    path.write_bytes(b"\n".join(lines[:3] + junk + lines[3:]))
    (session,), report = run_parser(GooseParser(), path)
    assert report.bad_lines == 2  # the cut line, the list
    assert report.unknown_records == 2  # the object that is no message, the unknown content type
    assert counts(session)[("user", "tool_result")] == 2  # nothing after the damage is lost


def test_a_foreign_sqlite_file_is_noted(tmp_path):
    db = tmp_path / "sessions" / "sessions.db"
    db.parent.mkdir()
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE other (x)")
    sessions, report = run_parser(GooseParser(), db)
    assert sessions == [] and report.notes == ["not a goose database (no sessions/messages tables)"]


def test_detection_and_discovery(tmp_path, monkeypatch):
    for path in (LEDGER, OLDEST, DB):
        assert parser_for(path).platform == "goose"
    assert parser_for(OWN / "db" / "goose.sql") is None
    elsewhere = tmp_path / "copy" / "sessions.db"  # another app's sessions.db outside a sessions folder
    elsewhere.parent.mkdir()
    with sqlite3.connect(elsewhere) as conn:
        conn.execute("CREATE TABLE sessions (id TEXT, token TEXT)")
    assert not GooseParser().detect(elsewhere, read_head(elsewhere))
    root = tmp_path / "root"
    shutil.copytree(OWN / "db" / "sessions", root / "data" / "sessions")
    monkeypatch.setenv("GOOSE_PATH_ROOT", str(root))
    monkeypatch.setenv("HOME", str(tmp_path / "nohome"))
    found = [(p.name, x.platform) for p, x in discover() if getattr(x, "platform", x) == "goose"]
    assert found == [("sessions.db", "goose")]


def test_another_agents_sessions_db_in_a_sessions_folder_is_not_claimed(tmp_path):
    """Cline's newer releases keep a ``sessions.db`` index in ``~/.cline/data/sessions``: a sessions folder too. A
    database whose schema is readable and names none of goose's columns is not goose's."""
    index = tmp_path / ".cline" / "data" / "sessions" / "sessions.db"
    index.parent.mkdir(parents=True)
    with sqlite3.connect(index) as conn:
        conn.execute("CREATE TABLE sessions (session_id TEXT PRIMARY KEY, title TEXT, created_at INTEGER)")
        conn.execute("CREATE TABLE messages (session_id TEXT, ordinal INTEGER, body TEXT)")
        conn.execute("INSERT INTO sessions VALUES ('s1', 'fix the flaky test', 1767950000000)")
    assert not GooseParser().detect(index, read_head(index))
    assert getattr(parser_for(index), "platform", None) != "goose"


def test_a_sessions_db_whose_schema_is_not_yet_in_the_main_file_is_goose_in_a_sessions_folder(tmp_path):
    """With write-ahead logging the schema may still sit in ``sessions.db-wal``: the main file's head then shows no
    table at all, and the folder's name is all there is to go by."""
    db = tmp_path / "sessions" / "sessions.db"
    db.parent.mkdir()
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, working_dir TEXT)")
    conn.commit()
    head = read_head(db)
    try:
        assert b"CREATE TABLE" not in head  # the schema is still in the WAL
        assert GooseParser().detect(db, head)
    finally:
        conn.close()


def test_resume_line():
    assert resume_command("goose", "20251108_1") == "goose session --resume --session-id 20251108_1"
    assert resume_command("goose", "payments-retry") is None  # a named legacy session: no id to resume by


def test_invalid_utf8_in_a_row_costs_only_its_bytes(tmp_path):
    db = tmp_path / "sessions" / "sessions.db"
    db.parent.mkdir()
    shutil.copy(DB, db)
    with sqlite3.connect(db) as conn:  # a title with a broken byte, as a crashed write could leave it
        conn.execute("UPDATE sessions SET name = CAST(x'466c616b79ff' AS TEXT) WHERE id = '20251108_1'")
    sessions, report = run_parser(GooseParser(), db)
    assert [s.session_id for s in sessions] == ["20251108_1", "20251108_3"]
    assert sessions[0].title == "Flaky\ufffd" and len(sessions[0].messages) == 8


def test_doctor_says_where_continue_and_goose_logs_were_found(tmp_path, monkeypatch):
    from wwt.doctor import check_log_folders

    home = tmp_path / "home"
    (home / ".continue" / "sessions").mkdir(parents=True)
    (home / ".local" / "share" / "goose" / "sessions").mkdir(parents=True)
    for var in ("CONTINUE_GLOBAL_DIR", "GOOSE_PATH_ROOT", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    found = {f.area: f.message for f in check_log_folders()}
    assert str(home / ".continue" / "sessions") in found["Continue"]
    assert str(home / ".local" / "share" / "goose" / "sessions") in found["Goose"]


NEWER = OWN / "newer"


def _built_from_script(folder: Path) -> Path:
    db = folder / "sessions" / "sessions.db"
    built = sqlite3.connect(":memory:")
    built.executescript((folder / "goose.sql").read_text())
    committed = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    assert list(committed.iterdump()) == list(built.iterdump())  # the committed store is its script
    committed.close()
    built.close()
    return db


def test_a_subagent_session_names_the_session_that_started_it():
    sessions, report = run_parser(GooseParser(), _built_from_script(NEWER))
    main, sub = sessions
    assert (main.session_id, main.parent_session_id) == ("20260302_4", None)
    assert (sub.session_id, sub.parent_session_id) == ("20260302_5", "20260302_4")
    assert all(FLAG_SUBAGENT in m.flags for m in sub.messages)
    assert main.project == "pixelbox" and main.started_at == "2026-03-02T09:00:00Z"
    assert user_texts(sub) == ["time each step of resize()"] and report.notes == []


def test_a_store_from_before_message_metadata_is_read():
    sessions, report = run_parser(GooseParser(), _built_from_script(OWN / "early"))
    (session,) = sessions
    assert session.session_id == "20251014_2" and session.title == "Unit conversions in the recipe scaler"
    assert session.project == "mise" and session.started_at == "2025-10-14T18:30:00Z"
    assert session.ended_at == "2025-10-14T18:33:00Z"
    assert user_texts(session) == ["scaling a recipe by 3 turns 1 cup into 3 cups, make it say 3/4 quart"]
    assert counts(session) == {("user", "text"): 1, ("assistant", "text"): 1}
    assert report.notes == [] and report.bad_lines == 0
