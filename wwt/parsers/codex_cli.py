"""Codex CLI rollouts (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl[.zst]``, ``archived_sessions/``).

Accepts the pre-envelope mid-2025 shape (bare header ``{id, timestamp}`` + bare items, ``record_type`` markers)
and the envelope ``{timestamp, type, payload}`` of 0.3x → 0.1xx (agent-log-formats.md §3), and the TypeScript
CLI's ``sessions/rollout-YYYY-MM-DD-<uuid>.json``: one JSON object ``{"session": {timestamp, id, instructions},
"items": [...]}`` rewritten whole after each turn (docs/formats-notes.md). ``instructions`` is configured text,
never indexed; items carry no time of their own and take ``session.timestamp`` (the last save).

Decisions:
* One Session per file, identified by the FIRST ``session_meta`` (the file's own thread). Later
  ``session_meta`` lines are history copied from a parent thread (fork/resume) and are noted, not split.
  A subagent thread (``source.subagent``) gets ``parent_session_id`` and every message flagged ``subagent``.
  Files without any header take the uuid in the file name, else the file stem.
* Visible text is stored twice (``response_item`` message and ``event_msg`` user_message/agent_message, or
  ``item_completed`` in paginated mode): the two copies are paired by identical cleaned text within a few
  lines and indexed once, whichever comes first.
* Thinking = readable ``reasoning.summary`` (else ``reasoning.content``); ``encrypted_content`` and the
  ``agent_reasoning`` events (copies of the summary) are dropped. Images (base64 data URLs) are dropped.
* ``compacted.message`` (the summary) is kept flagged ``compaction_summary``; its ``replacement_history``
  is a copy of earlier items and is not re-indexed.
* ``world_state``, ``inter_agent_*``, ``token_usage_record``… carry agent state, not conversation: skipped
  silently; unknown envelope/item/event kinds are counted in ``unknown_records``.
* ``.jsonl.zst`` is streamed; its offsets (``start_offset``/``end_offset``) count decompressed bytes.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from wwt.models import (
    FLAG_COMPACTION_SUMMARY,
    FLAG_ERROR,
    FLAG_INTERRUPTED,
    FLAG_SUBAGENT,
    Message,
    ParseReport,
    Session,
    earliest,
    latest,
)
from wwt.parsers.common import (
    MAX_LINE_BYTES,
    bound_text,
    decode_line,
    flatten_text,
    iso_timestamp,
    iter_jsonl,
    load_json_file,
    lookback_offset,
    nfc,
    open_or_note,
    render_tool_call,
)
from wwt.parsers.noise import clean_user_text

PLATFORM = "codex-cli"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
PAIR_WINDOW = 12  # lines within which a response_item and its event_msg copy are paired
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_EXIT_TEXT = re.compile(r"(?:Process exited with code|Exit code:?)\s*(-?\d+)", re.IGNORECASE)
# What Codex answers a patch it could not apply (its apply_patch tool: stale context, a malformed hunk…).
_PATCH_FAILED = "apply_patch verification failed"

_ENVIRONMENT_CWD = re.compile(r"<environment_context>.*?<cwd>([^<\n]{1,4096})</cwd>", re.DOTALL)
ENVELOPE_TYPES = frozenset(
    {
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "compacted",
        "world_state",
        "inter_agent_communication",
        "inter_agent_communication_metadata",
        "token_usage_record",
        "retained_context",
        "security_risk_score",
        "realtime_item",
    }
)
RESPONSE_ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "tool_search_call",
        "tool_search_output",
        "image_generation_call",
        "compaction",
        "compaction_summary",
        "context_compaction",
        "agent_message",
        "ghost_snapshot",
    }
)
# event_msg types that only repeat what response items hold, or carry UI state.
SILENT_EVENTS = frozenset(
    {
        "token_count",
        "agent_reasoning",
        "agent_reasoning_raw_content",
        "agent_reasoning_section_break",
        "task_started",
        "task_complete",
        "turn_started",
        "turn_complete",
        "patch_apply_begin",
        "patch_apply_end",
        "mcp_tool_call_begin",
        "mcp_tool_call_end",
        "web_search_begin",
        "web_search_end",
        "image_generation_end",
        "context_compacted",
        "thread_rolled_back",
        "entered_review_mode",
        "exited_review_mode",
        "thread_goal_updated",
        "sub_agent_activity",
        "error",
        "warning",
        "stream_error",
        "thread_settings_applied",
        "exec_command_begin",
        "exec_command_end",
        "exec_command_output_delta",
        "collab_agent_spawn_begin",
        "collab_agent_spawn_end",
        "collab_waiting_begin",
        "collab_waiting_end",
        "collab_close_begin",
        "collab_close_end",
        "collab_agent_interaction_begin",
        "collab_agent_interaction_end",
        "guardian_assessment",
        "view_image_tool_call",
        "dynamic_tool_call_request",
        "dynamic_tool_call_response",
        "undo_started",
        "undo_completed",
        "plan_update",
        "background_event",
        "shutdown_complete",
        "session_configured",
        "mcp_startup_update",
        "mcp_startup_complete",
        "item_started",
        "list_custom_prompts_response",
    }
)
SILENT_ITEMS = frozenset(
    {
        "tool_search_output",
        "image_generation_call",
        "compaction",
        "compaction_summary",
        "context_compaction",
        "ghost_snapshot",
    }
)


class CodexCliParser:
    platform = PLATFORM

    def default_roots(self) -> list[Path]:
        home = codex_home()
        return [home / "sessions", home / "archived_sessions"]

    def detect(self, path: Path, head: bytes) -> bool:
        return looks_like_codex(path, head)

    def parse(self, path: Path, report: ParseReport, start_offset: int = 0) -> Iterator[Session]:
        report.platform = PLATFORM
        path = Path(path)
        state = _RolloutState(path, report)
        if path.name.endswith(".json"):  # rewritten whole: always parsed whole
            session = _parse_json_rollout(state)
            if session is not None:
                yield session
            return
        if start_offset:
            for _offset, _end, obj in _records(path, ParseReport(path=str(path))):
                state.read_header(obj)  # identity/cwd/branch of the file, without its messages
                break
            if not is_zstd(path):  # (archived .zst rollouts do not grow)
                back = lookback_offset(path, start_offset, PAIR_WINDOW)
                state.prime(_records(path, ParseReport(path=str(path)), back), start_offset)
        for offset, _end, obj in _records(path, report, start_offset):
            state.feed(offset, obj)
        session = state.session()
        if session is not None:
            yield session


# ------------------------------------------------------------------------------------------- locations


def codex_home() -> Path:
    raw = os.environ.get("CODEX_HOME")
    return Path(raw).expanduser() if raw else Path.home() / ".codex"


def session_id_from_name(path: Path) -> str | None:
    """``rollout-<ts>-<uuid>[_<rolloutId>].jsonl[.zst]`` → ``<uuid>`` (the thread id)."""
    match = _UUID.search(path.name)
    return match.group(0).lower() if match else None


def is_zstd(path: Path, head: bytes = b"") -> bool:
    return path.name.endswith(".zst") or head.startswith(ZSTD_MAGIC)


_ENVELOPE_LINE = re.compile(
    rb'^\s*\{\s*"timestamp"\s*:\s*"[^"\n]{0,64}"\s*,\s*(?:"ordinal"\s*:\s*\d+\s*,\s*)?'
    rb'"type"\s*:\s*"(?:session_meta|response_item|event_msg|turn_context|compacted)"\s*,\s*"payload"\s*:\s*\{',
    re.MULTILINE,
)


_JSON_ROLLOUT_START = re.compile(rb'^\s*\{\s*"session"\s*:\s*\{')


def looks_like_codex(path: Path, head: bytes) -> bool:
    """A rollout: ``*.jsonl.zst`` named ``rollout-*`` (or zstd magic), a TypeScript-era ``rollout-*.json``
    opening with its ``"session"`` object, or a ``.jsonl`` whose first valid line is a Codex envelope / legacy
    header. A junk line before it and a first line longer than ``head`` (a ``session_meta`` with big
    ``base_instructions``) are tolerated."""
    name = path.name
    if is_zstd(path, head):
        return "rollout-" in name or (head.startswith(ZSTD_MAGIC) and ".jsonl" in name)
    if name.endswith(".json"):
        return "rollout-" in name and bool(_JSON_ROLLOUT_START.match(head))
    if not name.endswith(".jsonl"):
        return False
    for raw in head.split(b"\n")[:20]:
        raw = raw.strip()
        if not raw:
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            if _ENVELOPE_LINE.match(raw):
                return True  # envelope line cut by the end of ``head``
            continue
        if not isinstance(obj, dict):
            return False
        if obj.get("type") in ENVELOPE_TYPES and isinstance(obj.get("payload"), dict):
            return True
        # pre-envelope header: {id, timestamp[, instructions, git, cwd]} in a rollout-*.jsonl file
        if "rollout-" not in name:
            return False
        if "id" in obj and "timestamp" in obj and "type" not in obj:
            return True
        return is_legacy_item(obj)
    return False


def is_legacy_item(obj: dict[str, Any]) -> bool:
    """A pre-envelope rollout line: a bare response item (``{type: message|function_call|…}`` or the untyped
    ``{role, content}``) with no envelope of another agent (asked only of ``rollout-*`` files)."""
    if any(key in obj for key in ("payload", "uuid", "sessionId", "message", "data")):
        return False
    return obj.get("type") in RESPONSE_ITEM_TYPES or is_untyped_message(obj)


# --------------------------------------------------------------------------------------------- reading


def _records(
    path: Path, report: ParseReport, start_offset: int = 0
) -> Iterator[tuple[int, int, dict[str, Any]]]:
    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        report.note(f"cannot open: {exc.strerror or exc}")
        return
    if is_zstd(path, magic):
        yield from _iter_zstd_jsonl(path, report, start_offset)
    else:
        yield from iter_jsonl(path, report, start_offset)


def zstd_backend() -> tuple[Callable[[], Any], type[Exception]] | None:
    """(new decompress object, its error class) from the standard library (Python ≥ 3.14) or the optional
    ``zstandard`` package (``pip install 'whatwasthat[zstd]'``); None when neither is there. Not a hard
    dependency: no real compressed rollout has been seen, and the package costs 24 MB installed."""
    try:
        from compression import zstd as stdlib_zstd  # type: ignore[import-not-found]

        return stdlib_zstd.ZstdDecompressor, stdlib_zstd.ZstdError
    except ImportError:
        pass
    try:
        import zstandard
    except ImportError:
        return None
    return zstandard.ZstdDecompressor().decompressobj, zstandard.ZstdError


def _zstd_chunks(fh: BinaryIO, new_decompressor: Callable[[], Any]) -> Iterator[bytes]:
    """Decompressed chunks of every frame; raises ``TruncatedZstd`` when the last frame is cut short."""
    dobj = new_decompressor()
    fed = False
    while True:
        data = fh.read(1 << 16)
        if not data:
            break
        while data:
            fed = True
            out = dobj.decompress(data)
            if out:
                yield out
            if not dobj.eof:
                break
            data = dobj.unused_data  # next frame
            dobj, fed = new_decompressor(), False
    if fed and not dobj.eof:
        raise TruncatedZstd


class TruncatedZstd(Exception):
    """The compressed stream ends inside a frame (file still being written, or cut)."""


def _iter_zstd_jsonl(
    path: Path, report: ParseReport, start_offset: int
) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Stream a ``.jsonl.zst`` line by line (offsets in decompressed bytes), same rules as ``iter_jsonl``."""
    report.end_offset = start_offset
    backend = zstd_backend()
    if backend is None:
        report.note("skipped: reading .zst needs Python 3.14+ or `pip install 'whatwasthat[zstd]'`")
        return
    new_decompressor, zstd_error = backend
    raw_fh = open_or_note(path, report)
    if raw_fh is None:
        return
    offset = 0  # decompressed bytes before ``pending``
    pending = b""
    with raw_fh:
        try:
            for chunk in _zstd_chunks(raw_fh, new_decompressor):
                buffer = pending + chunk
                pos = 0
                while True:
                    newline = buffer.find(b"\n", pos)
                    if newline < 0:
                        break
                    end = offset + newline + 1 - pos
                    if end > start_offset:
                        yield from _zstd_line(buffer[pos : newline + 1], offset, end, report)
                    offset, pos = end, newline + 1
                pending = buffer[pos:]
                if len(pending) > MAX_LINE_BYTES:
                    report.bad_lines += 1
                    report.note(
                        f"line at byte {offset} longer than {MAX_LINE_BYTES} bytes: rest of file skipped"
                    )
                    return
        except TruncatedZstd:
            report.bad_lines += 1
            report.note(f"zstd stream truncated after {offset + len(pending)} decompressed bytes")
            return
        except zstd_error as exc:
            report.bad_lines += 1
            report.note(f"corrupt zstd stream after byte {offset}: {exc}")
            return
    if pending.strip() and offset + len(pending) > start_offset:
        # last line without newline: accepted only when it is whole JSON (same rule as iter_jsonl)
        report.lines += 1
        try:
            obj = json.loads(pending)
        except (ValueError, RecursionError):
            report.bad_lines += 1
            report.note(f"truncated last line at byte {offset}")
            return
        report.end_offset = offset + len(pending)
        if isinstance(obj, dict):
            yield offset, offset + len(pending), obj


