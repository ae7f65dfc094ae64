"""Scale benchmark (issue #4): a ~100,000-chunk synthetic archive built through the real ingest path.

    WWT_MODEL_DIR=<model folder> python benchmarks/scale.py --record
    ... --rebuild            # rebuild the cached corpus + store (benchmarks/.work/scale/100k)
    ... --chunks 20000       # smaller run
    ... --no-original        # skip the original tool side by side

Measures, in one run:
* build: ingest time (real ``Memory.ingest``; vectors pre-seeded, see benchmarks/scale_corpus.py), chunks/s,
  disk size of SQLite and of each index;
* real-path ingest rate on a small corpus with the real tokenizer (what the 100k build's shim skips), side by
  side with the shim, as a ratio;
* warm search p50/p95 through ``Memory.search`` in one process over ~200 queries (Korean, English,
  identifiers, mixed), without and with filters (project, platform, branch, since), query-embedding time
  separately, and that process's peak RSS;
* cold ``python -m wwt search QUERY --all`` as a fresh process: median wall time of 5 and peak RSS;
* every peak RSS is the process and all it starts, summed (``_shared.TreePeak``: a Korean query's Kiwi helper
  process counts), with the process alone beside it;
* the original tool (PyPI ``whatwasthat``) cold search + peak RSS next to ours on the same small corpus.
Targets: warm p50 ≤ 30 ms at 100k, cold ≤ 2.5 s, search RSS ≤ 800 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import scale_corpus  # noqa: E402
from _shared import load_average, replace_section, run_tree_measured, tree_rss_mb  # noqa: E402

ROOT = HERE.parent
WORK = HERE / ".work"
RESULTS = HERE / "RESULTS.md"
PYTHON = sys.executable
ORIG_VENV = WORK / "orig-venv"
ORIG_HF = WORK / "orig-hf"
ORIG_SHIM = WORK / "orig-shim"
FP32_DIR = Path.home() / ".cache" / "wwt-e5model-full"
TARGET_WARM_P50_MS = 30.0
TARGET_COLD_S = 2.5
TARGET_RSS_MB = 800.0

ENGLISH_QUERIES = (
    "how did we fix the failing test", "database migration rollback", "authentication token expired error",
    "why is the build slow", "docker compose port conflict", "rename the config option",
    "memory leak in the worker", "pagination bug in the API", "add retry with exponential backoff",
    "tailwind component catalog", "go.mod toolchain version", "phoenix server does not start",
    "create a file JOKE.md with a joke", "summarize the conversation", "rate limit exceeded",
    "upgrade dependencies safely", "null pointer exception in handler", "timezone conversion bug",
    "write unit tests for the parser", "CI pipeline failing on main",
)


# ------------------------------------------------------------------------------------------ queries


def make_queries(identifiers: list[str], n: int = 200, seed: int = 3) -> list[tuple[str, str]]:
    """(kind, query): ~55% Korean KorQuAD questions, 20% English, 15% identifiers, 10% mixed."""
    rng = random.Random(seed)
    _, questions = scale_corpus.load_korquad()
    units = [("korean", q) for q, _ in rng.sample(questions, int(n * 0.55))]
    fixture_user = scale_corpus.load_units().fixture_user
    english = [("english", q) for q in ENGLISH_QUERIES]
    english += [("english", " ".join(t.split()[:8])) for t in rng.sample(fixture_user, min(20, len(fixture_user)))]
    idents = rng.sample(identifiers, min(len(identifiers), int(n * 0.15)))
    mixed = [("mixed", f"{i} 에러 원인이 뭐였지") for i in rng.sample(identifiers, min(len(identifiers), int(n * 0.1)))]
    out = units + english[: int(n * 0.2)] + [("identifier", i) for i in idents] + mixed
    rng.shuffle(out)
    return out[:n]


# ------------------------------------------------------------------------------------------ helpers


def run_measured(cmd: list[str], env: dict[str, str], cwd: str | None = None,
                 detail: dict | None = None) -> tuple[float, float, int, str, float]:
    """(wall s, peak RSS MB of the process and all it starts, exit code, stdout, CPU s) of one child process.
    CPU time is reported next to wall time because the 2 cores are shared: wall time includes waiting for them."""
    return run_tree_measured(cmd, env, cwd, detail=detail)


def tree_mb(path: Path) -> float:
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            p = Path(dirpath) / name
            if p.is_file() and not p.is_symlink():
                total += p.stat().st_size
    return total / 1e6


def disk_sizes(home: Path) -> dict[str, float]:
    sqlite = sum(p.stat().st_size for p in home.glob("wwt.sqlite3*")) / 1e6
    return {
        "sqlite": sqlite,
        "lexical (tantivy)": tree_mb(home / "index" / "lexical"),
        "vectors (hnswlib)": tree_mb(home / "index" / "vectors"),
        "total": tree_mb(home),
    }


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def wwt_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["WWT_HOME"] = str(home)
    return env


# ------------------------------------------------------------------------------------------ warm (worker)


def warm_worker(home: Path, queries_file: Path) -> dict:
    """Runs in a fresh process: open Memory, search every query under each filter set, report latencies."""
    import wwt.embedder
    from wwt.models import Filters
    from wwt.service import Memory

    # Every filter set re-runs the same queries: with the embedder's query memory they would skip the
    # model after the first set. Off here, so each timed search embeds its query like a new question.
    wwt.embedder.QUERY_CACHE_SIZE = 0
    spec = json.loads(queries_file.read_text())
    queries = [q for _, q in spec["queries"]]
    memory = Memory(home)
    t0, c0 = time.perf_counter(), time.process_time()
    memory.search(queries[0], Filters(), 10)  # first search loads store, indexes, model
    first_s, first_cpu = time.perf_counter() - t0, time.process_time() - c0
    memory.search("한국어 질문 하나", Filters(), 10)  # make sure Kiwi is loaded before timing
    rss_after_first = tree_rss_mb(os.getpid())
    embedder = memory._get_embedder()
    embed_ms = []
    for q in queries[:50]:
        t = time.perf_counter()
        embedder.embed_queries([q])
        embed_ms.append((time.perf_counter() - t) * 1000)
    out: dict = {"first_search_s": first_s, "first_search_cpu_s": first_cpu, "rss_after_first_mb": rss_after_first,
                 "embed_query_p50_ms": statistics.median(embed_ms), "runs": {}}
    for label, raw, n in spec["filter_sets"]:
        filters = Filters(**raw)
        times, cpus, hits = [], [], 0
        for q in queries[:n]:
            t, c = time.perf_counter(), time.process_time()
            res = memory.search(q, filters, 10)
            times.append((time.perf_counter() - t) * 1000)
            cpus.append((time.process_time() - c) * 1000)
            hits += bool(res)
        allowed = memory._open_store().chunk_ids_matching(filters)
        out["runs"][label] = {"n": len(times), "p50": statistics.median(times), "p95": pct(times, 0.95),
                              "cpu_p50": statistics.median(cpus), "cpu_p95": pct(cpus, 0.95),
                              "max": max(times), "with_hits": hits,
                              "scope_chunks": None if allowed is None else len(allowed)}
    by_kind: dict[str, list[float]] = {}
    for kind, q in spec["queries"][:120]:
        t = time.perf_counter()
        memory.search(q, Filters(), 10)
        by_kind.setdefault(kind, []).append((time.perf_counter() - t) * 1000)
    out["by_kind_p50"] = {k: statistics.median(v) for k, v in by_kind.items()}
    memory.close()
    return out


def project_sizes(home: Path) -> list[tuple[str, int]]:
    """(project, sessions), largest first."""
    import sqlite3

    conn = sqlite3.connect(f"file:{home / 'wwt.sqlite3'}?mode=ro", uri=True)
    try:
        return conn.execute(
            "SELECT project, COUNT(*) FROM sessions WHERE project IS NOT NULL GROUP BY project ORDER BY 2 DESC"
        ).fetchall()
    finally:
        conn.close()


def warm(home: Path, queries: list[tuple[str, str]], log) -> dict:
    sizes = project_sizes(home)
    spec = {
        "queries": queries,
        "filter_sets": [
            ("no filter", {}, len(queries)),
            (f"project={sizes[0][0]} (largest)", {"project": sizes[0][0]}, 60),
            (f"project={sizes[-1][0]} (smallest)", {"project": sizes[-1][0]}, 60),
            ("platform=codex-cli", {"platform": "codex-cli"}, 60),
            ("branch=feature/login", {"git_branch": "feature/login"}, 60),
            ("since 2026-09-01", {"since": "2026-09-01T00:00:00Z"}, 60),
        ],
    }
    qfile = WORK / "scale" / "queries.json"
    qfile.write_text(json.dumps(spec, ensure_ascii=False))
    detail: dict = {}
    wall, rss, code, out, _ = run_measured(
        [PYTHON, str(Path(__file__)), "--warm-worker", str(home), str(qfile)], wwt_env(home), detail=detail
    )
    if code != 0:
        raise SystemExit(f"warm worker failed:\n{out[-3000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    result["worker_wall_s"] = wall
    result["peak_rss_mb"] = rss
    result["peak_rss_alone_mb"] = detail["root_peak_mb"]
    log(f"warm: {json.dumps(result)[:600]}")
    return result


# ------------------------------------------------------------------------------------------ cold


def cold_ours(home: Path, queries: list[str], log) -> list[tuple[float, float, float, float, int]]:
    runs = []
    for q in queries:
        detail: dict = {}
        wall, rss, code, out, cpu = run_measured([PYTHON, "-m", "wwt", "search", q, "--all"], wwt_env(home),
                                                 cwd="/tmp", detail=detail)
        if code != 0:
            raise SystemExit(f"wwt search failed ({code}):\n{out[-2000:]}")
        runs.append((wall, rss, cpu, detail["root_peak_mb"], detail["processes"]))
        log(f"  cold ours {wall:.2f}s (cpu {cpu:.2f}s) {rss:.0f}MB (alone {detail['root_peak_mb']:.0f}MB, "
            f"{detail['processes']} processes)  {q!r}")
    return runs


def profile_cold(home: Path, query: str) -> dict:
    """Where a cold search's time goes: top imports (-X importtime) and top cumulative functions (cProfile)."""
    env = wwt_env(home)
    proc = subprocess.run([PYTHON, "-X", "importtime", "-m", "wwt", "search", query, "--all"], env=env,
                          capture_output=True, text=True, cwd="/tmp")
    imports = []
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            parts = [p.strip() for p in line[len("import time:"):].split("|")]
            if parts[0].isdigit():
                imports.append((int(parts[1]) / 1e6, parts[2].strip()))
    top_level = sorted((i for i in imports if not i[1].startswith((" ", "\t")) or True), reverse=True)
    prof_out = WORK / "scale" / "cold.prof"
    subprocess.run([PYTHON, "-m", "cProfile", "-o", str(prof_out), "-m", "wwt", "search", query, "--all"],
                   env=env, capture_output=True, cwd="/tmp")
    import pstats
    from io import StringIO

    buf = StringIO()
    pstats.Stats(str(prof_out), stream=buf).sort_stats("cumulative").print_stats(25)
    text = buf.getvalue().replace(str(ROOT) + "/", "").replace(str(WORK) + "/", ".work/")
    return {"imports": [(round(s, 3), n) for s, n in top_level[:12]], "cprofile": _site_relative(text)}


