"""Search orchestration: how fused chunk scores become a ranked list of sessions, and the real filtered legs."""

from __future__ import annotations

import shutil
from functools import cmp_to_key
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES
from hypothesis import given
from hypothesis import strategies as st

from wwt.search import (
    CHUNKS_PER_SESSION,
    SECOND_CHUNK_BONUS,
    THIN_PENALTY,
    bridged_query,
    candidate_depth,
    demote_thin,
    excerpt,
    group_by_session,
    is_weak,
    legs_agree,
    lexically_unmatched,
    name_words,
    never_said,
    query_terms,
    resume_command,
    resume_line,
    session_score,
    thin_factor,
    topic_tokens,
    unseen_name_words,
    unseen_names,
    unseen_share,
    vocabulary_gap,
)
from wwt.store import ChunkHit

# ---------------------------------------------------------------------------------------------- helpers


def chunk(
    chunk_id: int,
    session: str,
    *,
    source: str | None = None,
    text: str = "some text",
    started: str = "2026-01-01T00:00:00Z",
    platform: str = "claude-code",
    first_seq: int | None = None,
) -> ChunkHit:
    return ChunkHit(
        id=chunk_id,
        chunk_key=f"key{chunk_id:03d}",
        session_id=session,
        source_session_id=source or session,
        text=text,
        start_ts=started,
        end_ts=started,
        first_seq=first_seq if first_seq is not None else chunk_id,
        last_seq=(first_seq if first_seq is not None else chunk_id) + 1,
        platform=platform,
        project="proj",
        project_path="/src/proj",
        cwd="/src/proj",
        git_branch="main",
        started_at=started,
        ended_at=started,
        title=None,
        source_path=None,
    )


def table(*chunks: ChunkHit) -> dict[int, ChunkHit]:
    return {c.id: c for c in chunks}


# ---------------------------------------------------------------------------------------------- session score


def test_session_score_is_the_best_chunk_when_alone() -> None:
    assert session_score([0.7]) == pytest.approx(0.7)


def test_session_score_is_the_best_chunk_however_many_others_match() -> None:
    # recall_dev (issue 13): a bonus for more matching chunks let a session with three middling chunks outrank
    # the one whose best chunk answered the question
    assert SECOND_CHUNK_BONUS == 0.0
    assert session_score([0.5, 0.9, 0.4, 0.3]) == pytest.approx(0.9)


def test_session_score_can_still_add_a_bonus_for_the_next_two_chunks_only() -> None:
    assert session_score([0.5, 0.9, 0.4, 0.3], bonus=0.1) == pytest.approx(0.9 + 0.1 * (0.5 + 0.4))


def test_session_score_of_nothing_is_zero() -> None:
    assert session_score([]) == 0.0


def test_candidate_depth_grows_with_the_limit_but_never_below_fifty() -> None:
    assert candidate_depth(1) == 50
    assert candidate_depth(10) == 50
    assert candidate_depth(30) == 150


# ---------------------------------------------------------------------------------------------- grouping


def test_chunks_of_one_conversation_become_one_hit_with_best_chunk_first() -> None:
    chunks = table(chunk(1, "A"), chunk(2, "A"), chunk(3, "B"))
    hits = group_by_session([(3, 0.5), (2, 0.9), (1, 0.6)], chunks, limit=10)
    assert [h.session_id for h in hits] == ["A", "B"]
    assert [c.chunk_id for c in hits[0].chunks] == ["key002", "key001"]
    assert hits[0].score == pytest.approx(0.9 + SECOND_CHUNK_BONUS * 0.6)


def test_subagent_chunks_count_for_their_root_conversation() -> None:
    chunks = table(chunk(1, "root"), chunk(2, "root", source="sub-agent"), chunk(3, "other"))
    hits = group_by_session([(2, 0.8), (3, 0.7), (1, 0.1)], chunks, limit=10)
    assert [h.session_id for h in hits] == ["root", "other"]
    assert len(hits[0].chunks) == 2


def test_at_most_three_chunks_are_shown_per_session() -> None:
    chunks = table(*(chunk(i, "A") for i in range(1, 7)))
    hits = group_by_session([(i, 1.0 - i / 10) for i in range(1, 7)], chunks, limit=10)
    assert len(hits) == 1
    assert len(hits[0].chunks) == CHUNKS_PER_SESSION
    assert [c.chunk_id for c in hits[0].chunks] == ["key001", "key002", "key003"]


