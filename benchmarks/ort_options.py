"""ORT session options for one query: can a SessionOptions change (or a fully-int8 model) bring the single
query embedding to the p50 ≤ 5 ms target (#2), and what does it cost when the machine is busy?

    WWT_MODEL_DIR=<model folder> python benchmarks/ort_options.py \
        [--rounds 10] [--per 30] [--busy 0,1,2] [--profile 200] [--fp32 PATH] [--append-results]

Times ``session.run`` on one fixed 17-token query (``query: 전에 Redis 캐시 TTL 어떻게 설정했지?``) for
several onnxruntime session configurations, all loaded in this one process and measured interleaved in
blocks (``--per`` runs per block, the block order rotating each of ``--rounds`` rounds), so a busy shared
machine slows every configuration alike; ratios to wwt's current configuration are the result that
travels. The current configuration is wwt's own (``wwt.embedder.session_options``, ``DISABLED_FUSIONS``,
``default_threads()``); the others change threads, spinning or the fusions left out. ``--busy`` repeats the
measurement with that many busy-loop processes running beside it (a laptop running wwt also runs an agent).
If an fp32 export is available (``--fp32``, ``$WWT_FP32_MODEL`` or ``~/.cache/wwt-e5model-full/fp32/model.onnx``),
a fully-int8 per-channel ``quantize_dynamic`` of it (≈ the pinned hub file; the offline build keeps 12
FFN-output MatMuls in fp32) is built once into ``benchmarks/.work/ort_options/`` and timed too, with a model
folder for it (``benchmarks/.work/ort_options/full-int8-model``, usable as ``WWT_MODEL_DIR`` for embed.py); every
row reports the mean/min cosine of its vectors to the current model's on Korean/English texts. Quantizing needs
the ``onnx`` package (not a wwt dependency): ``pip install onnx`` into the venv that runs this, once. The fp32
export comes from ``../shared/tools/e5model/build --with-fp32``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work" / "ort_options"
RESULTS = HERE / "RESULTS.md"
DEFAULT_FP32 = Path.home() / ".cache" / "wwt-e5model-full" / "fp32" / "model.onnx"
TARGET_MS = 5.0

QUERY_TEXT = "전에 Redis 캐시 TTL 어떻게 설정했지?"
# <s> ▁que ry : ▁전에 ▁Red is ▁캐 시 ▁T TL ▁어떻게 ▁설정 했 지 ? </s>
QUERY_IDS = [0, 41, 1294, 12, 75070, 6096, 164, 67057, 2166, 384, 41445, 35078, 60366, 48443, 1190, 32, 2]
SAMPLE = [
    ("query", "Redis 캐시 TTL 설정"),
    ("query", "undo last git commit"),
    ("query", "ConnectionResetError 재시도"),
    ("query", "형태소 분석 태그 필터"),
    ("passage", "PR 올리기 전에 ruff check와 pytest -x를 한 번 더 돌려야 해요."),
    ("passage", "The database connection pool size is set to 20 in the SQLAlchemy engine config."),
    ("passage", "그때 그거 뭐였지? 지난주에 고친 로그인 버그 말이야, 토큰 갱신 쪽이었나?"),
    ("passage", "To undo the last git commit but keep the changes, run git reset --soft HEAD~1."),
]

QUANTIZE = """
import sys
from onnxruntime.quantization import QuantType, quantize_dynamic
quantize_dynamic(sys.argv[1], sys.argv[2], weight_type=QuantType.QInt8, per_channel=True)
"""


@dataclass
class Measured:
    """Timings of one configuration under one machine condition."""

    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    round_p50: list[float] = field(default_factory=list)


@dataclass
class Config:
    name: str
    model: Path
    threads: int
    spinning: bool
    disabled: tuple[str, ...]
    extra: dict[str, str] = field(default_factory=dict)
    runs: dict[int, Measured] = field(default_factory=dict)  # by number of busy processes
    vectors: np.ndarray | None = None


def session_options(threads: int, spinning: bool, extra: dict[str, str]) -> Any:
    """wwt's own session options (``wwt.embedder.session_options``) with threads/spinning/extra changed."""
    import onnxruntime as ort

    from wwt.embedder import session_options as wwt_options

    base = wwt_options(threads)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = base.inter_op_num_threads
    options.enable_cpu_mem_arena = base.enable_cpu_mem_arena
    options.graph_optimization_level = base.graph_optimization_level
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    for key, value in extra.items():
        options.add_session_config_entry(key, value)
    return options


