"""End-to-end ingest over the real fixtures (copied into tmp dirs) with the real parsers, the real e5 ONNX
model, real tantivy and real hnswlib."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
from _shared import REAL_FIXTURES

import wwt.parsers
from wwt import ingest as ingest_mod
from wwt.indexes import LEXICAL_DIR, VECTOR_DIR, Indexes, open_synced
from wwt.store import Store

FIXTURES = REAL_FIXTURES
DEFAULT_MODEL_DIR = "/root/.cache/wwt-e5model/model"
CRUD = "claude-code/agentlogs__crud.jsonl"
SUBAGENT_FILES = ("claude-code/spotter__subagent.jsonl", "claude-code/spotter__agent-aac57f5.jsonl")
GEMINI_JSON = "gemini-cli/VibeCodingTracker@3d28cf6__test_conversation_gemini.json"


class CountingEmbedder:
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, real):
        self.real = real
        self.info = real.info
        self.texts: list[str] = []

    def embed_passages(self, texts):
        self.texts += list(texts)
        return self.real.embed_passages(texts)

    def embed_requests(self, texts):
        return self.real.embed_requests(texts)


@pytest.fixture(scope="module")
def real_embedder():
    os.environ.setdefault("WWT_MODEL_DIR", DEFAULT_MODEL_DIR)
    from wwt.embedder import load_embedder

    return load_embedder()


@pytest.fixture
def env(tmp_path, monkeypatch, real_embedder):
    monkeypatch.setenv("WWT_HOME", str(tmp_path / "home"))
    logs = tmp_path / "logs"
    return Env(tmp_path / "home", logs, real_embedder)


class Env:
    def __init__(self, home: Path, logs: Path, real) -> None:
        self.home, self.logs, self.real = home, logs, real
        self.store = None
        self.indexes = None

    def copy(self, *names: str) -> list[Path]:
        out = []
        for name in names or [str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*") if p.is_file()]:
            dst = self.logs / name
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(FIXTURES / name, dst)
            out.append(dst)
        return out

    def open(self):
        if self.store is None:
            self.store = Store.open(self.home / "wwt.sqlite3")
            self.indexes, _ = open_synced(self.store, self.home / "index")
        return self.store, self.indexes

    def reopen(self):
        self.close()
        return self.open()

    def close(self):
        if self.indexes is not None:
            self.indexes.close()
        if self.store is not None:
            self.store.close()
        self.store = self.indexes = None

    def ingest(self, paths=None):
        store, indexes = self.open()
        embedder = CountingEmbedder(self.real)
        summary = ingest_mod.ingest(paths or [self.logs], store, indexes, lambda: embedder)
        return summary, embedder

    def chunk_keys(self) -> set[str]:
        store, _ = self.open()
        return {r[0] for r in store.conn.execute("SELECT chunk_key FROM chunks")}


def claude_line(session_id: str, parent: str, role: str, text: str, ts: str) -> tuple[str, str]:
    uid = str(uuid.uuid4())
    message = {"role": role, "content": text if role == "user" else [{"type": "text", "text": text}]}
    if role == "assistant":
        message.update({"id": f"msg_{uid[:8]}", "type": "message", "model": "claude-sonnet-4-5"})
    line = {
        "parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/Users/philipp/dev/vibeinsights",
        "sessionId": session_id, "version": "2.0.14", "gitBranch": "main", "type": role, "message": message,
        "uuid": uid, "timestamp": ts,
    }
    return json.dumps(line) + "\n", uid


def last_uuid(path: Path) -> tuple[str, str]:
    session, parent = "", ""
    for line in path.read_text().splitlines():
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if d.get("uuid"):
            parent, session = d["uuid"], d.get("sessionId", session)
    return session, parent


def append_turns(path: Path, n_pairs: int, start_minute: int = 0) -> None:
    session, parent = last_uuid(path)
    with open(path, "a", encoding="utf-8") as fh:
        for i in range(n_pairs):
            m = start_minute + i
            ts = f"2025-10-13T{10 + m // 60:02d}:{m % 60:02d}:00.000Z"
            line, parent = claude_line(session, parent, "user",
                                       f"Follow-up {m}: why does the JOKE.md footer break the markdown linter rule MD041?", ts)
            fh.write(line)
            line, parent = claude_line(session, parent, "assistant",
                                       f"Answer {m}: MD041 wants the first line to be a top-level heading; the footer "
                                       f"is fine, the title was a bold line instead of '# Title'. I changed it.", ts)
            fh.write(line)


def assert_indexes_match(store, indexes):
    ids = store.all_chunk_ids()
    assert ids, "nothing was indexed"
    assert indexes.lexical.all_ids() == ids
    assert indexes.vector.all_ids() == ids


# ---------------------------------------------------------------------------------------------- tests


def test_first_ingest_indexes_everything_and_a_second_one_parses_and_embeds_nothing(env, monkeypatch):
    env.copy()
    store, indexes = env.open()
    ticks = []
    emb1 = CountingEmbedder(env.real)
    first = ingest_mod.ingest([env.logs], store, indexes, lambda: emb1, progress=lambda *t: ticks.append(t))
    assert first.files_parsed == first.files_seen > 20
    assert ticks[0][:2] == (first.files_seen, 0) and ticks[-1] == (first.files_seen, first.files_seen, None)
    assert first.chunks_added == store.chunk_count() == len(emb1.texts) > 10
    assert_indexes_match(store, indexes)
    assert store.stats()["per_platform"].keys() == {"claude-code", "codex-cli", "gemini-cli"}

    calls = []
    real_parse = wwt.parsers.parse_file
    monkeypatch.setattr(wwt.parsers, "parse_file", lambda *a, **k: calls.append(a) or real_parse(*a, **k))
    counter = store.change_counter()
    second, emb2 = env.ingest()
    assert calls == [] and emb2.texts == []
    assert second.files_skipped == second.files_seen and second.chunks_added == second.chunks_removed == 0
    assert store.change_counter() == counter  # nothing changed: readers need not reload


def test_a_first_ingest_detects_each_files_format_once(env, monkeypatch):
    """Discovery already chose each file's parser; reading the file must not vote on its first records again
    (5,280 files of a 20k-chunk history: ~4 % of phase 1 went to detecting every file twice)."""
    env.copy()
    detected: list[Path] = []
    real_for = wwt.parsers.parser_for
    monkeypatch.setattr(wwt.parsers, "parser_for", lambda path: detected.append(Path(path)) or real_for(path))
    summary, _ = env.ingest()
    assert summary.files_parsed > 20
    assert sorted(detected) == sorted(set(detected))  # once each
    candidates = [p for p in env.logs.rglob("*.json*") if not p.name.endswith(".meta.json")]
    assert len(detected) == len(candidates)


def test_a_re_ingest_of_unchanged_files_does_not_open_them_to_detect_their_format(env, monkeypatch):
    env.copy()
    first, _ = env.ingest()
    detected: list[Path] = []
    real_for = wwt.parsers.parser_for
    monkeypatch.setattr(wwt.parsers, "parser_for", lambda path: detected.append(Path(path)) or real_for(path))
    again, _ = env.ingest()
    archived = {row.path for row in env.store.all_files() if row.platform}
    assert len(archived) > 20 and again.files_seen == first.files_seen
    assert not archived & {str(p.resolve()) for p in detected}  # only files that gave nothing are looked at again
    detected.clear()
    changed = Path(sorted(archived)[0])
    with changed.open("ab") as handle:
        handle.write(b"\n")  # a changed file is detected again
    env.ingest()
    looked_at = {str(p.resolve()) for p in detected}
    assert str(changed) in looked_at and not (archived - {str(changed)}) & looked_at


def test_touching_a_file_without_changing_it_does_not_parse_it(env, monkeypatch):
    (path,) = env.copy(GEMINI_JSON)
    env.ingest()
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 5_000_000_000))
    calls = []
    real_parse = wwt.parsers.parse_file
    monkeypatch.setattr(wwt.parsers, "parse_file", lambda *a, **k: calls.append(a) or real_parse(*a, **k))
    summary, _ = env.ingest()
    assert calls == [] and summary.files_skipped == 1


def test_appending_one_turn_reads_from_the_offset_and_re_embeds_at_most_two_chunks(env, monkeypatch):
    (path,) = env.copy(CRUD)
    append_turns(path, 12)  # a longer conversation: several windows
    env.ingest()
    store, indexes = env.open()
    before = store.chunk_keys(store.file_session_ids(store.get_file(str(path.resolve())).id)[0])
    assert len(before) >= 4
    size_before = path.stat().st_size

    offsets = []
    real_parse = wwt.parsers.parse_file
    monkeypatch.setattr(wwt.parsers, "parse_file", lambda p, start_offset=0, parser=None: offsets.append(start_offset) or real_parse(p, start_offset, parser))
    append_turns(path, 1, start_minute=50)
    summary, emb = env.ingest()
    assert offsets and offsets[0] > 0 and offsets[0] <= size_before
    assert 1 <= len(emb.texts) <= 2
    assert summary.messages_added == 2
    after = store.chunk_keys(next(iter(store.file_session_ids(store.get_file(str(path.resolve())).id))))
    kept = set(before) & set(after)
    assert len(kept) >= len(before) - 2
    assert all(before[k] == after[k] for k in kept)  # unchanged chunks keep their row id in both indexes
    assert_indexes_match(store, indexes)


def test_rewriting_a_file_drops_stale_chunks_from_both_indexes(env):
    (path,) = env.copy(GEMINI_JSON)
    env.ingest()
    store, indexes = env.open()
    old_ids = store.all_chunk_ids()
    messages_before = store.stats()["messages"]
    data = json.loads(path.read_text())
    data["messages"] = data["messages"][:4]  # a rewind: the agent rewrote the file with fewer messages
    data["messages"][0]["content"] = "Rewritten question: how do I pin the ONNX runtime version in pyproject?"
    path.write_text(json.dumps(data))
    summary, _ = env.ingest()
    assert summary.messages_removed > 0 and summary.chunks_removed >= 1
    assert store.stats()["messages"] < messages_before
    assert not (old_ids & store.all_chunk_ids())
    assert not (old_ids & indexes.lexical.all_ids()) and not (old_ids & indexes.vector.all_ids())
    assert_indexes_match(store, indexes)


def test_a_jsonl_rewritten_shorter_is_reparsed_whole_and_diffed(env, monkeypatch):
    (path,) = env.copy(CRUD)
    append_turns(path, 8)
    env.ingest()
    store, indexes = env.open()
    messages = store.stats()["messages"]
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[: len(lines) - 6]))  # the agent rewrote history: last 3 exchanges gone
    offsets = []
    real_parse = wwt.parsers.parse_file
    monkeypatch.setattr(wwt.parsers, "parse_file", lambda p, start_offset=0, parser=None: offsets.append(start_offset) or real_parse(p, start_offset, parser))
    summary, _ = env.ingest()
    assert offsets == [0]
    assert summary.messages_removed == 6 and store.stats()["messages"] == messages - 6
    assert summary.chunks_removed >= 1
    assert_indexes_match(store, indexes)


def test_a_copy_of_a_log_in_two_places_merges_into_one_session(env):
    (path,) = env.copy(CRUD)
    env.ingest()
    store, _ = env.open()
    stats = store.stats()
    backup = env.logs / "backup" / path.name
    backup.parent.mkdir()
    shutil.copyfile(path, backup)
    append_turns(backup, 1)  # the copy even has one more exchange
    summary, emb = env.ingest()
    after = store.stats()
    assert (after["sessions"], after["files"]) == (stats["sessions"], 2)
    assert after["messages"] == stats["messages"] + 2 and summary.messages_added == 2
    assert len(emb.texts) <= 2


def test_a_deleted_source_file_keeps_its_archive(env):
    (path,) = env.copy(CRUD)
    env.ingest()
    store, indexes = env.open()
    stats = store.stats()
    path.unlink()
    summary, emb = env.ingest()
    assert summary.files_missing == 1 and emb.texts == []
    after = store.stats()
    assert (after["messages"], after["chunks"], after["files_missing"]) == (stats["messages"], stats["chunks"], 1)
    assert_indexes_match(store, indexes)
    assert indexes.lexical.search("JOKE.md", None, 5)


def test_subagent_chunks_group_under_the_parent_conversation(env):
    env.copy(*SUBAGENT_FILES)
    env.ingest()
    store, _ = env.open()
    rows = store.conn.execute(
        "SELECT c.id, c.session_id, c.root_session_id FROM chunks c JOIN sessions s ON s.session_id=c.session_id "
        "WHERE s.parent_session_id IS NOT NULL"
    ).fetchall()
    assert rows
    for chunk_id, source, root in rows:
        assert source != root
        (hit,) = store.chunks_by_ids([chunk_id])
        assert hit.session_id == root and hit.source_session_id == source
        assert store.get_session(root) is not None


def test_missing_or_broken_indexes_are_rebuilt_from_sqlite_without_embedding(env):
    env.copy()
    env.ingest()
    store, indexes = env.open()
    ids = store.all_chunk_ids()
    probe = next(iter(ids))
    env.close()

    shutil.rmtree(env.home / "index" / VECTOR_DIR)
    store, indexes = env.open()  # open_synced repairs
    assert indexes.vector.all_ids() == ids and indexes.lexical.all_ids() == ids
    (stored,) = store.conn.execute(
        "SELECT e.vector FROM chunks c JOIN embeddings e ON e.text_hash=c.embed_hash WHERE c.id=?", (probe,)
    ).fetchone()
    best = indexes.vector.search(np.frombuffer(stored, dtype=np.float32), 1, None)
    assert best[0][0] == probe
    env.close()

    shutil.rmtree(env.home / "index" / LEXICAL_DIR)
    (env.home / "index" / "synced.json").unlink(missing_ok=True)
    store, indexes = env.open()
    assert indexes.lexical.all_ids() == ids
    env.close()

    (env.home / "index" / VECTOR_DIR / "vectors.json").write_text("{garbage")
    store = Store.open(env.home / "wwt.sqlite3")
    indexes = Indexes.open(env.home / "index")  # plain open: the ingest itself notices and repairs
    assert indexes.broken == ("vector",)
    embedder = CountingEmbedder(env.real)
    summary = ingest_mod.ingest([env.logs], store, indexes, lambda: embedder)
    assert embedder.texts == [] and summary.index_repair["vector_added"] == len(ids)
    assert indexes.vector.all_ids() == ids
    indexes.close()
    store.close()


def test_a_reader_never_deletes_a_damaged_index_and_picks_up_the_writers_repair(env):
    env.copy(CRUD, GEMINI_JSON)
    env.ingest()
    store, _ = env.open()
    ids = store.all_chunk_ids()
    env.close()
    manifest = env.home / "index" / VECTOR_DIR / "vectors.json"
    manifest.write_text("{garbage")
    reader = Indexes.open(env.home / "index")  # e.g. the MCP server, while the writer is busy
    assert reader.broken == ("vector",) and reader.vector.count() == 0
    assert manifest.read_text() == "{garbage"  # left alone: only the writer repairs
    assert reader.lexical.all_ids() == ids

    store = Store.open(env.home / "wwt.sqlite3")
    writer = Indexes.open(env.home / "index", store=store)  # no ingest running: repaired on open
    assert writer.broken == () and writer.vector.all_ids() == ids
    reader.reload_if_changed()
    assert reader.broken == () and reader.vector.all_ids() == ids
    for x in (reader, writer, store):
        x.close()


def test_reindex_rebuilds_both_indexes_without_the_model(env):
    env.copy(CRUD, GEMINI_JSON)
    env.ingest()
    store, indexes = env.open()
    ids = store.all_chunk_ids()
    indexes.close()
    rebuilt = ingest_mod.reindex(store, env.home / "index")
    assert rebuilt.lexical.all_ids() == ids and rebuilt.vector.all_ids() == ids
    assert not rebuilt.needs_repair(store)
    rebuilt.close()


def test_forget_removes_a_conversation_and_its_subagents_for_good(env):
    env.copy(*SUBAGENT_FILES, CRUD)
    env.ingest()
    store, indexes = env.open()
    root = store.conn.execute("SELECT parent_session_id FROM sessions WHERE parent_session_id IS NOT NULL").fetchone()[0]
    doomed = {r[0] for r in store.conn.execute("SELECT id FROM chunks WHERE root_session_id=?", (root,))}
    assert doomed
    assert ingest_mod.forget(store, indexes, session_id=root) == 1
    assert store.get_session(root) is None
    assert not store.conn.execute("SELECT 1 FROM sessions WHERE root_session_id=?", (root,)).fetchone()
    assert not (doomed & indexes.lexical.all_ids()) and not (doomed & indexes.vector.all_ids())
    assert_indexes_match(store, indexes)
    # the logs are still there and change again: the forgotten conversation does not come back
    for p in env.logs.rglob("spotter__*.jsonl"):
        with open(p, "a") as fh:
            fh.write("\n")
    env.ingest()
    assert store.get_session(root) is None


_KILL_SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from wwt.embedder import load_embedder
    from wwt.indexes import open_synced
    from wwt.ingest import ingest
    from wwt.store import Store
    home, logs = Path(sys.argv[1]), Path(sys.argv[2])
    store = Store.open(home / "wwt.sqlite3")
    indexes, _ = open_synced(store, home / "index")
    ingest([logs], store, indexes, load_embedder)
    print("finished")
    """
)


