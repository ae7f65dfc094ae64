"""Cline SDK-era sessions (the Cline CLI and the VS Code extension since both run on ``@cline/core``):
``<sessions dir>/<session id>/<session id>.messages.json`` beside the manifest ``<session id>.json``. Read by
``ClineParser`` (``cline.py``); formats in docs/formats-notes.md.

Decisions:
* The messages file is the session (it is rewritten whole after every turn; the manifest only at start, title
  and end): ``{version: 1, updated_at, agent, sessionId, origin, messages: [...], system_prompt}``, each
  message ``{id, role: user|assistant, content: string | blocks, ts (epoch ms), metadata?, modelInfo?,
  metrics?}`` with Anthropic-like blocks (``text``, ``thinking``, ``tool_use``, ``tool_result``, ``file``,
  ``image``…). The system prompt is never read.
* The user's words are the text inside the ``<user_input mode="…">`` wrapper the runtime puts around each prompt
  (``<mode_notice>`` spans it adds on a plan/act switch are dropped). Not the user's: messages the runtime marks
  ``metadata.displayRole`` system/status/error (hook context) or a synthetic ``metadata.kind`` (reminders,
  notices), ``[TASK RESUMPTION]`` continuations, and ``file``/``image`` attachments (the file an ``@mention``
  pulled in). A compaction summary (``kind: compaction_summary``) is kept as assistant text flagged so.
* A user entry with the API history's ``<task>``/``<environment_details>`` text and no prompt wrapper was carried
  over from a pre-runtime task the extension reopened: it is read as that history is (``cline_history``).
* Assistant blocks and tool calls go through the API-history reader's ``assistant_messages`` (as Cline's
  ``api_conversation_history.json``); a ``tool_result``'s content is the tool's ``{query, result, error,
  success}`` list (or a string) rendered as text, flagged an error when ``is_error`` or an operation failed.
* The manifest beside the file (the root session's, for a subagent's file in its folder) gives the working
  folder (``cwd``), the project (``workspace_root``), the start/end times and the title (``metadata.title``,
  which the user may rename). A subagent's or teammate's file (``agent: subagent|teammate``, its
  ``origin.parentThreadId``) is its own session under the root one, its messages flagged ``subagent``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wwt.models import (
    FLAG_COMPACTION_SUMMARY,
    FLAG_ERROR,
    FLAG_SUBAGENT,
    Message,
    ParseReport,
    Session,
    earliest,
    latest,
)
from wwt.parsers.claude_code import project_name, project_root
from wwt.parsers.cline_history import assistant_messages, finish_task, user_messages
from wwt.parsers.common import bound_text, iso_timestamp, load_json_object, nfc, rewritten_whole
from wwt.parsers.noise import clean_user_text

MESSAGES_SUFFIX = ".messages.json"
# The payload's first keys, in the order the writer puts them (``buildMessagesFilePayload``); the first releases
# wrote only ``version``, ``updated_at`` and ``messages``.
MESSAGES_HEAD = re.compile(
    rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"version"\s*:\s*1\s*,\s*"updated_at"\s*:\s*"[^"\\]*"\s*,\s*"(?:agent|messages)"\s*:'
)
SUB_AGENTS = frozenset({"subagent", "teammate"})
HIDDEN_ROLES = frozenset({"system", "status", "error"})
COMPACTION_KINDS = frozenset({"compaction", "compaction_summary"})
SYNTHETIC_KINDS = frozenset({"auto_compaction", "compaction_budget_emergency", "completion_reminder",
                             "loop_detection_notice", "manual_compaction", "mistake_stop_notice", "recovery_notice"})
APPROVED_ACT = "The user approved switching to act mode. Continue with the approved plan now."
MANIFEST_MAX = 4 << 20
_MODE_NOTICE = re.compile(r"<mode_notice>.*?</mode_notice>", re.DOTALL)
_WRAPPER = re.compile(r"<(user_input|user_command)\b[^>]*>(.*?)</\1>", re.DOTALL)
_OPEN_WRAPPER = re.compile(r"</?(?:user_input|user_command)\b[^>]*>")
_LEGACY = re.compile(r"<(?:task|feedback|answer|user_message|environment_details)>|\A\s*\[[\w.-]+(?: for '[^\n]*?')?\] Result:")
_COMMAND = re.compile(r'\A\s*<user_command\b[^>]*\bslash="([^"]+)"[^>]*>(.*?)</user_command>\s*\Z', re.DOTALL)


def cline_data_dir() -> Path:
    """Cline's own data folder (the CLI's, and the extension's once its storage left VS Code):
    ``$CLINE_DATA_DIR``, else ``$CLINE_DIR/data``, else ``~/.cline/data`` (its ``resolveDataDirFromEnv``)."""
    raw = os.environ.get("CLINE_DATA_DIR", "").strip()
    if raw:
        return Path(raw).expanduser()
    home = os.environ.get("CLINE_DIR", "").strip()
    return (Path(home).expanduser() if home else Path.home() / ".cline") / "data"


def session_data_dir() -> Path:
    """Where Cline's runtime keeps session folders: ``$CLINE_SESSION_DATA_DIR``, else the data folder's ``sessions``
    (``$CLINE_DATA_DIR``, ``$CLINE_DIR/data`` or ``~/.cline/data``: its ``resolveSessionDataDir``)."""
    raw = os.environ.get("CLINE_SESSION_DATA_DIR", "").strip()
    return Path(raw).expanduser() if raw else cline_data_dir() / "sessions"


def looks_like_session(path: Path, head: bytes) -> bool:
    """``<id>.messages.json`` opening with the runtime's ``{version: 1, updated_at, agent|messages`` keys."""
    return path.name.endswith(MESSAGES_SUFFIX) and MESSAGES_HEAD.match(head) is not None


