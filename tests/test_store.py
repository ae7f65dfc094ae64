"""Store spec: schema, migrations, refusal of foreign/newer/corrupt files, permissions, merging, queue."""

from __future__ import annotations

import os
import sqlite3
import stat

import pytest

from wwt.errors import StoreError, UsageError
from wwt.models import FLAG_SUBAGENT, Filters, Message, Session
from wwt.store import MIGRATIONS, SCHEMA_VERSION, Store, StoredChunk, merge_order


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("WWT_HOME", str(tmp_path / "wwt-home"))
    return tmp_path / "wwt-home"


def msg(nid: str, text: str = "", role: str = "user", ts: str | None = None) -> Message:
    return Message(nid, role, "text", text or f"text of {nid}", timestamp=ts)


def add_session(store: Store, session: Session, path: str = "/logs/a.jsonl", full: bool = True) -> tuple[int, int]:
    with store.transaction():
        fid = store.upsert_file(path, session.platform, 10, 10, 10, "h")
        root = session.parent_session_id or session.session_id
        if session.parent_session_id:
            store.ensure_stub_session(session.parent_session_id, session)
        store.upsert_session(session, root, fid)
        return store.merge_messages(session.session_id, session.messages, fid, full)


def chunk(key: str, sid: str, root: str | None = None, first: int = 0, last: int = 1, ts=("2026-01-01T00:00:00Z",) * 2):
    return StoredChunk(key, sid, root or sid, first, last, ts[0], ts[1], f"embed {key}", f"lex {key}", f"show {key}", f"h-{key}")


# ---------------------------------------------------------------------------------------------- opening


def test_new_store_is_private_and_at_the_current_schema(home):
    with Store.open() as store:
        assert store.schema_version() == SCHEMA_VERSION
        assert store.get_meta("app") == "whatwasthat"
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert stat.S_IMODE(os.stat(home).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(home / "wwt.sqlite3").st_mode) == 0o600


def test_an_explicit_path_never_creates_the_default_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "fakehome"))
    monkeypatch.delenv("WWT_HOME", raising=False)
    with Store.open(tmp_path / "elsewhere" / "s.sqlite3"):
        pass
    assert not (tmp_path / "fakehome" / ".wwt").exists()
    assert stat.S_IMODE(os.stat(tmp_path / "elsewhere").st_mode) == 0o700


def test_older_schema_is_migrated_keeping_its_data(home):
    path = home / "wwt.sqlite3"
    home.mkdir()
    conn = sqlite3.connect(path)
    conn.executescript(MIGRATIONS[1])
    conn.executemany("INSERT INTO meta VALUES (?, ?)", [("app", "whatwasthat"), ("schema_version", "1"), ("change_counter", "7")])
    conn.execute("INSERT INTO sessions(session_id, platform, root_session_id) VALUES ('s1', 'claude-code', 's1')")
    conn.execute(
        "INSERT INTO chunks(chunk_key, session_id, root_session_id, first_seq, last_seq, embed_text, lexical_text,"
        " display_text, embed_hash) VALUES ('k', 's1', 's1', 0, 1, 'e', 'l', 'd', 'h')"
    )
    conn.commit()
    conn.close()
    with Store.open(path) as store:
        assert store.schema_version() == SCHEMA_VERSION
        assert store.change_counter() == 7
        (hit,) = store.chunks_by_ids(list(store.all_chunk_ids()))
        assert hit.chunk_key == "k" and hit.start_ts is None and hit.platform == "claude-code"
        store.enqueue("/x.jsonl", None, None)  # the v2 queue exists now
        assert store.queue_size() == 1


def test_two_processes_creating_the_same_new_store_do_not_collide(tmp_path):
    """A hook and the engine may both find the store file empty (schema 0) and both migrate: whoever comes
    second must see the other's work inside its write transaction instead of failing on CREATE TABLE."""
    path = tmp_path / "wwt.sqlite3"
    first = Store.open(path)  # created and migrated by one process...
    late = Store(sqlite3.connect(str(path), isolation_level=None, check_same_thread=False), path, False)
    try:
        late._migrate(0, SCHEMA_VERSION)  # ...while the other had looked before that and saw version 0
        assert late._version_now() == SCHEMA_VERSION
        first.enqueue("/logs/a.jsonl", "claude-code", "s1")
        assert first.queue_size() == 1
    finally:
        late.conn.close()
        first.close()


def test_newer_schema_is_refused_with_one_line(home):
    with Store.open() as store:
        store.set_meta("schema_version", str(SCHEMA_VERSION + 1))
    with pytest.raises(StoreError) as err:
        Store.open()
    assert "newer wwt" in str(err.value) and "\n" not in str(err.value)


