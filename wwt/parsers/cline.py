"""Cline task logs (VS Code extension ``saoudrizwan.claude-dev``; also the Cline CLI's ``~/.cline/data``):
``tasks/<task id>/ui_messages.json`` beside ``api_conversation_history.json`` and ``task_metadata.json``.
Roo Code (``roo_code.py``) writes the same layout and is read by the same code. Cline's SDK runtime (the CLI, the
newer extension) keeps ``sessions/<id>/<id>.messages.json`` instead: read by ``cline_sessions.py`` through this
parser. Formats in docs/formats-notes.md.

Decisions:
* ``ui_messages.json`` is the session: it is what the user saw, one ``ClineMessage`` per entry with its time
  (``ts``, epoch ms), the user's own words (the task — the first entry, a ``say: text`` that ``startTask``
  writes — and ``say: user_feedback`` replies) free of the
  ``<environment_details>`` the extension appends to the model-bound copy in ``api_conversation_history.json``
  (read only when no ``ui_messages.json`` sits beside it: ``cline_history.py``).
* Map: ``text``/``completion_result``/a ``followup`` question/``plan_mode_respond`` → assistant text;
  ``reasoning`` → thinking; ``tool`` (JSON ``{tool, path, …}``), ``command`` and ``use_mcp_server`` (JSON
  ``{serverName, toolName, arguments}``) → tool call; ``command_output``, ``mcp_server_response`` and Roo Code's
  ``subtask_result`` → tool result; ``error``/``diff_error`` → an error result. API bookkeeping
  (``api_req_started`` …), checkpoints and UI prompts are skipped silently.
* The working folder is read from the first ``api_req_started`` request (``# Current Working Directory
  (<path>)`` in the environment details the extension sends), else from Roo Code's ``history_item.json``
  (``workspace``). The file is rewritten whole: parsed whole, but
  streamed entry by entry (``iter_json_list``), so a long task's list is never held at once and a malformed
  entry costs only itself.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wwt.models import FLAG_ERROR, FLAG_SUBAGENT, Message, ParseReport, Session
from wwt.own_tools import qualified_tool
from wwt.parsers.claude_code import project_name, project_root
from wwt.parsers.cline_history import finish_task, looks_like_history, parse_history
from wwt.parsers.cline_sessions import MESSAGES_SUFFIX as SESSION_SUFFIX
from wwt.parsers.cline_sessions import cline_data_dir, looks_like_session, parse_session, session_data_dir
from wwt.parsers.common import bound_text, iso_timestamp, iter_json_list, nfc, read_head, render_tool_call
from wwt.parsers.noise import clean_user_text

PLATFORM = "cline"
EXTENSION_ID = "saoudrizwan.claude-dev"
FILE_NAME = "ui_messages.json"
HISTORY_ITEM = "history_item.json"  # Roo Code: the task's HistoryItem (``workspace``, ``task``…)
EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
_CWD_RE = re.compile(r"# Current Working Directory \(([^)\n]+)\)")
USER_SAYS = frozenset({"task", "user_feedback"})
ASSISTANT_SAYS = frozenset({"text", "completion_result"})
# Results reported by a say entry: an MCP tool's answer, a Roo Code subtask's result to its parent.
RESULT_SAYS = {"mcp_server_response": "use_mcp_server", "subtask_result": "new_task"}


def editor_global_storage(extension_id: str) -> list[Path]:
    """The extension's globalStorage folder in each VS Code-family editor's user data (Linux ``~/.config`` /
    ``$XDG_CONFIG_HOME``, macOS ``~/Library/Application Support``)."""
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        raw = os.environ.get("XDG_CONFIG_HOME")
        base = Path(raw).expanduser() if raw else Path.home() / ".config"
    return [base / editor / "User" / "globalStorage" / extension_id for editor in EDITORS]


class ClineParser:
    platform = PLATFORM
    marker = EXTENSION_ID  # a path part that names this extension's storage

    def default_roots(self) -> list[Path]:
        return [root / "tasks" for root in editor_global_storage(EXTENSION_ID)] + [cline_data_dir() / "tasks",
                                                                                   session_data_dir()]

    def detect(self, path: Path, head: bytes) -> bool:
        if looks_like_session(path, head):
            return self.platform == PLATFORM  # the runtime's sessions are Cline's (Roo Code never wrote them)
        return (looks_like_task_log(path, head) or looks_like_history(path, head)) and self.owns(path)

    def owns(self, path: Path) -> bool:
        """Cline claims every task log that is not Roo Code's (a copied task folder included)."""
        return not is_roo_task(path)

    def parse(self, path: Path, report: ParseReport, start_offset: int = 0) -> Iterator[Session]:
        report.platform = self.platform
        path = Path(path)
        if path.name.endswith(SESSION_SUFFIX) and looks_like_session(path, read_head(path)):
            yield from parse_session(path, report, self.platform, start_offset)
            return
        if start_offset:
            report.requires_full_reparse = True  # rewritten whole
        if path.name == FILE_NAME:
            yield from parse_task(path, report, self.platform)
        else:
            yield from parse_history(path, report, self.platform)


