"""wwt's MCP tools say what they do to the agent that lists them (issue 25): Codex `exec` with approval policy
"never" refused a call to an unannotated tool. Read over stdio with the real MCP client, as an agent lists them
(MCP spec, tools/list: ``annotations.readOnlyHint``, ``destructiveHint``, ``openWorldHint``, ``title``)."""

from __future__ import annotations

import asyncio
import os

from mcp_helpers import wwt_mcp_session


def test_tools_list_declares_read_only_titles_and_closed_world(tmp_path, model_dir):
    env = {k: v for k, v in os.environ.items() if k != "WWT_DEBUG"}
    env.update(WWT_HOME=str(tmp_path / "data"), HOME=str(tmp_path), WWT_MODEL_DIR=str(model_dir))
    listed = {}

    async def body(session):
        for tool in (await session.list_tools()).tools:
            listed[tool.name] = tool

    asyncio.run(asyncio.wait_for(wwt_mcp_session({"env": env, "root": tmp_path}, body), timeout=120))
    assert set(listed) == {"search_memory", "search_all", "get_session", "ingest_session",
                           "handoff_session"}
    for name in ("search_memory", "search_all", "get_session", "handoff_session"):
        hints = listed[name].annotations
        assert hints is not None and hints.read_only_hint is True and hints.open_world_hint is False, name
        assert listed[name].title
    ingest = listed["ingest_session"].annotations
    assert ingest is not None and ingest.read_only_hint is False and ingest.destructive_hint is False
