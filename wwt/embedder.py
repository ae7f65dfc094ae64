"""multilingual-e5-small as int8 ONNX (onnxruntime + the model's sentencepiece vocabulary, no torch).

Vectors are 384-d float32, mean-pooled over the attention mask and L2-normalised; queries get the
``query: `` prefix and passages ``passage: `` (e5 is trained that way). Text is NFC-normalised first:
decomposed Hangul (NFD, e.g. from macOS file names) measured cosine 0.92 to the composed form.

Long text rule (the model fails on inputs over 512 tokens, so no call ever sends one): the text's tokens
are cut into windows of ``capacity = 512 - 2 - len(prefix tokens)`` tokens that start every
``capacity - WINDOW_OVERLAP`` tokens; the last window is shifted back to end at the last token, so every
window is full and neighbours share at least ``WINDOW_OVERLAP`` tokens. Each window is embedded as
``<s> prefix window </s>``; the text's vector is the token-count-weighted mean of the windows' mean-pooled
(un-normalised) vectors, L2-normalised — i.e. mean pooling over the whole text, overlaps counted twice.

Batching: every call pads only to the longest window in its batch (dynamic padding), sorts windows by
length before batching, and bounds a batch by ``batch_size`` windows and ``MAX_BATCH_TOKENS`` padded tokens,
so memory stays bounded whatever the input. Dynamic int8 quantization computes activation scales per batch,
so a vector depends slightly on what it was batched with. Passages are therefore embedded one at a time by
default (``PASSAGE_BATCH_SIZE = 1``): no padding, no batch dependence — the same chunk gets the same vector
in a bulk and an incremental ingest — and on a 2-core machine it is also the fastest choice: 11-13 passages/s
at batch 1 vs 6-7/s at batch 16 on 200-400-token passages, while batched vectors differ from single ones by
cosine 0.9987-0.9992 (benchmarks/RESULTS.md, "Embedder" sections). Queries are short, so they batch freely.

One ONNX session per model folder and thread count per process (``load_embedder`` caches it).
"""

from __future__ import annotations

import os
import threading
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from wwt.errors import ModelUnavailable, UsageError
from wwt.lru import LruDict
from wwt.model_source import (
    Manifest,
    ModelInfo,
    check_model_dir,
    load_manifest,
    resolve_model,
)

WINDOW_OVERLAP = 128
MAX_BATCH_TOKENS = 4096
PASSAGE_BATCH_SIZE = 1
QUERY_BATCH_SIZE = 16
QUERY_CACHE_SIZE = 256  # remembered query vectors per process (384 floats each: 0.4 MB in all)
DEFAULT_MAX_THREADS = 4
# onnxruntime graph fusions left out. SkipLayerNormFusion (Add + LayerNormalization -> one
# SkipLayerNormalization) makes a 17-token query slower on CPU, not faster: 1.11-1.19x in three interleaved
# runs (its kernel: 46 us a call for 17x384 floats, vs 18 us for the Add and LayerNormalization it replaces,
# 24 calls a query). Vectors stay as close to fp32 as before (mean cosine 0.9990 either way over 56
# Korean/English texts) and within int8's own noise of each other (0.9996 mean, less than its batch
# dependence). benchmarks/ort_options.py measures it (--profile for the per-operator times).
DISABLED_FUSIONS: tuple[str, ...] = ("SkipLayerNormFusion",)

MAX_THREADS = 256  # WWT_THREADS above this is a typo, not a machine
_CACHE: dict[tuple[str, int], Embedder] = {}
_CACHE_LOCK = threading.Lock()


def default_threads() -> int:
    """``WWT_THREADS`` or min(4, cores): more intra-op threads than that buys little for a 12-layer model
    and steals the laptop from the agent the user is talking to."""
    raw = os.environ.get("WWT_THREADS")
    if raw:
        try:
            value = int(raw)
        except ValueError:
            value = 0
        if not 1 <= value <= MAX_THREADS:  # onnxruntime starts them all (100,000 hung a search for minutes)
            raise UsageError(f"WWT_THREADS must be a whole number from 1 to {MAX_THREADS}, got {raw[:40]!r}")
        return value
    return max(1, min(DEFAULT_MAX_THREADS, os.cpu_count() or 1))


