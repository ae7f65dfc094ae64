"""Chunker spec: small hand-built conversations, one rule per test."""

from __future__ import annotations

from wwt.chunker import (
    EMBED_TOKEN_BUDGET,
    MIN_CHARS,
    MIN_REQUEST_CHARS,
    TOOL_RESULT_HEAD,
    TOOL_RESULT_TAIL,
    bound_middle,
    build_turns,
    chunk_session,
    estimate_tokens,
    fit_to_budget,
    split_code_blocks,
    vector_key,
    window_spans,
)
from wwt.models import FLAG_COMPACTION_SUMMARY, FLAG_ERROR, Message

PROSE = "we were discussing how the ingest worker debounces hook events before it takes the writer lock"


def user(i: int, text: str | None = None, ts: str | None = None) -> Message:
    return Message(f"u{i}", "user", "text", text or f"question {i}: {PROSE}", timestamp=ts)


def assistant(i: int, text: str | None = None, ts: str | None = None) -> Message:
    return Message(f"a{i}", "assistant", "text", text or f"answer {i}: {PROSE}, and here is why it matters", timestamp=ts)


def exchange(n: int) -> list[Message]:
    """n user/assistant pairs = 2n turns, one minute apart."""
    out: list[Message] = []
    for i in range(n):
        out.append(user(i, ts=f"2026-03-01T10:{2 * i:02d}:00Z"))
        out.append(assistant(i, ts=f"2026-03-01T10:{2 * i + 1:02d}:00Z"))
    return out


# ---------------------------------------------------------------------------------------------- windows


def test_windows_are_six_turns_every_four_and_a_contained_tail_is_dropped():
    assert window_spans(10) == [(0, 6), (4, 10)]
    assert window_spans(11) == [(0, 6), (4, 10), (8, 11)]
    assert window_spans(3) == [(0, 3)]
    assert window_spans(0) == []


def test_consecutive_windows_overlap_by_two_turns():
    chunks = chunk_session(exchange(5), "s")  # 10 turns
    assert len(chunks) == 2
    first_turns = {line.split(":")[0] for line in chunks[0].embed_text.splitlines()}
    assert first_turns == {"user", "assistant"}
    # turns 4 and 5 (user 2, assistant 2) are in both windows
    assert "question 2" in chunks[0].embed_text and "question 2" in chunks[1].embed_text
    assert "answer 2" in chunks[0].embed_text and "answer 2" in chunks[1].embed_text
    assert "question 1" not in chunks[1].embed_text


def test_window_without_a_user_turn_is_skipped():
    msgs = exchange(2) + [assistant(10 + i) for i in range(8)]  # turns 0-3 mixed, turns 4-11 assistant only
    chunks = chunk_session(msgs, "s")
    assert len(chunks) == 1  # [0:6] has user turns; [4:10] and [8:12] have none
    assert (chunks[0].first_native_id, chunks[0].last_native_id) == ("u0", "a11")


def test_window_under_min_chars_is_skipped():
    short_tail = [user(20 + i, word) for i, word in enumerate(["ok", "yes", "go on", "thanks"])]
    chunks = chunk_session(exchange(4) + short_tail, "s")  # 12 turns: [0:6], [4:10], [8:12]
    assert [c.first_native_id for c in chunks] == ["u0", "u2"]
    assert all(len(c.embed_text) >= MIN_CHARS for c in chunks)


def test_a_short_session_with_no_full_window_still_gets_one_chunk():
    short = [user(0, "ruff B905 zip strict 어떻게 끄지?"), assistant(0, "Add strict=True to each zip() call, or ignore B905 in the ruff config.")]
    (chunk,) = chunk_session(short, "s")
    assert len(chunk.embed_text) < MIN_CHARS and "B905" in chunk.lexical_text


def test_single_turn_session_with_nothing_said_gives_no_chunk():
    assert chunk_session([user(0, "ok")], "s") == []
    assert chunk_session([assistant(0)], "s") == []


