"""Cline / Roo Code ``api_conversation_history.json`` read as the session when no ``ui_messages.json`` sits beside
it (a task folder copied without its UI log, or the history file saved on its own). Formats in
docs/formats-notes.md.

Decisions:
* The file is the model-bound Anthropic message list: user entries are what the extension sent, so the user's
  own words are only what it wrapped in ``<task>``, ``<feedback>``, ``<answer>`` or ``<user_message>``; the
  ``<environment_details>`` block, tool results written as text (``[read_file for 'x'] Result: …``) and the
  extension's notices (todo-list reminders, "The user has provided feedback…") are not.
* Assistant ``text`` → text (``<thinking>`` spans → thinking), ``tool_use`` → tool call; ``tool_result`` blocks
  and ``[tool] Result:`` texts → tool results.
* Times: an entry's own ``ts`` (epoch ms, newer Cline) when it has one; else a user entry takes the "# Current
  Time" line of its environment details (en-US form with a UTC offset, as the extension writes it) and an
  assistant entry the time of the user entry before it; the session starts at the task id (epoch ms) when the
  folder is named by it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from wwt.models import FLAG_ERROR, Message, ParseReport, Session, earliest, latest
from wwt.parsers.claude_code import project_name, project_root
from wwt.parsers.common import bound_text, flatten_text, iso_timestamp, iter_json_list, nfc, render_tool_call
from wwt.parsers.noise import clean_user_text

HISTORY_NAME = "api_conversation_history.json"
UI_NAME = "ui_messages.json"
# The first entry: the task the extension sent, ``<task>`` first (keys in the order the extension writes them).
HISTORY_HEAD = re.compile(
    rb'\A(?:\xef\xbb\xbf)?\s*\[\s*\{\s*"role"\s*:\s*"user"\s*,\s*"content"\s*:\s*\[\s*\{\s*"type"\s*:\s*"text"\s*,'
    rb'\s*"text"\s*:\s*"<task>'
)
# Tools whose result carries the user's reply (``<answer>``, ``<feedback>``) in older versions.
REPLY_TOOLS = frozenset({"attempt_completion", "ask_followup_question", "plan_mode_respond"})
_USER_WORDS = re.compile(r"<(task|feedback|answer|user_message)>\s*(.*?)\s*</\1>", re.DOTALL)
_ENVIRONMENT = re.compile(r"<environment_details>.*?(?:</environment_details>|\Z)", re.DOTALL)
_RESULT = re.compile(r"\A\s*\[([\w.-]+)(?: for '[^\n]*?')?\] Result:[ \t]*\n?")
_THINKING = re.compile(r"<thinking>\s*(.*?)\s*</thinking>", re.DOTALL)
_CWD = re.compile(r"# Current Working Directory \(([^)\n]+)\)")
_NOW = re.compile(
    r"# Current Time\s*\n\s*(\d{1,2})/(\d{1,2})/(\d{4}), (\d{1,2}):(\d\d):(\d\d) ([AP]M)"
    r"[^\n]*?UTC([+-])(\d{1,2}):(\d\d)"
)
_TASK_ID = re.compile(r"\d{13}")


def looks_like_history(path: Path, head: bytes) -> bool:
    """A Cline-style API history (its first entry sends a ``<task>``) with no UI log beside it."""
    if not path.name.endswith(".json") or not HISTORY_HEAD.match(head):
        return False
    return not (path.parent / UI_NAME).is_file()


def parse_history(path: Path, report: ParseReport, platform: str) -> Iterator[Session]:
    sid = path.parent.name if path.name == HISTORY_NAME else path.stem
    session = Session(session_id=sid, platform=platform, source_path=str(path))
    now = iso_timestamp(int(sid)) if _TASK_ID.fullmatch(sid) else None
    names: dict[str, str] = {}
    for index, raw in enumerate(iter_json_list(path, report)):
        report.lines += 1
        if not isinstance(raw, dict) or raw.get("role") not in ("user", "assistant"):
            report.bad_lines += 1
            continue
        content = raw.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": flatten_text(content)}]
        blocks = [b for b in blocks if isinstance(b, dict)]
        stamp = raw.get("ts")  # newer Cline: the entry's own time (epoch ms)
        own = iso_timestamp(stamp) if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) else None
        if raw["role"] == "user":
            now = own or _user_time(blocks) or now
            _set_cwd(session, blocks)
            session.messages.extend(user_messages(str(index), blocks, now, names, report))
        else:
            session.messages.extend(assistant_messages(str(index), blocks, own or now, names))
    if finish_task(session):
        yield session


def finish_task(session: Session) -> bool:
    """A Cline/Roo task's times from its messages and its title from the first prompt; False when it holds no message."""
    stamps = [m.timestamp for m in session.messages if m.timestamp]
    if stamps:
        session.started_at, session.ended_at = earliest(stamps), latest(stamps)
    first = next((m for m in session.messages if m.role == "user" and m.kind == "text"), None)
    if first is not None:
        session.title = first.text.split("\n", 1)[0]  # cut after redaction (parse_file)
        session.title_is_first_prompt = True
    return bool(session.messages)


