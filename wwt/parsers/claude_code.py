"""Claude Code transcripts: ``~/.claude/projects/<enc-cwd>/<sessionId>.jsonl`` (+ ``CLAUDE_CONFIG_DIR``),
subagent files ``<sessionId>/subagents/agent-<id>.jsonl`` (workflow runs: ``subagents/workflows/<run>/``,
``sessionId`` ``<uuid>#agent-<id>``) and ≤2.0 ``agent-<id>.jsonl`` next to the session.

* **Main or subagent.** Decided by the file name (``agent-*`` = subagent, a UUID = main), else by the first
  chain line; inline sidechain lines later in a main transcript are flagged ``sidechain`` only.
* **Detection.** Qwen Code's chat logs share the line envelope but hold Gemini ``{role, parts}`` messages:
  not claimed (docs/formats-notes.md). A line stripped of the chain keys (``type``, ``message``, ``timestamp``
  only, as other readers' fixtures write them) still counts as Claude Code's.

Rules chosen here (see docs/agent-log-formats.md §1):

* **Rewinds.** The file is a tree of ``uuid``/``parentUuid``. A *rewind fork* is a parent with two or more
  children that are real user prompts (forks made of tool results, progress or attachment lines are normal
  and kept). At each rewind fork the branch holding the most recently written line wins (its subtree counts
  lines linked through ``logicalParentUuid``, so a compaction that continued a branch keeps it alive); the
  other branches' lines are dropped unless they are also part of the winner. Roots (``parentUuid: null``
  after ``/clear`` or a compaction) are all kept. ``supersedesUuids`` drops the superseded lines.
* **Streaming splits.** One API message written as several lines (shared ``message.id``): each block is its
  own Message; a block repeated on a later line of the same message id is kept once. A line repeated with
  the same ``uuid`` and text (copied on resume, with a new timestamp/sessionId) is kept once.
* **Noise.** ``isMeta`` text, command echoes, ``<system-reminder>`` etc. are removed (``noise.py``); tool
  results on ``isMeta`` lines are kept. ``isCompactSummary`` text becomes an *assistant* message flagged
  ``compaction_summary``. ``<synthetic>``/API-error stand-ins are skipped. ``agent-acompact-*`` transcripts
  keep only the summary answer (flagged), never the summarisation prompt.
* **Queued input** (``attachment`` ``queued_command``) is a user message flagged ``queued``, dropped when
  the same text also arrives as a normal user line.
* **Incremental.** With ``start_offset`` only new lines are read; the 256 KiB before the offset are
  scanned for uuids so a new prompt that branches off an earlier point (a rewind) sets
  ``report.requires_full_reparse``.
"""

from __future__ import annotations

import json
import os
import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PureWindowsPath
from typing import Any

from wwt.models import (
    FLAG_COMPACTION_SUMMARY,
    FLAG_ERROR,
    FLAG_INTERRUPTED,
    FLAG_QUEUED,
    FLAG_SIDECHAIN,
    FLAG_SUBAGENT,
    Message,
    ParseReport,
    Session,
    time_key,
)
from wwt.parsers.common import (
    bound_text,
    flatten_text,
    iso_timestamp,
    iter_jsonl,
    nfc,
    render_tool_call,
    strip_ansi,
)
from wwt.parsers.noise import clean_user_text, strip_injected_tags

PLATFORM = "claude-code"

CHAIN_TYPES = frozenset({"user", "assistant", "system", "progress", "attachment"})
META_TYPES = frozenset(
    {
        "summary",
        "custom-title",
        "ai-title",
        "tag",
        "last-prompt",
        "file-history-snapshot",
        "file-history-delta",
        "queue-operation",
        "permission-mode",
        "mode",
        "worktree-state",
        "pr-link",
        "agent-name",
        "content-replacement",
        "atis-latch",  # 2.1.2xx session bookkeeping: no conversation
        "bridge-session",
    }
)
_UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_AGENT_STEM_RE = re.compile(r"^agent-([A-Za-z0-9]+(?:-[A-Za-z0-9]+)*)$")
_ABSOLUTE_PATH_RE = re.compile(r"^(?:/|~|[A-Za-z]:[\\/]|\\\\)")
_BAD_BRANCH_CHARS = re.compile(r"[\s\[\]~^:?*\\]")
# A Gemini-style message (``"message": {"role": …, "parts"``) as written by Qwen Code, seen in a line cut by
# the end of the detection head (quotes inside JSON strings are escaped, so text cannot fake it).
_PARTS_MESSAGE_RE = re.compile(rb'"message"\s*:\s*\{\s*"role"\s*:\s*"[A-Za-z]+"\s*,\s*"parts"\s*:')
_META_PREFIX_RE = re.compile(rb'^\{\s*"type"\s*:\s*"(?:file-history-snapshot|summary|queue-operation|custom-title|ai-title)"')
_INTERRUPTED = "[Request interrupted by user"
REWIND_SCAN_BYTES = 256 * 1024