def test_limit_counts_sessions_not_chunks() -> None:
    chunks = table(*(chunk(i, f"S{i % 4}") for i in range(1, 13)))
    hits = group_by_session([(i, 1.0 / i) for i in range(1, 13)], chunks, limit=2)
    assert len(hits) == 2


def test_sessions_rank_by_their_best_chunk_unless_a_bonus_is_asked_for() -> None:
    # A: one chunk at 0.80. B: best 0.78 plus two more at 0.5. C: best 0.50 plus two at 0.49.
    chunks = table(
        chunk(1, "A"), chunk(2, "B"), chunk(3, "B"), chunk(4, "B"), chunk(5, "C"), chunk(6, "C"), chunk(7, "C")
    )
    fused = [(1, 0.80), (2, 0.78), (3, 0.5), (4, 0.5), (5, 0.50), (6, 0.49), (7, 0.49)]
    assert [h.session_id for h in group_by_session(fused, chunks, limit=10)] == ["A", "B", "C"]
    # the previous rule (bonus 0.1): B → 0.78 + 0.1 * 1.0 = 0.88 beats A; C's many weak chunks still lose
    assert [h.session_id for h in group_by_session(fused, chunks, limit=10, bonus=0.1)] == ["B", "A", "C"]


def test_equal_scores_rank_newer_sessions_first_then_by_id() -> None:
    chunks = table(
        chunk(1, "old", started="2025-01-01T00:00:00Z"),
        chunk(2, "new", started="2026-05-01T00:00:00Z"),
        chunk(3, "b-same", started="2026-01-01T00:00:00Z"),
        chunk(4, "a-same", started="2026-01-01T00:00:00Z"),
    )
    fused = [(1, 0.5), (3, 0.5), (2, 0.5), (4, 0.5)]
    first = [h.session_id for h in group_by_session(fused, chunks, limit=10)]
    again = [h.session_id for h in group_by_session(list(reversed(fused)), chunks, limit=10)]
    assert first == again == ["new", "a-same", "b-same", "old"]


@given(
    st.lists(
        st.tuples(st.sampled_from([0.3, 0.5, 0.7]), st.sampled_from(["2025-01-01", "2026-01-01", "2026-05-01", ""])),
        min_size=1,
        max_size=12,
    )
)
def test_sessions_are_ordered_by_score_then_newest_then_id(rows: list[tuple[float, str]]) -> None:
    chunks = table(*(chunk(i, f"s{i:02d}", started=started) for i, (_, started) in enumerate(rows, 1)))
    fused = [(i, score) for i, (score, _) in enumerate(rows, 1)]
    got = [h.session_id for h in group_by_session(fused, chunks, limit=20)]

    def before(a: tuple[float, str, str], b: tuple[float, str, str]) -> int:
        if a[0] != b[0]:
            return -1 if a[0] > b[0] else 1
        if a[1] != b[1]:
            return -1 if a[1] > b[1] else 1
        return -1 if a[2] < b[2] else (1 if a[2] > b[2] else 0)

    expected = sorted(((sc, st_, f"s{i:02d}") for i, (sc, st_) in enumerate(rows, 1)), key=cmp_to_key(before))
    assert got == [sid for _, _, sid in expected]


def test_chunks_gone_from_the_store_and_the_excluded_session_are_left_out() -> None:
    chunks = table(chunk(1, "mine"), chunk(2, "theirs"))
    hits = group_by_session([(1, 0.9), (99, 0.8), (2, 0.7)], chunks, limit=10, exclude_session_id="mine")
    assert [h.session_id for h in hits] == ["theirs"]


# Session ids as the real fixtures carry them (shared/fixtures/real): Claude Code, Gemini CLI, Codex CLI.
C1, G1, X1 = "55604662-cf2a-4331-851a-ec234028f8ca", "0ab84937-9fe7-4284-986a-33c832af0b6a", "019bf4b5-e7b0-75a0-8bf2-05fbf1b13c9b"


