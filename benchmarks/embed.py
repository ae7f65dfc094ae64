"""Embedding benchmark: wwt's int8 ONNX embedder vs the original stack (sentence-transformers on torch, fp32),
same workload, same thread count, measured in one run so the ratios are fair.

    WWT_MODEL_DIR=<model folder> python benchmarks/embed.py          # both stacks, its section in RESULTS.md
    WWT_MODEL_DIR=<model folder> python benchmarks/embed.py --no-torch   # ONNX only (no torch venv needed)
    ... --also-model <model folder> --also-label NAME --rounds 3   # a second ONNX model beside it

Every stack (and every ``--also-model``) runs in turn, ``--rounds`` times in rotation, and each figure is the
median over rounds, so a busy shared machine slows all of them alike. ``--also-model`` takes a model folder
(e.g. the fully-int8 stand-in of the pinned hub file: ``scripts/export_int8.py --variants per-channel``'s
``OUT/model``).

Measures model+tokenizer load time, single-query latency p50/p95, passage throughput on 200-400-token
conversation-like passages (real agent-log text from shared/fixtures mixed with Korean dev chat) at several
batch sizes, peak RSS, and how much dynamic int8 makes a vector depend on its batch (batch N vs batch 1).
Each stack runs in its own subprocess; its peak RSS is that process and all it starts, summed
(``_shared.TreePeak``), sampled by this one. Torch runs from a private venv under benchmarks/.work/
created on first use with ``pip install torch==2.13.0 sentence-transformers`` (never a project dependency).
Weights for torch: ``../shared/tools/e5model/build --with-hf`` (``--hf-dir``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shlex
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from _shared import REAL_FIXTURES, TreePeak, load_average, replace_section, tree_rss_mb  # noqa: E402

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
RESULTS = HERE / "RESULTS.md"
FIXTURES = Path(os.environ.get("WWT_FIXTURES") or REAL_FIXTURES)
DEFAULT_HF_DIR = Path.home() / ".cache" / "wwt-e5model-full" / "hf"
TORCH_PIN = "torch==2.13.0"

KOREAN_LINES = [
    "로그인 API에서 401이 계속 나서 토큰 만료 시간을 확인해 봤는데, Redis 캐시 TTL이 300초로 잡혀 있었어요.",
    "그래서 세션 키를 갱신할 때 EXPIRE를 다시 걸도록 수정했고, 테스트는 pytest로 돌려서 전부 통과했습니다.",
    "이 함수는 chunk_session()에서 메시지를 묶어서 512 토큰을 넘지 않게 나눕니다.",
    "마이그레이션 스크립트가 SQLite WAL 모드에서 잠금 충돌을 일으켜서 busy_timeout을 5000으로 올렸어요.",
    "지난번에 얘기한 hnswlib 인덱스 파라미터 M=32, ef=200으로 바꾸니까 검색 품질이 좀 나아졌습니다.",
    "Docker 빌드가 느려서 레이어 캐시를 살리려고 requirements.txt 복사를 먼저 하도록 Dockerfile 순서를 바꿨어요.",
    "kiwipiepy 형태소 분석 결과에서 NNG, NNP 태그만 남기고 나머지는 버리는 게 BM25 점수에 더 좋았습니다.",
    "에러 메시지는 'ConnectionResetError: [Errno 104] Connection reset by peer'였고 재시도 로직이 없었어요.",
    "깃 브랜치 feature/search-fusion에서 작업 중이고, PR 올리기 전에 ruff check를 한 번 더 돌려야 해요.",
    "한국어와 영어가 섞인 질문도 같은 벡터 공간에서 찾을 수 있어야 해서 multilingual 모델을 골랐습니다.",
]


def fixture_sentences(limit: int = 4000) -> list[str]:
    """English sentences from real agent logs (message text only; long tool dumps skipped)."""
    out: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "text" and isinstance(value, str):
                    yield value
                else:
                    yield from walk(value)
        elif isinstance(node, list):
            for value in node:
                yield from walk(value)

    for path in sorted(FIXTURES.glob("*/*.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            for text in walk(record):
                for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
                    sentence = sentence.strip()
                    if 40 <= len(sentence) <= 400 and not sentence.startswith(("<", "{", "[")):
                        out.append(sentence)
                        if len(out) >= limit:
                            return out
    return out


def build_workload(count: int, seed: int = 7) -> dict:
    """``count`` passages of 200-400 tokens (by the model's own tokenizer) and 50 short queries."""
    from wwt.model_source import resolve_model
    from wwt.spm_tokenizer import load_sentencepiece

    sp = load_sentencepiece(resolve_model().tokenizer_path)

    def n_tokens(text: str) -> int:
        return len(sp.encode(text)) + 2  # with <s> and </s>

    rng = random.Random(seed)
    english = fixture_sentences() or ["The build failed because the cache key changed after the upgrade."]
    passages = []
    while len(passages) < count:
        target = rng.randint(200, 400)
        parts: list[str] = []
        n = 0
        while n < target:
            line = rng.choice(KOREAN_LINES) if rng.random() < 0.5 else rng.choice(english)
            parts.append(line)
            n = n_tokens("passage: " + " ".join(parts))
        while n > 400 and len(parts) > 1:
            parts.pop()
            n = n_tokens("passage: " + " ".join(parts))
        if 200 <= n <= 400:
            passages.append(" ".join(parts))
    queries = [
        "Redis 캐시 TTL 설정",
        "how did we fix the login 401",
        "hnswlib 파라미터 뭐로 했지",
        "ConnectionResetError retry",
        "Dockerfile layer cache order",
        "kiwi 형태소 태그 필터",
        "SQLite busy_timeout",
        "ruff check before PR",
        "multilingual 모델 선택 이유",
        "pytest 통과 여부",
    ] * 5
    questions = [  # whole questions, as people type them to an agent (the README's examples and the like)
        "전에 Redis 캐시 TTL 어떻게 설정했지?",
        "how did we fix the mTLS cert error in keylink?",
        "로그인 401 에러 원인이 뭐였고 어떻게 고쳤더라?",
        "which hnswlib parameters did we settle on and why?",
        "SQLite WAL 잠금 충돌 때 busy_timeout 얼마로 올렸지?",
        "why did we move the requirements copy earlier in the Dockerfile?",
        "형태소 분석에서 어떤 품사 태그만 남기기로 했었지?",
        "what was the retry fix for ConnectionResetError?",
        "PR 올리기 전에 돌려야 하는 검사가 뭐였지?",
        "why did we pick a multilingual embedding model?",
    ] * 5
    tokens = [n_tokens("passage: " + p) for p in passages]
    return {
        "passages": passages,
        "queries": queries,
        "questions": questions,
        "passage_tokens": tokens,
        "query_tokens": [n_tokens("query: " + q) for q in queries],
        "question_tokens": [n_tokens("query: " + q) for q in questions],
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def rss_now_mb() -> float:
    """This process and its descendants, now (the peak is sampled from outside, by the parent)."""
    return tree_rss_mb(os.getpid())


def worker_onnx(workload: dict, batch_sizes: list[int], threads: int, out_dir: Path, tag: str) -> dict:
    import numpy as np

    t0 = time.perf_counter()
    from wwt.embedder import load_embedder

    t1 = time.perf_counter()
    embedder = load_embedder(threads=threads)
    t2 = time.perf_counter()
    rss_loaded = rss_now_mb()
    embedder.embed_queries(["warm up"])
    latencies, question_latencies = [], []
    for q, question in zip(workload["queries"], workload["questions"], strict=True):
        s = time.perf_counter()
        embedder.embed_queries([q])
        latencies.append((time.perf_counter() - s) * 1000)
        s = time.perf_counter()
        embedder.embed_queries([question])
        question_latencies.append((time.perf_counter() - s) * 1000)
    passages = workload["passages"]
    throughput = {}
    vectors = {}
    for bs in batch_sizes:
        s = time.perf_counter()
        vectors[bs] = embedder.embed_passages(passages, batch_size=bs)
        throughput[bs] = len(passages) / (time.perf_counter() - s)
    np.save(out_dir / f"onnx_passages-{tag}.npy", vectors[batch_sizes[0]])
    base = vectors[1] if 1 in vectors else vectors[batch_sizes[0]]
    batch_effect = {
        bs: {"min": float((v * base).sum(1).min()), "mean": float((v * base).sum(1).mean())}
        for bs, v in vectors.items()
        if v is not base
    }
    return {
        "stack": "wwt int8 ONNX",
        "model": f"{embedder.info.model_path} ({embedder.info.model_path.stat().st_size / 1e6:.0f} MB)",
        "threads": threads,
        "import_s": t1 - t0,
        "load_s": t2 - t1,
        "query_p50_ms": percentile(latencies, 50),
        "query_p95_ms": percentile(latencies, 95),
        "question_p50_ms": percentile(question_latencies, 50),
        "question_p95_ms": percentile(question_latencies, 95),
        "passages_per_s": throughput,
        "batch_vs_single_cosine": batch_effect,
        "rss_after_load_mb": rss_loaded,
        "loadavg_end": os.getloadavg()[0],
    }


def worker_torch(workload: dict, batch_sizes: list[int], threads: int, out_dir: Path, hf_dir: str) -> dict:
    t0 = time.perf_counter()
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    t1 = time.perf_counter()
    model = SentenceTransformer(hf_dir, device="cpu")
    t2 = time.perf_counter()
    rss_loaded = rss_now_mb()

    def encode(texts, bs):
        return model.encode(texts, batch_size=bs, normalize_embeddings=True, show_progress_bar=False)

    encode(["query: warm up"], 1)
    latencies, question_latencies = [], []
    for q, question in zip(workload["queries"], workload["questions"], strict=True):
        s = time.perf_counter()
        encode(["query: " + q], 1)
        latencies.append((time.perf_counter() - s) * 1000)
        s = time.perf_counter()
        encode(["query: " + question], 1)
        question_latencies.append((time.perf_counter() - s) * 1000)
    passages = ["passage: " + p for p in workload["passages"]]
    throughput = {}
    first = None
    for bs in batch_sizes:
        s = time.perf_counter()
        vecs = encode(passages, bs)
        throughput[bs] = len(passages) / (time.perf_counter() - s)
        first = vecs if first is None else first
    np.save(out_dir / "torch_passages.npy", np.asarray(first, dtype=np.float32))
    return {
        "stack": f"sentence-transformers fp32 (torch {torch.__version__})",
        "threads": threads,
        "import_s": t1 - t0,
        "load_s": t2 - t1,
        "query_p50_ms": percentile(latencies, 50),
        "query_p95_ms": percentile(latencies, 95),
        "question_p50_ms": percentile(question_latencies, 50),
        "question_p95_ms": percentile(question_latencies, 95),
        "passages_per_s": throughput,
        "rss_after_load_mb": rss_loaded,
        "loadavg_end": os.getloadavg()[0],
    }


def torch_python() -> Path:
    """The private torch venv's python, created on first use."""
    venv = WORK / "torch-venv"
    py = venv / "bin" / "python"
    if not py.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    probe = subprocess.run([str(py), "-c", "import sentence_transformers, torch"], capture_output=True)
    if probe.returncode != 0:
        print(f"installing {TORCH_PIN} sentence-transformers into {venv} ...", file=sys.stderr)
        subprocess.run(
            [str(py), "-m", "pip", "install", "-q", TORCH_PIN, "sentence-transformers"], check=True
        )
    return py


def run_worker(python: Path, kind: str, args: argparse.Namespace, workload_path: Path,
               model_dir: str | None = None, tag: str = "main") -> dict:
    cmd = [
        str(python),
        str(Path(__file__).resolve()),
        "--worker",
        kind,
        "--workload",
        str(workload_path),
        "--batch-sizes",
        args.batch_sizes,
        "--threads",
        str(args.threads),
        "--hf-dir",
        str(args.hf_dir),
        "--tag",
        tag,
    ]
    env = dict(os.environ)
    if model_dir:
        env["WWT_MODEL_DIR"] = model_dir
    if kind == "torch":
        env.pop("PYTHONPATH", None)
    with open(WORK / f"embed-{tag}.err", "w+", encoding="utf-8") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        with TreePeak(proc.pid) as peak:
            try:
                out, _ = proc.communicate(timeout=args.timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                raise SystemExit(f"{kind} worker ({tag}) timed out") from None
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{kind} worker ({tag}) failed:\n{err.read()[-2000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_rss_mb"] = peak.peak_mb
    return result


NUMERIC = ("import_s", "load_s", "query_p50_ms", "query_p95_ms", "question_p50_ms", "question_p95_ms",
           "rss_after_load_mb", "peak_rss_mb", "loadavg_end")


def median_of(rounds: list[dict]) -> dict:
    """One stack's figures over rounds: the median of each, peak RSS the largest (a peak is a maximum)."""
    import statistics

    out = dict(rounds[0])
    for key in NUMERIC:
        values = [r[key] for r in rounds]
        out[key] = max(values) if key == "peak_rss_mb" else statistics.median(values)
    out["passages_per_s"] = {
        bs: statistics.median(r["passages_per_s"][bs] for r in rounds) for bs in rounds[0]["passages_per_s"]
    }
    out["rounds"] = len(rounds)
    return out


def shown(model: str) -> str:
    """A model path as a reader can find it: inside the checkout relative to it, else the env var's folder."""
    root = str(HERE.parent) + "/"
    if model.startswith(root):
        return model[len(root):]
    return "$WWT_MODEL_DIR/" + Path(model.split(" (")[0]).name + (" (" + model.split(" (", 1)[1] if " (" in model else "")


def report(stacks: list[tuple[str, dict]], workload: dict, cosines: dict[str, float], command: str,
           rounds: int, load: str) -> str:
    """``stacks``: (column label, figures) — the ONNX models first, torch last if it ran."""
    toks = workload["passage_tokens"]
    torch_res = next((r for label, r in stacks if label.startswith("torch")), None)
    onnx = [(label, r) for label, r in stacks if not label.startswith("torch")]
    first = onnx[0][1]
    lines = [
        f"## Embedder: int8 ONNX vs sentence-transformers/torch ({datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC)",
        "",
        f"Command: `{command}`  ",
        "Models: " + "; ".join(f"{label} = `{shown(r['model'])}`" for label, r in onnx) + ".  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores shared with other work (load average {load} at the "
        f"end), Python {platform.python_version()}; threads={first['threads']} for every stack; each stack ran "
        f"{rounds} time(s) in rotation, figures are medians over rounds (peak RSS: the largest; RSS = the process "
        f"and all it starts, summed); {len(toks)} passages of {min(toks)}-{max(toks)} tokens "
        f"(mean {sum(toks) / len(toks):.0f}), {len(workload['queries'])} single keyword queries and "
        f"{len(workload['questions'])} whole questions (token counts include `query: `, `<s>`, `</s>`).",
        "",
    ]
    head = ["metric", *[label for label, _ in stacks]]
    ratio_heads = [f"{label} vs torch" for label, _ in onnx] if torch_res else []
    if len(onnx) > 1:
        ratio_heads += [f"{label} vs {onnx[0][0]}" for label, _ in onnx[1:]]
    lines += ["| " + " | ".join(head + ratio_heads + ["target"]) + " |",
              "|" + "---|" * (len(head) + len(ratio_heads) + 1)]

    def ratios(get, lower_is_better: bool) -> list[str]:
        out = []

        def fmt(a: float, b: float) -> str:  # how many times better a is than b
            if not a or not b:
                return ""
            x = b / a if lower_is_better else a / b
            return f"{x:.2f}x faster" if lower_is_better else f"{x:.2f}x"

        if torch_res:
            out += [fmt(get(r), get(torch_res)) for _, r in onnx]
        if len(onnx) > 1:
            out += [fmt(get(r), get(first)) for _, r in onnx[1:]]
        return out

    def row(name, key, fmt, lower_is_better=True, target=""):
        values = [fmt.format(r[key]) for _, r in stacks]
        rs = ratios(lambda r: r[key], lower_is_better) if key != "loadavg_end" else [""] * len(ratio_heads)
        if key.startswith("rss") or key.startswith("peak"):
            rs = [x.replace("faster", "less") for x in rs]
        lines.append("| " + " | ".join([name, *values, *rs, target]) + " |")

    row("import (s)", "import_s", "{:.2f}")
    row("model+tokenizer load (s)", "load_s", "{:.2f}", target="≤ 1.0 s")
    qt, xt = workload["query_tokens"], workload["question_tokens"]
    row(f"query p50, keywords {min(qt)}-{max(qt)} tokens (ms)", "query_p50_ms", "{:.1f}",
        target="≤ 5 ms, ≥ 3x torch")
    row("query p95, keywords (ms)", "query_p95_ms", "{:.1f}")
    row(f"query p50, questions {min(xt)}-{max(xt)} tokens (ms)", "question_p50_ms", "{:.1f}")
    row("query p95, questions (ms)", "question_p95_ms", "{:.1f}")
    for bs in first["passages_per_s"]:
        values = [f"{r['passages_per_s'][bs]:.1f}" for _, r in stacks]
        rs = ratios(lambda r, bs=bs: r["passages_per_s"][bs], False)
        lines.append("| " + " | ".join([f"passages/s, batch {bs}", *values, *rs, "≥ 1.2x torch"]) + " |")
    row("RSS after load (MB)", "rss_after_load_mb", "{:.0f}")
    row("peak RSS (MB)", "peak_rss_mb", "{:.0f}", target="≤ 800 MB")
    row("machine load avg at the end of the stack's run (other users)", "loadavg_end", "{:.1f}")
    lines.append("")
    for label, r in onnx:
        effect = ", ".join(
            f"batch {bs}: min {v['min']:.4f} / mean {v['mean']:.4f}" for bs, v in r["batch_vs_single_cosine"].items()
        )
        lines.append(f"Batch dependence of {label} vectors (cosine to the same passage embedded alone): {effect}.")
    for label, cosine in cosines.items():
        lines.append(f"Same passages, {label} vs torch fp32 vectors (same weights): mean cosine {cosine:.4f}.")
    lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--passages", type=int, default=64)
    parser.add_argument("--batch-sizes", default="1,4,16")
    parser.add_argument(
        "--threads", type=int, default=0, help="0 = wwt's default (WWT_THREADS or min(4, cores))"
    )
    parser.add_argument(
        "--hf-dir", default=str(DEFAULT_HF_DIR), help="sentence-transformers folder for torch"
    )
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--also-model", action="append", default=[], metavar="DIR",
                        help="another model folder (model.onnx + tokenizer.json) measured beside WWT_MODEL_DIR")
    parser.add_argument("--label", default="offline test build", help="column name for WWT_MODEL_DIR's model")
    parser.add_argument("--also-label", action="append", default=[], help="column name for each --also-model")
    parser.add_argument("--rounds", type=int, default=1, help="runs of every stack, in rotation")
    parser.add_argument(
        "--no-write", action="store_true", help="print the section, do not write it into RESULTS.md"
    )
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--worker", choices=["onnx", "torch"], help=argparse.SUPPRESS)
    parser.add_argument("--workload", help=argparse.SUPPRESS)
    parser.add_argument("--tag", default="main", help=argparse.SUPPRESS)
    args = parser.parse_args()
    batch_sizes = [int(b) for b in args.batch_sizes.split(",")]

    if args.worker:
        workload = json.loads(Path(args.workload).read_text(encoding="utf-8"))
        out_dir = Path(args.workload).parent
        if args.worker == "onnx":
            result = worker_onnx(workload, batch_sizes, args.threads, out_dir, args.tag)
        else:
            result = worker_torch(workload, batch_sizes, args.threads, out_dir, args.hf_dir)
        print(json.dumps(result))
        return

    if not args.threads:
        sys.path.insert(0, str(HERE.parent))
        from wwt.embedder import default_threads

        args.threads = default_threads()
    WORK.mkdir(parents=True, exist_ok=True)
    workload = build_workload(args.passages)
    workload_path = WORK / "embed_workload.json"
    workload_path.write_text(json.dumps(workload, ensure_ascii=False), encoding="utf-8")

    labels = list(args.also_label) + [f"model {i + 2}" for i in range(len(args.also_label), len(args.also_model))]
    models: list[tuple[str, str | None, str]] = [(args.label, None, "main")]
    models += [(label, str(Path(d).resolve()), f"also{i}") for i, (label, d) in
               enumerate(zip(labels, args.also_model, strict=False))]
    torch_py = None
    if not args.no_torch:
        if not (Path(args.hf_dir) / "model.safetensors").exists():
            raise SystemExit(
                f"no torch weights in {args.hf_dir}: run ../shared/tools/e5model/build --with-hf"
            )
        torch_py = torch_python()
    runs: dict[str, list[dict]] = {}
    for round_no in range(args.rounds):
        order = models[round_no % len(models):] + models[: round_no % len(models)]
        for label, model_dir, tag in order:
            print(f"round {round_no + 1}: {label}", file=sys.stderr, flush=True)
            runs.setdefault(label, []).append(
                run_worker(Path(sys.executable), "onnx", args, workload_path, model_dir, tag))
        if torch_py is not None:
            print(f"round {round_no + 1}: torch", file=sys.stderr, flush=True)
            runs.setdefault("torch fp32", []).append(run_worker(torch_py, "torch", args, workload_path, tag="torch"))
    stacks = [(label, median_of(runs[label])) for label, _, _ in models]
    cosines: dict[str, float] = {}
    if torch_py is not None:
        stacks.append(("torch fp32", median_of(runs["torch fp32"])))
        import numpy as np

        b = np.load(WORK / "torch_passages.npy")
        for label, _, tag in models:
            a = np.load(WORK / f"onnx_passages-{tag}.npy")
            cosines[label] = float((a * b).sum(1).mean())
    argv = shlex.join(a if not a.startswith("/") else f"<{Path(a).name}>" for a in sys.argv[1:])
    command = ("WWT_MODEL_DIR=<model folder> " if os.environ.get("WWT_MODEL_DIR") else "") + \
        "python benchmarks/embed.py " + argv
    section = report(stacks, workload, cosines, command.strip(), args.rounds, load_average())
    print(section)
    print(json.dumps({"runs": runs}, indent=1), file=sys.stderr)
    if not args.no_write:
        replace_section("embed", section)


if __name__ == "__main__":
    main()