def test_short_assistant_status_lines_are_not_turns():
    msgs = [user(0), Message("a0", "assistant", "text", "Let me check."), assistant(1)]
    turns = build_turns(msgs)
    assert [t.role for t in turns] == ["user", "assistant"]
    assert any("Let me check." in c for c in turns[0].context)
    # the threshold is in estimated tokens: 30 CJK characters say as much as 90 English ones
    chinese = Message("a1", "assistant", "text", "我來幫你處理這些任務。首先讓我創建一個待辦清單來追蹤所有任務。")
    assert [t.role for t in build_turns([user(0), chinese])] == ["user", "assistant"]


# ---------------------------------------------------------------------------------------------- text views


def test_code_blocks_leave_the_embedded_text_but_stay_lexically_findable():
    code = "```python\ndef load_settings_v2(path):\n    raise KeyError('WWT_HOME')\n```"
    msgs = [user(0), assistant(0, f"Use this helper, it reads the file and fails loudly:\n{code}\nThat is all.")]
    (chunk,) = chunk_session(msgs, "s")
    assert "load_settings_v2" not in chunk.embed_text
    assert "load_settings_v2" in chunk.lexical_text
    assert "That is all." in chunk.embed_text


def test_split_code_blocks_handles_an_unclosed_fence():
    prose, blocks = split_code_blocks("before\n```sh\nrm -rf build\n")
    assert prose == "before" and blocks == ["```sh\nrm -rf build\n"]


def test_tool_calls_and_results_are_lexical_only_and_a_huge_output_is_bounded_head_and_tail():
    huge = "line of noisy build output\n" * 5000 + "FATAL: ModuleNotFoundError: No module named 'kiwipiepy'"
    msgs = [
        user(0),
        Message("c0", "assistant", "tool_call", "pip install -e .", tool_name="Bash"),
        Message("r0", "user", "tool_result", huge),
        assistant(0),
    ]
    (chunk,) = chunk_session(msgs, "s")
    assert "pip install -e ." in chunk.lexical_text and "pip install" not in chunk.embed_text
    assert "No module named 'kiwipiepy'" in chunk.lexical_text  # the tail survives
    assert len(chunk.lexical_text) < TOOL_RESULT_HEAD + TOOL_RESULT_TAIL + 2000
    assert "noisy build output" not in chunk.embed_text


def test_error_results_are_labelled_and_kept():
    msgs = [user(0), Message("r0", "user", "tool_result", "Traceback ...\nValueError: bad epoch", flags=frozenset({FLAG_ERROR})), assistant(0)]
    (chunk,) = chunk_session(msgs, "s")
    assert "error: Traceback" in chunk.lexical_text


def test_thinking_is_not_embedded_and_compaction_summaries_are_never_user_text():
    summary = Message("sum", "user", "text", "This session is being continued from a previous conversation about tantivy",
                      flags=frozenset({FLAG_COMPACTION_SUMMARY}))
    thinking = Message("t0", "assistant", "thinking", "maybe the index writer lock is stale")
    msgs = [summary, user(0), thinking, assistant(0)]
    turns = build_turns(msgs)
    assert [t.role for t in turns] == ["user", "assistant"]
    (chunk,) = chunk_session(msgs, "s")
    assert "continued from a previous conversation" not in chunk.embed_text
    assert "continued from a previous conversation" in chunk.lexical_text
    assert "writer lock is stale" not in chunk.embed_text
    assert "writer lock is stale" in chunk.lexical_text
    # a session of only a summary and assistant text has no user turn → nothing to index as a user question
    assert chunk_session([summary, assistant(0), assistant(1)], "s") == []


def test_assistant_text_is_not_capped_at_500_chars():
    long_answer = "The retry loop backs off exponentially. " * 30  # 1200 chars
    (chunk,) = chunk_session([user(0), assistant(0, long_answer)], "s")
    assert chunk.embed_text.count("backs off exponentially") == 30


