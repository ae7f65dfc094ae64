"""``benchmarks/ingest.py --two-phase``: a first setup of a big history through the real CLI (issue 14).

Side by side in one run: ``wwt ingest`` (phase 1 archive + lexical index, phase 2 vector back-fill) while
``wwt search`` runs again and again beside it; a SIGKILL of the ingest mid-way and a second ``wwt ingest`` that
must resume; then the back-fill's embedder configurations timed interleaved on the archive's real passages."""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _shared import replace_section


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "WWT_HOME": str(home), "NO_COLOR": "1", "COLUMNS": "160"}


def _progress(db: Path) -> tuple[int, int]:
    """(chunks with a vector, chunks), read in one statement so both counts are of the same moment."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            total, pending = conn.execute(
                "SELECT (SELECT COUNT(*) FROM chunks), (SELECT COUNT(*) FROM chunks c WHERE NOT EXISTS "
                "(SELECT 1 FROM embeddings e WHERE e.text_hash=c.embed_hash))"
            ).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return 0, 0
    return total - pending, total


SEARCH_GAP_S = 1.0  # a person (or an agent) searching, not a load generator: the engine would answer ~10/s
COLD_EVERY = 5  # every 5th search runs in-process (WWT_ENGINE=off): a one-shot search works during the run too


def watch(home: Path, logs: Path, query: str, kill_after: list[float], max_seconds: float) -> dict[str, Any]:
    """Run the ingest (SIGKILLed at each ``kill_after`` time, run again each time) while searching beside it."""
    db = home / "wwt.sqlite3"
    cmd = [sys.executable, "-m", "wwt", "ingest", str(logs)]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, env=_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    searches: list[dict[str, Any]] = []
    first_answer: float | None = None
    kills: list[tuple[float, int, int]] = []
    pending_kills = sorted(kill_after)
    while time.monotonic() - started < max_seconds:
        if proc.poll() is not None:
            if proc.returncode != 0 and proc.returncode != -signal.SIGKILL:
                raise SystemExit(f"wwt ingest failed: {proc.stderr.read()[-500:]}")
            if proc.returncode == -signal.SIGKILL:  # killed by us: the next run must resume
                proc = subprocess.Popen(cmd, env=_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)
                continue
            break
        if pending_kills and time.monotonic() - started >= pending_kills[0]:
            pending_kills.pop(0)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills.append((time.monotonic() - started, *_progress(db)))
            continue
        if not db.exists():
            time.sleep(0.5)
            continue
        cold = len(searches) % COLD_EVERY == COLD_EVERY - 1
        env = {**_env(home), "WWT_ENGINE": "off"} if cold else _env(home)
        t0 = time.monotonic()
        out = subprocess.run([sys.executable, "-m", "wwt", "search", query, "--all", "--json"], env=env,
                             capture_output=True, text=True, timeout=300)
        done, total = _progress(db)
        hits = 0
        if out.returncode == 0:
            try:
                hits = len(json.loads(out.stdout).get("results", json.loads(out.stdout)) or [])
            except (ValueError, AttributeError, TypeError):
                hits = 1 if out.stdout.strip() else 0
        searches.append({"at": round(t0 - started, 1), "rc": out.returncode, "hits": hits, "cold": cold,
                         "seconds": round(time.monotonic() - t0, 2), "vectors": f"{done}/{total}",
                         "error": out.stderr.strip()[-160:] if out.returncode not in (0, 1) else ""})
        if first_answer is None and hits:
            first_answer = time.monotonic() - t0 + (t0 - started)  # answered at the end of that search
        time.sleep(SEARCH_GAP_S)
    finished = proc.poll() is not None
    if not finished:  # the watch is over: a last kill, mid back-fill
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills.append((time.monotonic() - started, *_progress(db)))
    return {"searches": searches, "first_answer_s": first_answer, "kills": kills, "finished": finished,
            "seconds": time.monotonic() - started, "second_run_stdout": proc.stdout.read() if finished else ""}


def resume_paused(home: Path, logs: Path) -> dict[str, Any]:
    """After a last kill mid back-fill: ``wwt ingest --pause`` then ``wwt ingest`` — the next run must find
    everything archived (no file re-parsed), mend the indexes and leave the rest of the vectors pending."""
    subprocess.run([sys.executable, "-m", "wwt", "ingest", "--pause"], env=_env(home), capture_output=True,
                   check=True, timeout=120)
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "wwt", "ingest", str(logs), "--json"], env=_env(home),
                         capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise SystemExit(f"resumed wwt ingest failed: {out.stderr[-500:]}")
    summary = json.loads(out.stdout)
    return {"seconds": time.monotonic() - t0, **{k: summary.get(k) for k in (
        "files_parsed", "files_skipped", "chunks_added", "chunks_embedded", "vectors_pending", "index_repair")}}


def phase1_end(searches: list[dict[str, Any]], chunks: int) -> float | None:
    """When the first search saw every chunk archived (phase 1 over), from the searches' progress column."""
    for s in searches:
        if int(s["vectors"].split("/")[1]) >= chunks:
            return s["at"]
    return None


