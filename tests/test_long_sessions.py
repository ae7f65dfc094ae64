"""Long sessions and data-sized nesting cost time, never a crash (issue 24).

Heavy users keep one Claude Code conversation for thousands of turns; one parse then hands the store thousands
of new messages at once. The inputs are Claude Code JSONL lines as its format is documented (one JSON object
per line: ``type``, ``uuid``, ``parentUuid``, ``sessionId``, ``cwd``, ``timestamp``, ``message``)."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

from long_session_log import SESSION, claude_record, write_long_session
from test_cli import run_wwt

from wwt.store import merge_order


def stored_messages(home: Path) -> int:
    conn = sqlite3.connect(home / "wwt.sqlite3")
    try:
        return conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    finally:
        conn.close()


def reference_merge_order(existing: list[str], parsed: list[str], incremental: bool) -> list[str]:
    """The rule, written as plainly as possible: each new message goes right after its predecessor in the
    parse, before anything inserted earlier at the same place is followed."""
    order = list(existing)
    known = set(existing)
    anchor = order[-1] if incremental and order else None
    for nid in parsed:
        if nid in known:
            anchor = nid
            continue
        if anchor is None:
            # first position, after the new ones already put first
            pos = 0
            while pos < len(order) and order[pos] not in existing and order[pos] in known:
                pos += 1
        else:
            pos = order.index(anchor) + 1
            while pos < len(order) and order[pos] not in existing:
                pos += 1
        order.insert(pos, nid)
        known.add(nid)
        anchor = nid
    return order


def test_merge_order_matches_the_plain_rule_on_random_inputs():
    rng = random.Random(7)
    for _ in range(400):
        existing = [f"e{i}" for i in range(rng.randint(0, 6))]
        new = [f"n{i}" for i in range(rng.randint(0, 6))]
        parsed = existing + new
        rng.shuffle(parsed)
        parsed = parsed[: rng.randint(0, len(parsed))]
        incremental = rng.random() < 0.5
        assert merge_order(existing, parsed, incremental) == reference_merge_order(existing, parsed, incremental)


def test_merge_order_of_fifty_thousand_new_messages_is_flat():
    parsed = [f"m{i}" for i in range(50_000)]
    assert merge_order([], parsed) == parsed
    assert merge_order(["m0"], parsed) == parsed
    assert merge_order(parsed[:10], parsed, incremental=True) == parsed


def test_a_two_thousand_message_session_is_ingested_and_the_files_after_it_too(tmp_path, model_dir):
    logs = tmp_path / "logs"
    logs.mkdir()
    write_long_session(logs / "a-long.jsonl", 2_000)
    after = logs / "b-after.jsonl"
    after_rec = claude_record(0, None, "user", "the zeppelin deploy key rotation")
    after_rec["sessionId"] = "7d2c51f0-4b1e-4c8e-9a55-0c0ffee00002"
    after.write_text(json.dumps(after_rec) + "\n", encoding="utf-8")
    home = tmp_path / "wwt-home"
    result = run_wwt("ingest", str(logs), home=home, model_dir=model_dir)
    assert result.returncode == 0, result.stderr
    assert "RecursionError" not in result.stdout + result.stderr
    assert stored_messages(home) == 2_001
    found = run_wwt("search", "quokka1999", "--all", "--json", home=home, model_dir=model_dir)
    assert found.returncode == 0, found.stderr
    assert SESSION in found.stdout


def test_one_deeply_nested_line_costs_only_that_line(tmp_path, model_dir):
    logs = tmp_path / "logs"
    logs.mkdir()
    deep = '{"type":"user","payload":' + "[" * 100_000
    deep_closed = '{"type":"user","payload":' + "[" * 100_000 + "]" * 100_000 + "}"
    write_long_session(logs / "nested.jsonl", 40, bad_lines={10: deep, 20: deep_closed})
    home = tmp_path / "wwt-home"
    result = run_wwt("ingest", str(logs), home=home, model_dir=model_dir)
    assert result.returncode == 0, result.stderr
    assert "RecursionError" not in result.stdout + result.stderr
    assert stored_messages(home) == 40


def test_a_nested_junk_line_in_a_short_real_log_does_not_hide_the_log(tmp_path):
    """A three-record Claude Code log (a system record first, from agent-sessions' fixtures) with one absurdly
    nested line after its first record: still read as Claude Code, every message kept, one line counted bad."""
    from _shared import REAL_FIXTURES

    from wwt.parsers import parse_file

    source = REAL_FIXTURES / "claude-code" / "agent-sessions__0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()
    before, _ = parse_file(source)
    damaged = tmp_path / source.name
    damaged.write_text("\n".join([lines[0], '{"payload":' + "[" * 100_000, *lines[1:]]) + "\n", encoding="utf-8")
    after, report = parse_file(damaged)
    assert [len(s.messages) for s in after] == [len(s.messages) for s in before] != []
    assert report.bad_lines == 1
