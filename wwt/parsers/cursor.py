"""Cursor: the CLI agent's transcripts (``~/.cursor/projects/<project>/agent-transcripts/<id>.jsonl``) and the
editor's chats in its global ``state.vscdb`` (table ``cursorDiskKV``). Formats in docs/formats-notes.md.

Decisions:
* Transcript lines are ``{role, message: {content: [blocks]}}`` with no time field: the session takes the file's
  times (modification = last activity), except that a prompt preceded by Cursor's ``<timestamp>`` carries that
  time and the session starts at the first one. The typed prompt is the ``<user_query>`` part of a user message;
  what Cursor wraps around it (open files, rules, reminders, a finished task's ``<system_notification>``) is not
  the user's words, nor is the fixed prompt it writes after such a notice (``wwt.parsers.noise``). An answer's
  ``[REDACTED]`` (hidden reasoning) is not its words; a ``turn_ended`` line marks a turn's end. Appended
  lines are read from the last offset (message ids are byte offsets). A subagent's transcript
  (``<parent id>/subagents/<id>.jsonl``) is its own session under that parent. A copied transcript is
  recognised outside ``agent-transcripts`` by its lines: exactly ``{role, message: {content: [typed blocks]}}``.
* Older transcripts are plain text (``agent-transcripts/<id>.txt`` or ``<id>/<id>.txt``): ``user:`` /
  ``assistant:`` (or ``A:``) marker lines; in an assistant turn ``[Thinking]``, ``[Tool call] <name>`` and ``[Tool result]
  [<name>]`` markers whose bodies are the rest of their line and the indented lines after it (``key: value`` or
  ``key=value`` arguments). Read whole (ids are line numbers); skipped when a ``.jsonl`` of the same id is beside it.
* The editor database is read like OpenCode's: read-only URI, ``query_only``, never locking the editor's
  writer. ``composerData:<id>`` gives the chat (title, times, ordered bubble headers or, in older versions,
  an inline ``conversation``), ``bubbleId:<id>:<bubble>`` each message (type 1 user, 2 assistant; ``thinking``,
  ``toolFormerData`` for tool calls). The project comes from the workspace databases that list the chat.
  Whole-file source: every parse reads every chat.
* The CLI's chat store (``~/.cursor/chats/<workspace hash>/<agent id>/store.db``) is read the same read-only way:
  meta row ``'0'`` is the agent metadata JSON in hex (title ``name``, ``createdAt`` ms, ``latestRootBlobId``);
  the root blob (protobuf) lists the conversation's message blobs in order (field 1, 32-byte ids) and the
  workspace URI (field 9); each message blob is ``{role, content}`` JSON (text, ``reasoning``, ``tool-call``,
  ``tool-result`` parts). System messages and the ``<user_info>`` context are not indexed; blobs no root lists
  (earlier roots) are not read. A missing or undecodable message blob is counted and skipped.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from wwt.models import FLAG_ERROR, Message, ParseReport, Session
from wwt.parsers.claude_code import project_name, project_root
from wwt.parsers.common import (
    bound_text,
    flatten_text,
    iso_timestamp,
    iter_jsonl,
    nfc,
    render_tool_call,
    rewritten_whole,
)
from wwt.parsers.noise import clean_user_text
from wwt.parsers.opencode import DATABASE_ERRORS, SQLITE_MAGIC, open_readonly, open_readonly_or_note

PLATFORM = "cursor"
DB_NAME = "state.vscdb"
STORE_NAME = "store.db"  # the CLI's chat store, one per chat
# The CLI's tables, as its SQLiteBlobStoreWithMetadata creates them: in the SQLite header page, so in the head.
STORE_TABLES = (b"CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)", b"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
# Block type spellings other readers meet in transcripts (agent-sessions' Cursor parser accepts the same).
CALL_BLOCKS = frozenset({"tool_use", "tool-use", "tool_call", "tool-call"})
RESULT_BLOCKS = frozenset({"tool_result", "tool-result"})
# Keys of other agents' JSONL lines: never in a Cursor transcript line, even one with keys added later.
OTHER_AGENTS_KEYS = frozenset({"type", "uuid", "parentUuid", "sessionId", "timestamp", "payload", "id"})
_CUT_LINE_RE = re.compile(rb'\{"role":"(?:user|assistant)","message":\{"content":')
_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_QUERY_OPEN, _QUERY_CLOSE = "<user_query>", "</user_query>"
_USER_INFO_RE = re.compile(r"<user_info>.*?</user_info>", re.DOTALL)
_WORKSPACE_LINE_RE = re.compile(r"^Workspace Path:[ \t]*(/.*?)[ \t]*$", re.MULTILINE)
# What Cursor puts before a prompt: "<timestamp>Friday, Sep 4, 2026, 10:37 AM (UTC+5:30)</timestamp>".
_STAMP_RE = re.compile(
    r"<timestamp>\s*(?:[A-Za-z]+,\s*)?(?P<month>[A-Za-z]{3,9})\.?\s+(?P<day>\d{1,2}),\s*(?P<year>\d{4}),?\s+"
    r"(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*(?P<half>[AaPp][Mm])\s*"
    r"\(UTC(?:(?P<sign>[+-])(?P<oh>\d{1,2})(?::?(?P<om>\d{2}))?)?\)\s*</timestamp>"
)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# Where hidden reasoning was, Cursor writes this in the answer: a text block of its own, or after the words.
_HIDDEN = "[REDACTED]"
_TRAILING_HIDDEN_RE = re.compile(r"(?:\A|\n)[ \t]*\[REDACTED\][ \t]*\Z")
_MARKER_LINES = frozenset({"turn_ended"})  # ``{"type": "turn_ended", "status": …}``: a turn's end, no words


class CursorParser:
    platform = PLATFORM

    def default_roots(self) -> list[Path]:
        # The editor's global database itself, not its globalStorage folder (every extension's files live there).
        return [Path.home() / ".cursor" / "projects", Path.home() / ".cursor" / "chats",
                cursor_user_dir() / "globalStorage" / DB_NAME]

    def detect(self, path: Path, head: bytes) -> bool:
        return looks_like_cursor(path, head)

    def parse(self, path: Path, report: ParseReport, start_offset: int = 0) -> Iterator[Session]:
        report.platform = PLATFORM
        path = Path(path)
        if path.suffix == ".txt":
            yield from _parse_text_transcript(path, report, start_offset)
        elif path.name in (DB_NAME, STORE_NAME):
            rewritten_whole(path, report, start_offset)
            yield from (_parse_db(path, report) if path.name == DB_NAME else _parse_store(path, report))
        else:
            yield from _parse_transcript(path, report, start_offset)


def cursor_user_dir() -> Path:
    """The editor's ``User`` folder: ``~/Library/Application Support/Cursor/User`` on macOS, else
    ``$XDG_CONFIG_HOME/Cursor/User`` (``~/.config``)."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "Cursor" / "User"
    raw = os.environ.get("XDG_CONFIG_HOME")
    return (Path(raw).expanduser() if raw else Path.home() / ".config") / "Cursor" / "User"