def _zstd_line(
    line: bytes, offset: int, end: int, report: ParseReport
) -> Iterator[tuple[int, int, dict[str, Any]]]:
    stripped = line.strip()
    report.end_offset = end
    if not stripped:
        return
    report.lines += 1
    obj = decode_line(stripped, report, offset)
    if isinstance(obj, dict):
        yield offset, end, obj
    elif obj is not None:
        report.bad_lines += 1


# ------------------------------------------------------------------------------------------- building


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _norm(text: str) -> str:
    return " ".join(text.split())


class _Pairer:
    """Indexes each visible text once although Codex writes it twice (response item + event copy)."""

    def __init__(self) -> None:
        self._recent: list[tuple[int, str, str, str]] = []  # (line, role, normalised text, source)

    def is_copy(self, line: int, role: str, text: str, source: str) -> bool:
        norm = _norm(text)
        self._recent = [e for e in self._recent if line - e[0] <= PAIR_WINDOW]
        for index, (_line, e_role, e_norm, e_source) in enumerate(self._recent):
            if e_role == role and e_norm == norm and e_source != source:
                del self._recent[index]  # one copy pairs with one original
                return True
        self._recent.append((line, role, norm, source))
        return False


def codex_output_text(output: Any) -> tuple[str, bool]:
    """A function/custom tool output → (text, failed). Handles the JSON-string ``{output, metadata.exit_code}``
    form, ``Process exited with code N`` text, content-item lists, ``{content, success: false}`` and a patch
    Codex could not apply."""
    failed = False
    if isinstance(output, str):
        text = output
        stripped = output.strip()
        if stripped.startswith("{") and stripped.endswith("}"):
            try:
                decoded = json.loads(stripped)
            except ValueError:
                decoded = None
            if isinstance(decoded, dict) and "output" in decoded:
                inner = decoded.get("output")
                text = inner if isinstance(inner, str) else flatten_text(inner)
                meta = decoded.get("metadata")
                code = meta.get("exit_code") if isinstance(meta, dict) else None
                if isinstance(code, int) and code != 0:
                    failed = True
    elif isinstance(output, dict):
        if output.get("success") is False:
            failed = True
        text = flatten_text(output.get("content")) if "content" in output else flatten_text(output)
        if not text and "content" not in output:
            text = json.dumps(output, ensure_ascii=False, default=str)
    else:
        text = flatten_text(output)
    exit_match = _EXIT_TEXT.search(text[:500])
    if (exit_match and exit_match.group(1) != "0") or text.lstrip().startswith(_PATCH_FAILED):
        failed = True
    return text, failed


