"""The e5 tokenizer, run by ``sentencepiece`` from the model's own ``tokenizer.json``.

Why not HF ``tokenizers``: multilingual-e5-small has XLM-R's 250,002-piece Unigram vocabulary, and
``tokenizers`` builds a per-character hash-map trie over it on every load — 1.1-1.6 s holding the GIL and
≈ 280 MB resident, more than the ONNX model itself. The vocabulary *is* a sentencepiece model (XLM-R was
trained with one, and ``tokenizer.json`` carries its pieces, scores and precompiled normalisation map), so
this module writes those back into a sentencepiece ``ModelProto`` once, caches it beside the file (or under
the data dir when that folder is read-only), and loads that: ≈ 0.7 s (in parallel with the ONNX session), ≈ 45 MB, and 7x faster encoding.

Same ids as ``tokenizers`` on every message of the real agent logs and every KorQuAD passage and question
(tests/test_spm_tokenizer.py), with three documented differences, all towards what sentencepiece — the
tokenizer the model was trained with — does:

* trailing whitespace gives no trailing ``▁`` token (``tokenizers`` appends one);
* literal ``<s>``, ``</s>``, ``<pad>``, ``<mask>`` in the text are text, not control tokens (people paste
  them when they talk about models; they must not end the sequence);
* normalisation matches across character boundaries rather than per grapheme (compatibility jamo such as
  ``ㅅㅠ`` compose to ``슈``), which only shows on unusual character mixes.

The protobuf is written by hand (three messages, a dozen fields) so the runtime needs no ``protobuf``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from pathlib import Path
from typing import Any

from wwt import paths
from wwt.fileio import atomic_write

CONVERTER_VERSION = 1
CACHE_SUBDIR = "tokenizers"
CACHE_PREFIX = ".tokenizer-"
_UNIGRAM = 1
_NORMAL, _UNKNOWN, _CONTROL = 1, 2, 3
_METASPACE = "\u2581"


class UnsupportedTokenizer(ValueError):
    """``tokenizer.json`` is not a sentencepiece-style Unigram tokenizer (XLM-R family)."""


def sentencepiece_proto(spec: dict[str, Any]) -> bytes:
    """A serialized sentencepiece ``ModelProto`` equivalent to the HF ``tokenizer.json`` ``spec``.

    Piece ids equal the vocabulary's positions, so the ids are the model's ids (no fairseq offset)."""
    model = spec.get("model") or {}
    if model.get("type") != "Unigram" or model.get("byte_fallback"):
        raise UnsupportedTokenizer(f"model type {model.get('type')!r} is not a plain Unigram model")
    vocab = model.get("vocab")
    unk_id = model.get("unk_id")
    if (
        not isinstance(vocab, list)
        or not vocab
        or not isinstance(unk_id, int)
        or not 0 <= unk_id < len(vocab)
    ):
        raise UnsupportedTokenizer("the Unigram vocabulary or its unk_id is missing")
    charsmap, collapse_spaces = _normalizer(spec.get("normalizer"))
    _check_pre_tokenizer(spec.get("pre_tokenizer"))

    special = {t["content"] for t in spec.get("added_tokens", []) if t.get("special")}
    ids = {}
    out = bytearray()
    for index, entry in enumerate(vocab):
        piece, score = entry
        if not isinstance(piece, str) or not piece:
            raise UnsupportedTokenizer(f"vocabulary entry {index} is not a piece")
        ids.setdefault(piece, index)
        kind = _UNKNOWN if index == unk_id else _CONTROL if piece in special else _NORMAL
        body = _bytes_field(1, piece.encode("utf-8")) + _float_field(2, float(score)) + _varint_field(3, kind)
        out += _bytes_field(1, body)
    if len(ids) != len(vocab):
        raise UnsupportedTokenizer("the vocabulary has duplicate pieces")

    trainer = (
        _varint_field(3, _UNIGRAM)
        + _varint_field(4, len(vocab))
        + _varint_field(40, unk_id)
        + _varint_field(41, ids.get("<s>", -1))
        + _varint_field(42, ids.get("</s>", -1))
        + _varint_field(43, ids.get("<pad>", -1))
    )
    normalizer = (
        _bytes_field(1, b"nmt_nfkc")
        + _bytes_field(2, charsmap)
        + _varint_field(3, 1)  # add_dummy_prefix: Metaspace prepends "▁"
        + _varint_field(4, 1 if collapse_spaces else 0)
        + _varint_field(5, 1)  # escape_whitespaces: " " becomes "▁"
    )
    out += _bytes_field(2, trainer) + _bytes_field(3, normalizer)
    return bytes(out)


def load_sentencepiece(tokenizer_path: Path) -> Any:
    """A ``SentencePieceProcessor`` for ``tokenizer_path``, converted once (≈ 1.5 s) and cached beside it as
    ``.tokenizer-<key>.spm`` — or, when the model folder is read-only, under the data dir — keyed by the
    file's path, size and mtime. A damaged cache file is rebuilt; nowhere writable only costs the
    conversion on each load."""
    import sentencepiece

    candidates = _cache_paths(Path(tokenizer_path))
    for cache in candidates:
        try:
            return sentencepiece.SentencePieceProcessor(model_proto=cache.read_bytes())
        except (OSError, RuntimeError):
            continue
    proto = convert_file(tokenizer_path)
    processor = sentencepiece.SentencePieceProcessor(model_proto=proto)
    for cache in candidates:
        if _write_atomic(cache, proto):
            if cache.name.startswith(CACHE_PREFIX):  # beside the tokenizer: older conversions are stale
                for stale in cache.parent.glob(f"{CACHE_PREFIX}*.spm"):
                    if stale != cache:
                        stale.unlink(missing_ok=True)
            break
    return processor


def convert_file(tokenizer_path: Path) -> bytes:
    try:
        spec = json.loads(Path(tokenizer_path).read_bytes())
    except ValueError as exc:
        raise UnsupportedTokenizer(f"not valid JSON ({exc})") from None
    if not isinstance(spec, dict):
        raise UnsupportedTokenizer("not a tokenizer.json object")
    try:
        return sentencepiece_proto(spec)
    except UnsupportedTokenizer:
        raise
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise UnsupportedTokenizer(f"unexpected layout ({type(exc).__name__}: {exc})") from None


def _cache_paths(tokenizer_path: Path) -> list[Path]:
    try:
        real = tokenizer_path.resolve()
        st = real.stat()
    except OSError:
        return []
    key = hashlib.sha256(f"{CONVERTER_VERSION}|{real}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()
    beside = tokenizer_path.parent / f"{CACHE_PREFIX}{key[:24]}.spm"
    try:
        in_data_dir = paths.models_dir() / CACHE_SUBDIR / f"{key[:24]}.spm"
    except OSError:
        return [beside]
    return [beside, in_data_dir]


def _write_atomic(target: Path, data: bytes) -> bool:
    """Write ``target`` whole or not at all; False when it cannot be written (read-only folder, full disk)."""
    try:
        atomic_write(target, data, default_mode=0o644)  # public vocabulary: other accounts may share the folder
    except OSError:
        return False
    return True


def _normalizer(spec: Any) -> tuple[bytes, bool]:
    """(precompiled charsmap, collapse runs of spaces) from the normalizer chain XLM-R exports use."""
    parts = (
        spec.get("normalizers", []) if isinstance(spec, dict) and spec.get("type") == "Sequence" else [spec]
    )
    charsmap = None
    collapse = False
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "Precompiled" and charsmap is None:
            charsmap = base64.b64decode(part.get("precompiled_charsmap") or "")
        elif kind == "Replace" and part.get("pattern") == {"Regex": " {2,}"} and part.get("content") == " ":
            collapse = True
        else:
            raise UnsupportedTokenizer(f"normalizer {kind!r} has no sentencepiece equivalent")
    if not charsmap:
        raise UnsupportedTokenizer("no precompiled sentencepiece normalizer")
    return charsmap, collapse


def _check_pre_tokenizer(spec: Any) -> None:
    """Metaspace as every transformers release wrote it for sentencepiece models: ``add_prefix_space`` (old)
    or ``prepend_scheme`` (new), alone or after a ``WhitespaceSplit`` (the 2020 converters)."""
    if isinstance(spec, dict) and spec.get("type") == "Sequence":
        steps = spec.get("pretokenizers") or []
        if len(steps) == 2 and isinstance(steps[0], dict) and steps[0].get("type") == "WhitespaceSplit":
            spec = steps[1]
    ok = (
        isinstance(spec, dict)
        and spec.get("type") == "Metaspace"
        and spec.get("replacement", _METASPACE) == _METASPACE
        and spec.get("prepend_scheme", "always" if spec.get("add_prefix_space", True) else "never")
        == "always"
        and spec.get("split", True)
    )
    if not ok:
        raise UnsupportedTokenizer(f"pre-tokenizer {spec!r:.80} is not sentencepiece's whitespace rule")


def _varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64  # proto int32: negative values are ten-byte two's complement
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _varint_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _bytes_field(number: int, value: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def _float_field(number: int, value: float) -> bytes:
    return _varint(number << 3 | 5) + struct.pack("<f", value)