def test_a_foreign_sqlite_file_is_refused_and_left_untouched(home):
    home.mkdir()
    path = home / "wwt.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE photos (id INTEGER)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a wwt store"):
        Store.open()
    assert path.read_bytes() == before


def test_a_non_sqlite_file_is_refused_with_the_recovery_path(home):
    home.mkdir()
    (home / "wwt.sqlite3").write_text("hello, not a database")
    with pytest.raises(StoreError) as err:
        Store.open()
    assert "mv " in str(err.value) and "wwt ingest" in str(err.value)


def test_a_corrupted_store_raises_store_error_not_an_empty_result(home):
    with Store.open() as store:
        with store.transaction():
            for i in range(300):
                store.upsert_file(f"/logs/{i}.jsonl" + "x" * 200, "codex-cli", i, i, i, None)
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    path = home / "wwt.sqlite3"
    data = bytearray(path.read_bytes())
    for offset in range(4096, len(data), 4096):  # smash every page after the first (schema page stays)
        data[offset : offset + 200] = b"\xff" * 200
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="unreadable|not a wwt"):
        store = Store.open()
        store.all_files()
        store.stats()


def test_readonly_open_of_a_missing_store_says_what_to_do(home):
    with pytest.raises(StoreError, match="wwt ingest"):
        Store.open(readonly=True)


# ---------------------------------------------------------------------------------------------- messages


def test_merge_order_appends_and_inserts_after_the_predecessor():
    assert merge_order(["a", "b"], ["a", "b", "c"]) == ["a", "b", "c"]
    assert merge_order(["a", "c"], ["a", "b", "c"]) == ["a", "b", "c"]
    assert merge_order(["b"], ["a", "b"]) == ["a", "b"]
    assert merge_order([], ["x", "y"]) == ["x", "y"]
    assert merge_order(["a", "b"], ["c"], incremental=True) == ["a", "b", "c"]
    assert merge_order(["a", "b"], ["c"]) == ["c", "a", "b"]


def test_the_same_session_from_two_files_merges_by_message_id(home):
    with Store.open() as store:
        original = Session("s1", "claude-code", "/logs/a.jsonl", messages=[msg("1"), msg("2", role="assistant")])
        copy = Session("s1", "claude-code", "/backup/a.jsonl", messages=[msg("1"), msg("2", role="assistant"), msg("3")])
        assert add_session(store, original) == (2, 0)
        assert add_session(store, copy, path="/backup/a.jsonl") == (1, 0)
        rows = store.get_messages("s1")
        assert [(m.native_id, m.seq) for m in rows] == [("1", 0), ("2", 1), ("3", 2)]


def test_a_second_file_that_continues_a_session_comes_after_it_whichever_is_read_first(home):
    """Gemini CLI writes a resumed conversation to a new ``session-*.json`` under the same ``sessionId`` (genuine
    pair: mischa-thisness/M-Gemini ``chat_logs/session-2026-01-10T01-38-…`` and ``…T01-46-…``, d0521628): the
    archive holds one session whose messages run in time order, whichever file is archived first."""
    early = [msg("e1", ts="2026-01-10T01:38:51Z"), msg("e2", role="assistant", ts="2026-01-10T01:40:02Z")]
    late = [msg("l1", ts="2026-01-10T01:50:02Z"), msg("l2", role="assistant", ts="2026-01-10T01:55:10Z")]
    for first, second in (((early, "/chats/a.json"), (late, "/chats/b.json")),
                          ((late, "/chats/b.json"), (early, "/chats/a.json"))):
        with Store.open(home / f"{first[1][-6]}.sqlite3") as store:
            for messages, path in (first, second):
                add_session(store, Session("1deca764", "gemini-cli", path, messages=messages), path=path)
            assert [m.native_id for m in store.get_messages("1deca764")] == ["e1", "e2", "l1", "l2"]


def test_a_rewind_drops_messages_only_that_file_had(home):
    with Store.open() as store:
        add_session(store, Session("s1", "gemini-cli", "/a.json", messages=[msg("1"), msg("2"), msg("3")]))
        add_session(store, Session("s1", "gemini-cli", "/copy.json", messages=[msg("1"), msg("2")]), path="/copy.json")
        # /a.json is rewritten without 2 and 3: 3 goes, 2 stays because /copy.json still has it
        assert add_session(store, Session("s1", "gemini-cli", "/a.json", messages=[msg("1"), msg("4")])) == (1, 1)
        rows = store.get_messages("s1")
        assert [m.native_id for m in rows] == ["1", "4", "2"]  # 4 follows its predecessor in the new parse
        assert [m.seq for m in rows] == [0, 1, 2]


