"""The e5 tokenizer runs on sentencepiece, converted from the model's own tokenizer.json.

HF ``tokenizers`` (a test dependency only) is the oracle: same ids on every real text we have, with the three
differences the module documents, each pinned here."""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

import pytest
from _shared import KORQUAD_DEV, REAL_FIXTURES

from wwt.parsers import discover, parse_file
from wwt.spm_tokenizer import (
    CACHE_PREFIX,
    UnsupportedTokenizer,
    convert_file,
    load_sentencepiece,
    sentencepiece_proto,
)

MODEL_DIR = os.environ.get("WWT_MODEL_DIR", "")


@pytest.fixture(scope="module")
def tokenizer_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy, so cache files land in a temp folder and not beside the shared model."""
    if not MODEL_DIR or not Path(MODEL_DIR, "tokenizer.json").is_file():
        pytest.fail("set WWT_MODEL_DIR to a real model folder (../shared/tools/e5model/build)")
    folder = tmp_path_factory.mktemp("model")
    copy = folder / "tokenizer.json"
    copy.write_bytes(Path(MODEL_DIR, "tokenizer.json").read_bytes())
    return copy


@pytest.fixture(scope="module")
def spec(tokenizer_json: Path) -> dict:
    return json.loads(tokenizer_json.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def sp(tokenizer_json: Path, tmp_path_factory: pytest.TempPathFactory):
    os.environ["WWT_HOME"] = str(tmp_path_factory.mktemp("home"))
    try:
        return load_sentencepiece(tokenizer_json)
    finally:
        del os.environ["WWT_HOME"]


@pytest.fixture(scope="module")
def hf(tokenizer_json: Path):
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(tokenizer_json))


def copy_into(folder: Path, tokenizer_json: Path) -> Path:
    """``tokenizer.json`` copied into a new ``folder``: its own place for cache files."""
    folder.mkdir()
    copy = folder / "tokenizer.json"
    copy.write_bytes(tokenizer_json.read_bytes())
    return copy


def real_texts() -> list[str]:
    texts = []
    for path, _parser in discover([REAL_FIXTURES]):
        sessions, _ = parse_file(path)
        texts += [m.text for s in sessions for m in s.messages]
    korquad = json.loads(KORQUAD_DEV.read_text(encoding="utf-8"))
    for article in korquad["data"]:
        for paragraph in article["paragraphs"]:
            texts.append(paragraph["context"])
            texts += [qa["question"] for qa in paragraph["qas"]]
    return [unicodedata.normalize("NFC", t) for t in texts]


def hf_ids(hf, texts: list[str]) -> list[list[int]]:
    return [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]


def test_ids_equal_hf_tokenizers_on_every_real_log_message_and_korquad_text(sp, hf):
    texts = real_texts()
    assert len(texts) > 7000
    # tokenizers appends a lone "▁" for trailing whitespace; sentencepiece (the model's trainer) does not
    expected = hf_ids(hf, [t.rstrip() for t in texts])
    got = sp.encode(texts)
    mismatches = [t[:80] for t, a, b in zip(texts, expected, got, strict=True) if a != b]
    assert mismatches == []
    assert sum(1 for t in texts if t != t.rstrip()) > 50  # the rule above was exercised


def test_trailing_whitespace_adds_no_token(sp, hf):
    assert sp.encode("Redis TTL  \n") == sp.encode("Redis TTL")
    assert hf_ids(hf, ["Redis TTL  \n"])[0][-1] == hf.token_to_id("▁")


def test_literal_special_tokens_are_text_not_control_tokens(sp, hf):
    text = "the model emits </s> then <pad>"
    ids = sp.encode(text)
    controls = {sp.piece_to_id(t) for t in ("<s>", "</s>", "<pad>", "<mask>")}
    assert not controls & set(ids)
    assert "</s>" in sp.decode(ids)
    assert controls & set(hf_ids(hf, [text])[0])  # tokenizers would end the sequence mid-text


def test_compatibility_jamo_compose_across_characters(sp):
    assert sp.encode("ㅅㅠ", out_type=str) == ["▁", "슈"]


def test_special_ids_are_the_vocabulary_positions(sp, spec):
    vocab = spec["model"]["vocab"]
    for piece in ("<s>", "<pad>", "</s>", "<unk>", "<mask>"):
        assert sp.piece_to_id(piece) == [p for p, _ in vocab].index(piece)
    assert sp.get_piece_size() == len(vocab)
    assert sp.unk_id() == spec["model"]["unk_id"]


def test_conversion_is_cached_beside_the_tokenizer_and_reused(tokenizer_json, sp):
    cached = list(tokenizer_json.parent.glob(f"{CACHE_PREFIX}*.spm"))
    assert len(cached) == 1
    before = cached[0].stat().st_mtime_ns
    again = load_sentencepiece(tokenizer_json)
    assert cached[0].stat().st_mtime_ns == before
    assert again.encode("캐시 TTL") == sp.encode("캐시 TTL")


def test_damaged_cache_is_rebuilt(tmp_path, tokenizer_json, sp):
    copy = copy_into(tmp_path / "model", tokenizer_json)
    folder = copy.parent
    load_sentencepiece(copy)
    (cached,) = folder.glob(f"{CACHE_PREFIX}*.spm")
    cached.write_bytes(cached.read_bytes()[:1000])
    assert load_sentencepiece(copy).encode("hnswlib ef 파라미터") == sp.encode("hnswlib ef 파라미터")
    assert len(cached.read_bytes()) > 1_000_000


def test_a_changed_tokenizer_json_replaces_the_old_conversion(tmp_path, tokenizer_json):
    copy = copy_into(tmp_path / "model", tokenizer_json)
    folder = copy.parent
    load_sentencepiece(copy)
    (first,) = folder.glob(f"{CACHE_PREFIX}*.spm")
    os.utime(copy, ns=(1, 1))
    load_sentencepiece(copy)
    (second,) = folder.glob(f"{CACHE_PREFIX}*.spm")
    assert second != first


def test_read_only_model_folder_caches_under_the_data_dir(tmp_path, tokenizer_json, wwt_home, monkeypatch):
    import wwt.spm_tokenizer as module

    copy = copy_into(tmp_path / "readonly", tokenizer_json)
    folder = copy.parent
    write = module._write_atomic
    monkeypatch.setattr(
        module, "_write_atomic", lambda target, data: target.parent != folder and write(target, data)
    )
    load_sentencepiece(copy)
    assert not list(folder.glob(f"{CACHE_PREFIX}*.spm"))
    (cached,) = (wwt_home / "models" / "tokenizers").glob("*.spm")
    monkeypatch.setattr(module, "convert_file", lambda path: pytest.fail("converted again"))
    assert load_sentencepiece(copy).encode("query:") == [41, 1294, 12]


def test_unwritable_everywhere_still_loads(tmp_path, tokenizer_json, monkeypatch):
    import wwt.spm_tokenizer as module

    monkeypatch.setattr(module, "_write_atomic", lambda target, data: False)
    copy = copy_into(tmp_path / "model", tokenizer_json)
    folder = copy.parent
    assert load_sentencepiece(copy).encode("query:") == [41, 1294, 12]
    assert not list(folder.glob(f"{CACHE_PREFIX}*.spm"))


@pytest.mark.parametrize(
    "pre_tokenizer",
    [
        {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True},  # transformers < 4.38
        {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                                               {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True}]},
    ],
)
def test_every_metaspace_spelling_of_past_exports_converts_to_the_same_ids(spec, sp, pre_tokenizer):
    import sentencepiece

    variant = dict(spec, pre_tokenizer=pre_tokenizer)
    other = sentencepiece.SentencePieceProcessor(model_proto=sentencepiece_proto(variant))
    text = "전에 Redis 캐시 TTL 어떻게 설정했지?  ERR_OSSL_EVP_UNSUPPORTED\n\tsrc/app/main.py"
    assert other.encode(text) == sp.encode(text)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda s: s["model"].update(type="BPE"), "Unigram"),
        (lambda s: s["model"].update(byte_fallback=True), "Unigram"),
        (lambda s: s.update(normalizer={"type": "Lowercase"}), "normalizer"),
        (lambda s: s.update(pre_tokenizer={"type": "Whitespace"}), "pre-tokenizer"),
        (lambda s: s["model"]["vocab"].append(s["model"]["vocab"][10]), "duplicate"),
        (lambda s: s["model"].update(unk_id=None), "unk_id"),
    ],
)
def test_tokenizers_without_a_sentencepiece_equivalent_are_refused(spec, change, message):
    broken = json.loads(json.dumps(spec))
    change(broken)
    with pytest.raises(UnsupportedTokenizer, match=message):
        sentencepiece_proto(broken)


def test_invalid_json_is_refused_with_a_reason(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text("{ truncated")
    with pytest.raises(UnsupportedTokenizer, match="not valid JSON"):
        convert_file(path)
    path.write_text('{"not": "a tokenizer"}')
    with pytest.raises(UnsupportedTokenizer):
        convert_file(path)