def consistency(home: Path) -> dict[str, Any]:
    from wwt.indexes import Indexes
    from wwt.store import Store

    with Store.open(home / "wwt.sqlite3") as store:
        indexes = Indexes.open(home / "index")
        try:
            agree = indexes.verify_against(store) and not indexes.broken
        finally:
            indexes.close()
        distinct = store.conn.execute("SELECT COUNT(DISTINCT embed_hash) FROM chunks").fetchone()[0]
        stored = store.conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
        done, total = store.vector_progress()
    return {"agree": agree, "distinct_texts": distinct, "vectors_stored": stored, "with_vector": done,
            "chunks": total}


def _passage_session(today: Any, level: str, disabled: tuple[str, ...], config: dict[str, str] | None = None) -> Any:
    """An Embedder like ``today`` whose ONNX session has other graph options or session config entries (what
    a separate passage session for the back-fill would use)."""
    import onnxruntime as ort

    from wwt.embedder import Embedder, session_options

    e = Embedder(today.info, today.threads)
    opts = session_options(today.threads)
    opts.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    for key, value in (config or {}).items():
        opts.add_session_config_entry(key, value)
    e._session = ort.InferenceSession(str(today.info.model_path), sess_options=opts,
                                      providers=["CPUExecutionProvider"], disabled_optimizers=list(disabled))
    return e


TODAY_DISABLED = ("SkipLayerNormFusion",)
PASSAGE_SESSIONS: dict[str, tuple[str, tuple[str, ...], dict[str, str]]] = {
    # name: (graph optimization level, fusions left out, session config entries)
    "control: a second session with today's options (the noise floor)": ("ORT_ENABLE_ALL", TODAY_DISABLED, {}),
    "all fusions (SkipLayerNormFusion on), ORT_ENABLE_ALL": ("ORT_ENABLE_ALL", (), {}),
    "all fusions, ORT_ENABLE_EXTENDED": ("ORT_ENABLE_EXTENDED", (), {}),
    "ORT_ENABLE_BASIC (no transformer fusions: what they are worth)": ("ORT_ENABLE_BASIC", (), {}),
    "today's fusions, spinning threads": ("ORT_ENABLE_ALL", TODAY_DISABLED,
                                          {"session.intra_op.allow_spinning": "1"}),
    "today's fusions, denormals as zero": ("ORT_ENABLE_ALL", TODAY_DISABLED, {"session.set_denormal_as_zero": "1"}),
}


