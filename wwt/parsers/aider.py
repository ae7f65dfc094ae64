"""Aider chat histories (``.aider.chat.history.md`` in each repository; docs/formats-notes.md).

Aider appends Markdown to one file per repository (``aider/io.py``): each run starts with
``# aider chat started at YYYY-MM-DD HH:MM:SS`` (local time), what the user typed is written as ``#### `` lines
each ending in two spaces, tool/status output as ``> `` blockquotes (a multi-line tool output has one ``> ``
prefix and one two-space ending), and the model's answer as plain Markdown between blank lines.

Decisions:
* One session per run; its id is ``aider-<start time>-<hash of the file's path>`` (``-2``… for two runs in
  the same second), stable across re-reads. The repository is the folder holding the file.
* A ``#### `` line counts as typed only when it ends in the two spaces Aider adds: a ``####`` heading inside
  an answer does not. A file whose head holds no such line end was trimmed of trailing whitespace: then every
  ``#### `` line is a prompt (a heading in an answer is taken for one) and each ``> `` line a tool line. A bare slash command (``/add``, ``/clear``) is a UI action and is left out; one with
  arguments is kept. ``/ask|/code|/architect|/context X`` is logged again as a prompt ``X``, and ``/help X`` as
  ``# Question: X`` with the documentation Aider found: that second prompt is Aider's, left out. So are the
  architect's answer, logged again as a prompt when it is handed to the editor model, a lint report, an empty
  Enter (``#### <blank>``) and a grouped question Aider answered itself after "All". The startup banner
  (blockquotes before the first prompt) is not indexed; later
  blockquotes (applied edits, commits, errors, command output) become one tool result per block.
* A reasoning model's thinking, logged inside the reply in Aider's ``<thinking-content-…>`` tag, is a thinking
  message before the answer.
* A ``--watch-files`` question (Aider's own prompt quoting the code around each ``AI?`` comment) is reduced to
  the comment lines Aider marked ``█``: the user's words.
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
from wwt.parsers.common import bound_text, nfc, open_or_note, read_head
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
            strict = _keeps_hard_breaks(read_head(path, TRAILING_SPACES_PROBE))
            yield from parse_history(_texts(fh, report), path, report, strict=strict)


_BLOCK = 1 << 18  # bytes read at a time; memory is a block plus the longest line, whatever the file size


def _texts(fh: Any, report: ParseReport) -> Iterator[str]:
    """The file a block of whole lines at a time, as text: each line ends in ``\n`` (one is added after a last
    line without it), ``\r`` before a line end dropped. Read and decoded a block at a time; a block with invalid
    UTF-8 is decoded line by line (bad bytes replaced, each such line counted and named by its number)."""
    pending: list[bytes] = []  # a line longer than a block, gathered until its end comes
    number = 0  # lines handed out before this block
    while block := fh.read(_BLOCK):
        cut = block.rfind(b"\n") + 1
        if not cut:
            pending.append(block)
            continue
        whole = b"".join([*pending, block[:cut]]) if pending else block[:cut]
        pending = [block[cut:]] if cut < len(block) else []
        lines = whole.count(b"\n")
        yield _block_text(whole, report, number, lines)
        number += lines
    if pending:
        yield _block_text(b"".join(pending), report, number, 1)  # the last line, without a line end


def _blocks(fh: Any, report: ParseReport) -> Iterator[list[str]]:
    """The file's lines (split at ``\n``, line ends dropped), a block of whole lines at a time."""
    for text in _texts(fh, report):
        yield text.split("\n")[:-1]


_CR_END_RE = re.compile(r"\r+$", re.MULTILINE)  # what ``line.rstrip("\r")`` drops from each line


def _block_text(data: bytes, report: ParseReport, number: int, lines: int) -> str:
    """``data``: whole lines, but for the file's last; ``lines`` of them, after ``number`` lines."""
    report.end_offset += len(data)
    report.lines += lines
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raws = data.split(b"\n")
        if not raws[-1]:
            raws.pop()
        return "".join(_decoded(raw, report, number + i) + "\n" for i, raw in enumerate(raws, 1))
    if not text.endswith("\n"):
        text += "\n"  # the file's last line, which has no line end
    return _CR_END_RE.sub("", text) if "\r" in text else text


