"""Redaction is the data dir's setting, not an environment's (issue 24). Every process that archives — a
terminal ``wwt ingest``, the engine, a hook's take-over of a stopped engine's work — follows
``<data dir>/settings.json``; ``WWT_REDACT=0`` in whatever environment started one of them changes nothing.
Real processes throughout: the CLI as a subprocess, a real engine (real model, tantivy, hnswlib), the hook as
the agents run it, and the archive read back from SQLite."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
from pathlib import Path

from _shared import REAL_FIXTURES
from engine_helpers import alive, engine_pids
from test_engine import _hook, _ingest, _stats, engine_env, runtime, wait_for, wwt  # noqa: F401

SECRET = "ghp_" + "Zq8Lm3Nv7Pw1Rt5Xy9Bc2Df6Gh4Jk0Ms8Uv2W"  # GitHub's classic token shape


def transcript(folder: Path, session: str, secret: str = SECRET) -> Path:
    """A one-prompt Claude Code transcript (its documented JSONL record shape) that pastes a token."""
    path = folder / f"{session}.jsonl"
    record = {"type": "user", "uuid": f"{session[:8]}-0c1d-4e5f-8a9b-000000000001", "parentUuid": None,
              "sessionId": session, "cwd": "/srv/app", "timestamp": "2026-05-01T10:00:00.000Z",
              "message": {"role": "user", "content": f"the deploy token is {secret}, why is CI rejecting it"}}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return path


def texts_of(home: Path, session: str) -> list[str]:
    conn = sqlite3.connect(home / "wwt.sqlite3")
    try:
        return [r[0] for r in conn.execute("SELECT text FROM messages WHERE session_id=?", (session,))]
    finally:
        conn.close()


def redacted(texts: list[str]) -> bool:
    return bool(texts) and all(SECRET not in t for t in texts) and any("[REDACTED:github_token]" in t for t in texts)


def test_a_terminal_ingest_given_wwt_redact_0_still_redacts_and_says_why(tmp_path, model_dir):
    home = tmp_path / "data"
    session = "5a7e2a10-0c1d-4e5f-8a9b-5ec2e7000010"
    path = transcript(tmp_path, session)
    env = dict(os.environ, WWT_HOME=str(home), WWT_MODEL_DIR=str(model_dir), WWT_ENGINE="off", WWT_REDACT="0",
               HOME=str(tmp_path), NO_COLOR="1", COLUMNS="200")
    proc = wwt("ingest", str(path), env=env)
    assert proc.returncode == 0, proc.stderr
    assert redacted(texts_of(home, session))
    assert "WWT_REDACT is not read" in proc.stderr and "wwt config redact off" in proc.stderr


def test_the_engine_follows_the_data_dirs_setting_both_ways(tmp_path, runtime, model_dir):  # noqa: F811
    """Changed while the engine runs, the setting applies to the next transcript a hook queues: off stores the
    token as written (what the user chose), on again redacts — no restart, no environment involved."""
    home = tmp_path / "data"
    _ingest(home, model_dir, REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl")
    env = engine_env(home, runtime, model_dir, WWT_WORKER_DEBOUNCE_S="0.2")
    assert wwt("search", "--all", "JOKE.md", env=env).returncode == 0  # starts the engine
    [pid] = [p for p in engine_pids(runtime) if alive(p)]

    off = wwt("config", "redact", "off", env=env)
    assert off.returncode == 0 and "stores secrets as they were written" in off.stderr
    assert wwt("config", "redact", env=env).stdout.strip() == "off"
    raw = "6b7e2a10-0c1d-4e5f-8a9b-5ec2e7000011"
    _hook(env, transcript(tmp_path, raw), raw)
    assert wait_for(lambda: _stats(home)[0] == 2 and _stats(home)[2] == 0, 120, 0.3), (home / "ingest.log").read_text()
    assert any(SECRET in t for t in texts_of(home, raw))

    assert wwt("config", "redact", "on", env=env).returncode == 0
    kept = "7c7e2a10-0c1d-4e5f-8a9b-5ec2e7000012"
    _hook(env, transcript(tmp_path, kept), kept)
    assert wait_for(lambda: _stats(home)[0] == 3 and _stats(home)[2] == 0, 120, 0.3), (home / "ingest.log").read_text()
    assert redacted(texts_of(home, kept))
    assert [p for p in engine_pids(runtime) if alive(p)] == [pid]  # the same engine did both


def test_a_hooks_take_over_from_a_stopped_engine_redacts_whatever_its_environment(tmp_path, runtime, model_dir):  # noqa: F811
    """The engine started by a ``WWT_REDACT=0`` command, then stopped (SIGSTOP); the hook, run by an agent
    whose environment also holds ``WWT_REDACT=0``, archives the transcript in a process of its own: redacted.
    (That process inherited the hook's environment, and stored the token as written.)"""
    home = tmp_path / "data"
    _ingest(home, model_dir, REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl")
    env = engine_env(home, runtime, model_dir, WWT_REDACT="0")
    assert wwt("search", "--all", "JOKE.md", env=env).returncode == 0
    [pid] = [p for p in engine_pids(runtime) if alive(p)]
    session = "8d7e2a10-0c1d-4e5f-8a9b-5ec2e7000013"
    os.kill(pid, signal.SIGSTOP)
    try:
        _hook(env, transcript(tmp_path, session), session)
        assert wait_for(lambda: "took over" in (home / "ingest.log").read_text(), 60, 0.3), (
            home / "ingest.log").read_text()
    finally:
        os.kill(pid, signal.SIGCONT)
    assert redacted(texts_of(home, session)), texts_of(home, session)
