"""Every detector against every agent's files: a parser claims its own agent's logs and nobody else's.

Real fixtures (shared folder) stand for Claude Code, Gemini CLI and Codex CLI; the newer connectors' fixtures
are ours (tests/fixtures/<platform>/, written after each agent's writer code, see docs/formats-notes.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _shared import REAL_FIXTURES

from wwt.parsers import PARSERS, parser_for
from wwt.parsers.common import read_head

OWN = Path(__file__).parent / "fixtures"
# Files of the real set that are no session of any agent (see test_parsers_registry.py).
NOT_SESSIONS = {"agent-sessions__schema_drift.jsonl", "agent-sessions__schema_drift.json",
                "agent-sessions__agent-a0ad4f44468bdf20d.meta.json"}
# Our own fixtures per platform: every file under the folder that is a log (not a sidecar).
OWN_FOLDERS = {"qwen-code": OWN / "qwen-code", "copilot-cli": OWN / "copilot-cli"}
# Platforms whose fixture folders also hold non-log files (message/part records, the SQL a database is built from).
OWN_FILES = {
    "cline": [OWN / "cline" / "saoudrizwan.claude-dev" / "tasks" / "1767950000000" / "ui_messages.json",
              OWN / "cline" / "cline-data" / "sessions" / "cli_1772200000000_m4x8c1q"
              / "cli_1772200000000_m4x8c1q.messages.json"],
    "roo-code": [OWN / "cline" / "rooveterinaryinc.roo-cline" / "tasks" / "1767960000000" / "ui_messages.json"],
    "cursor": [
        OWN / "cursor" / "User" / "globalStorage" / "state.vscdb",
        OWN / "cursor" / "home" / ".cursor" / "projects" / "home-ana-code-orbit" / "agent-transcripts"
        / "0c9e5a77-2b1d-4f3e-8a6c-7d5e4f3a2b1c.jsonl",
    ],
    "aider": [OWN / "aider" / "quillpad" / ".aider.chat.history.md"],
    "continue": [OWN / "continue" / "sessions" / "3f2a9c1e-7b4d-4e8a-9c6f-1d2e3f4a5b6c.json",
                 OWN / "continue" / "sessions" / "c0ffee00-5a1e-4b2c-8d3e-9f0a1b2c3d4e.json"],
    "goose": [OWN / "goose" / "jsonl" / "sessions" / "20250620_013617.jsonl",
              OWN / "goose" / "jsonl" / "sessions" / "payments-retry.jsonl",
              OWN / "goose" / "db" / "sessions" / "sessions.db"],
    "opencode": [
        OWN / "opencode" / "db" / "opencode.db",
        OWN / "opencode" / "json" / "storage" / "session" / "9f86d081884c7d65" / "ses_3b2c1d0e9f8aJsonEraSess.json",
    ],
}
SIDECAR_NAMES = {"workspace.yaml"}  # Copilot session metadata beside events.jsonl


def _files() -> list[tuple[str, Path]]:
    out = [
        (folder.name, path)
        for folder in sorted(REAL_FIXTURES.iterdir())
        if folder.is_dir()
        for path in sorted(folder.iterdir())
        if path.name not in NOT_SESSIONS
    ]
    for platform, folder in OWN_FOLDERS.items():
        out += [(platform, p) for p in sorted(folder.rglob("*")) if p.is_file() and p.name not in SIDECAR_NAMES]
    out.append(("qwen-code", OWN / "qwen" / "3c9d7e12-6a4b-4c8d-9e0f-1a2b3c4d5e6f.jsonl"))
    out += [(platform, path) for platform, paths in OWN_FILES.items() for path in paths]
    return out


FILES = _files()


@pytest.mark.parametrize(("platform", "path"), FILES, ids=[f"{p}/{f.name}" for p, f in FILES])
def test_each_detector_claims_only_its_own_agents_files(platform, path):
    head = read_head(path)
    claims = {parser.platform for parser in PARSERS if parser.detect(path, head)}
    assert claims == {platform}
    assert parser_for(path).platform == platform


# Cline's runtime sessions as the current writer names them hold a ``sessionId`` beside ``messages``, as Gemini
# CLI's older whole-file recordings do: only Cline's detector may claim them.
CLINE_RUNTIME = [OWN / "cline" / "cline-data" / "sessions" / "1786104000000_q7Rk2" / name
                 for name in ("1786104000000_q7Rk2.messages.json", "agent_1786104027000_h2k9dq.messages.json")]


@pytest.mark.parametrize("path", CLINE_RUNTIME, ids=[p.name for p in CLINE_RUNTIME])
def test_cline_runtime_sessions_are_read_as_clines(path):
    assert parser_for(path).platform == "cline"


@pytest.mark.parametrize("path", CLINE_RUNTIME, ids=[p.name for p in CLINE_RUNTIME])
def test_cline_runtime_sessions_are_claimed_by_clines_detector_alone(path):
    head = read_head(path)
    assert {parser.platform for parser in PARSERS if parser.detect(path, head)} == {"cline"}


def test_every_platform_has_files_in_the_matrix():
    assert {p.platform for p in PARSERS} <= {platform for platform, _ in FILES}


def test_the_shared_line_reader_takes_a_byte_order_mark_and_counts_bad_utf8(tmp_path):
    """Lines are decoded as UTF-8 before JSON (no per-line encoding sniffing): a BOM before the first line is
    still allowed, as json.loads allows it on bytes, and invalid bytes are replaced and counted."""
    from wwt.models import ParseReport
    from wwt.parsers.common import iter_jsonl

    path = tmp_path / "x.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\n{"b": "caf\xe9"}\n{"c": 3}\n')
    report = ParseReport(path=str(path))
    rows = [obj for _, _, obj in iter_jsonl(path, report)]
    assert rows == [{"a": 1}, {"b": "caf\ufffd"}, {"c": 3}]
    assert report.bad_lines == 1
