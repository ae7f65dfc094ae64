"""Is a tool wwt's own? Each agent names an MCP server's tools its own way; wwt's results quoted back into a new
session must not become that session's searchable content, or every recall session outranks the conversation
it recalled (issue 25: five of them ranked above the original after a few recalls).

Names seen per agent (their docs and their real transcripts): Claude Code ``mcp__wwt__search_memory`` (a plugin:
``mcp__plugin_wwt_wwt__search_memory``), Codex ``mcp__wwt__search_memory`` (0.17x: namespace ``mcp__wwt`` + name,
joined by the parser), Gemini CLI and Qwen Code ``mcp_wwt_search_memory`` (older: ``search_memory`` bare, or
``wwt__search_memory``), OpenCode ``wwt_search_memory``, Copilot CLI ``wwt-search_memory``."""

from __future__ import annotations

import re

OWN_TOOLS = ("search_memory", "search_all", "get_session", "ingest_session")
_SERVER = r"(?:mcp__(?:plugin_wwt_)?wwt__|mcp_wwt_|wwt__|wwt_|wwt-|wwt\.|wwt/)"
_OWN = re.compile(rf"(?:{_SERVER})?(?:{'|'.join(OWN_TOOLS)})", re.IGNORECASE)


def is_own_tool(name: str | None) -> bool:
    """True for a call of one of wwt's MCP tools under any agent's naming (the bare names too: no other server
    wwt knows of uses them, and a false match only keeps a tool output out of the indexes, never the archive)."""
    return bool(name) and _OWN.fullmatch(name.strip()) is not None


QUOTE_SHARE = 0.5  # an answer with at least this share of its word 4-grams in the recalled text quotes it
_WORDS = re.compile(r"\w+")


def quotes(answer: str, recalled: str, share: float = QUOTE_SHARE) -> bool:
    """Does ``answer`` mostly repeat ``recalled`` (wwt's tool result it follows)? Then it is a recall of another
    session, not this one's content: indexed, it would outrank the session it quotes."""
    grams = _shingles(answer)
    if not grams:
        return False
    return len(grams & _shingles(recalled)) >= share * len(grams)


def _shingles(text: str, n: int = 4) -> set[tuple[str, ...]]:
    words = _WORDS.findall(text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}
