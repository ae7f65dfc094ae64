"""Stress: agents' hook events for many sessions at a burst rate (transcripts growing turn by turn, three
platforms) while 4 processes search continuously, one MCP server answers, and the background worker is
SIGKILLed at random moments. At the end nothing may be lost or out of step: every message of every transcript
archived, both indexes holding exactly SQLite's chunk ids, the same chunk keys as a clean ingest of the final
files, no duplicate chunks, the worker gone when idle. Prints the figures and writes its RESULTS.md section.
Memory: the peak of each searcher, the MCP server and the worker, each with anything it starts, summed
(``_shared.TreePeak``, sampled from this process).

Local only (subprocesses + the MCP server over stdio), bounded in time and count.

    WWT_MODEL_DIR=... python benchmarks/stress.py --seconds 60
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _shared import REAL_FIXTURES, TreePeak, load_average, replace_section  # noqa: E402  (before this folder leaves sys.path)

# this folder holds benchmarks/mcp.py, which would shadow the MCP SDK package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

REAL = REAL_FIXTURES
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
SOURCES = [  # (platform, real JSONL log, file name pattern the agent uses)
    ("claude-code", "claude-code/agentlogs__crud.jsonl", "{sid}.jsonl"),
    ("claude-code", "claude-code/spotter__short.jsonl", "{sid}.jsonl"),
    ("claude-code", "claude-code/episodic-memory__short-conversation.jsonl", "{sid}.jsonl"),
    ("claude-code", "claude-code/agentlogs__todos.jsonl", "{sid}.jsonl"),
    ("codex-cli", "codex-cli/agentlogs__crud.jsonl", "rollout-2026-01-25T10-32-00-{sid}.jsonl"),
    ("codex-cli", "codex-cli/VibeCodingTracker__codex.jsonl", "rollout-2025-09-20T08-00-00-{sid}.jsonl"),
    ("codex-cli", "codex-cli/agent-sessions__large.jsonl", "rollout-2025-09-21T08-00-00-{sid}.jsonl"),
    ("gemini-cli", "gemini-cli/VibeCodingTracker__gemini.jsonl", "session-2026-04-23T12-52-{short}.jsonl"),
    ("gemini-cli", "gemini-cli/agent-sessions__jsonl_v040.jsonl", "session-2026-04-24T12-52-{short}.jsonl"),
]
QUERIES = ["create a file JOKE.md with a random joke", "phoenix mix phx.server does not start", "go.mod toolchain 1.24",
           "Employee dataclass annual salary", "todo list", "GEMINI.md project overview", "rate limit",
           "전에 서버 시작 안 되던 거 어떻게 고쳤지?", "ERR_OSSL_EVP_UNSUPPORTED", '"unbalanced (query AND', "a:b -c ^2 ~"]

SEARCHER = """
import json, os, random, sys, time
from pathlib import Path
home, stop, ready, out, seed = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]), int(sys.argv[5])
queries, pause = json.loads(sys.argv[6]), float(sys.argv[7])
from wwt.embedder import load_embedder
from wwt.lexical import tokenize
from wwt.service import Memory, NoDataYet
load_embedder(); tokenize("warm up 준비")
ready.touch()
rng, memory, samples, errors, not_ready = random.Random(seed), Memory(home), [], [], 0
while not stop.exists():
    q = rng.choice(queries)
    t = time.time()
    try:
        memory.search(q, limit=5)
        samples.append((t, time.time() - t))
        time.sleep(pause)
    except NoDataYet:
        not_ready += 1
        time.sleep(0.2)
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}"[:300])
memory.close()
out.write_text(json.dumps({"samples": samples, "errors": errors, "not_ready": not_ready}))
"""


class Session:
    """A transcript being written turn by turn: a real log with fresh ids, appended a few lines at a time."""

    def __init__(self, platform: str, src: str, pattern: str, folder: Path) -> None:
        from wwt.parsers import parse_file

        (original,), _ = parse_file(REAL / src)
        fresh = str(uuid.uuid4())
        mapping: dict[str, str] = {original.session_id: fresh}
        text = UUID.sub(lambda m: mapping.setdefault(m.group(0), str(uuid.uuid4())), (REAL / src).read_text())
        text = text.replace(original.session_id, fresh)  # also when the agent's id is not a UUID
        self.platform = platform
        self.path = folder / pattern.format(sid=fresh, short=fresh[:8])
        self.path.write_text(text)
        (parsed,), _ = parse_file(self.path)
        self.session_id = parsed.session_id
        assert self.session_id != original.session_id, src
        self.pending = text.splitlines(keepends=True)
        self.path.write_text("")

    def grow(self, rng: random.Random) -> bool:
        if not self.pending:
            return False
        take = rng.randint(1, 3)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write("".join(self.pending[:take]))  # one write per turn, like an agent
        del self.pending[:take]
        return True


def pct(values: list[float], p: float) -> float:
    """The p-th percentile (nearest rank); 0 for no samples."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def worker_pid(home: Path) -> int | None:
    try:
        text = (home / "worker.lock").read_text().strip()
        pid = int(text)
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError):
        return None