def test_embedded_text_fits_the_token_budget_for_korean_and_english():
    korean = "인덱스를 다시 만들 때 임베딩을 재계산하지 않도록 저장된 벡터를 사용합니다. " * 40
    english = "the vector index is rebuilt from the stored float32 blobs without the model. " * 40
    msgs = [user(0, korean), assistant(0, english), user(1, korean), assistant(1, english)]
    (chunk,) = chunk_session(msgs, "s")
    assert estimate_tokens(chunk.embed_text) <= 480 + 8  # + the role labels and join newlines
    assert "user: 인덱스를" in chunk.embed_text and "assistant: the vector" in chunk.embed_text


def test_fit_to_budget_gives_unused_share_to_longer_texts():
    out = fit_to_budget(["short", "x" * 3000], 100, len)
    assert out[0] == "short" and 80 <= len(out[1]) <= 97


def test_a_custom_token_counter_is_honoured():
    msgs = exchange(3)
    (chunk, *_) = chunk_session(msgs, "s", count_tokens=lambda t: len(t.split()), token_budget=40)
    assert len(chunk.embed_text.split()) <= 40 + 6


# ---------------------------------------------------------------------------------------------- keys, time


def test_chunk_keys_are_stable_and_an_appended_turn_changes_at_most_two_chunks():
    for n_pairs in range(2, 12):
        before = chunk_session(exchange(n_pairs), "s")
        grown = exchange(n_pairs) + [user(99, ts="2026-03-01T12:00:00Z")]
        after = chunk_session(grown, "s")
        assert [c.chunk_key for c in chunk_session(exchange(n_pairs), "s")] == [c.chunk_key for c in before]
        old, new = {c.chunk_key for c in before}, {c.chunk_key for c in after}
        assert len(new - old) <= 2, n_pairs
        assert len(old - new) <= 2, n_pairs


def test_an_appended_tool_result_only_changes_the_last_windows():
    base = exchange(8)
    grown = base + [Message("r9", "user", "tool_result", "exit code 1: segfault in hnswlib")]
    old = {c.chunk_key for c in chunk_session(base, "s")}
    new = {c.chunk_key for c in chunk_session(grown, "s")}
    assert len(new - old) <= 2 and len(old & new) >= len(old) - 2


def test_key_depends_on_session_and_content():
    a = chunk_session(exchange(2), "s1")[0]
    b = chunk_session(exchange(2), "s2")[0]
    edited = exchange(2)
    edited[1] = assistant(0, "a completely different answer about a completely different topic, long enough " * 2)
    c = chunk_session(edited, "s1")[0]
    assert len({a.chunk_key, b.chunk_key, c.chunk_key}) == 3
    assert a.embed_hash == b.embed_hash  # same text → same embedding cache entry


def test_time_range_and_message_range_per_chunk():
    chunks = chunk_session(exchange(5), "s")
    assert (chunks[0].start_ts, chunks[0].end_ts) == ("2026-03-01T10:00:00Z", "2026-03-01T10:05:00Z")
    assert (chunks[1].start_ts, chunks[1].end_ts) == ("2026-03-01T10:04:00Z", "2026-03-01T10:09:00Z")
    assert (chunks[0].first_seq, chunks[0].last_seq) == (0, 5)
    assert (chunks[1].first_native_id, chunks[1].last_native_id) == ("u2", "a4")
    custom = chunk_session(exchange(5), "s", seqs=[10 + i for i in range(10)])
    assert (custom[1].first_seq, custom[1].last_seq) == (14, 19)


def test_subagent_chunks_carry_the_root_session_id():
    (chunk,) = chunk_session(exchange(2), "agent-123", root_session_id="root-abc")
    assert chunk.session_id == "agent-123" and chunk.root_session_id == "root-abc"
    (own,) = chunk_session(exchange(2), "root-abc")
    assert own.root_session_id == "root-abc"


