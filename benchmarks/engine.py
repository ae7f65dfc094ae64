"""The resident engine (issue 12), side by side in one run: ``wwt search`` as a new process against a warm
engine vs ``WWT_ENGINE=off`` (this branch, in-process) vs today's one-shot search (``--baseline-python``: the
interpreter of a checkout without the engine, e.g. an older release's venv); the first search with no
engine running; four real MCP stdio sessions plus one CLI search (RSS of every wwt process); idle exit; search
latency while the engine ingests appended turns. Results go to RESULTS.md (``replace_section("engine", ...)``).

    python benchmarks/engine.py [--home PATH] [--runs 12] [--baseline-python <python of a checkout without the engine>]

The store is the one at ``--home`` (e.g. a scale store), else one built from the real fixture logs in
``benchmarks/.work/engine/``. The machine is shared: the load average is recorded with the numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from _shared import REAL_FIXTURES, replace_section  # noqa: E402

ROOT = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT]  # keep `import mcp` = the SDK
WORK = ROOT / ".work" / "engine"
QUERIES = {"English": "phoenix server does not start", "Korean": "고랭 최신 버전 문서 업데이트"}
APPENDED_TURNS = 1000


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def base_env(home: Path, runtime: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("WWT_DEBUG", "WWT_ENGINE")}
    env.update(WWT_HOME=str(home), WWT_RUNTIME_DIR=str(runtime), NO_COLOR="1", COLUMNS="120", **extra)
    return env


def build_store(home: Path, env: dict[str, str], python: str = sys.executable) -> None:
    """The fixture archive, ingested by ``python`` (the baseline gets its own copy: its schema may differ)."""
    if (home / "wwt.sqlite3").exists():
        return
    logs = [p for p in REAL_FIXTURES.rglob("*") if p.suffix in (".jsonl", ".json") and p.is_file()]
    subprocess.run([python, "-m", "wwt", "ingest", *map(str, logs)], env=dict(env, WWT_ENGINE="off",
                   WWT_HOME=str(home)), check=True, capture_output=True, timeout=3600)


def timed(cmd: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd="/", timeout=600)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[-1]!r} failed: {proc.stderr.strip()[:300]}")
    return elapsed


def install() -> str:
    """How the measured wwt is installed: an editable (development) install's import hook runs in every
    process, the bare interpreter included, and costs ~20 ms of start-up that a regular install has not."""
    probe = subprocess.run([sys.executable, "-c", "import sys, wwt; print(wwt.__file__); "
                            "print(any('__editable__' in m for m in sys.modules))"],
                           capture_output=True, text=True, cwd="/", timeout=60)
    where, editable = (probe.stdout.split("\n") + ["", ""])[:2]
    if editable == "True":
        return "editable install of the checkout"
    return "regular install" if "site-packages" in where else "checkout on the path"


def search_cmd(python: str, query: str) -> list[str]:
    return [python, "-m", "wwt", "search", "--all", query, "-n", "5"]


def stop_engine(env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "-m", "wwt", "engine", "stop"], env=env, capture_output=True, timeout=60)


def wwt_pids(runtime: Path) -> list[int]:
    """Every process started for this run's runtime folder (engine, MCP pipes, CLI clients)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if f"WWT_RUNTIME_DIR={runtime}".encode() in environ and b"wwt" in cmdline:
            found.append(int(entry.name))
    return found


def rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def engine_status(env: dict[str, str]) -> dict:
    proc = subprocess.run([sys.executable, "-m", "wwt", "engine", "status", "--json"], env=env,
                          capture_output=True, text=True, timeout=60)
    return json.loads(proc.stdout or "{}")


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


# ------------------------------------------------------------------------------------------------ MCP


async def mcp_agents(env: dict[str, str], count: int, runtime: Path, cli_query: str) -> dict:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    init_times: list[float] = []
    measured: dict = {}
    ready = asyncio.Event()
    done = asyncio.Event()
    connected = 0

    async def agent() -> None:
        nonlocal connected
        params = StdioServerParameters(command=sys.executable, args=["-m", "wwt", "mcp"], env=env, cwd="/")
        started = time.perf_counter()
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    init_times.append(time.perf_counter() - started)
                    result = await session.call_tool("search_all", {"query": "mix phx.server"})
                    assert not result.is_error
                    connected += 1
                    if connected == count:
                        ready.set()
                    await done.wait()

    async def measure() -> None:
        await ready.wait()
        cli = subprocess.Popen(search_cmd(sys.executable, cli_query), env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, cwd="/")
        peak: dict[int, int] = {}
        while cli.poll() is None:
            for pid in wwt_pids(runtime):
                peak[pid] = max(peak.get(pid, 0), rss(pid))
            await asyncio.sleep(0.005)
        for pid in wwt_pids(runtime):
            peak[pid] = max(peak.get(pid, 0), rss(pid))
        engine_pid = engine_status(env).get("pid")
        measured["total"] = sum(peak.values())
        measured["engine"] = peak.get(engine_pid, 0)
        measured["pipes"] = sorted(v for k, v in peak.items() if k != engine_pid)
        done.set()

    await asyncio.wait_for(asyncio.gather(*(agent() for _ in range(count)), measure()), timeout=600)
    measured["init"] = init_times
    return measured