def _content_text(content: Any) -> str:
    """Text parts of a message content list (images and their data URLs dropped)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = []
    for part in content:
        if (
            isinstance(part, dict)
            and isinstance(part.get("text"), str)
            and "image" not in str(part.get("type"))
        ):
            texts.append(part["text"])
        elif isinstance(part, str):
            texts.append(part)
    return "\n\n".join(t for t in texts if t.strip())


def is_untyped_message(item: dict[str, Any]) -> bool:
    """``{role, content}`` without ``type``: the Responses API's short form of an input message."""
    return "type" not in item and isinstance(item.get("role"), str) and "content" in item


def _parse_json_rollout(state: _RolloutState) -> Session | None:
    """The TypeScript CLI's whole-file rollout; a bad item is counted, a cut or broken file yields nothing."""
    report = state.report
    data = load_json_file(state.path, report)
    if data is None:
        return None
    meta = data.get("session") if isinstance(data, dict) else None
    items = data.get("items") if isinstance(data, dict) else None
    if not isinstance(meta, dict) or not isinstance(items, list):
        report.bad_lines += 1
        report.note("not a {session, items} rollout object")
        return None
    meta_id = meta.get("id")
    if isinstance(meta_id, str) and meta_id.strip():
        state.session_id = meta_id.strip()
    ts = iso_timestamp(meta.get("timestamp"))
    state.started_at = ts
    instructions = meta.get("instructions")
    if isinstance(instructions, str) and instructions.strip():
        report.skipped_messages += 1
    for index, item in enumerate(items):
        report.lines += 1
        state.line += 1
        if not isinstance(item, dict):
            report.bad_lines += 1
            continue
        state._item(index, item, ts)
    return state.session()