def _decoded(raw: bytes, report: ParseReport, number: int) -> str:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        report.bad_lines += 1
        report.note(f"invalid UTF-8 in line {number} (bad bytes replaced)")
        line = raw.decode("utf-8", errors="replace")
    return line.rstrip("\r")


def looks_like_aider(path: Path, head: bytes) -> bool:
    """Aider's history: a ``.md`` whose first non-blank line is a run header, or a file with Aider's own name
    holding a run header anywhere in its head (text before it: an edited or trimmed file, e.g. Aider's own
    tests/fixtures/chat-history.md opens with an editor mode line and the end of an earlier run)."""
    if not path.name.endswith(".md"):
        return False
    lines = head.split(b"\n")
    if path.name == FILE_NAME:
        return any(_HEADER_RE.match(line.decode("utf-8", errors="replace").rstrip("\r")) for line in lines
                   if line.startswith(b"# aider chat"))
    for line in lines[:5]:
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


# Commands that hand their arguments to a new chat (``Commands._generic_chat_command``, ``cmd_help``): Aider
# logs the command, then logs the message it sends as a second prompt.
_CHAT_COMMAND_RE = re.compile(r"/(ask|code|architect|context|help) (.+)", re.DOTALL)


LINT_PROMPT = "# Fix any errors below, if possible."  # aider/linter.py opens every lint report with it
# Aider wraps a reasoning model's thinking in this tag inside the reply it logs (aider/reasoning_tags.py).
REASONING_TAG = "thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b"
_REASONING_RE = re.compile(rf"<{REASONING_TAG}>(.*?)(?:</{REASONING_TAG}>|\Z)", re.DOTALL)
# ``--watch-files``: an ``AI?`` comment makes Aider ask with its own prompt (aider/watch_prompts.py), the code around
# each comment quoted with the comment's line marked "█": only those marked lines are the user's.
WATCH_ASK_PROMPT = 'Find the "AI" comments below (marked with █)'
BLANK_PROMPT = "<blank>"  # aider/io.py ``user_input`` logs an empty Enter as this
# A grouped question Aider answered itself after "All"/"Skip all" (io.py ``confirm_ask``, ``group.preference``):
# logged through ``user_input`` as the question, its options and the remembered answer.
_AUTO_ANSWER_RE = re.compile(r"[^\n]*\? \(Y\)es/\(N\)o(?:/\(A\)ll)?/\(S\)kip all(?:/\(D\)on't ask again)? \[[^\]\n]*\]: (?:all|skip)")


