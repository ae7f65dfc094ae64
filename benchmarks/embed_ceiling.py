"""How fast can a passage be embedded here at all? (issue 14: the ≥ 2.5× passages/s target, checked against the CPU)

A passage is one ONNX run of e5-small over ~180-510 tokens. Almost all of its arithmetic is matrix products:
per layer, four 384×384 and two 384↔1536 projections (int8 in a quantized model, fp32 where a model keeps them),
and two attention products per head (fp32). This script reads which products the model has (from its graph),
times each one alone, at the passage's own shapes, through onnxruntime's own kernels with wwt's session options,
and times the whole model on the same token counts in the same run. Two bounds follow:

- **products alone**: the time of the model's own products at their measured speed — what is left if every other
  operator (layer norms, softmax, GELU, reshapes, quantizing activations, the graph's overhead) cost nothing;
- **kernel ceiling**: the same arithmetic at the speed of a large, kernel-friendly product (2048×1536×1536), with
  every projection int8 — what any e5-small-shaped model could reach on this CPU with these kernels.

The whole model's time divided by either bound is the most a runtime change could gain. It also records a
per-operator profile of the whole model (onnxruntime's profiler, one thread).

    WWT_MODEL_DIR=<model folder> python benchmarks/embed_ceiling.py [--rounds 3] [--append-results]

Building the one-product models needs the ``onnx`` package (not a wwt dependency): ``pip install onnx`` into the
venv that runs this. Model: whatever WWT_MODEL_DIR holds (the section says which file).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _shared import replace_section  # noqa: E402

LENGTHS = (180, 330, 510)  # tokens a passage: real chunks are ~200-512 (mean ~330)
HEADS, HEAD_DIM = 12, 32
BIG = (2048, 1536, 1536)
TARGET = 2.5


def products_of(model_path: Path) -> dict[str, Any]:
    """The model's matrix products by kind, from its graph: (K, N) of each int8 / fp32 projection per model,
    and how many attention products it has."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(model_path), load_external_data=False)
    shapes = {i.name: tuple(numpy_helper.to_array(i).shape) for i in model.graph.initializer if len(i.dims) == 2}
    int8: Counter[tuple[int, int]] = Counter()
    fp32: Counter[tuple[int, int]] = Counter()
    attention = 0
    for node in model.graph.node:
        if node.op_type in ("MatMulInteger", "DynamicQuantizeMatMul", "MatMulIntegerToFloat"):
            weight = next((shapes[x] for x in node.input[1:2] if x in shapes), None)
            if weight:
                int8[weight] += 1
        elif node.op_type == "MatMul":
            weight = next((shapes[x] for x in node.input if x in shapes), None)
            if weight:
                fp32[weight] += 1
            else:
                attention += 1
    return {"int8": dict(int8), "fp32": dict(fp32), "attention": attention}


def _options(threads: int) -> Any:
    from wwt.embedder import session_options

    return session_options(threads)


def _session(model: Any, threads: int) -> Any:
    import onnxruntime as ort

    return ort.InferenceSession(model.SerializeToString(), _options(threads), providers=["CPUExecutionProvider"])


def int8_product(m: int, k: int, n: int, rng: np.random.Generator) -> tuple[Any, dict[str, np.ndarray]]:
    """One DynamicQuantizeMatMul: what onnxruntime makes of an int8 projection (activations quantized on the fly)."""
    from onnx import TensorProto, helper, numpy_helper

    inits = [
        numpy_helper.from_array(rng.integers(-127, 128, (k, n), dtype=np.int8), "B"),
        numpy_helper.from_array(np.full(n, 0.002, np.float32), "scale"),
        numpy_helper.from_array(np.zeros(n, np.int8), "zero"),
        numpy_helper.from_array(np.zeros(n, np.float32), "bias"),
    ]
    node = helper.make_node("DynamicQuantizeMatMul", ["A", "B", "scale", "zero", "bias"], ["Y"], domain="com.microsoft")
    graph = helper.make_graph(
        [node], "p", [helper.make_tensor_value_info("A", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [m, n])], inits,
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets), {"A": rng.standard_normal((m, k)).astype(np.float32)}


def fp32_product(m: int, k: int, n: int, rng: np.random.Generator) -> tuple[Any, dict[str, np.ndarray]]:
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("MatMul", ["A", "B"], ["Y"])], "p",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(rng.standard_normal((k, n)).astype(np.float32), "B")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), {
        "A": rng.standard_normal((m, k)).astype(np.float32)
    }


