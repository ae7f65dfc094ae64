"""Input and output bounds shared by every shell (CLI, MCP server, hook, a future resident engine).

One place for the numbers, so a query the CLI accepts is a query the MCP server accepts, and no reply or error
line grows with what the caller sent. Small pure functions; only ``wwt.errors`` is imported (the hook loads
this module too).
"""

from __future__ import annotations

from collections.abc import Callable

from wwt.errors import UsageError

# ---------------------------------------------------------------------------------------------- inputs
MAX_QUERY_CHARS = 2000  # longer queries are cut (with a notice); e5 reads ~512 tokens anyway
MAX_SESSION_ID_CHARS = 256  # agents' ids are ≤ 64; a prefix or a subagent id "<uuid>:agent-<id>" fits
MAX_NAME_CHARS = 255  # project, branch, source, chunk id, date (a folder/branch name is ≤ 255 bytes)
MAX_PATH_CHARS = 4096  # PATH_MAX on Linux; paths, and project/cwd given as paths
MAX_LIMIT = 100  # `wwt search --limit` (sessions); tantivy aborts the process on absurd depths
MAX_MESSAGES_PAGE = 1000  # `wwt show --limit` (messages per page)
MAX_POSITION = 10**9  # message positions (`--start`, get_session start/end): SQLite INTEGER stays safe
MCP_MAX_LIMIT = 20  # the MCP tools' result cap (their replies must stay short for an agent's context)

# ---------------------------------------------------------------------------------------------- outputs
MAX_ECHO_CHARS = 200  # user input quoted back in an error or a header
MAX_REPLY_CHARS = 8000  # one MCP tool reply
MAX_FIELD_CHARS = 300  # one archived name (project, branch, cwd, title, id) inside an MCP reply line

# ---------------------------------------------------------------------------------------------- hook
HOOK_STDIN_IDLE_S = 0.2  # the hook stops reading stdin when nothing came for this long (a writer may keep it open)
HOOK_STDIN_MAX_S = 2.0  # ... and after this long in all (a writer that never stops)
HOOK_MAX_STDIN_BYTES = 4 * 1024 * 1024  # payload parsed whole up to this; beyond, it is stream-scanned


def echo(value: object, limit: int = MAX_ECHO_CHARS) -> str:
    """``repr(value)`` cut to about ``limit`` characters, saying how long the original was."""
    text = str(value)
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + f"… ({len(text):,} characters)"


def well_formed(text: str) -> str:
    """``text`` with each lone surrogate (bytes that were not UTF-8 in an argument or a file name, or an
    unpaired ``\\ud800`` in JSON) replaced by U+FFFD: SQLite, tantivy and Kiwi refuse them outright."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)


def clip(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters (a cut ends in ``…``)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)] + "…"


def clip_query(query: str) -> tuple[str, str | None]:
    """(the query to search, a one-line notice when it was shortened)."""
    text = query.strip()
    if len(text) <= MAX_QUERY_CHARS:
        return text, None
    return text[:MAX_QUERY_CHARS].rstrip(), (
        f"query shortened to its first {MAX_QUERY_CHARS:,} of {len(text):,} characters"
    )


def check_length(what: str, value: str | None, limit: int) -> str | None:
    """``value`` unchanged, or ``UsageError`` when it is longer than ``limit`` characters."""
    if value is not None and len(value) > limit:
        raise UsageError(f"{what} too long ({len(value):,} characters; at most {limit:,}): {echo(value, 60)}")
    return value


def check_range(what: str, value: int, low: int, high: int) -> int:
    """``value`` unchanged, or ``UsageError`` when it is outside ``low..high``."""
    if not low <= value <= high:
        raise UsageError(f"{what} must be between {low:,} and {high:,} (got {str(value)[:40]})")
    return value


def map_json_strings(value: object, fn: Callable[[str], str]) -> object:
    """``value`` (decoded JSON: dicts, lists, scalars) with ``fn`` applied to every string, keys included.
    Iterative: a payload nested as deep as the JSON decoder allows must not exhaust the interpreter's stack."""
    if isinstance(value, str):
        return fn(value)
    if not isinstance(value, (list, dict)):
        return value
    root: list[object] = [None]
    stack: list[tuple[object, object, object]] = [(value, root, 0)]  # (source, parent container, key in it)
    while stack:
        source, parent, key = stack.pop()
        if isinstance(source, str):
            made: object = fn(source)
        elif isinstance(source, list):
            made = [None] * len(source)
            stack.extend((item, made, i) for i, item in enumerate(source))
        elif isinstance(source, dict):
            made = {}
            for k, item in source.items():
                new_key = fn(k) if isinstance(k, str) else k
                made[new_key] = None
                stack.append((item, made, new_key))
        else:
            made = source
        parent[key] = made  # type: ignore[index]
    return root[0]