def _site_relative(text: str) -> str:
    """Profile lines name files relative to the checkout or site-packages, not one machine's paths."""
    return re.sub(r"/\S*/site-packages/", "site-packages/", text)


# ------------------------------------------------------------------------------------------ original tool


def orig_env(home: Path) -> dict[str, str]:
    """Run the PyPI original offline: HOME → its data dir, a hub-cache layout of intfloat/multilingual-e5-small
    pointing at the offline fp32 export, and a sitecustomize that drops the token_type_ids feed the export
    does not declare (the hub's export has it)."""
    rev = "0000000000000000000000000000000000e5e5e5"
    repo = ORIG_HF / "hub" / "models--intfloat--multilingual-e5-small"
    snap = repo / "snapshots" / rev
    (snap / "onnx").mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(rev)
    for src, dst in ((FP32_DIR / "fp32" / "model.onnx", snap / "onnx" / "model.onnx"),
                     (FP32_DIR / "hf" / "tokenizer.json", snap / "tokenizer.json"),
                     (FP32_DIR / "hf" / "tokenizer_config.json", snap / "tokenizer_config.json")):
        if not dst.exists():
            dst.symlink_to(src)
    ORIG_SHIM.mkdir(parents=True, exist_ok=True)
    (ORIG_SHIM / "sitecustomize.py").write_text(
        "import onnxruntime as _ort\n_run = _ort.InferenceSession.run\n"
        "def _run_known(self, output_names, input_feed, *a, **k):\n"
        "    names = {i.name for i in self.get_inputs()}\n"
        "    return _run(self, output_names, {n: v for n, v in input_feed.items() if n in names}, *a, **k)\n"
        "_ort.InferenceSession.run = _run_known\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("WWT_")}
    env.update(HOME=str(home), HF_HOME=str(ORIG_HF), HF_HUB_OFFLINE="1", PYTHONPATH=str(ORIG_SHIM), COLUMNS="200")
    return env


def original_side_by_side(small_corpus: Path, small_home: Path, queries: list[str], log) -> dict:
    wwt_bin = ORIG_VENV / "bin" / "wwt"
    if not wwt_bin.exists():
        return {"error": f"{wwt_bin} missing (pip install whatwasthat into {ORIG_VENV})"}
    version = subprocess.run([str(ORIG_VENV / "bin" / "python"), "-c",
                              "import importlib.metadata as m; print(m.version('whatwasthat'))"],
                             capture_output=True, text=True, cwd="/tmp").stdout.strip()
    home = WORK / "scale" / "orig-home"
    env = orig_env(home)
    marker = home / "ingested.json"
    if not marker.exists() or json.loads(marker.read_text()).get("corpus") != str(small_corpus):
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        wall, rss, code, out, _ = run_measured([str(wwt_bin), "ingest", str(small_corpus)], env, cwd="/tmp")
        if code != 0:
            return {"error": f"original ingest failed: {out.strip().splitlines()[-1] if out.strip() else code}"}
        marker.write_text(json.dumps({"corpus": str(small_corpus), "ingest_s": wall, "ingest_rss_mb": rss,
                                      "out": out.strip().splitlines()[-1]}))
    info = json.loads(marker.read_text())
    rows = []
    for q in queries:
        o_wall, o_rss, o_code, o_out, o_cpu = run_measured([str(wwt_bin), "search", q, "--all"], env, cwd="/tmp")
        w_wall, w_rss, w_code, _, w_cpu = run_measured([PYTHON, "-m", "wwt", "search", q, "--all"],
                                                       wwt_env(small_home), cwd="/tmp")
        if o_code != 0:
            return {"error": f"original search failed: {o_out.strip().splitlines()[-1]}", "version": version}
        rows.append((o_wall, o_rss, w_wall, w_rss, o_cpu, w_cpu))
        log(f"  small corpus: original {o_wall:.2f}s/{o_cpu:.2f}cpu {o_rss:.0f}MB | "
            f"wwt {w_wall:.2f}s/{w_cpu:.2f}cpu {w_rss:.0f}MB  {q!r}")
    return {"version": version, "ingest_s": info["ingest_s"], "ingest_rss_mb": info["ingest_rss_mb"],
            "ingest_out": info["out"], "rows": rows}


# ------------------------------------------------------------------------------------------ report


def markdown(facts: dict, command: str) -> str:
    b, w, cold, small = facts["build"], facts["warm"], facts["cold"], facts.get("small", {})
    st = b["store"]
    s = st["summary"]
    lines = [
        f"## Scale — {b['vectors']['chunks']:,} chunks ({datetime.now(timezone.utc):%Y-%m-%d})",
        "",
        f"Command: `{command}` (2 CPU cores shared with other jobs — load average {facts['load']} at the start, "
        f"{facts.get('load_end', '?')} at the end; Python "
        f"{sys.version.split()[0]}).",
        "",
        "Corpus (benchmarks/scale_corpus.py): synthetic Claude Code / Codex / Gemini JSONL in the real fixtures' "
        f"shapes — {b['generate']['sessions']:,} sessions, {b['generate']['log_bytes'] / 1e6:.0f} MB of logs, "
        f"{b['vectors']['messages']:,} messages, 12 projects, 8 branches, dates over one year; turn text = KorQuAD "
        "dev questions/paragraph excerpts + real fixture texts, tool calls/results and rare identifiers. Chunks "
        "come from the real parsers + chunker and the store from the real `Memory.ingest` (SQLite + tantivy + "
        "hnswlib). **Not real:** chunk vectors — each is the normalised mean of the real e5 vectors of the "
        "KorQuAD paragraphs / fixture texts its turns were drawn from, plus noise (σ=0.01/dim), pre-seeded in "
        "the store's embedding cache by `Store.put_vectors` under each chunk's real `embed_hash`; ingest called "
        f"the model {st['guard_embedded']} times. **Build shim:** the lexical index was fed by a per-line memo "
        "of the real `wwt.lexical.tokenize_many` (each distinct line tokenized once: "
        f"{st.get('tokenized_lines', 0):,} lines tokenized, {st.get('memo_hits', 0):,} reused), because Kiwi "
        "runs at ~15–30k chars/s of CPU here (see the real-path row). Query vectors and query tokens are real.",
        "",
        f"| build ({b['vectors']['chunks']:,}-chunk store) | value |",
        "|---|---|",
        f"| parse + chunk + vectors (outside ingest) | {b['vectors']['seconds']:.0f} s |",
        f"| `Memory.ingest` (parse, SQLite, chunk, tantivy, hnswlib) | {st['ingest_s']:.0f} s = "
        f"{s['chunks_added'] / st['ingest_s']:.0f} chunks/s (of it tokenizing: {st.get('tokenize_s', 0):.0f} s) |",
    ]
    if "real_path" in facts:
        rp = facts["real_path"]
        lines.append(
            f"| real path, small corpus ({rp['chunks']} chunks, real tokenizer) | {rp['real_s']:.1f} s = "
            f"{rp['chunks'] / rp['real_s']:.1f} chunks/s vs {rp['chunks'] / rp['memo_s']:.1f} with the shim "
            f"(shim/real speed {rp['real_s'] / rp['memo_s']:.1f}x) → 100k chunks at the real rate ≈ "
            f"{100_000 / (rp['chunks'] / rp['real_s']) / 3600:.1f} h |"
        )
    for name, mb in facts["disk"].items():
        lines.append(f"| disk: {name} | {mb:,.0f} MB |")
    lines += [
        "",
        f"Warm search (`Memory.search`, limit 10, one process; first search {w['first_search_s']:.1f} s incl. "
        f"loading; query embedding alone p50 {w['embed_query_p50_ms']:.1f} ms). Target p50 ≤ 30 ms.",
        "",
        "| filter | scope (chunks) | queries | p50 ms | p95 ms | max ms | CPU p50 ms | CPU p95 ms | p50 / target |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, r in w["runs"].items():
        scope = "all" if r["scope_chunks"] is None else f"{r['scope_chunks']:,}"
        lines.append(f"| {label} | {scope} | {r['n']} | {r['p50']:.1f} | {r['p95']:.1f} | {r['max']:.0f} | "
                     f"{r['cpu_p50']:.1f} | {r['cpu_p95']:.1f} | {r['p50'] / TARGET_WARM_P50_MS:.2f}x |")
    kinds = ", ".join(f"{k} {v:.1f} ms" for k, v in sorted(w["by_kind_p50"].items()))
    lines += [
        "",
        f"p50 by query kind (no filter): {kinds}.",
        "",
        "| process | value | target | value / target |",
        "|---|---|---|---|",
        f"| warm search process peak RSS (with its child processes; alone) | {w['peak_rss_mb']:.0f} MB "
        f"({w.get('peak_rss_alone_mb', w['peak_rss_mb']):.0f}) | ≤ 800 MB | {w['peak_rss_mb'] / TARGET_RSS_MB:.2f}x |",
    ]
    walls = [c[0] for c in cold]
    rsss = [c[1] for c in cold]
    cpus = [c[2] for c in cold]
    lines += [
        f"| cold `python -m wwt search … --all`, median of {len(cold)} | {statistics.median(walls):.2f} s "
        f"(min {min(walls):.2f}, max {max(walls):.2f}) | ≤ 2.5 s | {statistics.median(walls) / TARGET_COLD_S:.2f}x |",
        f"| same, CPU time (user+sys) median | {statistics.median(cpus):.2f} s (min {min(cpus):.2f}, "
        f"max {max(cpus):.2f}) | ≤ 2.5 s | {statistics.median(cpus) / TARGET_COLD_S:.2f}x |",
        f"| cold search peak RSS, max of {len(cold)}: process + Kiwi helper summed (process alone) | "
        f"{max(rsss):.0f} MB ({max(c[3] for c in cold):.0f}) | ≤ 800 MB | {max(rsss) / TARGET_RSS_MB:.2f}x |",
    ]
    if small:
        lines += ["", "Side by side on a small corpus (same generator, "
                  f"{facts['small_chunks']} wwt chunks), cold `search … --all` as fresh processes:", ""]
        if "error" in small:
            lines.append(f"Original tool: could not run — {small['error']}.")
        else:
            rows = small["rows"]
            o_wall = statistics.median(r[0] for r in rows)
            w_wall = statistics.median(r[2] for r in rows)
            o_cpu = statistics.median(r[4] for r in rows)
            w_cpu = statistics.median(r[5] for r in rows)
            o_rss = max(r[1] for r in rows)
            w_rss = max(r[3] for r in rows)
            lines += [
                f"| tool | cold search wall, median of {len(rows)} | CPU s, median | peak RSS |",
                "|---|---|---|---|",
                f"| original `whatwasthat=={small['version']}` (PyPI; onnxruntime fp32 + chromadb + rank-bm25) | "
                f"{o_wall:.2f} s | {o_cpu:.2f} s | {o_rss:.0f} MB |",
                f"| wwt | {w_wall:.2f} s | {w_cpu:.2f} s | {w_rss:.0f} MB |",
                f"| ratio wwt / original | {w_wall / o_wall:.2f}x | {w_cpu / o_cpu:.2f}x | {w_rss / o_rss:.2f}x |",
                "",
                f"Original ingest of that corpus (embeds at ingest, 512-token padding): {small['ingest_s']:.0f} s"
                + (f", {small['ingest_rss_mb']:.0f} MB" if small.get("ingest_rss_mb") else "")
                + f" ({small['ingest_out']}).",
            ]
    if facts.get("profile"):
        p = facts["profile"]
        lines += ["", "Cold-search profile (one run): slowest imports (cumulative s): "
                  + ", ".join(f"{n} {s:.2f}" for s, n in p["imports"][:8]) + ".", "",
                  "```", *[ln for ln in p["cprofile"].splitlines() if ln.strip()][:32], "```"]
    if facts.get("notes"):
        lines += ["", *facts["notes"]]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ main


def main(argv: list[str] | None = None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--warm-worker":
        print(json.dumps(warm_worker(Path(sys.argv[2]), Path(sys.argv[3]))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--small-chunks", type=int, default=300, help="corpus for the original side by side")
    parser.add_argument("--real-path-chunks", type=int, default=2000, help="corpus for real vs shim tokenizer")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--no-original", action="store_true")
    parser.add_argument("--cold-runs", type=int, default=5)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--record", action="store_true",
                        help="write its section into benchmarks/RESULTS.md (key scale, or scale-N for --chunks N)")
    args = parser.parse_args(argv)
    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    started = time.perf_counter()
    facts: dict = {"load": load_average()}
    root = WORK / "scale" / ("100k" if args.chunks == 100_000 else f"{args.chunks}")
    build = scale_corpus.build(args.chunks, root, args.rebuild, log=log)
    facts["build"] = build
    home = Path(build["home"]).resolve()
    facts["disk"] = disk_sizes(home)
    log(f"disk: {facts['disk']}")

    # real tokenizer vs shim on a small corpus: what the shim saved
    n = args.real_path_chunks
    path_real = scale_corpus.build(n, WORK / "scale" / f"real{n}", args.rebuild, memo_tokenizer=False, log=log)
    path_memo = scale_corpus.build(n, WORK / "scale" / f"real{n}-memo", args.rebuild, memo_tokenizer=True, log=log)
    facts["real_path"] = {"chunks": path_real["store"]["summary"]["chunks_added"],
                          "real_s": path_real["store"]["ingest_s"], "memo_s": path_memo["store"]["ingest_s"]}
    small_root = WORK / "scale" / f"small{args.small_chunks}"
    small_real = scale_corpus.build(args.small_chunks, small_root, args.rebuild, memo_tokenizer=False, log=log)
    facts["small_chunks"] = small_real["store"]["summary"]["chunks_added"]

    identifiers = build["generate"]["identifiers"]
    queries = make_queries(identifiers, args.queries)
    counts: dict[str, int] = {}
    for kind, _ in queries:
        counts[kind] = counts.get(kind, 0) + 1
    log(f"{len(queries)} queries: {counts}")
    facts["warm"] = warm(home, queries, log)

    cold_queries = ["데이터베이스 마이그레이션 롤백", identifiers[7], "how did we fix the failing test",
                    queries[0][1], "서버가 시작되지 않아요", "rate limit exceeded", "ScaleWidget 리팩터링"]
    facts["cold"] = cold_ours(home, cold_queries[: args.cold_runs], log)
    if statistics.median(c[0] for c in facts["cold"]) > TARGET_COLD_S or \
            max(c[1] for c in facts["cold"]) > TARGET_RSS_MB:
        facts["profile"] = profile_cold(home, cold_queries[0])

    if not args.no_original:
        small_corpus = Path(small_real["corpus"]).resolve()
        facts["small"] = original_side_by_side(small_corpus, Path(small_real["home"]).resolve(), cold_queries[:3], log)
    facts["notes"] = [f"Whole run: {time.perf_counter() - started:.0f} s (cached corpus/store reused when present)."]
    facts["load_end"] = load_average()
    command = "WWT_MODEL_DIR=<model folder> python benchmarks/scale.py " + " ".join(
        sys.argv[1:] if argv is None else argv)
    text = markdown(facts, command.strip())
    print(text)
    (WORK / "scale" / "last-facts.json").write_text(json.dumps(facts, indent=1, default=str, ensure_ascii=False))
    if args.record:
        replace_section("scale" if args.chunks == 100_000 else f"scale-{args.chunks}", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