@pytest.fixture(scope="module")
def clean_chunk_keys(tmp_path_factory, real_embedder):
    """Chunk keys of an uninterrupted ingest of every fixture."""
    root = tmp_path_factory.mktemp("clean")
    clean = Env(root / "home", root / "logs", real_embedder)
    clean.copy()
    clean.ingest()
    keys = clean.chunk_keys()
    clean.close()
    return keys


@pytest.mark.slow
@pytest.mark.parametrize("kill_when", ["embedding", "chunks_committed"])
def test_kill_9_mid_ingest_then_a_rerun_converges_to_a_clean_ingest(env, clean_chunk_keys, kill_when):
    env.copy()
    expected = clean_chunk_keys

    env.home.mkdir(parents=True)
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILL_SCRIPT, str(env.home), str(env.logs)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "WWT_HOME": str(env.home)},
    )
    db = env.home / "wwt.sqlite3"
    deadline = time.monotonic() + 120
    killed = False
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
            sql = "SELECT COUNT(*) FROM embeddings" if kill_when == "embedding" else "SELECT COUNT(*) FROM chunks"
            count = conn.execute(sql).fetchone()[0]
            conn.close()
        except sqlite3.Error:
            count = 0
        if count >= (3 if kill_when == "embedding" else 8):
            proc.send_signal(signal.SIGKILL)
            killed = True
            break
        time.sleep(0.01)
    proc.wait(timeout=30)
    assert killed, f"ingest finished before it could be killed: {proc.stdout.read()!r} {proc.stderr.read()[-500:]!r}"

    store, indexes = env.open()
    partial = store.chunk_count()
    if kill_when == "embedding":  # two phases: every chunk is archived and lexically indexed before embedding
        assert partial == len(expected)
        with_vector, total = store.vector_progress()
        assert 3 <= with_vector < total
    else:
        assert partial < len(expected)
    summary, emb = env.ingest()
    assert env.chunk_keys() == expected
    assert_indexes_match(store, indexes)
    already = store.conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] - len(emb.texts)
    if kill_when == "embedding":
        assert already >= 3  # the work the killed process committed was reused, not redone
    assert len(emb.texts) == len(set(emb.texts))  # nothing sent to the model twice