def test_display_text_is_a_readable_bounded_excerpt():
    (chunk,) = chunk_session(exchange(20)[:2], "s")
    assert chunk.display_text.startswith("user: question 0")
    big = chunk_session(exchange(20), "s")[0]
    assert len(big.display_text) <= 750


def test_a_name_from_the_middle_of_a_long_tool_output_stays_lexically_findable():
    """Real log: the exception class handled halfway down a file the agent read (CommandOnCooldown) is cut out
    of the chunk's tool-output excerpt, but listed among the cut part's names — lexical only, never embedded."""
    from _shared import REAL_FIXTURES

    from wwt.parsers import parse_file

    (session,), _ = parse_file(REAL_FIXTURES / "gemini-cli" / "VibeCodingTracker__gemini.jsonl")
    chunks = chunk_session(session.messages, session.session_id)
    holding = [c for c in chunks if "CommandOnCooldown" in c.lexical_text]
    assert holding and all("CommandOnCooldown" not in c.embed_text for c in chunks)
    assert all("names: " in c.lexical_text for c in holding)


def test_names_cut_by_the_excerpt_edges_are_not_listed():
    text = "x" * 10 + " load_cogs " + "y" * 20
    # the cut starts inside "load_cogs": its remainder "d_cogs" is not a name
    assert "d_cogs" not in bound_middle(text, 13, 5, keep_names=True)
    assert "load_cogs" in bound_middle("a" * 30 + " load_cogs " + "b" * 30, 20, 20, keep_names=True)


# ---------------------------------------------------------------------------------------------- requests


def test_requests_are_the_windows_user_turns_each_alone_without_code():
    msgs = [user(0, "how should the ingest worker debounce hook events?\n```py\nsleep(1)\n```"), assistant(0),
            user(1, "and what if two hooks arrive within the same second — do both get archived?"), assistant(1)]
    (chunk,) = chunk_session(msgs, "s")
    assert chunk.requests == ["user: how should the ingest worker debounce hook events?",
                              "user: and what if two hooks arrive within the same second — do both get archived?"]
    assert not any("answer" in r or "sleep(1)" in r for r in chunk.requests)


def test_short_repeated_and_whole_text_requests_are_left_out():
    msgs = [user(0, "ok go on"), assistant(0), user(1), assistant(1), user(2), assistant(2)]
    msgs[4] = Message("u2", "user", "text", msgs[2].text)  # the same request twice in one window
    (chunk,) = chunk_session(msgs, "s")
    assert chunk.requests == [f"user: {msgs[2].text}"]
    assert all(len(r) >= MIN_REQUEST_CHARS for r in chunk.requests)
    # a lone user turn that is the whole embedded text adds nothing to blend
    (alone,) = chunk_session([user(0)], "s")
    assert alone.embed_text == f"user: {user(0).text}" and alone.requests == []


def test_a_long_request_is_fitted_to_the_embedding_budget():
    long = "the hook debounce window " * 400
    (chunk,) = chunk_session([user(0, long), assistant(0)], "s")
    (request,) = chunk.requests
    assert request.startswith("user: the hook debounce window") and len(request) < len(long)
    assert estimate_tokens(request) <= EMBED_TOKEN_BUDGET + 2  # the cut mark


def test_the_vector_key_names_the_recipe_only_when_requests_are_blended_in():
    (with_requests,) = chunk_session(exchange(3), "s")
    assert with_requests.requests and with_requests.embed_hash == vector_key(with_requests.embed_text,
                                                                              with_requests.requests)
    # a chunk with nothing to blend keeps the key its vector had before blending existed: no re-embedding
    import hashlib

    (plain,) = chunk_session([user(0, "ok"), assistant(0, PROSE * 4)], "s")
    assert plain.requests == []
    assert plain.embed_hash == hashlib.sha256(plain.embed_text.encode()).hexdigest()
    assert vector_key("text", ["user: a request"]) != vector_key("text", ["user: another request"])
