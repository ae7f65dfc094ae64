"""OpenCode sessions: the SQLite ``opencode.db`` (tables ``session``/``message``/``part``) in OpenCode's data
folder, and the older JSON tree ``storage/{session,message,part}`` (docs/formats-notes.md).

Decisions:
* The database is the app's live store: opened read-only through a ``file:…?mode=ro`` URI with ``query_only``
  and a short busy timeout, read in one pass, closed. A reader never blocks OpenCode's writer in WAL mode;
  when read-only opening fails (a read-only folder without the ``-shm`` file), ``immutable=1`` is tried.
  Sessions are read one at a time (each one's messages and parts by session id, through OpenCode's
  ``message(session_id, …)`` and ``part(message_id, …)`` indexes): memory follows a session, not the store.
  Messages or parts of no session (never shown by OpenCode) are not read.
* It is a whole-file source: every parse reads every session (ingest re-parses it when its size or mtime
  changes and diffs by message id); ``start_offset`` is ignored and ``requires_full_reparse`` is set.
* A message is ``{role, …}`` with its parts: user text parts that are ``synthetic`` (file contents, tool
  attachments, reminders OpenCode adds) or ``ignored`` are not the user's words; reasoning → thinking; a
  ``tool`` part → tool call + its result (``state.output``; ``status: error`` → the error, flagged).
  Snapshots, patches, step markers, agent/subtask/retry/compaction parts are bookkeeping.
* A JSON-tree session is skipped (noted) when ``opencode.db`` sits beside ``storage/``: OpenCode migrated it.
* The older per-project tree (``project/<project>/storage/session/{info,message,part}``) is read the same way,
  unless the global tree or the database already holds the session (OpenCode's migration copies it there).
* ``opencode export <id>`` writes one session as ``{"info": <session>, "messages": [{"info", "parts"}]}``
  (pretty-printed, any file name): claimed by its opening ``info`` object with a ``ses_`` id and read like a
  JSON-tree session. A damaged file keeps the messages before and after the damage.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from wwt.models import FLAG_COMPACTION_SUMMARY, FLAG_ERROR, Message, ParseReport, Session, earliest, latest
from wwt.parsers.claude_code import project_name, project_root
from wwt.parsers.common import (
    _json_value,
    bound_text,
    iso_timestamp,
    load_json_file,
    load_json_object,
    nfc,
    render_tool_call,
    rewritten_whole,
)
from wwt.parsers.noise import clean_user_text

PLATFORM = "opencode"
DB_NAME = "opencode.db"
SQLITE_MAGIC = b"SQLite format 3\x00"
# ``opencode export``: the session object comes first and opens with its ``ses_`` id.
_EXPORT_HEAD = re.compile(rb'\A\s*\{\s*"info"\s*:\s*\{\s*"id"\s*:\s*"ses_')
LEGACY_INFO = "storage/session/info"  # older per-project tree: <data>/project/<project>/storage/session/info/<id>.json
BOOKKEEPING_PARTS = frozenset(
    {"step-start", "step-finish", "snapshot", "patch", "agent", "subtask", "retry", "compaction", "file"}
)


class OpenCodeParser:
    platform = PLATFORM

    def default_roots(self) -> list[Path]:
        # The database and the session files only: the JSON tree's message/ and part/ folders hold a file per
        # message part (tens of thousands), which discovery would otherwise open on every ingest.
        data = opencode_data_dir()
        # Older releases kept a tree per project: only its session/info folders are walked, for the same reason.
        return [data / DB_NAME, data / "storage" / "session", *sorted(data.glob(f"project/*/{LEGACY_INFO}"))]

    def detect(self, path: Path, head: bytes) -> bool:
        return looks_like_opencode(path, head)

    def parse(self, path: Path, report: ParseReport, start_offset: int = 0) -> Iterator[Session]:
        report.platform = PLATFORM
        path = Path(path)
        rewritten_whole(path, report, start_offset)
        if path.name.endswith(".db"):
            yield from _parse_db(path, report)
        elif _is_legacy_session(path):
            yield from _parse_legacy_session(path, report)
        elif _is_tree_session(path):
            yield from _parse_json_session(path, report)
        else:
            yield from _parse_export(path, report)


def opencode_data_dir() -> Path:
    """``$XDG_DATA_HOME/opencode`` or ``~/.local/share/opencode`` (OpenCode's xdg-basedir data folder)."""
    raw = os.environ.get("XDG_DATA_HOME")
    base = Path(raw).expanduser() if raw else Path.home() / ".local" / "share"
    return base / "opencode"


def looks_like_opencode(path: Path, head: bytes) -> bool:
    """``opencode.db`` (an SQLite file by its magic bytes), a ``storage/session/<project>/ses_*.json`` whose
    object names its id, or an ``opencode export`` file (any ``.json`` opening with the session's ``info``)."""
    if path.name == DB_NAME:
        return head.startswith(SQLITE_MAGIC)
    if not path.name.endswith(".json"):
        return False
    if _is_tree_session(path) or _is_legacy_session(path):
        return head.lstrip().startswith(b"{") and b'"id"' in head
    return bool(_EXPORT_HEAD.match(head.removeprefix(b"\xef\xbb\xbf")))


def _is_legacy_session(path: Path) -> bool:
    """``<project>/storage/session/info/ses_*.json``: the older per-project tree (its messages in
    ``session/message/<id>/``, their parts in ``session/part/<id>/<message id>/``)."""
    parents = path.parents
    return (
        path.name.startswith("ses_") and len(parents) > 3 and parents[0].name == "info"
        and parents[1].name == "session" and parents[2].name == "storage"
    )


def _is_tree_session(path: Path) -> bool:
    """``<storage>/session/<project>/ses_*.json``: the storage folder is OpenCode's ``storage``, or a copy of it
    under another name that still holds the tree's ``message`` folder beside ``session``."""
    parents = path.parents
    if not path.name.startswith("ses_") or len(parents) < 3 or parents[1].name != "session":
        return False
    if parents[0].name == "info" and parents[2].name == "storage":
        return False  # the older per-project tree (``_is_legacy_session``)
    return parents[2].name == "storage" or (parents[2] / "message").is_dir()


# ------------------------------------------------------------------------------------------- database


def open_readonly(path: Path) -> sqlite3.Connection:
    """An app's live SQLite database opened so that we never write it nor hold up its writer."""
    uri = path.resolve().as_uri()
    conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=0.5)
    try:
        conn.execute("PRAGMA query_only = 1")
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return conn
    except sqlite3.OperationalError:
        conn.close()
    except BaseException:
        conn.close()
        raise
    conn = sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, timeout=0.5)
    try:
        conn.execute("PRAGMA query_only = 1")
    except BaseException:
        conn.close()
        raise
    return conn


