"""The token cache (``wwt.token_cache``): what Kiwi worked out for a text is kept by the text's hash, so the
lexical index's reindex and the team push do not tokenize it again — and a cache that is stale, unreadable or
missing changes nothing but the time."""

from __future__ import annotations

from pathlib import Path

import pytest

import wwt.lexical_index as lexical_index
from wwt.lexical import tokenize_many
from wwt.lexical_index import LexDoc, LexicalIndex
from wwt.token_cache import TokenCache, cache_path

TEXTS = ["Redis 캐시 TTL을 300초로 줄였다", "fix the mTLS cert error in keylink", ""]


def test_tokens_come_back_as_they_were_put(tmp_path):
    cache = TokenCache(tmp_path / "tokens.sqlite3")
    cache.put_many(TEXTS, tokenize_many(TEXTS))
    cache.close()
    again = TokenCache(tmp_path / "tokens.sqlite3", readonly=True)
    got = again.get_many([TEXTS[1], "never seen", TEXTS[0]])
    assert got == {0: tokenize_many([TEXTS[1]])[0], 2: tokenize_many([TEXTS[0]])[0]}


def test_another_tokenizer_empties_the_cache(tmp_path, monkeypatch):
    cache = TokenCache(tmp_path / "tokens.sqlite3")
    cache.put_many(TEXTS[:1], [["stale", "tokens"]])
    cache.close()
    monkeypatch.setattr("wwt.lexical.tokenizer_signature", lambda: "wwt-lexical-99/kiwipiepy-x")
    assert TokenCache(tmp_path / "tokens.sqlite3", readonly=True).get_many(TEXTS[:1]) == {}
    assert TokenCache(tmp_path / "tokens.sqlite3").get_many(TEXTS[:1]) == {}


@pytest.mark.parametrize("content", [b"not a database at all" * 100, b""])
def test_an_unreadable_or_missing_cache_costs_only_time(tmp_path, content):
    path = tmp_path / "tokens.sqlite3"
    if content:
        path.write_bytes(content)
    assert TokenCache(path, readonly=True).get_many(TEXTS) == {}
    TokenCache(path).put_many(TEXTS, tokenize_many(TEXTS))  # no error
    assert TokenCache(tmp_path / "absent" / "x.sqlite3", readonly=True).get_many(TEXTS) == {}


def test_a_token_holding_the_separator_is_not_cached(tmp_path):
    cache = TokenCache(tmp_path / "tokens.sqlite3")
    cache.put_many(["odd"], [["a\x1fb"]])
    assert cache.get_many(["odd"]) == {}


def _docs(texts: list[str]) -> list[LexDoc]:
    return [LexDoc(id=i + 1, text=t, session_id="s", project="p", platform="claude-code", git_branch=None,
                   cwd=None, start_ts=None, end_ts=None) for i, t in enumerate(texts)]


def test_the_lexical_index_tokenizes_a_text_once_across_rebuilds(tmp_path: Path, monkeypatch):
    calls: list[int] = []

    def counting(texts):
        calls.append(len(texts))
        return tokenize_many(texts)

    monkeypatch.setattr(lexical_index, "tokenize_many", counting)
    first = LexicalIndex(tmp_path / "index" / "lexical")
    first.add(_docs(TEXTS))
    first.commit()
    first.close()
    assert calls == [3] and cache_path(tmp_path / "index").exists()
    rebuilt = LexicalIndex(tmp_path / "index2" / "lexical")  # another index dir: another cache, tokenized again
    rebuilt.add(_docs(TEXTS))
    rebuilt.close()
    assert calls == [3, 3]
    again = LexicalIndex(tmp_path / "index" / "other-lexical")  # beside the first: its cache answers
    again.add(_docs([*TEXTS, "a new text"]))
    again.commit()
    assert calls == [3, 3, 1]
    assert again.search("keylink", None, 5)[0][0] == 2  # the cached tokens index like fresh ones
    again.close()


def test_forget_leaves_no_tokens_of_the_conversation_behind(tmp_path):
    """``wwt forget`` removes a conversation from the archive and the indexes for good — and from the token
    cache, which holds its words too; the other conversations' tokens stay."""
    import os
    import sqlite3
    import subprocess
    import sys

    from _shared import REAL_FIXTURES

    home = tmp_path / "home"
    env = {**os.environ, "WWT_HOME": str(home), "WWT_ENGINE": "off"}
    files = [REAL_FIXTURES / "claude-code" / "spotter__short.jsonl",
             REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl"]
    subprocess.run([sys.executable, "-m", "wwt", "ingest", *map(str, files)], env=env, check=True,
                   capture_output=True, timeout=600)
    store = sqlite3.connect(home / "wwt.sqlite3")
    sessions = [r[0] for r in store.execute("SELECT session_id FROM sessions WHERE parent_session_id IS NULL")]
    assert len(sessions) >= 2
    gone, kept = sessions[0], sessions[1]
    text_of = {sid: [r[0] for r in store.execute("SELECT lexical_text FROM chunks WHERE root_session_id = ?", (sid,))]
               for sid in (gone, kept)}
    store.close()
    cache = cache_path(home / "index")
    assert oct(cache.stat().st_mode & 0o777) == "0o600"
    assert len(TokenCache(cache, readonly=True).get_many(text_of[gone])) == len(text_of[gone]) > 0
    subprocess.run([sys.executable, "-m", "wwt", "forget", gone, "--yes"], env=env, check=True,
                   capture_output=True, timeout=300)
    assert TokenCache(cache, readonly=True).get_many(text_of[gone]) == {}
    assert len(TokenCache(cache, readonly=True).get_many(text_of[kept])) == len(text_of[kept]) > 0