APP_LOG = "server.jsonl"  # an application's own JSON-lines log: no agent wrote it


def _folder_with_strangers(env) -> None:
    """One real log, one log its parser accepts but that holds no messages, and two files no parser reads."""
    env.copy("claude-code/spotter__short.jsonl", "claude-code/episodic-memory__medium-conversation.jsonl")
    (env.logs / "app").mkdir(parents=True)
    (env.logs / "app" / APP_LOG).write_text(
        '{"time":"2026-07-16T08:30:00Z","level":"info","msg":"listening on :8080"}\n', encoding="utf-8"
    )
    (env.logs / "tsconfig.json").write_text('{"compilerOptions": {}}', encoding="utf-8")


def test_a_folder_ingest_counts_and_names_the_files_it_passes_over(env):
    _folder_with_strangers(env)
    summary, _ = env.ingest()
    assert summary.files_seen == 2 and summary.files_parsed == 2
    assert summary.files_unrecognised == 2
    assert sorted(Path(p).name for p in summary.unrecognised) == sorted([APP_LOG, "tsconfig.json"])
    assert "episodic-memory__medium-conversation.jsonl: no conversation messages" in summary.notes
    again, _ = env.ingest()  # the count is about this run's folder walk, not about parsing
    assert again.files_unrecognised == 2 and again.files_skipped == 2