def window_spans(n_tokens: int, capacity: int, overlap: int = WINDOW_OVERLAP) -> list[tuple[int, int]]:
    """Token windows ``[start, end)`` covering ``n_tokens`` (see the module docstring for the rule)."""
    if capacity < 1 or not 0 <= overlap < capacity:
        raise ValueError(f"bad window: capacity={capacity} overlap={overlap}")
    if n_tokens <= capacity:
        return [(0, n_tokens)]
    stride = capacity - overlap
    spans = []
    start = 0
    while start + capacity < n_tokens:
        spans.append((start, start + capacity))
        start += stride
    spans.append((n_tokens - capacity, n_tokens))
    return spans


def combine_windows(pooled: np.ndarray, weights: Sequence[int]) -> np.ndarray:
    """Token-count-weighted mean of windows' mean-pooled vectors, L2-normalised."""
    w = np.asarray(weights, dtype=np.float32)[:, None]
    return l2_normalize((pooled * w).sum(axis=0, keepdims=True) / w.sum())[0]


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


def blend_requests(passages: np.ndarray, requests: np.ndarray, owners: Sequence[int], weight: float) -> np.ndarray:
    """Each passage's vector mixed with the mean of its requests' vectors — (1 − weight) × its own + weight × the
    mean, unit rows; ``owners[i]`` is the passage row request ``i`` belongs to. A passage with no request keeps
    its own vector."""
    out = np.asarray(passages, dtype=np.float32).copy()
    if len(owners) == 0:
        return out
    rows = np.asarray(owners, dtype=np.int64)
    sums = np.zeros_like(out)
    np.add.at(sums, rows, np.asarray(requests, dtype=np.float32))
    counts = np.bincount(rows, minlength=len(out)).astype(np.float32)
    has = counts > 0
    out[has] = (1 - weight) * out[has] + weight * sums[has] / counts[has, None]
    return l2_normalize(out)


def chunk_vectors(embedder: Any, items: Sequence[tuple[str, Sequence[str]]], weight: float) -> np.ndarray:
    """Chunks' vectors from (embed text, user requests): the text as a passage, each request as a question
    (e5's symmetric case: a request reads like the question asked weeks later), blended by
    :func:`blend_requests`. Unit rows, float32 (len(items), dim)."""
    passages = embedder.embed_passages([text for text, _ in items])
    owners = [row for row, (_, requests) in enumerate(items) for _ in requests]
    if not owners:
        return np.asarray(passages, dtype=np.float32)
    requests = embedder.embed_requests([r for _, requests in items for r in requests])
    return blend_requests(passages, requests, owners, weight)