def test_hits_carry_the_resume_command_of_their_agent() -> None:
    chunks = table(
        chunk(1, C1, platform="claude-code"), chunk(2, G1, platform="gemini-cli"), chunk(3, X1, platform="codex-cli")
    )
    hits = {h.session_id: h.resume for h in group_by_session([(1, 0.3), (2, 0.2), (3, 0.1)], chunks, 10)}
    assert hits == {C1: f"claude --resume {C1}", G1: f"gemini --resume {G1}", X1: f"codex resume {X1}"}
    assert resume_command("unknown-agent", C1) is None


@pytest.mark.parametrize("platform", ["claude-code", "gemini-cli", "codex-cli"])
@pytest.mark.parametrize("session_id", [
    "x; touch /tmp/pwned #", "$(id)", "`id`", C1 + "\n", C1 + " && id", "-rf", "",
    "gemini_stage0_jsonl", "session-2026-01-16T18-34-3739ef95",  # ids in third-party fixtures, not agent-written
    f"{C1}:agent-a0ad4f44468bdf20d",  # a subagent transcript: not resumable on its own
])
def test_an_id_that_is_not_the_agents_id_shape_gets_no_resume_command(platform: str, session_id: str) -> None:
    hit = group_by_session([(1, 0.5)], table(chunk(1, session_id, platform=platform)), 10)[0]
    assert hit.session_id == session_id and hit.resume is None  # the hit itself stays
    assert resume_line(platform, session_id, "/home/me/src/x") is None


def test_the_resume_line_quotes_the_folder_it_changes_into() -> None:
    assert resume_line("claude-code", C1, "/home/me/it's $(x)") == f"cd '/home/me/it'\"'\"'s $(x)' && claude --resume {C1}"
    assert resume_line("gemini-cli", G1, None) == f"gemini --resume {G1}"
    assert resume_line("codex-cli", X1, "/anywhere") == f"codex resume {X1}"  # Codex resumes from any folder


# ---------------------------------------------------------------------------------------------- excerpts


def test_short_text_is_shown_whole_on_one_line() -> None:
    assert excerpt("first line\n\n  second   line", ["second"]) == "first line second line"


def test_excerpt_is_centred_where_the_query_terms_are() -> None:
    text = "filler words " * 80 + "the ConnectionResetError came from the pool " + "more filler " * 80
    shown = excerpt(text, query_terms("ConnectionResetError pool"), width=120)
    assert "ConnectionResetError" in shown
    assert shown.startswith("…") and shown.endswith("…")
    assert len(shown) <= 122


def test_excerpt_prefers_the_window_with_more_distinct_terms() -> None:
    text = "alpha " + "x " * 300 + "beta gamma alpha " + "y " * 300
    shown = excerpt(text, ["alpha", "beta", "gamma"], width=60)
    assert "beta gamma alpha" in shown


def test_excerpt_width_counts_wide_characters_twice() -> None:
    text = "版本需求說明" * 200 + " toolchain " + "版本需求說明" * 200
    shown = excerpt(text, ["toolchain"], width=120)
    assert "toolchain" in shown
    assert sum(2 if "\u4e00" <= ch <= "\u9fff" else 1 for ch in shown) <= 130


def test_excerpt_without_any_term_shows_the_start() -> None:
    text = "beginning " + "word " * 200
    assert excerpt(text, ["absent"], width=50).startswith("beginning")


def test_query_terms_split_identifiers_and_drop_single_characters() -> None:
    terms = query_terms("fix chunk_ids_matching in a.py")
    assert "chunk_ids_matching" in terms and "chunk" in terms and "matching" in terms
    assert "a.py" in terms and "a" not in terms
    assert terms == sorted(terms, key=lambda t: (-len(t), t))


# ---------------------------------------------------------------------------------------------- weak signal


def test_a_query_whose_terms_occur_is_lexically_matched() -> None:
    assert lexically_unmatched({"toolchain": 2, "version": 2, "go.mod": 1}) is False


def test_a_query_that_only_matches_filler_words_is_lexically_unmatched() -> None:
    assert lexically_unmatched({"how": 2, "bake": 0, "sourdough": 0, "bread": 0}) is True
    assert lexically_unmatched({}) is True


def test_half_the_terms_matching_is_still_a_match() -> None:
    assert lexically_unmatched({"pydantic": 1, "用法": 0}) is False