def typed_words(text: str) -> str | None:
    """What the user typed in one prompt as the runtime stored it, or None for a runtime-written continuation."""
    text = _MODE_NOTICE.sub("", text)
    command = _COMMAND.match(text)
    if command is not None:
        body = command.group(2).strip()
        return f"/{command.group(1)} {body}".strip()
    text = _OPEN_WRAPPER.sub("", _WRAPPER.sub(lambda m: m.group(2), text)).strip()
    if text.startswith("[TASK RESUMPTION]") or text == APPROVED_ACT:
        return None
    return text


def parse_session(path: Path, report: ParseReport, platform: str, start_offset: int = 0) -> Iterator[Session]:
    rewritten_whole(path, report, start_offset)
    data = load_json_object(path, report, "messages")
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        if data is not None:
            report.unknown_records += 1
            report.note("not a Cline session messages file: skipped")
        return
    sid = _text(data.get("sessionId")) or path.name[: -len(MESSAGES_SUFFIX)]
    session = Session(session_id=sid, platform=platform, source_path=str(path))
    sub = _parent(data, sid, path)
    manifest = _manifest(path, sid)
    now = iso_timestamp(manifest.get("started_at")) if manifest else None
    names: dict[str, str] = {}
    for index, raw in enumerate(data["messages"]):
        report.lines += 1
        if not isinstance(raw, dict) or raw.get("role") not in ("user", "assistant"):
            report.bad_lines += 1
            continue
        mid = _text(raw.get("id")) or str(index)
        stamp = raw.get("ts")
        now = (iso_timestamp(stamp) if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) else None) or now
        content = raw.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        blocks = [b for b in blocks if isinstance(b, dict)] if isinstance(blocks, list) else []
        if raw["role"] == "assistant":
            session.messages.extend(assistant_messages(mid, blocks, now, names))
        else:
            session.messages.extend(_user(mid, blocks, raw.get("metadata"), now, names, report))
    if sub is not None:
        session.parent_session_id = sub
        for message in session.messages:
            message.flags = message.flags | {FLAG_SUBAGENT}
    if not finish_task(session):
        return
    _from_manifest(session, manifest)
    yield session


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _parent(data: dict[str, Any], sid: str, path: Path) -> str | None:
    """The root session a subagent's or teammate's file belongs to, None for a lead session."""
    origin = data.get("origin") if isinstance(data.get("origin"), dict) else {}
    parent = _text(origin.get("parentThreadId"))
    if parent and parent != sid:
        return parent
    if data.get("agent") in SUB_AGENTS:
        root = sid.split("__", 1)[0]
        return root if root != sid else path.parent.name
    return None


def _manifest(path: Path, sid: str) -> dict[str, Any]:
    """The session's manifest (``<id>.json`` beside it), else the root's in the folder (a subagent's file)."""
    for candidate in (path.with_name(f"{sid}.json"), path.with_name(f"{path.parent.name}.json")):
        try:
            if not candidate.is_file() or candidate.stat().st_size > MANIFEST_MAX:
                continue
            value = json.loads(candidate.read_bytes())
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(value, dict) and _text(value.get("session_id")):
            return value
    return {}


