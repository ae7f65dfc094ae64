"""One file wwt fails on costs that file only (issue 24).

When the store recursed once per new message, a long session raised RecursionError in the middle of `wwt ingest`:
the ingest stopped there, every rerun stopped at the same file, the files after it were never archived, and the
hook's worker charged the valid transcript until it was parked. Whatever wwt fails on next (a bug meeting some
file's data) must not repeat that: the file's own transaction is rolled back, it is named, the rest is archived,
the worker charges only its row. The failure is injected here (a fake for the one function that fails); the long
session itself goes through the real hook and worker. Logs are Claude Code JSONL as its format is documented."""

from __future__ import annotations

import json
import logging
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from long_session_log import SESSION, claude_record, write_long_session
from test_cli import run_wwt

from wwt import ingest as ingest_mod
from wwt.indexes import open_synced
from wwt.store import Store

OTHER = "7d2c51f0-4b1e-4c8e-9a55-0c0ffee00002"


def short_session(path: Path, session_id: str, text: str) -> None:
    rec = claude_record(0, None, "user", text)
    rec["sessionId"] = session_id
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")


def no_model():
    raise AssertionError("phase 1 loads no model")


@pytest.fixture
def two_logs(tmp_path, monkeypatch):
    monkeypatch.setenv("WWT_HOME", str(tmp_path / "home"))
    logs = tmp_path / "logs"
    logs.mkdir()
    write_long_session(logs / "a-first.jsonl", 30)
    short_session(logs / "b-after.jsonl", OTHER, "the zeppelin deploy key rotation")
    store = Store.open(tmp_path / "home" / "wwt.sqlite3")
    indexes, _ = open_synced(store, tmp_path / "home" / "index")
    yield logs, store, indexes
    indexes.close()
    store.close()


def chunks_of(store: Store, session_id: str) -> int:
    return store.conn.execute("SELECT COUNT(*) FROM chunks WHERE session_id=?", (session_id,)).fetchone()[0]


def messages_of(store: Store, session_id: str) -> int:
    return store.conn.execute("SELECT COUNT(*) FROM messages WHERE session_id=?", (session_id,)).fetchone()[0]


def test_a_file_the_store_fails_on_is_rolled_back_and_the_files_after_it_are_archived(two_logs, monkeypatch):
    logs, store, indexes = two_logs
    real = Store.merge_messages

    def failing(self, session_id, *args, **kwargs):
        if session_id == SESSION:
            raise RecursionError("maximum recursion depth exceeded")
        return real(self, session_id, *args, **kwargs)

    monkeypatch.setattr(Store, "merge_messages", failing)
    summary = ingest_mod.ingest([logs], store, indexes, no_model, backfill=False)
    first = str((logs / "a-first.jsonl").resolve())
    assert list(summary.failed) == [first] and "RecursionError" in summary.failed[first]
    assert any("a-first.jsonl not archived" in n and "RecursionError" in n for n in summary.notes), summary.notes
    assert messages_of(store, OTHER) == 1 and chunks_of(store, OTHER) == 1
    assert messages_of(store, SESSION) == 0 and store.get_file(first) is None  # rolled back: retried next time

    monkeypatch.setattr(Store, "merge_messages", real)
    again = ingest_mod.ingest([logs], store, indexes, no_model, backfill=False)
    assert again.failed == {} and again.files_parsed == 1 and again.files_skipped == 1
    assert messages_of(store, SESSION) == 30 and chunks_of(store, SESSION) > 0


def test_a_session_the_chunker_fails_on_stays_dirty_and_the_files_after_it_are_indexed(two_logs, monkeypatch):
    logs, store, indexes = two_logs
    real = ingest_mod.chunk_session
    calls: list[str] = []

    def failing(messages, session_id, **kwargs):
        calls.append(session_id)
        if session_id == SESSION:
            raise TypeError("unhashable type: 'list'")
        return real(messages, session_id=session_id, **kwargs)

    monkeypatch.setattr(ingest_mod, "chunk_session", failing)
    summary = ingest_mod.ingest([logs], store, indexes, no_model, backfill=False)
    assert list(summary.failed) == [str((logs / "a-first.jsonl").resolve())]
    assert calls.count(SESSION) == 1  # not retried after every following file
    assert chunks_of(store, OTHER) == 1 and indexes.lexical.count() == 1
    assert messages_of(store, SESSION) == 30 and chunks_of(store, SESSION) == 0
    assert SESSION in store.dirty_sessions()

    monkeypatch.setattr(ingest_mod, "chunk_session", real)
    again = ingest_mod.ingest([logs], store, indexes, no_model, backfill=False)
    assert again.failed == {} and chunks_of(store, SESSION) > 0 and not store.dirty_sessions()