def is_uuid(text: str) -> bool:
    return bool(_UUID_RE.match(text))


def is_claude_record(obj: Any) -> bool:
    """Does one decoded line look like a Claude Code transcript record?"""
    if not isinstance(obj, dict):
        return False
    rtype = obj.get("type")
    if rtype in CHAIN_TYPES:
        if is_gemini_style_message(obj.get("message")) or "systemPayload" in obj:
            return False  # Qwen Code: Claude's envelope around a Gemini ``{role, parts}`` / a ``systemPayload``
        return "uuid" in obj or "parentUuid" in obj or "isSidechain" in obj
    return rtype in META_TYPES and "payload" not in obj


# ``origin.kind`` of user lines Claude Code wrote itself (2.1.8x+; "human" is typed).
MACHINE_ORIGINS = frozenset({"task-notification"})
_FOREIGN_KEYS = frozenset({"payload", "data", "role", "systemPayload", "id", "parts"})


def is_bare_message_line(obj: dict[str, Any]) -> bool:
    """A transcript line without its chain keys (``uuid``, ``sessionId``…), as other readers' fixtures write
    Claude Code lines: ``type`` user/assistant, an Anthropic ``message`` (``content`` a string or a block list)
    and a ``timestamp`` — no key another agent's envelope has."""
    message = obj.get("message")
    return (
        obj.get("type") in ("user", "assistant")
        and isinstance(message, dict)
        and isinstance(message.get("content"), (str, list))
        and "parts" not in message
        and isinstance(obj.get("timestamp"), str)
        and not _FOREIGN_KEYS & obj.keys()
    )


def is_gemini_style_message(message: Any) -> bool:
    """``{role, parts: [...]}`` without ``content``: a Gemini ``Content``, not an Anthropic message."""
    return isinstance(message, dict) and "parts" in message and "content" not in message


def project_root(cwd: str) -> str:
    """The git root above ``cwd`` when it exists on this machine, else ``cwd`` itself (the log may come from
    another machine; the encoded directory name is lossy, so ``cwd`` is the best we have)."""
    try:
        here = Path(cwd)
        if here.is_absolute() and here.is_dir():
            for candidate in (here, *here.parents):
                if (candidate / ".git").exists():
                    return str(candidate)
    except OSError:
        pass
    return cwd


def project_name(path: str) -> str | None:
    if re.match(r"^[A-Za-z]:[\\/]", path) or "\\" in path:
        name = PureWindowsPath(path).name
    else:
        name = Path(path.rstrip("/")).name
    return name or None


@dataclass(slots=True)
class _Line:
    """Tree skeleton of one chain line (kept small: the whole file's skeleton stays in memory)."""

    idx: int
    uuid: str | None
    parent: str | None
    logical_parent: str | None
    is_prompt: bool = False


@dataclass
class _State:
    path: Path
    report: ParseReport
    is_subagent: bool = False
    role_known: bool = False  # main vs subagent settled (by the file name, else by the first chain line)
    messages: list[tuple[int, Message]] = field(default_factory=list)  # (line idx, message)
    skeleton: list[_Line] = field(default_factory=list)
    seen_texts: dict[str, int] = field(default_factory=dict)  # native id -> hash(text)
    offset: int = 0
    timestamp: str | None = None  # of the record being handled
    echo_ids: set[str] = field(default_factory=set)  # user input echoed by system/local_command lines
    seen_blocks: set[tuple[str, str, int]] = field(default_factory=set)
    tool_names: dict[str, str] = field(default_factory=dict)
    superseded: set[str] = field(default_factory=set)
    session_ids: list[str] = field(default_factory=list)
    agent_id: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    first_ts: str | None = None
    last_ts: str | None = None
    custom_title: str | None = None
    ai_title: str | None = None
    summary_title: str | None = None
    last_prompt: str | None = None