def wwt_spinning(threads: int) -> bool:
    from wwt.embedder import session_options as wwt_options

    return wwt_options(threads).get_session_config_entry("session.intra_op.allow_spinning") == "1"


def full_int8(fp32: Path) -> tuple[Path | None, str]:
    """The fully-int8 per-channel model built from ``fp32`` (cached), or None and why not."""
    import onnxruntime as ort

    if not fp32.is_file():
        return None, f"no fp32 model at `{fp32}` (set --fp32 or WWT_FP32_MODEL)"
    out = WORK / "full_int8_per_channel.onnx"
    stamp = WORK / "full_int8_per_channel.json"
    st = fp32.stat()
    key = {"src": str(fp32), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "ort": ort.__version__}
    if out.is_file() and stamp.is_file() and json.loads(stamp.read_text()) == key:
        model_folder(out)
        return out, f"cached in `{out.relative_to(HERE.parent)}`"
    WORK.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".part.onnx")
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", QUANTIZE, str(fp32), str(tmp)], capture_output=True, text=True, timeout=600
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1][:160]
        return None, f"quantize_dynamic failed ({last})"
    os.replace(tmp, out)
    stamp.write_text(json.dumps(key))
    model_folder(out)
    return out, f"built in {time.perf_counter() - start:.0f} s into `{out.relative_to(HERE.parent)}`"


def model_folder(model: Path) -> Path:
    """A folder usable as ``WWT_MODEL_DIR`` for ``model`` (links to it and to the current tokenizer), so
    benchmarks/embed.py can time the pinned hub file's shape end to end."""
    folder = WORK / "full-int8-model"
    folder.mkdir(parents=True, exist_ok=True)
    links = {"model.onnx": model, "tokenizer.json": Path(os.environ["WWT_MODEL_DIR"]) / "tokenizer.json"}
    for name, target in links.items():
        link = folder / name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target.resolve())
    return folder


def feed_for(session: Any, ids: list[int]) -> dict[str, np.ndarray]:
    arr = np.array([ids], dtype=np.int64)
    names = {i.name for i in session.get_inputs()}
    feed = {"input_ids": arr, "attention_mask": np.ones_like(arr), "token_type_ids": np.zeros_like(arr)}
    return {k: v for k, v in feed.items() if k in names}


def output_name(session: Any) -> str:
    outs = session.get_outputs()
    return next((o.name for o in outs if o.name == "last_hidden_state"), outs[0].name)


def sample_texts(n_korquad: int = 48) -> list[tuple[str, str]]:
    """SAMPLE plus ``n_korquad`` real Korean texts (half KorQuAD paragraphs, half questions; fixed seed)."""
    import random

    from _shared import KORQUAD

    if not KORQUAD.is_file():
        return list(SAMPLE)
    data = json.loads(KORQUAD.read_text(encoding="utf-8"))
    paragraphs = [p for a in data["data"] for p in a["paragraphs"]]
    picked = random.Random(5).sample(paragraphs, n_korquad // 2)
    texts = [("passage", p["context"]) for p in picked] + [("query", p["qas"][0]["question"]) for p in picked]
    return list(SAMPLE) + texts


def sample_vectors(session: Any, sequences: list[list[int]]) -> np.ndarray:
    """Mean-pooled, L2-normalised vectors of single (unpadded) sequences, as wwt computes them."""
    name = output_name(session)
    rows = []
    for ids in sequences:
        v = session.run([name], feed_for(session, ids))[0][0].mean(axis=0)
        rows.append(v / np.linalg.norm(v))
    return np.array(rows)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e3


BUSY_LOOP = "while True: pass"


def measure(
    configs: list[Config], rounds: int, per: int, busy_levels: list[int], fp32: Path | None
) -> np.ndarray | None:
    """Time every configuration interleaved, once per busy level (that many busy-loop processes run beside
    the measurement: the agent, a build, an ingest worker on a real laptop)."""
    import onnxruntime as ort

    from wwt.embedder import load_embedder

    embedder = load_embedder(os.environ["WWT_MODEL_DIR"], threads=1)
    prefixes = {"query": embedder.query_prefix, "passage": embedder.passage_prefix}
    sequences = [embedder.token_windows(text, prefixes[kind])[0] for kind, text in sample_texts()]
    reference = None
    if fp32 is not None and fp32.is_file():
        ref = ort.InferenceSession(str(fp32), providers=["CPUExecutionProvider"])
        reference = sample_vectors(ref, sequences)
        del ref
    got = embedder.token_windows(QUERY_TEXT, embedder.query_prefix)[0]
    if got != QUERY_IDS:
        print(f"note: wwt now tokenizes the query as {got}; timing the fixed ids anyway", file=sys.stderr)
    sessions = {}
    for c in configs:
        opts = session_options(c.threads, c.spinning, c.extra)
        s = ort.InferenceSession(
            str(c.model),
            sess_options=opts,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=list(c.disabled),
        )
        sessions[c.name] = (s, [output_name(s)], feed_for(s, QUERY_IDS))
        c.vectors = sample_vectors(s, sequences)
        for _ in range(20):
            s.run(*sessions[c.name][1:])
    for busy in busy_levels:
        hogs = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(busy)]
        try:
            time.sleep(0.5 if busy else 0)
            for r in range(rounds):
                for c in configs[r % len(configs) :] + configs[: r % len(configs)]:
                    m = c.runs.setdefault(busy, Measured())
                    s, out, feed = sessions[c.name]
                    for _ in range(2):  # let the previous block's threads settle
                        s.run(out, feed)
                    block = []
                    cpu0 = time.process_time()
                    for _ in range(per):
                        t = time.perf_counter()
                        s.run(out, feed)
                        block.append(time.perf_counter() - t)
                    m.cpu.append((time.process_time() - cpu0) / per)
                    m.times.extend(block)
                    m.round_p50.append(statistics.median(block))
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()
    return reference


