"""A title the agent or the user gave a session (Continue's ``title``, Goose's ``description``, Copilot CLI's
``workspace.yaml`` ``summary``) is redacted before it is cut to 200 characters, like a first prompt's line: the
parsers cut those at 200 before redaction, so a token straddling the cut left its head in ``sessions.title``
(issue 24). Each log is one of the project's fixtures of that agent's documented shape with its title replaced;
ingested by a real ``wwt ingest`` process, read back from SQLite."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from test_cli import run_wwt

FIXTURES = Path(__file__).parent / "fixtures"
TOKEN = "ghp_" + "Ab3dE5gH7jK9mN1pQ3sT5vX7zB9dF1hJ3lN5"  # GitHub's classic token shape: ghp_ + 36 base62
LEAD = ("the session where we rotated the billing worker's deploy credential after the audit flagged it, "
        "moved the cron to the new queue, fixed the retry storm and finally pasted the new one: ")
NAME = LEAD + TOKEN + " (do not share)"
assert len(LEAD) < 200 < len(LEAD) + len(TOKEN)


def _continue(logs: Path) -> None:
    source = FIXTURES / "continue" / "sessions" / "3f2a9c1e-7b4d-4e8a-9c6f-1d2e3f4a5b6c.json"
    data = json.loads(source.read_text(encoding="utf-8"))
    data["title"] = NAME
    (logs / source.name).write_text(json.dumps(data, indent=2), encoding="utf-8")


def _goose(logs: Path) -> None:
    source = FIXTURES / "goose" / "jsonl" / "sessions" / "payments-retry.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()
    meta = json.loads(lines[0])
    meta["description"] = NAME
    (logs / "sessions").mkdir()
    (logs / "sessions" / source.name).write_text("\n".join([json.dumps(meta), *lines[1:]]) + "\n", encoding="utf-8")


def _copilot(logs: Path) -> None:
    source = FIXTURES / "copilot-cli" / "session-state" / "4f2a9c1e-8b7d-4e60-9a35-d1c2b3a4e5f6"
    target = logs / "session-state" / source.name
    shutil.copytree(source, target)
    yaml = (target / "workspace.yaml").read_text(encoding="utf-8")
    (target / "workspace.yaml").write_text(re.sub(r"(?m)^summary: .*$", f"summary: {NAME}", yaml), encoding="utf-8")


@pytest.mark.parametrize("make", [_continue, _goose, _copilot], ids=["continue", "goose", "copilot-cli"])
def test_a_given_title_is_redacted_before_it_is_cut(tmp_path, model_dir, make):
    logs = tmp_path / "logs"
    logs.mkdir()
    make(logs)
    home = tmp_path / "wwt-home"
    proc = run_wwt("ingest", str(logs), home=home, model_dir=model_dir)
    assert proc.returncode == 0, proc.stderr
    conn = sqlite3.connect(home / "wwt.sqlite3")
    try:
        titles = [r[0] for r in conn.execute("SELECT title FROM sessions")]
    finally:
        conn.close()
    assert titles and titles[0] is not None
    [title] = titles
    assert title.startswith(LEAD[:40]) and "ghp_" not in title and TOKEN[4:12] not in title, title
    assert len(title) <= 200 + len("[REDACTED:github_token]")
