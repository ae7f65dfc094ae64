"""Aider chat histories (``.aider.chat.history.md`` in each repository; docs/formats-notes.md).

Aider appends Markdown to one file per repository (``aider/io.py``): each run starts with
``# aider chat started at YYYY-MM-DD HH:MM:SS`` (local time), what the user typed is written as ``#### `` lines
each ending in two spaces, tool/status output as ``> `` blockquotes (a multi-line tool output has one ``> ``
prefix and one two-space ending), and the model's answer as plain Markdown between blank lines.

Decisions:
* One session per run; its id is ``aider-<start time>-<hash of the file's path>`` (``-2``… for two runs in
  the same second), stable across re-reads. The repository is the folder holding the file.
* A ``#### `` line counts as typed only when it ends in the two spaces Aider adds: a ``####`` heading inside
  an answer does not. A bare slash command (``/add``, ``/clear``) is a UI action and is left out; one with
  arguments is kept. The startup banner (blockquotes before the first prompt) is not indexed; later
  blockquotes (applied edits, commits, errors, command output) become one tool result per block.
* Times: the file holds only each run's start, written in the machine's local time: every message of a run
  takes it (converted to UTC). The file is rewritten only by appending, but it is parsed whole (ingest
  re-parses it when its size or mtime changes; message ids are positions within the run).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from wwt.models import Message, ParseReport, Session
from wwt.parsers.claude_code import project_name
from wwt.parsers.common import bound_text, nfc, open_or_note
from wwt.parsers.noise import clean_user_text

PLATFORM = "aider"
FILE_NAME = ".aider.chat.history.md"
_HEADER_RE = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")


class AiderParser:
    platform = PLATFORM

    def default_roots(self) -> list[Path]:
        return []  # no central folder: each repository holds its own file (``wwt ingest PATH``)

    def detect(self, path: Path, head: bytes) -> bool:
        return looks_like_aider(path, head)

    def parse(self, path: Path, report: ParseReport, start_offset: int = 0) -> Iterator[Session]:
        report.platform = PLATFORM
        path = Path(path)
        if start_offset:
            report.requires_full_reparse = True
        fh = open_or_note(path, report)
        if fh is None:
            return
        with fh:
            yield from parse_history(_lines(fh, report), path, report)


_BLOCK = 1 << 18  # bytes read at a time; memory is a block plus the longest line, whatever the file size


def _lines(fh: Any, report: ParseReport) -> Iterator[str]:
    """The file's lines (split at ``\n``, line ends dropped), read a block at a time and decoded a block at a
    time; a block with invalid UTF-8 is decoded line by line (bad bytes replaced, each such line counted)."""
    pending: list[bytes] = []  # a line longer than a block, gathered until its end comes
    while block := fh.read(_BLOCK):
        cut = block.rfind(b"\n") + 1
        if not cut:
            pending.append(block)
            continue
        whole = b"".join([*pending, block[:cut]]) if pending else block[:cut]
        pending = [block[cut:]] if cut < len(block) else []
        yield from _block_lines(whole, report)
    if pending:
        yield from _block_lines(b"".join(pending), report)


def _block_lines(data: bytes, report: ParseReport) -> Iterator[str]:
    raws = data.split(b"\n")
    tail = raws.pop()  # b"" when the block ends a line; else the file's last line, which has no line end
    try:
        texts: list[str] | None = data.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        texts = None
    if texts is not None:
        for raw, line in zip(raws, texts, strict=False):  # texts also holds the tail
            report.end_offset += len(raw) + 1
            yield line.rstrip("\r")
        if tail:
            report.end_offset += len(tail)
            yield texts[-1].rstrip("\r")
        return
    for raw in raws:
        report.end_offset += len(raw) + 1
        yield _decoded(raw, report)
    if tail:
        report.end_offset += len(tail)
        yield _decoded(tail, report)


def _decoded(raw: bytes, report: ParseReport) -> str:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        report.bad_lines += 1
        report.note(f"invalid UTF-8 in line {report.lines + 1} (bad bytes replaced)")
        line = raw.decode("utf-8", errors="replace")
    return line.rstrip("\r")


def looks_like_aider(path: Path, head: bytes) -> bool:
    """Aider's history: a ``.md`` whose first non-blank line is a run header."""
    if not path.name.endswith(".md"):
        return False
    for line in head.split(b"\n")[:5]:
        if line.strip():
            return bool(_HEADER_RE.match(line.decode("utf-8", errors="replace").rstrip("\r")))
    return False


def local_to_utc(stamp: str) -> str | None:
    """``YYYY-MM-DD HH:MM:SS`` in this machine's local time → ISO UTC (Aider writes ``datetime.now()``)."""
    try:
        if stamp.isascii() and len(stamp) == 19:  # what the header holds: fields read directly (strptime is slow)
            moment = datetime(int(stamp[:4]), int(stamp[5:7]), int(stamp[8:10]), int(stamp[11:13]),
                              int(stamp[14:16]), int(stamp[17:19]))
        else:
            moment = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S")
        moment = moment.astimezone(timezone.utc)
    except (ValueError, OverflowError, OSError):
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _is_user_line(line: str) -> bool:
    return line.startswith("#### ") and line.endswith("  ") or line == "####"


