"""Real-sized synthetic logs for the newer connectors: the conversations of ten genuine Claude Code sessions
(``fixtures/real/claude-code``, provenance in its SOURCES.md) re-written in each connector's own format.

Why: repeating a connector's tiny test fixture gives records of a few dozen bytes (Aider: 140 B per message),
so a throughput figure over it measures per-record overhead only. Real sessions hold short prompts and
answers but KB-sized tool calls and outputs (file reads, test runs, edits): the message texts, in order, of
the sessions below are taken as they are (``script``) and written the way each agent writes them (the record
shapes of ``tests/fixtures/<agent>/`` and the writers they were made from). ``distribution`` gives the text
sizes per kind, stated in RESULTS.md next to the figures.

Each ``build_*`` writes sessions from the script round-robin with fresh ids and later times until the file
reaches the requested size. One-session-per-file formats (Qwen Code, Copilot CLI, Cursor transcripts, Cline)
append every repetition to the one session; Aider starts a run per session, OpenCode a session row.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Genuine recordings only (SOURCES.md "kind" column): composite and synthetic files are left out.
GENUINE = (
    "VibeCodingTracker__claude_code.jsonl",
    "spotter__short.jsonl",
    "spotter__tool_heavy.jsonl",
    "spotter__subagent.jsonl",
    "spotter__agent-aac57f5.jsonl",
    "agentlogs__compact.jsonl",
    "agentlogs__subagent.jsonl",
    "agentlogs__todos.jsonl",
    "agentlogs__crud.jsonl",
    "episodic-memory__tiny-conversation.jsonl",
)
KINDS = ("user", "assistant", "thinking", "tool_call", "tool_result")
T0 = 1_767_950_000_000  # ms, 2026-01-09


# ------------------------------------------------------------------------------------------ the script


def _items(line: dict[str, Any]) -> Iterator[dict[str, Any]]:
    content = (line.get("message") or {}).get("content")
    role = line.get("type")
    if isinstance(content, str):
        yield {"kind": role, "text": content}
        return
    for block in content or []:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and block.get("text"):
            yield {"kind": role, "text": block["text"]}
        elif btype == "thinking" and block.get("thinking"):
            yield {"kind": "thinking", "text": block["thinking"]}
        elif btype == "tool_use":
            yield {"kind": "tool_call", "id": block.get("id"), "name": block.get("name") or "tool",
                   "input": block.get("input") if isinstance(block.get("input"), dict) else {}}
        elif btype == "tool_result":
            body = block.get("content")
            if isinstance(body, list):
                body = "\n".join(b.get("text", "") for b in body if isinstance(b, dict) and b.get("type") == "text")
            yield {"kind": "tool_result", "id": block.get("tool_use_id"), "text": body if isinstance(body, str) else "",
                   "error": bool(block.get("is_error"))}


def script(folder: Path) -> list[list[dict[str, Any]]]:
    """The genuine sessions of ``folder`` (``fixtures/real/claude-code``) as lists of items ``{kind, text | name+input, …}`` in the order they were said; a
    tool result carries its call's name (``name``)."""
    sessions = []
    for name in GENUINE:
        items: list[dict[str, Any]] = []
        calls: dict[str, str] = {}
        with open(folder / name, encoding="utf-8") as fh:
            for raw in fh:
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue
                if not isinstance(line, dict) or line.get("type") not in ("user", "assistant"):
                    continue
                for item in _items(line):
                    if item["kind"] == "tool_call":
                        calls[item["id"]] = item["name"]
                    elif item["kind"] == "tool_result":
                        item["name"] = calls.get(item["id"], "tool")
                    items.append(item)
        sessions.append(items)
    return sessions


def size_of(item: dict[str, Any]) -> int:
    if item["kind"] == "tool_call":
        return len(json.dumps(item["input"], ensure_ascii=False))
    return len(item["text"])


def distribution(sessions: list[list[dict[str, Any]]]) -> str:
    """One line per kind: count, median, 90th percentile, max and share of all characters."""
    sizes = {k: sorted(size_of(i) for s in sessions for i in s if i["kind"] == k) for k in KINDS}
    total = sum(sum(v) for v in sizes.values()) or 1
    out = []
    for kind, values in sizes.items():
        if values:
            out.append(f"{kind} {len(values)} × median {_pick(values, 0.5)} / p90 {_pick(values, 0.9)} / max "
                       f"{values[-1]} chars "
                       f"({100 * sum(values) / total:.0f} % of the text)")
    return "; ".join(out)