class _RolloutState:
    def __init__(self, path: Path, report: ParseReport) -> None:
        self.path = path
        self.report = report
        self.session_id: str | None = None
        self.cwd: str | None = None
        self.branch: str | None = None
        self.started_at: str | None = None
        self.last_ts: str | None = None
        self.title: str | None = None
        self.parent: str | None = None
        self.flags: frozenset[str] = frozenset()
        self.legacy = False  # pre-envelope file (bare header + bare items)
        self.header_seen = False
        self.enveloped = False  # an envelope line was read: bare items are then not this file's records
        self.line = 0
        self.messages: list[Message] = []
        self.call_names: dict[str, str] = {}
        self.pairer = _Pairer()

    # ---- identity
    def read_header(self, obj: dict[str, Any]) -> bool:
        """Take identity from a ``session_meta`` envelope or a legacy bare header; True when it was one."""
        if obj.get("type") == "session_meta" and isinstance(obj.get("payload"), dict):
            meta = obj["payload"]
        elif "type" not in obj and "payload" not in obj and "id" in obj and "record_type" not in obj and (
            "role" not in obj
        ):
            meta = obj
            self.legacy = True
        else:
            return False
        if self.header_seen:
            self.report.note("extra session_meta (forked/resumed history) kept in this session")
            return True
        self.header_seen = True
        meta_id = meta.get("id") if isinstance(meta.get("id"), str) else None
        self.session_id = meta_id.strip() if meta_id and meta_id.strip() else None
        if isinstance(meta.get("cwd"), str) and meta["cwd"].strip():
            self.cwd = meta["cwd"].strip()
        git = meta.get("git")
        if isinstance(git, dict) and isinstance(git.get("branch"), str) and git["branch"].strip():
            self.branch = git["branch"].strip()
        self.started_at = iso_timestamp(meta.get("timestamp")) or iso_timestamp(obj.get("timestamp"))
        source = meta.get("source")
        if isinstance(source, dict) and "subagent" in source:
            self.flags = frozenset({FLAG_SUBAGENT})
            spawn = source["subagent"].get("thread_spawn") if isinstance(source["subagent"], dict) else None
            parent = spawn.get("parent_thread_id") if isinstance(spawn, dict) else None
            parent = parent or meta.get("parent_thread_id")
            if isinstance(parent, str) and parent.strip():
                self.parent = parent.strip()
        return True

    def prime(self, records: Iterator[tuple[int, int, dict[str, Any]]], stop: int) -> None:
        """Feed the lines just before an incremental parse's start without keeping their messages (stored by
        the previous parse): a text copy after ``stop`` must pair with its original before it."""
        report, self.report = self.report, ParseReport(path=str(self.path))
        try:
            for offset, _end, obj in records:
                if offset >= stop:
                    break
                self.feed(offset, obj)
        finally:
            self.report = report
        self.messages.clear()
        self.title = None

    # ---- records
    def feed(self, offset: int, obj: dict[str, Any]) -> None:
        self.line += 1
        ts = iso_timestamp(obj.get("timestamp"))
        if ts:
            self.last_ts = ts
        kind = obj.get("type")
        payload = obj.get("payload")
        if isinstance(payload, dict) and kind in ENVELOPE_TYPES:
            self.enveloped = True
            if kind == "session_meta":
                self.read_header(obj)
            elif kind == "turn_context":
                cwd = payload.get("cwd")
                if not self.cwd and isinstance(cwd, str) and cwd.strip():
                    self.cwd = cwd.strip()
            elif kind == "response_item":
                self._item(offset, payload, ts)
            elif kind == "event_msg":
                self._event(offset, payload, ts)
            elif kind == "compacted":
                summary = payload.get("message")
                if isinstance(summary, str) and summary.strip():
                    self._add(
                        offset, "assistant", "text", summary.strip(), ts, extra={FLAG_COMPACTION_SUMMARY}
                    )
            return
        if "record_type" in obj:
            return  # legacy state marker
        if not self.header_seen and not self.enveloped and self.read_header(obj):
            return  # first record, or later when a damaged or foreign line came first
        if self.bare_items_are_records() and (kind in RESPONSE_ITEM_TYPES or is_untyped_message(obj)):
            self._item(offset, obj, ts or self.started_at)
            return
        self.report.unknown_records += 1

    def bare_items_are_records(self) -> bool:
        """Bare items are this file's messages in a pre-envelope rollout: once its header was read, or — the
        header lost or not first — in a ``rollout-*`` file without envelope lines."""
        return self.legacy or (not self.enveloped and "rollout-" in self.path.name)

    def _item(self, offset: int, item: dict[str, Any], ts: str | None) -> None:
        itype = item.get("type")
        if itype == "message" or is_untyped_message(item):
            role = item.get("role")
            text = _content_text(item.get("content"))
            if role == "user":
                if not self.cwd and "<environment_context>" in text:
                    found = _ENVIRONMENT_CWD.search(text)  # the only place some sessions name their folder
                    if found and found.group(1).strip():
                        self.cwd = found.group(1).strip()
                self._user_text(offset, text, ts, "item")
            elif role == "assistant":
                self._assistant_text(offset, text, ts, "item")
            else:  # developer/system: harness instructions
                self.report.skipped_messages += 1
        elif itype == "reasoning":
            pieces = [s.get("text") for s in _as_list(item.get("summary")) if isinstance(s, dict)]
            if not any(isinstance(p, str) and p.strip() for p in pieces):
                pieces = [c.get("text") for c in _as_list(item.get("content")) if isinstance(c, dict)]
            text = "\n\n".join(p.strip() for p in pieces if isinstance(p, str) and p.strip())
            if text:
                self._add(offset, "assistant", "thinking", text, ts)
        elif itype in ("function_call", "custom_tool_call", "local_shell_call"):
            name = item.get("name") if isinstance(item.get("name"), str) else None
            namespace = item.get("namespace")
            if name and isinstance(namespace, str) and namespace and not name.startswith(namespace):
                name = f"{namespace}__{name}"  # an MCP tool (Codex 0.17x): `mcp__wwt` + `search_memory`
            if itype == "local_shell_call":
                name = name or "local_shell"
                args: Any = (
                    (item.get("action") or {}).get("command")
                    if isinstance(item.get("action"), dict)
                    else None
                )
            else:
                args = item.get("arguments") if itype == "function_call" else item.get("input")
            if not name:
                self.report.unknown_records += 1
                return
            call_id = item.get("call_id") or item.get("id")
            if isinstance(call_id, str):
                self.call_names[call_id] = name
            self._add(offset, "assistant", "tool_call", render_tool_call(name, args), ts, tool_name=name)
        elif itype in ("function_call_output", "custom_tool_call_output"):
            call_id = item.get("call_id")
            name = self.call_names.get(call_id) if isinstance(call_id, str) else None
            text, failed = codex_output_text(item.get("output"))
            self._add(
                offset,
                "user",
                "tool_result",
                bound_text(text),
                ts,
                tool_name=name,
                extra={FLAG_ERROR} if failed else None,
            )
        elif itype in ("web_search_call", "tool_search_call"):
            action = item.get("action") if isinstance(item.get("action"), dict) else item.get("arguments")
            name = "web_search" if itype == "web_search_call" else "tool_search"
            self._add(offset, "assistant", "tool_call", render_tool_call(name, action), ts, tool_name=name)
        elif itype == "agent_message":  # inter-agent message
            text = _content_text(item.get("content"))
            if text.strip():
                self._add(offset, "assistant", "text", text, ts, extra={FLAG_SUBAGENT})
        elif itype in SILENT_ITEMS:
            return
        else:
            self.report.unknown_records += 1

    def _event(self, offset: int, event: dict[str, Any], ts: str | None) -> None:
        etype = event.get("type")
        if etype == "user_message":
            message = event.get("message")
            self._user_text(offset, message if isinstance(message, str) else "", ts, "event")
        elif etype == "agent_message":
            message = event.get("message")
            self._assistant_text(offset, message if isinstance(message, str) else "", ts, "event")
        elif etype == "item_completed":
            item = event.get("item") if isinstance(event.get("item"), dict) else {}
            if item.get("type") == "UserMessage":
                self._user_text(offset, _content_text(item.get("content")), ts, "event")
            elif item.get("type") == "AgentMessage":
                self._assistant_text(offset, _content_text(item.get("content")), ts, "event")
        elif etype == "turn_aborted":
            if self.messages:
                last = self.messages[-1]
                last.flags = last.flags | {FLAG_INTERRUPTED}
        elif etype == "thread_name_updated":
            name = event.get("thread_name")
            if isinstance(name, str) and name.strip():
                self.title = nfc(name.strip())
        elif etype in SILENT_EVENTS:
            return
        else:
            self.report.unknown_records += 1

    def _user_text(self, offset: int, text: str, ts: str | None, source: str) -> None:
        cleaned = clean_user_text(text)
        if cleaned is None:
            if source == "item":
                self.report.skipped_messages += 1
            return
        if self.pairer.is_copy(self.line, "user", cleaned, source):
            return
        self._add(offset, "user", "text", cleaned, ts)

    def _assistant_text(self, offset: int, text: str, ts: str | None, source: str) -> None:
        text = text.strip()
        if not text or self.pairer.is_copy(self.line, "assistant", text, source):
            return
        self._add(offset, "assistant", "text", text, ts)

    def _add(
        self,
        offset: int,
        role: str,
        kind: str,
        text: str,
        ts: str | None,
        tool_name: str | None = None,
        extra: set[str] | None = None,
    ) -> None:
        flags = self.flags | extra if extra else self.flags
        self.messages.append(
            Message(
                native_id=str(offset),
                role=role,
                kind=kind,
                text=nfc(text),
                timestamp=ts,
                tool_name=tool_name,
                flags=frozenset(flags),
            )
        )

    def session(self) -> Session | None:
        if not self.messages:
            return None  # parse_file notes an accepted file with no messages
        session_id = self.session_id or session_id_from_name(self.path)
        if session_id is None:
            session_id = self.path.name.split(".", 1)[0]
            self.report.note("no session_meta and no id in the file name: file name used")
        stamps = [m.timestamp for m in self.messages if m.timestamp]
        return Session(
            session_id=session_id,
            platform=PLATFORM,
            source_path=str(self.path),
            project=Path(self.cwd).name or self.cwd if self.cwd else None,
            project_path=self.cwd,
            cwd=self.cwd,
            git_branch=self.branch,
            started_at=self.started_at or earliest(stamps),
            ended_at=latest(stamps) or self.last_ts,
            title=self.title,
            parent_session_id=self.parent,
            messages=self.messages,
        )