def test_an_incremental_parse_never_removes_messages(home):
    with Store.open() as store:
        add_session(store, Session("s1", "codex-cli", "/a.jsonl", messages=[msg("1"), msg("2")]))
        assert add_session(store, Session("s1", "codex-cli", "/a.jsonl", messages=[msg("3")]), full=False) == (1, 0)
        assert [m.native_id for m in store.get_messages("s1")] == ["1", "2", "3"]


def test_session_metadata_is_filled_in_never_erased(home):
    with Store.open() as store:
        add_session(store, Session("s1", "claude-code", "/a", project="wwt", git_branch="main",
                                   started_at="2026-01-02T00:00:00Z", messages=[msg("1")]))
        add_session(store, Session("s1", "claude-code", "/a", title="Fix the lock",
                                   started_at="2026-01-01T00:00:00Z", ended_at="2026-01-03T00:00:00Z", messages=[]))
        row = store.get_session("s1")
        assert (row.project, row.git_branch, row.title) == ("wwt", "main", "Fix the lock")
        assert (row.started_at, row.ended_at) == ("2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z")


def test_subagent_messages_are_interleaved_in_the_parent_view_and_flagged(home):
    with Store.open() as store:
        parent = Session("root", "claude-code", "/p.jsonl", project="wwt", messages=[
            msg("p1", ts="2026-01-01T00:00:00Z"), msg("p2", role="assistant", ts="2026-01-01T00:05:00Z")])
        sub = Session("agent-1", "claude-code", "/p/subagents/agent-1.jsonl", parent_session_id="root", project="wwt", messages=[
            msg("s1", ts="2026-01-01T00:01:00Z"), msg("s2", role="assistant", ts="2026-01-01T00:02:00Z")])
        add_session(store, sub, path=sub.source_path)  # subagent first: the parent is a stub until it arrives
        assert store.get_session("root").project == "wwt"
        add_session(store, parent, path=parent.source_path)
        rows = store.get_messages("root")
        assert [m.native_id for m in rows] == ["p1", "s1", "s2", "p2"]
        assert [FLAG_SUBAGENT in m.flags for m in rows] == [False, True, True, False]
        assert rows[1].session_id == "agent-1" and rows[1].seq == 0
        assert store.get_session("root").subagent_ids == ("agent-1",)
        assert store.get_session("root").source_path == "/p.jsonl"


def test_session_prefix_lookup(home):
    with Store.open() as store:
        add_session(store, Session("abcd-1111", "codex-cli", "/a", messages=[msg("1")]))
        add_session(store, Session("abcd-2222", "codex-cli", "/b", messages=[msg("1")]), path="/b")
        assert store.get_session("abcd-1").session_id == "abcd-1111"
        assert store.get_session("zzzz") is None
        with pytest.raises(UsageError, match="ambiguous"):
            store.get_session("abcd")


# ---------------------------------------------------------------------------------------------- chunks


def test_chunks_report_the_root_conversation_and_filters_use_its_metadata(home):
    with Store.open() as store:
        add_session(store, Session("root", "claude-code", "/p", project="wwt", project_path="/src/wwt",
                                   git_branch="main", cwd="/src/wwt", messages=[msg("1")]), path="/p")
        add_session(store, Session("agent-1", "claude-code", "/s", parent_session_id="root", messages=[msg("1")]),
                    path="/s")
        add_session(store, Session("other", "codex-cli", "/o", project="blog", cwd="/src/blog", messages=[msg("1")]),
                    path="/o")
        with store.transaction():
            (a,), _ = store.replace_chunks("root", [chunk("a", "root", ts=("2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z"))])
            (b,), _ = store.replace_chunks("agent-1", [chunk("b", "agent-1", "root")])
            (c,), _ = store.replace_chunks("other", [chunk("c", "other", ts=("2026-02-01T00:00:00Z",) * 2)])
        hit_b = store.chunks_by_ids([b])[0]
        assert (hit_b.session_id, hit_b.source_session_id, hit_b.project) == ("root", "agent-1", "wwt")
        assert [h.chunk_key for h in store.chunks_by_ids([c, 999, a])] == ["c", "a"]
        assert store.chunk_ids_matching(Filters()) is None
        assert store.chunk_ids_matching(Filters(project="wwt")) == {a, b}
        assert store.chunk_ids_matching(Filters(project="/src/wwt")) == {a, b}
        assert store.chunk_ids_matching(Filters(platform="codex-cli")) == {c}
        assert store.chunk_ids_matching(Filters(git_branch="main")) == {a, b}
        assert store.chunk_ids_matching(Filters(cwd="/src")) == {a, b, c}
        assert store.chunk_ids_matching(Filters(cwd="/src/wwt")) == {a, b}
        assert store.chunk_ids_matching(Filters(since="2026-01-15T00:00:00Z")) == {c}
        assert store.chunk_ids_matching(Filters(until="2026-01-15T00:00:00Z")) == {a, b}
        assert store.chunk_ids_matching(Filters(exclude_session_id="root")) == {c}
        assert store.chunk_by_key("b").first_seq == 0
        assert store.projects() == ["blog", "wwt"]