def _pick(values: list[int], quantile: float) -> int:
    return values[min(len(values) - 1, int(quantile * len(values)))]


def _rounds(sessions: list[list[dict[str, Any]]]) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    rep = 0
    while True:
        for session in sessions:
            yield rep, session
            rep += 1


def _iso(ms: int) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _write_until(out_path: Path, megabytes: int, records: Iterator[str], opening: str = "",
                 closing: str = "") -> Path:
    out_path.parent.mkdir(parents=True, exist_ok=True)
    target, written = megabytes << 20, len(opening.encode("utf-8"))
    with open(out_path, "w", encoding="utf-8") as out:
        out.write(opening)
        for text in records:
            out.write(text)
            written += len(text.encode("utf-8"))
            if written >= target:
                break
        out.write(closing)
    return out_path


# Tool names per agent for the Claude tools the script uses (others keep their Claude name).
_QWEN_TOOLS = {"Bash": "run_shell_command", "Read": "read_file", "Edit": "replace", "Write": "write_file",
               "Grep": "search_file_content", "Glob": "glob", "TodoWrite": "todo_write", "Task": "task"}
_COPILOT_TOOLS = {"Bash": "bash", "Read": "view", "Edit": "edit", "Write": "create", "Grep": "grep", "Glob": "glob"}
_OPENCODE_TOOLS = {"Bash": "bash", "Read": "read", "Edit": "edit", "Write": "write", "Grep": "grep", "Glob": "glob",
                   "TodoWrite": "todowrite", "Task": "task"}


# ------------------------------------------------------------------------------------------ writers


def qwen_lines(sessions: list[list[dict[str, Any]]]) -> Iterator[str]:
    """Qwen Code chat JSONL (``chatRecordingService``): one record per user / assistant turn / tool result,
    Gemini-style ``parts``, the envelope fields every line carries."""
    sid, cwd, ms, prev = "7b1e0c52-9d3a-4f61-8a2e-5c4d3b2a1f00", "/home/mina/src/ledger", T0, None
    base = {"sessionId": sid, "cwd": cwd, "version": "0.12.0", "gitBranch": "main"}
    n = 0

    def record(rtype: str, provenance: str, parts: list[Any], extra: dict[str, Any] | None = None) -> str:
        nonlocal n, prev, ms
        n += 1
        ms += 1500
        uid = f"q-{n}"
        line = {"uuid": uid, "parentUuid": prev, **base, "timestamp": _iso(ms), "type": rtype,
                "provenance": provenance, "message": {"role": "model" if rtype == "assistant" else "user",
                                                      "parts": parts}, **(extra or {})}
        prev = uid
        return _dump(line) + "\n"

    for rep, session in _rounds(sessions):
        pending: list[Any] = []
        for item in session + [{"kind": "end"}]:
            kind = item["kind"]
            if kind in ("assistant", "thinking", "tool_call"):
                if kind == "tool_call":
                    pending.append({"functionCall": {"id": f"c{rep}-{item['id']}", "name": _QWEN_TOOLS.get(
                        item["name"], item["name"]), "args": item["input"]}})
                else:
                    pending.append({"text": item["text"], "thought": True} if kind == "thinking" else
                                   {"text": item["text"]})
                continue
            if pending:
                yield record("assistant", "assistant_output", pending, {
                    "model": "qwen3-coder-plus", "usageMetadata": {"promptTokenCount": 9000,
                                                                   "candidatesTokenCount": 300,
                                                                   "totalTokenCount": 9300}})
                pending = []
            if kind == "user":
                yield record("user", "real_user", [{"text": item["text"]}],
                             {"systemPayload": {"displayText": item["text"], "hookContext": ""}})
            elif kind == "tool_result":
                name = _QWEN_TOOLS.get(item["name"], item["name"])
                yield record("tool_result", "tool_result", [{"functionResponse": {
                    "id": f"c{rep}-{item['id']}", "name": name, "response": {"output": item["text"]}}}],
                    {"toolCallResult": {"callId": f"c{rep}-{item['id']}", "status": "error" if item["error"]
                                        else "success", "resultDisplay": item["text"][:200]}})