def looks_like_cursor(path: Path, head: bytes) -> bool:
    """The editor's global ``state.vscdb`` (SQLite, under a ``Cursor…/User/globalStorage`` folder) or a
    transcript whose first line is ``{role, message: {content: [...]}}`` and that sits in ``agent-transcripts``
    (where keys added by later versions are tolerated, other agents' envelope keys are not), opens with a
    ``<user_query>``, or holds exactly that shape with typed content blocks."""
    if path.name == STORE_NAME:
        # Its tables, or (a live store whose schema still sits in its WAL) where the CLI keeps it.
        return head.startswith(SQLITE_MAGIC) and (
            all(table in head for table in STORE_TABLES) or _in_cursor_chats(path)
        )
    if path.name == DB_NAME:
        return (
            head.startswith(SQLITE_MAGIC)
            and path.parent.name == "globalStorage"
            and any(part.lower().startswith("cursor") for part in path.parts[:-2])
        )
    if path.suffix == ".txt":
        return is_text_transcript(path, head)
    if not path.name.endswith(".jsonl"):
        return False
    lines = head.split(b"\n")
    for index, raw in enumerate(lines[:5]):
        raw = raw.strip()
        if not raw:
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            # A first prompt longer than the head (Cursor prepends <user_info>, rules…): its opening decides.
            return index == len(lines) - 1 and bool(_CUT_LINE_RE.match(raw)) and (
                "agent-transcripts" in path.parts or b"<user_query>" in raw
            )
        if not (isinstance(obj, dict) and obj.get("role") in ("user", "assistant", "system")):
            return False
        message = obj.get("message")
        if not isinstance(message, dict):
            return False
        in_transcripts = "agent-transcripts" in path.parts
        extra = set(obj) - {"role", "message"}
        if extra and (not in_transcripts or extra & OTHER_AGENTS_KEYS):
            return False  # Claude/Qwen/Codex lines carry more keys (uuid, type, timestamp, payload)
        if obj["role"] == "system" or not isinstance(message.get("content"), (list, str)):
            if in_transcripts:
                continue  # a system line or one without content: the next line decides
            return False
        if in_transcripts or b"<user_query>" in raw:
            return True
        return set(message) == {"content"} and _typed_blocks(message["content"])
    return False


