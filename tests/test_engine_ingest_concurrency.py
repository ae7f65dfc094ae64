"""Searches do not wait for an ingest (issue 24): an agent's MCP ``ingest_session`` of a large log used to hold
the engine's one lock for the whole parse, so every other agent's search waited for it (9.6 s seen). Not only
the parse: writing 50,000 messages, their chunks and the word index takes longer than parsing them, so another
agent searches again and again for as long as the ingest runs, and even the slowest of those searches must
answer in well under the ingest's time."""

from __future__ import annotations

import asyncio
import time

from _shared import REAL_FIXTURES
from long_session_log import write_long_session
from mcp_helpers import text_of, wwt_mcp_session
from test_engine import _ingest, engine_env, runtime, wwt  # noqa: F401


def test_searches_answer_all_through_another_agents_ingest_of_a_large_log(tmp_path, runtime, model_dir):  # noqa: F811
    home = tmp_path / "data"
    _ingest(home, model_dir, REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl")
    no_model = tmp_path / "no-model"  # phase 1 alone (no back-fill slices to slip between): words only
    no_model.mkdir()
    env = engine_env(home, runtime, no_model, WWT_ENGINE_IDLE_S="120")
    big = home.parent / ".claude" / "projects" / "-srv-big" / "7d2c51f0-4b1e-4c8e-9a55-0c0ffee00001.jsonl"
    big.parent.mkdir(parents=True)
    write_long_session(big, 50_000)
    assert wwt("search", "--all", "JOKE.md", env=env).returncode == 0  # the engine is up and warm
    times: dict[str, float] = {}
    searches: list[tuple[float, float]] = []  # (started, took), perf_counter
    started = asyncio.Event()

    async def ingest(session):
        started.set()
        times["ingest_start"] = time.perf_counter()
        reply = text_of(await session.call_tool("ingest_session", {"path": str(big)}))
        times["ingest_done"] = time.perf_counter()
        assert "ingested" in reply, reply

    async def search(session):
        await session.call_tool("search_all", {"query": "JOKE.md file"})  # this session's own first call
        await started.wait()
        while "ingest_done" not in times:
            begun = time.perf_counter()
            reply = text_of(await session.call_tool("search_all", {"query": "JOKE.md file"}))
            searches.append((begun, time.perf_counter() - begun))
            assert "JOKE" in reply, reply
            await asyncio.sleep(0.2)

    async def both():
        world = {"env": env, "root": tmp_path}
        await asyncio.gather(wwt_mcp_session(world, ingest), wwt_mcp_session(world, search))

    asyncio.run(asyncio.wait_for(both(), timeout=600))
    took = times["ingest_done"] - times["ingest_start"]
    during = [(b, t) for b, t in searches if b < times["ingest_done"]]
    assert len(during) >= 3, (took, searches)  # searched all through the ingest, not once
    slowest = max(t for _, t in during)
    assert slowest < took / 3, f"slowest search {slowest:.2f}s during an ingest of {took:.2f}s: {searches}"
    # and what the ingest wrote is found once it has answered
    after = asyncio.run(_search_once({"env": env, "root": tmp_path}, "quokka49999"))
    assert "quokka49999" in after, after


async def _search_once(world: dict, query: str) -> str:
    out: list[str] = []

    async def body(session):
        out.append(text_of(await session.call_tool("search_all", {"query": query})))

    await wwt_mcp_session(world, body)
    return out[0]