def test_lexically_matched_is_never_weak() -> None:
    assert is_weak(False, [0.80, 0.79, 0.78])[0] is False


def test_unmatched_and_a_flat_vector_leg_is_weak() -> None:
    assert is_weak(True, [0.80, 0.795, 0.79, 0.79, 0.785])[0] is True


def test_unmatched_but_a_standout_vector_hit_is_not_weak() -> None:
    weak, top, background = is_weak(True, [0.90, 0.80, 0.79, 0.79, 0.78])
    assert weak is False and top == 0.90 and background == 0.79


# ---------------------------------------------------------------------------------------------- real components

REAL = REAL_FIXTURES


@pytest.fixture
def memory_with_logs(wwt_home: Path, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from wwt.service import Memory

    monkeypatch.setenv("WWT_MODEL_DIR", str(model_dir))
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("claude-code/spotter__short.jsonl", "claude-code/agentlogs__crud.jsonl",
                 "codex-cli/VibeCodingTracker__codex.jsonl"):
        shutil.copy(REAL / name, logs / name.replace("/", "__"))
    memory = Memory.open()
    memory.ingest([logs])
    yield memory, logs
    memory.close()


def test_a_filtered_vector_leg_is_never_empty_while_matches_exist(memory_with_logs) -> None:
    from wwt.models import Filters

    memory, _ = memory_with_logs
    store, indexes = memory._open_store(), memory._refresh_indexes()
    only_codex = Filters(platform="codex-cli")
    allowed = store.chunk_ids_matching(only_codex)
    assert allowed, "fixture should hold Codex chunks"
    # a query with nothing in common with the Codex session: its chunks are far from the query vector
    vector = memory._get_embedder().embed_queries(["mix phx.server doesnt seem to start"])[0]
    assert indexes.vector.search(vector, 5, allowed)
    hits = memory.search("mix phx.server doesnt seem to start", only_codex, limit=5)
    assert hits and {h.platform for h in hits} == {"codex-cli"}


def test_a_long_lived_memory_sees_data_ingested_by_another_process(memory_with_logs, tmp_path: Path) -> None:
    from wwt.models import Filters
    from wwt.service import Memory

    reader, _ = memory_with_logs
    assert not reader.search("hello world toolchain tentative proactiveness", Filters(git_branch="feature-branch"))
    more = tmp_path / "more"
    more.mkdir()
    shutil.copy(REAL / "claude-code/episodic-memory__tiny-conversation.jsonl", more)
    with Memory.open() as writer:  # stands in for the ingest worker
        writer.ingest([more])
    hits = reader.search("why are you so tentative", Filters(git_branch="feature-branch"))
    assert hits and hits[0].git_branch == "feature-branch"


def test_memory_locations_match_wwt_paths(wwt_home: Path) -> None:
    from wwt import paths
    from wwt.service import Memory

    memory = Memory.open()
    assert memory.store_path == paths.store_path()
    assert memory.index_dir == paths.index_dir()
    assert memory.log_path == paths.log_path()
    assert memory.models_dir == paths.models_dir()


def test_a_tiny_archive_never_gets_the_weak_warning() -> None:
    # One or two chunks in scope: the best match cannot stand out from a background that does not exist.
    assert is_weak(True, [0.80])[0] is False
    assert is_weak(True, [0.80, 0.79, 0.79, 0.78])[0] is False


def test_terminal_cells_count_wide_scripts_twice() -> None:
    from wwt.search import _cells

    assert _cells("redis TTL") == 9
    assert _cells("캐시 TTL") == 8
    assert _cells("日本語のテキスト") == 16
    assert _cells("ＡＢＣ ✅ 🚀") == 12


def test_terminal_cells_agree_with_unicodedata_on_real_messages() -> None:
    import unicodedata

    from wwt.parsers import discover, parse_file
    from wwt.search import _cells

    texts = [m.text for path, _ in discover([REAL_FIXTURES]) for s in parse_file(path)[0] for m in s.messages]
    exact = [sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in t) for t in texts]
    differing = sum(1 for t, e in zip(texts, exact, strict=True) if _cells(t) != e)
    assert len(texts) > 400 and differing <= len(texts) // 200  # a handful of rare emoji ranges differ


# ---------------------------------------------------------------------------------------------- issue 13 rules