def _in_cursor_chats(path: Path) -> bool:
    """``…/.cursor/chats/<workspace hash>/<agent id>/store.db``."""
    parents = path.parents
    return len(parents) > 3 and parents[2].name == "chats" and parents[3].name == ".cursor"


def _typed_blocks(content: Any) -> bool:
    """A non-empty list of ``{"type": …}`` content blocks: the transcript's own shape, copied anywhere."""
    return isinstance(content, list) and bool(content) and all(
        isinstance(b, dict) and isinstance(b.get("type"), str) for b in content
    )


# ------------------------------------------------------------------------------------------ transcripts


def _file_times(path: Path) -> tuple[str | None, str | None]:
    try:
        info = path.stat()
    except OSError:
        return None, None
    born = getattr(info, "st_birthtime", None) or info.st_mtime
    return iso_timestamp(min(born, info.st_mtime)), iso_timestamp(info.st_mtime)


def _project_of(path: Path) -> str | None:
    """``~/.cursor/projects/<slug>/agent-transcripts/…``: the slug is the workspace path with ``/`` as ``-``
    (lossy), so its last part is the best name we have."""
    parts = path.parts
    if "agent-transcripts" in parts:
        index = parts.index("agent-transcripts")
        if index >= 1:
            slug = parts[index - 1]
            return slug.rsplit("-", 1)[-1] or slug
    return None


def user_query_text(text: str) -> str | None:
    """What the user typed: the ``<user_query>`` parts when present (the rest is context Cursor adds); else the
    text without the ``<user_info>`` block (OS, shell, workspace path) and the ``<timestamp>`` Cursor puts
    before it."""
    queries = _user_queries(text)
    if queries:
        text = "\n\n".join(q for q in queries if q.strip())
    else:
        text = _STAMP_RE.sub("", _USER_INFO_RE.sub("", text))
    return clean_user_text(text)


def _user_queries(text: str) -> list[str]:
    r"""Each ``<user_query>`` part up to the next ``</user_query>``, stripped, in order (what
    ``re.findall(r"<user_query>\s*(.*?)\s*</user_query>", text, re.DOTALL)`` gives), found by substring search: a
    lazy regex group tries its closing tag at every character of a long prompt."""
    out: list[str] = []
    at = text.find(_QUERY_OPEN)
    while at >= 0:
        end = text.find(_QUERY_CLOSE, at + len(_QUERY_OPEN))
        if end < 0:
            break
        out.append(text[at + len(_QUERY_OPEN):end].strip())
        at = text.find(_QUERY_OPEN, end + len(_QUERY_CLOSE))
    return out


def prompt_timestamp(text: str) -> str | None:
    """The UTC time of the ``<timestamp>`` Cursor writes before a prompt (a weekday, an English month name, a
    12-hour clock, the machine's UTC offset); None without one or for a date that does not exist."""
    match = _STAMP_RE.search(text) if "<timestamp>" in text else None
    if match is None:
        return None
    month = match["month"][:3].lower()
    hour = int(match["hour"])
    if month not in _MONTHS or not 1 <= hour <= 12 or int(match["minute"]) > 59:
        return None
    hour = hour % 12 + (12 if match["half"].lower() == "pm" else 0)
    offset = "+00:00"
    if match["sign"]:
        offset = f"{match['sign']}{int(match['oh']):02d}:{int(match['om'] or 0):02d}"
    return iso_timestamp(f"{int(match['year']):04d}-{_MONTHS.index(month) + 1:02d}-{int(match['day']):02d}"
                         f"T{hour:02d}:{match['minute']}:00{offset}")


def answer_text(text: str) -> str:
    """An assistant text block without Cursor's hidden-reasoning placeholder ("" when it is nothing else)."""
    text = text.strip()
    if _HIDDEN in text:
        text = _TRAILING_HIDDEN_RE.sub("", text).strip()
    return text


def _parent_of(path: Path) -> str | None:
    """A subagent's transcript sits in ``agent-transcripts/<parent id>/subagents/`` (ids are UUIDs)."""
    if path.parent.name != "subagents" or not _UUID_RE.fullmatch(path.parent.parent.name):
        return None
    return path.parent.parent.name


