"""The lexical tokenizer: one function for documents and queries, Korean morphemes + identifier-aware splits."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wwt.lexical import (
    MAX_CHARS_PER_TEXT,
    MAX_TOKEN_CHARS,
    MAX_TOKENS_PER_TEXT,
    identifier_tokens,
    tokenize,
    tokenize_many,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PostgreSQL", ["postgresql", "postgre", "sql"]),
        ("useEffect", ["useeffect", "use", "effect"]),
        ("HTTPServer", ["httpserver", "http", "server"]),
        ("snake_case_name", ["snake_case_name", "snake", "case", "name"]),
        ("pkg.module.fn", ["pkg.module.fn", "pkg", "module", "fn"]),
        ("C++", ["c++"]),
        ("C#", ["c#"]),
        ("k8s", ["k8s"]),
        ("v1.2.3", ["v1.2.3", "v1"]),
        ("ERR_OSSL_EVP_UNSUPPORTED", ["err_ossl_evp_unsupported", "err", "ossl", "evp", "unsupported"]),
        ("src/app/main.py", ["src/app/main.py", "src", "app", "main", "py"]),
        ("base64Encode", ["base64encode", "base64", "encode"]),
    ],
)
def test_identifiers_are_kept_whole_and_split_into_parts(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_a_sentence_final_dot_is_not_part_of_an_identifier() -> None:
    assert tokenize("I restarted nginx.") == ["restarted", "nginx"]


def test_english_is_lowercased_and_stop_words_dropped() -> None:
    assert tokenize("The Quick fox IS here") == ["quick", "fox"]


def test_korean_keeps_content_morphemes_and_drops_particles_and_endings() -> None:
    tokens = tokenize("로그인 버그를 고쳤어요. 데이터베이스 마이그레이션이 실패했다.")
    assert tokens == ["로그인", "버그", "고치", "데이터베이스", "마이그레이션", "실패"]


def test_korean_one_syllable_nouns_are_kept() -> None:
    tokens = tokenize("훅을 설정하고 키를 바꿨더니 락이 걸렸다")
    for noun in ("훅", "키", "락"):
        assert noun in tokens
    assert "을" not in tokens and "를" not in tokens and "이" not in tokens


def test_mixed_korean_and_identifiers_in_text_order() -> None:
    assert tokenize("PostgreSQL에서 useEffect 훅 오류가 났어요") == [
        "postgresql", "postgre", "sql", "useeffect", "use", "effect", "훅", "오류", "나",
    ]  # fmt: skip


def test_particle_glued_to_an_identifier_is_dropped() -> None:
    assert tokenize("config.yaml을 수정했다") == ["config.yaml", "config", "yaml", "수정"]


def test_decomposed_hangul_gives_the_same_tokens_as_composed() -> None:
    text = "훅을 설정하고 키를 바꿨더니 락이 걸렸다"
    nfd = unicodedata.normalize("NFD", text)
    assert nfd != text
    assert tokenize(nfd) == tokenize(text)


@pytest.mark.parametrize("text", ["", "   ", "\n\t", "?!.,", "그거 뭐였지"])
def test_empty_or_contentless_input_gives_no_tokens(text: str) -> None:
    assert tokenize(text) == []


def test_tokenize_many_matches_tokenize_one_by_one() -> None:
    texts = ["PostgreSQL 연결 오류", "", "useEffect 훅", "plain english words", "한국어만 있는 문장입니다"]
    assert tokenize_many(texts) == [tokenize(t) for t in texts]


def test_long_text_is_bounded_and_korean_is_found_across_segments() -> None:
    text = ("배포 스크립트가 실패했다\n" * 2_000) + "마지막줄에 쿠버네티스"
    tokens = tokenize(text)
    assert len(tokens) <= MAX_TOKENS_PER_TEXT
    short = "배포 스크립트가 실패했다\n" * 300 + "마지막줄에 쿠버네티스"
    assert "쿠버네티스" in tokenize(short)


def test_blob_like_identifiers_keep_parts_but_not_the_overlong_whole() -> None:
    blob = "a" * (MAX_TOKEN_CHARS + 10) + "/src/main.py"
    tokens = identifier_tokens(blob)
    assert all(len(t) <= MAX_TOKEN_CHARS for t in tokens)
    assert "main" in tokens and "src" in tokens


def test_query_and_document_tokens_overlap_for_a_part_query() -> None:
    document = set(tokenize("ERR_OSSL_EVP_UNSUPPORTED 에러가 webpack 빌드에서 났다"))
    assert set(tokenize("ossl 에러")) <= document


@settings(max_examples=150, deadline=None)
@given(
    st.text(
        alphabet=st.one_of(
            st.characters(codec="utf-8"),
            st.sampled_from(list("가나다훅키락을를이 _.-/:+#\n\u3000\xa0ABCxyz019")),
        ),
        max_size=80,
    )
)
def test_tokens_are_lowercase_single_words_of_bounded_length(text: str) -> None:
    tokens = tokenize(text)
    for token in tokens:
        assert token and token.split() == [token]
        assert token == token.lower()
        assert len(token) <= MAX_TOKEN_CHARS
    assert tokenize(text) == tokens  # deterministic


def test_a_real_log_without_korean_gives_each_identifiers_tokens_in_text_order() -> None:
    """The per-span shortcut for Latin-only text (spans remembered, joined in C) gives what splitting every
    identifier in order gives: a real Codex log's lines, read as text, repeated so spans come back."""
    import re

    from _shared import REAL_FIXTURES

    text = (REAL_FIXTURES / "codex-cli" / "agentlogs__crud.jsonl").read_text(encoding="utf-8")[:20_000]
    spans = re.findall(r"[\w$]+(?:[.\-/\\:@+]+[\w$]+)*(?:\+\+|#)?", text)
    expected = [token for span in spans for token in identifier_tokens(span)]
    assert tokenize(text) == expected
    assert tokenize_many([text, text]) == [expected, expected]
    words = " ".join(s for s in spans if len(s) <= 4 and len(identifier_tokens(s)) == 1)  # one token each
    dense = (words + " ") * (MAX_TOKENS_PER_TEXT // len(words.split()) + 1)  # more tokens than the bound
    assert len(dense) < MAX_CHARS_PER_TEXT
    assert tokenize(dense) == [identifier_tokens(w)[0] for w in dense.split()][:MAX_TOKENS_PER_TEXT]