def hook_running(home: Path) -> bool:
    from wwt.hook import worker_running

    return worker_running(home)


async def mcp_loop(env: dict, cwd: Path, stop: threading.Event, ready: threading.Event, out: dict, seed: int) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    rng = random.Random(seed)
    params = StdioServerParameters(command=sys.executable, args=["-m", "wwt", "mcp"], env=env, cwd=str(cwd))
    with open(cwd / "mcp-stderr.log", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.call_tool("search_all", {"query": "warm up"})
                out["pid"] = next((int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()
                                   and _ppid(int(p.name)) == os.getpid() and b"mcp" in _cmdline(int(p.name))), None)
                peak = TreePeak(out["pid"], 0.05).start() if out["pid"] else None
                ready.set()
                while not stop.is_set():
                    t = time.time()
                    result = await session.call_tool("search_all", {"query": rng.choice(QUERIES)})
                    text = "".join(getattr(c, "text", "") for c in result.content)
                    if result.is_error and "no data" not in text.lower():
                        out["errors"].append(text[:300])
                    elif not result.is_error:
                        out["samples"].append((t, time.time() - t))
                    await asyncio.sleep(0.2)
                out["max_rss_mb"] = peak.stop() if peak else 0.0


def _ppid(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return -1


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def run(args: argparse.Namespace) -> dict:
    rng = random.Random(args.seed)
    root = Path(tempfile.mkdtemp(prefix="wwt-stress-"))
    home, logs = root / "data", root / "agent logs"
    logs.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("WWT_DEBUG", "CLAUDE_CONFIG_DIR", "CODEX_HOME")}
    env.update(WWT_HOME=str(home), HOME=str(root), WWT_WORKER_DEBOUNCE_S=str(args.debounce),
               WWT_WORKER_IDLE_S=str(args.idle),
               # the resident engine (on by default) takes the worker's place: it holds worker.lock, so the
               # kills below hit it; it exits after the same idle period once the MCP session has left
               WWT_ENGINE=args.engine, WWT_RUNTIME_DIR=str(root / "rt"), WWT_ENGINE_IDLE_S=str(args.idle))
    os.environ.update(WWT_HOME=str(home))
    figures: dict = {"seconds": args.seconds, "rate": args.rate, "searchers": args.searchers, "kills_planned": args.kills,
                     "search_pause": args.search_pause}
    try:
        # ---- readers: N search processes + one MCP server, warmed before the clock starts
        stop_file = root / "stop"
        searchers = []
        for i in range(args.searchers):
            ready, out = root / f"ready-{i}", root / f"searcher-{i}.json"
            proc = subprocess.Popen([sys.executable, "-c", SEARCHER, str(home), str(stop_file), str(ready), str(out),
                                     str(args.seed + i), json.dumps(QUERIES), str(args.search_pause)],
                                    env=dict(env, WWT_THREADS="1"), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            searchers.append((proc, ready, out))
        searcher_peaks = [TreePeak(proc.pid, 0.05).start() for proc, _, _ in searchers]
        worker_peak = TreePeak(lambda: worker_pid(home), 0.05).start()
        mcp_stop, mcp_ready = threading.Event(), threading.Event()
        mcp_out: dict = {"samples": [], "errors": []}
        mcp_thread = threading.Thread(target=lambda: asyncio.run(
            mcp_loop(dict(env, WWT_THREADS="1"), root, mcp_stop, mcp_ready, mcp_out, args.seed)), daemon=True)
        mcp_thread.start()
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not (all(r.exists() for _, r, _ in searchers) and mcp_ready.is_set()):
            if not mcp_thread.is_alive():
                raise SystemExit("the MCP client thread died while warming up (see the traceback above)")
            for proc, _, _ in searchers:
                if proc.poll() is not None:
                    raise SystemExit(f"a searcher died while warming up: {proc.stderr.read().decode()[-800:]}")
            time.sleep(0.2)

        # ---- writers: hook events at the burst rate, worker kills at seeded random moments
        sessions: list[Session] = []
        done: list[Session] = []
        source_cycle = list(SOURCES)
        rng.shuffle(source_cycle)

        def new_session() -> Session:
            platform, src, pattern = source_cycle[len(sessions + done) % len(source_cycle)]
            return Session(platform, src, pattern, logs)

        sessions = [new_session() for _ in range(args.sessions)]
        hook_latency: list[float] = []
        hook_failures: list[str] = []

        def fire(session: Session) -> None:
            payload = json.dumps({"session_id": session.session_id, "transcript_path": str(session.path),
                                  "cwd": str(root), "hook_event_name": "Stop", "stop_hook_active": False})
            t = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "wwt", "hook", session.platform], input=payload, text=True,
                                  env=env, capture_output=True, timeout=60)
            hook_latency.append(time.perf_counter() - t)
            if proc.returncode != 0 or proc.stdout or proc.stderr:
                hook_failures.append(f"rc={proc.returncode} {proc.stderr[-200:]}")

        kill_times = sorted(rng.uniform(0.15, 0.85) * args.seconds for _ in range(args.kills))
        kills, events = 0, 0
        start = time.monotonic()
        load_window = (time.time(), None)
        with ThreadPoolExecutor(max_workers=8) as pool:
            while (now := time.monotonic() - start) < args.seconds:
                if kill_times and now >= kill_times[0]:
                    kill_times.pop(0)
                    pid = worker_pid(home)
                    if pid:
                        os.kill(pid, signal.SIGKILL)
                        kills += 1
                session = rng.choice(sessions)
                if not session.grow(rng):
                    sessions.remove(session)
                    done.append(session)
                    session = new_session()
                    sessions.append(session)
                    session.grow(rng)
                pool.submit(fire, session)
                events += 1
                time.sleep(max(0.0, start + events / args.rate - time.monotonic()))
        load_window = (load_window[0], time.time())
        figures.update(events=events, kills=kills, sessions=len(sessions) + len(done))

        # ---- quiesce: the worker drains the queue and exits by itself
        from wwt.store import Store

        drained_at = None
        deadline = time.monotonic() + args.drain_timeout
        while time.monotonic() < deadline:
            with Store.open(home / "wwt.sqlite3", readonly=True) as store:
                pending = store.queue_size()
            if pending == 0 and drained_at is None:
                drained_at = time.monotonic() - start - args.seconds
            if pending == 0 and not hook_running(home):
                break
            time.sleep(0.5)
        figures["drain_s"] = round(drained_at, 1) if drained_at is not None else None
        figures["worker_exited"] = not hook_running(home)
        worker_rss = worker_peak.stop()
        stop_file.touch()
        mcp_stop.set()
        mcp_thread.join(timeout=60)
        if args.engine != "off":  # the MCP session kept the engine busy until now: it exits after the idle time
            gone_by = time.monotonic() + args.idle + 60
            while hook_running(home) and time.monotonic() < gone_by:
                time.sleep(0.5)
            figures["worker_exited"] = not hook_running(home)
        samples, search_errors, searcher_rss = [], [], 0.0
        for (proc, _, out), peak in zip(searchers, searcher_peaks, strict=True):
            proc.wait(timeout=120)
            data = json.loads(out.read_text())
            samples += data["samples"]
            search_errors += data["errors"]
            searcher_rss = max(searcher_rss, peak.stop())
        during = [d for t, d in samples if load_window[0] <= t <= load_window[1]]
        mcp_during = [d for t, d in mcp_out["samples"] if load_window[0] <= t <= load_window[1]]
        log = (home / "ingest.log").read_text(errors="replace") if (home / "ingest.log").exists() else ""
        figures.update(
            hook_p50_ms=round(pct(hook_latency, 50) * 1000), hook_p95_ms=round(pct(hook_latency, 95) * 1000),
            hook_failures=len(hook_failures), ingests=log.count(" ingested "),
            workers_started=log.count("worker started") + log.count(" started for "),
            requeued_after_kill=log.count("re-queued"),
            ingest_errors=[ln for ln in log.splitlines() if " ERROR " in ln or "hook failed" in ln][:5],
            searches=len(samples) + len(mcp_out["samples"]), searches_during_ingest=len(during) + len(mcp_during),
            search_p50_ms=round(pct(during, 50) * 1000), search_p95_ms=round(pct(during, 95) * 1000),
            mcp_p50_ms=round(pct(mcp_during, 50) * 1000), mcp_p95_ms=round(pct(mcp_during, 95) * 1000),
            search_errors=search_errors[:5] + mcp_out["errors"][:5],
            max_rss_mb={"searcher": round(searcher_rss), "mcp": round(mcp_out.get("max_rss_mb", 0)),
                        "worker": round(worker_rss)},
        )
        figures.update(verify(home, logs, done + sessions, root))
        return figures
    finally:
        (root / "stop").touch()
        subprocess.run([sys.executable, "-m", "wwt", "engine", "stop"], env=env, capture_output=True, timeout=60)
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"kept {root}")


