"""Searches do not wait for an ingest (issue 24): an agent's MCP ``ingest_session`` of a large log used to hold
the engine's one lock for the whole parse, so every other agent's search waited for it (9.6 s seen)."""

from __future__ import annotations

import asyncio
import time

from _shared import REAL_FIXTURES
from long_session_log import write_long_session
from mcp_helpers import text_of, wwt_mcp_session
from test_engine import _ingest, engine_env, runtime, wwt  # noqa: F401


def test_a_search_answers_while_another_agent_ingests_a_large_log(tmp_path, runtime, model_dir):  # noqa: F811
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

    async def ingest(session):
        started = time.perf_counter()
        reply = text_of(await session.call_tool("ingest_session", {"path": str(big)}))
        times["ingest"] = time.perf_counter() - started
        times["ingest_done"] = time.perf_counter()
        assert "ingested" in reply, reply

    async def search(session):
        await asyncio.sleep(0.5)  # the ingest is parsing by now
        started = time.perf_counter()
        reply = text_of(await session.call_tool("search_all", {"query": "JOKE.md file"}))
        times["search"] = time.perf_counter() - started
        times["search_done"] = time.perf_counter()
        assert "JOKE" in reply, reply

    async def both():
        world = {"env": env, "root": tmp_path}
        await asyncio.gather(wwt_mcp_session(world, ingest), wwt_mcp_session(world, search))

    asyncio.run(asyncio.wait_for(both(), timeout=600))
    assert times["search_done"] < times["ingest_done"], times  # it answered while the ingest was still going
    assert times["search"] < times["ingest"] / 3, times