def _parse_transcript(path: Path, report: ParseReport, start_offset: int) -> Iterator[Session]:
    started, ended = _file_times(path)
    sid = path.stem
    session = Session(session_id=sid, platform=PLATFORM, source_path=str(path), project=_project_of(path),
                      started_at=started, ended_at=ended, parent_session_id=_parent_of(path))
    for offset, _end, obj in iter_jsonl(path, report, start_offset):
        role = obj.get("role")
        message = obj.get("message")
        if role not in ("user", "assistant") or not isinstance(message, dict):
            if obj.get("type") not in _MARKER_LINES:
                report.unknown_records += 1
            continue
        content = message.get("content")
        if not isinstance(content, (list, str)):
            report.unknown_records += 1  # a line with no content to read
            continue
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        mid = f"{sid}@{offset}"
        if role == "user":
            session.messages.extend(_user_blocks(mid, blocks, report))
        else:
            session.messages.extend(_assistant_blocks(mid, blocks))
    stamps = sorted(m.timestamp for m in session.messages if m.timestamp)
    if stamps:  # the prompts' own times: the session began with the first, and lasted at least to the last
        session.started_at = stamps[0]
        session.ended_at = max(stamps[-1], session.ended_at or stamps[-1])
    if session.messages:
        yield session


def _user_blocks(mid: str, blocks: list[Any], report: ParseReport) -> list[Message]:
    out: list[Message] = []
    texts = []
    for index, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        if block.get("type") in RESULT_BLOCKS:
            text = flatten_text(block.get("content"))
            failed = bool(block.get("is_error"))
            name = block.get("name") if isinstance(block.get("name"), str) else None
            out.append(Message(f"{mid}#result:{block.get('tool_use_id') or index}", "user", "tool_result",
                               nfc(bound_text(text)), tool_name=name,
                               flags=frozenset({FLAG_ERROR}) if failed else frozenset()))
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
    if texts:
        joined = "\n\n".join(texts)
        cleaned = user_query_text(joined)
        if cleaned is None:
            report.skipped_messages += 1
        else:
            out.insert(0, Message(mid, "user", "text", nfc(cleaned), prompt_timestamp(joined)))
    return out


def _assistant_blocks(mid: str, blocks: list[Any]) -> list[Message]:
    out: list[Message] = []
    for index, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and isinstance(block.get("text"), str) and (answer := answer_text(block["text"])):
            out.append(Message(f"{mid}#{index}", "assistant", "text", nfc(answer)))
        elif btype == "thinking" and isinstance(block.get("thinking"), str) and block["thinking"].strip():
            out.append(Message(f"{mid}#{index}", "assistant", "thinking", nfc(block["thinking"].strip())))
        elif btype in CALL_BLOCKS:
            name = block.get("name") if isinstance(block.get("name"), str) else "tool"
            out.append(Message(f"{mid}#call:{block.get('id') or index}", "assistant", "tool_call",
                               nfc(render_tool_call(name, block.get("input"))), tool_name=name))
    return out


# ------------------------------------------------------------------------------ plain-text transcripts

_TEXT_ROLES = {"user:": "user", "assistant:": "assistant", "A:": "assistant"}  # "A:" in some versions
_TEXT_MARKERS = ("[Thinking]", "[Tool call]", "[Tool result]")
_ARG_RE = re.compile(r"^([A-Za-z_][\w.-]*)\s*(?::|=)\s?(.*)$")


def is_text_transcript(path: Path, head: bytes) -> bool:
    """A ``.txt`` inside ``agent-transcripts`` whose first non-blank line is a ``user:`` / ``assistant:`` marker."""
    if "agent-transcripts" not in path.parts:
        return False
    first = next((line.strip() for line in head.split(b"\n") if line.strip()), b"")
    return first in (b"user:", b"assistant:", b"A:")


def _parse_text_transcript(path: Path, report: ParseReport, start_offset: int) -> Iterator[Session]:
    rewritten_whole(path, report, start_offset)
    twin = path.with_suffix(".jsonl")
    if twin.is_file():
        report.note(f"skipped: {twin.name} beside it holds this session")
        return
    try:
        text = path.read_bytes().decode("utf-8", "replace")
    except OSError as exc:
        report.note(f"cannot read: {exc.strerror or exc}")
        return
    started, ended = _file_times(path)
    sid = path.stem
    session = Session(session_id=sid, platform=PLATFORM, source_path=str(path), project=_project_of(path),
                      started_at=started, ended_at=ended, parent_session_id=_parent_of(path))
    for role, number, lines in _text_turns(text):
        report.lines += 1
        mid = f"{sid}@L{number}"
        if role == "user":
            cleaned = user_query_text("\n".join(lines))
            if cleaned is None:
                report.skipped_messages += 1
            else:
                session.messages.append(Message(mid, "user", "text", nfc(cleaned)))
        else:
            session.messages.extend(_text_assistant(mid, lines))
    if session.messages:
        yield session


