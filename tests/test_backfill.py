"""Two-phase ingest: a history is archived and searchable by words before any vector exists; vectors are then
back-filled newest first, in slices that can stop, pause and resume, and a chunk still waiting for its vector
is not pushed down the ranking for it. Real fixtures, real model, real tantivy/hnswlib/SQLite (the fake legs
are only in the fusion unit test)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES, ingest_real_fixtures

from wwt import ingest as ingest_mod
from wwt import writer_lock as writer_lock_mod
from wwt.fusion import stand_in_vector_scores, weighted_minmax
from wwt.models import Filters
from wwt.search import run_search
from wwt.store import Store

LOGS = sorted(str(p.relative_to(REAL_FIXTURES)) for p in REAL_FIXTURES.rglob("*.json*") if p.is_file())


class Recording:
    """The real embedder, recording every text it is asked to embed."""

    def __init__(self, real) -> None:
        self.real, self.info, self.texts = real, real.info, []

    def embed_passages(self, texts):
        self.texts += list(texts)
        return self.real.embed_passages(texts)

    def embed_requests(self, texts):
        return self.real.embed_requests(texts)


def no_model():
    raise AssertionError("phase 1 must not load the model")


@pytest.fixture(scope="module")
def real_embedder(model_dir: Path):
    from wwt.embedder import load_embedder

    return load_embedder(model_dir)


@pytest.fixture
def archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The real logs archived and lexically indexed (phase 1 only)."""
    monkeypatch.setenv("WWT_HOME", str(tmp_path / "home"))
    _, logs, store, indexes, summary = ingest_real_fixtures(tmp_path, no_model, backfill=False)
    yield store, indexes, summary, logs
    indexes.close()
    store.close()


def test_phase_one_archives_and_indexes_words_without_the_model(archive) -> None:
    store, indexes, summary, _ = archive
    total = store.chunk_count()
    assert summary.chunks_added == total > 10 and summary.chunks_embedded == 0
    assert summary.vectors_pending == total
    assert store.vector_progress() == (0, total)
    # a word from the Claude transcript is found by the lexical leg before any vector exists
    assert indexes.lexical.search("sqlite", Filters(), 5)
    # "lexical indexed, vector pending" is consistent: no repair needed, the indexes agree with SQLite
    assert not indexes.needs_repair(store)
    assert indexes.verify_against(store)
    assert indexes.vector.count() == 0


def test_backfill_goes_newest_first_stops_between_batches_and_resumes_without_embedding_twice(
    archive, real_embedder
) -> None:
    store, indexes, _, _ = archive
    emb = Recording(real_embedder)
    batches = []

    def stop_after_one() -> bool:
        batches.append(1)
        return len(batches) > 1

    first = ingest_mod.backfill_vectors(store, indexes, lambda: emb, should_stop=stop_after_one)
    assert first.stopped == "stop" and first.embedded == ingest_mod.EMBED_BATCH
    assert 0 < first.with_vector < first.total
    # the texts embedded first belong to the newest chunks
    end = dict(store.conn.execute("SELECT embed_text, MAX(COALESCE(end_ts, start_ts, '')) FROM chunks GROUP BY embed_text"))
    done_latest = min(end[t] for t in emb.texts)
    waiting = [r[0] for r in store.conn.execute(
        "SELECT MAX(COALESCE(c.end_ts, c.start_ts, '')) FROM chunks c WHERE NOT EXISTS "
        "(SELECT 1 FROM embeddings e WHERE e.text_hash = c.embed_hash) GROUP BY c.embed_hash")]
    assert max(waiting) <= done_latest
    # what was committed is searchable by meaning already, and the indexes agree with SQLite
    assert indexes.vector.count() == first.with_vector
    assert indexes.verify_against(store) and not indexes.needs_repair(store)

    second = ingest_mod.backfill_vectors(store, indexes, lambda: emb)
    assert second.stopped == "done" and second.pending == 0
    assert len(emb.texts) == len(set(emb.texts))  # nothing embedded twice
    distinct = store.conn.execute("SELECT COUNT(DISTINCT embed_hash) FROM chunks").fetchone()[0]
    assert len(emb.texts) == distinct
    assert indexes.verify_against(store) and indexes.vector.count() == store.chunk_count()

    idle = ingest_mod.backfill_vectors(store, indexes, no_model)  # nothing pending: the model is not loaded
    assert idle.stopped == "done" and idle.embedded == 0