def parse_history(lines: Iterable[str], path: Path, report: ParseReport) -> Iterator[Session]:
    """Split the file into runs and each run into user / assistant / tool blocks."""
    folder = str(path.resolve().parent) if path.is_absolute() or path.exists() else str(path.parent)
    root = folder  # Aider writes the file at the repository's root: that folder is the project
    path_hash = hashlib.sha1(os.path.realpath(path).encode("utf-8", "replace")).hexdigest()[:8]
    project = project_name(root)
    seen_ids: dict[str, int] = {}
    session: Session | None = None
    state = _Run()
    for line in lines:
        report.lines += 1
        header = _HEADER_RE.match(line) if line.startswith("# aider chat") else None
        if header:
            if session is not None:
                state.flush(session, report)
                if session.messages:
                    yield session
            stamp = header.group(1)
            base = f"aider-{stamp.replace('-', '').replace(':', '').replace(' ', 'T')}-{path_hash}"
            seen_ids[base] = seen_ids.get(base, 0) + 1
            sid = base if seen_ids[base] == 1 else f"{base}-{seen_ids[base]}"
            when = local_to_utc(stamp)
            session = Session(session_id=sid, platform=PLATFORM, source_path=str(path), project=project,
                              project_path=root, cwd=folder, started_at=when, ended_at=when)
            state = _Run(timestamp=when)
            continue
        if session is None:
            if line.strip():
                report.unknown_records += 1  # text before the first run header
            continue
        if state.open_quote:  # inside a multi-line tool output (most lines of a long one): what feed does first
            state.last_blank = not line or line.isspace()
            state.lines.append(line)
            state.open_quote = not line.endswith("  ")
            continue
        state.feed(line, session, report)
    if session is not None:
        state.flush(session, report)
        if session.messages:
            yield session


class _Run:
    """Line-by-line state of one run: the block being gathered and how many messages were made."""

    def __init__(self, timestamp: str | None = None) -> None:
        self.timestamp = timestamp
        self.kind: str | None = None  # "user" | "tool" | "assistant"
        self.lines: list[str] = []
        self.open_quote = False  # inside a multi-line tool output (one "> " prefix, one two-space end)
        self.prompted = False  # a user prompt was seen in this run (blockquotes before it are the banner)
        self.count = 0
        self.last_blank = True

    def feed(self, line: str, session: Session, report: ParseReport) -> None:
        blank = not line or line.isspace()  # what ``not line.strip()`` says, without a copy per line
        after_blank, self.last_blank = self.last_blank, blank
        if self.open_quote:
            self.lines.append(line)
            self.open_quote = not line.endswith("  ")
            return
        if line.startswith("####") and _is_user_line(line):
            if self.kind != "user":
                self.flush(session, report)
                self.kind = "user"
            self.lines.append(line[5:].rstrip() if len(line) > 4 else "")
            return
        # Aider's own output is "> " after a blank line (an answer ends with one); inside an answer a quote or a
        # ">>>>>>> REPLACE" marker is the answer's.
        if (line.startswith("> ") or line == ">") and (self.kind != "assistant" or after_blank):
            if self.kind != "tool":
                self.flush(session, report)
                self.kind = "tool"
            self.lines.append(line[2:])
            self.open_quote = not line.endswith("  ") and bool(line[1:].strip())
            return
        if blank:
            if self.kind in ("user", "tool"):
                self.flush(session, report)
            elif self.kind == "assistant":
                self.lines.append(line)
            return
        if self.kind != "assistant":
            self.flush(session, report)
            self.kind = "assistant"
        self.lines.append(line)

    def flush(self, session: Session, report: ParseReport) -> None:
        kind, lines = self.kind, self.lines
        self.kind, self.lines, self.open_quote = None, [], False
        text = "\n".join(lines).strip()
        if kind is None or not text:
            return
        native = f"{session.session_id}#{self.count}"
        if kind == "user":
            self.prompted = True
            if text.startswith("/") and " " not in text.strip():
                report.skipped_messages += 1  # a bare command: a UI action
                return
            cleaned = clean_user_text(text)
            if cleaned is None:
                report.skipped_messages += 1
                return
            message = Message(native, "user", "text", nfc(cleaned), self.timestamp)
        elif kind == "tool":
            if not self.prompted:
                return  # the startup banner (version, model, repo map)
            message = Message(native, "user", "tool_result", nfc(bound_text(text)), self.timestamp, tool_name="aider")
        else:
            message = Message(native, "assistant", "text", nfc(text), self.timestamp)
        self.count += 1
        session.messages.append(message)
