"""A real MCP client session over stdio against `python -m wwt mcp`, shared by the MCP test files."""

from __future__ import annotations

import sys

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def text_of(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def wwt_mcp_session(world: dict, body) -> None:
    """Start `wwt mcp` with ``world["env"]`` in ``world["root"]`` (its stderr appended to server-stderr.log
    there), initialise, and run ``await body(session)``."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "wwt", "mcp"], env=world["env"],
                                   cwd=str(world["root"]))
    with open(world["root"] / "server-stderr.log", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await body(session)
