"""Where a search process's memory and start-up time go, one part at a time, each in a fresh process.

Parts: the e5 tokenizer as HF ``tokenizers`` (the design's first choice) vs the sentencepiece conversion wwt
loads; Kiwi as configured before this session (default user dictionary, no release of load garbage) vs now;
the ONNX session. Each part is loaded ``--runs`` times, the variants interleaved, in a child process that
reports resident-memory growth (VmRSS after − before, MB), peak (VmHWM) and wall time; beside it, the whole
process's peak with anything it starts, summed (``_shared.TreePeak``). One more row is the Kiwi helper process a
cold Korean ``wwt search`` starts (``python -m wwt.lexical``, one query): its whole peak is what that search adds.
``tokenizers`` is only a test dependency; without it that row is skipped.

    WWT_MODEL_DIR=... python benchmarks/memory_parts.py [--runs 3] [--append-results]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _shared import load_average, replace_section, run_tree_measured  # noqa: E402

RESULTS = HERE / "RESULTS.md"

CHILD = r"""
import json, os, sys, time
def status():
    out = {}
    for line in open("/proc/self/status"):
        if line.startswith(("VmRSS", "VmHWM")):
            key, value = line.split(":")
            out[key] = int(value.split()[0]) / 1024
    return out
part = sys.argv[1]
model_dir = os.environ["WWT_MODEL_DIR"]
SENTENCE = "어제 회의에서 결정한 데이터베이스 마이그레이션 방법을 다시 알려줘. hnswlib ef 파라미터는?"
if part.startswith("kiwi"):
    import kiwipiepy  # the import is not the part being measured
elif part == "onnx":
    import onnxruntime
elif part == "hf-tokenizers":
    import tokenizers
elif part == "sentencepiece":
    import sentencepiece
    from wwt.spm_tokenizer import load_sentencepiece
before = status()
started = time.perf_counter()
if part == "hf-tokenizers":
    tok = tokenizers.Tokenizer.from_file(model_dir + "/tokenizer.json")
    tok.encode(SENTENCE)
elif part == "sentencepiece":
    tok = load_sentencepiece(__import__("pathlib").Path(model_dir) / "tokenizer.json")
    tok.encode(SENTENCE)
elif part == "kiwi-before":
    kiwi = kiwipiepy.Kiwi(load_typo_dict=False, load_multi_dict=False)
    kiwi.tokenize(SENTENCE)
elif part == "kiwi-now":
    import wwt.lexical
    wwt.lexical.tokenize(SENTENCE)
elif part == "onnx":
    import numpy as np
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 2
    options.enable_cpu_mem_arena = False
    session = onnxruntime.InferenceSession(model_dir + "/model.onnx", sess_options=options,
                                           providers=["CPUExecutionProvider"])
    ids = np.array([[0, 41, 1294, 12, 75070, 6096, 164, 67057, 2166, 384, 2]], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    names = {i.name for i in session.get_inputs()}
    if "token_type_ids" in names:
        feed["token_type_ids"] = np.zeros_like(ids)
    session.run(None, {k: v for k, v in feed.items() if k in names})
seconds = time.perf_counter() - started
after = status()
print(json.dumps({"rss": after["VmRSS"] - before["VmRSS"], "hwm": after["VmHWM"] - before["VmRSS"],
                  "seconds": seconds}))
"""

PARTS = [
    ("hf-tokenizers", "e5 tokenizer: HF tokenizers (tokenizer.json)"),
    ("sentencepiece", "e5 tokenizer: sentencepiece conversion (wwt now)"),
    ("kiwi-before", "Kiwi as of session 1 (default dict, no release)"),
    ("kiwi-now", "Kiwi now (no default dict, load garbage released)"),
    ("onnx", "ONNX session (int8 e5-small, arena off)"),
    ("lexical-helper", "Kiwi helper process of a cold Korean search (`python -m wwt.lexical`, one query)"),
]
HELPER_QUERY = "전에 Redis 캐시 TTL 어떻게 설정했지?"


def run_part(part: str) -> dict | None:
    if part == "lexical-helper":
        wall, peak, code, out, _ = run_tree_measured([sys.executable, "-m", "wwt.lexical"],
                                                     stdin=json.dumps([HELPER_QUERY]).encode("utf-8"))
        if code != 0:
            raise RuntimeError(f"{part}: {out.strip().splitlines()[-1:]}")
        return {"seconds": wall, "tree": peak}
    _, peak, code, out, _ = run_tree_measured([sys.executable, "-c", CHILD, part])
    if code != 0:
        if "No module named 'tokenizers'" in out:
            return None
        raise RuntimeError(f"{part}: {out.strip().splitlines()[-1:]}")
    result = json.loads(out.strip().splitlines()[-1])
    result["tree"] = peak
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--append-results", action="store_true")
    args = parser.parse_args(argv)
    if not os.environ.get("WWT_MODEL_DIR"):
        parser.error("set WWT_MODEL_DIR to the model folder")
    from wwt.spm_tokenizer import load_sentencepiece

    load_sentencepiece(Path(os.environ["WWT_MODEL_DIR"]) / "tokenizer.json")  # conversion cached: not timed
    samples: dict[str, list[dict]] = {part: [] for part, _ in PARTS}
    for _ in range(args.runs):
        for part, _label in PARTS:
            result = run_part(part)
            if result is not None:
                samples[part].append(result)
    lines = [
        f"## Memory and load time by part (fresh process each, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
        "",
        f"Command: `WWT_MODEL_DIR=<model folder> python benchmarks/memory_parts.py --runs {args.runs}` (variants "
        f"interleaved; load average at the end {load_average()}). RSS = VmRSS growth over the part's "
        "load plus one call; peak = VmHWM above the starting RSS; whole process = the fresh process's peak with "
        "anything it starts, summed, interpreter included; medians of the runs.",
        "",
        "| part | RSS MB | peak MB | whole process peak MB | load + first call s (min–max) |",
        "|---|---|---|---|---|",
    ]
    for part, label in PARTS:
        got = samples[part]
        if not got:
            lines.append(f"| {label} | not installed | | | |")
            continue
        secs = [g["seconds"] for g in got]
        growth = "" if "rss" not in got[0] else f"{statistics.median(g['rss'] for g in got):.0f}"
        peak = "" if "hwm" not in got[0] else f"{statistics.median(g['hwm'] for g in got):.0f}"
        lines.append(
            f"| {label} | {growth} | {peak} | {statistics.median(g['tree'] for g in got):.0f} | "
            f"{statistics.median(secs):.2f} ({min(secs):.2f}–{max(secs):.2f}) |"
        )

    def ratio(a: str, b: str, key: str) -> str:
        if not samples[a] or not samples[b]:
            return "n/a"
        return f"{statistics.median(g[key] for g in samples[a]) / statistics.median(g[key] for g in samples[b]):.2f}x"

    lines += [
        "",
        f"- tokenizer: sentencepiece / HF tokenizers RSS {ratio('sentencepiece', 'hf-tokenizers', 'rss')}, "
        f"time {ratio('sentencepiece', 'hf-tokenizers', 'seconds')}",
        f"- Kiwi: now / before RSS {ratio('kiwi-now', 'kiwi-before', 'rss')}, time {ratio('kiwi-now', 'kiwi-before', 'seconds')}",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.append_results:
        replace_section("memory-parts", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
