"""OpenCode parser: a database built from OpenCode's own drizzle schema and an older JSON storage tree, both
written after message-v2.ts (docs/formats-notes.md); expectations by hand. The app's database is read without
being written or locked."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import threading
import tracemalloc
from functools import partial
from pathlib import Path

from parser_helpers import all_text, counts, run_parser, user_texts

from wwt.models import FLAG_COMPACTION_SUMMARY, FLAG_ERROR, ParseReport
from wwt.parsers import discover, parse_file, parser_for
from wwt.parsers.common import read_head
from wwt.parsers.opencode import OpenCodeParser

OWN = Path(__file__).parent / "fixtures" / "opencode"
DB = OWN / "db" / "opencode.db"
SQL = OWN / "db" / "opencode.sql"
JSON_SESSION = OWN / "json" / "storage" / "session" / "9f86d081884c7d65" / "ses_3b2c1d0e9f8aJsonEraSess.json"
MAIN, SUB = "ses_4a1b2c3d4e5fAbCdEfGhIjKl", "ses_4a1b2c3d4e60SubAgentXyz"
PARSER = OpenCodeParser()
parse = partial(run_parser, PARSER)


def _by_id(path: Path) -> dict:
    sessions, report = parse(path)
    return {s.session_id: s for s in sessions}, report


def test_database_fixture_is_the_sql_script(tmp_path):
    built = tmp_path / "opencode.db"
    conn = sqlite3.connect(built)
    conn.executescript(SQL.read_text())
    conn.commit()
    dump = list(conn.iterdump())
    conn.close()
    committed = sqlite3.connect(f"{DB.resolve().as_uri()}?mode=ro", uri=True)
    assert list(committed.iterdump()) == dump
    committed.close()


def test_database_sessions_and_metadata():
    sessions, report = _by_id(DB)
    assert set(sessions) == {MAIN, SUB}  # the third session holds no message
    main = sessions[MAIN]
    assert main.platform == "opencode" and main.title == "Flaky orbit sync test"
    assert main.cwd == "/home/ana/code/orbit" and main.project == "orbit"
    assert main.started_at == "2026-01-01T10:00:00Z" and main.ended_at == "2026-01-01T10:02:00Z"
    assert main.parent_session_id is None and sessions[SUB].parent_session_id == MAIN


def test_database_messages():
    sessions, report = _by_id(DB)
    main = sessions[MAIN]
    assert counts(main) == {("user", "text"): 2, ("assistant", "thinking"): 1, ("assistant", "tool_call"): 2,
                            ("user", "tool_result"): 2, ("assistant", "text"): 1}
    # the synthetic Read-tool note and the ignored draft are not what the user typed
    assert user_texts(main) == [
        "test_orbit_sync fails one run in five with a stale epoch, see @tests/test_sync.py", "ship it",
    ]
    assert "Called the Read tool" not in all_text(main) and "ignored draft" not in all_text(main)
    calls = [m for m in main.messages if m.kind == "tool_call"]
    assert calls[0].text == "bash: pytest -q tests/test_sync.py -p no:randomly --count 20"
    results = [m for m in main.messages if m.kind == "tool_result"]
    assert results[0].text == "4 failed, 16 passed" and FLAG_ERROR not in results[0].flags
    assert results[1].text == "oldString not found in content" and FLAG_ERROR in results[1].flags
    assert results[0].timestamp == "2026-01-01T10:00:04Z"
    assert report.bad_lines == 1  # msg_04's data is not JSON
    assert user_texts(sessions[SUB]) == ["List every caller of OrbitSync.pull in orbit/"]


def test_database_is_opened_read_only_and_never_changed(tmp_path):
    copy = tmp_path / "opencode.db"
    shutil.copy(DB, copy)
    before = hashlib.sha256(copy.read_bytes()).hexdigest()
    writer = sqlite3.connect(copy)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("BEGIN IMMEDIATE")  # the app is in the middle of writing
    writer.execute("UPDATE session SET title = 'renamed' WHERE id = ?", (MAIN,))
    result: dict = {}
    thread = threading.Thread(target=lambda: result.update(out=parse(copy)))
    thread.start()
    thread.join(10)
    assert not thread.is_alive()
    sessions = {s.session_id: s for s in result["out"][0]}
    assert sessions[MAIN].title == "Flaky orbit sync test"  # the uncommitted write is not seen
    writer.execute("COMMIT")  # and the writer was not blocked by the reader
    writer.execute("PRAGMA journal_mode=DELETE")
    writer.close()
    again = {s.session_id: s for s in parse(copy)[0]}
    assert again[MAIN].title == "renamed"
    assert before != hashlib.sha256(copy.read_bytes()).hexdigest()  # only the writer changed it


def test_resume_offset_means_a_whole_reparse():
    sessions, report = parse(DB, 1000)
    assert report.requires_full_reparse and len(sessions) == 2


def test_not_an_opencode_database(tmp_path):
    other = tmp_path / "opencode.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE kv (k, v)")
    conn.commit()
    conn.close()
    assert PARSER.detect(other, read_head(other))  # the name and the SQLite magic
    sessions, report = parse(other)
    assert sessions == [] and report.unknown_records == 1


def test_json_storage_session():
    (session,), report = parse(JSON_SESSION)
    assert session.session_id == "ses_3b2c1d0e9f8aJsonEraSess" and session.title == "Rename telemetry env var"
    assert counts(session) == {("user", "text"): 1, ("assistant", "tool_call"): 1, ("user", "tool_result"): 1,
                               ("assistant", "text"): 1}
    call = next(m for m in session.messages if m.kind == "tool_call")
    assert call.text == "grep: ORBIT_TELEMETRY in /home/ana/code/orbit"
    assert report.bad_lines == 1  # the cut part file


def test_json_storage_is_skipped_when_the_database_holds_it(tmp_path):
    root = tmp_path / "opencode"
    shutil.copytree(OWN / "json", root)
    shutil.copy(DB, root / "opencode.db")
    session_file = root / "storage" / "session" / "9f86d081884c7d65" / JSON_SESSION.name
    sessions, report = parse(session_file)
    assert sessions == [] and any("superseded" in n for n in report.notes)


def test_default_roots_are_the_database_and_the_session_folder(tmp_path, monkeypatch):
    """Discovery must not open every message/part file of the JSON tree on each ingest."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    root = tmp_path / "share" / "opencode"
    assert OpenCodeParser().default_roots() == [root / "opencode.db", root / "storage" / "session"]