def batched_product(a: list[int], b: list[int], rng: np.random.Generator) -> tuple[Any, dict[str, np.ndarray]]:
    """An attention product: [heads, L, d] × [heads, d, L] (scores) or [heads, L, L] × [heads, L, d] (context)."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("MatMul", ["A", "B"], ["Y"])], "p",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, a), helper.make_tensor_value_info("B", TensorProto.FLOAT, b)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), {
        "A": rng.standard_normal(a).astype(np.float32), "B": rng.standard_normal(b).astype(np.float32)
    }


def median_run(session: Any, feed: dict[str, np.ndarray], runs: int) -> float:
    """Median CPU seconds of one run: CPU time, not wall time, so other processes sharing the cores do not move it
    (they still share the caches)."""
    for _ in range(2):
        session.run(None, feed)
    times = []
    for _ in range(runs):
        t = time.process_time()
        session.run(None, feed)
        times.append(time.process_time() - t)
    return statistics.median(times)


def whole_model_feed(names: list[str], length: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    ids = rng.integers(1000, 200000, (1, length)).astype(np.int64)
    ids[0, 0], ids[0, -1] = 0, 2  # <s> … </s>
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    if "token_type_ids" in names:
        feed["token_type_ids"] = np.zeros_like(ids)
    return feed


def measure(model_path: Path, threads: int, rounds: int) -> dict[str, Any]:
    import onnxruntime as ort

    from wwt.embedder import DISABLED_FUSIONS

    rng = np.random.default_rng(14)
    kinds = products_of(model_path)
    whole = ort.InferenceSession(
        str(model_path), _options(threads), providers=["CPUExecutionProvider"], disabled_optimizers=list(DISABLED_FUSIONS)
    )
    names = [i.name for i in whole.get_inputs()]
    cases: dict[str, tuple[Any, dict[str, np.ndarray]]] = {}
    for length in LENGTHS:
        for (k, n) in kinds["int8"]:
            cases[f"{length}:int8:{k}x{n}"] = int8_product(length, k, n, rng)
        for (k, n) in kinds["fp32"]:
            cases[f"{length}:fp32:{k}x{n}"] = fp32_product(length, k, n, rng)
        for (k, n) in {(384, 384), (384, 1536), (1536, 384)} - set(kinds["int8"]):
            cases[f"{length}:int8:{k}x{n}"] = int8_product(length, k, n, rng)  # for the ceiling's all-int8 model
        cases[f"{length}:scores"] = batched_product([HEADS, length, HEAD_DIM], [HEADS, HEAD_DIM, length], rng)
        cases[f"{length}:context"] = batched_product([HEADS, length, length], [HEADS, length, HEAD_DIM], rng)
    cases["big:int8"] = int8_product(*BIG, rng)
    cases["big:fp32"] = fp32_product(*BIG, rng)
    sessions = {key: (_session(model, threads), feed) for key, (model, feed) in cases.items()}
    feeds = {length: whole_model_feed(names, length, rng) for length in LENGTHS}
    per_round: list[dict[str, float]] = []
    for _ in range(rounds):  # interleaved: every product and the whole model in each round
        times: dict[str, float] = {}
        for length in LENGTHS:
            times[f"{length}:whole"] = median_run(whole, feeds[length], 12)
        for key, (session, feed) in sessions.items():
            times[key] = median_run(session, feed, 6 if key.startswith("big") else 30)
        per_round.append(times)
    return {"kinds": kinds, "rounds": per_round, "threads": threads}


def bounds(result: dict[str, Any], length: int) -> dict[str, float]:
    """Each figure is the median over rounds of that round's own figure (a round's times are measured together)."""
    rows = [_bounds(result["kinds"], best, length) for best in result["rounds"]]
    return {key: statistics.median(r[key] for r in rows) for key in rows[0]}


def _bounds(kinds: dict[str, Any], best: dict[str, float], length: int) -> dict[str, float]:
    products = sum(best[f"{length}:int8:{k}x{n}"] * c for (k, n), c in kinds["int8"].items())
    products += sum(best[f"{length}:fp32:{k}x{n}"] * c for (k, n), c in kinds["fp32"].items())
    products += best[f"{length}:scores"] * kinds["attention"] / 2 + best[f"{length}:context"] * kinds["attention"] / 2
    big_int8 = 2 * np.prod(BIG) / best["big:int8"]  # operations a second
    big_fp32 = 2 * np.prod(BIG) / best["big:fp32"]
    layers = kinds["attention"] // 2
    projection_ops = 2 * length * layers * (4 * 384 * 384 + 2 * 384 * 1536)
    attention_ops = 2 * length * layers * 2 * HEADS * length * HEAD_DIM
    ceiling = projection_ops / big_int8 + attention_ops / big_fp32
    whole = best[f"{length}:whole"]
    return {
        "whole": whole, "products": products, "ceiling": ceiling,
        "gain_products": whole / products, "gain_ceiling": whole / ceiling,
        "int8_gops": big_int8 / 1e9, "fp32_gops": big_fp32 / 1e9,
    }


def operator_profile(model_path: Path, length: int, runs: int) -> list[tuple[str, int, float]]:
    """onnxruntime's per-node profile of the whole model (one thread, so node times add up), by operator."""
    import onnxruntime as ort

    from wwt.embedder import DISABLED_FUSIONS

    options = _options(1)
    options.enable_profiling = True
    with tempfile.TemporaryDirectory() as tmp:
        options.profile_file_prefix = str(Path(tmp) / "prof")
        session = ort.InferenceSession(
            str(model_path), options, providers=["CPUExecutionProvider"], disabled_optimizers=list(DISABLED_FUSIONS)
        )
        feed = whole_model_feed([i.name for i in session.get_inputs()], length, np.random.default_rng(1))
        for _ in range(runs):
            session.run(None, feed)
        events = json.loads(Path(session.end_profiling()).read_text())
    per_op: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for e in events:
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
            op = e.get("args", {}).get("op_name", "?")
            per_op[op][0] += 1
            per_op[op][1] += e["dur"] / 1000.0
    rows = [(op, int(c / runs), ms / runs) for op, (c, ms) in per_op.items()]
    return sorted(rows, key=lambda r: -r[2])