def test_unseen_share_weighs_absent_terms_by_how_telling_they_would_be() -> None:
    total = 1000
    # a paraphrase: the common word it lost ("outdated", df would be high elsewhere) is absent, the rest present
    assert unseen_share({"prices": 40, "shop": 25, "release": 30, "outdated": 0}, total) < 0.5
    # nothing of it is in the archive
    assert unseen_share({"kafka": 0, "consumer": 0, "lag": 0}, total) == pytest.approx(1.0)
    assert unseen_share({"prices": 40}, total) == 0.0
    assert unseen_share({}, total) == 0.0


def test_unseen_names_are_latin_script_terms_absent_from_the_archive() -> None:
    assert unseen_names({"kafka": 0, "graphql": 0, "배포": 0, "cache": 3, "2024": 0}) == 2


def test_legs_agree_when_their_best_chunks_share_a_session() -> None:
    chunks = table(chunk(1, "A"), chunk(2, "A"), chunk(3, "B"))
    assert legs_agree([(1, 9.0), (3, 2.0)], [(2, 0.9), (3, 0.8)], chunks) is True
    assert legs_agree([(3, 9.0), (1, 2.0)], [(2, 0.9), (3, 0.8)], chunks) is False
    assert legs_agree([], [(2, 0.9)], chunks) is False


def test_bridged_query_appends_the_other_language_words_in_parentheses() -> None:
    assert bridged_query("인증서 만료", ["certificate", "expire"]) == "인증서 만료 (certificate, expire)"
    assert bridged_query("plain", []) == "plain"


def test_topic_tokens_drop_the_words_about_remembering() -> None:
    assert topic_tokens(["end", "up", "choosing", "base", "image"]) == ["base", "image"]
    assert topic_tokens(["결국", "정리", "색깔"]) == ["색깔"]
    assert topic_tokens(["time", "thing"]) == ["time", "thing"]  # nothing else left: keep what there is


# Names: what a user does not paraphrase. The questions below are written from the real fixture sessions' topics
# (the Phoenix app, xterm.js in tmux, the Go toolchain) and from everyday phrasing, not from the rule.


def test_names_are_words_written_like_names() -> None:
    assert name_words("why did xterm.js lose its scrollback inside tmux") == ["xterm.js", "tmux"]
    assert name_words("which Go version did go.mod pin") == ["Go", "go.mod"]
    assert name_words("the PydanticUserError about a missing discriminator") == ["PydanticUserError"]
    assert name_words("mix phx.server would not boot") == ["phx.server"]
    assert name_words("credo dialyzer mix_audit 설정 작업") == ["credo", "dialyzer", "mix_audit"]
    assert name_words("why did opentelemetry_exporter fail to compile") == ["opentelemetry_exporter"]


def test_everyday_words_are_not_names_even_capitalised_first_or_hyphenated() -> None:
    assert name_words("Pennies missing from customer statements") == []
    assert name_words("the thing with the random sign-outs after a hard-coded timeout") == []
    assert name_words("what did we end up choosing for the base image?") == []
    assert name_words("the retry settings, e.g. backoff and jitter, i.e. how long to wait") == []


def test_latin_words_in_a_korean_question_and_known_korean_spellings_are_names() -> None:
    assert name_words("CI에서 컨테이너 빌드가 느리던 거") == ["CI"]
    assert name_words("카프카에서 메시지가 밀리던 문제") == ["카프카"]  # a particle follows the name
    assert name_words("배포하고 나서 옛날 값이 보이던 거") == []


def test_a_name_counts_as_mentioned_under_any_of_its_spellings() -> None:
    archive = {"kubernetes", "redis", "webhook"}
    seen = archive.__contains__
    assert unseen_name_words(["k8s"], seen) == []  # the archive says kubernetes
    assert unseen_name_words(["레디스"], seen) == []  # the archive says redis
    assert unseen_name_words(["webhooks"], seen) == []  # plural of a word the archive has
    assert unseen_name_words(["Traefik", "redis"], lambda form: form.lower() in archive) == ["Traefik"]


def test_vocabulary_gap_is_the_share_of_topic_words_said_in_no_language() -> None:
    seen = {"certificate", "staging", "expired"}.__contains__
    assert vocabulary_gap(["인증서", "staging", "만료"], seen) == 0.0  # 인증서 → certificate, 만료 → expired
    assert vocabulary_gap(["sourdough", "bread", "staging"], seen) == pytest.approx(2 / 3)
    assert vocabulary_gap([], seen) == 0.0