def test_cli_ingest_reports_unrecognised_files_as_count_names_and_json(env, model_dir):
    _folder_with_strangers(env)
    cli_env = {**os.environ, "WWT_HOME": str(env.home), "WWT_MODEL_DIR": str(model_dir), "COLUMNS": "120",
               "NO_COLOR": "1"}

    def wwt(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "wwt", "ingest", str(env.logs), *args], capture_output=True,
                              text=True, env=cli_env, timeout=600)

    verbose = wwt("-v")
    assert verbose.returncode == 0, verbose.stderr[-500:]
    assert "2 file(s) not recognised as an agent log, skipped" in verbose.stdout
    listed = [line.strip().removeprefix("- ") for line in verbose.stdout.splitlines()]  # one name a line, after "- "
    assert str(env.logs / "tsconfig.json") in listed and str(env.logs / "app" / APP_LOG) in listed
    assert "episodic-memory__medium-conversation.jsonl: no conversation messages" in listed
    plain = wwt()
    assert "2 file(s) not recognised as an agent log, skipped; -v lists them" in plain.stdout
    assert "tsconfig.json" not in plain.stdout
    as_json = json.loads(wwt("--json").stdout)
    assert as_json["files_unrecognised"] == 2
    assert sorted(Path(p).name for p in as_json["unrecognised"]) == sorted([APP_LOG, "tsconfig.json"])


