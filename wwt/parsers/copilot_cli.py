"""GitHub Copilot CLI sessions (``~/.copilot/session-state/<id>/events.jsonl``; older
``~/.copilot/history-session-state/<id>.json``). Formats in docs/formats-notes.md.

Decisions:
* ``events.jsonl`` is append-only: one event a line, ``{type, id, timestamp, parentId, data}`` (``id`` and
  ``parentId`` missing in some logs). Read:
  ``session.start`` (id, cwd, git root, branch), ``user.message`` (``data.content`` is what was typed;
  ``transformedContent`` is the model-bound copy with injected context and is never read), ``assistant.message``
  (text + ``toolRequests`` + ``reasoningText``), ``assistant.reasoning`` (thinking; the same text repeated as the
  next message's ``reasoningText`` is kept once), ``tool.execution_complete`` (result; ``success:
  false`` flags an error; named after its call, as the event itself carries no tool name). ``tool.execution_start`` repeats a tool request and the other event kinds are
  lifecycle/telemetry: skipped silently; an event type never seen before is counted unknown.
* Events carrying ``agentId`` (a sub-agent instance, per the CLI's event schema; older logs: ``data.
  parentToolCallId``) form that sub-agent's own session ``<id>:agent-<agentId>`` under the main one; ``ephemeral`` events are not meant for the log and are
  skipped; a ``user.message`` a skill, another agent (``source`` ``skill-…`` / ``agent-…``), the CLI itself
  (``INJECTED_SOURCES``: an AGENTS.md it discovered, an empty steering turn) or autopilot
  (``isAutopilotContinuation``) wrote is not the user's words. ``session.context_changed`` moves the session to
  its new folder or branch (the last one wins, as Claude Code's ``gitBranch`` does).
* The session folder's ``workspace.yaml`` ``summary`` is the title (read line by line: no YAML dependency);
  Copilot CLI 1.0.10x writes ``name`` instead (with ``user_named: false`` when it named the session after the
  first prompt: then cut as a first prompt is).
* The legacy ``.json`` is one object ``{sessionId, startTime, chatMessages, timeline}`` with OpenAI-style chat
  messages; it is rewritten whole, so it is parsed whole (ingest re-parses it when size/mtime change).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wwt.models import FLAG_ERROR, Message, ParseReport, Session, earliest, latest
from wwt.parsers.claude_code import project_name, project_root
from wwt.parsers.common import (
    bound_text,
    first_head_value,
    flatten_text,
    iso_timestamp,
    iter_jsonl,
    load_session_object,
    lookback_offset,
    nfc,
    render_tool_call,
)
from wwt.parsers.noise import clean_user_text

PLATFORM = "copilot-cli"
EVENT_PREFIXES = ("session.", "user.", "assistant.", "tool.", "subagent.", "hook.", "skill.", "system.")
IGNORED_EVENTS = frozenset({"tool.execution_start", "tool.execution_partial_result", "tool.user_requested", "abort"})
# Frequent events that carry no conversation text (turn markers, model switches, notices).
LIFECYCLE_EVENTS = frozenset({"assistant.turn_start", "assistant.turn_end", "session.info", "session.model_change",
                              "session.resume", "session.truncation", "assistant.usage",
                              # Persisted kinds the CLI's event schema (github/copilot-sdk session-events) lists
                              # that hold no conversation: the model's instructions, notices, a skill file's text,
                              # permission prompts, tool search.
                              "system.message", "system.notification", "skill.invoked", "tool_search.activated",
                              "permission.requested", "permission.completed", "external_tool.requested",
                              "external_tool.completed", "model.call_failure"})
# ``user.message`` ``source`` values the CLI writes for text nobody typed (typed messages carry none): an empty
# steering message, an AGENTS.md it found below the folder (wrapped in <system_reminder>), autopilot's prompts.
INJECTED_SOURCES = frozenset({"system", "instruction-discovery", "autopilot"})
# Event families whose other kinds hold no conversation (``model.turn_started``, ``model.model_call_started`` once
# per model turn and call in 1.0.9x logs): skipped without counting them as unknown.
SILENT_FAMILIES = ("session.", "assistant.", "hook.", "subagent.", "model.")
NAME_LOOKBACK = 64  # lines re-read on resume to name the tools whose results are appended
_SUMMARY_RE = re.compile(r"^summary:[ \t]*(.*)$", re.MULTILINE)
_NAME_RE = re.compile(r"^name:[ \t]*(.*)$", re.MULTILINE)
_AUTO_NAMED_RE = re.compile(r"^user_named:[ \t]*false[ \t]*$", re.MULTILINE)
# A skill the CLI loads is written as a user.message: ``source`` ``skill-<name>``, content in <skill-context>.
_SKILL_CONTEXT_RE = re.compile(r"<skill-context\b[^>]*>.*?(?:</skill-context>|\Z)", re.DOTALL)


class CopilotCliParser:
    platform = PLATFORM

    def default_roots(self) -> list[Path]:
        home = copilot_home()
        return [home / "session-state", home / "history-session-state"]

    def detect(self, path: Path, head: bytes) -> bool:
        return looks_like_copilot(path, head)

    def parse(self, path: Path, report: ParseReport, start_offset: int = 0) -> Iterator[Session]:
        report.platform = PLATFORM
        path = Path(path)
        if path.name.endswith(".jsonl"):
            yield from _parse_events(path, report, start_offset)
        else:
            yield from _parse_legacy(path, report, start_offset)


def copilot_home() -> Path:
    """``$COPILOT_HOME`` (the CLI's own override) or ``~/.copilot``."""
    raw = os.environ.get("COPILOT_HOME")
    return Path(raw).expanduser() if raw else Path.home() / ".copilot"


def is_event(obj: Any) -> bool:
    """The event envelope: ``type`` string, ``data`` object, and an ``id`` or a ``timestamp`` (events written
    without ``id``/``parentId`` exist: the message ids then come from byte offsets)."""
    return (
        isinstance(obj, dict) and isinstance(obj.get("type"), str) and isinstance(obj.get("data"), dict)
        and ("id" in obj or "timestamp" in obj)
    )


def is_copilot_event(obj: Any) -> bool:
    """An envelope whose type is one of the CLI's event families (what detection asks for)."""
    return is_event(obj) and obj["type"].startswith(EVENT_PREFIXES)


def looks_like_copilot(path: Path, head: bytes) -> bool:
    """An event log whose first well-formed line is a Copilot event (``type`` like ``session.start`` with a
    ``data`` object), or a legacy ``.json`` object holding ``sessionId`` and ``chatMessages``."""
    name = path.name
    if name.endswith(".jsonl"):
        return is_copilot_event(first_head_value(head))
    if name.endswith(".json"):
        text = head.lstrip()
        return text.startswith(b"{") and b'"chatMessages"' in text and b'"sessionId"' in text
    return False


# --------------------------------------------------------------------------------------------- events


def _read_title(folder: Path) -> tuple[str | None, bool]:
    """The title and whether it is the first prompt's (Copilot's own name for an unnamed session)."""
    try:
        text = (folder / "workspace.yaml").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None, False
    for pattern in (_SUMMARY_RE, _NAME_RE):
        match = pattern.search(text)
        if not match:
            continue
        value = match.group(1).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if value and value not in ("|", ">", "null", "~"):
            return nfc(value), pattern is _NAME_RE and _AUTO_NAMED_RE.search(text) is not None
    return None, False


def _set_project(session: Session, cwd: Any, root: Any = None) -> None:
    if session.project_path and cwd == session.cwd:
        return  # a resumed session repeats its start: the folder was already resolved
    if isinstance(cwd, str) and cwd.strip():
        session.cwd = cwd.strip()
    where = root if isinstance(root, str) and root.strip() else session.cwd
    if where:
        session.project_path = project_root(where.strip())
        session.project = project_name(session.project_path)


def _remember_tool_names(etype: str, data: dict[str, Any], names: dict[str, str]) -> None:
    """Call id → tool name, from the requests and their ``tool.execution_start`` (``tool.execution_complete``
    does not repeat the name)."""
    if etype == "tool.execution_start":
        if isinstance(data.get("toolCallId"), str) and isinstance(data.get("toolName"), str):
            names[data["toolCallId"]] = data["toolName"]
    elif etype == "assistant.message" and isinstance(data.get("toolRequests"), list):
        for request in data["toolRequests"]:
            if isinstance(request, dict) and isinstance(request.get("toolCallId"), str):
                if isinstance(request.get("name"), str):
                    names[request["toolCallId"]] = request["name"]


def _parse_events(path: Path, report: ParseReport, start_offset: int) -> Iterator[Session]:
    folder_id = path.parent.name if path.name == "events.jsonl" else path.stem
    session = Session(session_id=folder_id, platform=PLATFORM, source_path=str(path))
    names: dict[str, str] = {}
    if start_offset:  # a result appended now may answer a call read by the previous parse
        back = lookback_offset(path, start_offset, NAME_LOOKBACK)
        for offset, _end, obj in iter_jsonl(path, ParseReport(path=str(path)), back):
            if offset >= start_offset:
                break
            if is_event(obj):
                _remember_tool_names(obj["type"], obj["data"], names)
    subs: dict[str, Session] = {}  # sub-agent instance id → its session (ids settled once the main one is known)
    for offset, _end, obj in iter_jsonl(path, report, start_offset):
        if not is_event(obj):
            report.unknown_records += 1
            continue
        etype, data = obj["type"], obj["data"]
        _remember_tool_names(etype, data, names)
        if etype in IGNORED_EVENTS or etype in LIFECYCLE_EVENTS or obj.get("ephemeral") is True:
            continue  # ephemeral: a transient event (a stream's partial answer…) the log is not meant to hold
        eid = str(obj.get("id") or f"@{offset}")
        ts = iso_timestamp(obj.get("timestamp"))
        parent = obj.get("parentId") if isinstance(obj.get("parentId"), str) else None
        # The sub-agent that wrote it: ``agentId``, or (older logs, now deprecated) ``data.parentToolCallId``.
        agent = next((v.strip()[:100] for v in (obj.get("agentId"), data.get("parentToolCallId"))
                      if isinstance(v, str) and v.strip()), "")
        if agent and etype in ("user.message", "assistant.message", "assistant.reasoning", "tool.execution_complete"):
            target = subs.setdefault(agent, Session(session_id=agent, platform=PLATFORM, source_path=str(path)))
            _add_event(target, etype, eid, data, ts, parent, names, report, from_agent=True)
            continue
        if etype == "session.start":
            sid = data.get("sessionId")
            if isinstance(sid, str) and sid.strip():
                session.session_id = sid.strip()
            context = data.get("context") if isinstance(data.get("context"), dict) else {}
            # Some logs put the folder on ``data`` itself (other readers accept both).
            _set_project(session, context.get("cwd") or data.get("cwd"), context.get("gitRoot") or data.get("gitRoot"))
            if isinstance(context.get("branch"), str) and context["branch"].strip():
                session.git_branch = context["branch"].strip()
            session.started_at = iso_timestamp(data.get("startTime")) or ts
        elif etype == "session.context_changed":  # a later folder or branch (a checkout during the session)
            _set_project(session, data.get("cwd"), data.get("gitRoot"))
            if isinstance(data.get("branch"), str) and data["branch"].strip():
                session.git_branch = data["branch"].strip()
        elif etype in ("user.message", "assistant.message", "assistant.reasoning", "tool.execution_complete"):
            _add_event(session, etype, eid, data, ts, parent, names, report)
        elif etype not in IGNORED_EVENTS and not etype.startswith(SILENT_FAMILIES):
            report.unknown_records += 1
    session.title, session.title_is_first_prompt = _read_title(path.parent) if path.name == "events.jsonl" else (None, False)
    _settle_times(session)
    if session.messages:
        yield session
    for agent, sub in subs.items():  # a sub-agent's events: its own session under the main one
        sub.session_id, sub.parent_session_id = f"{session.session_id}:agent-{agent}", session.session_id
        sub.cwd, sub.project_path, sub.project, sub.git_branch = (
            session.cwd, session.project_path, session.project, session.git_branch)
        _settle_times(sub)
        if sub.messages:
            yield sub


def _settle_times(session: Session) -> None:
    stamps = [m.timestamp for m in session.messages if m.timestamp]
    if stamps:
        session.started_at = session.started_at or earliest(stamps)
        session.ended_at = latest(stamps)


def _add_event(
    session: Session, etype: str, eid: str, data: dict[str, Any], ts: str | None, parent: str | None,
    names: dict[str, str], report: ParseReport, from_agent: bool = False,
) -> None:
    """One conversation event's messages into ``session`` (the main one, or a sub-agent's: ``from_agent``, where
    the user turn is the prompt the calling agent wrote)."""
    if etype == "user.message":
        cleaned = _typed_text(data, from_agent)
        if cleaned is None:
            report.skipped_messages += 1
            return
        session.messages.append(Message(eid, "user", "text", nfc(cleaned), ts, parent_id=parent))
    elif etype == "assistant.message":
        session.messages.extend(_assistant(eid, data, ts, parent, _last_thinking(session)))
    elif etype == "assistant.reasoning":
        text = data.get("content")
        if isinstance(text, str) and text.strip():
            session.messages.append(Message(eid, "assistant", "thinking", nfc(text.strip()), ts, parent_id=parent))
    elif etype == "tool.execution_complete":
        session.messages.append(_tool_result(eid, data, ts, parent, names))


def _typed_text(data: dict[str, Any], from_agent: bool = False) -> str | None:
    """What the user typed in a ``user.message``: None for a skill the CLI loaded (``source: skill-…``), a
    prompt another agent wrote to the main one (``source: agent-…``; kept in a sub-agent's own session) or one
    autopilot wrote (``isAutopilotContinuation``); without any ``<skill-context>`` block; then the noise rules."""
    source = data.get("source")
    source = source.strip() if isinstance(source, str) else ""
    if source in INJECTED_SOURCES or source.startswith("skill-") or (source.startswith("agent-") and not from_agent):
        return None
    if data.get("isAutopilotContinuation") is True:
        return None
    content = data.get("content")
    text = content if isinstance(content, str) else flatten_text(content)
    if "<skill-context" in text:
        text = _SKILL_CONTEXT_RE.sub("", text)
    return clean_user_text(text)


def _last_thinking(session: Session) -> str | None:
    for message in reversed(session.messages[-8:]):
        if message.kind == "thinking":
            return message.text
    return None


def _assistant(
    eid: str, data: dict[str, Any], ts: str | None, parent: str | None, thought: str | None = None
) -> list[Message]:
    out: list[Message] = []
    reasoning = data.get("reasoningText")
    if isinstance(reasoning, str) and reasoning.strip() and nfc(reasoning.strip()) != thought:
        # 1.0.x writes the turn's reasoning here (an ``assistant.reasoning`` event, when also written, comes first)
        out.append(Message(f"{eid}#thinking", "assistant", "thinking", nfc(reasoning.strip()), ts, parent_id=parent))
    text = data.get("content")
    if isinstance(text, str) and text.strip():
        out.append(Message(eid, "assistant", "text", nfc(text.strip()), ts, parent_id=parent))
    requests = data.get("toolRequests") if isinstance(data.get("toolRequests"), list) else []
    for index, request in enumerate(requests):
        if not isinstance(request, dict):
            continue
        name = request.get("name") if isinstance(request.get("name"), str) else "tool"
        call_id = str(request.get("toolCallId") or index)
        out.append(
            Message(f"{eid}#call:{call_id}", "assistant", "tool_call",
                    nfc(render_tool_call(name, request.get("arguments", request.get("input")))), ts, tool_name=name,
                    parent_id=parent)
        )
    return out


def _tool_result(eid: str, data: dict[str, Any], ts: str | None, parent: str | None, names: dict[str, str]) -> Message:
    result = data.get("result")
    error = data.get("error")
    if isinstance(result, dict):
        text = result.get("content") if isinstance(result.get("content"), str) else flatten_text(result.get("content"))
    else:
        text = result if isinstance(result, str) else ""
    if not text and error:
        text = error.get("message", "") if isinstance(error, dict) else str(error)
    shell = data.get("shellExecution") if isinstance(data.get("shellExecution"), dict) else {}
    code = shell.get("exitCode")
    # A shell command that exited non-zero is reported with ``success: true`` (1.0.9x): its exit code says it failed.
    failed = data.get("success") is False or bool(error) or (isinstance(code, int) and code != 0)
    name = data.get("toolName") if isinstance(data.get("toolName"), str) else names.get(str(data.get("toolCallId")))
    return Message(f"{eid}#result", "user", "tool_result", nfc(bound_text(str(text or ""))), ts, tool_name=name,
                   parent_id=parent, flags=frozenset({FLAG_ERROR}) if failed else frozenset())


# --------------------------------------------------------------------------------------------- legacy


def _parse_legacy(path: Path, report: ParseReport, start_offset: int) -> Iterator[Session]:
    if start_offset:
        report.requires_full_reparse = True  # rewritten whole: the result replaces, never appends
    data = load_session_object(path, report, "chatMessages", "Copilot CLI")
    if data is None:
        return
    sid = data.get("sessionId")
    session = Session(
        session_id=sid.strip() if isinstance(sid, str) and sid.strip() else path.stem,
        platform=PLATFORM,
        source_path=str(path),
        started_at=iso_timestamp(data.get("startTime")),
    )
    names: dict[str, str] = {}
    for index, raw in enumerate(data["chatMessages"]):
        report.lines += 1
        if not isinstance(raw, dict):
            report.bad_lines += 1
            continue
        session.messages.extend(_legacy_message(index, raw, names, report))
    for message in session.messages:
        message.timestamp = session.started_at  # the chat list carries no time of its own
    if session.messages:
        yield session


def _legacy_message(index: int, raw: dict[str, Any], names: dict[str, str], report: ParseReport) -> list[Message]:
    role = raw.get("role")
    text = flatten_text(raw.get("content"))
    mid = f"#{index}"
    if role == "user":
        cleaned = clean_user_text(text)
        if cleaned is None:
            report.skipped_messages += 1
            return []
        return [Message(mid, "user", "text", nfc(cleaned))]
    if role == "assistant":
        out = [Message(mid, "assistant", "text", nfc(text.strip()))] if text.strip() else []
        calls = raw.get("tool_calls") if isinstance(raw.get("tool_calls"), list) else []
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict):
                continue
            name = function.get("name") if isinstance(function.get("name"), str) else "tool"
            call_id = str(call.get("id") or len(out))
            names[call_id] = name
            out.append(Message(f"{mid}#call:{call_id}", "assistant", "tool_call",
                               nfc(render_tool_call(name, function.get("arguments"))), tool_name=name))
        return out
    if role == "tool":
        call_id = str(raw.get("tool_call_id") or "")
        return [Message(mid, "user", "tool_result", nfc(bound_text(text)), tool_name=names.get(call_id))]
    if role == "system":
        report.skipped_messages += 1  # the CLI's own instructions
        return []
    report.unknown_records += 1
    return []
