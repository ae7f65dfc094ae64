"""Is the attention mask's Add worth removing from the passage model? (issue 14, a claim checked)

ingest_two_phase.py's operator profile once put the Add of the attention mask onto the [1, 12, L, L] scores at
20-53 % of a passage's kernel time. One passage a call has no padding, so that Add only adds zeros: a copy of the
model with the 12 Adds cut out (each Softmax reading the scores directly) gives identical vectors. This script
builds that copy and times it against the model as it is, interleaved in one process on the same token
sequences (real passage lengths), optionally beside busy-loop processes, and reports the ratio.

    WWT_MODEL_DIR=<model folder> python benchmarks/mask_add.py [--rounds 6] [--busy 0,2] [--append-results]

Building the copy needs the ``onnx`` package (not a wwt dependency): ``pip install onnx`` into the venv that
runs this. Model: whatever WWT_MODEL_DIR holds (the figures say which file).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _shared import replace_section  # noqa: E402

LENGTHS = (180, 260, 330, 420, 510)  # tokens a passage: real chunks are ~200-512 (mean ~330)


def without_mask_add(model: Path, out: Path) -> int:
    """Write ``model`` with every Add that feeds a Softmax replaced by its first input; returns how many."""
    import onnx

    m = onnx.load(str(model))
    producer = {o: n for n in m.graph.node for o in n.output}
    cut = []
    for node in m.graph.node:
        if node.op_type == "Softmax" and node.input[0] in producer:
            add = producer[node.input[0]]
            if add.op_type == "Add":
                node.input[0] = add.input[0]
                cut.append(add)
    for add in cut:
        m.graph.node.remove(add)
    onnx.save(m, str(out))
    return len(cut)


def time_pair(model: Path, variant: Path, rounds: int) -> tuple[float, float, float]:
    """Median seconds per passage (as is, without the Add) and the worst max-abs difference of outputs."""
    import onnxruntime as ort

    from wwt.embedder import DISABLED_FUSIONS, default_threads, session_options

    def session(path: Path) -> ort.InferenceSession:
        return ort.InferenceSession(str(path), sess_options=session_options(default_threads()),
                                    providers=["CPUExecutionProvider"], disabled_optimizers=list(DISABLED_FUSIONS))

    a, b = session(model), session(variant)
    rng = np.random.default_rng(7)
    feeds = []
    for n in LENGTHS:
        ids = rng.integers(5, 200_000, (1, n)).astype(np.int64)
        ids[0, 0], ids[0, -1] = 0, 2
        feeds.append({"input_ids": ids, "attention_mask": np.ones_like(ids)})
    names_b = {i.name for i in b.get_inputs()}
    diff = 0.0
    for feed in feeds:  # warm-up, and the outputs compared
        fb = {k: v for k, v in feed.items() if k in names_b}
        diff = max(diff, float(np.abs(a.run(None, feed)[0] - b.run(None, fb)[0]).max()))
    times: dict[str, list[float]] = {"as is": [], "cut": []}
    for r in range(rounds):
        order = [("as is", a), ("cut", b)] if r % 2 == 0 else [("cut", b), ("as is", a)]
        for name, s in order:
            names = {i.name for i in s.get_inputs()}
            t0 = time.perf_counter()
            for feed in feeds:
                s.run(None, {k: v for k, v in feed.items() if k in names})
            times[name].append((time.perf_counter() - t0) / len(feeds))
    return float(np.median(times["as is"])), float(np.median(times["cut"])), diff


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--busy", default="0,2", help="busy-loop processes beside the measurement, per run")
    ap.add_argument("--append-results", action="store_true")
    args = ap.parse_args()
    from wwt.model_source import resolve_model

    info = resolve_model()
    try:
        import onnx  # noqa: F401
    except ImportError:
        print("this benchmark needs the onnx package: pip install onnx", file=sys.stderr)
        return 2
    rows: list[str] = []
    ratios: list[float] = []  # as printed (two decimals)
    with tempfile.TemporaryDirectory(prefix="wwt-mask-") as tmp:
        variant = Path(tmp) / "model-no-mask-add.onnx"
        cut = without_mask_add(info.model_path, variant)
        for busy in [int(x) for x in args.busy.split(",") if x.strip()]:
            loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
            try:
                as_is, without, diff = time_pair(info.model_path, variant, args.rounds)
            finally:
                for p in loops:
                    p.kill()
            ratios.append(round(as_is / without, 2))
            rows.append(f"| {busy} | {as_is * 1e3:.0f} | {without * 1e3:.0f} | {ratios[-1]:.2f}× | {diff:.1e} |")
    if all(0.9 <= x <= 1.1 for x in ratios):
        reading = (f"Reading: the outputs are identical and the time is within ±10 % "
                   f"({', '.join(f'{x:.2f}×' for x in ratios)}), idle and beside busy processes. The profile row that put this Add at 20-53 % of kernel time (section "
                   "ingest-two-phase) did not hold up in a direct comparison: cutting the Add is not worth a model-preparation step.")
    else:
        reading = (f"Reading: speed-ups {', '.join(f'{x:.2f}×' for x in ratios)} with identical outputs: cutting "
                   "the Add is worth a model-preparation step.")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    report = "\n".join([
        "## Attention-mask Add: cut out of the passage model (issue 14; " + time.strftime("%Y-%m-%d") + ")",
        "",
        f"Command: `WWT_MODEL_DIR=<model folder> python benchmarks/mask_add.py --rounds {args.rounds} --busy "
        f"{args.busy} --append-results` (model: `{info.model_path.name}`, {info.model_path.stat().st_size / 1e6:.0f} MB; "
        f"2 shared CPU cores, load average {load}). {cut} Adds cut (one per layer); token sequences of "
        f"{', '.join(map(str, LENGTHS))} tokens, one a call (no padding, mask all ones), interleaved.",
        "",
        "| busy processes beside | ms/passage as is | ms/passage without the Add | speed-up | max abs diff of outputs |",
        "|---|---|---|---|---|",
        *rows,
        "",
        reading,
    ])
    print(report)
    if args.append_results:
        replace_section("mask-add", report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
