"""Writes ``wwt/known_tokens.json``: Kiwi's tokens for every Korean (or Han) word of the glossary, with the
tokenizer's signature (read back by ``wwt.known_tokens``; why: see there). tests/test_cold_start.py fails when
the record and Kiwi disagree.

    python -m wwt.known_tokens_write
"""

from __future__ import annotations

import json
from pathlib import Path

from wwt.fileio import atomic_write
from wwt.known_tokens import PATH
from wwt.lexical import _HANGUL_OR_HAN, tokenize_many, tokenizer_signature


def glossary_words() -> list[str]:
    """Every Korean (or Han) spelling in the glossary: what a question's bridge and spelling checks tokenize."""
    from wwt.glossary import _entries

    words = {word for korean, english in _entries() for word in (*korean, *english)}
    return sorted(word for word in words if _HANGUL_OR_HAN.search(word))


def compute() -> dict[str, list[str]]:
    """The tokens Kiwi gives each glossary word now (each word alone, as ``tokenize(word)`` does)."""
    words = glossary_words()
    return dict(zip(words, tokenize_many(words, recorded=False), strict=True))


def write() -> None:
    body = {"signature": tokenizer_signature(), "tokens": compute()}
    atomic_write(Path(PATH), json.dumps(body, ensure_ascii=False, indent=0, sort_keys=True) + "\n", 0o644)


if __name__ == "__main__":
    write()
    print(f"wrote {PATH}")
