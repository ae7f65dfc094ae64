"""Continue (continue.dev: the VS Code / JetBrains extension and the ``cn`` CLI) chat sessions:
``~/.continue/sessions/<sessionId>.json`` (``$CONTINUE_GLOBAL_DIR`` replaces ``~/.continue``), beside a
``sessions.json`` index. Read from Continue's own writer (github.com/continuedev/continue): ``core/util/history.ts``
(``HistoryManager.save``), ``core/util/paths.ts`` (folder, env override), ``core/index.d.ts`` (``Session``,
``ChatHistoryItem``, ``ChatMessage``), ``gui/src/redux/thunks/session.ts`` and
``gui/src/redux/thunks/streamResponseAfterToolCall.ts`` (the IDE), ``extensions/cli/src/session.ts`` and
``extensions/cli/src/services/ChatHistoryService.ts`` (the CLI).

Decisions:
* A session file is one pretty-printed object ``{sessionId, title, workspaceDirectory, history, mode?,
  chatModelTitle?, usage?}``, rewritten whole on every save: parsed whole (``requires_full_reparse`` on a
  resume). ``sessions.json`` is the index (a list of ``{sessionId, title, dateCreated, workspaceDirectory}``):
  never a session itself; its ``dateCreated`` (epoch ms, as a string) is the session's start.
* The log keeps no time per message. Messages carry the session's start; the session ends at the file's mtime
  (the last save); an assistant turn's ``reasoning.startAt`` (epoch ms) times its thinking.
* ``history`` items are ``{message, contextItems, toolCallStates?, reasoning?, conversationSummary?}``.
  ``message.role``: ``user`` (string or ``text``/``imageUrl`` parts: images dropped; the attached
  ``contextItems`` — files, @-mentions — are what the extension adds to the prompt and are never read as the
  user's words), ``assistant`` (text + ``toolCalls``, OpenAI-style ``{id, function: {name, arguments}}``;
  the same calls again in ``toolCallStates[].toolCall`` are read only when ``toolCalls`` is missing),
  ``thinking`` (thinking), ``tool`` (``{content, toolCallId}``: the IDE's tool result, named after its call),
  ``system`` (Continue's own instructions: skipped, counted). The CLI writes no ``tool`` messages: a call's
  result sits in its ``toolCallStates[].output`` (context items) and is read from there when no ``tool``
  message answers it; ``status: "errored"`` flags an error. ``conversationSummary`` (compaction) is kept as a
  flagged assistant text; the CLI's compacted item, whose content is that same summary, yields it once, and the
  ``continue`` the CLI appends after an automatic compaction is not the user's (skipped, counted).
* ``workspaceDirectory`` is a folder URI in the IDE (``file:///home/…``, percent-encoded) and a plain path in the
  CLI: both become the cwd. The title ``New Session`` / ``Untitled Session`` (the writers' placeholders) is none.
* No resume line: ``cn --resume`` takes no id (only the last session) and the IDE reopens chats from its list.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from wwt.models import FLAG_COMPACTION_SUMMARY, FLAG_ERROR, Message, ParseReport, Session, earliest, latest
from wwt.parsers.claude_code import project_name, project_root
from wwt.parsers.common import (
    bound_text,
    flatten_text,
    iso_timestamp,
    load_session_object,
    nfc,
    render_tool_call,
)
from wwt.parsers.noise import clean_user_text

PLATFORM = "continue"
INDEX_NAME = "sessions.json"
PLACEHOLDER_TITLES = frozenset({"New Session", "Untitled Session"})
INDEX_MAX_BYTES = 16 << 20
_WINDOWS_DRIVE = re.compile(r"^/[A-Za-z]:")


def continue_home() -> Path:
    """``$CONTINUE_GLOBAL_DIR`` (Continue's own override) or ``~/.continue``."""
    raw = os.environ.get("CONTINUE_GLOBAL_DIR")
    return Path(raw).expanduser() if raw else Path.home() / ".continue"


class ContinueParser:
    platform = PLATFORM

    def default_roots(self) -> list[Path]:
        return [continue_home() / "sessions"]

    def detect(self, path: Path, head: bytes) -> bool:
        return looks_like_continue(path, head)

    def parse(self, path: Path, report: ParseReport, start_offset: int = 0) -> Iterator[Session]:
        report.platform = PLATFORM
        if start_offset:
            report.requires_full_reparse = True  # rewritten whole: the result replaces, never appends
        yield from _parse_session(Path(path), report)


def looks_like_continue(path: Path, head: bytes) -> bool:
    """A ``.json`` object (not the ``sessions.json`` index) holding ``sessionId``, ``workspaceDirectory`` and
    ``history`` — the keys ``HistoryManager.save`` writes first, in that order."""
    if not path.name.endswith(".json") or path.name == INDEX_NAME:
        return False
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return (text.startswith(b"{") and b'"sessionId"' in text and b'"workspaceDirectory"' in text
            and b'"history"' in text)


def workspace_path(value: Any) -> str | None:
    """The folder a session ran in: a ``file://`` (or remote) URI's path, decoded, or a plain path."""
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    if "://" in value:
        where = unquote(urlparse(value).path)
        if _WINDOWS_DRIVE.match(where):
            where = where[1:]
    else:
        where = value
    where = where.rstrip("/\\") or "/"
    return where if where not in ("", ".") else None


def _created_at(path: Path, session_id: str) -> str | None:
    """``dateCreated`` of this session in the ``sessions.json`` beside it (missing or bad: None)."""
    index = path.parent / INDEX_NAME
    try:
        info = index.stat()
    except OSError:
        return None
    if info.st_size > INDEX_MAX_BYTES:
        return None
    return _index_dates(str(index), info.st_mtime_ns, info.st_size).get(session_id)


@functools.lru_cache(maxsize=8)
def _index_dates(index: str, _mtime_ns: int, _size: int) -> dict[str, str]:
    """Session id → start, from one version of ``sessions.json`` (read once per ingest, not once per session)."""
    try:
        entries = json.loads(Path(index).read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    out: dict[str, str] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("sessionId"), str):
            when = iso_timestamp(entry.get("dateCreated"))  # epoch ms, written as a string
            if when:
                out[entry["sessionId"]] = when
    return out


def _saved_at(path: Path) -> str | None:
    try:
        return iso_timestamp(path.stat().st_mtime)
    except OSError:
        return None


def _parse_session(path: Path, report: ParseReport) -> Iterator[Session]:
    data = load_session_object(path, report, "history", "Continue")
    if data is None:
        return
    sid = data.get("sessionId")
    session = Session(
        session_id=sid.strip() if isinstance(sid, str) and sid.strip() else path.stem,
        platform=PLATFORM,
        source_path=str(path),
    )
    title = data.get("title")
    if isinstance(title, str) and title.strip() and title.strip() not in PLACEHOLDER_TITLES:
        session.title = nfc(title.strip())  # cut after redaction (parse_file)
    cwd = workspace_path(data.get("workspaceDirectory"))
    if cwd:
        session.cwd = cwd
        session.project_path = project_root(cwd)
        session.project = project_name(session.project_path)
    saved = _saved_at(path)
    started = _created_at(path, session.session_id) or saved
    history = data["history"]
    answered = _answered_calls(history)
    names: dict[str, str] = {}  # call id → tool name
    statuses: dict[str, str] = {}  # call id → its toolCallStates status
    for index, item in enumerate(history):
        report.lines += 1
        message = item.get("message") if isinstance(item, dict) else None
        if not isinstance(message, dict):
            report.bad_lines += 1
            continue
        if _auto_continue(history, index, message):
            report.skipped_messages += 1  # the CLI's own "continue" after an automatic compaction
            continue
        session.messages.extend(_item(index, item, message, started, names, statuses, answered, report))
    stamps = [m.timestamp for m in session.messages if m.timestamp]
    session.started_at = earliest([started, *stamps])
    session.ended_at = latest([saved, *stamps])
    if session.messages:
        yield session


def _auto_continue(history: list[Any], index: int, message: dict[str, Any]) -> bool:
    """The ``continue`` the CLI appends as a user message right after an automatic compaction's summary item
    (``handleAutoContinuation``): Continue's words, not the user's."""
    if index == 0 or message.get("role") != "user" or flatten_text(message.get("content")).strip() != "continue":
        return False
    previous = history[index - 1]
    return isinstance(previous, dict) and isinstance(previous.get("conversationSummary"), str)


def _answered_calls(history: list[Any]) -> set[str]:
    """Call ids some ``tool`` message answers (the IDE's results): their ``toolCallStates`` output is a copy."""
    out: set[str] = set()
    for item in history:
        message = item.get("message") if isinstance(item, dict) else None
        if isinstance(message, dict) and message.get("role") == "tool" and isinstance(message.get("toolCallId"), str):
            out.add(message["toolCallId"])
    return out


def _item(
    index: int, item: dict[str, Any], message: dict[str, Any], ts: str | None, names: dict[str, str],
    statuses: dict[str, str], answered: set[str], report: ParseReport,
) -> list[Message]:
    role = message.get("role")
    mid = message["id"] if isinstance(message.get("id"), str) and message["id"] else f"#{index}"
    text = flatten_text(message.get("content"))
    out: list[Message] = []
    if role == "user":
        cleaned = clean_user_text(text)
        if cleaned is None:
            report.skipped_messages += 1
        else:
            out.append(Message(mid, "user", "text", nfc(cleaned), ts))
    elif role == "assistant":
        reasoning = item.get("reasoning")
        if isinstance(reasoning, dict) and isinstance(reasoning.get("text"), str) and reasoning["text"].strip():
            when = iso_timestamp(reasoning.get("startAt")) or ts
            out.append(Message(f"{mid}#thinking", "assistant", "thinking", nfc(reasoning["text"].strip()), when))
        summary = item.get("conversationSummary")
        if text.strip() and not (isinstance(summary, str) and summary.strip() == text.strip()):
            out.append(Message(mid, "assistant", "text", nfc(text.strip()), ts))  # the CLI's summary item: once
        out.extend(_calls(mid, message, item, ts, names, statuses))
        out.extend(_state_results(mid, item, ts, answered))
    elif role == "thinking":
        if text.strip():
            out.append(Message(mid, "assistant", "thinking", nfc(text.strip()), ts))
    elif role == "tool":
        call_id = message.get("toolCallId")
        name = names.get(call_id) if isinstance(call_id, str) else None
        failed = isinstance(call_id, str) and statuses.get(call_id) == "errored"
        out.append(Message(mid, "user", "tool_result", nfc(bound_text(text)), ts, tool_name=name,
                           flags=frozenset({FLAG_ERROR}) if failed else frozenset()))
    elif role == "system":
        report.skipped_messages += 1  # Continue's own instructions
        return []
    else:
        report.unknown_records += 1
        return []
    summary = item.get("conversationSummary")
    if isinstance(summary, str) and summary.strip():
        out.append(Message(f"{mid}#summary", "assistant", "text", nfc(summary.strip()), ts,
                           flags=frozenset({FLAG_COMPACTION_SUMMARY})))
    return out


def _states(item: dict[str, Any]) -> list[dict[str, Any]]:
    states = item.get("toolCallStates")
    return [s for s in states if isinstance(s, dict)] if isinstance(states, list) else []


def _calls(mid: str, message: dict[str, Any], item: dict[str, Any], ts: str | None,
           names: dict[str, str], statuses: dict[str, str]) -> list[Message]:
    """The turn's tool calls (``message.toolCalls``, else the ``toolCallStates`` copies); remembers each call's
    name and final status for the ``tool`` message that answers it."""
    calls = message.get("toolCalls") if isinstance(message.get("toolCalls"), list) else None
    if not calls:
        calls = [s.get("toolCall") for s in _states(item)]
    for state in _states(item):
        if isinstance(state.get("toolCallId"), str) and isinstance(state.get("status"), str):
            statuses[state["toolCallId"]] = state["status"]
    out: list[Message] = []
    for position, call in enumerate(calls):
        if not isinstance(call, dict):
            continue
        function = call.get("function") if isinstance(call.get("function"), dict) else {}
        name = function.get("name") if isinstance(function.get("name"), str) and function["name"] else "tool"
        call_id = str(call.get("id") or position)
        names[call_id] = name
        out.append(Message(f"{mid}#call:{call_id}", "assistant", "tool_call",
                           nfc(render_tool_call(name, _arguments(function.get("arguments")))), ts, tool_name=name))
    return out


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw) if raw.strip() else None
        except ValueError:
            return raw
    return raw


def _state_results(mid: str, item: dict[str, Any], ts: str | None, answered: set[str]) -> list[Message]:
    """The CLI's results: ``toolCallStates[].output`` of calls no ``tool`` message answers."""
    out: list[Message] = []
    for state in _states(item):
        call_id = state.get("toolCallId")
        output = state.get("output")
        if not isinstance(call_id, str) or call_id in answered or not isinstance(output, list):
            continue
        text = "\n\n".join(o["content"] for o in output if isinstance(o, dict) and isinstance(o.get("content"), str))
        if not text.strip():
            continue
        call = state.get("toolCall") if isinstance(state.get("toolCall"), dict) else {}
        function = call.get("function") if isinstance(call.get("function"), dict) else {}
        name = function.get("name") if isinstance(function.get("name"), str) else None
        failed = state.get("status") == "errored"
        out.append(Message(f"{mid}#result:{call_id}", "user", "tool_result", nfc(bound_text(text)), ts,
                           tool_name=name, flags=frozenset({FLAG_ERROR}) if failed else frozenset()))
    return out