def _from_manifest(session: Session, manifest: dict[str, Any]) -> None:
    cwd = _text(manifest.get("cwd"))
    if cwd:
        session.cwd = cwd.rstrip("/") or "/"
        root = _text(manifest.get("workspace_root"))
        session.project_path = (root.rstrip("/") or "/") if root else project_root(session.cwd)
        session.project = project_name(session.project_path)
    if session.parent_session_id is None:  # a subagent's file borrows the root's manifest: not its times or title
        session.started_at = earliest([session.started_at, iso_timestamp(manifest.get("started_at"))])
        session.ended_at = latest([session.ended_at, iso_timestamp(manifest.get("ended_at"))])
        meta = manifest.get("metadata") if isinstance(manifest.get("metadata"), dict) else {}
        title = _text(meta.get("title"))
        if title:
            session.title = title.split("\n", 1)[0]  # cut after redaction (parse_file)


def _user(
    mid: str, blocks: list[dict[str, Any]], metadata: Any, ts: str | None, names: dict[str, str], report: ParseReport
) -> list[Message]:
    meta = metadata if isinstance(metadata, dict) else {}
    kind, role = meta.get("kind"), str(meta.get("displayRole") or "").strip().lower()
    if not meta and _legacy(blocks):
        return user_messages(mid, blocks, ts, names, report)
    out: list[Message] = []
    words: list[str] = []
    for position, block in enumerate(blocks):
        btype = block.get("type")
        if btype == "tool_result":
            call = str(block.get("tool_use_id") or position)
            text, failed = _result(block.get("content"))
            flags = frozenset({FLAG_ERROR}) if failed or block.get("is_error") is True else frozenset()
            name = names.get(call) or _text(block.get("name"))
            out.append(Message(f"{mid}#result:{call}", "user", "tool_result", nfc(bound_text(text)), ts,
                               tool_name=name, flags=flags))
        elif btype == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            words.append(block["text"])
    if not words:
        return out
    if kind in COMPACTION_KINDS:
        summary = "\n\n".join(w.strip() for w in words)
        out.append(Message(mid, "assistant", "text", nfc(summary), ts, flags=frozenset({FLAG_COMPACTION_SUMMARY})))
        return out
    typed = [t for t in (typed_words(w) for w in words) if t]
    cleaned = clean_user_text("\n\n".join(typed)) if typed else None
    if role in HIDDEN_ROLES or kind in SYNTHETIC_KINDS or cleaned is None:
        report.skipped_messages += 1
        return out
    out.append(Message(mid, "user", "text", nfc(cleaned), ts))
    return out


def _legacy(blocks: list[dict[str, Any]]) -> bool:
    """A user entry carried over from a pre-runtime task the extension reopened (it seeds the session with the task's
    ``api_conversation_history.json``): the API history's ``<task>``/``<environment_details>`` text, no prompt
    wrapper. Read as that history is (``cline_history``)."""
    texts = [b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
    return not any("<user_input" in t for t in texts) and any(_LEGACY.search(t) for t in texts)


def _result(content: Any) -> tuple[str, bool]:
    """A tool result's text and whether it reports a failure: the tools answer with ``{query, result, error,
    success}`` operations (a list, one, or the JSON text of either) or plain text blocks."""
    if isinstance(content, str):
        try:
            decoded = json.loads(content) if content.lstrip()[:1] in ("{", "[") else None
        except (ValueError, RecursionError):
            decoded = None
        if isinstance(decoded, (dict, list)):
            text, failed = _result(decoded)
            if text:
                return text, failed
        return content.strip(), False
    items = content if isinstance(content, list) else [content] if isinstance(content, dict) else []
    parts: list[str] = []
    failed = False
    for item in items:
        if isinstance(item, str):
            parts.append(item)
        elif not isinstance(item, dict):
            continue
        elif item.get("type") == "text" and isinstance(item.get("text"), str):
            parts.append(item["text"])
        elif "query" in item or "result" in item or "error" in item:
            failed = failed or item.get("success") is False or bool(item.get("error"))
            body = item.get("error") or item.get("result")
            body = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False) if body else ""
            query = item.get("query") if isinstance(item.get("query"), str) else ""
            parts.append("\n".join(p for p in (query, body) if p))
    return "\n\n".join(p.strip() for p in parts if p.strip()), failed