def test_a_time_budget_ends_a_slice_between_batches(archive, real_embedder) -> None:
    store, indexes, _, _ = archive
    result = ingest_mod.backfill_vectors(store, indexes, lambda: real_embedder, max_seconds=0.0)
    assert result.stopped == "time" and result.embedded == 0


def test_a_slice_embeds_at_least_one_batch_even_when_loading_the_model_outlasts_its_budget(
    archive, real_embedder
) -> None:
    import time

    store, indexes, _, _ = archive

    def slow_load():
        time.sleep(0.2)  # a busy laptop loading the model
        return real_embedder

    result = ingest_mod.backfill_vectors(store, indexes, slow_load, max_seconds=0.05)
    assert result.stopped == "time" and result.embedded == ingest_mod.EMBED_BATCH


def test_the_pause_flag_stops_every_backfill_until_resumed(archive, real_embedder) -> None:
    store, indexes, _, _ = archive
    data_dir = store.path.parent
    ingest_mod.set_paused(data_dir, True)
    paused = ingest_mod.backfill_vectors(store, indexes, no_model)
    assert paused.stopped == "paused" and paused.embedded == 0 and paused.pending == store.chunk_count()
    ingest_mod.set_paused(data_dir, False)
    resumed = ingest_mod.backfill_vectors(store, indexes, lambda: real_embedder)
    assert resumed.stopped == "done" and resumed.pending == 0


def test_a_backfill_gives_way_when_another_process_holds_the_writer_lock(archive) -> None:
    store, indexes, _, _ = archive
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from filelock import FileLock; "
         "l = FileLock(sys.argv[1]); l.acquire(); print('held', flush=True); time.sleep(60)",
         str(store.path.parent / writer_lock_mod.LOCK_FILE)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        busy = ingest_mod.backfill_vectors(store, indexes, no_model, lock_timeout=0)
        assert busy.stopped == "busy" and busy.embedded == 0
    finally:
        holder.kill()
        holder.wait()


# ---------------------------------------------------------------------------------------------- ranking


def test_a_chunk_without_a_vector_yet_ranks_by_the_lexical_leg_alone() -> None:
    lexical = [(1, 10.0), (2, 9.0), (4, 1.0)]  # chunk 1: the best lexical match, no vector yet
    vector = [(2, 0.90), (3, 0.80), (4, 0.78)]
    before = weighted_minmax(lexical, vector)
    assert before[0][0] == 2  # counted as a 0 on the vector leg, chunk 1 lost to chunk 2
    fair = weighted_minmax(lexical, vector + stand_in_vector_scores(lexical, vector, {1}))
    assert fair[0] == (1, pytest.approx(1.0))  # its lexical score alone: the best there is
    assert dict(fair)[2] == pytest.approx(dict(before)[2])  # chunks that have a vector keep their score


def test_no_stand_ins_when_nothing_is_missing_or_no_chunk_has_a_vector() -> None:
    assert stand_in_vector_scores([(1, 3.0)], [(2, 0.8)], set()) == []
    assert stand_in_vector_scores([(1, 3.0)], [], {1}) == []


class _Legs:
    """Fixed legs standing in for tantivy/hnswlib, to pin the orchestration's call of the stand-ins."""

    def __init__(self, hits, ids=None) -> None:
        self.hits, self.ids = hits, ids

    def search(self, *args, **kwargs):
        return list(self.hits)

    def search_tokens(self, tokens, filters, limit):
        return list(self.hits)[:limit]

    def term_hits(self, terms, filters, cap):
        return {term: min(cap, len(self.hits)) for term in terms}

    def count(self) -> int:
        return len(self.ids or ())

    def missing(self, ids):
        return [i for i in ids if i not in self.ids]


def test_search_while_vectors_are_partial_does_not_bury_the_unembedded_best_match(archive) -> None:
    store, _, _, _ = archive
    ids = sorted(store.all_chunk_ids())
    sessions = {r[0]: r[1] for r in store.conn.execute("SELECT id, root_session_id FROM chunks")}
    a, b, c = next(i for i in ids if sessions[i] != sessions[ids[-1]]), ids[-1], ids[-2]
    lexical = _Legs([(a, 10.0), (b, 9.0), (c, 1.0)])
    vector = _Legs([(b, 0.90), (c, 0.80)], ids={b, c})
    outcome = run_search("sqlite crud", Filters(), 5, store=store, lexical=lexical, vector=vector,
                         embed_query=lambda q: None)
    assert outcome.hits[0].session_id == sessions[a]