def test_discovery_finds_the_database_and_session_files_only(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    root = tmp_path / "share" / "opencode"
    shutil.copytree(OWN / "json", root)
    found = {p.name: parser.platform for p, parser in discover()}
    assert found == {JSON_SESSION.name: "opencode"}
    shutil.copy(DB, root / "opencode.db")
    found = {p.name: parser.platform for p, parser in discover()}
    assert found == {JSON_SESSION.name: "opencode", "opencode.db": "opencode"}
    sessions, report = parse_file(root / "opencode.db")
    assert report.platform == "opencode" and len(sessions) == 2
    assert parser_for(DB).platform == "opencode"


def test_message_and_part_records_are_claimed_by_no_parser():
    records = [p for p in (OWN / "json").rglob("*.json") if p != JSON_SESSION]
    assert len(records) == 6  # two messages, four parts
    assert all(parser_for(p) is None for p in records)
    assert parser_for(SQL) is None


def _store_of_copies(path: Path, copies: int) -> Path:
    """The fixture's sessions copied ``copies`` times with fresh ids into one ``opencode.db`` (a real store
    holds many sessions of ordinary length)."""
    conn = sqlite3.connect(path)
    conn.executescript(SQL.read_text())
    for n in range(1, copies):
        tag = f"_c{n}"
        conn.execute("INSERT INTO session SELECT id || ?1, project_id, workspace_id, parent_id || ?1, slug,"
                     " directory, path, title, version, share_url, summary_additions, summary_deletions,"
                     " summary_files, summary_diffs, cost, tokens_input, tokens_output, tokens_reasoning,"
                     " tokens_cache_read, tokens_cache_write, revert, permission, goal, agent, model,"
                     " time_created + ?2, time_updated + ?2, time_compacting, time_archived"
                     " FROM session WHERE id NOT LIKE '%\\_c%' ESCAPE '\\'", (tag, n))
        conn.execute("INSERT INTO message SELECT id || ?1, session_id || ?1, time_created, time_updated, data"
                     " FROM message WHERE id NOT LIKE '%\\_c%' ESCAPE '\\'", (tag,))
        conn.execute("INSERT INTO part SELECT id || ?1, message_id || ?1, session_id || ?1, time_created,"
                     " time_updated, data FROM part WHERE id NOT LIKE '%\\_c%' ESCAPE '\\'", (tag,))
    conn.commit()
    conn.close()
    return path


def _peak_while_reading(path: Path) -> tuple[int, int]:
    """Sessions read, and the peak of Python allocations while reading them one by one and dropping each (after
    a first read, which fills the interpreter's own one-off tables)."""
    sum(1 for _ in PARSER.parse(path, ParseReport(path=str(path))))
    report = ParseReport(path=str(path))
    tracemalloc.start()
    try:
        read = sum(1 for _ in PARSER.parse(path, report))
        return read, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_store_is_read_one_session_at_a_time(tmp_path):
    """Reader memory follows the largest session, not the store: 8× the sessions, about the same peak (reading
    every row of every table at once grows with the store)."""
    small, small_peak = _peak_while_reading(_store_of_copies(tmp_path / "small.db", 40))
    large, large_peak = _peak_while_reading(_store_of_copies(tmp_path / "large.db", 320))
    assert (small, large) == (2 * 40, 2 * 320)
    assert large_peak < 1.5 * small_peak, (small_peak, large_peak)


def test_every_copied_session_reads_like_the_original(tmp_path):
    sessions, report = parse(_store_of_copies(tmp_path / "opencode.db", 3))
    original, _ = _by_id(DB)
    assert len(sessions) == 6 and report.bad_lines == 3  # msg_04's data, once per copy
    for session in sessions:
        source = original[session.session_id.split("_c")[0]]
        assert [(m.role, m.kind, m.text, m.timestamp) for m in session.messages] == [
            (m.role, m.kind, m.text, m.timestamp) for m in source.messages]
        assert (session.title, session.cwd, session.parent_session_id is None) == (
            source.title, source.cwd, source.parent_session_id is None)


# ``opencode export <id>`` output. The fixture follows the shape of tomjnsn/agentlogs fixtures/opencode/crud.json
# and all-tools.json (commit 06dffa3a4eb524e83ebd772b6b69d9c40aca293a, genuine exports from OpenCode 1.1.x:
# pretty-printed, parts listed out of creation order), with a conversation of our own.
EXPORT = OWN / "export" / "orbit-session.json"


def test_an_export_is_claimed_by_its_content_whatever_its_name(tmp_path):
    renamed = tmp_path / "2026-01-01-reconnect-leak.json"
    shutil.copy(EXPORT, renamed)
    assert parser_for(EXPORT).platform == "opencode" and parser_for(renamed).platform == "opencode"
    other = tmp_path / "info.json"
    other.write_text('{"info": {"id": "job-17", "title": "nightly"}, "messages": []}')
    assert parser_for(other) is None  # an "info" object without OpenCode's session id is someone else's


def test_an_export_reads_like_a_stored_session():
    (session,), report = parse(EXPORT)
    assert session.session_id == "ses_3c9d1e2f3a4bExportSess01" and session.platform == "opencode"
    assert session.title == "Reconnect loop leaks sockets" and session.cwd == "/home/ana/code/orbit"
    assert session.project == "orbit" and session.ended_at == "2026-01-01T10:01:30Z"
    assert [(m.role, m.kind) for m in session.messages] == [
        ("user", "text"), ("assistant", "thinking"), ("assistant", "tool_call"), ("user", "tool_result"),
        ("assistant", "tool_call"), ("user", "tool_result"), ("assistant", "text"), ("user", "text"),
    ]  # parts in id (creation) order, not in the order the export lists them
    assert user_texts(session) == [
        "why does the orbit daemon open a new socket on every reconnect without closing the old one?",
        "add the close and make @daemon/reconnect_test.go pass",
    ]
    assert "Called the Read tool" not in all_text(session)  # synthetic part: OpenCode's, not the user's
    results = [m for m in session.messages if m.kind == "tool_result"]
    assert [FLAG_ERROR in m.flags for m in results] == [False, True]
    assert report.bad_lines == 0 and report.lines == 4


def test_a_damaged_export_keeps_the_messages_around_the_damage(tmp_path):
    text = EXPORT.read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: text.index('"msg_c01a00000012UserThanks"') + 40])  # the last message cut short
    (session,), report = parse(cut)
    assert len(user_texts(session)) == 1 and counts(session)[("assistant", "text")] == 1
    assert report.bad_lines == 1
    broken = tmp_path / "broken.json"
    broken.write_text(text.replace('"role": "assistant",\n        "time": {\n          "created": 1767261641000',
                                   '"role": "assistant",\n        "time": {\n          "created": 17672616410OO', 1))
    (session,), report = parse(broken)
    assert len(user_texts(session)) == 2 and counts(session)[("assistant", "text")] == 0
    assert report.bad_lines == 1


