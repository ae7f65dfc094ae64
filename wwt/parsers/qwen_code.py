"""Qwen Code chat logs (``~/.qwen/projects/<sanitised cwd>/chats/<sessionId>.jsonl``).

Written by Qwen Code's ``ChatRecordingService`` (docs/formats-notes.md): append-only JSONL, one ``ChatRecord`` a
line — Claude Code's envelope (``uuid``, ``parentUuid``, ``sessionId``, ``timestamp``, ``type``, ``subtype``,
``cwd``, ``version``, ``gitBranch``) around a Gemini ``Content`` (``message: {role, parts}``).

Decisions:
* ``type: user`` without subtype (and ``mid_turn_user_message``, and ``realtime_message``: a question spoken in a
  Realtime voice chat) is what the human typed or said: the writer's
  ``systemPayload.displayText`` (the prompt before @-file expansion and hook context) is preferred to the
  model-bound parts. Notifications, cron prompts and goal-runtime messages are ``user`` records written by
  the tool, never the human's words: skipped (counted).
* ``assistant`` parts: ``thought`` text → thinking, text → text, ``functionCall`` → tool call.
* ``tool_result`` parts ``functionResponse`` → tool result; ``toolCallResult.status == "error"`` flags it.
* Qwen Code 0.24 defers MCP tools: the model reviews one with ``tool_search`` and runs it through the
  ``tool_call`` bridge (``{"name": "mcp__wwt__search_memory", "arguments": {…}}``), and the result comes back
  named ``tool_call``. The call and its result are archived as the tool they ran (its name and arguments), so
  the tool is what ``wwt show`` names and what wwt's own-tool rule (``wwt/own_tools.py``) recognises.
* ``system`` records: ``custom_title`` gives the title (last wins), ``parent_session`` the parent, a
  ``slash_command`` invocation with arguments is kept as ``/name args`` (a bare command is a UI action);
  the other subtypes (telemetry, compression checkpoints, snapshots…) are bookkeeping, skipped silently.
* A ``system`` ``rewind`` record (parented to the last record kept) drops the messages and titles of the
  records that are not its ancestors: the abandoned branch (``_Chain``).
* A subagent transcript (``subagents/…/agent-*.jsonl``, records with ``isSidechain``/``agentId``) is its own
  session ``<sessionId>:<file stem>`` whose parent is ``sessionId``; sidechain lines in a main file are flagged.
* Before the JSONL log, Qwen Code kept Gemini CLI's recorder: one ``ConversationRecord`` rewritten whole in
  ``<runtime dir>/tmp/<sha256 of the project root>/chats/session-*.json``. Such a file is Qwen's (not Gemini's)
  and is read by the Gemini reader; a model turn typed ``qwen`` (as Qwen's VS Code companion reads them) is
  the assistant's, like ``gemini``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wwt.models import (
    FLAG_ERROR,
    FLAG_QUEUED,
    FLAG_SIDECHAIN,
    Message,
    ParseReport,
    Session,
    earliest,
    latest,
)
from wwt.parsers.claude_code import project_name, project_root
from wwt.parsers.common import (
    bound_text,
    glued_records,
    iso_timestamp,
    iter_jsonl,
    load_json_object,
    nfc,
    render_tool_call,
)
from wwt.parsers.gemini_cli import _build_session, _response_text, looks_like_gemini, records_by_id
from wwt.parsers.noise import clean_user_text
from wwt.parsers.qwen_paths import legacy_qwen_marks, qwen_runtime_dirs

PLATFORM = "qwen-code"
_NO_FLAGS: frozenset[str] = frozenset()
_SIDECHAIN = frozenset({FLAG_SIDECHAIN})
ENVELOPE_TYPES = frozenset({"user", "assistant", "tool_result", "system"})
INJECTED_USER_SUBTYPES = frozenset({"notification", "cron", "goal_runtime", "agent_launch_prompt"})
# The user's own words: typed (no subtype), typed while the agent was busy, spoken in a Realtime voice chat.
TYPED_USER_SUBTYPES = frozenset({None, "mid_turn_user_message", "realtime_message"})
_PARTS_MESSAGE_RE = re.compile(rb'"message"\s*:\s*\{\s*"role"\s*:\s*"[A-Za-z]+"\s*,\s*"parts"\s*:')


class QwenCodeParser:
    platform = PLATFORM

    def default_roots(self) -> list[Path]:
        return [root for runtime in qwen_runtime_dirs() for root in (runtime / "projects", runtime / "tmp")]

    def detect(self, path: Path, head: bytes) -> bool:
        return looks_like_qwen(path, head) or looks_like_legacy_qwen(path, head)

    def parse(self, path: Path, report: ParseReport, start_offset: int = 0) -> Iterator[Session]:
        report.platform = PLATFORM
        path = Path(path)
        if path.name.endswith(".json"):
            yield from _parse_legacy(path, report, start_offset)
        else:
            yield from _parse(path, report, start_offset)


def is_qwen_record(obj: Any) -> bool:
    """One decoded line with Qwen's envelope: a Gemini-style message, or a ``tool_result``/``system``
    record carrying ``uuid`` + ``sessionId`` (Claude Code writes neither a top-level ``tool_result`` type nor
    a ``parts`` message)."""
    if not isinstance(obj, dict) or obj.get("type") not in ENVELOPE_TYPES:
        return False
    if "uuid" not in obj or "sessionId" not in obj:
        return False
    message = obj.get("message")
    if isinstance(message, dict):
        return "parts" in message and "content" not in message
    return obj.get("type") == "tool_result"


def looks_like_qwen(path: Path, head: bytes) -> bool:
    """A ``.jsonl`` whose first records are Qwen envelopes (a corrupt line or bookkeeping ``system`` lines
    before them are tolerated); a first line longer than the head counts when it opens a ``parts`` message."""
    if not path.name.endswith(".jsonl") or not head.lstrip().startswith(b"{"):
        return False
    lines = head.split(b"\n")
    for index, raw in enumerate(lines[:20]):
        raw = raw.strip()
        if not raw:
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            glued = glued_records(raw)
            if glued is not None:  # records appended without a newline: the first whole one decides
                obj = glued[1][0][1]
            elif index == len(lines) - 1:  # cut by the end of the head
                return bool(_PARTS_MESSAGE_RE.search(raw)) and b'"sessionId"' in raw
            else:
                continue
        if not isinstance(obj, dict):
            return False
        if is_qwen_record(obj):
            return True
        if obj.get("type") == "system" and "uuid" in obj and "sessionId" in obj and "message" not in obj:
            if _in_qwen_chats(path):
                return True
            continue  # bookkeeping first; the conversation lines decide
        return False
    return False


def looks_like_legacy_qwen(path: Path, head: bytes) -> bool:
    """A legacy whole-file recording (Gemini's ``.json`` shape) kept in Qwen's ``tmp/<hash>/chats`` folder, or
    one whose model turns are typed ``qwen``."""
    return looks_like_gemini(path, head) and legacy_qwen_marks(path, head)


def _parse_legacy(path: Path, report: ParseReport, start_offset: int) -> Iterator[Session]:
    """Gemini's whole-file ``ConversationRecord``, read by the Gemini reader under Qwen's name."""
    data = load_json_object(path, report, "messages")  # a file cut mid-write keeps its intact messages
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        report.note("not a Qwen chat recording: skipped")
        report.unknown_records += 1
        return
    if start_offset:
        report.requires_full_reparse = True  # rewritten whole: the result replaces, not appends
    session = _build_session(path, data, records_by_id(data["messages"], report, "qwen"), report)
    if session is not None:
        session.platform = PLATFORM
        yield session


def _in_qwen_chats(path: Path) -> bool:
    parents = path.parents
    return len(parents) > 2 and parents[0].name == "chats" and parents[2].name == "projects"


# --------------------------------------------------------------------------------------------- reading


def _parse(path: Path, report: ParseReport, start_offset: int) -> Iterator[Session]:
    sessions: dict[str, Session] = {}
    chains: dict[str, _Chain] = {}
    for offset, _end, obj in iter_jsonl(path, report, start_offset):
        if not is_qwen_record(obj) and not (obj.get("type") == "system" and "sessionId" in obj):
            report.unknown_records += 1
            continue
        sid = obj.get("sessionId")
        if not isinstance(sid, str) or not sid.strip():
            report.unknown_records += 1
            continue
        session = sessions.get(sid)
        if session is None:
            session = sessions[sid] = _new_session(path, sid.strip(), obj)
            chains[sid] = _Chain()
        chain = chains[sid]
        if obj.get("type") == "system" and obj.get("subtype") == "rewind":
            if start_offset:
                report.requires_full_reparse = True  # it drops lines an earlier parse already kept
            chain.rewind(obj, session)
        _apply(obj, offset, session, report)
        chain.record(obj, session)
    for session in sessions.values():
        stamps = [m.timestamp for m in session.messages if m.timestamp]
        session.started_at = earliest(stamps)
        session.ended_at = latest(stamps)
        if session.messages or session.title:
            yield session


class _Chain:
    """The ``uuid``/``parentUuid`` links of one session's records, for ``rewind`` records: Qwen writes one
    (``system``, subtype ``rewind``) when the user rewinds, parented to the last record kept; the records
    written after the rewound point are off the conversation from then on (Qwen's own resume drops them)."""

    def __init__(self) -> None:
        self.parents: dict[str, str | None] = {}
        self.titles: list[tuple[str, str]] = []  # (record uuid, title) of each custom_title, in file order

    def record(self, obj: dict[str, Any], session: Session) -> None:
        uid = obj.get("uuid")
        if not isinstance(uid, str):
            return
        parent = obj.get("parentUuid")
        self.parents.setdefault(uid, parent if isinstance(parent, str) else None)
        if obj.get("type") == "system" and obj.get("subtype") == "custom_title" and session.title:
            self.titles.append((uid, session.title))

    def rewind(self, obj: dict[str, Any], session: Session) -> None:
        target = obj.get("parentUuid")
        if target is not None and (not isinstance(target, str) or target not in self.parents):
            return  # rewound to a point this file does not hold: nothing is known to be abandoned
        kept: set[str] = set()
        while isinstance(target, str) and target not in kept:
            kept.add(target)
            target = self.parents.get(target)
        dropped = {uid for uid in self.parents if uid not in kept}
        session.messages = [
            m for m in session.messages
            if FLAG_SIDECHAIN in m.flags or m.native_id.split("#", 1)[0] not in dropped
        ]
        self.titles = [(uid, title) for uid, title in self.titles if uid not in dropped]
        session.title = self.titles[-1][1] if self.titles else None


def _new_session(path: Path, sid: str, obj: dict[str, Any]) -> Session:
    session_id, parent = sid, None
    if path.name.startswith("agent-") and (obj.get("isSidechain") or obj.get("agentId")):
        session_id, parent = f"{sid}:{path.stem}", sid  # subagent transcript: its own session
    return Session(session_id=session_id, platform=PLATFORM, source_path=str(path), parent_session_id=parent)


def _apply(obj: dict[str, Any], offset: int, session: Session, report: ParseReport) -> None:
    if session.cwd is None:  # the first record naming a folder sets it
        cwd = obj.get("cwd")
        if isinstance(cwd, str) and cwd.strip():
            session.cwd = cwd.strip()
            session.project_path = project_root(session.cwd)
            session.project = project_name(session.project_path)
    branch = obj.get("gitBranch")
    if isinstance(branch, str) and branch.strip():
        session.git_branch = branch.strip()
    rtype, subtype = obj.get("type"), obj.get("subtype")
    uid = str(obj.get("uuid") or f"@{offset}")
    parent = obj.get("parentUuid")
    if not isinstance(parent, str):
        parent = None
    ts = iso_timestamp(obj.get("timestamp"))
    flags = _SIDECHAIN if obj.get("isSidechain") and session.parent_session_id is None else _NO_FLAGS
    payload = obj.get("systemPayload")
    if not isinstance(payload, dict):
        payload = {}
    if rtype == "system":
        _apply_system(subtype, payload, uid, parent, ts, session, report)
        return
    parts = _parts(obj.get("message"))
    if rtype == "user":
        if subtype in INJECTED_USER_SUBTYPES:
            report.skipped_messages += 1
            return
        if subtype not in TYPED_USER_SUBTYPES:
            report.unknown_records += 1
            return
        if subtype == "mid_turn_user_message":
            flags |= {FLAG_QUEUED}
        session.messages.extend(_results(uid, parts, obj, ts, flags, session.messages))
        display = payload.get("displayText")
        text = display if isinstance(display, str) and display.strip() else _text(parts)
        cleaned = clean_user_text(text)
        if cleaned is None:
            if not any("functionResponse" in p for p in parts if isinstance(p, dict)):
                report.skipped_messages += 1
            return
        session.messages.append(Message(uid, "user", "text", nfc(cleaned), ts, parent_id=parent, flags=flags))
    elif rtype == "assistant":
        session.messages.extend(_assistant(uid, parts, ts, parent, flags))
    elif rtype == "tool_result":
        session.messages.extend(_results(uid, parts, obj, ts, flags, session.messages))


def _apply_system(
    subtype: Any, payload: dict[str, Any], uid: str, parent: str | None, ts: str | None, session: Session,
    report: ParseReport,
) -> None:
    if subtype == "custom_title":
        title = payload.get("customTitle")
        if isinstance(title, str) and title.strip():
            session.title = nfc(title.strip())
    elif subtype == "parent_session":
        pid = payload.get("parentSessionId")
        if isinstance(pid, str) and pid.strip() and session.parent_session_id is None:
            session.parent_session_id = pid.strip()
    elif subtype == "slash_command" and payload.get("phase") == "invocation":
        raw = payload.get("rawCommand")
        command = raw.strip() if isinstance(raw, str) else ""
        if " " in command and command.startswith("/"):  # arguments carry intent; a bare command does not
            session.messages.append(Message(uid, "user", "text", nfc(command), ts, parent_id=parent))
        else:
            report.skipped_messages += 1


def _parts(message: Any) -> list[Any]:
    if not isinstance(message, dict):
        return []
    parts = message.get("parts")
    if isinstance(parts, list):
        return parts
    return [parts] if parts is not None else []


def _text(parts: list[Any]) -> str:
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get("thought"):
            texts.append(part["text"])
    return "\n\n".join(t for t in texts if t.strip())


def _assistant(uid: str, parts: list[Any], ts: str | None, parent: str | None, flags: frozenset[str]) -> list[Message]:
    """Thinking (the ``thought`` parts), then the text (``_text``), then each ``functionCall``: one pass over the
    parts."""
    out: list[Message] = []
    thoughts: list[str] = []
    texts: list[str] = []
    calls: list[tuple[int, dict[str, Any]]] = []
    for index, part in enumerate(parts):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            text = part.get("text")
            if isinstance(text, str):
                (thoughts if part.get("thought") else texts).append(text)
            call = part.get("functionCall")
            if isinstance(call, dict):
                calls.append((index, call))
    thinking = "\n\n".join(t for t in thoughts if t.strip())
    if thinking:
        out.append(Message(f"{uid}#thinking", "assistant", "thinking", nfc(thinking), ts, parent_id=parent, flags=flags))
    text = "\n\n".join(t for t in texts if t.strip()).strip()
    if text:
        out.append(Message(uid, "assistant", "text", nfc(text), ts, parent_id=parent, flags=flags))
    for index, call in calls:
        name = call.get("name") if isinstance(call.get("name"), str) else "tool"
        args = call.get("args")
        if name == BRIDGE and isinstance(args, dict) and isinstance(args.get("name"), str) and args["name"].strip():
            name, args = args["name"].strip(), args.get("arguments")
        call_id = str(call.get("id") or index)
        out.append(
            Message(f"{uid}#call:{call_id}", "assistant", "tool_call", nfc(render_tool_call(name, args)),
                    ts, tool_name=name, parent_id=parent, flags=flags)
        )
    return out


BRIDGE = "tool_call"  # Qwen Code's bridge for deferred tools (its arguments name the tool that ran)
BRIDGE_LOOKBACK = 200  # messages searched back for the call a bridged result answers


def _bridged_name(messages: list[Message], call_id: str) -> str | None:
    """The tool a ``tool_call`` result answers: the name its call was archived under (``_assistant``)."""
    suffix = f"#call:{call_id}"
    for message in reversed(messages[-BRIDGE_LOOKBACK:]):
        if message.kind == "tool_call" and message.native_id.endswith(suffix):
            return message.tool_name
    return None


def _results(uid: str, parts: list[Any], obj: dict[str, Any], ts: str | None, flags: frozenset[str],
             earlier: list[Message]) -> list[Message]:
    out: list[Message] = []
    info = obj.get("toolCallResult") if isinstance(obj.get("toolCallResult"), dict) else {}
    for index, part in enumerate(parts):
        response = part.get("functionResponse") if isinstance(part, dict) else None
        if not isinstance(response, dict):
            continue
        text, failed = _response_text(response)
        if not text.strip() and isinstance(info.get("resultDisplay"), str):
            text = info["resultDisplay"]
        failed = failed or info.get("status") == "error" or bool(info.get("error"))
        call_id = str(response.get("id") or index)
        name = response.get("name") if isinstance(response.get("name"), str) else None
        if name == BRIDGE:
            name = _bridged_name(earlier, call_id) or name
        out.append(
            Message(f"{uid}#result:{call_id}", "user", "tool_result", nfc(bound_text(text)), ts, tool_name=name,
                    flags=flags | {FLAG_ERROR} if failed else flags)
        )
    return out