def test_a_search_before_any_vector_exists_does_not_load_the_model(archive) -> None:
    """Phase 1 only: the vector leg has nothing to rank, so a search must not pay for (or wait on) the model."""
    from wwt.service import Memory

    store, _, _, _ = archive
    memory = Memory(store.path.parent)
    try:
        assert memory.search("zqxjv-nowhere", limit=3) == []
        assert memory.search("sqlite", limit=3)
        assert memory._embedder is None
    finally:
        memory.close()


def test_an_ingest_of_given_paths_back_fills_briefly_by_default_and_to_the_end_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model_dir: Path
) -> None:
    from wwt import service

    logs = tmp_path / "logs"
    for name in LOGS[:8]:
        (logs / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REAL_FIXTURES / name, logs / name)
    monkeypatch.setattr(service, "EXPLICIT_BACKFILL_S", 0.0)  # a budget that is always used up
    with service.Memory(tmp_path / "home") as memory:
        brief = memory.ingest([logs])  # an MCP ingest_session: the rest is the worker's
        assert brief.vectors_pending > 0
        full = memory.ingest([logs], backfill_seconds=None)  # what `wwt ingest PATH` asks for
        assert full.vectors_pending == 0 and full.chunks_embedded > 0


# ---------------------------------------------------------------------------------------------- CLI


def test_cli_pause_ingest_search_status_resume(tmp_path: Path, model_dir: Path) -> None:
    home, logs = tmp_path / "home", tmp_path / "logs"
    for name in LOGS:
        (logs / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REAL_FIXTURES / name, logs / name)
    env = {**os.environ, "WWT_HOME": str(home), "WWT_MODEL_DIR": str(model_dir), "NO_COLOR": "1",
           "COLUMNS": "200"}

    def wwt(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "wwt", *args], capture_output=True, text=True, env=env,
                              timeout=600, stdin=subprocess.DEVNULL)

    paused = wwt("ingest", "--pause")
    assert paused.returncode == 0 and "paused" in paused.stdout
    first = wwt("ingest", str(logs))
    assert first.returncode == 0, first.stderr
    assert "embedded: 0" in first.stdout and "waiting for vectors" in first.stdout
    status = wwt("status")
    assert "vectors: 0 %" in status.stdout and "paused" in status.stdout
    found = wwt("search", "sqlite", "--all")
    assert found.returncode == 0 and found.stdout.strip(), found.stderr
    # a search that needs no vector leg (none exists yet) exits cleanly, not aborted by a half-loaded model
    for _ in range(3):
        nothing = wwt("search", "zqxjv-nowhere", "--all")
        assert nothing.returncode in (0, 1) and "terminate" not in nothing.stderr, (nothing.returncode, nothing.stderr)
    resumed = wwt("ingest", "--resume", str(logs))
    assert resumed.returncode == 0, resumed.stderr
    assert "waiting for vectors" not in resumed.stdout and "embedded: 0" not in resumed.stdout
    assert "vectors:" not in wwt("status").stdout


def test_the_background_worker_back_fills_pending_vectors_when_its_queue_is_empty(
    tmp_path: Path, model_dir: Path
) -> None:
    home, logs = tmp_path / "home", tmp_path / "logs"
    for name in LOGS[:6]:
        (logs / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REAL_FIXTURES / name, logs / name)
    env = {**os.environ, "WWT_HOME": str(home), "WWT_MODEL_DIR": str(model_dir), "WWT_WORKER_IDLE_S": "1",
           "WWT_WORKER_DEBOUNCE_S": "0"}
    home.mkdir()
    ingest_mod.set_paused(home, True)
    subprocess.run([sys.executable, "-m", "wwt", "ingest", str(logs)], env=env, check=True, capture_output=True,
                   timeout=600)
    with Store.open(home / "wwt.sqlite3") as store:
        done, total = store.vector_progress()
    assert done == 0 < total
    ingest_mod.set_paused(home, False)
    worker = subprocess.run([sys.executable, "-m", "wwt", "worker"], env=env, capture_output=True, text=True,
                            timeout=600)
    assert worker.returncode == 0, worker.stderr
    with Store.open(home / "wwt.sqlite3") as store:
        assert store.vector_progress() == (total, total)
    assert "back-filled" in (home / "ingest.log").read_text()
