"""Gemini CLI chat recordings (``~/.gemini/tmp/<slug-or-hash>/chats/session-*.json[l]``).

Two shapes (agent-log-formats.md §2.2): the legacy ``.json`` (one ``ConversationRecord`` rewritten whole on every
update) and the append-only ``.jsonl`` (metadata line, message lines re-appended with the same ``id`` when
updated — last write wins, ``$set`` patches, ``$set.messages`` checkpoints, ``$rewindTo``).

Decisions:
* ``checkpoint-*.json`` (``/chat save``: ``{"history": [...]}`` or a bare list), ``logs.json`` (prompt log) and
  restore snapshots are copies of conversations already recorded in the chat files: not sessions, skipped with
  a note (they would only duplicate messages).
* A legacy ``.json`` that has a migrated ``.jsonl`` twin, and a legacy ``<sha256>`` folder whose slug folder
  holds the same file, are skipped (note) — one session per ``sessionId``. Message ids are the agent's own, so
  a store keyed by native id also dedupes any copy that slips through.
* Legacy ``.json`` is rewritten whole: it is always parsed whole (``start_offset`` ignored, the yielded session
  is complete and ``requires_full_reparse`` is set when a resume was asked for so the consumer re-diffs).
* Resuming a ``.jsonl``: a message re-appended after the offset with an id first written before it comes back
  whole (same native ids) — consumers upsert by native id. ``$rewindTo`` / ``$set.messages`` after the offset
  set ``requires_full_reparse``. The ``RESULT_LOOKBACK`` lines before the offset are re-read (not yielded) so
  a tool result repeated after it under a later message id is dropped as in a full parse.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wwt.models import FLAG_ERROR, FLAG_SUBAGENT, Message, ParseReport, Session, earliest, latest
from wwt.own_tools import qualified_tool
from wwt.parsers.common import (
    bound_text,
    iso_timestamp,
    iter_jsonl,
    load_json_object,
    lookback_offset,
    nfc,
    render_tool_call,
)
from wwt.parsers.noise import clean_user_text
from wwt.parsers.qwen_paths import legacy_qwen_marks

PLATFORM = "gemini-cli"
NOTICE_TYPES = frozenset({"info", "error", "warning"})  # UI notices, never part of the conversation
ASSISTANT_TYPES = frozenset({"gemini", "model"})  # "model" is non-standard but seen in the wild
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_EXIT_CODE = re.compile(r"Exit Code: (-?\d+)")
RESULT_LOOKBACK = 16  # lines re-read before a resume offset for tool results already kept


class GeminiCliParser:
    platform = PLATFORM

    def default_roots(self) -> list[Path]:
        return [gemini_home() / "tmp"]

    def detect(self, path: Path, head: bytes) -> bool:
        return looks_like_gemini(path, head) and not legacy_qwen_marks(path, head)  # Qwen kept our recorder

    def parse(self, path: Path, report: ParseReport, start_offset: int = 0) -> Iterator[Session]:
        report.platform = PLATFORM
        path = Path(path)
        twin = superseded_by(path)
        if twin is not None:
            report.note(f"duplicate of {twin}: skipped")
            try:
                report.end_offset = path.stat().st_size
            except OSError:
                pass
            return
        if _is_jsonl(path, report):
            yield from _parse_jsonl(path, report, start_offset)
        else:
            yield from _parse_json(path, report, start_offset)


# ------------------------------------------------------------------------------------------- locations


def gemini_home() -> Path:
    """``$GEMINI_CLI_HOME/.gemini`` (the CLI's home override, core/utils/paths.ts) or ``~/.gemini``."""
    raw = os.environ.get("GEMINI_CLI_HOME")
    home = Path(raw).expanduser() if raw else Path.home()
    return home / ".gemini"


def project_tmp_dir(path: Path) -> Path | None:
    """The ``tmp/<slug-or-hash>`` folder a chat file lives in (``…/chats/x.jsonl`` or a subagent's
    ``…/chats/<parent>/x.jsonl``)."""
    for parent in path.parents:
        if parent.name == "chats":
            return parent.parent
    return None


def _read_project_root(folder: Path) -> str | None:
    try:
        text = (folder / ".project_root").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    return text or None


def _projects_registry(gemini_dir: Path) -> dict[str, str]:
    """``projects.json`` ``{"projects": {"/abs/path": "slug"}}`` → path→slug (empty when absent/bad)."""
    try:
        data = json.loads((gemini_dir / "projects.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, dict):
        return {}
    return {k: v for k, v in projects.items() if isinstance(k, str) and isinstance(v, str)}


def project_hash(root: str) -> str:
    """Gemini's ``projectHash`` = sha256 hex of the project root (also the legacy tmp folder name)."""
    return hashlib.sha256(root.encode("utf-8")).hexdigest()


def resolve_project_root(path: Path, session_hash: str | None = None) -> str | None:
    """Project root of a chat file: ``.project_root`` marker of its folder, else ``projects.json`` (slug
    name or sha256 of a registered path = folder name / ``projectHash``), else sibling folders' markers
    whose sha256 matches (a legacy hashed folder next to its migrated slug folder)."""
    folder = project_tmp_dir(path)
    if folder is None:
        return None
    root = _read_project_root(folder)
    if root:
        return root
    tmp_dir = folder.parent
    wanted = {h for h in (folder.name if _HEX64.match(folder.name) else None, session_hash) if h}
    for candidate, slug in _projects_registry(tmp_dir.parent).items():
        if slug == folder.name or project_hash(candidate) in wanted:
            return candidate
    if wanted:
        try:
            siblings = [p for p in tmp_dir.iterdir() if p.is_dir() and p != folder]
        except OSError:
            siblings = []
        for sibling in siblings:
            marker = _read_project_root(sibling)
            if marker and project_hash(marker) in wanted:
                return marker
    return None


def superseded_by(path: Path) -> Path | None:
    """Another copy of the same conversation that wins over ``path``: the migrated ``<name>.jsonl`` of a
    legacy ``<name>.json``, or the slug-folder copy of a file in a legacy ``<sha256>`` folder."""
    if path.suffix == ".json":
        twin = path.with_name(path.name + "l")
        if twin.is_file():
            return twin
    folder = project_tmp_dir(path)
    if folder is None or not _HEX64.match(folder.name):
        return None
    try:
        relative = path.relative_to(folder)
        siblings = [p for p in folder.parent.iterdir() if p.is_dir() and p != folder]
    except (OSError, ValueError):
        return None
    for sibling in siblings:
        marker = _read_project_root(sibling)
        if not marker or project_hash(marker) != folder.name:
            continue
        for name in (relative, relative.with_name(relative.name + "l")):
            copy = sibling / name
            if copy.is_file():
                return copy
    return None


def looks_like_gemini(path: Path, head: bytes) -> bool:
    """A Gemini chat recording: the first valid JSONL object is the metadata line (``sessionId`` plus
    ``projectHash``/``startTime``, no ``type``) or one of its chat records (a corrupt line before it is
    tolerated; the registry asks about several records, so a lost metadata line does not hide the file) — or
    a legacy ``.json`` object with ``sessionId`` and ``messages``/``projectHash``. Checkpoints and logs.json
    are not claimed."""
    name = path.name
    if name.endswith(".jsonl"):
        obj = first_json_object(head)
        if obj is None:
            return False
        if is_metadata(obj):
            return "projectHash" in obj or "startTime" in obj
        return is_chat_record(obj)
    if not name.endswith(".json") or name.endswith(".messages.json"):
        return False  # ``<id>.messages.json``: Cline's runtime session files (sessionId beside messages too)
    text = head.lstrip()
    if not text.startswith(b"{") or b'"sessionId"' not in text:
        return False
    return b'"messages"' in text or b'"projectHash"' in text


def first_json_object(head: bytes, max_lines: int = 20) -> dict[str, Any] | None:
    """The first line of ``head`` that parses as a JSON object (junk lines before it are skipped)."""
    for raw in head.split(b"\n")[:max_lines]:
        raw = raw.strip()
        if not raw:
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        return obj if isinstance(obj, dict) else None
    return None


_OTHER_AGENTS_KEYS = ("uuid", "parentUuid", "sessionId", "message", "payload", "data", "role")


def is_chat_record(obj: dict[str, Any]) -> bool:
    """A JSONL chat line: a message record (string ``id``, a Gemini ``type``, ``content``; none of the
    envelope keys the other agents write) or a bare ``$set``/``$rewindTo`` update."""
    if set(obj) in ({"$set"}, {"$rewindTo"}):
        return True
    kind = obj.get("type")
    return (
        isinstance(obj.get("id"), str)
        and (kind == "user" or kind in ASSISTANT_TYPES or kind in NOTICE_TYPES)
        and "content" in obj
        and not any(key in obj for key in _OTHER_AGENTS_KEYS)
    )


def is_metadata(obj: dict[str, Any]) -> bool:
    """The JSONL metadata record: ``sessionId`` without the ``id``/``type`` of a message record."""
    return "sessionId" in obj and "type" not in obj and "id" not in obj


def _is_jsonl(path: Path, report: ParseReport) -> bool:
    if path.name.endswith(".jsonl"):
        return True
    if path.name.endswith(".json"):
        return False
    try:
        with open(path, "rb") as fh:
            first = fh.read(1 << 16).lstrip()
    except OSError:
        return False
    line = first.split(b"\n", 1)[0].strip()
    return line.startswith(b"{") and line.endswith(b"}") and b'"sessionId"' in line


# --------------------------------------------------------------------------------------------- reading


def _parse_json(path: Path, report: ParseReport, start_offset: int) -> Iterator[Session]:
    data = load_json_object(path, report, "messages")  # a file cut mid-write keeps its intact messages
    if data is None:
        return
    if start_offset:
        report.requires_full_reparse = True  # whole-file rewrite format: the result replaces, not appends
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        kind = (
            "checkpoint/prompt-log list"
            if isinstance(data, list)
            else (
                "checkpoint ({history: …})"
                if isinstance(data, dict) and "history" in data
                else "unknown JSON"
            )
        )
        report.note(f"not a Gemini chat session ({kind}): skipped")
        report.unknown_records += 1
        return
    records = records_by_id(data["messages"], report)
    session = _build_session(path, data, records, report)
    if session is not None:
        yield session


def _read_meta(path: Path) -> dict[str, Any]:
    """The metadata record of a JSONL recording, read separately when resuming mid-file."""
    scratch = ParseReport(path=str(path))
    for index, (_offset, _end, obj) in enumerate(iter_jsonl(path, scratch)):
        if is_metadata(obj):
            return obj
        if index >= 2:
            break
    return {}


def _parse_jsonl(path: Path, report: ParseReport, start_offset: int) -> Iterator[Session]:
    meta: dict[str, Any] = _read_meta(path) if start_offset else {}
    records: dict[str, dict[str, Any]] = {}
    if start_offset:
        records = _prime(path, start_offset)
    fresh: set[str] = set()  # ids written from the offset on: the only ones this parse yields
    meta_seen = bool(start_offset)
    for _offset, _end, obj in iter_jsonl(path, report, start_offset):
        if not meta_seen and is_metadata(obj):  # first line, or later when a damaged line came before it
            meta_seen = True
            meta = dict(obj)
            continue
        fresh |= _apply_record(obj, records, meta, report, resumed=bool(start_offset))
    session = _build_session(path, meta, records, report, fresh if start_offset else None)
    if session is not None:
        yield session


def _prime(path: Path, start_offset: int) -> dict[str, dict[str, Any]]:
    """Records of the lines just before a resume offset, already stored by the previous parse: re-read so
    a tool result repeated after the offset (a continuation prompt's ``functionResponse``) pairs with its
    call before it and is dropped, as a full parse does."""
    records: dict[str, dict[str, Any]] = {}
    scratch = ParseReport(path=str(path))
    try:
        back = lookback_offset(path, start_offset, RESULT_LOOKBACK)
    except OSError:
        return records
    for offset, _end, obj in iter_jsonl(path, scratch, back):
        if offset >= start_offset:
            break
        if not is_metadata(obj):
            _apply_record(obj, records, {}, scratch, resumed=False)
    return records


def _apply_record(
    obj: dict[str, Any],
    records: dict[str, dict[str, Any]],
    meta: dict[str, Any],
    report: ParseReport,
    resumed: bool,
) -> set[str]:
    """Apply one JSONL line to ``records``/``meta`` (append, ``$set``, ``$rewindTo``); the ids it wrote."""
    if "$rewindTo" in obj:
        target = str(obj.get("$rewindTo"))
        if target in records:
            keys = list(records)
            for key in keys[keys.index(target) :]:
                del records[key]
        if resumed:
            report.requires_full_reparse = True
            report.note("$rewindTo after resume offset: history rewritten")
        return set()
    if "$set" in obj:
        patch = obj.get("$set")
        if not isinstance(patch, dict):
            report.unknown_records += 1
            return set()
        written: set[str] = set()
        if isinstance(patch.get("messages"), list):
            records.clear()
            for index, raw in enumerate(patch["messages"]):
                if isinstance(raw, dict):
                    records[str(raw.get("id", f"#set{index}"))] = raw
            written = set(records)
            if resumed:
                report.requires_full_reparse = True
                report.note("$set.messages checkpoint after resume offset: history rewritten")
        meta.update({k: v for k, v in patch.items() if k != "messages"})
        return written
    if "id" in obj and "type" in obj:
        records[str(obj["id"])] = obj  # re-appended id: last write wins, first position kept
        return {str(obj["id"])}
    report.unknown_records += 1
    return set()


# ------------------------------------------------------------------------------------------- building


def records_by_id(messages: list[Any], report: ParseReport, model_type: str = "gemini") -> dict[str, dict[str, Any]]:
    """A whole-file recording's messages by id (position when none; a later copy of an id wins), each counted as a
    line; ``model_type``: what the recorder calls the model's turns (Qwen Code's copy of the recorder: ``qwen``)."""
    records: dict[str, dict[str, Any]] = {}
    for index, raw in enumerate(messages):
        report.lines += 1
        if not isinstance(raw, dict):
            report.bad_lines += 1
            continue
        if model_type != "gemini" and raw.get("type") == model_type:
            raw = {**raw, "type": "gemini"}
        msg_id = raw.get("id")
        records[str(msg_id) if msg_id is not None else f"#{index}"] = raw
    return records


def _build_session(
    path: Path,
    meta: dict[str, Any],
    records: dict[str, dict[str, Any]],
    report: ParseReport,
    fresh: set[str] | None = None,
) -> Session | None:
    """``fresh`` (resume): only those records yield messages; the others are read for the tool results
    they already kept."""
    session_id = meta.get("sessionId")
    if not isinstance(session_id, str) or not session_id.strip():
        session_id = path.stem
        report.note("no sessionId: file name used")
    subagent = meta.get("kind") == "subagent"
    flags = frozenset({FLAG_SUBAGENT}) if subagent else frozenset()
    messages: list[Message] = []
    seen_results: set[str] = set()
    scratch = ParseReport(path=str(path))
    for msg_id, record in records.items():
        if fresh is None or msg_id in fresh:
            messages.extend(record_messages(msg_id, record, report, seen_results, flags))
        else:
            record_messages(msg_id, record, scratch, seen_results, flags)
    if not messages:
        return None  # parse_file notes an accepted file with no messages
    phash = meta.get("projectHash") if isinstance(meta.get("projectHash"), str) else None
    root = resolve_project_root(path, phash)
    stamps = [m.timestamp for m in messages if m.timestamp]
    summary = meta.get("summary")
    parent = None
    if subagent and path.parent.name != "chats":
        parent = path.parent.name
    return Session(
        session_id=session_id.strip(),
        platform=PLATFORM,
        source_path=str(path),
        project=Path(root).name if root else None,
        project_path=root,
        cwd=root,
        git_branch=None,  # Gemini does not record it
        started_at=iso_timestamp(meta.get("startTime")) or earliest(stamps),
        ended_at=iso_timestamp(meta.get("lastUpdated")) or latest(stamps),
        title=nfc(summary.strip()) if isinstance(summary, str) and summary.strip() else None,
        parent_session_id=parent,
        messages=messages,
    )


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _parts(content: Any) -> list[Any]:
    """PartListUnion → list of parts (a string is one text part)."""
    if content is None:
        return []
    if isinstance(content, list):
        return content
    return [content]


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get("thought"):
        return part["text"]
    return ""


def _text_of(parts: list[Any]) -> str:
    return "\n\n".join(t for t in (_part_text(p) for p in parts) if t.strip())


def _function_responses(parts: list[Any]) -> list[dict[str, Any]]:
    return [
        p["functionResponse"]
        for p in parts
        if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)
    ]


def _only_function_responses(parts: list[Any]) -> bool:
    meaningful = [p for p in parts if not (isinstance(p, str) and not p.strip())]
    return bool(meaningful) and all(isinstance(p, dict) and "functionResponse" in p for p in meaningful)


def record_messages(
    msg_id: str,
    record: dict[str, Any],
    report: ParseReport,
    seen_results: set[str],
    flags: frozenset[str] = frozenset(),
) -> list[Message]:
    """One Gemini ``MessageRecord`` → kept messages (pure except for counting in ``report``)."""
    rtype = record.get("type")
    ts = iso_timestamp(record.get("timestamp"))
    if rtype in NOTICE_TYPES:
        report.skipped_messages += 1
        return []
    content = record.get("content") if "content" in record else record.get("parts")
    parts = _parts(content)
    if rtype == "user":
        return _user_messages(msg_id, record, parts, ts, report, seen_results, flags)
    if rtype in ASSISTANT_TYPES:
        return _assistant_messages(msg_id, record, parts, ts, seen_results, flags)
    report.unknown_records += 1
    return []


def _user_messages(
    msg_id: str,
    record: dict[str, Any],
    parts: list[Any],
    ts: str | None,
    report: ParseReport,
    seen_results: set[str],
    flags: frozenset[str],
) -> list[Message]:
    display = _parts(record.get("displayContent"))
    out: list[Message] = []
    response_parts = parts if _only_function_responses(parts) else []
    if display and _only_function_responses(display):
        response_parts = display  # continuation prompt whose real payload is a tool output
    elif display and _text_of(display):
        parts = display  # what the user typed (e.g. "/init") rather than the expanded prompt
    for index, response in enumerate(_function_responses(response_parts)):
        call_id = str(response.get("id") or f"{msg_id}:{index}")
        if call_id in seen_results:
            continue  # already kept from the gemini message's toolCalls
        seen_results.add(call_id)
        text, failed = _response_text(response)
        out.append(
            Message(
                native_id=f"{msg_id}#result:{call_id}",
                role="user",
                kind="tool_result",
                text=nfc(bound_text(text)),
                timestamp=ts,
                tool_name=response.get("name") if isinstance(response.get("name"), str) else None,
                flags=flags | {FLAG_ERROR} if failed else flags,
            )
        )
    if response_parts is parts:
        return out
    cleaned = clean_user_text(_text_of(parts))
    if cleaned is None:
        report.skipped_messages += 1
        return out
    out.append(
        Message(native_id=msg_id, role="user", kind="text", text=nfc(cleaned), timestamp=ts, flags=flags)
    )
    return out


def _assistant_messages(
    msg_id: str,
    record: dict[str, Any],
    parts: list[Any],
    ts: str | None,
    seen_results: set[str],
    flags: frozenset[str],
) -> list[Message]:
    out: list[Message] = []
    thinking = [_thought_text(t) for t in _as_list(record.get("thoughts")) if isinstance(t, dict)]
    thinking += [
        p["text"]
        for p in parts
        if isinstance(p, dict) and p.get("thought") and isinstance(p.get("text"), str)
    ]
    thinking = [t for t in thinking if t.strip()]
    if thinking:
        out.append(
            Message(
                f"{msg_id}#thoughts", "assistant", "thinking", nfc("\n\n".join(thinking)), ts, flags=flags
            )
        )
    text = _text_of(parts)
    if text.strip():
        out.append(Message(msg_id, "assistant", "text", nfc(text.strip()), ts, flags=flags))
    calls = [c for c in _as_list(record.get("toolCalls")) if isinstance(c, dict)]
    if not calls:  # calls only present as functionCall parts
        calls = [
            {"id": fc.get("id"), "name": fc.get("name"), "args": fc.get("args")}
            for fc in (p.get("functionCall") for p in parts if isinstance(p, dict))
            if isinstance(fc, dict)
        ]
    for index, call in enumerate(calls):
        out.extend(_tool_call_messages(msg_id, index, call, ts, seen_results, flags))
    return out


def _thought_text(thought: dict[str, Any]) -> str:
    subject = thought.get("subject") if isinstance(thought.get("subject"), str) else ""
    description = thought.get("description") if isinstance(thought.get("description"), str) else ""
    subject, description = subject.strip(), description.strip()
    if subject and description:
        return f"{subject}: {description}"
    return subject or description


# an MCP tool's ``displayName`` as Gemini CLI (and Qwen Code) write it: ``<tool> (<server> MCP Server)``
_MCP_DISPLAY = re.compile(r"(\S+) \((\S+) MCP Server\)")


def _tool_call_messages(
    msg_id: str,
    index: int,
    call: dict[str, Any],
    ts: str | None,
    seen_results: set[str],
    flags: frozenset[str],
) -> list[Message]:
    name = call.get("name") if isinstance(call.get("name"), str) else "tool"
    server = _MCP_DISPLAY.fullmatch(call["displayName"]) if isinstance(call.get("displayName"), str) else None
    if server and server.group(1) == name:  # an MCP tool under its bare name: keep its server (wwt/own_tools.py)
        name = qualified_tool(server.group(2), name)
    call_id = str(call.get("id") or f"{msg_id}:{index}")
    call_ts = iso_timestamp(call.get("timestamp")) or ts
    out = [
        Message(
            native_id=f"{msg_id}#call:{call_id}",
            role="assistant",
            kind="tool_call",
            text=nfc(render_tool_call(name, call.get("args"))),
            timestamp=call_ts,
            tool_name=name,
            flags=flags,
        )
    ]
    responses = _function_responses(_parts(call.get("result")))
    texts: list[str] = []
    failed = call.get("status") == "error"
    for response in responses:
        text, bad = _response_text(response)
        texts.append(text)
        failed = failed or bad
    if not responses:
        display = call.get("resultDisplay")
        if isinstance(display, str) and display.strip():
            texts.append(display)
        elif call.get("status") in ("error", "cancelled"):
            texts.append(str(call.get("status")))
    text = "\n\n".join(t for t in texts if t)
    if text or failed:
        seen_results.add(call_id)
        out.append(
            Message(
                native_id=f"{msg_id}#result:{call_id}",
                role="user",
                kind="tool_result",
                text=nfc(bound_text(text or str(call.get("status")))),
                timestamp=call_ts,
                tool_name=name,
                flags=flags | {FLAG_ERROR} if failed else flags,
            )
        )
    return out


def _response_text(response: dict[str, Any]) -> tuple[str, bool]:
    """Text of a ``functionResponse`` and whether it reports a failure (``error`` key, non-zero exit)."""
    body = response.get("response")
    failed = False
    if isinstance(body, dict):
        if body.get("error") not in (None, "", False):
            failed = True
            error = body["error"]
            text = error if isinstance(error, str) else json.dumps(error, ensure_ascii=False, default=str)
        elif isinstance(body.get("output"), str):
            text = body["output"]
        elif isinstance(body.get("content"), str):
            text = body["content"]
        else:
            text = json.dumps(body, ensure_ascii=False, default=str)
    elif isinstance(body, str):
        text = body
    else:
        text = ""
    code = _EXIT_CODE.search(text)
    if code and code.group(1) != "0":
        failed = True
    return text, failed
