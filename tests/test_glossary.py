"""The Korean ↔ English developer glossary that bridges both legs across languages."""

from __future__ import annotations

from wwt.glossary import expand, translations
from wwt.lexical import tokenize


def test_a_korean_term_brings_its_english_words() -> None:
    assert {"certificate", "cert"} <= set(translations("스테이징 인증서가 만료됐어"))
    assert "cache" in translations("캐시를 비웠는데도 그대로야")


def test_korean_keys_match_the_longest_word_at_a_word_start() -> None:
    found = translations("인증서 갱신")
    assert "certificate" in found and "authentication" not in found  # 인증서, not its prefix 인증
    assert "server" not in translations("웹서버 설정")  # 서버 inside another word is not a match


def test_an_english_term_brings_its_korean_words_including_plurals_and_two_word_terms() -> None:
    assert "인증서" in translations("the staging certificate lapsed")
    assert "캐시" in translations("stale caches")
    assert "검색엔진" in translations("which search engine did we pick")


def test_words_already_in_the_query_are_not_added_again() -> None:
    assert "cache" not in translations("캐시 cache")


def test_a_query_without_developer_terms_adds_nothing() -> None:
    assert translations("how to bake sourdough bread") == []
    assert expand("how to bake sourdough bread", tokenize) == []


def test_expand_gives_lexical_tokens_of_the_translations() -> None:
    assert "인증서" in expand("certificate expired", tokenize)


def test_a_one_syllable_korean_key_is_a_word_only_before_a_particle_or_a_break() -> None:
    assert "column" not in translations("탭 여러 개 열어두면")  # 열어두면: "open", not 열 (column)
    assert "key" not in translations("키보드 단축키")  # 키보드: keyboard
    assert "key" in translations("키가 만료됐어")
    assert "queue" in translations("큐에 쌓였어")
    assert "value" in translations("그 값 말이야")


def test_everyday_git_and_ops_words_bridge_both_ways() -> None:
    """Pairs as Korean developer writing has them (Pro Git's Korean edition: 브랜치, 커밋, 머지, 리베이스, 저장소;
    everyday ops talk: 페일오버, 샤딩, 롤아웃, 헬스체크) — a Korean question about an English session must reach it."""
    found = translations("브랜치 머지하다가 리베이스로 커밋 정리했던 거")
    assert {"branch", "merge", "rebase", "commit"} <= set(found)
    assert "failover" in translations("레디스 페일오버 테스트")
    assert "sharding" in translations("유저 테이블 샤딩")
    assert {"health check", "healthcheck"} & set(translations("헬스체크가 실패해서 롤아웃이 멈췄던 거"))
    assert "저장소" in translations("which repository did we fork")
    assert "접근성" in translations("the accessibility audit")


def test_common_korean_words_that_are_not_developer_terms_add_nothing() -> None:
    """실수 (a mistake), 정리 (settling on something) and English "set"/"like"/"print" are everyday words, not
    the float type, a cleanup, a set type or printing."""
    assert translations("실수로 지웠던 거 어떻게 정리했지") == []
    assert not {"집합", "좋아요", "인쇄"} & set(translations("how did we set up logging like before and print it"))


def test_topic_terms_are_techniques_and_features_not_symptoms_or_everyday_words() -> None:
    from wwt.glossary import topics

    spelled = topics("레디스 페일오버 테스트")
    assert any({"페일오버", "failover"} <= set(forms) for forms in spelled)
    assert any("feature flag" in forms for forms in topics("the feature flags for checkout"))
    # the way people describe what went wrong is said a hundred ways: never evidence that a topic was not discussed
    assert topics("앱이 크래시 나고 에러가 떴던 거") == []
    assert topics("the outage after the change, a bug in the file") == []


def test_words_with_an_everyday_sense_are_not_topic_terms() -> None:
    """다시 실행 is "ran it again" before it is redo, 추천 "recommend me", 통화 a phone call, 코스 a course: a
    question using them is not about a technique the archive might lack."""
    from wwt.glossary import topics

    assert topics("다시 실행했더니 됐어") == []
    assert topics("그때 추천해준 라이브러리") == []
    assert topics("통화하면서 정했던 거") == []
    assert topics("온라인 코스 정리") == []
    assert topics("CORS 설정 바꿨던 거") == [("cors",)]


def test_english_words_with_a_general_sense_are_not_topic_terms() -> None:
    """'the push delivery', 'a high volume of requests', 'the session I mention in my notes': general words first."""
    from wwt.glossary import topics

    assert topics("push notification delivery was slow") == []
    assert topics("a high volume of requests") == []
    assert topics("the session I mention in my notes") == []