# A damaged schema can make SQLite's error message itself undecodable: Python raises UnicodeDecodeError for it.
DATABASE_ERRORS = (sqlite3.Error, UnicodeDecodeError)


def open_readonly_or_note(path: Path, report: ParseReport) -> sqlite3.Connection | None:
    """``open_readonly``, or None with the reason noted in ``report`` (one line) when it cannot be opened."""
    try:
        return open_readonly(path)
    except DATABASE_ERRORS as exc:
        report.note(f"cannot open database: {exc}"[:200])
        return None


SESSIONS_SQL = ("SELECT s.id, s.parent_id, {directory}, s.title, s.time_created, s.time_updated, {worktree}"
                " FROM session AS s{join} ORDER BY s.time_created, s.id")
MESSAGES_SQL = "SELECT id, time_created, data FROM message WHERE session_id = ? ORDER BY time_created, id"
PARTS_SQL = ("SELECT p.id, p.message_id, p.data FROM message AS m JOIN part AS p ON p.message_id = m.id"
             " WHERE m.session_id = ? ORDER BY m.time_created, m.id, p.id")  # both through OpenCode's indexes


def _parse_db(path: Path, report: ParseReport) -> Iterator[Session]:
    """One session at a time: its messages and parts are fetched by session id (OpenCode's own indexes), so
    memory follows the largest session, not the store."""
    conn = open_readonly_or_note(path, report)
    if conn is None:
        return
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not {"session", "message", "part"} <= tables:
            report.note("not an OpenCode database (no session/message/part tables)")
            report.unknown_records += 1
            return
        roots: dict[str, str] = {}  # project root per session directory: looked up on disk once per parse
        for sid, parent, directory, title, created, updated, worktree in conn.execute(_sessions_sql(conn, tables)):
            info = {"id": sid, "parentID": parent, "directory": directory, "title": title,
                    "time": {"created": created, "updated": updated}, "worktree": worktree}
            messages, parts_by_message = session_rows(conn, sid, report)
            session = _build(path, info, messages, parts_by_message, report, roots)
            if session is not None:
                yield session
    except DATABASE_ERRORS as exc:
        report.note(f"database read error: {exc}"[:200])
    finally:
        conn.close()