def _text_turns(text: str) -> Iterator[tuple[str, int, list[str]]]:
    """(role, line number of its marker, its lines) for each turn; text before the first marker is not a turn."""
    role, number, lines = None, 0, []
    for index, line in enumerate(text.splitlines()):
        marker = _TEXT_ROLES.get(line.strip())
        if marker is not None:
            if role is not None:
                yield role, number, lines
            role, number, lines = marker, index + 1, []
        elif role is not None:
            lines.append(line)
    if role is not None:
        yield role, number, lines


def _text_assistant(mid: str, lines: list[str]) -> list[Message]:
    """An assistant turn: prose runs, and each marker with its body (rest of its line + the indented lines)."""
    out: list[Message] = []
    prose: list[str] = []
    last_call: str | None = None

    def flush() -> None:
        body = "\n".join(prose).strip()
        if body:
            out.append(Message(f"{mid}#{len(out)}", "assistant", "text", nfc(body)))
        prose.clear()

    index = 0
    while index < len(lines):
        stripped = lines[index].strip()
        marker = next((m for m in _TEXT_MARKERS if stripped.startswith(m)), None)
        if marker is None:
            prose.append(lines[index])
            index += 1
            continue
        flush()
        tail = stripped[len(marker):].strip()
        index += 1
        body: list[str] = []
        while index < len(lines) and (not lines[index].strip() or lines[index][:1] in (" ", "\t")):
            if any(lines[index].strip().startswith(m) for m in _TEXT_MARKERS):
                break
            body.append(lines[index])
            index += 1
        block = _dedent(body)
        number = len(out)
        if marker == "[Thinking]":
            thought = "\n".join(part for part in (tail, block) if part)
            if thought:
                out.append(Message(f"{mid}#{number}", "assistant", "thinking", nfc(thought)))
        elif marker == "[Tool call]":
            last_call = tail or "tool"
            out.append(Message(f"{mid}#call:{number}", "assistant", "tool_call",
                               nfc(render_tool_call(last_call, _text_args(block))), tool_name=last_call))
        else:
            out.append(Message(f"{mid}#result:{number}", "user", "tool_result", nfc(bound_text(block)),
                               tool_name=tail or last_call))
    flush()
    return out


def _dedent(lines: list[str]) -> str:
    """The lines without their common indentation, blank lines at either end dropped."""
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return "\n".join(line[cut:].rstrip() for line in lines).strip("\n")


def _text_args(block: str) -> Any:
    """A tool call's body as arguments: JSON when it is JSON, ``key: value`` / ``key=value`` lines as a dict,
    else the text itself."""
    if not block.strip():
        return None
    if block.lstrip().startswith("{"):
        try:
            return json.loads(block)
        except ValueError:
            pass
    args: dict[str, str] = {}
    for line in block.splitlines():
        if not line.strip():
            continue
        found = _ARG_RE.match(line.strip())
        if found is None or line[:1] in (" ", "\t"):
            return block
        args[found.group(1)] = found.group(2).strip()
    return args


# ------------------------------------------------------------------------------------------- database


def _parse_db(path: Path, report: ParseReport) -> Iterator[Session]:
    conn = open_readonly_or_note(path, report)
    if conn is None:
        return
    try:
        with conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "cursorDiskKV" not in tables:
                report.note("no cursorDiskKV table: no editor chats")
                return
            composers = conn.execute(
                "SELECT key, value FROM cursorDiskKV WHERE key LIKE 'composerData:%' ORDER BY key"
            ).fetchall()
            bubbles = {
                key: value
                for key, value in conn.execute("SELECT key, value FROM cursorDiskKV WHERE key LIKE 'bubbleId:%'")
            }
    except DATABASE_ERRORS as exc:
        report.note(f"database read error: {exc}"[:200])
        return
    finally:
        conn.close()
    folders = _workspace_folders(path)
    for key, value in composers:
        data = _loads(value, report)
        if data is None:
            continue
        cid = data.get("composerId") if isinstance(data.get("composerId"), str) else key.split(":", 1)[1]
        session = _composer_session(path, cid, data, bubbles, folders.get(cid), report)
        if session is not None:
            yield session


def _loads(value: Any, report: ParseReport) -> dict[str, Any] | None:
    report.lines += 1
    try:
        obj = json.loads(value) if isinstance(value, (str, bytes)) else None
    except ValueError:
        obj = None
    if not isinstance(obj, dict):
        report.bad_lines += 1
        return None
    return obj


