"""The one tokenizer for the lexical leg: documents and queries go through the same ``tokenize``.

Korean goes through Kiwi (content morphemes only: nouns — one-syllable ones such as 훅/키/락 included —,
verb/adjective stems, roots, adverbs; particles and endings dropped). Latin-script text and code are split by
rules, not by Kiwi, so identifiers survive: every identifier is kept whole *and* split into its parts
(``useEffect`` → ``useeffect use effect``; ``src/app/main.py`` → ``src/app/main.py src app main py``), so a
query for either the whole or a part matches. Everything is NFC-normalised and lowercased.

Kiwi construction costs ~0.6 s and ~225 MB, so there is one instance per process, built on first use, and
Kiwi is skipped entirely for text without Hangul or Han characters.
"""

from __future__ import annotations

import os
import re
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import chain, islice
from typing import Any

# Bump when the tokens produced for the same text change: indexes built with another version must be rebuilt.
TOKENIZER_VERSION = "3"

MAX_CHARS_PER_TEXT = 60_000  # longer texts (huge tool outputs) are tokenized on their first 60k characters
MAX_TOKENS_PER_TEXT = 12_000  # bound on tokens per document, whatever its length
MAX_TOKEN_CHARS = 64  # longer "identifiers" are blobs (base64, hashes): keep their parts only
KIWI_SEGMENT_CHARS = 2_000  # Kiwi gets long texts in line-aligned pieces of about this size, in one batch
SPAN_CACHE_SIZE = 1 << 16  # identifier spans remembered with their tokens (words repeat: most spans are hits)