class ClaudeCodeParser:
    platform = PLATFORM

    def default_roots(self) -> list[Path]:
        env = os.environ.get("CLAUDE_CONFIG_DIR")
        base = Path(nfc(env)).expanduser() if env else Path.home() / ".claude"
        return [base / "projects"]

    def detect(self, path: Path, head: bytes) -> bool:
        name = path.name
        if not name.endswith(".jsonl"):
            return False
        verdict = _content_verdict(head)
        if verdict is not None:
            return verdict
        return self._in_default_location(path)

    def _in_default_location(self, path: Path) -> bool:
        try:
            resolved = path.resolve()
        except OSError:
            resolved = path
        for root in self.default_roots():
            try:
                resolved.relative_to(root.resolve())
                return True
            except (ValueError, OSError):
                continue
        return "projects" in path.parts and any(p == ".claude" for p in path.parts)

    def parse(self, path: Path, report: ParseReport, start_offset: int = 0) -> Iterator[Session]:
        path = Path(path)
        report.platform = PLATFORM
        state = _State(path=path, report=report)
        stem = path.stem
        stem_match = _AGENT_STEM_RE.match(stem)
        if stem_match:
            state.is_subagent = True
            state.agent_id = stem_match.group(1)
        state.role_known = bool(stem_match) or is_uuid(stem)
        if not state.role_known and start_offset > 0:
            _settle_role_from_start(state)
        for idx, (offset, _end, obj) in enumerate(iter_jsonl(path, report, start_offset)):
            try:
                _handle_record(state, idx, offset, obj)
            except Exception as exc:  # a record of an unforeseen shape must not cost the file
                report.bad_lines += 1
                report.note(f"record at byte {offset} not understood: {type(exc).__name__}")
        if start_offset > 0 and _branches_off_earlier(state, start_offset):
            report.requires_full_reparse = True
        session = _build_session(state, start_offset)
        if session is not None:
            yield session


# ---------------------------------------------------------------------------------------------- detect


def _content_verdict(head: bytes) -> bool | None:
    """True/False when the first decodable line says so, None when it cannot tell (empty, junk, unknown
    JSON). Malformed lines are skipped so one corrupt first line does not hide a whole transcript. A chain
    line without a ``message`` (a ``system`` event) only leans yes: Qwen Code writes the same envelope, so the
    first line that holds a message decides when there is one in the head."""
    lines = head.split(b"\n")
    leaning: bool | None = None
    for position, raw in enumerate(lines):
        line = raw.strip()
        if not line:
            continue
        complete = position < len(lines) - 1
        if complete:
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if not isinstance(obj, dict):
                return leaning
            if is_gemini_style_message(obj.get("message")) or obj.get("type") == "tool_result":
                return False  # Qwen Code chat record
            if is_claude_record(obj):
                if obj.get("type") == "system" and "message" not in obj:
                    leaning = True
                    continue
                return True
            if is_bare_message_line(obj):
                return True
            if "payload" in obj or "projectHash" in obj or "messages" in obj:
                return bool(leaning)  # Codex envelope / Gemini header (after a Claude line: spliced in)
            return leaning
        if _PARTS_MESSAGE_RE.search(line):
            return False
        prefix = line[:600]
        if b'"payload"' in prefix:
            return False
        if b'"parentUuid"' in prefix or b'"isSidechain"' in prefix or _META_PREFIX_RE.search(prefix):
            return True
        return leaning
    return leaning


# --------------------------------------------------------------------------------------------- records


def _handle_record(state: _State, idx: int, offset: int, obj: dict[str, Any]) -> None:
    rtype = obj.get("type")
    report = state.report
    state.offset = offset
    state.timestamp = iso_timestamp(obj.get("timestamp"))
    if rtype in CHAIN_TYPES:
        _note_context(state, obj)
        uuid = obj.get("uuid") if isinstance(obj.get("uuid"), str) else None
        parent = obj.get("parentUuid") if isinstance(obj.get("parentUuid"), str) else None
        logical = obj.get("logicalParentUuid") if isinstance(obj.get("logicalParentUuid"), str) else None
        line = _Line(idx, uuid, parent, logical)
        state.skeleton.append(line)
        supersedes = obj.get("supersedesUuids")
        if isinstance(supersedes, list):
            state.superseded.update(u for u in supersedes if isinstance(u, str))
        base_id = uuid or f"@{offset}"
        if rtype == "user":
            line.is_prompt = _handle_user(state, idx, base_id, parent, obj)
        elif rtype == "assistant":
            _handle_assistant(state, idx, base_id, parent, obj)
        elif rtype == "attachment":
            _handle_attachment(state, idx, base_id, parent, obj)
        elif rtype == "system":
            _handle_system(state, idx, base_id, parent, obj)
        return
    if rtype == "custom-title" and isinstance(obj.get("customTitle"), str):
        state.custom_title = obj["customTitle"]
    elif rtype == "ai-title" and isinstance(obj.get("aiTitle"), str):
        state.ai_title = obj["aiTitle"]
    elif rtype == "summary" and isinstance(obj.get("summary"), str):
        state.summary_title = obj["summary"]
    elif rtype == "last-prompt" and isinstance(obj.get("lastPrompt"), str):
        state.last_prompt = obj["lastPrompt"]
    elif rtype not in META_TYPES:
        report.unknown_records += 1


