"""MCP server over stdio (``wwt mcp`` / ``wwt-mcp``): the agents' way into their own past conversations.

Long-lived: one ``Memory`` holds the model, Kiwi and the indexes for the life of the process (warmed in the
background right after start so the handshake is instant), and reloads the indexes by itself when the ingest
worker commits new data. Tools run in worker threads (the SDK runs sync tools off the event loop); ``Memory``
serialises what must be serialised. Output is compact plain text, capped at ``MAX_OUTPUT_CHARS``. Every failure
becomes a one-line tool error; the server never dies on a bad call.
"""

from __future__ import annotations

import os
import shlex
import sys
import threading
from pathlib import Path
from typing import Any

from wwt.engine import context as engine_context
from wwt.errors import WwtError
from wwt.models import PLATFORM_NAMES, PLATFORMS, RESUME_IN_CWD, Filters, platform_of

MAX_OUTPUT_CHARS = 8000
MAX_MESSAGE_CHARS = 1200
DEFAULT_LIMIT = 5
MAX_LIMIT = 20
PAGE_MESSAGES = 20
WARM_UP_JOIN_S = 60.0  # how long a closing server waits for the warm-up to finish loading
# Env vars through which an agent may tell its MCP server which session it runs in (never search yourself).
SESSION_ENV_VARS = ("WWT_EXCLUDE_SESSION_ID", "CLAUDE_SESSION_ID", "CLAUDE_CODE_SESSION_ID", "GEMINI_SESSION_ID",
                    "CODEX_THREAD_ID", "CODEX_SESSION_ID")

INSTRUCTIONS = (
    "wwt is a local, private memory of the user's past conversations with AI coding agents (Claude Code, "
    "Gemini CLI, Codex CLI). Search it when the user refers to earlier work — 'how did we fix …', 'what was "
    "that command', '전에 … 어떻게 했지?', '그때 그거 뭐였지?', '지난번에 …' — or before redoing something that "
    "was probably solved before. Use search_memory (current project) first, search_all across projects, and "
    "get_session to read more of a hit."
)

SEARCH_MEMORY_DOC = (
    "Search the user's past AI-agent conversations in the current project (the project of `cwd`, else of the "
    "server's working folder) for how something was done, decided or fixed before. Use it when the user says "
    "things like 'how did we fix …', 'what did we decide about …', 'last time we …', '전에 … 어떻게 했지?', "
    "'그때 그거 뭐였지?', '지난번에 … 했던 거', or before re-solving a problem that looks familiar. Query in "
    "natural language (Korean, English or mixed) or with exact identifiers/error strings. `cwd` only picks "
    "the project (pass your working folder). Optional filters: project, source (" + " | ".join(PLATFORMS) + "), "
    "git_branch, since/until (YYYY-MM-DD, 7d, 2w, yesterday), limit (default 5, max 20). Returns sessions with project, branch, agent, date, score, "
    "excerpt, session id and the command to resume it; call get_session to read more."
)
SEARCH_ALL_DOC = (
    "Search past AI-agent conversations across ALL projects. Use when search_memory found nothing in the "
    "current project, or the user asks about another project / 'anywhere' ('다른 프로젝트에서 …', "
    "'어디서 했더라?', 'have we ever …')."
)
INGEST_DOC = (
    "Archive and index one conversation log file now (a Claude Code .jsonl, Gemini CLI session file or Codex "
    "rollout), e.g. when the user says 'remember this session' or a log lives outside the default folders. "
    "Hooks already do this automatically at the end of each turn."
)
GET_SESSION_DOC = (
    "Read the messages of one archived conversation (session id or a unique prefix, from a search result), "
    "one page at a time: `start`/`end` are message positions (end exclusive; default a page of 20 from "
    "start). Use it to see the full context around a search hit ('그 대화 더 보여줘', 'show me that session')."
)


class _State:
    memory: Any = None
    warm_error: str | None = None
    warmed = threading.Event()


def memory() -> Any:
    if _State.memory is None:
        from wwt.service import Memory

        _State.memory = Memory()
    return _State.memory