def _workspace_folders(db: Path) -> dict[str, str]:
    """composerId → workspace folder, from ``workspaceStorage/*/workspace.json`` + the ``composer.composerData``
    item of each workspace database beside the global one. Unreadable workspaces are skipped."""
    out: dict[str, str] = {}
    storage = db.parent.parent / "workspaceStorage"
    try:
        workspaces = [p for p in storage.iterdir() if p.is_dir()]
    except OSError:
        return out
    for folder in workspaces:
        try:
            meta = json.loads((folder / "workspace.json").read_text(encoding="utf-8"))
            uri = meta.get("folder") if isinstance(meta, dict) else None
            if not isinstance(uri, str) or not uri.startswith("file://") or not (folder / DB_NAME).is_file():
                continue
            conn = open_readonly(folder / DB_NAME)
            try:
                row = conn.execute("SELECT value FROM ItemTable WHERE key = 'composer.composerData'").fetchone()
            finally:
                conn.close()
            listed = json.loads(row[0]) if row else {}
        except (OSError, ValueError, sqlite3.Error):
            continue
        where = unquote(urlparse(uri).path)
        for item in listed.get("allComposers", []) if isinstance(listed, dict) else []:
            if isinstance(item, dict) and isinstance(item.get("composerId"), str):
                out[item["composerId"]] = where
    return out


def _composer_session(
    path: Path, cid: str, data: dict[str, Any], bubbles: dict[str, Any], folder: str | None, report: ParseReport
) -> Session | None:
    name = data.get("name") if isinstance(data.get("name"), str) and data["name"].strip() else None
    session = Session(
        session_id=cid,
        platform=PLATFORM,
        source_path=str(path),
        project=Path(folder).name if folder else None,
        project_path=folder,
        cwd=folder,
        started_at=iso_timestamp(data.get("createdAt")),
        ended_at=iso_timestamp(data.get("lastUpdatedAt")) or iso_timestamp(data.get("createdAt")),
        title=nfc(name.strip()) if name else None,
    )
    headers = data.get("fullConversationHeadersOnly")
    if isinstance(headers, list) and headers:
        items = []
        for header in headers:
            bid = header.get("bubbleId") if isinstance(header, dict) else None
            raw = bubbles.get(f"bubbleId:{cid}:{bid}") if bid else None
            bubble = _loads(raw, report) if raw is not None else None
            if bubble is not None:
                bubble.setdefault("bubbleId", bid)
                items.append(bubble)
    else:
        items = [b for b in data.get("conversation") or [] if isinstance(b, dict)]  # older: inline bubbles
    for index, bubble in enumerate(items):
        session.messages.extend(_bubble(cid, index, bubble, session.started_at, report))
    if folder is None:
        folder = _bubble_folder(items)
        if folder:
            session.project, session.project_path, session.cwd = Path(folder).name or folder, folder, folder
    return session if session.messages else None


def _bubble_folder(bubbles: list[dict[str, Any]]) -> str | None:
    """The workspace a chat's bubbles name (for a chat no workspace database lists): ``workspaceProjectDir``,
    else a ``workspaceUris`` entry, a local ``file://`` or remote ``vscode-remote://`` folder."""
    for bubble in bubbles:
        folder = bubble.get("workspaceProjectDir")
        if isinstance(folder, str) and folder.strip():
            return folder.strip()
        uris = bubble.get("workspaceUris")
        for uri in uris if isinstance(uris, list) else []:
            if isinstance(uri, str) and uri.startswith(("file://", "vscode-remote://")):
                where = unquote(urlparse(uri).path)
                if where.strip("/"):
                    return where
    return None


