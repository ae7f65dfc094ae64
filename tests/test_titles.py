"""What a session's stored title holds (issue 24): redacted before it is cut, and the conversation's first
prompt whichever part of the log an ingest read. Logs are Claude Code JSONL (its documented record shape)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from long_session_log import claude_record
from test_cli import run_wwt

TOKEN = "ghp_" + "Ab3dE5gH7jK9mN1pQ3sT5vX7zB9dF1hJ3lN5"  # GitHub's classic token shape: ghp_ + 36 base62


def stored_titles(home: Path) -> list[str]:
    conn = sqlite3.connect(home / "wwt.sqlite3")
    try:
        return [r[0] for r in conn.execute("SELECT title FROM sessions")]
    finally:
        conn.close()


def write(path: Path, records: list[dict], mode: str = "w") -> None:
    with path.open(mode, encoding="utf-8") as f:
        f.write("".join(json.dumps(r) + "\n" for r in records))


def chain(texts: list[str], start: int = 0, parent: str | None = None) -> list[dict]:
    out = []
    for i, text in enumerate(texts, start):
        rec = claude_record(i, parent, "user" if i % 2 == 0 else "assistant", text)
        parent = rec["uuid"]
        out.append(rec)
    return out


def test_a_token_straddling_the_title_cut_leaves_none_of_its_characters(tmp_path, model_dir):
    logs = tmp_path / "logs"
    logs.mkdir()
    prompt = "please rotate the deploy credential for the billing worker; the old one we pasted yesterday was " + TOKEN
    assert prompt.index(TOKEN) < 100 < prompt.index(TOKEN) + len(TOKEN)
    write(logs / "s.jsonl", chain([prompt, "rotated."]))
    home = tmp_path / "wwt-home"
    assert run_wwt("ingest", str(logs), home=home, model_dir=model_dir).returncode == 0
    [title] = stored_titles(home)
    assert "ghp_" not in title and TOKEN[:10] not in title
    assert title.startswith("please rotate the deploy credential")


def test_an_incremental_ingest_keeps_the_first_prompt_as_the_title(tmp_path, model_dir):
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "s.jsonl"
    first = chain(["why does the invoice export time out", "the query has no index."])
    write(log, first)
    home = tmp_path / "wwt-home"
    assert run_wwt("ingest", str(logs), home=home, model_dir=model_dir).returncode == 0
    write(log, chain(["now add a retry to the mailer", "done."], start=2, parent=first[-1]["uuid"]), mode="a")
    assert run_wwt("ingest", str(logs), home=home, model_dir=model_dir).returncode == 0
    assert stored_titles(home) == ["why does the invoice export time out"]