def warm_up() -> None:
    """Load model, Kiwi and indexes once, off the handshake path; a failure is reported by the first call."""
    try:
        mem = memory()
        if mem.has_data():
            mem.search("warm up", Filters(), 1)
        else:
            mem._get_embedder()
    except WwtError as exc:
        _State.warm_error = str(exc)
    except Exception as exc:  # noqa: BLE001 - surfaced by tool calls, never kills the server
        _State.warm_error = f"{type(exc).__name__}: {exc}"
    finally:
        _State.warmed.set()
    # Then Kiwi, without holding up the first call: the warm-up query has no Hangul, and a first Korean
    # question would otherwise wait ~1.2 s for it (one that comes sooner waits on the same load).
    try:
        from wwt.lexical import get_kiwi

        get_kiwi()
    except Exception:  # noqa: BLE001 - a Korean query reports it when it needs Kiwi
        pass


# ------------------------------------------------------------------------------------------------- helpers


def clamp_limit(limit: int | None) -> int:
    return DEFAULT_LIMIT if not limit or limit < 1 else min(int(limit), MAX_LIMIT)


def normalise_source(source: str | None) -> str | None:
    if not source:
        return None
    value = platform_of(source)
    if value is None:
        raise WwtError(f"unknown source {source!r}: use one of {', '.join(PLATFORMS)}")
    return value


def parse_time(value: str | None, end_of_day: bool = False) -> str | None:
    if not value:
        return None
    from wwt.cli import parse_when

    return parse_when(value, end_of_day=end_of_day)


def own_session_id(explicit: str | None) -> str | None:
    if explicit:
        return explicit
    for name in SESSION_ENV_VARS:  # the agent's own environment, also when served by the engine
        if value := engine_context.getenv(name):
            return value
    return None


def when(iso: str | None) -> str:
    return (iso or "?")[:16].replace("T", " ")


def one_line(text: str, limit: int) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def render_hits(hits: list[Any], header: str) -> str:
    """Compact, LLM-friendly text; stops adding sessions before MAX_OUTPUT_CHARS."""
    if not hits:
        return header + "\nno matching conversations."
    out = [header]
    size = len(header)
    for rank, hit in enumerate(hits, 1):
        resume = hit.resume
        if resume and hit.platform in RESUME_IN_CWD and hit.cwd:
            resume = f"cd {shlex.quote(hit.cwd)} && {resume}"
        lines = [
            f"[{rank}] {hit.project or '(no project)'}"
            + (f" @{hit.git_branch}" if hit.git_branch else "")
            + f" · {PLATFORM_NAMES.get(hit.platform, hit.platform)} · {when(hit.started_at)} · score {hit.score:.2f}",
            f"    session: {hit.session_id}" + (f" · title: {one_line(hit.title, 80)}" if hit.title else ""),
        ]
        for chunk in hit.chunks[:2]:
            lines.append(f"    > {one_line(chunk.text, 400)}  [messages {chunk.first_seq}-{chunk.last_seq}]")
        if resume:
            lines.append(f"    resume: {resume}")
        block = "\n".join(lines)
        if size + len(block) + 1 > MAX_OUTPUT_CHARS:
            out.append(f"… {len(hits) - rank + 1} more result(s) cut to keep this short; narrow the query.")
            break
        out.append(block)
        size += len(block) + 1
    return "\n".join(out)


def do_search(query: str, filters: Filters, limit: int, scope: str, fallback_all: bool) -> str:
    if not query or not query.strip():
        raise WwtError("query is empty: say what to look for")
    mem = memory()
    notes = ""
    if filters.project and fallback_all and not mem.has_project(filters.project):
        notes = f" (no sessions archived for project {filters.project!r} yet; searched all projects)"
        filters.project = None
        scope = "all projects"
    outcome = mem.search_outcome(query, filters, limit)
    hits = outcome.hits
    if not hits and filters.project and fallback_all:
        filters.project = None
        outcome = mem.search_outcome(query, filters, limit)
        hits = outcome.hits
        notes = f" (nothing in {scope}; these are from all projects)"
        scope = "all projects"
    weak = " — weak matches only: nothing clearly answers this" if hits and outcome.weak else ""
    return render_hits(hits, f"{len(hits)} session(s) for {query!r} in {scope}{notes}{weak}")


# --------------------------------------------------------------------------------------------------- tools


def search_memory(
    query: str,
    project: str | None = None,
    source: str | None = None,
    git_branch: str | None = None,
    cwd: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int | None = None,
    exclude_session_id: str | None = None,
) -> str:
    from wwt.project import current_project

    scope_project = project
    implicit = False
    if not scope_project:
        base = cwd or engine_context.cwd()
        scope_project = current_project(base) if base and Path(base).anchor != base else None
        implicit = True
    filters = Filters(
        project=scope_project,
        platform=normalise_source(source),
        git_branch=git_branch or None,
        since=parse_time(since),
        until=parse_time(until, end_of_day=True),
        exclude_session_id=own_session_id(exclude_session_id),
    )
    scope = f"project {scope_project}" if scope_project else "all projects"
    return do_search(query, filters, clamp_limit(limit), scope, fallback_all=implicit)