def _texts(blocks: list[dict[str, Any]]) -> list[str]:
    return [b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]


def _user_time(blocks: list[dict[str, Any]]) -> str | None:
    for text in _texts(blocks):
        match = _NOW.search(text)
        if match is None:
            continue
        month, day, year, hour, minute, second, half, sign, off_h, off_m = match.groups()
        hour_24 = int(hour) % 12 + (12 if half == "PM" else 0)
        offset = timedelta(hours=int(off_h), minutes=int(off_m)) * (1 if sign == "+" else -1)
        try:
            local = datetime(int(year), int(month), int(day), hour_24, int(minute), int(second),
                             tzinfo=timezone(offset))
        except ValueError:
            return None
        return iso_timestamp(local.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    return None


def _set_cwd(session: Session, blocks: list[dict[str, Any]]) -> None:
    if session.cwd is not None:
        return
    for text in _texts(blocks):
        match = _CWD.search(text)
        if match:
            session.cwd = match.group(1).strip().rstrip("/") or "/"
            session.project_path = project_root(session.cwd)
            session.project = project_name(session.project_path)
            return


def user_messages(
    mid: str, blocks: list[dict[str, Any]], ts: str | None, names: dict[str, str], report: ParseReport
) -> list[Message]:
    out: list[Message] = []
    words: list[str] = []
    for position, block in enumerate(blocks):
        if block.get("type") == "tool_result":
            call = str(block.get("tool_use_id") or position)
            flags = frozenset({FLAG_ERROR}) if block.get("is_error") else frozenset()
            text = _ENVIRONMENT.sub("", flatten_text(block.get("content"))).strip()
            out.append(Message(f"{mid}#result:{call}", "user", "tool_result", nfc(bound_text(text)), ts,
                               tool_name=names.get(call), flags=flags))
            continue
        text = block.get("text") if block.get("type") == "text" and isinstance(block.get("text"), str) else ""
        text = _ENVIRONMENT.sub("", text)
        result = _RESULT.match(text)
        if result is not None:
            out.append(Message(f"{mid}#result:{position}", "user", "tool_result",
                               nfc(bound_text(text[result.end():].strip())), ts, tool_name=result.group(1)))
            if result.group(1) not in REPLY_TOOLS:
                continue  # a file or command output may quote tags: never the user's words
            text = text[result.end():]  # the user's reply to a question or a completion
        words.extend(body for _tag, body in _USER_WORDS.findall(text) if body.strip())
    if words:
        cleaned = clean_user_text("\n\n".join(words))
        if cleaned is None:
            report.skipped_messages += 1
        else:
            out.append(Message(mid, "user", "text", nfc(cleaned), ts))
    return out


def assistant_messages(mid: str, blocks: list[dict[str, Any]], ts: str | None, names: dict[str, str]) -> list[Message]:
    out: list[Message] = []
    for position, block in enumerate(blocks):
        btype = block.get("type")
        if btype == "text" and isinstance(block.get("text"), str):
            text = block["text"]
            thoughts = [t for t in _THINKING.findall(text) if t.strip()]
            if thoughts:
                out.append(Message(f"{mid}#{position}:thinking", "assistant", "thinking", nfc("\n\n".join(thoughts)), ts))
            rest = _THINKING.sub("", text).strip()
            if rest:
                out.append(Message(f"{mid}#{position}", "assistant", "text", nfc(rest), ts))
        elif btype == "thinking" and isinstance(block.get("thinking"), str) and block["thinking"].strip():
            out.append(Message(f"{mid}#{position}", "assistant", "thinking", nfc(block["thinking"].strip()), ts))
        elif btype == "tool_use":
            name = block.get("name") if isinstance(block.get("name"), str) else "tool"
            call = str(block.get("id") or position)
            names[call] = name
            out.append(Message(f"{mid}#call:{call}", "assistant", "tool_call",
                               nfc(render_tool_call(name, block.get("input"))), ts, tool_name=name))
    return out
