"""A damaged start never costs a session: copies of real logs whose first line is junk, cut, preceded by a
byte-order mark or blank lines, longer than the detection head, or a record spliced in from another agent's log
are still read by their own parser, and every message of the lines left whole survives (issue 11: one bad line
never drops a session).

The expected messages come from the platform's own parser run on the undamaged file (or on it without the
destroyed line), not from the registry under test."""

from __future__ import annotations

import codecs
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES
from parser_helpers import run_parser

from wwt.parsers import PARSERS, parse_file
from wwt.parsers.common import HEAD_BYTES

MINE = Path(__file__).parent / "fixtures"


@dataclass(frozen=True)
class Log:
    """One real log, copied below ``tmp_path`` at ``layout`` (the folders its agent writes it in)."""

    family: str
    source: Path
    layout: str
    platform: str
    pad_inside: str | None = None  # the object a padding key goes into (Cursor lines allow no extra top-level key)

    @property
    def parser(self):
        return next(p for p in PARSERS if p.platform == self.platform)


JSONL = [
    Log("claude", REAL_FIXTURES / "claude-code" / "agent-sessions__small.jsonl", "work/small.jsonl", "claude-code"),
    Log("qwen", MINE / "qwen-code/projects/-home-mina-src-ledger/chats/7b1e0c52-9d3a-4f61-8a2e-5c4d3b2a1f00.jsonl",
        "p/projects/-home-mina-src-ledger/chats/7b1e0c52-9d3a-4f61-8a2e-5c4d3b2a1f00.jsonl", "qwen-code"),
    Log("gemini-jsonl", REAL_FIXTURES / "gemini-cli" / "VibeCodingTracker__gemini.jsonl",
        "g/chats/session-2026-04-23T12-52-0ab84937.jsonl", "gemini-cli"),
    Log("codex-jsonl", MINE / "codex/rollout-2026-03-04T10-20-30-0199aaaa-1111-7222-8333-444455556666.jsonl",
        "c/rollout-2026-03-04T10-20-30-0199aaaa-1111-7222-8333-444455556666.jsonl", "codex-cli"),
    Log("codex-legacy-jsonl",
        REAL_FIXTURES / "codex-cli" / "claude-code-log__rollout-44444444-4444-4444-8444-444444444444.jsonl",
        "c/rollout-44444444-4444-4444-8444-444444444444.jsonl", "codex-cli"),
    Log("copilot", MINE / "copilot-cli/session-state/4f2a9c1e-8b7d-4e60-9a35-d1c2b3a4e5f6/events.jsonl",
        "s/session-state/4f2a9c1e-8b7d-4e60-9a35-d1c2b3a4e5f6/events.jsonl", "copilot-cli"),
    Log("cursor",
        MINE / "cursor/home/.cursor/projects/home-ana-code-orbit/agent-transcripts/"
        "0c9e5a77-2b1d-4f3e-8a6c-7d5e4f3a2b1c.jsonl",
        "h/projects/home-ana-code-orbit/agent-transcripts/0c9e5a77-2b1d-4f3e-8a6c-7d5e4f3a2b1c.jsonl", "cursor",
        pad_inside="message"),
]
JSON = [
    Log("gemini-json", REAL_FIXTURES / "gemini-cli" / "agent-sessions__small.json", "g/chats/session-small.json",
        "gemini-cli"),
    Log("codex-legacy-json", MINE / "codex/rollout-2025-04-22-6f1b2c3d-4e5a-4b6c-8d7e-9f0a1b2c3d4e.json",
        "c/rollout-2025-04-22-6f1b2c3d-4e5a-4b6c-8d7e-9f0a1b2c3d4e.json", "codex-cli"),
    Log("cline", MINE / "cline/saoudrizwan.claude-dev/tasks/1767950000000/ui_messages.json",
        "x/saoudrizwan.claude-dev/tasks/1767950000000/ui_messages.json", "cline"),
]

# A whole record of another agent's log (a Codex envelope line; a Claude line for the Codex logs).
CODEX_LINE = (REAL_FIXTURES / "codex-cli" / "agent-sessions__small.jsonl").read_bytes().splitlines()[3]
CLAUDE_LINE = (REAL_FIXTURES / "claude-code" / "agent-sessions__small.jsonl").read_bytes().splitlines()[5]


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def _pad(line: bytes, inside: str | None) -> bytes:
    """The same record with an unknown key holding 3 heads' worth of text, added last (so its start reads as
    before): a record longer than the detection head, like a Codex ``session_meta`` with big instructions."""
    obj = json.loads(line)
    target = obj[inside] if inside else obj
    target["zz_padding"] = "x" * (3 * HEAD_BYTES)
    return json.dumps(obj, ensure_ascii=False).encode() + b"\n"


