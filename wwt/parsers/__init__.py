"""Parser registry: which parser reads a file, where the agents keep their logs, and the one never-raising
entry point ``parse_file`` that also redacts secrets before anything is stored.

Adding a platform = one module + one line in ``PARSERS``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from wwt.models import ParseReport, Session
from wwt.parsers.aider import AiderParser
from wwt.parsers.base import SessionParser
from wwt.parsers.claude_code import ClaudeCodeParser
from wwt.parsers.cline import ClineParser
from wwt.parsers.codex_cli import CodexCliParser
from wwt.parsers.common import DETECT_RECORDS, detection_views
from wwt.parsers.continue_dev import ContinueParser
from wwt.parsers.copilot_cli import CopilotCliParser
from wwt.parsers.cursor import CursorParser
from wwt.parsers.gemini_cli import GeminiCliParser
from wwt.parsers.goose import GooseParser
from wwt.parsers.opencode import OpenCodeParser
from wwt.parsers.qwen_code import QwenCodeParser
from wwt.parsers.roo_code import RooCodeParser

PARSERS: list[SessionParser] = [
    ClaudeCodeParser(),
    # Before Gemini CLI: Cline's runtime sessions (``<id>.messages.json``, an object with ``sessionId`` and
    # ``messages``) also pass Gemini's legacy-``.json`` check; the first parser that accepts a file reads it.
    ClineParser(),
    GeminiCliParser(),
    CodexCliParser(),
    QwenCodeParser(),
    CopilotCliParser(),
    OpenCodeParser(),
    AiderParser(),
    CursorParser(),
    RooCodeParser(),
    ContinueParser(),
    GooseParser(),
]

# A platform's parser revision, raised when the same file now gives different messages (injected text no longer
# taken for the user's words, a placeholder dropped…): an archive read by an earlier revision reads that platform's
# files again, once (``wwt.ingest``). A platform not listed is at revision 1.
PARSE_REVISIONS: dict[str, int] = {
    "copilot-cli": 2,  # 2026-12-06: AGENTS.md the CLI discovered is not a prompt; the branch follows checkouts
    "cursor": 2,  # 2026-12-06: [REDACTED] is not an answer, a finished task's prompt is not the user's; <timestamp>
}

NO_MESSAGES = "no conversation messages"
NOT_RECOGNISED = "not a recognised agent log"

# Files worth opening while walking a folder; the parsers' ``detect`` decides the rest.
CANDIDATE_SUFFIXES = (".jsonl", ".json", ".jsonl.zst")
# Logs known by their exact name (databases, Markdown histories): other files with these suffixes are not looked at.
CANDIDATE_NAMES = frozenset({"opencode.db", ".aider.chat.history.md", "state.vscdb", "store.db",
                             "sessions.db"})
_SKIP_SUFFIXES = (".meta.json",)
# Plain-text logs opened only inside their agent's folder (Cursor's older ``agent-transcripts/<id>.txt``).
_TEXT_FOLDERS = {".txt": "agent-transcripts"}


def parse_revisions() -> dict[str, int]:
    """Every platform's parser revision (``PARSE_REVISIONS``, 1 when not listed)."""
    return {parser.platform: PARSE_REVISIONS.get(parser.platform, 1) for parser in PARSERS}


def parser_for(path: Path | str) -> SessionParser | None:
    """The parser that reads this file, or None. Each of the file's detection views (its head from each of
    its first few records on, see ``detection_views``) is a vote for the first parser whose ``detect``
    accepts it, or for nobody. The parser with most votes (a tie: the earlier view) reads the file if it also
    claims the first view or outvotes nobody. So one junk, cut or foreign first line neither hides a log nor
    hands it to another agent's parser, and a file whose records are mostly nobody's is not claimed for one
    line that looks like a log's. A line longer than a head that no parser accepts (a junk or absurdly nested line)
    casts no vote: only that line is lost."""
    path = Path(path)
    votes: dict[int | None, int] = {}
    first_view: dict[int | None, int] = {}
    position = -1
    for view in detection_views(path):
        index = _first_accepting(path, view)
        if index is None and b"\n" not in view:
            continue  # a line longer than a head, judged only by how it opens (junk, or nested past reading): no vote
        position += 1
        votes[index] = votes.get(index, 0) + 1
        first_view.setdefault(index, position)
        ranked = sorted(votes.values(), reverse=True) + [0]
        if ranked[0] - ranked[1] > DETECT_RECORDS - position - 1:
            break  # the leader can no longer be caught
    claimed = [i for i in votes if i is not None]
    if not claimed:
        return None
    best = max(claimed, key=lambda i: (votes[i], -first_view[i]))
    if first_view[best] == 0 or votes[best] > votes.get(None, 0):
        return PARSERS[best]
    return None


def _first_accepting(path: Path, head: bytes) -> int | None:
    for index, parser in enumerate(PARSERS):
        try:
            if parser.detect(path, head):
                return index
        except Exception:  # a detector bug must not stop discovery
            continue
    return None


def redaction_enabled() -> bool:
    """Whether this data dir redacts secrets before storing them (``wwt.settings``: its ``settings.json``, on
    unless it says otherwise). Never the environment: every process that archives here — the engine, the
    worker, a hook's take-over, ``wwt ingest`` — follows the same setting, whoever started it (issue 24)."""
    from wwt.settings import redaction_on

    return redaction_on()