OPENCODE_DB = Path(__file__).parent / "fixtures" / "opencode" / "db" / "opencode.db"


def test_a_message_opencode_has_written_only_to_its_wal_is_archived_before_any_checkpoint(env):
    # OpenCode keeps opencode.db in WAL mode: a new message lands in opencode.db-wal, and the main file (its
    # size and mtime) changes only when SQLite checkpoints — minutes or hours later.
    db = env.logs / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    shutil.copyfile(OPENCODE_DB, db)
    app = sqlite3.connect(db)
    app.execute("PRAGMA journal_mode=WAL")
    app.execute("PRAGMA wal_autocheckpoint=0")  # as between two of the app's checkpoints
    env.ingest()
    before = db.stat()
    session = "ses_4a1b2c3d4e5fAbCdEfGhIjKl"  # a new user message in the fixture's main session
    with app:
        app.execute("INSERT INTO message VALUES ('msg_07', ?, 1767261800000, 1767261800000, ?)",
                    (session, json.dumps({"role": "user", "time": {"created": 1767261800000}})))
        app.execute("INSERT INTO part VALUES ('prt_0701', 'msg_07', ?, 1767261800000, 1767261800000, ?)",
                    (session, json.dumps({"type": "text", "text": "remember the quokka-shaped cache key"})))
    assert (db.stat().st_size, db.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)  # only the WAL grew
    summary, _ = env.ingest()
    app.close()
    store, _ = env.open()
    texts = [r[0] for r in store.conn.execute("SELECT text FROM messages")]
    assert summary.files_parsed == 1
    assert any("quokka-shaped cache key" in t for t in texts)