def _sessions_sql(conn: sqlite3.Connection, tables: set[str]) -> str:
    """The session query for this store: older OpenCode-family stores have no ``session.directory`` (their
    folder is the project's ``worktree``)."""
    columns = {r[1] for r in conn.execute("PRAGMA table_info(session)")}
    has_project = "project" in tables and "project_id" in columns and "worktree" in {
        r[1] for r in conn.execute("PRAGMA table_info(project)")}
    return SESSIONS_SQL.format(
        directory="s.directory" if "directory" in columns else "NULL",
        worktree="p.worktree" if has_project else "NULL",
        join=" LEFT JOIN project AS p ON p.id = s.project_id" if has_project else "",
    )


def session_rows(
    conn: sqlite3.Connection, sid: str, report: ParseReport
) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """One session's messages (in time order) and their parts by message id, decoded row by row."""
    parts_by_message: dict[str, list[dict[str, Any]]] = {}
    for pid, mid, data in conn.execute(PARTS_SQL, (sid,)):
        obj = _loads(data, report)
        if obj is not None:
            obj["id"] = pid
            parts_by_message.setdefault(mid, []).append(obj)
    messages: list[dict[str, Any]] = []
    for mid, created, data in conn.execute(MESSAGES_SQL, (sid,)):
        obj = _loads(data, report)
        if obj is not None:
            obj["id"] = mid
            if not isinstance(obj.get("time"), dict):
                obj["time"] = {}
            obj["time"].setdefault("created", created)
            messages.append(obj)
    return messages, parts_by_message


def _loads(data: Any, report: ParseReport) -> dict[str, Any] | None:
    report.lines += 1
    try:  # a TEXT column (what OpenCode writes): json.loads without its wrappers; a BLOB: json.loads itself
        obj = _json_value(data) if isinstance(data, str) else json.loads(data) if isinstance(data, bytes) else None
    except ValueError:
        obj = None
    if not isinstance(obj, dict):
        report.bad_lines += 1
        return None
    return obj


# ------------------------------------------------------------------------------------------ JSON tree


def _parse_json_session(path: Path, report: ParseReport) -> Iterator[Session]:
    storage = path.parents[2]
    if (storage.parent / DB_NAME).is_file():
        report.note(f"superseded by {storage.parent / DB_NAME}: skipped")
        return
    info = load_json_file(path, report)
    if not isinstance(info, dict) or not isinstance(info.get("id"), str):
        report.unknown_records += 1
        return
    sid = info["id"]
    messages: list[dict[str, Any]] = []
    parts_by_message: dict[str, list[dict[str, Any]]] = {}
    for file in _json_files(storage / "message" / sid):
        obj = _load(file, report)
        if obj is None:
            continue
        obj.setdefault("id", file.stem)
        messages.append(obj)
        parts_by_message[obj["id"]] = [
            p for p in (_load(f, report) for f in _json_files(storage / "part" / str(obj["id"]))) if p is not None
        ]
    messages.sort(key=lambda m: (_created(m), str(m.get("id"))))
    for parts in parts_by_message.values():
        parts.sort(key=lambda p: str(p.get("id")))
    session = _build(path, info, messages, parts_by_message, report)
    if session is not None:
        yield session


