"""A damaged page can leave the b-tree intact and flip bytes inside a text cell: SQLite then reads a value
that is not UTF-8 and Python's sqlite3 raises ``OperationalError: Could not decode to UTF-8 column …`` with the
cell's bytes in it. That is damage like any other (issue 24): one line naming the file and the recovery,
never "unexpected error" with page bytes."""

from __future__ import annotations

from pathlib import Path

from _shared import REAL_FIXTURES
from test_cli import run_wwt

MARKER = b"JOKE.md"


def test_a_search_reaching_a_text_cell_that_is_not_utf8_says_the_store_is_damaged(tmp_path: Path, model_dir):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "crud.jsonl").write_bytes((REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl").read_bytes())
    home = tmp_path / "wwt-home"
    assert run_wwt("ingest", str(logs), home=home, model_dir=model_dir).returncode == 0
    db = home / "wwt.sqlite3"
    data = bytearray(db.read_bytes())
    hits = 0
    at = data.find(MARKER)
    while at >= 0:  # every stored copy of the word: message text, chunk texts
        data[at:at + 2] = b"\xff\xfe"  # a byte-flip inside the cell: the page still parses
        hits += 1
        at = data.find(MARKER, at + 2)
    assert hits
    db.write_bytes(bytes(data))
    for args in (["search", "--all", "JOKE", "file"], ["search", "--all", "create a joke file"]):
        result = run_wwt(*args, home=home, model_dir=model_dir)
        output = result.stdout + result.stderr
        assert "unexpected error" not in output and "Could not decode" not in output, output
        if result.returncode != 0:
            assert "damaged" in result.stderr and "wwt ingest" in result.stderr, result.stderr
            assert len(result.stderr.strip().splitlines()) == 1
