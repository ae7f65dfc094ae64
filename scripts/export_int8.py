"""Reproduce an int8 multilingual-e5-small from an fp32 ONNX export and measure what quantization costs.

    /work/venv/bin/python scripts/export_int8.py --fp32 ~/.cache/wwt-e5model-full/fp32/model.onnx \
        --out /tmp/wwt-int8 [--variants dynamic-default,per-channel,per-channel-fp32-ffn-out] [--write-results]

Each variant is built with ``onnxruntime.quantization.quantize_dynamic`` (int8 weights, activations quantized
at run time) and embedded on a fixed Korean/English sample through wwt's own embedder; the report gives its
size, mean/min cosine to the fp32 vectors and whether every query still ranks its passage first. The
chosen variant (the smallest one with mean cosine >= --min-cosine, else the most faithful one) is written
to ``OUT/model/`` with the tokenizer: a folder usable as ``WWT_MODEL_DIR``.

Needs the ``onnx`` package (a developer tool, not a runtime dependency of wwt) and ~3 GB RAM. The fp32
model comes from an optimum/transformers export of intfloat/multilingual-e5-small, or offline from
``/work/shared/tools/e5model/build --with-fp32`` (prints the folder; ``fp32/model.onnx``).
Variants are skipped (and said so) once ``--time-limit`` seconds have passed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from wwt.embedder import Embedder  # noqa: E402
from wwt.model_source import ModelInfo, load_manifest  # noqa: E402

VARIANTS = ("dynamic-default", "per-channel", "per-channel-fp32-ffn-out")

# (query, passage it must rank first) — Korean, English, mixed and cross-lingual, like real agent chat.
PAIRS = [
    (
        "Redis 캐시 TTL 설정",
        "Redis 캐시의 TTL은 EXPIRE 명령으로 설정하고, 세션 키는 300초 뒤에 만료되도록 했습니다.",
    ),
    (
        "PostgreSQL 인덱스 잠금",
        "PostgreSQL 인덱스를 만들 때 CONCURRENTLY 옵션을 써서 테이블 잠금을 피했습니다.",
    ),
    (
        "도커 빌드 캐시",
        "Docker 이미지 빌드가 느려서 requirements.txt 복사를 먼저 하도록 레이어 순서를 바꿨어요.",
    ),
    ("useEffect 무한 렌더링", "React 컴포넌트의 useEffect 의존성 배열을 고쳐서 무한 렌더링을 막았습니다."),
    (
        "undo last git commit",
        "To undo the last git commit but keep the changes, run git reset --soft HEAD~1.",
    ),
    (
        "connection pool size",
        "The database connection pool size is set to 20 in the SQLAlchemy engine config.",
    ),
    (
        "CI npm install failure",
        "We bumped the Node.js version in the CI workflow to fix the npm install failure.",
    ),
    (
        "ConnectionResetError 재시도",
        "The client raised ConnectionResetError: [Errno 104] because we had no retry loop.",
    ),
    (
        "형태소 분석 태그 필터",
        "kiwipiepy 형태소 분석 결과에서 NNG, NNP 태그만 남기는 게 BM25 점수에 더 좋았습니다.",
    ),
    (
        "데이터베이스 마이그레이션 잠금",
        "The SQLite migration hit 'database is locked' in WAL mode, so busy_timeout went to 5000.",
    ),
    ("hnsw parameters", "hnswlib 인덱스 파라미터를 M=32, ef=200으로 바꾸니까 검색 품질이 좀 나아졌습니다."),
    ("ruff before PR", "PR 올리기 전에 ruff check와 pytest -x를 한 번 더 돌려야 해요."),
]
EXTRA = [
    "The weather forecast says it will rain in Seoul tomorrow afternoon.",
    "오늘 점심은 김치찌개를 먹었는데 너무 짰어요.",
    "def chunk_session(messages):\n    return [m for m in messages if m.text]",
    "그때 그거 뭐였지? 지난주에 고친 로그인 버그 말이야, 토큰 갱신 쪽이었나?",
]


def ffn_output_matmuls(fp32: Path) -> list[str]:
    """Names of the FFN down-projection MatMuls ([4H, H] weights): the ones int8 hurts most."""
    import onnx

    model = onnx.load(str(fp32), load_external_data=False)
    shapes = {init.name: tuple(init.dims) for init in model.graph.initializer}
    names = []
    for node in model.graph.node:
        if node.op_type == "MatMul" and len(node.input) > 1:
            dims = shapes.get(node.input[1])
            if dims and len(dims) == 2 and dims[0] == 4 * dims[1]:
                names.append(node.name)
    return names


def quantize(fp32: Path, dst: Path, variant: str) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    dst.parent.mkdir(parents=True, exist_ok=True)
    if variant == "dynamic-default":
        quantize_dynamic(str(fp32), str(dst), weight_type=QuantType.QInt8)
    elif variant == "per-channel":
        quantize_dynamic(str(fp32), str(dst), weight_type=QuantType.QInt8, per_channel=True)
    elif variant == "per-channel-fp32-ffn-out":
        keep = ffn_output_matmuls(fp32)
        if not keep:
            raise SystemExit("found no FFN-output MatMul ([4H, H] weight) in the fp32 graph")
        quantize_dynamic(
            str(fp32), str(dst), weight_type=QuantType.QInt8, per_channel=True, nodes_to_exclude=keep
        )
    else:
        raise SystemExit(f"unknown variant {variant!r}; choose from {', '.join(VARIANTS)}")


def model_folder(model: Path, tokenizer_dir: Path, folder: Path) -> Path:
    """A WWT_MODEL_DIR-style folder: model.onnx + tokenizer.json (+ config.json)."""
    folder.mkdir(parents=True, exist_ok=True)
    if model.resolve() != (folder / "model.onnx").resolve():
        shutil.move(str(model), folder / "model.onnx")
    for name in ("tokenizer.json", "config.json"):
        if (tokenizer_dir / name).exists() and not (folder / name).exists():
            shutil.copyfile(tokenizer_dir / name, folder / name)
    return folder


def embed_sample(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    info = ModelInfo(model_dir=folder, source="env", manifest=load_manifest(), pinned=False)
    embedder = Embedder(info)
    queries = embedder.embed_queries([q for q, _ in PAIRS])
    passages = embedder.embed_passages([p for _, p in PAIRS] + EXTRA)
    return queries, passages


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fp32", type=Path, default=Path.home() / ".cache/wwt-e5model-full/fp32/model.onnx")
    parser.add_argument(
        "--tokenizer-dir", type=Path, help="folder with tokenizer.json (default: beside --fp32)"
    )
    parser.add_argument("--out", type=Path, default=Path("/tmp/wwt-int8"))
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--min-cosine", type=float, default=0.995)
    parser.add_argument("--time-limit", type=float, default=600, help="seconds; later variants are skipped")
    parser.add_argument(
        "--write-results", action="store_true", help="write its section into benchmarks/RESULTS.md"
    )
    args = parser.parse_args()
    started = time.monotonic()
    if not args.fp32.is_file():
        raise SystemExit(f"no fp32 model at {args.fp32}: run /work/shared/tools/e5model/build --with-fp32")
    tokenizer_dir = args.tokenizer_dir or args.fp32.parent
    fp32_dir = args.out / "fp32"
    fp32_dir.mkdir(parents=True, exist_ok=True)
    link = fp32_dir / "model.onnx"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(args.fp32.resolve())  # never move or copy the user's fp32 file
    fp32_q, fp32_p = embed_sample(model_folder(link, tokenizer_dir, fp32_dir))
    fp32_all = np.vstack([fp32_q, fp32_p])

    rows = []
    for variant in args.variants.split(","):
        if time.monotonic() - started > args.time_limit:
            rows.append({"variant": variant, "skipped": True})
            continue
        dst = args.out / variant / "model.onnx"
        t = time.monotonic()
        quantize(args.fp32, dst, variant)
        quant_s = time.monotonic() - t
        folder = model_folder(dst, tokenizer_dir, dst.parent)
        q, p = embed_sample(folder)
        cos = (np.vstack([q, p]) * fp32_all).sum(axis=1)
        top1 = int(sum(int(np.argmax(p @ q[i]) == i) for i in range(len(PAIRS))))
        rows.append(
            {
                "variant": variant,
                "mb": (folder / "model.onnx").stat().st_size / 1e6,
                "mean": float(cos.mean()),
                "min": float(cos.min()),
                "top1": top1,
                "quant_s": quant_s,
                "folder": folder,
            }
        )
        print(
            f"{variant}: {rows[-1]['mb']:.0f} MB, cosine mean {cos.mean():.4f} min {cos.min():.4f}, "
            f"top-1 {top1}/{len(PAIRS)} ({quant_s:.0f} s)",
            file=sys.stderr,
        )

    built = [r for r in rows if not r.get("skipped")]
    if not built:
        raise SystemExit("no variant was built within the time limit")
    good = [r for r in built if r["mean"] >= args.min_cosine]
    chosen = min(good, key=lambda r: r["mb"]) if good else max(built, key=lambda r: r["mean"])
    final = args.out / "model"
    if final.exists():
        shutil.rmtree(final)
    shutil.copytree(chosen["folder"], final)
    fp32_top1 = int(sum(int(np.argmax(fp32_p @ fp32_q[i]) == i) for i in range(len(PAIRS))))

    lines = [
        f"## int8 export: quantization variants vs fp32 ({datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC)",
        "",
        f"Command: `python scripts/export_int8.py {' '.join(sys.argv[1:])}`  ",
        f"fp32 source: `{args.fp32}` ({args.fp32.stat().st_size / 1e6:.0f} MB); sample: {len(PAIRS)} queries + "
        f"{len(PAIRS) + len(EXTRA)} passages (Korean, English, mixed, code); fp32 ranks {fp32_top1}/{len(PAIRS)} "
        "queries' passages first.",
        "",
        "| variant | size (MB) | mean cosine to fp32 | min cosine | queries ranking their passage first | quantize (s) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r.get("skipped"):
            lines.append(f"| {r['variant']} | skipped (time limit) | | | | |")
        else:
            lines.append(
                f"| {r['variant']} | {r['mb']:.0f} | {r['mean']:.4f} | {r['min']:.4f} | "
                f"{r['top1']}/{len(PAIRS)} | {r['quant_s']:.0f} |"
            )
    lines += [
        "",
        f"Chosen: **{chosen['variant']}** (rule: smallest with mean cosine ≥ {args.min_cosine}, else the "
        f"most faithful), written to `{final}`.",
        "",
    ]
    section = "\n".join(lines)
    print(section)
    if args.write_results:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from _shared import replace_section

        replace_section("int8-export", section)
    print(final)


if __name__ == "__main__":
    os.environ.setdefault("WWT_THREADS", str(min(4, os.cpu_count() or 1)))
    main()