def test_missing_everyday_words_count_only_in_an_archive_big_enough_to_have_them() -> None:
    assert never_said(0.7, 3, chunks=5000) is True
    assert never_said(0.7, 3, chunks=60) is False  # a paraphrase misses words a small archive never had
    assert never_said(0.7, 2, chunks=5000) is False  # too few words to judge
    assert never_said(0.4, 5, chunks=5000) is False


def test_not_one_topic_word_said_is_enough_once_the_archive_is_more_than_a_handful() -> None:
    assert never_said(1.0, 3, chunks=60) is True  # "what's the best sourdough starter": nothing of it anywhere
    assert never_said(1.0, 3, chunks=10) is False  # a first session or two: a paraphrase may share nothing yet
    assert never_said(0.9, 4, chunks=60) is False  # one word of it was said
    assert never_said(1.0, 2, chunks=60) is False  # too few words to judge


def _first_user_prompt(path: Path) -> str:
    from wwt.parsers import parse_file

    sessions, _ = parse_file(path)
    return next(m.text for s in sessions for m in s.messages if m.role == "user" and m.kind == "text")


def test_a_chunk_of_a_few_generic_words_is_demoted_and_a_real_exchange_is_not() -> None:
    # real first prompts: a one-line greeting from a composite fixture, and a real bug report
    greeting = _first_user_prompt(REAL_FIXTURES / "claude-code" / "agent-sessions__small.jsonl")
    report = _first_user_prompt(REAL_FIXTURES / "claude-code" / "VibeCodingTracker__claude_code.jsonl")
    assert thin_factor(report) == 1.0
    assert 1 - THIN_PENALTY <= thin_factor(greeting) < 1.0
    assert thin_factor("") == 1 - THIN_PENALTY


def test_role_labels_and_function_words_do_not_make_a_chunk_look_substantive() -> None:
    # the real Codex composite fixture's first turns, as the chunker joins them: one short request, then placeholders
    placeholder = "user: List the files user: [trimmed for fixture] user: [trimmed for fixture]"
    assert thin_factor(placeholder) == thin_factor("List files trimmed fixture")
    assert thin_factor("user: Hello assistant: Hi, how can I help you?") == thin_factor("Hello Hi how help")


def test_demoting_thin_chunks_reorders_by_the_new_scores_and_keeps_unknown_ids() -> None:
    class Row:
        def __init__(self, text: str) -> None:
            self.text = text

    rich = "the nightly export job wrote empty files because the glob used the old dashed date layout"
    chunks = {1: Row("user: hello"), 2: Row(rich)}
    demoted = demote_thin([(1, 1.0), (2, 0.9), (3, 0.8)], chunks)
    assert [i for i, _ in demoted] == [2, 3, 1]
    assert dict(demoted)[2] == 0.9 and dict(demoted)[3] == 0.8


@pytest.mark.parametrize("method", ["adaptive", "weighted_minmax", "rrf", "original"])
def test_without_a_vector_leg_every_method_ranks_by_words_alone(memory_with_logs, method: str) -> None:
    # No model (embed_query gives None): the lexical leg alone ranks and no hit loses for lacking a vector —
    # under `original` a lexical-only hit (≤ 0.4) used to fall below its 0.5 floor, leaving nothing.
    from wwt.models import Filters
    from wwt.search import run_search

    memory, _ = memory_with_logs
    store, indexes = memory._open_store(), memory._refresh_indexes()
    assert indexes.vector.count() > 0  # the archive has vectors; only the question cannot be embedded
    outcome = run_search("mix phx.server doesnt seem to start", Filters(), 5, store=store,
                         lexical=indexes.lexical, vector=indexes.vector, embed_query=lambda q: None,
                         tokenize=__import__("wwt.lexical", fromlist=["tokenize"]).tokenize, method=method)
    assert outcome.hits and outcome.hits[0].session_id == "55604662-cf2a-4331-851a-ec234028f8ca"
    assert outcome.hits[0].score == pytest.approx(1.0)  # the best lexical hit, as if fused over its one leg