# Kiwi tags whose morphemes carry meaning (tags may carry a suffix such as "VA-I"; compared on the base tag).
_KEEP_KOREAN_TAGS = frozenset({"NNG", "NNP", "NR", "SH", "XR", "VV", "VA", "MAG"})
# Very frequent stems/adverbs that only add noise to queries ("했다", "있어", "안 돼", ...).
_KOREAN_STOP = frozenset(
    {
        "하", "되", "있", "없", "않", "같", "이", "그렇", "이렇", "어떻",
        "안", "못", "잘", "더", "또", "좀", "다", "왜", "그냥", "너무", "정말", "진짜", "아주", "매우",
        "그리고", "그래서", "하지만", "그런데", "그러면", "그럼", "혹시", "어떻게", "이제", "지금", "바로",
    }
)  # fmt: skip
_ENGLISH_STOP = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been being am do does did
    it its this that these those there here i me my we our you your he she they them their his her
    what which who whom when where why how not no so than then too very can could would should will shall
    may might must just also about into over""".split()
)

_HANGUL_OR_HAN = re.compile(
    r"[\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af\u3400-\u4dbf\u4e00-\u9fff]"
)
# Scripts Kiwi handles (plus kana, which Kiwi does not, but which must not glue onto Latin identifiers).
_NON_LATIN_SCRIPT = re.compile(
    r"[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af\u3400-\u4dbf\u4e00-\u9fff]"
)
# An identifier-like span: word runs joined by . - / \ : @ (paths, URLs, dotted names, versions), with an
# optional ``++``/``#`` tail (C++, C#). A trailing sentence dot is not part of it.
_SPAN = re.compile(r"[\w$]+(?:[.\-/\\:@+]+[\w$]+)*(?:\+\+|#)?")
_PIECE_SPLIT = re.compile(r"[\W_]+")
# camelCase / PascalCase / ACRONYMWord parts; trailing digits stay with their word (sha256, base64, http2).
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])[0-9]*|[A-Z]?[a-z]+[0-9]*|[0-9]+")

_kiwi: Any = None
_kiwi_lock = threading.Lock()


def get_kiwi() -> Any:
    """The process-wide Kiwi, built on first use (thread-safe).

    Without the typo and multi-word dictionaries: ~190 MB less RSS, ~40 % faster construction, and on
    KorQuAD (1,500-question sample) lexical MRR@10 0.930 → 0.936. Without the default user dictionary
    (mostly proper nouns — persons, places — that agent logs rarely hold): ~52 MB less and half the cold
    start, KorQuAD MRR@10 hybrid 0.9385 → 0.9384, conversation recall unchanged (benchmarks/RESULTS.md)."""
    global _kiwi
    if _kiwi is None:
        with _kiwi_lock:
            if _kiwi is None:
                os.environ.setdefault("MIMALLOC_PURGE_DELAY", "0")  # read when kiwipiepy's mimalloc starts
                from kiwipiepy import Kiwi

                kiwi = Kiwi(load_typo_dict=False, load_multi_dict=False, load_default_dict=False)
                kiwi.tokenize("한국어 모델을 불러온다")  # the language model loads on the first call
                _release_load_garbage()
                _kiwi = kiwi
    return _kiwi


def _release_load_garbage() -> None:
    """Hand the memory Kiwi used only while loading back to the OS: ≈ 47 MB less resident in a long-lived
    process (MCP server), tokens unchanged. kiwipiepy's wheel has mimalloc built in and exports
    ``mi_collect``; anything missing (another build, another libc) just skips this."""
    import ctypes

    try:
        import _kiwipiepy

        ctypes.CDLL(_kiwipiepy.__file__).mi_collect(True)
    except (ImportError, OSError, AttributeError):
        pass
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def tokenizer_signature() -> str:
    """Identifies the token stream: stored with an index so a changed tokenizer or Kiwi forces a rebuild."""
    try:
        from importlib.metadata import version

        kiwi_version = version("kiwipiepy")
    except Exception:  # pragma: no cover - metadata missing in odd installs
        kiwi_version = "unknown"
    return f"wwt-lexical-{TOKENIZER_VERSION}/kiwipiepy-{kiwi_version}"


def tokenize(text: str) -> list[str]:
    """Index/query tokens for one text."""
    return tokenize_many([text])[0]


def tokenize_many(texts: Sequence[str], recorded: bool = True) -> list[list[str]]:
    """Tokens for many texts, with every Korean piece of every text sent to Kiwi in one batch call. A text
    that is exactly one of the glossary's Korean words is answered from ``wwt.known_tokens`` (Kiwi's own
    tokens for it, recorded) unless ``recorded`` is False: an English question then never loads Kiwi."""
    prepared = [_prepare(text) for text in texts]
    # (text index, base offset, segment) for every segment that needs Kiwi.
    jobs: list[tuple[int, int, str]] = []
    known: dict[int, list[str]] = {}
    for index, text in enumerate(prepared):
        if _HANGUL_OR_HAN.search(text):
            if recorded and (tokens := _recorded_tokens().get(texts[index])) is not None:
                known[index] = list(tokens)
                continue
            jobs.extend((index, base, segment) for base, segment in _segments(text))
    korean: list[list[tuple[int, str]]] = [[] for _ in prepared]
    if jobs:
        results = get_kiwi().tokenize([segment for _, _, segment in jobs])
        for (index, base, _), morphemes in zip(jobs, results, strict=True):
            korean[index].extend(_korean_tokens(morphemes, base))
    return [known[index] if index in known else _merge(_latin_tokens(text), ko) if ko else _latin_only(text)
            for index, (text, ko) in enumerate(zip(prepared, korean, strict=True))]


_recorded: dict[str, list[str]] | None = None


def _recorded_tokens() -> dict[str, list[str]]:
    """``wwt.known_tokens``' record for this tokenizer (empty when it was made with another), read once."""
    global _recorded
    if _recorded is None:
        from wwt.known_tokens import recorded

        _recorded = recorded(tokenizer_signature())
    return _recorded


def _prepare(text: str) -> str:
    if not text:
        return ""
    return unicodedata.normalize("NFC", text[:MAX_CHARS_PER_TEXT])