def test_replace_chunks_keeps_ids_of_unchanged_keys(home):
    with Store.open() as store:
        add_session(store, Session("s", "codex-cli", "/a", messages=[msg("1")]))
        with store.transaction():
            first, _ = store.replace_chunks("s", [chunk("k1", "s"), chunk("k2", "s")])
        with store.transaction():
            added, removed = store.replace_chunks("s", [chunk("k1", "s"), chunk("k3", "s")])
        assert len(added) == 1 and removed == [first[1]]
        assert store.chunk_keys("s")["k1"] == first[0]


def test_chunk_ids_are_never_reused_so_a_stale_index_entry_cannot_point_at_another_chunk(home):
    with Store.open() as store:
        add_session(store, Session("s", "codex-cli", "/a", messages=[msg("1")]))
        with store.transaction():
            (old,), _ = store.replace_chunks("s", [chunk("k1", "s")])
        with store.transaction():
            (new,), removed = store.replace_chunks("s", [chunk("k2", "s")])
        assert removed == [old] and new != old


def test_vectors_are_cached_by_text_hash(home):
    with Store.open() as store:
        store.put_vectors([("h1", 4, b"\x00" * 16)])
        store.put_vectors([("h1", 4, b"\x01" * 16)])  # first write wins: the same text never changes vector
        assert store.cached_vectors(["h1", "h2"]) == {"h1": b"\x00" * 16}


def test_stats_and_change_counter(home):
    with Store.open() as store:
        add_session(store, Session("s", "codex-cli", "/a", messages=[msg("1"), msg("2")]))
        before = store.change_counter()
        assert store.bump_change_counter() == before + 1
        stats = store.stats()
        assert (stats["sessions"], stats["messages"], stats["files"]) == (1, 2, 1)
        assert stats["per_platform"]["codex-cli"]["sessions"] == 1
        assert stats["last_ingest"] is not None and stats["db_bytes"] > 0


# ---------------------------------------------------------------------------------------------- queue


def test_queue_dedupes_claims_and_finishes(home):
    with Store.open() as store:
        store.enqueue("/a.jsonl", "claude-code", "s1")
        store.enqueue("/a.jsonl", "claude-code", "s1")
        store.enqueue("/b.jsonl", None, None)
        items = store.claim_queue(10)
        assert [i.path for i in items] == ["/a.jsonl", "/b.jsonl"]
        assert store.claim_queue(10) == []  # claimed already
        store.enqueue("/a.jsonl", "claude-code", "s1")  # changed again while being processed: a new row
        store.finish_queue([items[0].id])
        store.finish_queue([items[1].id], error="parse failed")  # retried later
        again = store.claim_queue(10)
        assert sorted(i.path for i in again) == ["/a.jsonl", "/b.jsonl"]
        assert next(i for i in again if i.path == "/b.jsonl").attempts == 2


def test_a_failing_item_stops_being_retried(home):
    with Store.open() as store:
        store.enqueue("/bad.jsonl", None, None)
        for _ in range(3):
            (item,) = store.claim_queue(1)
            store.finish_queue([item.id], error="boom")
        assert store.claim_queue(1) == [] and store.queue_size() == 0


def test_an_abandoned_claim_is_claimable_again(home, monkeypatch):
    import wwt.store as store_mod

    with Store.open() as store:
        store.enqueue("/a.jsonl", None, None)
        assert len(store.claim_queue(1)) == 1
        monkeypatch.setattr(store_mod.queue, "QUEUE_CLAIM_TIMEOUT_S", -1)
        assert len(store.claim_queue(1)) == 1


def test_the_queue_works_from_a_second_connection_while_a_writer_is_open(home):
    with Store.open() as writer, Store.open() as hook:
        hook.enqueue("/a.jsonl", None, None)
        assert writer.queue_size() == 1


def test_a_chunks_requests_read_back_and_a_damaged_field_reads_as_none():
    from wwt.store.rows import requests_of, requests_text

    assert requests_of(requests_text(["user: 캐시 TTL 어떻게 정했지?", "user: and the \"retry\" rule"])) == [
        "user: 캐시 TTL 어떻게 정했지?", "user: and the \"retry\" rule"]
    assert requests_text([]) == "" and requests_of("") == [] and requests_of(None) == []
    for damaged in ('["user: cut off', "{}", "[1, 2]", "null"):
        assert requests_of(damaged) == []