def plan_batches(
    lengths: Sequence[int], batch_size: int, max_batch_tokens: int = MAX_BATCH_TOKENS
) -> list[list[int]]:
    """Group item indices into batches: sorted by length, at most ``batch_size`` items and
    ``max_batch_tokens`` padded tokens each (a single item always fits: it is at most 512)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        longest = max(lengths[i], lengths[current[-1]] if current else 0)
        if current and (len(current) >= batch_size or longest * (len(current) + 1) > max_batch_tokens):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


class Embedder:
    """A loaded model. Build it with :func:`load_embedder` (cached per process)."""

    def __init__(self, info: ModelInfo, threads: int | None = None) -> None:
        self.info = info
        self.threads = threads or default_threads()
        manifest: Manifest = info.manifest
        self.max_tokens = manifest.max_tokens
        self.query_prefix = manifest.query_prefix
        self.passage_prefix = manifest.passage_prefix
        self._session, self._tokenizer = _load(info, self.threads)
        self._input_names = {i.name for i in self._session.get_inputs()}
        outputs = self._session.get_outputs()
        self._output_name = next((o.name for o in outputs if o.name == "last_hidden_state"), outputs[0].name)
        out_dim = outputs[0].shape[-1] if outputs[0].shape else None
        self.dim = out_dim if isinstance(out_dim, int) else manifest.dims
        if self.dim != manifest.dims:
            raise ModelUnavailable(
                f"{info.model_path} gives {self.dim}-d vectors, expected {manifest.dims}; "
                f"point WWT_MODEL_DIR at a multilingual-e5-small export"
            )
        tok = self._tokenizer
        ids = [tok.piece_to_id(t) for t in ("<s>", "</s>", "<pad>")]
        if [tok.id_to_piece(i) for i in ids] != ["<s>", "</s>", "<pad>"]:
            raise ModelUnavailable(
                f"{info.tokenizer_path} is not an XLM-R tokenizer (<s>, </s>, <pad> missing)"
            )
        self._bos, self._eos, self._pad = ids
        self._prefix_ids = {p: tok.encode(p.rstrip()) for p in (self.query_prefix, self.passage_prefix)}
        self._queries = LruDict(QUERY_CACHE_SIZE)  # NFC query text -> its read-only vector

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts, self.query_prefix, QUERY_BATCH_SIZE)

    def embed_query(self, text: str) -> np.ndarray:
        """One query's vector (read-only), remembered for the last :data:`QUERY_CACHE_SIZE` queries: agents
        ask the same thing again, and the MCP server re-runs a query over all projects when its project has
        nothing. A query embedded alone always gets the same vector, so a remembered one is exact."""
        key = unicodedata.normalize("NFC", text)
        vector = self._queries.recall(key)
        if vector is None:
            vector = self.embed_queries([key])[0]
            vector.flags.writeable = False
            self._queries.remember(key, vector)
        return vector

    def embed_passages(self, texts: Sequence[str], batch_size: int = PASSAGE_BATCH_SIZE) -> np.ndarray:
        return self.embed(texts, self.passage_prefix, batch_size)

    def embed_requests(self, texts: Sequence[str]) -> np.ndarray:
        """User requests inside chunks, embedded as questions one at a time (no batch dependence: the same
        request always gets the same vector, like a passage)."""
        return self.embed(texts, self.query_prefix, PASSAGE_BATCH_SIZE)

    def token_windows(self, text: str, prefix: str) -> list[list[int]]:
        """The exact id sequences that :meth:`embed` sends to the model for ``text``."""
        return self._windows([self._content_ids([text])[0]], prefix)[0]

    def embed(self, texts: Sequence[str], prefix: str, batch_size: int = PASSAGE_BATCH_SIZE) -> np.ndarray:
        """Embed ``texts`` with ``prefix``: float32 (len(texts), dim), unit rows."""
        if isinstance(texts, str):
            raise TypeError("embed_*() takes a list of strings, not a string")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        windows = self._windows(self._content_ids(texts), prefix)
        items = [(owner, ids) for owner, per_text in enumerate(windows) for ids in per_text]
        pooled = np.empty((len(items), self.dim), dtype=np.float32)
        for batch in plan_batches([len(ids) for _, ids in items], max(1, batch_size)):
            pooled[batch] = self._run([items[i][1] for i in batch])
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        start = 0
        for owner, per_text in enumerate(windows):
            stop = start + len(per_text)
            out[owner] = combine_windows(pooled[start:stop], [len(ids) for ids in per_text])
            start = stop
        return out

    def _content_ids(self, texts: Sequence[str]) -> list[list[int]]:
        for t in texts:
            if not isinstance(t, str):
                raise TypeError(f"expected str, got {type(t).__name__}")
        # One text at a time: sentencepiece's list form starts a thread pool per call (~0.2 ms, more on a
        # busy machine), 100x the cost of encoding a short query; for 64 passages it saves only 2 of ~6 ms.
        return [self._tokenizer.encode(unicodedata.normalize("NFC", t)) for t in texts]

    def _windows(self, content: list[list[int]], prefix: str) -> list[list[list[int]]]:
        head = [self._bos, *self._prefix_ids_for(prefix)]
        capacity = self.max_tokens - len(head) - 1
        return [
            [head + ids[a:b] + [self._eos] for a, b in window_spans(len(ids), capacity)] for ids in content
        ]

    def _prefix_ids_for(self, prefix: str) -> list[int]:
        if prefix not in self._prefix_ids:
            self._prefix_ids[prefix] = self._tokenizer.encode(prefix.rstrip())
        return self._prefix_ids[prefix]

    def _run(self, sequences: list[list[int]]) -> np.ndarray:
        """Mean-pooled (not normalised) vectors of one padded batch."""
        width = max(len(s) for s in sequences)
        ids = np.full((len(sequences), width), self._pad, dtype=np.int64)
        mask = np.zeros((len(sequences), width), dtype=np.int64)
        for row, seq in enumerate(sequences):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        feed: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feed["token_type_ids"] = np.zeros_like(ids)
        feed = {k: v for k, v in feed.items() if k in self._input_names}
        hidden = self._session.run([self._output_name], feed)[0]
        m = mask[:, :, None].astype(np.float32)
        return (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)


def session_options(threads: int) -> Any:
    """The onnxruntime options of every wwt session (benchmarks/ort_options.py starts from these);
    pass :data:`DISABLED_FUSIONS` as the session's ``disabled_optimizers`` with them."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.enable_cpu_mem_arena = False  # measured: batch-16 peak RSS 829 -> 750 MB, no speed loss
    # Idle threads sleep instead of spinning. Spinning (even stopped after each run) is faster only on an
    # idle machine -- 17-token query 5.5 vs 7.3 ms -- and slower once anything else runs: 10.6 vs 8.5 ms
    # beside one busy process, 17.2 vs 9.8 beside two, with 1.7x the CPU. A laptop running wwt is running
    # an agent, builds and our own ingest worker (benchmarks/ort_options.py --busy 0,1,2).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return options