def embedder_configs(home: Path, rounds: int = 4, sample: int = 12) -> tuple[list[str], str]:
    """Passages/s of the back-fill's embedder configurations, interleaved on real passages, with the cosine to
    today's vectors (one passage per call, WWT_THREADS/min(4, cores) threads): today's session, and separate
    passage sessions with other graph optimizations; plus the share of tokenization and the RSS a second
    session costs."""

    from wwt.embedder import default_threads, load_embedder

    with sqlite3.connect(home / "wwt.sqlite3") as conn:
        texts = [r[0] for r in conn.execute("SELECT DISTINCT embed_text FROM chunks ORDER BY id DESC LIMIT ?",
                                            (sample * 8,))]
    today = load_embedder()
    texts = [t for t in texts if len(today.token_windows(t, today.passage_prefix)[0]) >= 200][:sample]
    tokens = [sum(len(w) for w in today.token_windows(t, today.passage_prefix)) for t in texts]
    ref = today.embed_passages(texts)
    configs: dict[str, Any] = {
        f"today: 1 session × {default_threads()} threads, one passage a call": today.embed_passages,
    }
    for name, (level, disabled, config) in PASSAGE_SESSIONS.items():
        configs[name] = _passage_session(today, level, disabled, config).embed_passages
    names = list(configs)
    for name in names:  # a session's first runs allocate and pre-pack: not timed
        configs[name](texts[:2])
    seconds = dict.fromkeys(names, 0.0)
    cosines = dict.fromkeys(names, 1.0)
    for r in range(rounds):  # passage by passage, every configuration in turn, the order rotated each time
        for i, text in enumerate(texts):
            k = (r * len(texts) + i) % len(names)
            for name in names[k:] + names[:k]:
                t0 = time.perf_counter()
                vector = configs[name]([text])[0]
                seconds[name] += time.perf_counter() - t0
                cosines[name] = min(cosines[name], float(vector @ ref[i]))
    t0 = time.perf_counter()
    for _ in range(rounds):
        today._content_ids(texts)
    tokenize_s = (time.perf_counter() - t0) / rounds / len(texts)
    rate = {name: rounds * len(texts) / seconds[name] for name in names}
    base = rate[names[0]]
    rows = [f"| {name} | {rate[name]:.2f} | {rate[name] / base:.2f}× | {cosines[name]:.5f} |" for name in names]
    head = (f"{len(texts)} real passages of the archive (mean {statistics.mean(tokens):.0f} tokens, one window "
            f"each: no padding, the attention mask is all ones), {rounds} rounds, passage by passage with every "
            "configuration in turn (order rotated each time), passages/s over the whole run; every row after the "
            "first is a separate passage session:")
    tail = (f"Tokenization (sentencepiece, NFC): {tokenize_s * 1e3:.2f} ms a passage = "
            f"{tokenize_s * base:.1%} of today's time per passage. {_second_session_rss()}")
    return [head, "", "| configuration | passages/s | vs today | min cosine to today |", "|---|---|---|---|",
            *rows, "", tail], _op_profile(today, texts[:8])