def test_changed_sources_lists_only_new_or_changed_files_of_agents_without_hooks(env, monkeypatch):
    share = env.logs / "share"
    monkeypatch.setenv("XDG_DATA_HOME", str(share))
    db = share / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    shutil.copyfile(OPENCODE_DB, db)
    store, _ = env.open()
    assert ingest_mod.changed_sources(store) == [(db, "opencode")]  # never archived
    env.ingest([db])
    assert ingest_mod.changed_sources(store) == []  # archived, unchanged: only stat-ed
    with sqlite3.connect(db) as app:
        app.execute("UPDATE session SET title = 'renamed' WHERE slug = 'calm-otter'")
    assert ingest_mod.changed_sources(store) == [(db, "opencode")]
    store.enqueue(str(db), "opencode", None)
    while not store.parked_paths():  # the worker fails on it until it gives up
        store.finish_queue([item.id for item in store.claim_queue()], "boom")
    assert ingest_mod.changed_sources(store) == []


def test_files_an_older_parser_read_are_read_again_once_when_it_improves(env, monkeypatch):
    """A parser fix reaches what is already archived: an archive whose Cursor transcripts were read by the parser
    before revision 2 (which kept Cursor's ``[REDACTED]`` placeholders as answers) reads them whole again on the
    next ingest, though the files did not change, and the placeholders leave the archive; once only."""
    import wwt.parsers.cursor as cursor_parser

    sid = "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d"
    path = env.logs / ".cursor" / "projects" / "srv-ledger" / "agent-transcripts" / sid / f"{sid}.jsonl"
    path.parent.mkdir(parents=True)
    lines = [
        {"role": "user", "message": {"content": [{"type": "text", "text": "<timestamp>Monday, Nov 30, 2026, 9:05 AM "
                                                                             "(UTC+9)</timestamp>\n<user_query>\nwhy do "
                                                                             "ledger totals drift by a cent\n</user_query>"}]}},
        {"role": "assistant", "message": {"content": [{"type": "text", "text": "Rounding per line.\n\n[REDACTED]"}]}},
        {"role": "assistant", "message": {"content": [{"type": "text", "text": "[REDACTED]"}, {
            "type": "tool_use", "name": "Read", "input": {"path": "/srv/ledger/totals.py"}}]}},
        {"role": "assistant", "message": {"content": [{"type": "text", "text": "Totals now round once, at the end."}]}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    improved, dated, revision = (cursor_parser.answer_text, cursor_parser.prompt_timestamp,
                                 wwt.parsers.PARSE_REVISIONS["cursor"])
    monkeypatch.setattr(cursor_parser, "answer_text", lambda text: text.strip())  # as revision 1 read answers
    monkeypatch.setattr(cursor_parser, "prompt_timestamp", lambda text: None)  # … and prompts' times
    monkeypatch.setitem(wwt.parsers.PARSE_REVISIONS, "cursor", 1)
    env.ingest()
    store, _ = env.open()

    def answers() -> list[str]:
        return [r[0] for r in store.conn.execute("SELECT text FROM messages WHERE role='assistant' AND kind='text'")]

    assert answers() == ["Rounding per line.\n\n[REDACTED]", "[REDACTED]", "Totals now round once, at the end."]

    def prompt_time() -> str | None:
        return store.conn.execute("SELECT timestamp FROM messages WHERE role='user' AND kind='text'").fetchone()[0]

    assert prompt_time() is None
    monkeypatch.setattr(cursor_parser, "answer_text", improved)
    monkeypatch.setattr(cursor_parser, "prompt_timestamp", dated)
    monkeypatch.setitem(wwt.parsers.PARSE_REVISIONS, "cursor", revision)
    summary, _ = env.ingest()
    assert answers() == ["Rounding per line.", "Totals now round once, at the end."]
    assert prompt_time() == "2026-11-30T00:05:00Z"  # the same message, its time now read too
    assert summary.files_parsed == 1 and any("read again" in note for note in summary.notes)
    assert not any("[REDACTED]" in text for (text,) in store.conn.execute("SELECT lexical_text FROM chunks"))
    again, _ = env.ingest()
    assert again.files_parsed == 0 and again.files_skipped == 1


def test_which_platforms_an_archive_reads_again():
    assert ingest_mod.parsers_changed({}, {"cursor": 2, "claude-code": 1}) == ["cursor"]  # never recorded: 1
    assert ingest_mod.parsers_changed({"cursor": 2, "claude-code": 1}, {"cursor": 2, "claude-code": 1}) == []
    assert ingest_mod.parsers_changed({"cursor": 3}, {"cursor": 2}) == []  # read by a newer wwt: not again
    assert ingest_mod.parsers_changed({"cursor": "2", "aider": True}, {"cursor": 2, "aider": 2}) == ["aider", "cursor"]