def verify(home: Path, logs: Path, sessions: list[Session], root: Path) -> dict:
    """Nothing lost, nothing duplicated, indexes in step, same chunks as a clean ingest of the final files."""
    from wwt.indexes import Indexes
    from wwt.parsers import parse_file
    from wwt.service import Memory
    from wwt.store import Store

    expected: dict[str, int] = {}
    for s in sessions:
        if s.path.stat().st_size == 0:
            continue
        parsed, _ = parse_file(s.path)
        for p in parsed:
            expected[p.session_id] = expected.get(p.session_id, 0) + len(p.messages)
    conn = sqlite3.connect(f"file:{home / 'wwt.sqlite3'}?mode=ro", uri=True)
    stored = dict(conn.execute("SELECT session_id, COUNT(*) FROM messages GROUP BY session_id").fetchall())
    keys = [r[0] for r in conn.execute("SELECT chunk_key FROM chunks")]
    chunked = {r[0] for r in conn.execute("SELECT DISTINCT session_id FROM chunks")}
    conn.close()
    missing = {sid: (n, stored.get(sid, 0)) for sid, n in expected.items() if stored.get(sid, 0) != n}
    with Store.open(home / "wwt.sqlite3", readonly=True) as store:
        indexes = Indexes.open(home / "index")
        agree = not indexes.broken and indexes.verify_against(store)
        indexes.close()
    clean_home = root / "clean"
    clean = Memory(clean_home)
    clean.ingest([logs])
    clean.close()
    conn = sqlite3.connect(f"file:{clean_home / 'wwt.sqlite3'}?mode=ro", uri=True)
    clean_keys = {r[0] for r in conn.execute("SELECT chunk_key FROM chunks")}
    conn.close()
    return {
        "transcripts": len(expected), "messages_expected": sum(expected.values()), "messages_stored": sum(stored.values()),
        "sessions_short": len(missing), "sessions_without_chunks": len(set(expected) - chunked),
        "indexes_agree": agree, "duplicate_chunks": len(keys) - len(set(keys)), "chunks": len(set(keys)),
        "same_chunks_as_clean_ingest": set(keys) == clean_keys,
    }