def _segments(text: str) -> Iterable[tuple[int, str]]:
    """Line-aligned pieces of about KIWI_SEGMENT_CHARS, with their start offsets (Kiwi is faster on pieces
    and a batch of pieces keeps one call per ingest batch)."""
    start = 0
    while start < len(text):
        end = min(start + KIWI_SEGMENT_CHARS, len(text))
        if end < len(text):
            cut = text.rfind("\n", start + KIWI_SEGMENT_CHARS // 2, end)
            if cut == -1:
                cut = text.rfind(" ", start + KIWI_SEGMENT_CHARS // 2, end)
            if cut != -1:
                end = cut + 1
        yield start, text[start:end]
        start = end


def _korean_tokens(morphemes: Iterable[Any], base: int) -> Iterable[tuple[int, str]]:
    for morpheme in morphemes:
        tag = morpheme.tag.split("-", 1)[0]
        if tag not in _KEEP_KOREAN_TAGS:
            continue
        form = morpheme.form
        if not _HANGUL_OR_HAN.search(form) or form in _KOREAN_STOP or len(form.split()) != 1:
            continue  # a token must never hold whitespace: the index joins tokens with spaces
        yield base + morpheme.start, form.lower()


def _latin_tokens(text: str) -> list[tuple[int, str]]:
    """Latin/code tokens with their offsets (to interleave with Kiwi's)."""
    if not text:
        return []
    latin_only = _NON_LATIN_SCRIPT.sub(" ", text)  # same length: offsets stay valid
    tokens: list[tuple[int, str]] = []
    for match in _SPAN.finditer(latin_only):
        start = match.start()
        tokens.extend((start, token) for token in _span_tokens(match.group()))
    return tokens


def _latin_only(text: str) -> list[str]:
    """``_latin_tokens`` without offsets, for a text Kiwi found nothing in (most of a coding history): the
    spans found and their tokens looked up and joined in C, cut to MAX_TOKENS_PER_TEXT."""
    if not text:
        return []
    spans = _SPAN.findall(_NON_LATIN_SCRIPT.sub(" ", text))
    return list(islice(chain.from_iterable(map(_span_tokens, spans)), MAX_TOKENS_PER_TEXT))


@lru_cache(maxsize=SPAN_CACHE_SIZE)
def _span_tokens(span: str) -> tuple[str, ...]:
    """``identifier_tokens`` remembered: a history repeats its words and names, and splitting one in Python
    cost more than Kiwi and tantivy together on a 20k-chunk first ingest (benchmarks/RESULTS.md)."""
    return tuple(identifier_tokens(span))


def identifier_tokens(span: str) -> list[str]:
    """The whole identifier (lowercased) followed by its distinct parts: separator pieces, then camel parts.

    Parts and wholes shorter than 2 characters, longer than MAX_TOKEN_CHARS, or English stop words are left
    out; the whole is kept even when short if it carries a symbol (``c++``, ``c#``).
    """
    out: list[str] = []
    seen: set[str] = set()

    def emit(token: str) -> None:
        token = token.lower()
        if token in seen or len(token) > MAX_TOKEN_CHARS:
            return
        if len(token) < 2 or token in _ENGLISH_STOP:
            return
        seen.add(token)
        out.append(token)

    emit(span)
    for piece in _PIECE_SPLIT.split(span):
        if not piece:
            continue
        emit(piece)
        if piece.isascii() and not piece.islower() and not piece.isupper():
            parts = _CAMEL_PART.findall(piece)
            if len(parts) > 1:
                for part in parts:
                    emit(part)
    return out


def _merge(latin: list[tuple[int, str]], korean: list[tuple[int, str]]) -> list[str]:
    """Both streams in text order, bounded to MAX_TOKENS_PER_TEXT."""
    if not korean:
        merged = latin
    elif not latin:
        merged = korean
    else:
        merged = sorted(latin + korean, key=lambda item: item[0])  # stable: a span keeps its order
    return [token for _, token in merged[:MAX_TOKENS_PER_TEXT]]