# ------------------------------------------------------------------------------------------------ ingest


def append_turns(path: Path, session_id: str, turns: int) -> None:
    """Claude Code user/assistant records (the shape of the real fixtures), one question and answer a turn."""
    parent = None
    lines = []
    for i in range(turns):
        for role in ("user", "assistant"):
            node = str(uuid.uuid4())
            text = (f"turn {i}: how do we configure the cache TTL for service {i % 37} and why did the deploy fail"
                    if role == "user" else
                    f"For service {i % 37} the TTL lives in config/cache.yaml; the deploy failed because the "
                    f"health check hit /ready before the migration {i} finished. 배포 전에 마이그레이션을 기다립니다.")
            record = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/work/bench",
                      "sessionId": session_id, "version": "2.1.38", "gitBranch": "main", "type": role,
                      "uuid": node, "timestamp": f"2026-03-01T10:{(i // 60) % 60:02d}:{i % 60:02d}.000Z",
                      "message": {"role": role, "content": text if role == "user" else
                                  [{"type": "text", "text": text}]}}
            lines.append(json.dumps(record))
            parent = node
    with path.open("a", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


def hook(env: dict[str, str], transcript: Path, session_id: str) -> float:
    payload = json.dumps({"session_id": session_id, "transcript_path": str(transcript), "cwd": "/",
                          "hook_event_name": "Stop"})
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "wwt", "hook", "claude-code"], input=payload, text=True, env=env,
                   capture_output=True, timeout=60, check=True)
    return time.perf_counter() - started


def queue_empty(home: Path) -> bool:
    sys.path.insert(0, str(ROOT.parent))
    from wwt.store import Store

    with Store.open(home / "wwt.sqlite3", readonly=True) as store:
        return store.queue_size() == 0


# ------------------------------------------------------------------------------------------------ main