def test_an_export_whose_session_object_is_damaged_keeps_its_messages(tmp_path):
    broken = tmp_path / "broken-info.json"
    broken.write_text(EXPORT.read_text().replace('"title": "Reconnect loop leaks sockets"', '"title": Reconnect'))
    (session,), report = parse(broken)
    assert session.session_id == "ses_3c9d1e2f3a4bExportSess01"  # named by its messages
    assert len(user_texts(session)) == 2 and report.bad_lines == 1


def test_a_copied_storage_tree_under_another_name_is_read(tmp_path):
    """jazzyalex/agent-sessions keeps OpenCode trees as ``storage_v2/`` and ``storage_legacy/``
    (Resources/Fixtures/stage0/agents/opencode at 651e854f): a copy of the tree under another folder name is
    still OpenCode's when its ``message`` folder sits beside ``session``; a lone session-like file is not."""
    copy = tmp_path / "opencode-backup" / "storage_v2"
    shutil.copytree(OWN / "json" / "storage", copy)
    session_file = copy / "session" / "9f86d081884c7d65" / JSON_SESSION.name
    assert parser_for(session_file).platform == "opencode"
    (session,), _ = parse(session_file)
    (original,), _ = parse(JSON_SESSION)
    assert [(m.role, m.kind, m.text) for m in session.messages] == [(m.role, m.kind, m.text) for m in original.messages]
    lone = tmp_path / "notes" / "session" / "week1" / "ses_plan.json"
    lone.parent.mkdir(parents=True)
    lone.write_text('{"id": "ses_plan", "title": "week one"}')
    assert parser_for(lone) is None