def _bubble_text(bubble: dict[str, Any]) -> str:
    """A bubble's words: ``text``, else (other versions, as other readers take them) ``rawText`` or ``content``."""
    for key in ("text", "rawText", "content"):
        value = bubble.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def _bubble(cid: str, index: int, bubble: dict[str, Any], default_ts: str | None, report: ParseReport) -> list[Message]:
    bid = str(bubble.get("bubbleId") or index)
    ts = iso_timestamp(bubble.get("createdAt")) or iso_timestamp(bubble.get("timestamp")) or default_ts
    text = _bubble_text(bubble)
    if bubble.get("type") == 1:
        cleaned = clean_user_text(text)
        if cleaned is None:
            report.skipped_messages += 1
            return []
        return [Message(bid, "user", "text", nfc(cleaned), ts)]
    if bubble.get("type") != 2:
        report.unknown_records += 1
        return []
    out: list[Message] = []
    thinking = bubble.get("thinking")
    thought = thinking.get("text") if isinstance(thinking, dict) else None
    if isinstance(thought, str) and thought.strip():
        out.append(Message(f"{bid}#thinking", "assistant", "thinking", nfc(thought.strip()), ts))
    if text.strip():
        out.append(Message(bid, "assistant", "text", nfc(text.strip()), ts))
    tool = bubble.get("toolFormerData")
    if isinstance(tool, dict) and isinstance(tool.get("name"), str):
        name = tool["name"]
        out.append(Message(f"{bid}#call", "assistant", "tool_call", nfc(render_tool_call(name, tool.get("rawArgs"))),
                           ts, tool_name=name))
        result = tool.get("result")
        if result not in (None, ""):
            body = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
            failed = tool.get("status") == "error"
            out.append(Message(f"{bid}#result", "user", "tool_result", nfc(bound_text(body)), ts, tool_name=name,
                               flags=frozenset({FLAG_ERROR}) if failed else frozenset()))
    return out


# ------------------------------------------------------------------------------------------ CLI chat store


def _parse_store(path: Path, report: ParseReport) -> Iterator[Session]:
    conn = open_readonly_or_note(path, report)
    if conn is None:
        return
    try:
        with conn:
            row = conn.execute("SELECT value FROM meta WHERE key = '0'").fetchone()
            meta = _store_meta(row[0] if row else None)
            root_id = meta.get("latestRootBlobId") if isinstance(meta.get("latestRootBlobId"), str) else None
            root = _blob(conn, root_id) if root_id else None
            ids, workspace = _root_fields(root) if root is not None else ([], None)
            blobs = [(bid, _blob(conn, bid)) for bid in ids]
    except DATABASE_ERRORS as exc:
        report.note(f"database read error: {exc}"[:200])
        return
    finally:
        conn.close()
    if root is None:
        report.note("no conversation root in the chat store")
        return
    agent = meta.get("agentId") if isinstance(meta.get("agentId"), str) and meta["agentId"].strip() else None
    sid = agent.strip() if agent else path.parent.name
    name = meta.get("name") if isinstance(meta.get("name"), str) and meta["name"].strip() else None
    started, ended = _store_times(path, meta)
    session = Session(session_id=sid, platform=PLATFORM, source_path=str(path), started_at=started, ended_at=ended,
                      title=nfc(name.strip()) if name else None)
    seen: dict[str, int] = {}
    for bid, data in blobs:
        report.lines += 1
        message = _message_blob(data)
        if message is None:
            report.bad_lines += 1
            continue
        seen[bid] = seen.get(bid, 0) + 1  # content-addressed: the same words twice are one blob listed twice
        mid = bid[:32] if seen[bid] == 1 else f"{bid[:32]}~{seen[bid]}"
        session.messages.extend(_store_message(mid, message, report))
        if workspace is None:
            workspace = _workspace_of(message)
    if workspace:
        session.cwd = workspace
        session.project_path = project_root(workspace)
        session.project = project_name(session.project_path)
    if session.messages:
        yield session


def _store_meta(value: Any) -> dict[str, Any]:
    """Meta row '0': the metadata JSON written as hex text (plain JSON also accepted)."""
    if not isinstance(value, (str, bytes)):
        return {}
    raw = value.decode("ascii", "replace") if isinstance(value, bytes) else value
    try:
        obj = json.loads(bytes.fromhex(raw.strip()))
    except ValueError:
        try:
            obj = json.loads(raw)
        except ValueError:
            return {}
    return obj if isinstance(obj, dict) else {}


def _blob(conn: sqlite3.Connection, bid: str) -> bytes | None:
    row = conn.execute("SELECT data FROM blobs WHERE id = ?", (bid,)).fetchone()
    data = row[0] if row else None
    if isinstance(data, str):
        data = data.encode("utf-8")
    return data if isinstance(data, bytes) else None


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """A protobuf varint at ``pos``: (value, next position); ValueError when cut or longer than 10 bytes."""
    value = shift = 0
    for index in range(pos, min(pos + 10, len(data))):
        byte = data[index]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, index + 1
        shift += 7
    raise ValueError("bad varint")


def _fields(data: bytes) -> Iterator[tuple[int, int, Any]]:
    """The top-level protobuf fields of ``data``: (number, wire type, value: int or bytes). Stops at damage."""
    pos = 0
    try:
        while pos < len(data):
            key, pos = _varint(data, pos)
            number, wire = key >> 3, key & 7
            if wire == 0:
                value, pos = _varint(data, pos)
            elif wire == 2:
                size, pos = _varint(data, pos)
                if pos + size > len(data):
                    return
                value, pos = data[pos:pos + size], pos + size
            elif wire in (1, 5):
                width = 8 if wire == 1 else 4
                value, pos = data[pos:pos + width], pos + width
            else:
                return
            yield number, wire, value
    except ValueError:
        return


