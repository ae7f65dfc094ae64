"""A session its agent gave no name (Codex CLI rollouts, Gemini sessions without a summary) is titled by its first
prompt's first line, as Claude Code sessions are — found with the real Codex CLI: its recall session listed
`title: null` in every search (issue 25). Parsed from the real CLI's own transcript."""

from __future__ import annotations

import json
from pathlib import Path

from wwt.parsers import PROMPT_TITLE_CHARS, first_prompt_line, parse_file

CODEX = next((Path(__file__).resolve().parent / "fixtures" / "agents" / "codex-cli").rglob("rollout-*.jsonl"))


def test_a_codex_rollout_is_titled_by_its_first_prompt() -> None:
    [session], _report = parse_file(CODEX)
    assert session.title is not None and session.title.startswith("What did we find out about the nightly reconcile")
    assert session.title_is_first_prompt
    assert len(session.title) <= PROMPT_TITLE_CHARS


def test_the_first_prompt_line_skips_blank_lines_and_other_roles(tmp_path: Path) -> None:
    from wwt.models import Message, Session

    def msg(role: str, kind: str, text: str) -> Message:
        return Message(native_id=text[:8] or "x", role=role, kind=kind, text=text)

    session = Session(session_id="s", platform="codex-cli", source_path="x", messages=[
        msg("assistant", "text", "hello"), msg("user", "tool_result", "output"), msg("user", "text", "\n\n  fix it  \nmore")])
    assert first_prompt_line(session) == "fix it"
    assert first_prompt_line(Session(session_id="t", platform="codex-cli", source_path="x", messages=[])) is None


def test_a_secret_in_the_first_prompt_is_redacted_in_the_title(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout-2026-12-05T07-52-13-01a24530-7645-7343-aa6a-b4d5762d83e7.jsonl"
    lines = [json.loads(line) for line in CODEX.read_text(encoding="utf-8").splitlines() if line.strip()]
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    text = json.dumps(lines).replace("What did we find out about", f"token {secret} — what did we find out about")
    rollout.write_text("\n".join(json.dumps(x) for x in json.loads(text)) + "\n", encoding="utf-8")
    [session], _report = parse_file(rollout)
    assert session.title and secret not in session.title and "[REDACTED" in session.title