def _load(info: ModelInfo, threads: int) -> tuple[Any, Any]:
    """Open the ONNX session and the tokenizer in parallel (each takes ~0.4-0.7 s and releases the GIL)."""
    import onnxruntime as ort

    from wwt.spm_tokenizer import UnsupportedTokenizer, load_sentencepiece

    options = session_options(threads)
    result: dict[str, Any] = {}

    def open_session() -> None:
        try:
            result["session"] = ort.InferenceSession(
                str(info.model_path),
                sess_options=options,
                providers=["CPUExecutionProvider"],
                disabled_optimizers=list(DISABLED_FUSIONS),
            )
        except Exception as exc:  # onnxruntime raises its own exception types for bad files
            result["error"] = exc

    worker = threading.Thread(target=open_session, name="wwt-onnx-load", daemon=True)
    worker.start()
    try:
        tokenizer = load_sentencepiece(info.tokenizer_path)
    except (OSError, RuntimeError, UnsupportedTokenizer) as exc:
        worker.join()
        raise _unloadable(info, info.tokenizer_path, exc) from None
    worker.join()
    if "error" in result:
        raise _unloadable(info, info.model_path, result["error"]) from None
    return result["session"], tokenizer


def _unloadable(info: ModelInfo, path: Path, exc: BaseException) -> ModelUnavailable:
    reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
    fix = (
        "fix or unset WWT_MODEL_DIR"
        if info.source == "env"
        else f"delete {info.model_dir} and run again to re-download, or set WWT_MODEL_DIR"
    )
    return ModelUnavailable(f"cannot load {path} ({type(exc).__name__}: {reason}); {fix}")


def load_embedder(model_dir: Path | str | None = None, threads: int | None = None) -> Embedder:
    """The process-wide embedder for ``model_dir`` (default: :func:`wwt.model_source.resolve_model`)."""
    if model_dir is not None:
        folder = Path(model_dir).expanduser()
        check_model_dir(folder, origin="model_dir")
        info = ModelInfo(model_dir=folder, source="env", manifest=load_manifest(), pinned=False)
    else:
        info = resolve_model()
    n_threads = threads or default_threads()
    key = (str(info.model_dir.resolve()), n_threads)
    with _CACHE_LOCK:
        cached = _CACHE.get(key)
        if cached is None:
            cached = _CACHE[key] = Embedder(info, n_threads)
        return cached
