"""A chunk's vector blends in its user turns, embedded as questions (issue 29): how the blend is made, that the
index holds exactly it, and that an archive made before it moves over without a chunk ever losing its vector.
Real fixtures, real model, real SQLite/tantivy/hnswlib."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from _shared import ingest_real_fixtures

from wwt import ingest as ingest_mod
from wwt.chunker import REQUEST_WEIGHT
from wwt.embedder import blend_requests, chunk_vectors
from wwt.indexes import VECTOR_DIR, open_synced
from wwt.present import pending_vectors_line
from wwt.store import Store
from wwt.store.rows import requests_of


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def no_model():
    raise AssertionError("this step must not load the model")


def test_the_blend_is_the_weighted_mean_of_a_chunks_own_vector_and_its_requests():
    own = np.eye(4, dtype=np.float32)[:3]  # three chunks, the third with no request
    requests = np.asarray([[0, 1, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]], dtype=np.float32)
    out = blend_requests(own, requests, [0, 0, 1], 0.4)
    assert np.allclose(out[0], unit(np.array([0.6, 0.2, 0, 0.2])))
    assert np.allclose(out[1], unit(np.array([0, 0.6, 0.4, 0])))
    assert np.allclose(out[2], own[2])
    assert np.allclose(np.linalg.norm(out, axis=1), 1)
    assert np.array_equal(blend_requests(own, requests[:0], [], 0.4), own)


@pytest.fixture(scope="module")
def real_embedder(model_dir: Path):
    from wwt.embedder import load_embedder

    return load_embedder(model_dir)


def test_chunk_vectors_embed_requests_as_questions_and_text_as_a_passage(real_embedder):
    text = "user: how do I stop the hook from re-indexing wwt's own replies?\nassistant: skip its tool results."
    asked = "user: how do I stop the hook from re-indexing wwt's own replies?"
    (vector,) = chunk_vectors(real_embedder, [(text, [asked])], REQUEST_WEIGHT)
    passage = real_embedder.embed(([text]), "passage: ", 1)[0]
    question = real_embedder.embed([asked], "query: ", 1)[0]
    assert np.allclose(vector, unit((1 - REQUEST_WEIGHT) * passage + REQUEST_WEIGHT * question), atol=1e-5)
    # the request's vector does not depend on what else is in the batch (a chunk always gets the same vector)
    other = "user: 레디스 캐시 만료 시간을 어떻게 정했지?"
    pair = chunk_vectors(real_embedder, [("assistant: something else entirely", [other]), (text, [asked])],
                         REQUEST_WEIGHT)
    assert np.allclose(pair[1], vector, atol=1e-6)


@pytest.fixture
def archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_embedder):
    """The real logs archived, indexed and embedded the way this wwt does."""
    monkeypatch.setenv("WWT_HOME", str(tmp_path / "home"))
    home, logs, store, indexes, _ = ingest_real_fixtures(tmp_path, lambda: real_embedder)
    yield home, logs, store, indexes
    indexes.close()
    store.close()


def test_the_index_holds_each_chunks_blended_vector(archive, real_embedder):
    _, _, store, indexes = archive
    rows = store.conn.execute("SELECT id, embed_text, requests FROM chunks ORDER BY id").fetchall()
    blended = [r for r in rows if requests_of(r[2])]
    assert len(blended) >= 10 and len(blended) < len(rows)  # some chunks have nothing to blend
    sample = blended[:4] + [r for r in rows if not requests_of(r[2])][:2]
    expected = chunk_vectors(real_embedder, [(r[1], requests_of(r[2])) for r in sample], REQUEST_WEIGHT)
    got = indexes.vector.get_vectors([r[0] for r in sample])
    assert np.allclose(got, expected, atol=1e-5)


def _as_before_blending(home: Path) -> dict[int, np.ndarray]:
    """Rewrite the archive as the previous wwt left it (schema 6: one vector per embed text, no requests), each
    old vector recognisable (the negation of the blended one). Returns the old vector by chunk id."""
    conn = sqlite3.connect(home / "wwt.sqlite3")
    old: dict[int, np.ndarray] = {}
    with conn:
        rows = conn.execute("SELECT c.id, c.embed_text, e.vector FROM chunks c JOIN embeddings e"
                            " ON e.text_hash = c.embed_hash").fetchall()
        conn.execute("DELETE FROM embeddings")
        for cid, text, blob in rows:
            plain_hash = hashlib.sha256(text.encode()).hexdigest()
            vector = -np.frombuffer(blob, dtype=np.float32)
            old[cid] = vector
            conn.execute("UPDATE chunks SET embed_hash=? WHERE id=?", (plain_hash, cid))
            conn.execute("INSERT OR IGNORE INTO embeddings VALUES (?, ?, ?)", (plain_hash, len(vector),
                                                                               vector.tobytes()))
        conn.execute("DROP INDEX chunks_stale")
        conn.execute("ALTER TABLE chunks DROP COLUMN stale_hash")
        conn.execute("ALTER TABLE chunks DROP COLUMN requests")
        conn.execute("UPDATE meta SET value='6' WHERE key='schema_version'")
    conn.close()
    shutil.rmtree(home / "index")  # the index rebuilt from these vectors when the archive opens
    return old


def test_an_archive_from_before_the_blend_keeps_every_vector_until_its_new_one_lands(archive, real_embedder):
    home, logs, store, indexes = archive
    indexes.close()
    store.close()
    old = _as_before_blending(home)

    store = Store.open(home / "wwt.sqlite3")  # schema 6 → 7: every session is to be chunked again
    indexes, _ = open_synced(store, home / "index")
    try:
        assert store.schema_version() == 7 and store.dirty_sessions()
        total = store.chunk_count()
        assert indexes.vector.count() == total  # the old vectors, as the previous wwt had them

        # the next ingest re-chunks (no model): each blended chunk gets its new key, and keeps its old vector
        summary = ingest_mod.ingest([logs], store, indexes, no_model, backfill=False)
        assert not store.dirty_sessions() and summary.chunks_added == summary.chunks_removed == 0
        pending = store.chunk_count() - store.vector_progress()[0]
        assert 10 <= pending < total  # the chunks with requests wait for their new vector; the rest need none
        # and the user is told they are searchable by meaning meanwhile, not "by words only"
        assert summary.vectors_pending == summary.vectors_refreshing == store.stats()["chunks_refreshing"] == pending
        told = pending_vectors_line(summary.vectors_pending, None, summary.vectors_refreshing)
        assert "earlier vectors serve" in told and "words" not in told
        assert indexes.vector.count() == total and indexes.verify_against(store)
        assert not indexes.needs_repair(store)
        ids = sorted(old)
        assert np.allclose(indexes.vector.get_vectors(ids), np.stack([old[i] for i in ids]))
        # searching by meaning still reaches every chunk meanwhile
        near = indexes.vector.search(real_embedder.embed_query("how is the sqlite database kept consistent"), 5)
        assert len(near) == 5

        # a crash that loses the vector index mid-way: the rebuild from SQLite reads the old vectors
        indexes.close()
        shutil.rmtree(home / "index" / VECTOR_DIR)
        indexes, _ = open_synced(store, home / "index")
        if indexes.needs_repair(store):
            indexes.repair(store)
        assert indexes.vector.count() == total and indexes.verify_against(store)

        # the back-fill replaces each old vector in place, then the old ones are let go
        result = ingest_mod.backfill_vectors(store, indexes, lambda: real_embedder)
        assert result.stopped == "done" and result.pending == 0
        assert store.refreshing_vectors() == 0
        assert indexes.vector.count() == total and indexes.verify_against(store)
        rows = store.conn.execute("SELECT id, embed_text, requests FROM chunks ORDER BY id").fetchall()
        expected = chunk_vectors(real_embedder, [(r[1], requests_of(r[2])) for r in rows[:6]], REQUEST_WEIGHT)
        blended_ids = [r[0] for r in rows[:6]]
        # chunks without requests kept their (negated, stand-in) old vector: its key did not change
        for r, want, got in zip(rows[:6], expected, indexes.vector.get_vectors(blended_ids), strict=True):
            assert np.allclose(got, want if requests_of(r[2]) else old[r[0]], atol=1e-5)
        store.prune_embeddings()
        distinct = store.conn.execute("SELECT COUNT(DISTINCT embed_hash) FROM chunks").fetchone()[0]
        assert store.conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == distinct
    finally:
        indexes.close()
        store.close()


def test_the_cli_says_an_upgraded_archive_keeps_its_vectors_while_they_are_re_embedded(archive, model_dir, tmp_path):
    import os
    import subprocess
    import sys

    home, logs, store, indexes = archive
    indexes.close()
    store.close()
    _as_before_blending(home)
    env = {k: v for k, v in os.environ.items() if not k.startswith("WWT_")}
    env.update(WWT_HOME=str(home), HOME=str(tmp_path), WWT_MODEL_DIR=str(model_dir), WWT_ENGINE="off")

    def wwt(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "wwt", *args], env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr
        return " ".join((done.stdout + done.stderr).split())

    wwt("ingest", "--pause")  # the back-fill waits: what the user sees between the upgrade and its end
    said = wwt("ingest", str(logs))
    assert "to be re-embedded with their user turns blended in" in said and "earlier vectors serve" in said
    assert "searchable by words now" not in said
    status = wwt("status")
    assert "being re-embedded with their user turns blended in" in status
    wwt("ingest", "--resume")
    assert "re-embedded" not in wwt("status")
