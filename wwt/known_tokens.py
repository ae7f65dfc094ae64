"""Kiwi's tokens for the glossary's Korean words, recorded, so that an English question needs no Kiwi.

An English question is bridged to the glossary's Korean words (server → 서버, ``wwt.glossary.translations``),
and the "nothing relevant" checks look its terms up under every spelling (쿠버네티스 for k8s): each of those
Korean words goes through ``wwt.lexical.tokenize``, and Kiwi's load — 1–2 s of CPU, most of it holding the GIL
— was the largest part of a cold first ``wwt search`` (issue 25). Their tokens depend only on the word, Kiwi's
version and wwt's tokenizer (``lexical.tokenizer_signature``), so they are recorded here once, in
``known_tokens.json``; ``wwt.lexical`` answers a text that is exactly one of these words from the record when
the signature matches, and asks Kiwi otherwise. tests/test_cold_start.py fails when the record and Kiwi
disagree: regenerate with

    python -m wwt.known_tokens --write
"""

from __future__ import annotations

import json
import os
import re

PATH = os.path.join(os.path.dirname(__file__), "known_tokens.json")
_KIWI_SCRIPT = re.compile(r"[\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af\u3400-\u4dbf\u4e00-\u9fff]")


def glossary_words() -> list[str]:
    """Every Korean (or Han) spelling in the glossary: what a question's bridge and spelling checks tokenize."""
    from wwt.glossary import _entries

    words = {word for korean, english in _entries() for word in (*korean, *english)}
    return sorted(word for word in words if _KIWI_SCRIPT.search(word))


def compute() -> dict[str, list[str]]:
    """The tokens Kiwi gives each glossary word now (each word alone, as ``tokenize(word)`` does)."""
    from wwt.lexical import tokenize_many

    words = glossary_words()
    return dict(zip(words, tokenize_many(words, recorded=False), strict=True))


def recorded(signature: str) -> dict[str, list[str]]:
    """The record, when it was made with the tokenizer of ``signature``; else empty (Kiwi answers)."""
    try:
        with open(PATH, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("signature") != signature or not isinstance(data.get("tokens"), dict):
        return {}
    return data["tokens"]


def write() -> None:
    from pathlib import Path

    from wwt.fileio import atomic_write
    from wwt.lexical import tokenizer_signature

    body = {"signature": tokenizer_signature(), "tokens": compute()}
    atomic_write(Path(PATH), json.dumps(body, ensure_ascii=False, indent=0, sort_keys=True) + "\n", 0o644)


if __name__ == "__main__":
    import sys

    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python -m wwt.known_tokens --write")
    write()
    print(f"wrote {PATH}")