def _note_context(state: _State, obj: dict[str, Any]) -> None:
    sid = obj.get("sessionId")
    if isinstance(sid, str) and sid and (not state.session_ids or state.session_ids[-1] != sid):
        if sid not in state.session_ids and len(state.session_ids) < 8:
            state.session_ids.append(sid)
    cwd = obj.get("cwd")
    if isinstance(cwd, str) and _ABSOLUTE_PATH_RE.match(cwd):
        state.cwd = nfc(cwd)
    branch = obj.get("gitBranch")
    if isinstance(branch, str) and branch and not _BAD_BRANCH_CHARS.search(branch):
        state.git_branch = branch
    if not state.role_known:
        _settle_role(state, obj)
    ts = state.timestamp
    if ts is not None:
        if state.first_ts is None or time_key(ts) < time_key(state.first_ts):
            state.first_ts = ts
        if state.last_ts is None or time_key(ts) > time_key(state.last_ts):
            state.last_ts = ts


def _settle_role(state: _State, obj: dict[str, Any]) -> None:
    """A file named neither ``agent-*`` nor by a UUID (a renamed copy) is a subagent transcript when its FIRST
    chain line is a sidechain line with an ``agentId``. Later such lines are a subagent written inline into
    the main transcript and flagged sidechain: they never turn the file into a subagent."""
    state.role_known = True
    agent_id = obj.get("agentId")
    if isinstance(agent_id, str) and agent_id and obj.get("isSidechain") is True:
        state.is_subagent = True
        state.agent_id = agent_id


def _settle_role_from_start(state: _State) -> None:
    """For a resumed parse: the role is settled by the file's first chain line, not by the first new one."""
    for _offset, _end, obj in iter_jsonl(state.path, ParseReport(path=str(state.path))):
        if obj.get("type") in CHAIN_TYPES:
            _settle_role(state, obj)
            return
    state.role_known = True


def _base_flags(state: _State, obj: dict[str, Any]) -> set[str]:
    flags: set[str] = set()
    if state.is_subagent:
        flags.add(FLAG_SUBAGENT)
    if obj.get("isSidechain") is True:
        flags.add(FLAG_SIDECHAIN)
    return flags


def _add(
    state: _State,
    idx: int,
    native_id: str,
    role: str,
    kind: str,
    text: str,
    obj: dict[str, Any],
    parent: str | None,
    flags: set[str],
    tool_name: str | None = None,
) -> None:
    text = nfc(text)
    text_hash = hash(text)
    previous = state.seen_texts.get(native_id)
    if previous == text_hash:
        return  # the same line written twice (copied on resume): keep it once
    if previous is not None:
        native_id = f"{native_id}@{state.offset}"  # a reused uuid with other content: keep both
    state.seen_texts[native_id] = text_hash
    state.messages.append(
        (
            idx,
            Message(
                native_id=native_id,
                role=role,
                kind=kind,
                text=text,
                timestamp=state.timestamp,
                tool_name=tool_name,
                parent_id=parent,
                flags=_frozen(flags),
            ),
        )
    )


_FLAG_SETS: dict[frozenset[str], frozenset[str]] = {}


def _frozen(flags: set[str]) -> frozenset[str]:
    """One shared frozenset per flag combination (there are only a handful) instead of one per message."""
    key = frozenset(flags)
    return _FLAG_SETS.setdefault(key, key)


def _block_id(base_id: str, index: int) -> str:
    return base_id if index == 0 else f"{base_id}#{index}"