def copilot_lines(sessions: list[list[dict[str, Any]]]) -> Iterator[str]:
    """Copilot CLI ``events.jsonl``: ``user.message``, ``assistant.turn_start``/``reasoning``/``message`` with
    ``toolRequests``, ``tool.execution_start``/``execution_complete`` (``result.content`` and
    ``detailedContent``), ``assistant.turn_end``."""
    ms, prev, n = T0, None, 0

    def event(etype: str, data: dict[str, Any]) -> str:
        nonlocal ms, prev, n
        n += 1
        ms += 700
        eid = f"e-{n}"
        line = {"type": etype, "data": data, "id": eid, "timestamp": _iso(ms), "parentId": prev}
        prev = eid
        return _dump(line) + "\n"

    yield event("session.start", {"sessionId": "4f2a9c1e-8b7d-4e60-9a35-d1c2b3a4e5f6", "version": 1,
                                  "producer": "copilot-agent", "copilotVersion": "0.0.407",
                                  "startTime": _iso(T0),
                                  "context": {"cwd": "/home/jun/work/tide-api", "gitRoot": "/home/jun/work/tide-api",
                                              "branch": "main", "repository": "jun/tide-api"}})
    turn = 0
    for rep, session in _rounds(sessions):
        text, calls = "", []
        for item in session + [{"kind": "end"}]:
            kind = item["kind"]
            if kind == "thinking":
                yield event("assistant.reasoning", {"reasoningId": f"r-{n}", "content": item["text"]})
                continue
            if kind == "assistant":
                text = f"{text}\n\n{item['text']}" if text else item["text"]
                continue
            if kind == "tool_call":
                calls.append({"toolCallId": f"t{rep}-{item['id']}", "name": _COPILOT_TOOLS.get(
                    item["name"], item["name"]), "arguments": item["input"], "type": "function"})
                continue
            if text or calls:
                yield event("assistant.message", {"messageId": f"m-{n}", "content": text, "toolRequests": calls})
                for call in calls:
                    yield event("tool.execution_start", {"toolCallId": call["toolCallId"], "toolName": call["name"],
                                                         "arguments": call["arguments"]})
                text, calls = "", []
            if kind == "user":
                if turn:
                    yield event("assistant.turn_end", {"turnId": str(turn - 1)})
                yield event("user.message", {"content": item["text"], "transformedContent":
                                             f"<current_datetime>{_iso(ms)}</current_datetime>\n\n{item['text']}",
                                             "attachments": []})
                yield event("assistant.turn_start", {"turnId": str(turn)})
                turn += 1
            elif kind == "tool_result":
                name = _COPILOT_TOOLS.get(item["name"], item["name"])
                if item["error"]:
                    data = {"toolCallId": f"t{rep}-{item['id']}", "toolName": name, "success": False,
                            "error": {"message": item["text"], "code": "failure"}}
                else:
                    data = {"toolCallId": f"t{rep}-{item['id']}", "toolName": name, "success": True,
                            "result": {"content": item["text"], "detailedContent": item["text"]}, "toolTelemetry": {}}
                yield event("tool.execution_complete", data)


def cursor_lines(sessions: list[list[dict[str, Any]]]) -> Iterator[str]:
    """Cursor CLI agent transcript: ``{role, message: {content: [blocks]}}``, the first prompt wrapped in
    ``<user_info>``/``<user_query>``, tool calls and results as ``tool_use``/``tool_result`` blocks."""
    first = True
    for rep, session in _rounds(sessions):
        blocks: list[Any] = []
        for item in session + [{"kind": "end"}]:
            kind = item["kind"]
            if kind == "assistant":
                blocks.append({"type": "text", "text": item["text"]})
                continue
            if kind == "thinking":
                blocks.append({"type": "thinking", "thinking": item["text"]})
                continue
            if kind == "tool_call":
                blocks.append({"type": "tool_use", "id": f"t{rep}-{item['id']}", "name": item["name"],
                               "input": item["input"]})
                continue
            if blocks:
                yield _dump({"role": "assistant", "message": {"content": blocks}}) + "\n"
                blocks = []
            if kind == "user":
                query = f"<user_query>\n{item['text']}\n</user_query>"
                if first:
                    query = ("<user_info>\nOS Version: linux 6.8\nShell: zsh\nWorkspace Path: /home/ana/code/orbit\n"
                             "</user_info>\n\n" + query)
                    first = False
                yield _dump({"role": "user", "message": {"content": [{"type": "text", "text": query}]}}) + "\n"
            elif kind == "tool_result":
                yield _dump({"role": "user", "message": {"content": [{
                    "type": "tool_result", "tool_use_id": f"t{rep}-{item['id']}",
                    "content": [{"type": "text", "text": item["text"]}], "is_error": item["error"]}]}}) + "\n"


