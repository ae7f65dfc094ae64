"""The embedder, on the real int8 ONNX model (``WWT_MODEL_DIR``), plus its pure rules (windows, batches)."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from wwt.embedder import (
    MAX_BATCH_TOKENS,
    WINDOW_OVERLAP,
    combine_windows,
    default_threads,
    load_embedder,
    plan_batches,
    window_spans,
)
from wwt.errors import ModelUnavailable, UsageError

MODEL_DIR = os.environ.get("WWT_MODEL_DIR")
# The real model is required (conftest.model_dir fails, never skips, when WWT_MODEL_DIR is unset).
needs_model = pytest.mark.usefixtures("model_dir")

REDIS = "Redis 캐시의 TTL은 EXPIRE 명령으로 설정하고, 세션 키는 300초 뒤에 만료되도록 했습니다."
KOREAN_OTHERS = [
    "PostgreSQL 인덱스를 만들 때 CONCURRENTLY 옵션을 써서 테이블 잠금을 피했습니다.",
    "Docker 이미지 빌드가 느려서 레이어 캐시 순서를 바꿨어요.",
    "React 컴포넌트의 useEffect 의존성 배열을 고쳐서 무한 렌더링을 막았습니다.",
]
ENGLISH = [
    "To undo the last git commit but keep the changes, run git reset --soft HEAD~1.",
    "The database connection pool size is set to 20 in the SQLAlchemy engine config.",
    "We bumped the Node.js version in the CI workflow to fix the npm install failure.",
    "The weather forecast says it will rain in Seoul tomorrow afternoon.",
]


@pytest.fixture(scope="module")
def embedder():
    if not MODEL_DIR or not Path(MODEL_DIR, "model.onnx").is_file():
        pytest.fail("set WWT_MODEL_DIR to a real model folder (../shared/tools/e5model/build)")
    return load_embedder()


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


def long_text(embedder, min_tokens: int) -> str:
    sentences = KOREAN_OTHERS + ENGLISH + [REDIS]
    parts: list[str] = []
    while len(embedder._tokenizer.encode(" ".join(parts))) < min_tokens:
        parts.append(f"{len(parts)}. {sentences[len(parts) % len(sentences)]}")
    return " ".join(parts)


# --- pure rules -----------------------------------------------------------------------------------------


def test_short_input_is_one_window():
    assert window_spans(0, 507) == [(0, 0)]
    assert window_spans(507, 507) == [(0, 507)]


def test_one_token_too_many_gives_two_full_windows():
    assert window_spans(508, 507, overlap=128) == [(0, 507), (1, 508)]


@given(n=st.integers(1, 5000), capacity=st.integers(2, 600), overlap_frac=st.floats(0, 0.9))
def test_windows_are_full_cover_everything_and_overlap(n, capacity, overlap_frac):
    overlap = min(capacity - 1, int(capacity * overlap_frac))
    spans = window_spans(n, capacity, overlap)
    assert spans[0][0] == 0 and spans[-1][1] == n
    for a, b in spans:
        assert 0 <= a < b <= n and b - a == min(n, capacity)  # never over capacity, never a stub window
    for (a1, b1), (a2, _) in zip(spans, spans[1:], strict=False):
        assert a1 < a2 and b1 - a2 >= overlap  # moves forward, neighbours share >= overlap tokens
        assert a2 <= b1  # no gap


def test_combine_windows_is_a_weighted_mean_then_unit_length():
    pooled = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    v = combine_windows(pooled, [3, 1])
    assert np.allclose(v, np.array([3, 1]) / np.linalg.norm([3, 1]))


@given(lengths=st.lists(st.integers(3, 512), min_size=0, max_size=60), batch_size=st.integers(1, 32))
def test_batches_are_sorted_bounded_and_cover_each_item_once(lengths, batch_size):
    batches = plan_batches(lengths, batch_size)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(lengths)))
    assert [lengths[i] for i in flat] == sorted(lengths)
    for b in batches:
        assert len(b) <= batch_size
        assert len(b) == 1 or max(lengths[i] for i in b) * len(b) <= MAX_BATCH_TOKENS


def test_threads_come_from_wwt_threads(monkeypatch):
    monkeypatch.setenv("WWT_THREADS", "3")
    assert default_threads() == 3
    monkeypatch.delenv("WWT_THREADS")
    assert 1 <= default_threads() <= 4
    monkeypatch.setenv("WWT_THREADS", "lots")
    with pytest.raises(UsageError, match="WWT_THREADS"):
        default_threads()


# --- the real model --------------------------------------------------------------------------------------


@needs_model
def test_vectors_are_384_dim_unit_float32(embedder):
    q = embedder.embed_queries(["Redis 캐시 TTL 설정", "how to undo a commit"])
    p = embedder.embed_passages([REDIS, ENGLISH[0], ""])
    for m, n in ((q, 2), (p, 3)):
        assert m.shape == (n, 384) and m.dtype == np.float32
        assert np.allclose(np.linalg.norm(m, axis=1), 1.0, atol=1e-5)
    assert embedder.dim == 384
    assert embedder.embed_passages([]).shape == (0, 384)


@needs_model
def test_a_bare_string_is_refused(embedder):
    with pytest.raises(TypeError):
        embedder.embed_queries("not a list")


@needs_model
def test_prefixes_are_applied_exactly_as_the_tokenizer_would(embedder):
    tok = embedder._tokenizer
    bos, eos = tok.piece_to_id("<s>"), tok.piece_to_id("</s>")
    for prefix, text in (("query: ", "Redis 캐시 TTL 설정"), ("passage: ", REDIS)):
        assert embedder.token_windows(text, prefix) == [[bos, *tok.encode(prefix + text), eos]]
    q = embedder.embed_queries([REDIS])[0]
    p = embedder.embed_passages([REDIS])[0]
    assert np.allclose(q, embedder.embed([REDIS], "query: ")[0])
    assert cos(q, p) < 0.999  # the prefix changes the vector


@needs_model
def test_decomposed_hangul_gets_the_composed_vector(embedder):
    composed = "캐시 만료 시간을 설정했어요"
    decomposed = unicodedata.normalize("NFD", composed)
    assert decomposed != composed
    assert embedder.token_windows(decomposed, "query: ") == embedder.token_windows(composed, "query: ")
    a, b = embedder.embed_queries([composed, decomposed])
    assert np.allclose(a, b, atol=1e-6)


@needs_model
def test_batched_vectors_match_single_ones_and_keep_the_ranking(embedder):
    passages = [REDIS, *KOREAN_OTHERS, *ENGLISH]
    single = embedder.embed_passages(passages, batch_size=1)
    batched = embedder.embed_passages(passages, batch_size=16)
    assert min(float(x) for x in (single * batched).sum(axis=1)) >= 0.995
    for query in ("Redis 캐시 TTL 설정", "git undo last commit", "데이터베이스 연결 풀 크기"):
        q = embedder.embed_queries([query])[0]
        assert np.argmax(single @ q) == np.argmax(batched @ q)


@needs_model
def test_default_passage_embedding_does_not_depend_on_the_neighbours(embedder):
    """Bulk and incremental ingest must give a chunk the same vector."""
    bulk = embedder.embed_passages([ENGLISH[1], REDIS, KOREAN_OTHERS[0] * 5])
    alone = embedder.embed_passages([REDIS])
    assert np.array_equal(bulk[1], alone[0])


@needs_model
def test_long_text_is_windowed_never_cut_and_never_over_512(embedder, monkeypatch):
    text = long_text(embedder, 1400)
    windows = embedder.token_windows(text, "passage: ")
    content = embedder._tokenizer.encode(text)
    head = [embedder._tokenizer.piece_to_id("<s>"), *embedder._tokenizer.encode("passage:")]  # <s> ▁passage :
    capacity = 512 - len(head) - 1
    assert len(windows) >= 3
    assert all(len(w) <= 512 and w[: len(head)] == head and w[-1] == windows[0][-1] for w in windows)
    spans = window_spans(len(content), capacity)
    assert [w[len(head) : -1] for w in windows] == [content[a:b] for a, b in spans]
    assert spans[0][1] - spans[1][0] >= WINDOW_OVERLAP

    sent: list[int] = []
    real_session = embedder._session

    class Recording:
        def __getattr__(self, name):
            return getattr(real_session, name)

        def run(self, outputs, feed):
            sent.append(feed["input_ids"].shape[1])
            return real_session.run(outputs, feed)

    monkeypatch.setattr(embedder, "_session", Recording())
    vector = embedder.embed_passages([text])[0]
    assert max(sent) <= 512 and len(sent) == len(windows)

    # the rule: token-count-weighted mean of the windows' pooled vectors, then L2
    pooled = np.vstack([embedder._run([w]) for w in windows])
    expected = combine_windows(pooled, [len(w) for w in windows])
    assert np.allclose(vector, expected, atol=1e-5)
    assert abs(np.linalg.norm(vector) - 1) < 1e-5
    # and it still means what the text says
    q = embedder.embed_queries(["Redis 캐시 TTL 설정"])[0]
    assert cos(q, vector) > cos(q, embedder.embed_passages([ENGLISH[3]])[0])


@needs_model
def test_only_the_inputs_the_session_declares_are_fed(embedder, monkeypatch):
    """Hub exports declare token_type_ids, the offline build does not: feed exactly what is declared."""
    declared = {i.name for i in embedder._session.get_inputs()}
    seen: list[set[str]] = []
    real_session = embedder._session

    class HubLike:
        def __getattr__(self, name):
            return getattr(real_session, name)

        def run(self, outputs, feed):
            seen.append(set(feed))
            real = {k: v for k, v in feed.items() if k in declared}
            return real_session.run(outputs, real)

    monkeypatch.setattr(embedder, "_session", HubLike())
    embedder.embed_queries(["x"])
    assert seen[-1] == declared
    monkeypatch.setattr(embedder, "_input_names", declared | {"token_type_ids"})
    embedder.embed_queries(["x"])
    assert seen[-1] == declared | {"token_type_ids"}


@needs_model
def test_ranking_korean_english_and_cross_lingual(embedder):
    korean = embedder.embed_passages([*KOREAN_OTHERS, REDIS])
    q = embedder.embed_queries(["Redis 캐시 TTL 설정"])[0]
    assert np.argmax(korean @ q) == 3

    english = embedder.embed_passages(ENGLISH)
    q = embedder.embed_queries(["how do I undo my last git commit"])[0]
    assert np.argmax(english @ q) == 0

    q = embedder.embed_queries(["데이터베이스 연결 풀 크기 설정"])[0]  # Korean query, English passages
    assert np.argmax(english @ q) == 1


@needs_model
def test_a_repeated_query_reuses_its_vector_exactly(embedder, monkeypatch):
    import wwt.embedder as embedder_mod

    monkeypatch.setattr(embedder_mod, "QUERY_CACHE_SIZE", 2)
    monkeypatch.setattr(embedder, "_queries", type(embedder._queries)(embedder_mod.QUERY_CACHE_SIZE))
    runs = []
    real_run = embedder._run
    monkeypatch.setattr(embedder, "_run", lambda seqs: runs.append(len(seqs)) or real_run(seqs))

    first = embedder.embed_query("전에 Redis 캐시 TTL 어떻게 설정했지?")
    assert runs == [1]
    np.testing.assert_array_equal(first, embedder.embed_queries(["전에 Redis 캐시 TTL 어떻게 설정했지?"])[0])
    runs.clear()
    again = embedder.embed_query(unicodedata.normalize("NFD", "전에 Redis 캐시 TTL 어떻게 설정했지?"))
    assert runs == [] and again is first  # the decomposed spelling is the same query
    with pytest.raises(ValueError):
        first[0] = 1.0  # shared between callers: read-only

    embedder.embed_query("undo last git commit")
    embedder.embed_query("전에 Redis 캐시 TTL 어떻게 설정했지?")  # most recent again
    embedder.embed_query("hnswlib ef parameter")  # third distinct query: evicts the least recent
    runs.clear()
    embedder.embed_query("전에 Redis 캐시 TTL 어떻게 설정했지?")
    assert runs == []
    embedder.embed_query("undo last git commit")
    assert runs == [1]


@needs_model
def test_one_session_per_process(embedder):
    assert load_embedder() is embedder
    assert load_embedder(MODEL_DIR) is embedder


@needs_model
def test_the_session_runs_without_the_fusions_it_leaves_out(tmp_path, monkeypatch):
    """onnxruntime would fuse Add + LayerNormalization into SkipLayerNormalization on this model (slower
    on CPU); the loader's session keeps them apart."""
    import onnxruntime as ort

    import wwt.embedder as embedder_mod
    from wwt.model_source import ModelInfo, load_manifest

    model = Path(MODEL_DIR, "model.onnx")
    fused = tmp_path / "fused.onnx"
    options = embedder_mod.session_options(1)
    options.optimized_model_filepath = str(fused)
    ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
    assert b"SkipLayerNormalization" in fused.read_bytes()

    ran = tmp_path / "ran.onnx"
    real = embedder_mod.session_options

    def dumping(threads: int):
        opts = real(threads)
        opts.optimized_model_filepath = str(ran)
        return opts

    monkeypatch.setattr(embedder_mod, "session_options", dumping)
    info = ModelInfo(model_dir=Path(MODEL_DIR), source="env", manifest=load_manifest(), pinned=False)
    embedder_mod._load(info, 1)
    graph = ran.read_bytes()
    assert b"SkipLayerNormalization" not in graph and b"LayerNormalization" in graph


def test_missing_model_folder_is_model_unavailable(tmp_path):
    with pytest.raises(ModelUnavailable) as err:
        load_embedder(tmp_path / "absent")
    assert "\n" not in str(err.value)


@needs_model
def test_corrupt_model_file_is_model_unavailable_with_one_line(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(Path(MODEL_DIR, "model.onnx").read_bytes()[:100_000])
    (folder / "tokenizer.json").symlink_to(Path(MODEL_DIR, "tokenizer.json"))
    with pytest.raises(ModelUnavailable) as err:
        load_embedder(folder)
    message = str(err.value)
    assert "\n" not in message and "cannot load" in message and "model.onnx" in message
