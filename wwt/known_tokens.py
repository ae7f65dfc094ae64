"""Kiwi's tokens for the glossary's Korean words, recorded, so that an English question needs no Kiwi.

An English question is bridged to the glossary's Korean words (server → 서버, ``wwt.glossary.translations``),
and the "nothing relevant" checks look its terms up under every spelling (쿠버네티스 for k8s): each of those
Korean words goes through ``wwt.lexical.tokenize``, and Kiwi's load — 1–2 s of CPU, most of it holding the GIL
— was the largest part of a cold first ``wwt search`` (issue 25). Their tokens depend only on the word, Kiwi's
version and wwt's tokenizer (``lexical.tokenizer_signature``), so they are recorded here once, in
``known_tokens.json``; ``wwt.lexical`` answers a text that is exactly one of these words from the record when
the signature matches, and asks Kiwi otherwise. tests/test_cold_start.py fails when the record and Kiwi
disagree: regenerate with

    python -m wwt.known_tokens_write

(a module of its own: the writer needs ``wwt.lexical``, which reads this record.)
"""

from __future__ import annotations

import json
import os

PATH = os.path.join(os.path.dirname(__file__), "known_tokens.json")


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