def aider_history(sessions: list[list[dict[str, Any]]]) -> Iterator[str]:
    """``.aider.chat.history.md`` as ``aider/io.py`` appends it: a run header per session, typed input as
    ``#### `` lines ending in two spaces, the model's answer as Markdown, tool output as one ``> `` blockquote
    ending in two spaces. Aider has no tool calls: a call is written as the edit block / command it stands
    for inside the answer, its output as the blockquote."""
    for rep, session in _rounds(sessions):
        minute = rep % (24 * 60)
        yield f"\n# aider chat started at 2026-03-{14 + rep // 1440 % 14:02d} {minute // 60:02d}:{minute % 60:02d}:11\n\n"
        for item in session:
            kind = item["kind"]
            if kind == "user":
                lines = item["text"].splitlines() or ["<blank>"]
                yield "\n#### " + "  \n#### ".join(lines).rstrip() + "  \n"
            elif kind in ("assistant", "thinking"):
                yield "\n" + item["text"].strip() + "\n\n"
            elif kind == "tool_call":
                body = item["input"].get("command") or item["input"].get("content") or _dump(item["input"])
                yield f"\n{item['input'].get('file_path', item['name'])}\n```\n{str(body).strip()}\n```\n\n"
            elif kind == "tool_result" and item["text"].strip():
                yield "> " + item["text"].strip() + "  \n"


def cline_entries(sessions: list[list[dict[str, Any]]]) -> Iterator[str]:
    """Cline ``ui_messages.json`` entries (comma-joined; the caller wraps the list): the task, an
    ``api_req_started`` per request whose ``request`` carries what was sent (tool results and environment
    details), ``text``/``reasoning`` answers, ``ask: tool`` JSON for file tools, ``ask: command`` +
    ``command_output`` for shell commands, ``user_feedback`` for later prompts."""
    ms, first, sent = T0, True, ""

    def entry(rtype: str, kind: str, text: str | None, **extra: Any) -> str:
        nonlocal ms, first
        ms += 900
        value: dict[str, Any] = {"ts": ms, "type": rtype, rtype: kind}
        if text is not None:
            value["text"] = text
        value.update(extra)
        out = ("" if first else ",") + _dump(value)
        first = False
        return out

    def request(body: str) -> str:
        return entry("say", "api_req_started", _dump({
            "request": body + "\n\n<environment_details>\n# VSCode Visible Files\nsrc/app.ts\n\n# Current Working "
            "Directory (/home/dev/acme-portal) Files\npackage.json\nsrc/\n</environment_details>",
            "tokensIn": 12000, "tokensOut": 300, "cacheWrites": 0, "cacheReads": 11000, "cost": 0.01}))

    for _rep, session in _rounds(sessions):
        for item in session:
            kind = item["kind"]
            if kind == "user":
                if first:
                    yield entry("say", "text", item["text"])
                    yield request(f"<task>\n{item['text']}\n</task>")
                else:
                    yield entry("say", "user_feedback", item["text"], images=[])
                    yield request(f"[attempt_completion] Result:\n<feedback>\n{item['text']}\n</feedback>")
            elif kind == "assistant":
                yield entry("say", "text", item["text"], partial=False)
            elif kind == "thinking":
                yield entry("say", "reasoning", item["text"], partial=False)
            elif kind == "tool_call":
                if item["name"] == "Bash":
                    yield entry("ask", "command", str(item["input"].get("command", "")))
                else:
                    tool = {"Read": "readFile", "Edit": "editedExistingFile", "Write": "newFileCreated",
                            "Grep": "searchFiles", "Glob": "listFilesRecursive"}.get(item["name"], item["name"])
                    body = {"tool": tool, "path": item["input"].get("file_path") or item["input"].get("path", "."),
                            "content": item["input"].get("content") or item["input"].get("new_string") or ""}
                    yield entry("ask", "tool", _dump(body))
            elif kind == "tool_result":
                if item["name"] == "Bash":
                    yield entry("say", "command_output", item["text"])
                sent = f"[{item['name']}] Result:\n{item['text']}"
                yield request(sent)


