"""Goose (block/goose: CLI and desktop app) sessions in ``<data>/sessions/`` — ``~/.local/share/goose``
(``$XDG_DATA_HOME/goose``), or ``$GOOSE_PATH_ROOT/data`` when that absolute path is set. Read from goose's own
code (github.com/block/goose, ``crates/goose/src``): ``session/storage.rs`` (JSONL writer), ``session/legacy.rs``
(how the SQLite store imports JSONL), ``session/session_manager.rs`` and ``session/migrations.rs`` (the SQLite
schema), ``conversation/message.rs`` (``Message``/``MessageContent`` serialisation), ``config/paths.rs``.

Decisions:
* Older releases write ``<id>.jsonl`` (id ``yyyymmdd_hhmmss`` or a ``--name``): a ``SessionMetadata`` line
  (``working_dir``, ``description``, ``message_count``, token counts; ``working_dir`` missing in the oldest)
  then one ``Message`` a line. Every save rewrites the whole file (``save_messages_with_metadata``): parsed
  whole, ``requires_full_reparse`` on a resume. A first line that is a message is read as one (as goose does).
* Newer releases keep every session in ``sessions.db`` (tables ``sessions`` — id ``yyyymmdd_N``, ``name`` (older
  ``description``), ``working_dir``, ``session_type``, ``created_at``/``updated_at`` — and ``messages`` —
  ``role``, ``content_json``, ``created_timestamp`` (epoch s), ``metadata_json``, ``message_id`` since schema 7).
  Opened read-only (``open_readonly_or_note``), one session's messages at a time. On first start that store
  imports the ``.jsonl`` files beside it and leaves them: a ``.jsonl`` with ``sessions.db`` beside it is
  skipped (noted). ``hidden`` sessions (goose's own internal runs) are skipped; ``sub_agent`` ones are flagged.
* A message is ``{id?, role: user|assistant, created, content: [...], metadata: {userVisible, agentVisible}}``;
  ``content`` items by ``type``: ``text`` (the user's words / the answer), ``image`` (dropped), ``toolRequest``
  (``toolCall: {status: success, value: {name, arguments}}`` or ``{status: error, error}``) and
  ``frontendToolRequest`` → tool call, ``toolResponse`` (``toolResult: {status: success, value: CallToolResult
  {content: [...], isError}`` — older: a bare content list — or ``{status: error, error}``) → tool result named
  after its call, ``thinking`` → thinking. Confirmation prompts, redacted thinking and system notifications are
  UI bookkeeping: skipped silently; an unknown type is counted.
* ``userVisible: false`` marks what only the model saw (compaction summaries and their continuation prompts,
  injected memory): never indexed (counted as skipped). Compaction hides the originals from the model, not the
  user, so they are still read.
* Resume: ``goose session --resume --session-id <id>`` (ids of the ``yyyymmdd_…`` shape only).
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wwt.models import FLAG_ERROR, FLAG_SUBAGENT, Message, ParseReport, Session, earliest, latest
from wwt.parsers.claude_code import project_name, project_root
from wwt.parsers.common import (
    bound_text,
    first_head_value,
    flatten_text,
    iso_timestamp,
    iter_jsonl,
    nfc,
    render_tool_call,
    rewritten_whole,
)
from wwt.parsers.noise import clean_user_text
from wwt.parsers.opencode import DATABASE_ERRORS, SQLITE_MAGIC, open_readonly_or_note

PLATFORM = "goose"
DB_NAME = "sessions.db"
ROLES = frozenset({"user", "assistant"})
SILENT_TYPES = frozenset({"toolConfirmationRequest", "actionRequired", "redactedThinking", "systemNotification",
                          "conversationCompacted", "contextLengthExceeded", "summarizationRequested"})
METADATA_KEYS = ("description", "message_count")  # both in every SessionMetadata line goose wrote
SESSIONS_SQL = "SELECT * FROM sessions ORDER BY created_at, id"
# ``metadata_json`` came with schema 3: an older store's rows have none (every message then counts as shown).
MESSAGES_SQL = ("SELECT id, role, content_json, created_timestamp, {metadata} AS metadata_json FROM messages"
                " WHERE session_id = ? ORDER BY timestamp, id")


def goose_data_dir() -> list[Path]:
    """Where goose keeps its data: ``$GOOSE_PATH_ROOT/data`` (absolute paths only, as goose checks), else the
    XDG data folder (macOS: also ``~/Library/Application Support/Block/goose``, the app's own note)."""
    root = os.environ.get("GOOSE_PATH_ROOT")
    if root and os.path.isabs(root):
        return [Path(root) / "data"]
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "share"
    out = [base / "goose"]
    if sys.platform == "darwin":
        out.append(Path.home() / "Library" / "Application Support" / "Block" / "goose")
    return out


class GooseParser:
    platform = PLATFORM

    def default_roots(self) -> list[Path]:
        return [folder / "sessions" for folder in goose_data_dir()]

    def detect(self, path: Path, head: bytes) -> bool:
        return looks_like_goose(path, head)

    def parse(self, path: Path, report: ParseReport, start_offset: int = 0) -> Iterator[Session]:
        report.platform = PLATFORM
        path = Path(path)
        rewritten_whole(path, report, start_offset)  # both forms: the JSONL file too is rewritten whole
        if path.name == DB_NAME:
            yield from _parse_db(path, report)
        elif (path.parent / DB_NAME).exists():
            report.note("skipped: goose's sessions.db beside it holds this session (imported on its first start)")
        else:
            yield from _parse_jsonl(path, report)


def is_goose_message(obj: Any) -> bool:
    """``{role: user|assistant, created: <int>, content: [..]}`` — goose's ``Message`` (``id``/``metadata`` may
    be missing in old files; other agents' lines have no integer ``created`` beside a content list)."""
    return (
        isinstance(obj, dict) and obj.get("role") in ROLES and type(obj.get("created")) is int
        and isinstance(obj.get("content"), list)
    )


def is_goose_metadata(obj: Any) -> bool:
    return isinstance(obj, dict) and all(k in obj for k in METADATA_KEYS) and "role" not in obj


def looks_like_goose(path: Path, head: bytes) -> bool:
    """``sessions.db`` (SQLite) whose schema names goose's columns or, in a ``sessions`` folder, shows no schema, or a
    ``.jsonl`` whose first record is goose session metadata or a goose message."""
    if path.name == DB_NAME:
        if not head.startswith(SQLITE_MAGIC):
            return False
        if b"content_json" in head and b"working_dir" in head:
            return True
        # In a ``sessions`` folder, a file whose head shows no schema (still in the write-ahead log) is goose's; one
        # whose schema is readable and names none of goose's columns is another app's (Cline keeps a
        # ``sessions/sessions.db`` index too).
        return path.parent.name == "sessions" and b"create table" not in head.lower()
    if not path.name.endswith(".jsonl"):
        return False
    obj = first_head_value(head)
    return is_goose_metadata(obj) or is_goose_message(obj)


# --------------------------------------------------------------------------------------------- JSONL


def _parse_jsonl(path: Path, report: ParseReport) -> Iterator[Session]:
    session = Session(session_id=path.stem, platform=PLATFORM, source_path=str(path))
    convert = _Converter(report)
    position = 0
    for offset, _end, obj in iter_jsonl(path, report, 0):
        if offset == 0 and is_goose_metadata(obj):
            _set_meta(session, obj.get("working_dir"), obj.get("description"))
            continue
        if not is_goose_message(obj):
            report.unknown_records += 1
            continue
        # The file is rewritten whole (a new description moves every byte offset): ids are message positions.
        native = obj["id"] if isinstance(obj.get("id"), str) and obj["id"] else f"#{position}"
        position += 1
        session.messages.extend(convert.message(native, obj["role"], obj["content"], obj["created"],
                                                obj.get("metadata")))
    if _finish(session):
        yield session


def _set_meta(session: Session, working_dir: Any, title: Any) -> None:
    if isinstance(working_dir, str) and working_dir.strip():
        session.cwd = working_dir.strip().rstrip("/") or "/"
        session.project_path = project_root(session.cwd)
        session.project = project_name(session.project_path)
    if isinstance(title, str) and title.strip():
        session.title = nfc(title.strip())  # cut after redaction (parse_file)


def _finish(session: Session) -> bool:
    stamps = [m.timestamp for m in session.messages if m.timestamp]
    if stamps:
        session.started_at = earliest([session.started_at, *stamps])
        session.ended_at = latest([session.ended_at, *stamps])
    return bool(session.messages)


# --------------------------------------------------------------------------------------------- SQLite


def _parse_db(path: Path, report: ParseReport) -> Iterator[Session]:
    conn = open_readonly_or_note(path, report)
    if conn is None:
        return
    try:
        conn.row_factory = sqlite3.Row
        conn.text_factory = lambda raw: raw.decode("utf-8", "replace")  # one bad byte must not end the read
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not {"sessions", "messages"} <= tables:
            report.note("not a goose database (no sessions/messages tables)")
            return
        columns = {r[1] for r in conn.execute("PRAGMA table_info(messages)")}
        messages_sql = MESSAGES_SQL.format(metadata="metadata_json" if "metadata_json" in columns else "NULL")
        for row in conn.execute(SESSIONS_SQL).fetchall():
            session = _db_session(conn, path, dict(row), report, messages_sql)
            if session is not None:
                yield session
    except DATABASE_ERRORS as exc:
        report.note(f"database read error: {exc}"[:200])
    finally:
        conn.close()


def _db_session(
    conn: sqlite3.Connection, path: Path, row: dict[str, Any], report: ParseReport, messages_sql: str
) -> Session | None:
    sid = row.get("id")
    if not isinstance(sid, str) or not sid:
        report.unknown_records += 1
        return None
    kind = row.get("session_type") or "user"
    if kind == "hidden":
        return None  # goose's own internal runs, never listed to the user
    parent = row.get("parent_session_id")  # newer stores: the session that started this one
    session = Session(session_id=sid, platform=PLATFORM, source_path=str(path),
                      parent_session_id=parent if isinstance(parent, str) and parent.strip() else None)
    _set_meta(session, row.get("working_dir"), row.get("name") or row.get("description"))
    session.started_at = iso_timestamp(row.get("created_at"))
    session.ended_at = iso_timestamp(row.get("updated_at"))
    convert = _Converter(report, frozenset({FLAG_SUBAGENT}) if kind == "sub_agent" else frozenset())
    for message in conn.execute(messages_sql, (sid,)):
        report.lines += 1
        try:
            content = json.loads(message["content_json"])
        except (TypeError, ValueError):
            report.bad_lines += 1
            continue
        try:
            meta = json.loads(message["metadata_json"]) if message["metadata_json"] else None
        except (TypeError, ValueError):
            meta = None
        if message["role"] not in ROLES or not isinstance(content, list):
            report.unknown_records += 1
            continue
        native = f"msg_{sid}_{message['id']}"  # what goose's schema-7 migration names each row
        session.messages.extend(convert.message(native, message["role"], content, message["created_timestamp"], meta))
    return session if _finish(session) else None


# --------------------------------------------------------------------------------------------- messages


class _Converter:
    """One goose ``Message`` → our messages; remembers each tool call's name for the response that answers it."""

    def __init__(self, report: ParseReport, flags: frozenset[str] = frozenset()) -> None:
        self.report = report
        self.flags = flags
        self.names: dict[str, str] = {}

    def message(self, native: str, role: str, content: list[Any], created: Any, meta: Any) -> list[Message]:
        ts = iso_timestamp(created)
        if isinstance(meta, dict) and meta.get("userVisible") is False:
            self.report.skipped_messages += 1  # only the model saw it (summary, continuation, injected context)
            return []
        out: list[Message] = []
        texts: list[str] = []
        text_at = 0  # the message's text goes where its first text item was (before or after its thinking)
        for index, item in enumerate(content):
            if not isinstance(item, dict):
                self.report.unknown_records += 1
                continue
            kind = item.get("type")
            if kind == "text":
                if isinstance(item.get("text"), str):
                    text_at = text_at if texts else len(out)
                    texts.append(item["text"])
            elif kind in ("toolRequest", "frontendToolRequest"):
                out.append(self._call(native, index, item, ts))
            elif kind == "toolResponse":
                out.append(self._result(native, index, item, ts))
            elif kind == "thinking":
                if isinstance(item.get("thinking"), str) and item["thinking"].strip():
                    out.append(Message(f"{native}#{index}", "assistant", "thinking", nfc(item["thinking"].strip()),
                                       ts, flags=self.flags))
            elif kind == "image" or kind in SILENT_TYPES:
                continue
            else:
                self.report.unknown_records += 1
        text = "\n\n".join(t for t in texts if t.strip())
        if role == "user" and text:
            cleaned = clean_user_text(text)
            if cleaned is None:
                self.report.skipped_messages += 1
            else:
                out.insert(text_at, Message(native, "user", "text", nfc(cleaned), ts, flags=self.flags))
        elif role == "assistant" and text.strip():
            out.insert(text_at, Message(native, "assistant", "text", nfc(text.strip()), ts, flags=self.flags))
        return out

    def _call(self, native: str, index: int, item: dict[str, Any], ts: str | None) -> Message:
        call = item.get("toolCall") if isinstance(item.get("toolCall"), dict) else {}
        value = call.get("value") if isinstance(call.get("value"), dict) else {}
        name = value.get("name") if isinstance(value.get("name"), str) and value["name"] else "tool"
        call_id = str(item.get("id") or index)
        self.names[call_id] = name
        args = value.get("arguments") if call.get("status") != "error" else call.get("error")
        return Message(f"{native}#call:{call_id}", "assistant", "tool_call", nfc(render_tool_call(name, args)), ts,
                       tool_name=name, flags=self.flags)

    def _result(self, native: str, index: int, item: dict[str, Any], ts: str | None) -> Message:
        result = item.get("toolResult") if isinstance(item.get("toolResult"), dict) else {}
        call_id = str(item.get("id") or index)
        failed = result.get("status") == "error"
        if failed:
            text = str(result.get("error") or "")
        else:
            value = result.get("value")
            if isinstance(value, dict):  # CallToolResult
                failed = value.get("isError") is True
                value = value.get("content")
            text = _content_text(value)
        flags = self.flags | {FLAG_ERROR} if failed else self.flags
        return Message(f"{native}#result:{call_id}", "user", "tool_result", nfc(bound_text(text)), ts,
                       tool_name=self.names.get(call_id), flags=flags)


def _content_text(value: Any) -> str:
    """MCP content items: text, and the text of embedded resources (images and blobs dropped)."""
    if not isinstance(value, list):
        return flatten_text(value)
    parts: list[str] = []
    for item in value:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "text" and isinstance(item.get("text"), str):
            parts.append(item["text"])
        elif item.get("type") == "resource" and isinstance(item.get("resource"), dict):
            text = item["resource"].get("text")
            if isinstance(text, str):
                parts.append(text)
    return "\n\n".join(p for p in parts if p)