# The older per-project tree OpenCode's own Storage migration copies from (sst/opencode
# packages/opencode/src/storage/storage.ts, MIGRATIONS[0]): ``<data>/project/<project>/storage/session/info/<id>.json``,
# ``…/session/message/<id>/<msg>.json``, ``…/session/part/<id>/<msg>/<part>.json``. The session object of that era
# names no directory (the migration finds the worktree in an assistant message's ``path.root``). Hand-written.
LEGACY_DATA = OWN / "legacy"
LEGACY_SESSION = (LEGACY_DATA / "project" / "-home-ana-code-lumen" / "storage" / "session" / "info"
                  / "ses_8d1e4f2a6b3cLegacyTree01.json")


def test_an_older_per_project_session_is_read():
    assert parser_for(LEGACY_SESSION) is not None and parser_for(LEGACY_SESSION).platform == "opencode"
    (session,), report = parse(LEGACY_SESSION)
    assert session.session_id == "ses_8d1e4f2a6b3cLegacyTree01" and session.title == "Debounce the search box"
    assert counts(session) == {("user", "text"): 1, ("assistant", "tool_call"): 1, ("user", "tool_result"): 1,
                               ("assistant", "text"): 1}
    assert session.messages[0].text == "the search box fires a request on every keystroke, debounce it by 250ms"
    assert session.cwd == "/home/ana/code/lumen" and session.project == "lumen"  # from the message's path
    assert report.bad_lines == 0


