"""What the parser tests share: run one parser on a file, look at what came out, write a JSONL log.

One copy here instead of one per platform test file (they had drifted into three near-identical sets)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from wwt.models import ParseReport, Session
from wwt.parsers.base import SessionParser


def run_parser(parser: SessionParser, path: Path, start_offset: int = 0) -> tuple[list[Session], ParseReport]:
    """The parser's own ``parse`` (no registry, no redaction): what that platform module yields."""
    report = ParseReport(path=str(path))
    sessions = list(parser.parse(path, report, start_offset))
    return sessions, report


def only_session(parser: SessionParser, path: Path) -> tuple[Session, ParseReport]:
    sessions, report = run_parser(parser, path)
    assert len(sessions) == 1, (len(sessions), report.notes)
    return sessions[0], report


def counts(session: Session) -> Counter:
    """Messages by (role, kind); compares equal to a plain dict of the same counts."""
    return Counter((m.role, m.kind) for m in session.messages)


def all_text(session: Session) -> str:
    return "\n".join(m.text for m in session.messages)


def user_texts(session: Session) -> list[str]:
    return [m.text for m in session.messages if m.role == "user" and m.kind == "text"]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path