def _parse_legacy_session(path: Path, report: ParseReport) -> Iterator[Session]:
    """A session of the older per-project tree, unless OpenCode already copied it into the global tree or the
    database (its migration copies, never deletes: the session would be read twice)."""
    info = load_json_file(path, report)
    if not isinstance(info, dict) or not isinstance(info.get("id"), str):
        report.unknown_records += 1
        return
    sid = info["id"]
    tree = path.parents[1]  # <project>/storage/session
    data = path.parents[5] if len(path.parents) > 5 else None  # <data>/project/<project>/storage/session/info
    if data is not None and path.parents[4].name == "project" and _migrated(data, sid):
        report.note(f"migrated into {data}: skipped")
        return
    messages: list[dict[str, Any]] = []
    parts_by_message: dict[str, list[dict[str, Any]]] = {}
    for file in _json_files(tree / "message" / sid):
        obj = _load(file, report)
        if obj is None:
            continue
        obj.setdefault("id", file.stem)
        messages.append(obj)
        parts = [p for p in (_load(f, report) for f in _json_files(tree / "part" / sid / str(obj["id"]))) if p]
        parts_by_message[obj["id"]] = sorted(parts, key=lambda p: str(p.get("id")))
    messages.sort(key=lambda m: (_created(m), str(m.get("id"))))
    session = _build(path, info, messages, parts_by_message, report)
    if session is not None:
        yield session


def _migrated(data: Path, sid: str) -> bool:
    """The session is in OpenCode's global JSON tree or its database (both beside ``project/``)."""
    if any((data / "storage" / "session").glob(f"*/{sid}.json")):
        return True
    if not (data / DB_NAME).is_file():
        return False
    try:
        conn = open_readonly(data / DB_NAME)
        try:
            return conn.execute("SELECT 1 FROM session WHERE id = ?", (sid,)).fetchone() is not None
        finally:
            conn.close()
    except DATABASE_ERRORS:
        return False


def _parse_export(path: Path, report: ParseReport) -> Iterator[Session]:
    data = load_json_object(path, report, "messages")
    info = data.get("info") if isinstance(data, dict) else None
    entries = data.get("messages") if isinstance(data, dict) and isinstance(data.get("messages"), list) else []
    report.lines += len(entries)
    if not isinstance(info, dict) or not isinstance(info.get("id"), str):
        sid = next((e["info"]["sessionID"] for e in entries if isinstance(e, dict) and isinstance(e.get("info"), dict)
                    and isinstance(e["info"].get("sessionID"), str)), None)
        if sid is None:
            report.unknown_records += 1
            report.note("not an OpenCode export: skipped")
            return
        info = {"id": sid}  # the session object was damaged: its messages still name the session
    messages: list[dict[str, Any]] = []
    parts_by_message: dict[str, list[dict[str, Any]]] = {}
    for index, entry in enumerate(entries):
        message = entry.get("info") if isinstance(entry, dict) else None
        if not isinstance(message, dict):
            report.bad_lines += 1
            continue
        message.setdefault("id", f"#{index}")
        messages.append(message)
        parts = entry.get("parts") if isinstance(entry.get("parts"), list) else []
        parts_by_message[str(message["id"])] = sorted(
            (p for p in parts if isinstance(p, dict)), key=lambda p: str(p.get("id"))
        )
    messages.sort(key=lambda m: (_created(m), str(m.get("id"))))
    session = _build(path, info, messages, parts_by_message, report)
    if session is not None:
        yield session


def _json_files(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.name.endswith(".json"))
    except OSError:
        return []


def _load(path: Path, report: ParseReport) -> dict[str, Any] | None:
    report.lines += 1
    scratch = ParseReport(path=str(path))
    obj = load_json_file(path, scratch)
    if not isinstance(obj, dict):
        report.bad_lines += 1
        return None
    return obj


def _created(message: dict[str, Any]) -> float:
    time = message.get("time")
    value = time.get("created") if isinstance(time, dict) else None
    return float(value) if isinstance(value, (int, float)) else 0.0


# ------------------------------------------------------------------------------------------- building