def test_older_per_project_sessions_are_found_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    shutil.copytree(LEGACY_DATA, tmp_path / "share" / "opencode")
    found = {p.name: parser.platform for p, parser in discover()}
    assert found == {LEGACY_SESSION.name: "opencode"}  # message and part files are not opened


def test_an_older_session_already_migrated_is_skipped(tmp_path):
    data = tmp_path / "opencode"
    shutil.copytree(LEGACY_DATA, data)
    copy = data / "storage" / "session" / "0a1b2c3d" / LEGACY_SESSION.name  # what the migration writes
    copy.parent.mkdir(parents=True)
    shutil.copy(LEGACY_SESSION, copy)
    legacy = data / LEGACY_SESSION.relative_to(LEGACY_DATA)
    sessions, report = parse(legacy)
    assert sessions == [] and any("migrated" in n for n in report.notes)


NO_DIR = OWN / "no-directory-db"


def test_a_store_whose_sessions_name_no_directory_is_read_with_the_projects_worktree(tmp_path):
    """Older OpenCode-family stores have no ``session.directory`` column: the folder is ``project.worktree``."""
    built = tmp_path / "opencode.db"
    conn = sqlite3.connect(built)
    conn.executescript((NO_DIR / "opencode.sql").read_text())
    conn.commit()
    dump = list(conn.iterdump())
    conn.close()
    committed = sqlite3.connect(f"{(NO_DIR / 'opencode.db').resolve().as_uri()}?mode=ro", uri=True)
    assert list(committed.iterdump()) == dump  # the committed store is the script
    committed.close()
    sessions, report = _by_id(NO_DIR / "opencode.db")
    assert report.notes == [] and report.bad_lines == 0
    main, sub = sessions["ses_5b0c1d2e3f40HarborMapOne"], sessions["ses_5b0c1d2e3f41HarborMapSub"]
    assert main.cwd == "/home/tomas/code/harbor-map" and main.project == "harbor-map"
    assert main.title == "Tide table parser off by one"
    assert main.started_at == "2026-01-06T12:00:00Z" and main.ended_at == "2026-01-06T12:01:30Z"
    assert user_texts(main) == ["the tide table for March starts a day late, check the parser"]
    assert counts(main) == {("user", "text"): 1, ("assistant", "text"): 1}
    assert sub.parent_session_id == main.session_id and sub.cwd == main.cwd
    outside = sessions["ses_5b0c1d2e3f42GlobalNoPath"]  # the global project's "/" is no folder of the session
    assert (outside.cwd, outside.project) == (None, None)
    assert user_texts(outside) == ["what is the unit of the tide height column?"]


def test_a_compaction_summary_is_flagged_and_its_prompts_are_not_the_users():
    """OpenCode compacts a session by a user message holding a ``compaction`` part and an assistant message with
    ``summary: true`` whose text is the summary (sst/opencode packages/opencode/src/session/compaction.ts,
    31e22f6); after an overflow it writes a ``synthetic`` "Continue…" prompt. Our own export in that shape."""
    (session,), report = parse(OWN / "export" / "compacted-session.json")
    assert user_texts(session) == ["night ferries after midnight vanish from the imported timetable"]
    answers = [(m.text[:20], FLAG_COMPACTION_SUMMARY in m.flags) for m in session.messages if m.role == "assistant"]
    assert answers == [("Times past 24:00 are", False), ("Summary: the user re", True),
                       ("Added a test with a ", False)]
    assert report.skipped_messages == 2  # the compaction request and the synthetic continuation