def failed_checks(f: dict) -> list[str]:
    checks = {
        "hook failures": not f["hook_failures"], "search errors": not f["search_errors"],
        "ingest errors": not f["ingest_errors"], "worker still running": f["worker_exited"],
        "messages missing or extra": not f["sessions_short"], "sessions without chunks": not f["sessions_without_chunks"],
        "indexes out of step": f["indexes_agree"], "duplicate chunks": not f["duplicate_chunks"],
        "chunks differ from a clean ingest": f["same_chunks_as_clean_ingest"],
    }
    return [name for name, good in checks.items() if not good]


def ok(f: dict) -> bool:
    return not failed_checks(f)


def report(f: dict, command: str) -> str:
    return "\n".join([
        f"## Stress: hooks + searches + MCP + worker kills ({time.strftime('%Y-%m-%d')})\n",
        f"Command: `WWT_MODEL_DIR=<model folder> {command}` (2 shared cores, load average {load_average()} at the "
        "end)\n",
        f"- load: {f['events']} hook events in {f['seconds']} s ({f['rate']}/s) over {f['sessions']} sessions "
        f"(3 platforms, real log lines with fresh ids); {f['searchers']} search processes (one search every "
        f"{f['search_pause'] * 1000:g} ms + its own time) + 1 MCP server searching throughout; worker SIGKILLed {f['kills']}× at random moments",
        f"- hook: p50 {f['hook_p50_ms']} ms, p95 {f['hook_p95_ms']} ms, failures {f['hook_failures']}",
        f"- worker: {f['workers_started']} worker lives, {f['ingests']} ingests, {f['requeued_after_kill']} restarts "
        f"re-queued a killed worker's claims; queue drained {f['drain_s']} s after the load; exited when idle: "
        f"{f['worker_exited']}",
        f"- searches: {f['searches']} ({f['searches_during_ingest']} during ingest); search p50 {f['search_p50_ms']} ms, "
        f"p95 {f['search_p95_ms']} ms (Memory.search); MCP search_all p50 {f['mcp_p50_ms']} ms, p95 {f['mcp_p95_ms']} ms; "
        f"errors {len(f['search_errors'])}",
        f"- end state: {f['transcripts']} transcripts, {f['messages_stored']}/{f['messages_expected']} messages stored, "
        f"{f['sessions_short']} sessions short, {f['sessions_without_chunks']} without chunks; {f['chunks']} chunks, "
        f"{f['duplicate_chunks']} duplicates; indexes agree with SQLite: {f['indexes_agree']}; same chunk keys as a "
        f"clean ingest: {f['same_chunks_as_clean_ingest']}",
        f"- max RSS, MB (each process with anything it starts, summed; searcher = the largest of them): "
        f"{f['max_rss_mb']}",
        f"- verdict: {'PASS' if ok(f) else 'FAIL — ' + ', '.join(failed_checks(f))}",
    ]) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--rate", type=float, default=8, help="hook events per second")
    ap.add_argument("--sessions", type=int, default=12, help="sessions written at the same time")
    ap.add_argument("--searchers", type=int, default=4)
    ap.add_argument("--search-pause", type=float, default=0.05, help="seconds between one searcher's searches")
    ap.add_argument("--kills", type=int, default=3, help="worker SIGKILLs during the load")
    ap.add_argument("--debounce", type=float, default=1.0, help="WWT_WORKER_DEBOUNCE_S")
    ap.add_argument("--idle", type=float, default=5.0, help="WWT_WORKER_IDLE_S")
    ap.add_argument("--drain-timeout", type=float, default=300)
    ap.add_argument("--seed", type=int, default=6)
    ap.add_argument("--engine", choices=("on", "off"), default="on", help="WWT_ENGINE for every process")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    ap.add_argument("--no-record", action="store_true", help="do not write its section into RESULTS.md")
    args = ap.parse_args()
    if not os.environ.get("WWT_MODEL_DIR"):
        raise SystemExit("set WWT_MODEL_DIR to the model folder (model.onnx + tokenizer.json)")
    figures = run(args)
    command = "python benchmarks/stress.py " + " ".join(sys.argv[1:])
    text = report(figures, command.strip())
    print(text)
    print(json.dumps(figures, indent=1, default=str))
    if not args.no_record:
        replace_section("stress", text)
    raise SystemExit(0 if ok(figures) else 1)


if __name__ == "__main__":
    main()