def _plain(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _relogged(previous: list[Message], text: str) -> bool:
    """Is this prompt Aider's own copy of the chat command just before it: ``/code X`` then ``X`` again, or
    ``/help X`` then the question with the documentation Aider looked up (``# Question: X`` …)?"""
    if not previous or previous[0].role != "user" or previous[0].kind != "text":
        return False
    command = _CHAT_COMMAND_RE.fullmatch(previous[0].text)
    if command is None:
        return False
    if command.group(1) == "help":
        return text.startswith("# Question:")
    return text.strip() == command.group(2).strip()


def _is_user_line(line: str) -> bool:
    return line.startswith("#### ") and line.endswith("  ") or line == "####"


TRAILING_SPACES_PROBE = 1 << 16  # bytes of the head that tell whether the file kept Aider's two-space line ends


def _keeps_hard_breaks(head: bytes) -> bool:
    """Aider ends every prompt and tool line with two spaces; a file without any in its head went through a
    trailing-whitespace trim (an editor on save, a pre-commit hook when committed to a repository)."""
    return b"  \n" in head or b"  \r\n" in head or b"####" not in head


def parse_history(
    texts: Iterable[str], path: Path, report: ParseReport, strict: bool = True
) -> Iterator[Session]:
    """Split the file into runs and each run into user / assistant / tool blocks. ``texts``: the file, a block of
    whole lines at a time, each line ending in ``\n`` (``_texts``); the lines of a long tool output or answer are
    found by searching the text, not one at a time. ``strict``: the file kept the two spaces that mark a prompt
    or tool line; without them every ``#### `` line is a prompt and every ``> `` line a whole tool line."""
    folder = str(path.resolve().parent) if path.is_absolute() or path.exists() else str(path.parent)
    root = folder  # Aider writes the file at the repository's root: that folder is the project
    path_hash = hashlib.sha1(os.path.realpath(path).encode("utf-8", "replace")).hexdigest()[:8]
    project = project_name(root)
    seen_ids: dict[str, int] = {}
    session: Session | None = None
    state = _Run(strict=strict)
    for text in texts:
        at, size = 0, len(text)
        while at < size:
            if session is not None:
                if state.open_quote:  # inside a multi-line tool output: up to a line ending in two spaces
                    taken = state.take_quote(text, at)
                elif state.kind == "assistant" and text[at] != "#":  # an answer: up to a line that may start
                    taken = state.take_answer(text, at)  # something else
                elif state.kind == "user" and text.startswith("####", at):  # a prompt: its next prompt lines
                    taken = state.take_prompt(text, at)
                else:
                    taken = at
                if taken > at:
                    at = taken
                    continue
            end = text.index("\n", at)
            line = text[at:end]
            at = end + 1
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
                state = _Run(timestamp=when, strict=strict)
                continue
            if session is None:
                if line.strip():
                    report.unknown_records += 1  # text before the first run header
                continue
            state.feed(line, session, report)
    if session is not None:
        state.flush(session, report)
        if session.messages:
            yield session


# A run header in a text of whole lines (what ``_HEADER_RE`` matches in one line).
_HEADER_LINE_RE = re.compile(r"^# aider chat started at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d[^\S\n]*$", re.MULTILINE)
# A run of prompt lines (``_is_user_line``; in a trimmed file any ``####`` or ``#### …`` line).
_PROMPT_LINES_RE = re.compile(r"(?:####(?: (?: |.*  ))?\n)+")
_TRIMMED_PROMPT_LINES_RE = re.compile(r"(?:####(?: .*)?\n)+")


def _is_blank(line: str) -> bool:
    return not line or line.isspace()  # what ``not line.strip()`` says, without a copy per line


class _Run:
    """Line-by-line state of one run: the block being gathered and how many messages were made."""

    def __init__(self, timestamp: str | None = None, strict: bool = True) -> None:
        self.timestamp = timestamp
        self.strict = strict
        self.kind: str | None = None  # "user" | "tool" | "assistant"
        self.lines: list[str] = []  # the block's lines, or runs of them joined by "\n"
        self.open_quote = False  # inside a multi-line tool output (one "> " prefix, one two-space end)
        self.prompted = False  # a user prompt was seen in this run (blockquotes before it are the banner)
        self.count = 0
        self.last_blank = True
        self.last_answer: str | None = None  # the latest answer, as made (``_plain`` of it when compared)
        self._plain_answer: tuple[str, str] | None = None  # (answer, its ``_plain``) once computed

    def _not_typed(self, text: str) -> bool:
        """Prompts Aider writes itself: the architect's answer handed to the editor model (logged again as a
        prompt once the edit is accepted) and the lint report ``/lint`` / ``--lint`` sends."""
        if text.startswith(LINT_PROMPT):
            return True
        answer = self.last_answer
        if answer is None:
            return False
        if self._plain_answer is None or self._plain_answer[0] is not answer:
            self._plain_answer = (answer, _plain(answer))
        return _plain(text) == self._plain_answer[1]

    def _take(self, text: str, start: int, end: int) -> None:
        """Add the lines of ``text[start:end]`` (whole lines, ``end`` just after a line end) to the block."""
        self.lines.append(text[start:end - 1])
        last = text.rfind("\n", start, end - 1)
        self.last_blank = _is_blank(text[last + 1 if last >= 0 else start:end - 1])

    def take_quote(self, text: str, at: int) -> int:
        """Inside a multi-line tool output: take the lines from ``at`` up to and with the first that ends in two
        spaces (or up to a run header); returns where the rest starts."""
        found = text.find("  \n", at)
        end = len(text) if found < 0 else found + 3
        header = _HEADER_LINE_RE.search(text, at, end) if text.find("# aider chat", at, end) >= 0 else None
        if header is not None:
            end = header.start()
        elif found >= 0:
            self.open_quote = False
        if end > at:
            self._take(text, at, end)
        return end

    def take_answer(self, text: str, at: int) -> int:
        """Inside an answer: take the lines from ``at`` up to the first that may start a prompt, a tool output or
        a run (a line starting with ``#``, or a quote after a blank line); returns where the rest starts."""
        first = text[at]
        if first == "#" or first == ">" and self.last_blank and (text.startswith("> ", at) or text[at + 1] == "\n"):
            return at
        end = text.find("\n#", at) + 1 or len(text)  # the next line starting with "#" (else the block's end)
        quote = text.find("\n>", at, end)
        while quote >= 0:  # a quote line ends the answer after a blank line
            if text.startswith("> ", quote + 1) or text[quote + 2] == "\n":
                previous = text.rfind("\n", at, quote) + 1 or at
                if _is_blank(text[previous:quote]):
                    end = quote + 1
                    break
            quote = text.find("\n>", quote + 2, end)
        self._take(text, at, end)
        return end

    def take_prompt(self, text: str, at: int) -> int:
        """Inside a prompt: take the lines from ``at`` while they are prompt lines; returns where the rest starts."""
        run = (_PROMPT_LINES_RE if self.strict else _TRIMMED_PROMPT_LINES_RE).match(text, at)
        if run is None:
            return at
        self.lines.extend([line[5:].rstrip() for line in text[at:run.end() - 1].split("\n")])
        self.last_blank = False
        return run.end()

    def feed(self, line: str, session: Session, report: ParseReport) -> None:
        blank = not line or line.isspace()  # _is_blank, inline: once per line fed
        after_blank, self.last_blank = self.last_blank, blank
        if self.open_quote:
            self.lines.append(line)
            self.open_quote = not line.endswith("  ")
            return
        if line.startswith("####") and (_is_user_line(line) or not self.strict and line[4:5] in ("", " ")):
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
            self.open_quote = self.strict and not line.endswith("  ") and bool(line[1:].strip())
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
            if text.startswith("/") and " " not in text.strip() or text == BLANK_PROMPT or _AUTO_ANSWER_RE.fullmatch(text):
                report.skipped_messages += 1  # a bare command (a UI action), an empty Enter, Aider's own answer
                return
            if text.startswith(WATCH_ASK_PROMPT):
                text = "\n".join(line[1:].strip() for line in text.splitlines() if line.startswith("█"))
            cleaned = clean_user_text(text)
            if cleaned is None or _relogged(session.messages[-1:], cleaned) or self._not_typed(text):
                report.skipped_messages += 1
                return
            message = Message(native, "user", "text", nfc(cleaned), self.timestamp)
        elif kind == "tool":
            if not self.prompted:
                return  # the startup banner (version, model, repo map)
            message = Message(native, "user", "tool_result", nfc(bound_text(text)), self.timestamp, tool_name="aider")
        else:
            if REASONING_TAG in text:  # a reasoning model's thinking, logged inside the reply
                thinking = "\n\n".join(t.strip() for t in _REASONING_RE.findall(text) if t.strip())
                text = _REASONING_RE.sub("", text).strip()
                if thinking:
                    session.messages.append(Message(native, "assistant", "thinking", nfc(thinking), self.timestamp))
                    self.count += 1
                    native = f"{session.session_id}#{self.count}"
                if not text:
                    return
            message = Message(native, "assistant", "text", nfc(text), self.timestamp)
            self.last_answer = text
        self.count += 1
        session.messages.append(message)