def _root_fields(root: bytes) -> tuple[list[str], str | None]:
    """The root blob's message ids (field 1, 32 bytes each, in order) and workspace folder (field 9, a URI)."""
    ids: list[str] = []
    workspace = None
    for number, wire, value in _fields(root):
        if number == 1 and wire == 2 and len(value) == 32:
            ids.append(value.hex())
        elif number == 9 and wire == 2 and workspace is None:
            text = value.decode("utf-8", "replace").strip()
            workspace = unquote(urlparse(text).path) if text.startswith("file://") else text if text.startswith("/") else None
    return ids, workspace or None


def _message_blob(data: bytes | None) -> dict[str, Any] | None:
    """A message blob's ``{role, content}``: the JSON itself, or the JSON a protobuf node carries in field 4."""
    if data is None:
        return None
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):
        obj = None
        if data[:1] == b"\x0a":
            for number, wire, value in _fields(data):
                if number == 4 and wire == 2:
                    try:
                        obj = json.loads(value)
                    except (ValueError, RecursionError):
                        obj = None
                    break
    return obj if isinstance(obj, dict) and isinstance(obj.get("role"), str) else None


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []


def _store_message(mid: str, message: dict[str, Any], report: ParseReport) -> list[Message]:
    role, parts = message["role"], _parts(message.get("content"))
    out: list[Message] = []
    if role == "system":
        report.skipped_messages += 1  # Cursor's instructions to the model
        return out
    if role == "user":
        text = "\n\n".join(p["text"] for p in parts if p.get("type") == "text" and isinstance(p.get("text"), str))
        cleaned = user_query_text(text)
        if cleaned is None:
            report.skipped_messages += 1
        else:
            out.append(Message(mid, "user", "text", nfc(cleaned)))
    for index, part in enumerate(parts):
        ptype = part.get("type")
        if role == "assistant" and ptype in ("text", "reasoning") and isinstance(part.get("text"), str):
            if part["text"].strip():
                kind = "text" if ptype == "text" else "thinking"
                out.append(Message(f"{mid}#{index}", "assistant", kind, nfc(part["text"].strip())))
        elif role == "assistant" and ptype in CALL_BLOCKS:
            name = part.get("toolName") if isinstance(part.get("toolName"), str) else "tool"
            out.append(Message(f"{mid}#call:{part.get('toolCallId') or index}", "assistant", "tool_call",
                               nfc(render_tool_call(name, part.get("args", part.get("input")))), tool_name=name))
        elif ptype in RESULT_BLOCKS:
            result = part.get("result", part.get("output"))
            body = result if isinstance(result, str) else flatten_text(result) or json.dumps(result, ensure_ascii=False)
            name = part.get("toolName") if isinstance(part.get("toolName"), str) else None
            failed = bool(part.get("isError"))
            out.append(Message(f"{mid}#result:{part.get('toolCallId') or index}", "user", "tool_result",
                               nfc(bound_text(body)), tool_name=name,
                               flags=frozenset({FLAG_ERROR}) if failed else frozenset()))
    if role not in ("user", "assistant", "tool"):
        report.unknown_records += 1
    return out


def _workspace_of(message: dict[str, Any]) -> str | None:
    """``Workspace Path: /…`` in the ``<user_info>`` block of a user message (a root without field 9)."""
    if message.get("role") != "user":
        return None
    for part in _parts(message.get("content")):
        info = _USER_INFO_RE.search(part.get("text") or "") if isinstance(part.get("text"), str) else None
        found = _WORKSPACE_LINE_RE.search(info.group(0)) if info else None
        if found:
            return found.group(1)
    return None


def _store_times(path: Path, meta: dict[str, Any]) -> tuple[str | None, str | None]:
    """Start: the metadata's ``createdAt`` (ms; a string in some versions), else the file's birth. End: the last
    write to the store or its WAL."""
    created = meta.get("createdAt")
    if isinstance(created, str) and created.strip().isdigit():
        created = int(created.strip())
    started, ended = _file_times(path)
    try:
        wal = os.stat(f"{path}-wal").st_mtime
        ended = iso_timestamp(max(path.stat().st_mtime, wal))
    except OSError:
        pass
    return iso_timestamp(created) or started, ended
