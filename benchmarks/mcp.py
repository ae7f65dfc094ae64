"""MCP server: warm ``search_memory`` latency through a real stdio client session, and the server's memory.

Side by side in one run: a warm call to the long-lived server vs a cold ``wwt search`` process per query (what
an MCP server that reloads model + indexes on every call pays). The store is the one at ``--home`` (e.g. a
scale store built elsewhere), else a small one built from the real fixture logs in ``benchmarks/.work/``.

    WWT_MODEL_DIR=<model folder> python benchmarks/mcp.py --queries 40 [--home PATH] [--append-results]

Memory is the server process and everything it starts, summed, sampled through the whole session
(``_shared.TreePeak``); the cold ``wwt search`` processes likewise (the Korean-query Kiwi helper included).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _shared import REAL_FIXTURES, TreePeak, load_average, replace_section, run_tree_measured, tree_rss_mb  # noqa: E402

ROOT = Path(__file__).resolve().parent
# This file is named like the SDK package: keep its folder off sys.path so `import mcp` finds the SDK.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT]
FIXTURES = REAL_FIXTURES
QUERIES = [
    "phoenix server does not start", "mix phx.server 에러", "JOKE.md 파일 만들기", "Employee dataclass salary",
    "그때 그 테스트 어떻게 고쳤지?", "rate limit", "subagent", "how did we fix the build", "todo list",
    "compact conversation summary", "Redis 캐시 TTL 어떻게 설정했지?", "mTLS cert error in keylink",
    "로그인 401 원인", "hnswlib ef 값", "SQLite busy_timeout", "Dockerfile layer cache", "형태소 태그 필터",
    "ConnectionResetError 재시도", "PR 올리기 전 검사", "multilingual 모델 고른 이유",
]
TARGET_WARM_P50_MS = 50.0
TARGET_RSS_MB = 800.0


def build_small_store(home: Path, env: dict[str, str]) -> None:
    if (home / "wwt.sqlite3").exists():
        return
    code = "from wwt.service import Memory; import sys; from pathlib import Path; Memory().ingest([Path(sys.argv[1])])"
    subprocess.run([sys.executable, "-c", code, str(FIXTURES)], env=env, check=True)


def server_pid(parent: int) -> int | None:
    """The ``wwt mcp`` server this client started (a child of this process)."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            status = (proc / "status").read_text()
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields.get("PPid", "0").strip()) == parent and "wwt" in cmd and "mcp" in cmd:
            return int(proc.name)
    return None


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def warm_run(env: dict[str, str], n: int) -> dict:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "wwt", "mcp"], env=env)
    out: dict = {}
    t0 = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                out["initialize_ms"] = (time.perf_counter() - t0) * 1000
                pid = server_pid(os.getpid())
                peak = TreePeak(pid).start() if pid else None
                first = await session.call_tool("search_all", {"query": QUERIES[0]})
                assert not first.is_error, first.content
                out["first_result_ms"] = (time.perf_counter() - t0) * 1000
                times = []
                for i in range(n):
                    q = QUERIES[i % len(QUERIES)]
                    t = time.perf_counter()
                    r = await session.call_tool("search_memory", {"query": q, "project": None})
                    times.append((time.perf_counter() - t) * 1000)
                    assert not r.is_error, r.content
                out["warm"] = times
                out["rss_mb"] = tree_rss_mb(pid) if pid else 0.0
                out["peak_rss_mb"] = peak.stop() if peak else 0.0
    return out


def cold_cli(env: dict[str, str], n: int) -> list[tuple[float, float]]:
    """(ms, peak RSS MB of the process tree) of ``n`` one-shot ``wwt search`` processes."""
    wwt = str(Path(sys.executable).parent / "wwt")
    runs = []
    for i in range(n):
        wall, peak, code, out, _ = run_tree_measured([wwt, "search", "--all", QUERIES[i % len(QUERIES)]], env)
        if code != 0:
            raise SystemExit(f"wwt search failed ({code}): {out[-500:]}")
        runs.append((wall * 1000, peak))
    return runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--home", type=Path, default=None, help="an existing wwt data dir (default: small fixture store)")
    ap.add_argument("--append-results", action="store_true")
    args = ap.parse_args()

    home = args.home or ROOT / ".work" / "mcp-store"
    env = dict(os.environ, WWT_HOME=str(home))
    build_small_store(home, env)
    chunks = subprocess.run(
        [sys.executable, "-c", "from wwt.service import Memory; print(Memory().status().get('chunks'))"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()

    warm = asyncio.run(warm_run(env, args.queries))
    cold = cold_cli(env, args.cold_runs)
    # The first len(QUERIES) calls ask something new (the query is embedded); later calls repeat a query,
    # whose vector the embedder remembers: reported apart, and the target is checked on new queries.
    new, again = warm["warm"][: len(QUERIES)], warm["warm"][len(QUERIES) :]
    w50, w95, c50 = statistics.median(new), pct(new, 0.95), statistics.median(c[0] for c in cold)
    cold_peak = max(c[1] for c in cold)
    r50 = statistics.median(again) if again else None
    table = "\n".join([
        "| measure | value |", "|---|---|",
        f"| store | {home.name if home.is_absolute() else home} ({chunks} chunks) |",
        f"| server start → initialize | {warm['initialize_ms']:.0f} ms |",
        f"| server start → first search result (model, Kiwi, indexes loaded once) | {warm['first_result_ms']:.0f} ms |",
        f"| warm search_memory p50 / p95, new queries ({len(new)} calls) | {w50:.1f} / {w95:.1f} ms |",
        f"| warm search_memory p50, repeated queries ({len(again)} calls) | "
        + (f"{r50:.1f} ms |" if r50 is not None else "none (--queries ≤ distinct queries) |"),
        f"| cold `wwt search` process per query p50 ({args.cold_runs} runs) | {c50:.0f} ms |",
        f"| cold / warm | {c50 / w50:.0f}x |",
        f"| server RSS after the calls / peak (server + its child processes) | {warm['rss_mb']:.0f} / "
        f"{warm['peak_rss_mb']:.0f} MB |",
        f"| cold `wwt search` peak RSS, max of {args.cold_runs} (process + Kiwi helper) | {cold_peak:.0f} MB |",
    ])
    verdict = (f"warm p50 {'meets' if w50 <= TARGET_WARM_P50_MS else 'MISSES'} the {TARGET_WARM_P50_MS:.0f} ms target "
               f"on this store; RSS {'meets' if warm['peak_rss_mb'] <= TARGET_RSS_MB else 'MISSES'} the "
               f"{TARGET_RSS_MB:.0f} MB target")
    print(table)
    print(verdict)
    if args.append_results:
        home_shown = "" if not args.home else " --home " + (
            str(args.home) if not args.home.is_absolute() else f"<{args.home.name}>")
        replace_section(
            "mcp",
            f"## MCP server: warm search and memory ({time.strftime('%Y-%m-%d')})\n\n"
            f"Command: `WWT_MODEL_DIR=<model folder> python benchmarks/mcp.py --queries {args.queries}{home_shown} "
            f"--append-results` — real stdio client session, real model; 2-core shared machine, load average "
            f"{load_average()} at the end. RSS = the process and all it starts, summed, sampled every 20 ms.\n\n"
            f"{table}\n\n{verdict}.\n",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