def is_roo_task(path: Path) -> bool:
    """A task log under Roo Code's storage folder, or beside the ``history_item.json`` only Roo Code writes (its
    ``customStoragePath`` setting moves the task folders out of ``…roo-cline``)."""
    return "roo-cline" in str(path).lower() or (Path(path).parent / HISTORY_ITEM).is_file()


def looks_like_task_log(path: Path, head: bytes) -> bool:
    """``tasks/<id>/ui_messages.json`` holding a list of ``{ts, type: say|ask, …}``."""
    if path.name != FILE_NAME or path.parent.parent.name != "tasks":
        return False
    text = head.lstrip()
    return text.startswith(b"[") and b'"ts"' in text and (b'"say"' in text or b'"ask"' in text)


def parse_task(path: Path, report: ParseReport, platform: str) -> Iterator[Session]:
    session = Session(session_id=path.parent.name, platform=platform, source_path=str(path))
    seen: dict[str, int] = {}
    mcp_tool: str | None = None
    lines_before = report.lines
    for raw in iter_json_list(path, report):
        index = report.lines - lines_before  # the entry's place in the list, malformed entries included
        report.lines += 1
        if not isinstance(raw, dict) or raw.get("type") not in ("say", "ask"):
            report.bad_lines += 1
            continue
        ts_raw = raw.get("ts")
        key = str(ts_raw)
        seen[key] = seen.get(key, 0) + 1
        native = f"{key}-{seen[key]}"
        kind = raw.get("say") if raw["type"] == "say" else raw.get("ask")
        text = raw.get("text") if isinstance(raw.get("text"), str) else ""
        ts = iso_timestamp(ts_raw)
        if kind == "api_req_started" and session.cwd is None:
            _set_cwd(session, text)
            continue
        if index == 0 and kind == "text":
            kind = "task"  # startTask's first entry is the user's task, written as plain text
        message = _message(native, kind, raw["type"], text, ts, report)
        if message is not None:
            if kind == "use_mcp_server":
                mcp_tool = message.tool_name
            elif kind == "mcp_server_response" and mcp_tool:
                message.tool_name = mcp_tool  # the answer is named after the MCP tool that was called
            session.messages.append(message)
    _from_history_item(session, path.parent / HISTORY_ITEM)
    if finish_task(session):
        yield session


def _from_history_item(session: Session, path: Path) -> None:
    """Roo Code keeps the task's ``HistoryItem`` beside its logs: ``workspace`` is the folder the task ran in
    (its ``api_req_started`` entries no longer carry the environment details), and ``parentTaskId`` names the
    task that delegated this one (``new_task``): a subtask is that task's subagent, its first entry the
    instruction the parent's model wrote."""
    try:
        if path.stat().st_size > 1 << 20:
            return
        item = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return
    if not isinstance(item, dict):
        return
    parent = item.get("parentTaskId")
    if isinstance(parent, str) and parent.strip() and parent.strip() != session.session_id:
        session.parent_session_id = parent.strip()
        for message in session.messages:
            message.flags = message.flags | {FLAG_SUBAGENT}
    workspace = item.get("workspace")
    if session.cwd is None and isinstance(workspace, str) and workspace.strip():
        session.cwd = workspace.strip().rstrip("/") or "/"
        session.project_path = project_root(session.cwd)
        session.project = project_name(session.project_path)