def parse_file(
    path: Path | str, start_offset: int = 0, parser: SessionParser | None = None, redact: bool | None = None,
) -> tuple[list[Session], ParseReport]:
    """Parse one log file. Never raises: problems are counted/noted in the report, and whatever was parsed
    before an unexpected error is returned. Secrets are redacted unless the data dir's setting says not to
    (``redact``: True/False to decide here instead — tests and benchmarks that compare with the raw log).
    ``parser``: the one ``discover`` already chose for this file (detection reads up to 8 records: not done
    twice per file)."""
    path = Path(path)
    report = ParseReport(path=str(path), end_offset=start_offset)
    sessions: list[Session] = []
    parser = parser or parser_for(path)
    if parser is None:
        report.note(NOT_RECOGNISED)
        return sessions, report
    report.platform = parser.platform
    try:
        for session in parser.parse(path, report, start_offset):
            sessions.append(session)
    except Exception as exc:  # parser bug: keep what we have, say so in one line
        report.note(f"parser error: {type(exc).__name__}: {exc}"[:200])
    if start_offset == 0 and not any(s.messages for s in sessions):
        # Accepted but empty: said for every platform, first (the ingest summary keeps a file's first notes).
        report.notes.insert(0, NO_MESSAGES)
    for session in sessions:  # a session the agent gave no name: its first prompt's first line, as Claude Code's
        if not session.title and (prompt := first_prompt_line(session)):
            session.title, session.title_is_first_prompt = prompt, True
    if redaction_enabled() if redact is None else redact:
        _redact_sessions(sessions, report)
    for session in sessions:  # redact first, cut after: a cut token's head would be stored in the clear
        if session.title:
            session.title = cut_title(session.title, session.title_is_first_prompt)
    return sessions, report


def first_prompt_line(session: Session) -> str | None:
    """The first non-empty line of the session's first user prompt (a title for an unnamed session: Codex
    rollouts, Gemini sessions without a summary), or None."""
    for message in session.messages:
        if message.role == "user" and message.kind == "text":
            for line in message.text.splitlines():
                if line.strip():
                    return line.strip()
            return None
    return None


PROMPT_TITLE_CHARS = 100  # a title taken from the first prompt's first line
NAMED_TITLE_CHARS = 200  # a title the agent or the user gave the session


def cut_title(title: str, from_prompt: bool) -> str:
    """A session title as stored: its first line, at most ``PROMPT_TITLE_CHARS`` for a first prompt's line,
    ``NAMED_TITLE_CHARS`` for a given name."""
    line = title.strip().split("\n", 1)[0].strip() if "\n" in title else title
    limit = PROMPT_TITLE_CHARS if from_prompt else NAMED_TITLE_CHARS
    if len(line) <= limit:
        return line
    marker = line.rfind("[REDACTED:", 0, limit)
    if marker >= 0 and "]" not in line[marker:limit]:  # never half a redaction marker
        close = line.find("]", marker)
        limit = close + 1 if close >= 0 else marker
    return line[:limit]


def _redact_sessions(sessions: list[Session], report: ParseReport) -> None:
    from wwt.redact import redact

    for session in sessions:
        if session.title:
            session.title, count = redact(session.title)
            report.redactions += count
        for message in session.messages:
            message.text, count = redact(message.text)
            report.redactions += count


def discover(
    roots: Iterable[Path | str] | None = None, unrecognised: list[Path] | None = None,
    known: Callable[[str], str | None] | None = None,
) -> Iterator[tuple[Path, SessionParser | str]]:
    """Every parseable log under ``roots`` (files or folders, any depth) or, by default, under each parser's
    ``default_roots()``. Symlinks are followed once (loops are cut), unreadable folders are skipped, and a
    file reachable twice is yielded once. Files looked at that no parser accepts are appended to
    ``unrecognised`` when given (so a folder ingest can say what it passed over). ``known(real path)`` may
    name the platform of a file already archived and unchanged: it is yielded with that name, unopened."""
    if roots is None:
        roots = [root for parser in PARSERS for root in parser.default_roots()]
    seen_files: set[str] = set()
    seen_dirs: set[tuple[int, int]] = set()
    for root in roots:
        for path in _walk(Path(root), seen_dirs):
            try:
                real = os.path.realpath(path)
            except OSError:
                continue
            if real in seen_files:
                continue
            seen_files.add(real)
            platform = known(real) if known is not None else None
            if platform is not None:
                yield path, platform
                continue
            parser = parser_for(path)
            if parser is not None:
                yield path, parser
            elif unrecognised is not None:
                unrecognised.append(path)


def _is_candidate(name: str, folder: Path | None = None) -> bool:
    if name in CANDIDATE_NAMES:
        return True
    suffix = os.path.splitext(name)[1]
    if suffix in _TEXT_FOLDERS:
        return folder is not None and _TEXT_FOLDERS[suffix] in folder.parts
    return name.endswith(CANDIDATE_SUFFIXES) and not name.endswith(_SKIP_SUFFIXES)


def _walk(root: Path, seen_dirs: set[tuple[int, int]]) -> Iterator[Path]:
    try:
        if root.is_file():
            yield root  # an explicit file is always offered to the parsers
            return
        if not root.is_dir():
            return
    except OSError:
        return
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            info = folder.stat()
        except OSError:
            continue
        key = (info.st_dev, info.st_ino)
        if key in seen_dirs:
            continue  # symlink loop or a folder already walked
        seen_dirs.add(key)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue  # unreadable folder
        subdirs: list[Path] = []
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=True):
                    subdirs.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=True) and _is_candidate(entry.name, folder):
                    yield Path(entry.path)
            except OSError:
                continue
        stack.extend(reversed(subdirs))
