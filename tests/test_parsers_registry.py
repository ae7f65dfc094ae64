"""Registry: the right parser for every real fixture, never-raising parse_file, discovery of log folders."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES

from wwt.models import PLATFORMS
from wwt.parsers import PARSERS, discover, parse_file, parser_for
from wwt.parsers.base import SessionParser
from wwt.parsers.claude_code import ClaudeCodeParser
from wwt.parsers.common import read_head

REAL = REAL_FIXTURES
MINE = Path(__file__).parent / "fixtures" / "claude"
SIDECARS = {"agent-sessions__agent-a0ad4f44468bdf20d.meta.json"}  # Claude subagent metadata, not a session
# Upstream "schema drift" samples that are NOT sessions of their folder's agent (decided by those parsers'
# owner, see tests/test_parsers_codex.py / test_parsers_gemini.py): no parser may claim them.
NOT_SESSIONS = {("codex-cli", "agent-sessions__schema_drift.jsonl"), ("gemini-cli", "agent-sessions__schema_drift.json")}

FIXTURES = sorted(
    (folder.name, path.name)
    for folder in REAL.iterdir()
    if folder.is_dir()
    for path in folder.iterdir()
    if path.name not in SIDECARS
)


def test_registry_holds_protocol_parsers_one_per_platform():
    platforms = [p.platform for p in PARSERS]
    assert len(platforms) == len(set(platforms))
    assert set(platforms) <= set(PLATFORMS)
    assert all(isinstance(p, SessionParser) for p in PARSERS)
    assert set(platforms) == set(PLATFORMS)


@pytest.mark.parametrize(("folder", "name"), FIXTURES, ids=[f"{f}/{n}" for f, n in FIXTURES])
def test_parser_for_picks_the_platform_of_every_real_fixture(folder, name):
    parser = parser_for(REAL / folder / name)
    if (folder, name) in NOT_SESSIONS:
        assert parser is None
    else:
        assert parser is not None and parser.platform == folder


@pytest.mark.parametrize(("folder", "name"), FIXTURES, ids=[f"{f}/{n}" for f, n in FIXTURES])
def test_claude_detector_claims_only_claude_files(folder, name):
    path = REAL / folder / name
    assert ClaudeCodeParser().detect(path, read_head(path)) == (folder == "claude-code")


def test_sidecar_and_non_session_files_have_no_parser():
    assert parser_for(REAL / "claude-code" / "agent-sessions__agent-a0ad4f44468bdf20d.meta.json") is None
    assert parser_for(MINE / "not_a_session.jsonl") is None
    assert parser_for(MINE / "empty.jsonl") is None  # empty and outside any agent's folder


def test_parse_file_never_raises_on_missing_or_unknown_files(tmp_path):
    sessions, report = parse_file(tmp_path / "missing.jsonl")
    assert sessions == [] and report.notes
    sessions, report = parse_file(MINE / "not_a_session.jsonl")
    assert sessions == [] and report.platform is None and "not a recognised agent log" in report.notes


def test_parse_file_survives_a_parser_bug(monkeypatch):
    class Exploding(ClaudeCodeParser):
        def parse(self, path, report, start_offset=0):
            yield from super().parse(path, report, start_offset)
            raise RuntimeError("boom")

    monkeypatch.setattr("wwt.parsers.PARSERS", [Exploding()])
    sessions, report = parse_file(REAL / "claude-code" / "spotter__short.jsonl")
    assert len(sessions) == 1
    assert any("RuntimeError" in note for note in report.notes)


def _claude_tree(root: Path) -> Path:
    project = root / "projects" / "-home-u-shop"
    project.mkdir(parents=True)
    shutil.copy(REAL / "claude-code" / "spotter__short.jsonl", project / "55604662-cf2a-4331-851a-ec234028f8ca.jsonl")
    sub = project / "55604662-cf2a-4331-851a-ec234028f8ca" / "subagents"
    sub.mkdir(parents=True)
    shutil.copy(REAL / "claude-code" / "spotter__agent-aac57f5.jsonl", sub / "agent-aac57f5.jsonl")
    shutil.copy(
        REAL / "claude-code" / "agent-sessions__agent-a0ad4f44468bdf20d.meta.json", sub / "agent-aac57f5.meta.json"
    )
    (project / "notes.txt").write_text("not a log")
    return project


def test_discover_default_roots_follow_claude_config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    _claude_tree(tmp_path / "claude")
    found = {path.name: parser.platform for path, parser in discover()}
    assert found == {"55604662-cf2a-4331-851a-ec234028f8ca.jsonl": "claude-code", "agent-aac57f5.jsonl": "claude-code"}


def test_discover_given_files_and_folders_survives_loops_and_unreadable_dirs(tmp_path):
    project = _claude_tree(tmp_path / "claude")
    os.symlink(project, project / "loop")  # a symlink loop back to the folder itself
    locked = project / "locked"
    locked.mkdir()
    shutil.copy(REAL / "claude-code" / "agentlogs__todos.jsonl", locked / "x.jsonl")
    locked.chmod(0)
    try:
        found = sorted(path.name for path, _ in discover([tmp_path / "claude", MINE / "korean_nfd.jsonl"]))
    finally:
        locked.chmod(0o755)
    expected = ["55604662-cf2a-4331-851a-ec234028f8ca.jsonl", "agent-aac57f5.jsonl", "korean_nfd.jsonl"]
    if os.geteuid() == 0:  # root reads through chmod 0
        expected.append("x.jsonl")
    assert found == sorted(expected)


def test_discover_yields_each_file_once_even_through_two_roots(tmp_path):
    project = _claude_tree(tmp_path / "claude")
    paths = [p for p, _ in discover([project, project / "55604662-cf2a-4331-851a-ec234028f8ca.jsonl"])]
    assert len(paths) == len({os.path.realpath(p) for p in paths}) == 2


# ------------------------------------------------------------------ accepted-but-empty and passed-over files

def _empty_logs(folder: Path) -> dict[str, Path]:
    """One log per platform that its parser accepts but that holds no conversation."""
    from parser_helpers import write_jsonl

    claude = folder / "claude.jsonl"
    shutil.copy(REAL / "claude-code" / "episodic-memory__medium-conversation.jsonl", claude)  # snapshots only
    gemini = write_jsonl(folder / "session-2026-05-02T09-15-0badf00d.jsonl",
                         [{"sessionId": "0badf00d-0000-4000-8000-000000000000", "projectHash": "h",
                           "startTime": "2026-05-02T09:15:00Z"}])
    codex = write_jsonl(folder / "rollout-2026-03-04T10-20-30-0199bbbb-1111-7222-8333-444455556666.jsonl",
                        [{"timestamp": "2026-03-04T10:20:30.000Z", "type": "session_meta",
                          "payload": {"id": "0199bbbb-1111-7222-8333-444455556666", "cwd": "/w"}}])
    (folder / "projects" / "-w" / "chats").mkdir(parents=True)
    qwen = write_jsonl(folder / "projects" / "-w" / "chats" / "5e55c0de-0000-4000-8000-000000000000.jsonl",
                       [{"uuid": "s1", "parentUuid": None, "sessionId": "5e55c0de-0000-4000-8000-000000000000",
                         "timestamp": "2026-05-02T09:15:00Z", "type": "system", "subtype": "session_source",
                         "cwd": "/w", "version": "0.12.0", "systemPayload": {"sourceType": "cli"}}])
    return {"claude-code": claude, "gemini-cli": gemini, "codex-cli": codex, "qwen-code": qwen}


def test_an_accepted_file_without_messages_says_so_for_every_platform(tmp_path):
    for platform, path in _empty_logs(tmp_path).items():
        sessions, report = parse_file(path)
        assert report.platform == platform
        assert not any(s.messages for s in sessions)
        assert report.notes.count("no conversation messages") == 1, (platform, report.notes)


def test_a_resumed_parse_with_nothing_new_is_not_noted(tmp_path):
    path = MINE / "korean_nfd.jsonl"
    size = path.stat().st_size
    sessions, report = parse_file(path, size)
    assert report.notes == []


def test_discover_lists_the_candidate_files_no_parser_accepts(tmp_path):
    logs = tmp_path / "logs"
    (logs / "app").mkdir(parents=True)
    (logs / "app" / "server.jsonl").write_text('{"level":"info","msg":"listening"}\n', encoding="utf-8")
    (logs / "package.json").write_text('{"name": "x"}', encoding="utf-8")
    (logs / "readme.txt").write_text("not a candidate", encoding="utf-8")  # not even looked at
    shutil.copy(REAL / "claude-code" / "spotter__short.jsonl", logs / "short.jsonl")
    passed_over: list[Path] = []
    found = [p.name for p, _ in discover([logs], passed_over)]
    assert found == ["short.jsonl"]
    assert sorted(p.name for p in passed_over) == sorted(["server.jsonl", "package.json"])


def test_the_no_messages_note_survives_a_file_full_of_other_notes(tmp_path):
    """The ingest summary keeps a file's first notes only: why a file gave nothing comes first."""
    junk = [f"{{broken json line {i}" for i in range(30)]
    head = '{"type":"summary","summary":"Refund rounding","leafUuid":"x"}'
    path = tmp_path / "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d.jsonl"
    path.write_text("\n".join([head, *junk]) + "\n", encoding="utf-8")
    sessions, report = parse_file(path)
    assert report.platform == "claude-code" and report.bad_lines == 30
    assert report.notes[0] == "no conversation messages"