def test_the_worker_charges_only_the_row_of_the_file_wwt_failed_on(two_logs, monkeypatch):
    from wwt.service import Memory
    from wwt.worker import drain_once

    logs, store, indexes = two_logs
    real = Store.merge_messages

    def failing(self, session_id, *args, **kwargs):
        if session_id == SESSION:
            raise RecursionError("maximum recursion depth exceeded")
        return real(self, session_id, *args, **kwargs)

    monkeypatch.setattr(Store, "merge_messages", failing)
    for name in ("a-first.jsonl", "b-after.jsonl"):
        store.enqueue(str(logs / name), "claude-code", None)
    memory = Memory(store.path.parent)
    try:
        assert drain_once(memory, store, logging.getLogger("test")) == 2
    finally:
        memory.close()
    rows = {Path(r["path"]).name: r for r in store.conn.execute("SELECT * FROM ingest_queue")}
    assert set(rows) == {"a-first.jsonl"}  # b's row is done
    assert rows["a-first.jsonl"]["attempts"] == 1 and "RecursionError" in rows["a-first.jsonl"]["last_error"]
    assert messages_of(store, OTHER) == 1


def test_a_hook_queued_long_session_is_archived_by_the_worker_not_parked(tmp_path, model_dir):
    """Through the real hook entry point and the real worker process: a 2,000-message transcript (which made
    the store recurse past Python's limit) and a short one queued after it."""
    home = tmp_path / "wwt-home"
    logs = tmp_path / "logs"
    logs.mkdir()
    write_long_session(logs / "long.jsonl", 2_000)
    short_session(logs / "short.jsonl", OTHER, "the zeppelin deploy key rotation")
    env = _env(home, model_dir)
    for name in ("long.jsonl", "short.jsonl"):
        raw = json.dumps({"session_id": str(uuid.uuid4()), "transcript_path": str(logs / name),
                          "hook_event_name": "Stop"}).encode()
        proc = subprocess.run([sys.executable, "-m", "wwt", "hook", "claude-code"], input=raw, env=env,
                              capture_output=True, timeout=60)
        assert proc.returncode == 0, proc
    from wwt.hook import worker_running

    db = home / "wwt.sqlite3"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and (worker_running(home) or _queue(db)):  # the hook started the worker
        time.sleep(0.3)
    assert not worker_running(home), "the worker did not finish"
    queue = _queue(db)
    conn = sqlite3.connect(db)
    try:
        stored = dict(conn.execute("SELECT session_id, COUNT(*) FROM messages GROUP BY session_id").fetchall())
    finally:
        conn.close()
    assert queue == [], queue  # nothing retried, nothing parked
    assert stored == {SESSION: 2_000, OTHER: 1}
    log = (home / "ingest.log").read_text(encoding="utf-8") if (home / "ingest.log").exists() else ""
    assert "RecursionError" not in log and "parked" not in log.replace("(retried, then parked)", ""), log
    found = run_wwt("search", "quokka1999", "--all", "--json", home=home, model_dir=model_dir)
    assert found.returncode == 0 and SESSION in found.stdout, found.stdout + found.stderr


def _queue(db: Path) -> list[tuple]:
    if not db.exists():
        return [("no store yet",)]
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute("SELECT path, attempts, error, last_error FROM ingest_queue").fetchall()
    except sqlite3.OperationalError:  # not created yet
        return [("no queue yet",)]
    finally:
        conn.close()


def _env(home: Path, model_dir: Path) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if k != "WWT_DEBUG"}
    env.update(WWT_HOME=str(home), WWT_MODEL_DIR=str(model_dir), HOME=str(home.parent), NO_COLOR="1",
               WWT_ENGINE="off", WWT_WORKER_DEBOUNCE_S="0.2", WWT_WORKER_MAX_WAIT_S="1", WWT_WORKER_IDLE_S="1")
    return env
