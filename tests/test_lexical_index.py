"""The lexical index over real tantivy: BM25 on pre-tokenized text, filters inside the query, rebuild signals."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from wwt.errors import UsageError
from wwt.lexical_index import STAMP_FILE, IndexCorrupt, LexDoc, LexicalIndex
from wwt.models import Filters

DOCS = [
    LexDoc(1, "PostgreSQL 연결 오류를 고쳤다. pool size를 늘렸다", "s1", "alpha", "claude-code", "main", "/w/alpha",
           "2026-01-10T09:00:00Z", "2026-01-10T09:30:00Z"),
    LexDoc(2, "useEffect 훅에서 무한 루프가 돌았다", "s2", "beta", "gemini-cli", "dev", "/w/beta",
           "2026-02-01T12:00:00Z", "2026-02-01T12:10:00Z"),
    LexDoc(3, "postgresql migration failed with ERR_OSSL_EVP_UNSUPPORTED", "s3", "alpha", "codex-cli", "dev",
           "/w/alpha", "2026-03-05T08:00:00Z", None),
    LexDoc(4, "redis 캐시 TTL 설정, 키 만료", "s1", "alpha", "claude-code", "main", "/w/alpha", None, None),
]  # fmt: skip


@pytest.fixture
def index(tmp_path: Path) -> LexicalIndex:
    idx = LexicalIndex(tmp_path / "lex")
    idx.add(DOCS)
    idx.commit()
    yield idx
    idx.close()


def ids(results: list[tuple[int, float]]) -> list[int]:
    return [chunk_id for chunk_id, _ in results]


def test_search_finds_korean_and_identifier_matches_best_first(index: LexicalIndex) -> None:
    results = index.search("postgresql 연결 오류", Filters(), 10)
    assert ids(results)[0] == 1
    assert set(ids(results)) == {1, 3}
    assert all(score > 0 for _, score in results)
    assert [s for _, s in results] == sorted((s for _, s in results), reverse=True)


def test_identifier_parts_and_one_syllable_nouns_are_searchable(index: LexicalIndex) -> None:
    assert ids(index.search("ossl", Filters(), 10)) == [3]
    assert ids(index.search("effect", Filters(), 10)) == [2]
    assert ids(index.search("키", Filters(), 10)) == [4]


def test_filters_run_inside_the_query(index: LexicalIndex) -> None:
    assert ids(index.search("postgresql", Filters(project="alpha", platform="codex-cli"), 10)) == [3]
    assert ids(index.search("postgresql", Filters(git_branch="main"), 10)) == [1]
    assert ids(index.search("postgresql", Filters(cwd="/w/beta"), 10)) == []
    assert index.search("루프", Filters(project="alpha"), 10) == []


def test_filters_do_not_change_scores(index: LexicalIndex) -> None:
    unfiltered = dict(index.search("postgresql", Filters(), 10))
    filtered = dict(index.search("postgresql", Filters(project="alpha"), 10))
    assert filtered == pytest.approx({k: unfiltered[k] for k in filtered})


def test_time_window_matches_overlapping_chunks_and_skips_undated_ones(index: LexicalIndex) -> None:
    assert ids(index.search("postgresql", Filters(since="2026-03-01T00:00:00Z"), 10)) == [3]
    assert ids(index.search("postgresql", Filters(until="2026-01-31"), 10)) == [1]
    assert ids(
        index.search("postgresql", Filters(since="2026-01-10T09:15:00Z", until="2026-01-10T10:00:00Z"), 10)
    ) == [1]
    assert index.search("redis", Filters(since="2020-01-01"), 10) == []
    assert ids(index.search("redis", Filters(), 10)) == [4]


def test_unparseable_time_filter_is_a_usage_error(index: LexicalIndex) -> None:
    with pytest.raises(UsageError):
        index.search("postgresql", Filters(since="last tuesday"), 10)


def test_exclude_session_id(index: LexicalIndex) -> None:
    assert ids(index.search("postgresql", Filters(exclude_session_id="s1"), 10)) == [3]


@pytest.mark.parametrize(
    "query",
    ['"postgresql', "project:alpha", "postgresql AND", "*", "(((오류", "a:b:c)", "NOT -", "title:[a TO"],
)
def test_query_syntax_is_treated_as_text_and_never_raises(index: LexicalIndex, query: str) -> None:
    results = index.search(query, Filters(), 10)
    assert isinstance(results, list)


def test_syntax_looking_query_still_matches_its_words(index: LexicalIndex) -> None:
    assert ids(index.search('"postgresql" AND (오류', Filters(), 10))[0] == 1


@pytest.mark.parametrize("query", ["", "   ", "?!", "그거 뭐였지"])
def test_empty_or_garbage_query_returns_nothing(index: LexicalIndex, query: str) -> None:
    assert index.search(query, Filters(), 10) == []


def test_limit_bounds_results(index: LexicalIndex) -> None:
    assert len(index.search("postgresql 훅 redis", Filters(), 2)) == 2
    assert index.search("postgresql", Filters(), 0) == []


def test_delete_and_replace_by_id(index: LexicalIndex) -> None:
    index.delete([3])
    index.commit()
    assert ids(index.search("postgresql", Filters(), 10)) == [1]
    index.add([LexDoc(1, "completely different text about kubernetes", "s1", "alpha")])
    index.commit()
    assert index.search("postgresql", Filters(), 10) == []
    assert ids(index.search("kubernetes", Filters(), 10)) == [1]
    assert index.count() == 3
    assert index.all_ids() == {1, 2, 4}


def test_uncommitted_writes_are_invisible(index: LexicalIndex) -> None:
    index.add([LexDoc(9, "uncommitted zebra")])
    assert index.search("zebra", Filters(), 10) == []
    index.commit()
    assert ids(index.search("zebra", Filters(), 10)) == [9]


def test_reopen_after_commit_sees_the_same_data(tmp_path: Path) -> None:
    path = tmp_path / "lex"
    with LexicalIndex(path) as writer:
        writer.add(DOCS)
        writer.commit()
        before = writer.search("postgresql 오류", Filters(), 10)
    reopened = LexicalIndex(path, create=False)
    assert reopened.count() == len(DOCS)
    assert reopened.all_ids() == {1, 2, 3, 4}
    assert reopened.search("postgresql 오류", Filters(), 10) == before


def test_a_reader_sees_another_writers_commit_after_reload(tmp_path: Path) -> None:
    path = tmp_path / "lex"
    writer = LexicalIndex(path)
    reader = LexicalIndex(path)
    writer.add([LexDoc(5, "fresh giraffe")])
    writer.commit()
    reader.reload()
    assert ids(reader.search("giraffe", Filters(), 10)) == [5]


def test_a_reader_picks_up_commits_only_when_told_to_reload(tmp_path: Path) -> None:
    """No background reload (tantivy's default watches meta.json from a native thread): a search sees
    another writer's commit after ``reload``, never in between."""
    path = tmp_path / "lex"
    writer = LexicalIndex(path)
    reader = LexicalIndex(path)
    writer.add([LexDoc(6, "quiet pelican")])
    writer.commit()
    time.sleep(1.5)  # tantivy's meta.json watcher polls every 500 ms
    assert ids(reader.search("pelican", Filters(), 10)) == []
    reader.reload()
    assert ids(reader.search("pelican", Filters(), 10)) == [6]


def test_missing_index_raises_when_not_creating(tmp_path: Path) -> None:
    with pytest.raises(IndexCorrupt):
        LexicalIndex(tmp_path / "nothing", create=False)


def test_corrupt_folder_raises_index_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "lex"
    path.mkdir()
    (path / "meta.json").write_text("{not json")
    with pytest.raises(IndexCorrupt):
        LexicalIndex(path)


def test_damaged_tantivy_meta_raises_index_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "lex"
    with LexicalIndex(path) as idx:
        idx.add(DOCS)
        idx.commit()
    (path / "meta.json").write_text("garbage")
    with pytest.raises(IndexCorrupt):
        LexicalIndex(path)


def test_index_built_by_another_tokenizer_must_be_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "lex"
    LexicalIndex(path).close()
    stamp = json.loads((path / STAMP_FILE).read_text())
    stamp["tokenizer"] = "wwt-lexical-0/kiwipiepy-0.1"
    (path / STAMP_FILE).write_text(json.dumps(stamp))
    with pytest.raises(IndexCorrupt, match="rebuil|built by"):
        LexicalIndex(path)


def test_files_left_by_a_writer_killed_mid_commit_do_not_block_the_next_commit(tmp_path: Path) -> None:
    """A writer killed after writing a segment's delete file but before meta.json leaves that file behind;
    the next writer reaches the same opstamp and tantivy would refuse to overwrite it (found by the kill -9
    test). Reproduced exactly: the same deletion committed in a copy leaves the file the crash would have."""
    import shutil

    base = tmp_path / "base"
    first = LexicalIndex(base)
    first.add(DOCS)
    first.commit()
    first.close()
    crashed = tmp_path / "crashed"
    shutil.copytree(base, crashed)

    ahead = LexicalIndex(base)  # what the killed writer had got as far as writing
    ahead.delete([2])
    ahead.commit()
    ahead.close()
    leftovers = {p.name for p in base.iterdir()} - {p.name for p in crashed.iterdir()}
    orphans = [name for name in leftovers if name.endswith(".del")]
    assert orphans, leftovers
    for name in orphans:
        shutil.copy(base / name, crashed / name)
    registered = tmp_path / "registered"  # the crash came after tantivy had listed the file as its own
    shutil.copytree(crashed, registered)
    shutil.copy(base / ".managed.json", registered / ".managed.json")

    for folder in (crashed, registered):
        after_crash = LexicalIndex(folder)
        after_crash.delete([2])
        after_crash.commit()  # tantivy: FileAlreadyExists without the clean-up on writer open
        assert after_crash.all_ids() == {1, 3, 4}
        after_crash.close()


def test_extra_tokens_count_less_than_the_query_s_own(index: LexicalIndex) -> None:
    # the same word scores half as much as a glossary addition (weight 0.5) as it does as the query's own
    own = dict(index.search_tokens(["redis"], None, 10))
    added = dict(index.search_tokens(["postgresql"], None, 10, extra=["redis"], extra_weight=0.5))
    assert added[4] == pytest.approx(0.5 * own[4], rel=1e-4)
    assert {1, 3} <= set(added)
    assert index.search_tokens(["redis"], None, 10, extra=["redis"]) == index.search_tokens(["redis"], None, 10)


def test_doc_freqs_count_chunks_per_term_over_the_whole_index(index: LexicalIndex) -> None:
    assert index.doc_freqs(["postgresql", "redis", "kafka"]) == {"postgresql": 2, "redis": 1, "kafka": 0}