def _set_cwd(session: Session, text: str) -> None:
    try:
        request = json.loads(text).get("request", "") if text.startswith("{") else text
    except (ValueError, AttributeError):
        request = text
    match = _CWD_RE.search(request if isinstance(request, str) else "")
    if match:
        cwd = match.group(1).strip().rstrip("/") or "/"
        session.cwd = cwd
        session.project_path = project_root(cwd)
        session.project = project_name(session.project_path)


def _json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _message(native: str, kind: Any, rtype: str, text: str, ts: str | None, report: ParseReport) -> Message | None:
    if rtype == "say" and kind in USER_SAYS:
        cleaned = clean_user_text(_strip_task_tags(text))
        if cleaned is None:
            report.skipped_messages += 1
            return None
        return Message(native, "user", "text", nfc(cleaned), ts)
    if kind in ASSISTANT_SAYS and text.strip():
        return Message(native, "assistant", "text", nfc(text.strip()), ts)
    if kind == "followup" and rtype == "ask":
        body = _json(text)
        question = body.get("question") if isinstance(body.get("question"), str) else text
        return Message(native, "assistant", "text", nfc(question.strip()), ts) if question.strip() else None
    if kind == "plan_mode_respond" and rtype == "ask":
        body = _json(text)
        answer = body.get("response") if isinstance(body.get("response"), str) else text
        return Message(native, "assistant", "text", nfc(answer.strip()), ts) if answer.strip() else None
    if kind == "reasoning" and text.strip():
        return Message(native, "assistant", "thinking", nfc(text.strip()), ts)
    if kind == "tool":
        body = _json(text)
        name = body.get("tool") if isinstance(body.get("tool"), str) else "tool"
        detail = {k: v for k, v in body.items() if k in ("path", "regex", "filePattern", "url", "query", "command")}
        return Message(native, "assistant", "tool_call", nfc(render_tool_call(name, detail or None)), ts, tool_name=name)
    if kind == "command" and text.strip():
        return Message(native, "assistant", "tool_call", nfc(render_tool_call("execute_command", text)), ts,
                       tool_name="execute_command")
    if kind == "use_mcp_server" and rtype == "ask":
        body = _json(text)
        name = body.get("toolName") if isinstance(body.get("toolName"), str) else "use_mcp_server"
        if isinstance(body.get("serverName"), str) and name != "use_mcp_server":  # the server stays visible
            name = qualified_tool(body["serverName"], name)
        args = body.get("arguments") if body.get("arguments") not in (None, "", "{}") else body.get("uri")
        return Message(native, "assistant", "tool_call", nfc(render_tool_call(name, args)), ts, tool_name=name)
    if kind in RESULT_SAYS and rtype == "say" and text.strip():
        failed = kind == "mcp_server_response" and text.lstrip().startswith("Error")
        return Message(native, "user", "tool_result", nfc(bound_text(text)), ts, tool_name=RESULT_SAYS[kind],
                       flags=frozenset({FLAG_ERROR}) if failed else frozenset())
    if kind == "command_output" and text.strip():
        return Message(native, "user", "tool_result", nfc(bound_text(text)), ts, tool_name="execute_command")
    if rtype == "say" and kind in ("error", "diff_error") and text.strip():
        return Message(native, "user", "tool_result", nfc(bound_text(text)), ts, tool_name=str(kind),
                       flags=frozenset({FLAG_ERROR}))
    return None


_TASK_TAG = re.compile(r"</?task>")


def _strip_task_tags(text: str) -> str:
    return _TASK_TAG.sub("", text)