def search_all(query: str, limit: int | None = None, exclude_session_id: str | None = None) -> str:
    filters = Filters(exclude_session_id=own_session_id(exclude_session_id))
    return do_search(query, filters, clamp_limit(limit), "all projects", fallback_all=False)


def ingest_session(path: str) -> str:
    target = Path(path).expanduser()
    if not target.is_absolute():
        raise WwtError(f"give an absolute path (got {path!r})")
    if not target.exists():
        raise WwtError(f"no such file: {target}")
    summary = memory().ingest([target])
    fields = ("files_parsed", "sessions", "messages_added", "chunks_added", "chunks_embedded", "bad_lines")
    parts = [f"{f.replace('_', ' ')}: {getattr(summary, f)}" for f in fields if hasattr(summary, f)]
    return f"ingested {target}\n" + ("\n".join(parts) if parts else str(summary)[:500])


def get_session(session_id: str, start: int | None = None, end: int | None = None) -> str:
    start = max(0, start or 0)
    end = end if end is not None else start + PAGE_MESSAGES
    view = memory().get_session(session_id, start, end)
    s = view.session
    head = (
        f"session {s.session_id} · {s.project or '(no project)'}"
        + (f" @{s.git_branch}" if s.git_branch else "")
        + f" · {PLATFORM_NAMES.get(s.platform, s.platform)} · {when(s.started_at)}"
        + (f" · {view.total} messages" if view.total else "")
    )
    out = [head]
    size = len(head)
    last = start - 1
    for m in view.messages:
        label = m.role if m.kind == "text" else f"{m.role}/{m.kind}" + (f" {m.tool_name}" if m.tool_name else "")
        line = f"[{m.seq}] {label}: {one_line(m.text, MAX_MESSAGE_CHARS)}"
        if size + len(line) + 1 > MAX_OUTPUT_CHARS - 120:
            break
        out.append(line)
        size += len(line) + 1
        last = m.seq
    if not view.messages:
        out.append(f"no messages from position {start}.")
    elif view.total is None or last + 1 < view.total:
        out.append(f"… more: get_session({s.session_id!r}, start={last + 1})")
    return "\n".join(out)


TOOLS = (
    (search_memory, SEARCH_MEMORY_DOC),
    (search_all, SEARCH_ALL_DOC),
    (ingest_session, INGEST_DOC),
    (get_session, GET_SESSION_DOC),
)


def _as_tool(fn: Any) -> Any:
    """Wrap a tool so a WwtError (or anything unexpected) is one clear line, and the warm-up is awaited."""
    import functools

    from mcp.server.mcpserver.exceptions import ToolError

    from wwt.present import terminal_safe

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> str:
        _State.warmed.wait(timeout=120)
        try:
            return terminal_safe(fn(*args, **kwargs))  # archived text may reach a terminal through the client
        except WwtError as exc:
            raise ToolError(terminal_safe(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)) from None
        except Exception as exc:  # noqa: BLE001
            from wwt.store import store_damage, store_damage_error

            if store_damage(exc):
                raise ToolError(terminal_safe(str(store_damage_error(memory().store_path, exc)))) from None
            message = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            raise ToolError(terminal_safe(message)) from None

    return wrapper


def build_server() -> Any:
    from mcp.server.mcpserver import MCPServer

    from wwt import __version__

    server = MCPServer(name="wwt", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    for fn, doc in TOOLS:
        server.add_tool(_as_tool(fn), name=fn.__name__, description=doc, structured_output=False)
    return server


def main() -> None:
    """Console script ``wwt-mcp`` and ``wwt mcp``."""
    server = build_server()
    warming = threading.Thread(target=warm_up, name="wwt-warm-up", daemon=True)
    warming.start()
    try:
        server.run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        # A client that disconnects at once must not end the process while onnxruntime or Kiwi is still
        # loading on the warm-up thread (that aborts the process instead of exiting 0).
        warming.join(timeout=WARM_UP_JOIN_S)
        if _State.memory is not None:
            _State.memory.close()
    if warming.is_alive():  # still downloading the model: leave without running native destructors
        sys.stdout.flush()
        os._exit(0)
    sys.exit(0)


if __name__ == "__main__":
    main()