def report(model_path: Path, result: dict[str, Any], profile: list[tuple[str, int, float]], rounds: int) -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    size = model_path.stat().st_size / 1e6
    kinds = result["kinds"]
    lines = [
        f"## Embedding: how close a passage is to this CPU's limit (issue 14, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
        "",
        f"Command: `WWT_MODEL_DIR=<model folder> python benchmarks/embed_ceiling.py --rounds {rounds} --append-results` "
        f"(model: `model.onnx`, {size:.0f} MB; 2 shared CPU cores, load average {load}; wwt's session options, "
        f"{result['threads']} thread(s); one passage a call, no padding; CPU time, median of {rounds} rounds' own figures). The model's products, read from its graph: "
        f"int8 projections {sum(kinds['int8'].values())} ({', '.join(f'{k}×{n} ×{c}' for (k, n), c in kinds['int8'].items())}), "
        f"fp32 projections {sum(kinds['fp32'].values())} ({', '.join(f'{k}×{n} ×{c}' for (k, n), c in kinds['fp32'].items()) or 'none'}), "
        f"attention products {kinds['attention']}. Each timed alone at the passage's shape, interleaved with the whole "
        "model in each round.",
        "",
        "| tokens | whole model CPU ms | its products alone ms (share) | kernel ceiling ms | most a runtime change could gain | ... if every projection ran int8 at the large-product speed |",
        "|---|---|---|---|---|---|",
    ]
    for length in LENGTHS:
        b = bounds(result, length)
        lines.append(
            f"| {length} | {b['whole'] * 1e3:.1f} | {b['products'] * 1e3:.1f} ({b['products'] / b['whole']:.0%}) | "
            f"{b['ceiling'] * 1e3:.1f} | {b['gain_products']:.2f}× | {b['gain_ceiling']:.2f}× |"
        )
    b = bounds(result, 330)
    lines += [
        "",
        f"Large-product speed here (2048×1536×1536): int8 {b['int8_gops']:.0f} GOP/s, fp32 {b['fp32_gops']:.0f} GOP/s. "
        "At the passage's shapes (330 tokens): "
        + ", ".join(
            f"{key.split(':', 1)[1]} {2 * _ops(key) / statistics.median(r[key] for r in result['rounds']) / 1e9:.0f}"
            for key in sorted(k for k in result["rounds"][0] if k.startswith("330:") and not k.endswith("whole"))
        )
        + " GOP/s.",
        "",
        f"Per-operator profile of the whole model, 330 tokens, 1 thread (kernel time {sum(r[2] for r in profile):.1f} ms a passage):",
        "",
        "| operator | calls/passage | ms/passage | share |",
        "|---|---|---|---|",
    ]
    total = sum(r[2] for r in profile) or 1.0
    lines += [f"| {op} | {calls} | {ms:.2f} | {ms / total:.0%} |" for op, calls, ms in profile if ms / total >= 0.005]
    lines += [
        "",
        f"Reading: the issue asks for ≥ {TARGET}× today's passages/s with vectors within cosine 0.999 of today's. "
        f"With every operator but the products costing nothing, a 330-token passage would be {b['gain_products']:.2f}× "
        f"faster; with every projection int8 (a different model: cosine 0.9966 to fp32, outside the bound) and every "
        f"product at the large-product speed, {b['gain_ceiling']:.2f}×. Both are below {TARGET}×: the target is beyond "
        "what onnxruntime's kernels do on this CPU for this model, not a matter of session options, batching or "
        "threads (section ingest-two-phase measured those: 0.24-1.04×).",
    ]
    return "\n".join(lines)


def _ops(key: str) -> float:
    length_s, kind = key.split(":", 1)
    length = int(length_s)
    if kind in ("scores", "context"):
        return HEADS * length * length * HEAD_DIM
    k, n = (int(x) for x in kind.split(":")[1].split("x"))
    return length * k * n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads (1: CPU time is the cost of the work)")
    ap.add_argument("--profile-runs", type=int, default=10)
    ap.add_argument("--append-results", action="store_true")
    args = ap.parse_args()
    model_dir = os.environ.get("WWT_MODEL_DIR")
    if not model_dir or not (Path(model_dir) / "model.onnx").is_file():
        sys.exit("set WWT_MODEL_DIR to a folder with model.onnx")
    model_path = Path(model_dir) / "model.onnx"
    result = measure(model_path, args.threads, args.rounds)
    profile = operator_profile(model_path, 330, args.profile_runs)
    text = report(model_path, result, profile, args.rounds)
    print(text)
    if args.append_results:
        replace_section("embed-ceiling", text)


if __name__ == "__main__":
    main()