def _handle_user(state: _State, idx: int, base_id: str, parent: str | None, obj: dict[str, Any]) -> bool:
    """Add the messages of a user line; True when it holds a real typed prompt."""
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    flags = _base_flags(state, obj)
    report = state.report
    if obj.get("isCompactSummary") is True:
        text = strip_injected_tags(flatten_text(content))
        if text:
            _add(state, idx, base_id, "assistant", "text", text, obj, parent, flags | {FLAG_COMPACTION_SUMMARY})
        return False
    origin = obj.get("origin")
    # ``isMeta`` lines and those Claude Code wrote for a finished background task are not typed.
    is_meta = obj.get("isMeta") is True or (isinstance(origin, dict) and origin.get("kind") in MACHINE_ORIGINS)
    blocks = [content] if isinstance(content, str) else content if isinstance(content, list) else []
    has_prompt = False
    for index, block in enumerate(blocks):
        native_id = _block_id(base_id, index)
        if isinstance(block, str) or (isinstance(block, dict) and block.get("type") == "text"):
            raw = block if isinstance(block, str) else block.get("text")
            if not isinstance(raw, str):
                continue
            cleaned = None if is_meta else clean_user_text(raw)
            if cleaned is None or _is_compaction_prompt(state):
                report.skipped_messages += 1
                continue
            block_flags = set(flags)
            if _INTERRUPTED in raw:
                block_flags.add(FLAG_INTERRUPTED)
            _add(state, idx, native_id, "user", "text", cleaned, obj, parent, block_flags)
            has_prompt = True
        elif isinstance(block, dict) and block.get("type") == "tool_result":
            _add_tool_result(state, idx, native_id, parent, obj, block, flags)
    return has_prompt


def _is_compaction_prompt(state: _State) -> bool:
    return state.is_subagent and bool(state.agent_id) and state.agent_id.startswith("acompact")


def _add_tool_result(
    state: _State, idx: int, native_id: str, parent: str | None, obj: dict[str, Any], block: dict, flags: set
) -> None:
    text = strip_injected_tags(strip_ansi(flatten_text(block.get("content"))))
    if not text:
        return
    result_flags = set(flags)
    structured = obj.get("toolUseResult")
    if block.get("is_error") is True or (isinstance(structured, str) and structured.startswith("Error")):
        result_flags.add(FLAG_ERROR)
    tool_id = block.get("tool_use_id")
    tool_name = state.tool_names.get(tool_id) if isinstance(tool_id, str) else None
    _add(state, idx, native_id, "user", "tool_result", bound_text(text), obj, parent, result_flags, tool_name)


def _handle_assistant(state: _State, idx: int, base_id: str, parent: str | None, obj: dict[str, Any]) -> None:
    message = obj.get("message")
    if not isinstance(message, dict):
        return
    if message.get("model") == "<synthetic>" or obj.get("isApiErrorMessage") is True:
        state.report.skipped_messages += 1
        return
    content = message.get("content")
    msg_id = message.get("id") if isinstance(message.get("id"), str) else base_id
    flags = _base_flags(state, obj)
    if _is_compaction_prompt(state):
        flags.add(FLAG_COMPACTION_SUMMARY)
    blocks = [content] if isinstance(content, str) else content if isinstance(content, list) else []
    for index, block in enumerate(blocks):
        native_id = _block_id(base_id, index)
        if isinstance(block, str):
            block = {"type": "text", "text": block}
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text":
            text = strip_injected_tags(block.get("text") or "") if isinstance(block.get("text"), str) else ""
            if text and _first_time(state, msg_id, "text", text):
                _add(state, idx, native_id, "assistant", "text", text, obj, parent, flags)
        elif btype == "thinking":
            text = block.get("thinking")
            if isinstance(text, str) and text.strip() and _first_time(state, msg_id, "thinking", text):
                _add(state, idx, native_id, "assistant", "thinking", text.strip(), obj, parent, flags)
        elif btype == "tool_use":
            name = block.get("name") if isinstance(block.get("name"), str) else "tool"
            tool_id = block.get("id")
            if isinstance(tool_id, str):
                state.tool_names[tool_id] = name
            rendered = render_tool_call(name, block.get("input"))
            key = tool_id if isinstance(tool_id, str) else rendered
            if _first_time(state, msg_id, "tool_use", key):
                _add(state, idx, native_id, "assistant", "tool_call", rendered, obj, parent, flags, name)


