"""hnswlib parameters for wwt.vector_index: recall@10 against exact search and query latency, one thread.

    python benchmarks/vector_params.py --n 50000 --record

Vectors: real e5 passage vectors (from benchmarks/.work, cached by retrieval_korquad.py) used as cluster
centres plus Gaussian noise, so neighbours have e5-like high cosines; random vectors if no cache exists.
Also times a filtered search both ways (exact over the allowed ids vs hnswlib's filter callable) to place
``BRUTE_FORCE_MAX``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import hnswlib
import numpy as np
from _shared import replace_section

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
RESULTS = HERE / "RESULTS.md"


def make_vectors(n: int, dim: int, rng: np.random.Generator) -> tuple[np.ndarray, str]:
    cached = sorted(WORK.glob("korquad-passages-e5-[0-9a-f]*.npy"))
    if cached:
        centres = np.load(cached[0])
        source = f"{len(centres)} real e5 passage vectors as centres + noise"
        picks = centres[rng.integers(0, len(centres), n)]
        vectors = picks + rng.standard_normal((n, centres.shape[1])).astype(np.float32) * 0.035
    else:
        source = "random Gaussian"
        vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype(np.float32), source


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    data, source = make_vectors(args.n + args.queries, 384, rng)
    base, queries = data[: args.n], data[args.n :]
    truth = np.argsort(-(queries @ base.T), axis=1)[:, :10]
    lines = [
        f"## Vector index parameters ({datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC)",
        "",
        f"Command: `python benchmarks/vector_params.py {' '.join(sys.argv[1:] if argv is None else argv)}`",
        "",
        f"{args.n} vectors ({source}), {args.queries} held-out queries, 1 thread, recall@10 vs exact.",
        "",
        "| M | ef_construction | build s | ef | recall@10 | p50 ms |",
        "|---|---|---|---|---|---|",
    ]
    index_for_filter = None
    for m, efc in ((12, 100), (16, 100), (16, 200)):
        index = hnswlib.Index(space="cosine", dim=base.shape[1])
        index.init_index(max_elements=args.n, ef_construction=efc, M=m)
        index.set_num_threads(1)
        t0 = time.perf_counter()
        index.add_items(base, np.arange(args.n))
        build = time.perf_counter() - t0
        for ef in (32, 64, 96, 128):
            index.set_ef(ef)
            found, times = [], []
            for q in queries:
                t1 = time.perf_counter()
                labels, _ = index.knn_query(q, k=10, num_threads=1)
                times.append(time.perf_counter() - t1)
                found.append(labels[0])
            recall = np.mean([len(set(f) & set(t)) / 10 for f, t in zip(found, truth, strict=True)])
            lines.append(
                f"| {m} | {efc} | {build:.1f} | {ef} | {recall:.4f} | {statistics.median(times) * 1000:.3f} |"
            )
            print(lines[-1], file=sys.stderr)
        if (m, efc) == (16, 200):
            index_for_filter = index
    lines += [
        "",
        "Filtered search, k = 10 (M=16, ef_construction=200, ef=96):",
        "",
        "| allowed ids | exact over allowed p50 ms | hnswlib filter p50 ms |",
        "|---|---|---|",
    ]
    assert index_for_filter is not None
    index_for_filter.set_ef(96)
    for size in (200, 500, 1_000, 2_000, 5_000):
        allowed_ids = np.sort(rng.choice(args.n, size, replace=False))
        allowed = set(allowed_ids.tolist())
        exact_t, graph_t = [], []
        for q in queries[:20]:
            t0 = time.perf_counter()
            matrix = np.asarray(index_for_filter.get_items(allowed_ids.tolist()), dtype=np.float32)
            np.argsort(-(matrix @ q))[:10]
            exact_t.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            index_for_filter.knn_query(q, k=10, num_threads=1, filter=allowed.__contains__)
            graph_t.append(time.perf_counter() - t0)
        lines.append(
            f"| {size} | {statistics.median(exact_t) * 1000:.2f} | {statistics.median(graph_t) * 1000:.2f} |"
        )
        print(lines[-1], file=sys.stderr)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.record:
        replace_section("vector-params", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
