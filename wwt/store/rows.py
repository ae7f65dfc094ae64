"""The rows the store hands out, and the pure rules over them (message order, flags, time keys)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from wwt.models import Message, time_key

# --------------------------------------------------------------------------------------------- rows


@dataclass
class ChunkHit:
    id: int
    chunk_key: str
    session_id: str  # the ROOT conversation
    source_session_id: str  # the session the messages come from (a subagent's own id for subagent chunks)
    text: str  # display text
    start_ts: str | None
    end_ts: str | None
    first_seq: int  # message range inside source_session_id
    last_seq: int
    platform: str
    project: str | None
    project_path: str | None
    cwd: str | None
    git_branch: str | None
    started_at: str | None
    ended_at: str | None
    title: str | None
    source_path: str | None


@dataclass
class SessionRow:
    session_id: str
    platform: str
    parent_session_id: str | None
    root_session_id: str
    project: str | None
    project_path: str | None
    cwd: str | None
    git_branch: str | None
    started_at: str | None
    ended_at: str | None
    title: str | None
    source_path: str | None
    message_count: int = 0
    chunk_count: int = 0
    subagent_ids: tuple[str, ...] = ()


@dataclass
class MessageRow:
    session_id: str  # the session the message belongs to (a subagent's id for subagent messages)
    seq: int  # position inside session_id
    native_id: str
    role: str
    kind: str
    text: str
    timestamp: str | None
    tool_name: str | None
    flags: frozenset[str]

    def to_message(self) -> Message:
        return Message(
            native_id=self.native_id, role=self.role, kind=self.kind, text=self.text,
            timestamp=self.timestamp, tool_name=self.tool_name, flags=self.flags,
        )


@dataclass
class QueueItem:
    id: int
    path: str
    platform: str | None
    session_id: str | None
    attempts: int
    error: str | None = None  # parked rows: why the worker gave up


@dataclass
class FileRow:
    id: int
    path: str
    platform: str | None
    size: int
    mtime_ns: int
    consumed_offset: int
    content_hash: str | None
    missing: bool


@dataclass
class StoredChunk:
    """What the chunker's output becomes in SQLite (see ``wwt.chunker.Chunk``)."""

    chunk_key: str
    session_id: str
    root_session_id: str
    first_seq: int
    last_seq: int
    start_ts: str | None
    end_ts: str | None
    embed_text: str
    lexical_text: str
    display_text: str
    embed_hash: str
    requests: Sequence[str] = ()  # the user turns its vector blends in (``wwt.chunker.user_requests``)


def requests_text(requests: Sequence[str]) -> str:
    """A chunk's requests as stored: JSON, or '' for none (most rows of an archive before blending)."""
    return json.dumps(list(requests), ensure_ascii=False) if requests else ""


def requests_of(text: str | None) -> list[str]:
    """The stored requests; a damaged field reads as none (the chunk's vector is then its text's alone)."""
    if not text:
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _flags_text(flags: Iterable[str]) -> str:
    return ",".join(sorted(flags))


def _flags_set(text: str) -> frozenset[str]:
    return frozenset(f for f in text.split(",") if f)


def merge_order(existing: Sequence[str], parsed: Sequence[str], incremental: bool = False) -> list[str]:
    """Order of a session's messages after merging a parse into what is stored.

    Stored messages keep their relative order; a parsed message not yet stored goes right after its
    predecessor in the parse — or first for a whole-file parse, last for an incremental one (it only holds
    what was appended). Copies of a session merge by native id."""
    known = set(existing)
    order = list(existing)
    inserts: dict[str | None, list[str]] = {}
    anchor: str | None = order[-1] if incremental and order else None
    for nid in parsed:
        if nid in known:
            anchor = nid
            continue
        inserts.setdefault(anchor, []).append(nid)
        known.add(nid)
        anchor = nid
    if not inserts:
        return order
    result: list[str] = []
    result.extend(_expand(None, inserts))
    for nid in order:
        result.append(nid)
        result.extend(_expand(nid, inserts))
    return result


def _expand(anchor: str | None, inserts: dict[str | None, list[str]]) -> list[str]:
    """The messages inserted after ``anchor``, each followed by what was inserted after it (depth first).

    A stack, not recursion: a parse of 50,000 new messages is one chain 50,000 deep."""
    out: list[str] = []
    stack = list(reversed(inserts.get(anchor, ())))
    while stack:
        nid = stack.pop()
        out.append(nid)
        stack.extend(reversed(inserts.get(nid, ())))
    return out


def _message_row(r: sqlite3.Row) -> MessageRow:
    return MessageRow(
        session_id=r["session_id"], seq=r["seq"], native_id=r["native_id"], role=r["role"], kind=r["kind"],
        text=r["text"], timestamp=r["timestamp"], tool_name=r["tool_name"], flags=_flags_set(r["flags"]),
    )


def _file_row(r: sqlite3.Row) -> FileRow:
    return FileRow(
        id=r["id"], path=r["path"], platform=r["platform"], size=r["size"], mtime_ns=r["mtime_ns"],
        consumed_offset=r["consumed_offset"], content_hash=r["content_hash"], missing=bool(r["missing"]),
    )


def _interleave(own: list[MessageRow], blocks: list[list[MessageRow]]) -> list[MessageRow]:
    """Insert each subagent block after the last own message not later than the block's first timestamp."""
    out = list(own)
    for block in blocks:
        first_ts = next((m.timestamp for m in block if m.timestamp), None)
        at = len(out)
        if first_ts is not None:
            for i in range(len(out) - 1, -1, -1):
                ts = out[i].timestamp
                if ts is not None and time_key(ts) <= time_key(first_ts):
                    at = i + 1
                    break
            else:
                at = 0 if any(m.timestamp for m in out) else len(out)
        out[at:at] = block
    return out


def time_key_sql(column: str) -> str:
    """SQL for ``models.time_key`` of a stored timestamp column: a whole second's time gains ``.000`` so that the
    text compares in time order (``…:00.640Z`` sorts before ``…:00Z`` as plain text)."""
    return f"(CASE WHEN length({column}) = 20 THEN substr({column}, 1, 19) || '.000Z' ELSE {column} END)"


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