def _build(
    path: Path,
    info: dict[str, Any],
    messages: Iterable[dict[str, Any]],
    parts_by_message: dict[str, list[dict[str, Any]]],
    report: ParseReport,
    roots: dict[str, str] | None = None,
) -> Session | None:
    directory = info.get("directory") if isinstance(info.get("directory"), str) else None
    if directory is None:  # older session objects: the assistant messages carry the folder
        messages = list(messages)
        directory = next((m["path"]["cwd"] for m in messages if isinstance(m.get("path"), dict)
                          and isinstance(m["path"].get("cwd"), str) and m["path"]["cwd"].strip()), None)
        # A store without session.directory: the project's folder, unless it is the global project's "/".
        worktree = info.get("worktree")
        if directory is None and isinstance(worktree, str) and worktree.strip() not in ("", "/"):
            directory = worktree
    time = info.get("time") if isinstance(info.get("time"), dict) else {}
    root = None
    if directory:
        root = roots.get(directory) if roots is not None else None
        if root is None:
            root = project_root(directory)
            if roots is not None:
                roots[directory] = root
    title = info.get("title") if isinstance(info.get("title"), str) and info["title"].strip() else None
    session = Session(
        session_id=str(info["id"]),
        platform=PLATFORM,
        source_path=str(path),
        project=project_name(root) if root else None,
        project_path=root,
        cwd=directory,
        started_at=iso_timestamp(time.get("created")),
        ended_at=iso_timestamp(time.get("updated")),
        title=nfc(title.strip()) if title else None,
        parent_session_id=info.get("parentID") if isinstance(info.get("parentID"), str) else None,
    )
    for message in messages:
        session.messages.extend(_message(message, parts_by_message.get(str(message.get("id")), []), report))
    if not session.messages:
        return None
    stamps = [m.timestamp for m in session.messages if m.timestamp]
    if stamps:
        session.started_at = earliest([*stamps, session.started_at])
        session.ended_at = latest([*stamps, session.ended_at])
    return session


def _message(message: dict[str, Any], parts: list[dict[str, Any]], report: ParseReport) -> list[Message]:
    role = message.get("role")
    mid = str(message.get("id"))
    ts = iso_timestamp(_created(message) or None)
    if role == "user":
        typed = [
            p["text"] for p in parts
            if p.get("type") == "text" and isinstance(p.get("text"), str) and not p.get("synthetic")
            and not p.get("ignored")
        ]
        cleaned = clean_user_text("\n\n".join(t for t in typed if t.strip()))
        if cleaned is None:
            report.skipped_messages += 1
            return []
        return [Message(mid, "user", "text", nfc(cleaned), ts)]
    if role != "assistant":
        report.unknown_records += 1
        return []
    out: list[Message] = []
    # ``summary: true``: the answer to a compaction request, a summary of the conversation so far.
    flags = frozenset({FLAG_COMPACTION_SUMMARY}) if message.get("summary") is True else frozenset()
    for part in parts:
        ptype, pid = part.get("type"), str(part.get("id"))
        pts = iso_timestamp(_part_start(part)) or ts
        if ptype == "text" and isinstance(part.get("text"), str) and part["text"].strip():
            out.append(Message(pid, "assistant", "text", nfc(part["text"].strip()), pts, parent_id=mid, flags=flags))
        elif ptype == "reasoning" and isinstance(part.get("text"), str) and part["text"].strip():
            out.append(Message(pid, "assistant", "thinking", nfc(part["text"].strip()), pts, parent_id=mid))
        elif ptype == "tool":
            out.extend(_tool(pid, mid, part, pts))
        elif ptype not in BOOKKEEPING_PARTS and ptype not in ("text", "reasoning"):
            report.unknown_records += 1
    return out


def _part_start(part: dict[str, Any]) -> Any:
    for holder in (part.get("time"), (part.get("state") or {}).get("time") if isinstance(part.get("state"), dict) else None):
        if isinstance(holder, dict) and holder.get("start"):
            return holder["start"]
    return None


def _tool(pid: str, mid: str, part: dict[str, Any], ts: str | None) -> list[Message]:
    name = part.get("tool") if isinstance(part.get("tool"), str) else "tool"
    state = part.get("state") if isinstance(part.get("state"), dict) else {}
    call_id = str(part.get("callID") or pid)
    out = [Message(f"{pid}#call:{call_id}", "assistant", "tool_call", nfc(render_tool_call(name, state.get("input"))),
                   ts, tool_name=name, parent_id=mid)]
    status = state.get("status")
    if status == "completed":
        text = state.get("output") if isinstance(state.get("output"), str) else ""
        out.append(Message(f"{pid}#result:{call_id}", "user", "tool_result", nfc(bound_text(text)), ts, tool_name=name,
                           parent_id=mid))
    elif status == "error":
        text = state.get("error") if isinstance(state.get("error"), str) else "error"
        out.append(Message(f"{pid}#result:{call_id}", "user", "tool_result", nfc(bound_text(text)), ts, tool_name=name,
                           parent_id=mid, flags=frozenset({FLAG_ERROR})))
    return out