def opencode_rows(sessions: list[list[dict[str, Any]]], megabytes: int, conn: sqlite3.Connection) -> None:
    """``opencode.db`` rows as OpenCode's message-v2 writes them: a session row per script session, a message
    row per user prompt / assistant turn, its parts (``text``, ``reasoning``, ``tool`` with ``state.input``,
    ``output`` or ``error``, a ``step-start`` per turn)."""
    conn.execute("INSERT INTO project VALUES ('9f86d081884c7d65', '/home/ana/code/orbit', ?, ?)", (T0, T0))
    target = megabytes << 20
    for rep, session in _rounds(sessions):
        sid, ms = f"ses_r{rep:06d}", T0 + rep * 3_600_000
        conn.execute("INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, "
                     "time_updated) VALUES (?, '9f86d081884c7d65', NULL, 'calm-otter', '/home/ana/code/orbit', ?, "
                     "'1.1.40', ?, ?)", (sid, f"Session {rep}", ms, ms + 600_000))
        messages, parts = _opencode_session(rep, sid, ms, session)
        conn.executemany("INSERT INTO message VALUES (?, ?, ?, ?, ?)", messages)
        conn.executemany("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", parts)
        if rep % 20 == 19:
            conn.commit()
            if Path(conn.execute("PRAGMA database_list").fetchone()[2]).stat().st_size >= target:
                return


def _opencode_session(rep: int, sid: str, ms: int, session: list[dict[str, Any]]) -> tuple[list[tuple], list[tuple]]:
    """One session's message and part rows (a tool part is completed in place when its result comes)."""
    messages: list[tuple] = []
    parts: list[tuple] = []
    mid, role, m, asked = None, None, 0, None

    def open_message(new_role: str) -> str:
        nonlocal mid, role, m, asked
        m += 1
        mid, role = f"msg_r{rep:06d}_{m:04d}", new_role
        data = {"role": new_role, "time": {"created": ms}, "agent": "build"}
        if new_role == "user":
            asked = mid
            data["model"] = {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}
        else:
            data.update(parentID=asked, modelID="claude-sonnet-4-5", providerID="anthropic", mode="build",
                        path={"cwd": "/home/ana/code/orbit", "root": "/home/ana/code/orbit"}, cost=0.01,
                        tokens={"input": 10, "output": 20, "reasoning": 0, "cache": {"read": 0, "write": 0}})
            parts.append((f"prt_{mid}_s", mid, sid, ms, ms, _dump({"type": "step-start"})))
        messages.append((mid, sid, ms, ms, _dump(data)))
        return mid

    calls: dict[str, int] = {}
    for index, item in enumerate(session):
        ms += 1000
        kind = item["kind"]
        if kind == "user":
            open_message("user")
            parts.append((f"prt_{mid}_{index}", mid, sid, ms, ms, _dump({"type": "text", "text": item["text"]})))
            continue
        if role != "assistant":
            open_message("assistant")
        if kind in ("assistant", "thinking"):
            ptype = "text" if kind == "assistant" else "reasoning"
            parts.append((f"prt_{mid}_{index}", mid, sid, ms, ms, _dump({"type": ptype, "text": item["text"]})))
        elif kind == "tool_call":
            calls[item["id"]] = len(parts)
            parts.append((f"prt_{mid}_{index}", mid, sid, ms, ms, _dump({
                "type": "tool", "callID": item["id"], "tool": _OPENCODE_TOOLS.get(item["name"], item["name"]),
                "state": {"status": "running", "input": item["input"]}})))
        elif kind == "tool_result" and item["id"] in calls:
            at = calls.pop(item["id"])
            row = list(parts[at])
            data = json.loads(row[5])
            state = {"status": "error", "input": data["state"]["input"], "error": item["text"]} if item["error"] \
                else {"status": "completed", "input": data["state"]["input"], "output": item["text"],
                      "title": item["name"], "metadata": {}}
            data["state"] = dict(state, time={"start": row[3], "end": ms})
            row[5] = _dump(data)
            parts[at] = tuple(row)
    return messages, parts


