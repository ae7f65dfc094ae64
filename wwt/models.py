"""The normalised data model every stage shares: parsers produce it, the store keeps it, search returns it.

Timestamps are ISO 8601 strings in UTC (``2026-01-31T12:00:00Z``-style) or ``None`` when the log has none or
an unparseable one; parsers normalise them (see ``wwt.parsers.common.iso_timestamp``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone

_STORED_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{3})?Z")


def time_key(ts: str) -> str:
    """A timestamp as a string that sorts in time order: ``…:SS.mmmZ`` in UTC. Stored times drop a whole second's
    ``.000`` and plain string order puts ``…:00.640Z`` before ``…:00Z``; a time with a UTC offset is moved to UTC.
    A string that is no ISO time is returned unchanged (it sorts as itself)."""
    if _STORED_TS.fullmatch(ts):
        return ts if len(ts) == 24 else ts[:19] + ".000Z"
    try:
        moment = datetime.fromisoformat(ts[:-1] + "+00:00" if ts.endswith(("Z", "z")) else ts)
    except ValueError:
        return ts
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def earliest(stamps: Iterable[str | None]) -> str | None:
    """The first moment among ``stamps`` (Nones ignored), compared as times; None when there is none."""
    return min((s for s in stamps if s), key=time_key, default=None)


def latest(stamps: Iterable[str | None]) -> str | None:
    """The last moment among ``stamps`` (Nones ignored), compared as times; None when there is none."""
    return max((s for s in stamps if s), key=time_key, default=None)


PLATFORMS = ("claude-code", "gemini-cli", "codex-cli", "qwen-code", "copilot-cli", "opencode", "aider", "cursor", "cline", "roo-code", "continue", "goose")
# Human names, and the short aliases ``--source`` / MCP ``source`` accept besides the platform names.
PLATFORM_NAMES = {
    "claude-code": "Claude Code",
    "gemini-cli": "Gemini CLI",
    "codex-cli": "Codex CLI",
    "qwen-code": "Qwen Code",
    "copilot-cli": "Copilot CLI",
    "opencode": "OpenCode",
    "aider": "Aider",
    "cursor": "Cursor",
    "cline": "Cline",
    "roo-code": "Roo Code",
    "continue": "Continue",
    "goose": "Goose",
}
SOURCE_ALIASES = {"claude": "claude-code", "gemini": "gemini-cli", "codex": "codex-cli", "qwen": "qwen-code",
                  "copilot": "copilot-cli", "roo": "roo-code"}
# Agents that look a session up per project folder: their resume command runs in the session's cwd.
RESUME_IN_CWD = frozenset({"claude-code", "gemini-cli", "qwen-code", "opencode", "aider", "cline"})


def platform_of(name: str) -> str | None:
    """A platform name or alias (any case) as the platform it names; None when it names none."""
    value = name.strip().lower()
    value = SOURCE_ALIASES.get(value, value)
    return value if value in PLATFORMS else None

# Message flags (a message may carry several).
FLAG_SIDECHAIN = "sidechain"  # Claude isSidechain / inline subagent exchange
FLAG_SUBAGENT = "subagent"  # message comes from a subagent transcript
FLAG_COMPACTION_SUMMARY = "compaction_summary"  # summary written by the agent when compacting; not user text
FLAG_INTERRUPTED = "interrupted"  # turn interrupted by the user
FLAG_QUEUED = "queued"  # user input typed while the agent was busy (queued_command)
FLAG_ERROR = "error"  # a tool result that reports an error


@dataclass
class Message:
    """One kept message. ``native_id`` is stable across re-reads of the same log (uuid, message id, or a
    synthesised ``"<line-offset>"``-based id when the agent wrote none)."""

    native_id: str
    role: str  # "user" | "assistant"
    kind: str  # "text" | "tool_call" | "tool_result" | "thinking"
    text: str
    timestamp: str | None = None
    tool_name: str | None = None
    parent_id: str | None = None  # native id of the message this one follows, when the log says so
    flags: frozenset[str] = field(default_factory=frozenset)


@dataclass
class Session:
    """One conversation as read from one source file (a subagent transcript is its own Session whose
    ``parent_session_id`` names the conversation it belongs to)."""

    session_id: str
    platform: str  # one of PLATFORMS
    source_path: str
    project: str | None = None  # human name, e.g. the basename of the project root
    project_path: str | None = None  # absolute project root when known
    cwd: str | None = None
    git_branch: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    title: str | None = None
    parent_session_id: str | None = None
    messages: list[Message] = field(default_factory=list)
    # The title is only this parse's first prompt (no title record): it names the session only when none is
    # stored yet — an incremental parse's first prompt is the appended part's, not the conversation's.
    title_is_first_prompt: bool = False


@dataclass
class ParseReport:
    """What a parser saw in one file, for the CLI's per-file report. Parsers never raise: they count here."""

    path: str
    platform: str | None = None
    lines: int = 0
    bad_lines: int = 0  # malformed JSON, invalid UTF-8, truncated lines
    unknown_records: int = 0  # well-formed records of a type we do not know (skipped silently)
    skipped_messages: int = 0  # injected/noise messages left out on purpose
    redactions: int = 0
    end_offset: int = 0  # byte offset just after the last complete line consumed (resume point)
    requires_full_reparse: bool = False  # appended data rewrites history ($rewindTo, rewind): reparse whole file
    notes: list[str] = field(default_factory=list)  # short human-readable notes, bounded

    def note(self, text: str) -> None:
        if len(self.notes) < 20:
            self.notes.append(text)


@dataclass
class Filters:
    """Search scope. ``None`` means unrestricted. Times are ISO 8601 UTC strings."""

    project: str | None = None
    platform: str | None = None
    git_branch: str | None = None
    cwd: str | None = None
    since: str | None = None
    until: str | None = None
    exclude_session_id: str | None = None

    def is_empty(self) -> bool:
        return not any(
            (self.project, self.platform, self.git_branch, self.cwd, self.since, self.until)
        )