def _first_time(state: _State, msg_id: str, kind: str, key: str) -> bool:
    marker = (msg_id, kind, hash(key))
    if marker in state.seen_blocks:
        return False
    state.seen_blocks.add(marker)
    return True


def _handle_attachment(state: _State, idx: int, base_id: str, parent: str | None, obj: dict[str, Any]) -> None:
    attachment = obj.get("attachment")
    if not isinstance(attachment, dict) or attachment.get("type") != "queued_command":
        return  # hooks, reminders, skill listings, file contents: context injections, not conversation
    text = clean_user_text(flatten_text(attachment.get("prompt")))
    if text is None:
        state.report.skipped_messages += 1
        return
    _add(state, idx, base_id, "user", "text", text, obj, parent, _base_flags(state, obj) | {FLAG_QUEUED})


def _handle_system(state: _State, idx: int, base_id: str, parent: str | None, obj: dict[str, Any]) -> None:
    """Only ``local_command`` echoes can carry user input (a slash command with arguments)."""
    if obj.get("subtype") != "local_command" or not isinstance(obj.get("content"), str):
        return
    text = clean_user_text(obj["content"])
    if text is None:
        state.report.skipped_messages += 1
        return
    state.echo_ids.add(base_id)
    _add(state, idx, base_id, "user", "text", text, obj, parent, _base_flags(state, obj))


# ------------------------------------------------------------------------------------------------ tree


def dropped_lines(skeleton: list[_Line], superseded: set[str] | None = None) -> set[int]:
    """Line indices on abandoned rewind branches (see module doc for the rule)."""
    children: dict[str, list[_Line]] = {}
    for line in skeleton:
        if line.parent is not None:
            children.setdefault(line.parent, []).append(line)
        if line.logical_parent is not None:
            children.setdefault(line.logical_parent, []).append(line)
    dropped: set[int] = set()
    for parent_uuid, kids in children.items():
        # One prompt written on several lines (the same uuid, copied on resume) is one attempt, not a fork.
        prompts = [k for k in kids if k.is_prompt and k.parent == parent_uuid and k.uuid != parent_uuid]
        if len({k.uuid if k.uuid is not None else k.idx for k in prompts}) < 2:
            continue  # no fork here: no subtree walked (a 50,000-message chain made every prompt walk the rest)
        attempts: dict[str | int, set[int]] = {}
        for k in prompts:
            key = k.uuid if k.uuid is not None else k.idx
            attempts[key] = attempts.get(key, set()) | _subtree(k, children)
        keep = max(attempts.values(), key=max)
        for subtree in attempts.values():
            if subtree is not keep:
                dropped |= subtree - keep
    if superseded:
        dropped |= {line.idx for line in skeleton if line.uuid in superseded}
    return dropped


def _subtree(root: _Line, children: dict[str, list[_Line]]) -> set[int]:
    found = {root.idx}
    queue: deque[str] = deque([root.uuid] if root.uuid else [])
    visited: set[str] = set()
    while queue:
        uuid = queue.popleft()
        if uuid in visited:
            continue
        visited.add(uuid)
        for child in children.get(uuid, ()):
            if child.idx not in found:
                found.add(child.idx)
                if child.uuid:
                    queue.append(child.uuid)
    return found


def _branches_off_earlier(state: _State, start_offset: int) -> bool:
    """Do the appended lines rewrite history (a new prompt forking off a point before ``start_offset``)?"""
    new_uuids = {line.uuid for line in state.skeleton if line.uuid}
    if state.superseded - new_uuids:
        return True
    new_prompts = [
        line for line in state.skeleton if line.is_prompt and line.parent and line.parent not in new_uuids
    ]
    if not new_prompts:
        return False
    old_uuids, old_prompt_parents = _scan_tail(state.path, start_offset)
    for line in new_prompts:
        if line.parent not in old_uuids or line.parent in old_prompt_parents:
            return True
    return False


def _scan_tail(path: Path, start_offset: int) -> tuple[set[str], set[str]]:
    begin = max(0, start_offset - REWIND_SCAN_BYTES)
    try:
        with open(path, "rb") as fh:
            fh.seek(begin)
            data = fh.read(start_offset - begin)
    except OSError:
        return set(), set()
    lines = data.split(b"\n")
    if begin > 0:
        lines = lines[1:]  # first one is partial
    uuids: set[str] = set()
    prompt_parents: set[str] = set()
    for raw in lines:
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("uuid"), str):
            continue
        uuids.add(obj["uuid"])
        if obj.get("type") == "user" and isinstance(obj.get("parentUuid"), str) and _looks_like_prompt(obj):
            prompt_parents.add(obj["parentUuid"])
    return uuids, prompt_parents