def build(platform: str, folder: Path, megabytes: int, real_claude: Path, opencode_schema: str) -> Path:
    """Write a real-sized ``platform`` log of about ``megabytes`` MiB under ``folder`` from the genuine sessions
    in ``real_claude`` (``fixtures/real/claude-code``); returns its path. ``opencode_schema``: the SQL that
    creates OpenCode's tables."""
    sessions = script(real_claude)
    if platform == "qwen-code":
        return _write_until(folder / "projects/-bench/chats/7b1e0c52-9d3a-4f61-8a2e-5c4d3b2a1f00.jsonl",
                            megabytes, qwen_lines(sessions))
    if platform == "copilot-cli":
        return _write_until(folder / "session-state/4f2a9c1e-8b7d-4e60-9a35-d1c2b3a4e5f6/events.jsonl", megabytes,
                            copilot_lines(sessions))
    if platform == "cursor":
        return _write_until(folder / ".cursor/projects/home-bench/agent-transcripts/"
                            "0c9e5a77-2b1d-4f3e-8a6c-7d5e4f3a2b1c.jsonl", megabytes, cursor_lines(sessions))
    if platform == "aider":
        return _write_until(folder / "repo/.aider.chat.history.md", megabytes, aider_history(sessions))
    if platform == "cline":
        return _write_until(folder / "saoudrizwan.claude-dev/tasks/1767950000000/ui_messages.json", megabytes,
                            cline_entries(sessions), "[", "]")
    path = folder / "opencode/opencode.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    seed = sqlite3.connect(":memory:")
    seed.executescript(opencode_schema)
    conn = sqlite3.connect(path)
    for (sql,) in seed.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL"):
        conn.execute(sql)
    opencode_rows(sessions, megabytes, conn)
    conn.commit()
    conn.close()
    return path


# ------------------------------------------------------------- Claude Code transcripts (parse.py; parse_connectors.py's reference)

SOURCES = [
    "VibeCodingTracker__claude_code.jsonl",
    "spotter__subagent.jsonl",
    "spotter__tool_heavy.jsonl",
    "spotter__short.jsonl",
    "agentlogs__crud.jsonl",
    "agentlogs__todos.jsonl",
    "agentlogs__compact.jsonl",
    "agentlogs__subagent.jsonl",
    "episodic-memory__tiny-conversation.jsonl",
]
_ID_RE = re.compile(r"\b([0-9a-f]{8})(-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b|\b(msg_|toolu_|req_)([A-Za-z0-9]{6})")


def _fresh_ids(line: str, rep: int) -> str:
    tag = f"{rep:08x}"

    def sub(match: re.Match[str]) -> str:
        if match.group(1):
            return tag + match.group(2)
        return match.group(3) + tag[-6:] + match.group(4)

    return _ID_RE.sub(sub, line)


def build_transcript(path: Path, megabytes: int, real_claude: Path | None = None) -> int:
    """A Claude Code transcript of ``megabytes`` MB: the real fixtures' lines (``SOURCES``) repeated with fresh
    uuids, message ids and tool ids per repetition; returns its size in bytes."""
    if real_claude is None:
        from _shared import REAL_FIXTURES

        real_claude = REAL_FIXTURES / "claude-code"
    lines = [line for name in SOURCES for line in (real_claude / name).read_text(encoding="utf-8").splitlines() if line]
    target = megabytes * 1024 * 1024
    written = 0
    with open(path, "w", encoding="utf-8") as out:
        rep = 0
        while written < target:
            for line in lines:
                chunk = _fresh_ids(line, rep) + "\n"
                out.write(chunk)
                written += len(chunk.encode("utf-8"))
            rep += 1
    return path.stat().st_size