def store_size(home: Path) -> str:
    """A given store, by what it holds (never its path: results must not name one machine's folders)."""
    import sqlite3

    from wwt import paths

    os.environ["WWT_HOME"] = str(home)
    conn = sqlite3.connect(f"file:{paths.store_path()}?mode=ro", uri=True)
    try:
        chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    finally:
        conn.close()
    return f"a store of {chunks:,} chunks (benchmarks/scale_corpus.py when that large)"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--baseline-python", default="")
    parser.add_argument("--no-results", action="store_true")
    args = parser.parse_args()

    home = args.home or WORK / "home"
    runtime = Path(tempfile.mkdtemp(prefix="wwt-bench-"))
    env = base_env(home, runtime, WWT_ENGINE_IDLE_S="600")
    build_store(home, env)
    baseline = args.baseline_python if args.baseline_python and Path(args.baseline_python).exists() else None
    baseline_env = dict(env, WWT_HOME=str(WORK / "home-baseline"))
    if baseline:
        build_store(WORK / "home-baseline", env, baseline)
    lines: list[str] = []
    rows: list[str] = []
    notes: list[str] = [f"load average at start: {load()}"]
    try:
        # ---- first search with no engine vs today's one-shot, then warm, per language
        for language, query in QUERIES.items():
            today = ([timed(search_cmd(baseline, query), baseline_env) for _ in range(max(3, args.runs // 3))]
                     if baseline else [])
            off = [timed(search_cmd(sys.executable, query), dict(env, WWT_ENGINE="off"))
                   for _ in range(max(3, args.runs // 3))]
            first = []
            for _ in range(max(3, args.runs // 3)):
                stop_engine(env)
                first.append(timed(search_cmd(sys.executable, query), env))
            # the first search returns before the engine has finished warming up (Kiwi, the MCP SDK): searches
            # in the next seconds share it with those imports. "Warm" is after that.
            subprocess.run([sys.executable, "-m", "wwt", "engine", "start"], env=env, capture_output=True,
                           timeout=300)
            timed(search_cmd(sys.executable, query), env)
            warm, floor = [], []
            for _ in range(args.runs):  # interleaved with the bare interpreter: both see the same load
                warm.append(timed(search_cmd(sys.executable, query), env))
                floor.append(timed([sys.executable, "-c", "pass"], env))
            w50 = statistics.median(warm)
            rows.append(
                f"| {language} | {ms(w50)} | {ms(p(warm, 0.95))} | {ms(statistics.median(floor))} | "
                f"{ms(statistics.median(off))} | "
                f"{statistics.median(off) / w50:.1f}× | "
                + (f"{ms(statistics.median(today))} | {statistics.median(today) / w50:.1f}× | " if today else "– | – | ")
                + f"{ms(statistics.median(first))} | "
                + (f"{statistics.median(first) / statistics.median(today):.2f} |" if today else "– |"))
        notes.append(f"load average after the search rows: {load()}")

        # ---- RSS: engine alone, then 4 MCP sessions + 1 CLI search
        stop_engine(env)
        subprocess.run([sys.executable, "-m", "wwt", "engine", "start"], env=env, capture_output=True, timeout=300)
        timed(search_cmd(sys.executable, QUERIES["Korean"]), env)
        alone = sum(rss(pid) for pid in wwt_pids(runtime))
        measured = asyncio.run(mcp_agents(env, 4, runtime, QUERIES["English"]))
        init = measured["init"]
        warm_init = asyncio.run(mcp_agents(env, 1, runtime, QUERIES["English"]))["init"]
        mb = 1024 * 1024
        lines += [
            f"- engine alone (warm, after a Korean search): {alone / mb:.0f} MB RSS",
            f"- 4 `wwt mcp` sessions (real `mcp` stdio clients) + 1 `wwt search` at once: every wwt process "
            f"{measured['total'] / mb:.0f} MB RSS = {measured['total'] / alone:.2f}× the engine alone (engine "
            f"then {measured['engine'] / mb:.0f} MB, with the MCP SDK loaded); the other processes "
            f"{', '.join(f'{v / mb:.0f}' for v in measured['pipes'])} MB",
            f"- `initialize` answered, from spawning `wwt mcp`: 4 at once {', '.join(ms(t) for t in sorted(init))} ms; "
            f"one more, engine warm: {ms(warm_init[0])} ms",
        ]

        # ---- search latency while the engine ingests appended turns
        logs = WORK / "append"
        logs.mkdir(parents=True, exist_ok=True)
        session_id = str(uuid.uuid4())
        transcript = logs / f"{session_id}.jsonl"
        append_turns(transcript, session_id, APPENDED_TURNS)
        hook_s = hook(env, transcript, session_id)
        during: list[float] = []
        started = time.monotonic()
        saw_ingest = False
        while time.monotonic() - started < 900:
            during.append(timed(search_cmd(sys.executable, QUERIES["English"]), env))
            status = engine_status(env)
            saw_ingest = saw_ingest or bool(status.get("ingesting"))
            if not status.get("ingesting") and queue_empty(home) and len(during) >= 5:
                break
        ingest_s = time.monotonic() - started
        lines.append(f"- while the engine ingested {APPENDED_TURNS} appended turns ({ingest_s:.0f} s, hook "
                     f"{ms(hook_s)} ms{'' if saw_ingest else ', ingest not observed'}): {len(during)} searches, "
                     f"p50 {ms(statistics.median(during))} ms, p95 {ms(p(during, 0.95))} ms")

        # ---- idle exit
        stop_engine(env)
        idle_env = dict(env, WWT_ENGINE_IDLE_S="3")
        timed(search_cmd(sys.executable, QUERIES["English"]), idle_env)
        before = sum(rss(pid) for pid in wwt_pids(runtime))
        deadline = time.monotonic() + 60
        while wwt_pids(runtime) and time.monotonic() < deadline:
            time.sleep(0.2)
        after = sum(rss(pid) for pid in wwt_pids(runtime))
        lines.append(f"- idle exit (`WWT_ENGINE_IDLE_S=3`): {before / mb:.0f} MB RSS of wwt processes while warm, "
                     f"{after / mb:.0f} MB after the idle period")
        notes.append(f"load average at the end: {load()}")
    finally:
        stop_engine(env)
        shutil.rmtree(runtime, ignore_errors=True)

    scale = "fixture archive (every real fixture log)" if args.home is None else store_size(home)
    body = "\n".join([
        "## Resident engine (benchmarks/engine.py)",
        "",
        f"`wwt search --all` as a new process (`python -m wwt`, {install()}), {args.runs} runs per cell "
        f"(first-search and in-process columns: {max(3, args.runs // 3)}), {scale}; 2 shared cores. p50/p95 in "
        "ms. `python -c pass`: the bare interpreter, timed between the warm searches (the floor a new process "
        "cannot go below).",
        "",
        "| query | engine warm p50 | p95 | `python -c pass` p50 | `WWT_ENGINE=off` p50 | off ÷ warm | today's "
        "one-shot p50 | today ÷ warm | first search, no engine | first ÷ today |",
        "|---|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        *lines,
        "",
        "; ".join(notes) + ". \"Today\" = the same command run by the interpreter of a checkout without the engine "
        f"({baseline or 'not available'}).",
    ])
    print(body)
    if not args.no_results:
        replace_section("engine", body)


if __name__ == "__main__":
    main()