def _looks_like_prompt(obj: dict[str, Any]) -> bool:
    if obj.get("isMeta") is True or obj.get("isCompactSummary") is True:
        return False
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return clean_user_text(content) is not None
    if isinstance(content, list):
        return any(
            isinstance(b, dict) and b.get("type") == "text" and clean_user_text(str(b.get("text") or ""))
            for b in content
        )
    return False


# ------------------------------------------------------------------------------------------- assembly


def _session_id(state: _State) -> tuple[str, str | None]:
    """(session_id, parent_session_id). Main file: the stem when it is a UUID (the key Claude uses), else
    the first ``sessionId`` in the lines. Subagent: ``<parent>:agent-<id>``."""
    path = state.path
    stem = path.stem
    first_sid = state.session_ids[0] if state.session_ids else None
    if not state.is_subagent:
        return (stem if is_uuid(stem) or not first_sid else first_sid), None
    parent = _parent_from_folder(path)
    if parent is None and first_sid:
        parent = _uuid_part(first_sid)
    agent = state.agent_id or stem
    return f"{parent or 'unknown'}:agent-{agent}", parent


def _parent_from_folder(path: Path) -> str | None:
    """``<uuid>/subagents/agent-*.jsonl`` or, for workflow runs, ``<uuid>/subagents/workflows/<run>/agent-*``."""
    for folder in list(path.parents)[:4]:
        if folder.name == "subagents" and is_uuid(folder.parent.name):
            return folder.parent.name
    return None


def _uuid_part(session_id: str) -> str:
    """Workflow agents write ``sessionId`` as ``<parent uuid>#agent-<id>``: the conversation is the uuid."""
    head, sep, _rest = session_id.partition("#")
    return head if sep and is_uuid(head) else session_id


def _subagent_title(path: Path) -> str | None:
    sidecar = path.parent / f"{path.stem}.meta.json"
    try:
        if not sidecar.is_file() or sidecar.stat().st_size > 1_000_000:
            return None
        meta = json.loads(sidecar.read_bytes())
    except (OSError, ValueError):
        return None
    agent_type = meta.get("agentType") if isinstance(meta, dict) else None
    return f"subagent: {agent_type}" if isinstance(agent_type, str) and agent_type else None


def _build_session(state: _State, start_offset: int) -> Session | None:
    dropped = dropped_lines(state.skeleton, state.superseded)
    kept = [m for idx, m in state.messages if idx not in dropped]
    if dropped:
        state.report.skipped_messages += len(state.messages) - len(kept)
    # Queued / echoed input already present as a normal user line is the same input: keep it once.
    def weak(m: Message) -> bool:
        return FLAG_QUEUED in m.flags or m.native_id in state.echo_ids

    typed = {m.text for m in kept if m.role == "user" and m.kind == "text" and not weak(m)}
    final = [m for m in kept if not weak(m) or m.text not in typed]
    session_id, parent_id = _session_id(state)
    title = state.custom_title or state.ai_title or state.summary_title
    if title is None and state.is_subagent:
        title = _subagent_title(state.path)
    from_prompt = False
    if title is None:
        # The first prompt names a session (as Claude Code's own list falls back to it); the ``last-prompt`` line
        # only for an appended part holding no prompt — as a prompt, so it never replaces a stored title.
        first_prompt = next((m.text for m in final if m.role == "user" and m.kind == "text"), None) or state.last_prompt
        if first_prompt and first_prompt.strip():
            title, from_prompt = first_prompt.strip().splitlines()[0], True  # cut after redaction (parse_file)
    if not final and not (start_offset > 0 and title):
        return None
    project_path = project_root(state.cwd) if state.cwd else None
    return Session(
        session_id=session_id,
        platform=PLATFORM,
        source_path=str(state.path),
        project=project_name(project_path) if project_path else None,
        project_path=project_path,
        cwd=state.cwd,
        git_branch=state.git_branch,
        started_at=state.first_ts,
        ended_at=state.last_ts,
        title=nfc(title) if title else None,
        parent_session_id=parent_id,
        messages=final,
        title_is_first_prompt=from_prompt,
    )