# name → (damage, does it destroy the first record)
DAMAGES = {
    "junk first line": (lambda d, log: b"\x00\xff\xfe garbage \x9c\x80 not json\n" + d, False),
    "cut first line": (lambda d, log: _lines(d)[0][: len(_lines(d)[0]) // 2] + b"\n" + b"".join(_lines(d)[1:]), True),
    "byte-order mark": (lambda d, log: codecs.BOM_UTF8 + d, False),
    "blank lines first": (lambda d, log: b"\n\r\n   \n" + d, False),
    "junk line longer than the head": (lambda d, log: b"#" * (2 * HEAD_BYTES) + b"\n" + d, False),
    "first record longer than the head": (
        lambda d, log: _pad(_lines(d)[0], log.pad_inside) + b"".join(_lines(d)[1:]), False),
    "another agent's record first": (
        lambda d, log: (CLAUDE_LINE if log.platform == "codex-cli" else CODEX_LINE) + b"\n" + d, False),
}


def _messages(sessions) -> Counter:
    return Counter((m.role, m.kind, m.text) for s in sessions for m in s.messages)


def _place(tmp_path: Path, log: Log, data: bytes) -> Path:
    path = tmp_path / log.layout
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


@pytest.fixture(autouse=True)
def _no_redaction(monkeypatch, tmp_path):
    from wwt.settings import save

    monkeypatch.setenv("WWT_HOME", str(tmp_path))
    save("redact", False)  # compared with the parser's own output, which is not redacted


@pytest.mark.parametrize("damage", list(DAMAGES))
@pytest.mark.parametrize("log", JSONL, ids=[log.family for log in JSONL])
def test_a_damaged_start_keeps_the_session_and_its_other_messages(tmp_path, log, damage):
    original = log.source.read_bytes()
    mutate, destroys_first = DAMAGES[damage]
    undamaged = _place(tmp_path / "undamaged", log, b"".join(_lines(original)[1:]) if destroys_first else original)
    expected, _ = run_parser(log.parser, undamaged)
    assert _messages(expected), "the fixture must give messages without its damaged line"

    damaged = _place(tmp_path / "damaged", log, mutate(original, log))
    sessions, report = parse_file(damaged)

    assert report.platform == log.platform, report.notes[:3]
    assert not (_messages(expected) - _messages(sessions)), "messages of whole lines lost"
    assert [s.session_id for s in sessions] == [s.session_id for s in expected]


def test_a_destroyed_id_line_keeps_the_messages_under_the_name_the_agent_gave_the_file(tmp_path):
    """Gemini names its chat file after the session; with the metadata line (the only one naming the session
    id) cut, the messages stay, filed under the file's stem."""
    log = JSONL[2]
    original = log.source.read_bytes()
    first, rest = _lines(original)[0], b"".join(_lines(original)[1:])
    damaged = _place(tmp_path, log, first[:40] + b"\n" + rest)
    sessions, report = parse_file(damaged)
    assert report.platform == "gemini-cli"
    assert [s.session_id for s in sessions] == [damaged.stem]
    assert len(sessions[0].messages) > 10


@pytest.mark.parametrize("damage", ["byte-order mark", "blank lines first"])
@pytest.mark.parametrize("log", JSON, ids=[log.family for log in JSON])
def test_a_whole_file_json_log_with_a_bom_or_leading_blank_lines_is_read(tmp_path, log, damage):
    original = log.source.read_bytes()
    expected, _ = run_parser(log.parser, _place(tmp_path / "undamaged", log, original))
    assert _messages(expected)
    sessions, report = parse_file(_place(tmp_path / "damaged", log, DAMAGES[damage][0](original, log)))
    assert report.platform == log.platform, report.notes[:3]
    assert _messages(sessions) == _messages(expected)


@pytest.mark.parametrize("log", JSONL, ids=[log.family for log in JSONL])
def test_shuffled_or_repeated_lines_lose_no_message(tmp_path, log):
    """Lines out of order (a metadata line no longer first) or written twice (a resume copies lines) keep
    every message the log holds."""
    lines = [ln if ln.endswith(b"\n") else ln + b"\n" for ln in _lines(log.source.read_bytes())]
    expected, _ = run_parser(log.parser, _place(tmp_path / "undamaged", log, b"".join(lines)))
    reordered = lines[1:] + lines[:1] + lines[:3]  # the first line moved last, the first three repeated
    sessions, report = parse_file(_place(tmp_path / "damaged", log, b"".join(reordered)))
    assert report.platform == log.platform, report.notes[:3]
    assert not (_messages(expected) - _messages(sessions))


def test_a_prompt_line_written_twice_is_not_a_rewind(tmp_path):
    """Claude Code copies lines on resume (same ``uuid``, same parent): a prompt written twice is one prompt,
    not two attempts at a rewind fork, so neither copy's answer chain is dropped."""
    source = REAL_FIXTURES / "claude-code" / "episodic-memory__tiny-conversation.jsonl"
    lines = _lines(source.read_bytes())
    parser = next(p for p in PARSERS if p.platform == "claude-code")
    expected, _ = run_parser(parser, source)
    prompts = [i for i, ln in enumerate(lines) if json.loads(ln).get("type") == "user"
               and isinstance(json.loads(ln)["message"].get("content"), str)]
    assert len(prompts) >= 2
    for index in prompts:
        copied = _place(tmp_path / str(index), Log("claude", source, "w/tiny.jsonl", "claude-code"),
                        b"".join(lines) + lines[index])
        sessions, _ = parse_file(copied)
        assert not (_messages(expected) - _messages(sessions)), f"prompt line {index} repeated"


def test_records_of_another_agent_spliced_after_a_claude_system_line_do_not_take_the_file(tmp_path):
    """A Claude transcript opening with a ``system`` line (no message) keeps its owner when two Codex
    records were spliced in right after it."""
    source = REAL_FIXTURES / "claude-code" / "agent-sessions__0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl"
    lines = _lines(source.read_bytes())
    assert json.loads(lines[0])["type"] == "system" and "message" not in json.loads(lines[0])
    spliced = lines[0] + CODEX_LINE + b"\n" + CODEX_LINE + b"\n" + b"".join(lines[1:])
    sessions, report = parse_file(_place(tmp_path, Log("claude", source, "w/a.jsonl", "claude-code"), spliced))
    expected, _ = run_parser(next(p for p in PARSERS if p.platform == "claude-code"), source)
    assert report.platform == "claude-code"
    assert _messages(sessions) == _messages(expected)