def section(
    configs: list[Config],
    skipped: str | None,
    int8_note: str,
    command: str,
    loads: tuple[float, float],
    reference: np.ndarray | None,
) -> str:
    base = configs[0]
    levels = sorted(base.runs)
    idle = levels[0]
    assert base.vectors is not None

    def stats(c: Config, level: int) -> tuple[float, float, float]:
        m = c.runs[level]
        return pct(m.times, 0.5), pct(m.times, 0.95), statistics.mean(m.cpu)

    b50, b95, bcpu = stats(base, idle)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    n = len(base.runs[idle].round_p50)
    per = len(base.runs[idle].times) // max(1, n)
    busy_note = (
        f" Then the same again with {', '.join(str(b) for b in levels if b)} busy-loop process(es) beside it "
        "(second table)."
        if len(levels) > 1
        else ""
    )
    lines = [
        f"## ORT session options for one query ({stamp})",
        "",
        f"Command: `{command}` (load average {loads[0]:.2f} at the start, {loads[1]:.2f} at the end; "
        f"{os.cpu_count()} shared cores, onnxruntime {__import__('onnxruntime').__version__}).  ",
        f"One 17-token query (`query: {QUERY_TEXT}`), `session.run` only; {len(configs)} sessions in one "
        f"process, interleaved in blocks of {per} runs over {n} rounds (block order rotating), 2 unmeasured "
        "runs before each block. CPU ms/query = process CPU time / runs (all threads; spinning shows up here). "
        f"Cosine: mean/min over {len(base.vectors)} texts ({len(SAMPLE)} Korean/English sentences, the rest "
        "KorQuAD paragraphs and questions) vs the current row's vectors"
        + (
            ", and mean vs the fp32 export's (the reference int8 approximates). "
            if reference is not None
            else ". "
        )
        + f"Fully-int8 model: {int8_note}.{busy_note}",
        "",
        "| config | model | threads | spinning | fusions off | p50 ms | p95 ms | p50 vs current | per-round p50 "
        "ratio (min–max) | p95 vs current | CPU ms/query | cosine vs current (mean / min) | cosine vs fp32 (mean) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows = {}
    for c in configs:
        assert c.vectors is not None
        p50, p95, cpu = stats(c, idle)
        ratios = [a / b for a, b in zip(c.runs[idle].round_p50, base.runs[idle].round_p50, strict=True)]
        cos = (c.vectors * base.vectors).sum(axis=1)
        rows[c.name] = (p50, p95, cpu, float(cos.mean()), float(cos.min()))
        model = "full int8 per-channel" if "int8" in c.name else "current (`WWT_MODEL_DIR`)"
        extra = ", ".join(f"{k.split('.')[-1]}={v}" for k, v in c.extra.items())
        lines.append(
            f"| {c.name} | {model} | {c.threads} | {'on' if c.spinning else 'off'}{f' ({extra})' if extra else ''} "
            f"| {', '.join(c.disabled) or 'none'} | {p50:.2f} | {p95:.2f} | {p50 / b50:.2f}x "
            f"| {min(ratios):.2f}–{max(ratios):.2f} | {p95 / b95:.2f}x | {cpu * 1e3:.1f} "
            f"| {cos.mean():.4f} / {cos.min():.4f} "
            f"| {'' if reference is None else f'{float((c.vectors * reference).sum(axis=1).mean()):.4f}'} |"
        )
    if skipped:
        lines.append(f"| fully-int8 per-channel | skipped: {skipped} | | | | | | | | | | | |")
    lines.append("")
    if len(levels) > 1:
        head = " | ".join(f"p50 ms, {b} busy | vs current" for b in levels)
        lines += [
            f"| config | {head} | CPU ms/query, {levels[-1]} busy |",
            "|---|" + "---|---|" * len(levels) + "---|",
        ]
        for c in configs:
            cells = []
            for b in levels:
                p50 = stats(c, b)[0]
                cells.append(f"{p50:.2f} | {p50 / stats(base, b)[0]:.2f}x")
            lines.append(f"| {c.name} | {' | '.join(cells)} | {stats(c, levels[-1])[2] * 1e3:.1f} |")
        lines.append("")

    def rel(name: str, level: int = idle) -> str:
        c = next(x for x in configs if x.name == name)
        p50, p95, cpu = stats(c, level)
        r50, r95, rcpu = stats(base, level)
        return f"p50 {p50:.2f} ms ({p50 / r50:.2f}x), p95 {p95 / r95:.2f}x, CPU/query {cpu / rcpu:.2f}x"

    fastest = min(rows, key=lambda k: rows[k][0])
    meeting = [k for k in rows if rows[k][0] <= TARGET_MS]
    bullets = [
        f"Fastest p50 on the idle machine: **{fastest}** at {rows[fastest][0]:.2f} ms ({rows[fastest][0] / b50:.2f}x "
        f"current {b50:.2f} ms); "
        + (
            f"meets the {TARGET_MS:g} ms p50 target: {', '.join(meeting)}."
            if meeting
            else f"no configuration reaches the {TARGET_MS:g} ms p50 target in this run."
        )
    ]
    for c in configs[1:]:
        if c.model == base.model and c.disabled != base.disabled and c.threads == base.threads:
            bullets.append(f"{c.name} vs current: {rel(c.name)}.")
    spinning = [c.name for c in configs if c.spinning and "int8" not in c.name]
    for name in spinning:
        text = f"{name} vs current: idle {rel(name)}"
        for b in levels[1:]:
            text += f"; {b} busy: {rel(name, b)}"
        bullets.append(text + ".")
    int8 = [c.name for c in configs if "int8" in c.name]
    if int8:
        _, _, _, cmean, cmin = rows[int8[0]]
        bullets.append(
            "Fully-int8 per-channel: "
            + "; ".join(f"{k}: {rel(k)}" for k in int8)
            + f"; cosine to the current model mean {cmean:.4f}, min {cmin:.4f}."
        )
    else:
        bullets.append(f"Fully-int8 row skipped: {skipped}.")
    same = [c.name for c in configs if "int8" not in c.name and c.disabled == base.disabled]
    other = [c.name for c in configs if "int8" not in c.name and c.disabled != base.disabled]
    bullets.append(
        f"Options that keep the model and its fusions give the same vectors (min cosine "
        f"{min(rows[k][4] for k in same):.6f})"
        + (f"; other fusions: min cosine {min(rows[k][4] for k in other):.6f}" if other else "")
        + f". Per-round ratio ranges show how much the shared machine moved the numbers (load {loads[0]:.2f} → "
        f"{loads[1]:.2f})."
    )
    lines += [f"- {b}" for b in bullets]
    return "\n".join(lines) + "\n"


def op_profile(configs: list[Config], runs: int) -> str:
    """Where one query's time goes, by operator type (onnxruntime's own profiler, 1 thread so the kernel
    times add up), for each configuration on the current model that differs only in its fusions."""
    import onnxruntime as ort

    chosen = [
        c for c in configs if "int8" not in c.name and not c.spinning and c.threads == configs[0].threads
    ]
    tables = []
    for c in chosen:
        opts = session_options(1, False, c.extra)
        opts.enable_profiling = True
        opts.profile_file_prefix = str(WORK / "profile")
        WORK.mkdir(parents=True, exist_ok=True)
        s = ort.InferenceSession(
            str(c.model),
            sess_options=opts,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=list(c.disabled),
        )
        out, feed = [output_name(s)], feed_for(s, QUERY_IDS)
        for _ in range(runs):
            s.run(out, feed)
        trace = Path(s.end_profiling())
        total: dict[str, float] = {}
        calls: dict[str, int] = {}
        for event in json.loads(trace.read_text()):
            if event.get("cat") == "Node" and event.get("name", "").endswith("_kernel_time"):
                op = event["args"]["op_name"]
                total[op] = total.get(op, 0.0) + event["dur"]
                calls[op] = calls.get(op, 0) + 1
        trace.unlink()
        whole = sum(total.values())
        rows = [
            f"| {op} | {calls[op] / runs:.0f} | {us / runs / 1e3:.3f} | {us / calls[op]:.1f} | {us / whole:.0%} |"
            for op, us in sorted(total.items(), key=lambda kv: -kv[1])
            if us / whole >= 0.005
        ]
        tables.append(
            f"Operator time per query, **{c.name}** (fusions off: {', '.join(c.disabled) or 'none'}; 1 thread, "
            f"{runs} runs under the profiler, kernel time {whole / runs / 1e3:.2f} ms/query):\n\n"
            "| operator | calls/query | ms/query | µs/call | share |\n|---|---|---|---|---|\n"
            + "\n".join(rows)
        )
    return "\n\n".join(tables) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10, help="rounds over all configurations")
    parser.add_argument("--per", type=int, default=30, help="timed runs per block")
    parser.add_argument(
        "--busy", default="0", help="comma-separated numbers of busy-loop processes, e.g. 0,1,2"
    )
    parser.add_argument(
        "--profile", type=int, default=0, metavar="RUNS", help="also profile RUNS queries by operator type"
    )
    parser.add_argument("--fp32", type=Path, default=Path(os.environ.get("WWT_FP32_MODEL") or DEFAULT_FP32))
    parser.add_argument("--append-results", action="store_true", help="write its section into RESULTS.md")
    args = parser.parse_args(argv)
    if not os.environ.get("WWT_MODEL_DIR"):
        parser.error("set WWT_MODEL_DIR to the model folder (model.onnx + tokenizer.json)")
    if args.rounds < 1 or args.per < 1:
        parser.error("--rounds and --per must be positive")
    try:
        busy_levels = sorted({int(b) for b in args.busy.split(",")})
    except ValueError:
        parser.error("--busy takes numbers, e.g. 0,1,2")
    if busy_levels[0] < 0:
        parser.error("--busy numbers must be >= 0")
    model = Path(os.environ["WWT_MODEL_DIR"]).expanduser() / "model.onnx"
    command = "WWT_MODEL_DIR=<model folder> python benchmarks/ort_options.py " + shlex.join(
        sys.argv[1:] if argv is None else argv)
    load_start = os.getloadavg()[0]

    from wwt.embedder import DISABLED_FUSIONS, default_threads

    threads, spin, fused = default_threads(), wwt_spinning(default_threads()), DISABLED_FUSIONS
    stop = {"session.force_spinning_stop": "1"}
    configs = [
        Config(
            f"current: {threads} threads, spinning {'on' if spin else 'off'}", model, threads, spin, fused
        ),
        Config("all ORT fusions (before)", model, threads, spin, ()),
        Config("1 thread, no spin", model, 1, False, fused),
        Config("2 threads, spin + force_spinning_stop", model, 2, True, fused, stop),
        Config(
            "2 threads, spin 200 µs + force_spinning_stop",
            model,
            2,
            True,
            fused,
            {**stop, "session.intra_op.spin_duration_us": "200"},
        ),
    ]
    int8_path, int8_note = full_int8(args.fp32.expanduser())
    skipped = None
    if int8_path is None:
        skipped = int8_note
    else:
        configs.append(Config("full int8, current options", int8_path, threads, spin, fused))
        configs.append(Config("full int8, 2 threads, spin + stop", int8_path, 2, True, fused, stop))
    print(f"wwt: {threads} threads, spinning {spin}, fusions off {fused}", file=sys.stderr)
    print(f"fully-int8 model: {int8_note}", file=sys.stderr)

    fp32 = args.fp32.expanduser()
    reference = measure(configs, args.rounds, args.per, busy_levels, fp32 if fp32.is_file() else None)
    text = section(configs, skipped, int8_note, command, (load_start, os.getloadavg()[0]), reference)
    if args.profile > 0:
        text += "\n" + op_profile(configs, args.profile)
    print(text)
    if args.append_results:
        from _shared import replace_section

        replace_section("ort-options", text)
        print(f"written to {RESULTS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
