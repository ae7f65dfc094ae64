"""A store whose header and schema are intact but one data page in the middle is malformed: SQLite opens it
without complaint and fails only when a query reaches that page. Every command that reaches it — search,
show, status, ingest, forget, reindex, doctor, the worker — and every MCP tool must then give the one line
that names the file and the recovery (move it away, `wwt ingest`), like a store that cannot be opened at all;
never "unexpected error: DatabaseError", never a traceback. Real CLI as subprocesses, real MCP client over
stdio, real store built from real agent logs by `wwt ingest`."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
LOGS = [
    ("claude-code/agentlogs__crud.jsonl", "{sid}.jsonl"),
    ("claude-code/episodic-memory__short-conversation.jsonl", "{sid}.jsonl"),
    ("claude-code/spotter__short.jsonl", "{sid}.jsonl"),
    ("codex-cli/agentlogs__crud.jsonl", "rollout-2026-01-25T10-32-00-{sid}.jsonl"),
    ("gemini-cli/VibeCodingTracker__gemini.jsonl", "session-2026-04-23T12-52-{short}.jsonl"),
]


def fresh_copy(src: str, pattern: str, dest: Path) -> tuple[Path, str]:
    text = (REAL_FIXTURES / src).read_text()
    mapping = {old: str(uuid.uuid4()) for old in dict.fromkeys(UUID.findall(text))}
    sid = next(iter(mapping.values()))
    path = dest / pattern.format(sid=sid, short=sid[:8])
    path.write_text(UUID.sub(lambda m: mapping[m.group(0)], text))
    return path, sid


def env_for(home: Path, model_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "WWT_DEBUG"}
    env.update(WWT_HOME=str(home), WWT_MODEL_DIR=str(model_dir), HOME=str(home.parent), NO_COLOR="1",
               COLUMNS="400", WWT_WORKER_DEBOUNCE_S="0", WWT_WORKER_IDLE_S="1")
    return env


def wwt(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wwt", *args], capture_output=True, text=True, env=env,
                          stdin=subprocess.DEVNULL, timeout=300)


def corrupt_one_page(db: Path) -> int:
    """Garble the page holding the sessions table (every command reads it), nothing else: the header page,
    the schema and every other page stay as they were. Returns the page number."""
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the main file, none in the WAL
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        page = conn.execute("SELECT rootpage FROM sqlite_master WHERE name='sessions'").fetchone()[0]
        assert conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] >= len(LOGS)  # root = its only page
    finally:
        conn.close()
    assert 1 < page < pages, (page, pages)
    data = bytearray(db.read_bytes())
    start = (page - 1) * page_size
    data[start : start + page_size] = bytes(b ^ 0x5A for b in data[start : start + page_size])
    db.write_bytes(bytes(data))
    return page


def assert_recovery_line(text: str, db: Path) -> None:
    assert "Traceback" not in text and "unexpected error" not in text, text
    lines = [ln for ln in text.strip().splitlines() if str(db) in ln]
    assert len(lines) == 1, text
    assert f"mv {db} {db}.bad" in lines[0] and "wwt ingest" in lines[0], lines[0]


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory, model_dir: Path) -> dict:
    root = tmp_path_factory.mktemp("damage")
    logs = root / "logs"
    logs.mkdir()
    sessions = [fresh_copy(src, pattern, logs)[1] for src, pattern in LOGS]
    home = root / "data"
    env = env_for(home, model_dir)
    proc = wwt("ingest", str(logs), env=env)
    assert proc.returncode == 0, proc.stderr
    pristine = root / "pristine"
    shutil.copytree(home, pristine)
    corrupt_one_page(home / "wwt.sqlite3")
    new_logs = root / "new"
    new_logs.mkdir()
    new_log, _ = fresh_copy(*LOGS[0], new_logs)
    return {"root": root, "home": home, "env": env, "sessions": sessions, "new_log": new_log,
            "db": home / "wwt.sqlite3"}


@pytest.mark.slow
def test_every_command_that_reaches_a_malformed_page_gives_the_file_and_the_recovery(damaged: dict) -> None:
    env, db, sid = damaged["env"], damaged["db"], damaged["sessions"][0]
    commands = (["search", "--all", "create a file with a joke"], ["search", "--all", "--json", "JOKE.md"],
                ["show", sid[:8]], ["status"], ["ingest", str(damaged["new_log"])], ["forget", sid, "--yes"],
                ["reindex"])
    for args in commands:
        proc = wwt(*args, env=env)
        assert proc.returncode == 1, (args, proc.stdout[-500:], proc.stderr)
        assert_recovery_line(proc.stderr, db)
        assert len(proc.stderr.strip().splitlines()) == 1, (args, proc.stderr)

    doctor = wwt("doctor", env=env)
    assert doctor.returncode == 1
    assert_recovery_line(doctor.stdout, db)


@pytest.mark.slow
def test_the_worker_stops_with_the_recovery_line_and_keeps_the_queued_file(damaged: dict) -> None:
    from wwt.store import Store

    env, db = damaged["env"], damaged["db"]
    with Store.open(db) as store:  # what the hook does: the queue's own pages are intact
        store.enqueue(str(damaged["new_log"]), "claude-code", None)
    proc = wwt("worker", env=env)
    assert proc.returncode == 1
    assert_recovery_line(proc.stderr, db)
    assert_recovery_line("\n".join(ln for ln in (damaged["home"] / "ingest.log").read_text().splitlines()
                                   if "stopped" in ln), db)
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT path, attempts, error FROM ingest_queue").fetchall()
    finally:
        conn.close()
    # not the file's fault: not charged an attempt, not parked — it is ingested once the store is rebuilt
    assert rows == [(str(damaged["new_log"]), 0, None)]


@pytest.mark.slow
def test_mcp_tools_reaching_a_malformed_page_return_a_short_tool_error(damaged: dict) -> None:
    env, db, sid = damaged["env"], damaged["db"], damaged["sessions"][0]
    results = {}

    async def run() -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "wwt", "mcp"], env=env,
                                       cwd=str(damaged["root"]))
        with open(damaged["root"] / "mcp-stderr.log", "a") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    results["search_all"] = await session.call_tool("search_all", {"query": "JOKE.md"})
                    results["search_memory"] = await session.call_tool("search_memory", {"query": "JOKE.md"})
                    results["get_session"] = await session.call_tool("get_session", {"session_id": sid})

    asyncio.run(run())
    for name, result in results.items():
        text = "".join(getattr(c, "text", "") for c in result.content)
        assert result.is_error, (name, text[:300])
        assert_recovery_line(text, db)
        assert len(text) < 600, (name, text)