def _second_session_rss() -> str:
    """RSS of a fresh process (its tree: it starts no other) with today's embedder loaded and one passage
    embedded, then with a second (all-fusions) passage session opened and used."""
    here = str(Path(__file__).parent)
    code = (
        f"import os, sys; sys.path.insert(0, {here!r})\n"
        "from _shared import tree_rss_mb\n"
        "from wwt.embedder import load_embedder\n"
        "from ingest_two_phase import _passage_session\n"
        "e = load_embedder(); e.embed_passages(['warm up ' * 200])\n"
        "a = tree_rss_mb(os.getpid())\n"
        "p = _passage_session(e, 'ORT_ENABLE_ALL', ()); p.embed_passages(['warm up ' * 200])\n"
        "b = tree_rss_mb(os.getpid())\n"
        "print(f'{a:.0f} {b:.0f}')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    try:
        one, two = (float(x) for x in out.stdout.split())
    except ValueError:
        return f"(second-session RSS not measured: {out.stderr.strip()[-160:]})"
    return (f"Memory (process tree, one process): today's embedder loaded and used {one:.0f} MB; with a second, "
            f"all-fusions passage session opened and used {two:.0f} MB (+{two - one:.0f} MB).")


def _op_kind(args: dict[str, Any]) -> str:
    """The operator, with the two kinds of Add and MatMul told apart by their input shapes."""
    op = args["op_name"]
    shapes = [next(iter(d.values())) for d in args.get("input_type_shape", []) if isinstance(d, dict) and d]
    first = shapes[0] if shapes else []
    if op == "Add" and len(first) == 4:
        return "Add: attention mask onto the scores [1, 12, L, L]"
    if op == "MatMul" and len(first) == 4:
        return "MatMul: attention probabilities × V (fp32)"
    if op == "MatMul" and first and first[-1] == 1536:
        return "MatMul: FFN output, kept fp32 by the offline build"
    return op


def _op_profile(today: Any, texts: list[str]) -> str:
    """Where one passage's time goes by operator type (onnxruntime's profiler, 1 thread)."""
    import numpy as np
    import onnxruntime as ort

    from wwt.embedder import DISABLED_FUSIONS, session_options

    work = Path(tempfile.mkdtemp(prefix="wwt-prof-"))
    opts = session_options(1)
    opts.enable_profiling = True
    opts.profile_file_prefix = str(work / "p")
    s = ort.InferenceSession(str(today.info.model_path), sess_options=opts, providers=["CPUExecutionProvider"],
                             disabled_optimizers=list(DISABLED_FUSIONS))
    names = {i.name for i in s.get_inputs()}
    for t in texts:
        ids = np.array([today.token_windows(t, today.passage_prefix)[0]], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        s.run(None, {k: v for k, v in feed.items() if k in names})
    trace = Path(s.end_profiling())
    total: dict[str, float] = {}
    calls: dict[str, int] = {}
    for e in json.loads(trace.read_text()):
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
            op = _op_kind(e["args"])
            total[op] = total.get(op, 0.0) + e["dur"]
            calls[op] = calls.get(op, 0) + 1
    shutil.rmtree(work, ignore_errors=True)
    whole = sum(total.values()) or 1.0
    rows = [f"| {op} | {calls[op] / len(texts):.0f} | {us / len(texts) / 1e3:.1f} | {us / whole:.0%} |"
            for op, us in sorted(total.items(), key=lambda kv: -kv[1]) if us / whole >= 0.01]
    return ("| operator | calls/passage | ms/passage | share |\n|---|---|---|---|\n" + "\n".join(rows)
            + f"\n\n(kernel time {whole / len(texts) / 1e3:.0f} ms/passage, 1 thread, {len(texts)} passages)")


def _median_s(searches: list[dict[str, Any]], cold: bool) -> str:
    times = [s["seconds"] for s in searches if s["cold"] == cold]
    return f"{statistics.median(times):.2f}" if times else "—"


def _sampled(rows: list[Any], n: int = 40) -> list[Any]:
    """At most ``n`` rows spread over the run (the first and the last kept)."""
    if len(rows) <= n:
        return rows
    step = (len(rows) - 1) / (n - 1)
    return [rows[round(i * step)] for i in range(n)]


def run_two_phase(args: Any, make_tree: Any) -> int:
    if not os.environ.get("WWT_MODEL_DIR"):
        print("set WWT_MODEL_DIR to the model folder (e.g. the offline build's)", file=sys.stderr)
        return 2
    kill_after = [float(x) for x in str(args.kill_after).split(",") if x.strip()]
    work = Path(tempfile.mkdtemp(prefix="wwt-bench-2phase-"))
    home, logs = work / "home", work / "logs"
    try:
        size = make_tree(logs, args.copies, args.dense_copies, args.repeats)
        files = sum(1 for p in logs.rglob("*") if p.is_file())
        seen = watch(home, logs, args.query, kill_after, args.max_seconds)
        resumed = resume_paused(home, logs) if not seen["finished"] else None
        facts = consistency(home)
        table, profile = embedder_configs(home) if not args.skip_embedder else ([], "")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    searches = seen["searches"]
    failed = [s for s in searches if s["rc"] not in (0,)]
    archived = phase1_end(searches, facts["chunks"])
    tree = f"the real fixtures × {args.copies}"
    if args.dense_copies:
        tree += (f" + their JSONL files' turn lines × {args.dense_copies}, each file's turn lines {args.repeats}× "
                 "over in one session (`turn_lines`: lines the chunks' embedded text does not need dropped)")
    command = (f"`benchmarks/ingest.py --two-phase --copies {args.copies}"
               + (f" --dense-copies {args.dense_copies} --repeats {args.repeats}" if args.dense_copies else "")
               + f" --kill-after {args.kill_after} --max-seconds {args.max_seconds:g}`")
    lines = [
        f"## First setup: two-phase ingest (issue 14, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
        "",
        f"Command: {command} ({os.cpu_count()} shared cores, load average {os.getloadavg()[0]:.1f} at the end, "
        f"Python {platform.python_version()}, model: {args.model_label}). Logs: {tree}, fresh ids "
        f"({size / 1e6:.1f} MB, {files} files, {facts['chunks']} chunks, {facts['distinct_texts']} distinct "
        "texts to embed).",
        "",
        f"- first lexical answer (`wwt search {args.query} --all` with hits) "
        f"{seen['first_answer_s']:.1f} s after `wwt ingest` started" if seen["first_answer_s"] is not None
        else "- no search answered within the run",
        f"- every chunk archived and in the lexical index (phase 1 over) by {archived:.0f} s (first search that "
        "saw them all)" if archived is not None else "- phase 1 not over within the run",
        f"- searches during the run: {len(searches)} (one a second; {sum(s['cold'] for s in searches)} of them "
        f"in-process with `WWT_ENGINE=off`, the rest through the resident engine the first one started; "
        f"median {_median_s(searches, False)} s / {_median_s(searches, True)} s), failed: {len(failed)}"
        + (f" (first failure: {failed[0]})" if failed else ""),
        *[f"- SIGKILL at {k[0]:.0f} s with {k[1]}/{k[2]} chunks embedded; the next `wwt ingest` resumed"
          for k in seen["kills"][: len(kill_after)]],
        f"- the last `wwt ingest` {'finished' if seen['finished'] else 'was SIGKILLed too'} at "
        f"{seen['seconds']:.0f} s" + (f" ({seen['kills'][-1][1]}/{seen['kills'][-1][2]} chunks embedded)"
                                      if not seen["finished"] else ""),
        (f"- then `wwt ingest --pause` and `wwt ingest` again: {resumed['seconds']:.1f} s, files parsed "
         f"{resumed['files_parsed']}, skipped {resumed['files_skipped']}, chunks added {resumed['chunks_added']}, "
         f"texts embedded {resumed['chunks_embedded']}, vectors pending {resumed['vectors_pending']}"
         if resumed else "- (no final resume needed)"),
        f"- afterwards: indexes agree with SQLite: {facts['agree']}; vectors stored {facts['vectors_stored']} for "
        f"{facts['distinct_texts']} distinct texts (the table is keyed by text hash and the back-fill only takes "
        f"texts without a row); chunks with a vector {facts['with_vector']}/{facts['chunks']}",
        "",
        f"Searches (time since start, engine or in-process, exit code, hits, seconds, chunks with a vector; {min(40, len(searches))} of "
        f"{len(searches)} shown, spread over the run):",
        "",
        "| at (s) | how | rc | hits | seconds | vectors |",
        "|---|---|---|---|---|---|",
        *[f"| {s['at']} | {'in-process' if s['cold'] else 'engine'} | {s['rc']} | {s['hits']} | {s['seconds']} | "
          f"{s['vectors']} |" for s in _sampled(searches)],
        "",
        "### Back-fill embedder configurations",
        "",
        *table,
        "",
        "Per-operator time of today's configuration:",
        "",
        profile,
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.append_results:
        replace_section("ingest-two-phase", text)
    return 0 if (not failed and facts["agree"]) else 1
