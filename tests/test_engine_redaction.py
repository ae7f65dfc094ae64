"""What the hooks queue is redacted whichever command started the engine (issue 24): a terminal command run
with ``WWT_REDACT=0`` that happens to start the engine must not switch redaction off for every agent's
transcripts the engine then archives."""

from __future__ import annotations

import json
import sqlite3

from engine_helpers import alive, engine_pids
from test_engine import _hook, _ingest, _stats, engine_env, runtime, wait_for, wwt  # noqa: F401

SECRET = "ghp_" + "Zq8Lm3Nv7Pw1Rt5Xy9Bc2Df6Gh4Jk0Ms8Uv2W"
SESSION = "4b7e2a10-0c1d-4e5f-8a9b-5ec2e7000001"


def test_an_engine_started_by_a_redact_off_command_still_redacts_hook_queued_transcripts(tmp_path, runtime, model_dir):  # noqa: F811
    from _shared import REAL_FIXTURES

    home = tmp_path / "data"
    _ingest(home, model_dir, REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl")
    off = engine_env(home, runtime, model_dir, WWT_REDACT="0", WWT_WORKER_DEBOUNCE_S="0.2")
    started = wwt("search", "--all", "JOKE.md", env=off)  # starts the engine, from an environment with WWT_REDACT=0
    assert started.returncode == 0, started.stderr
    assert [p for p in engine_pids(runtime) if alive(p)]
    transcript = tmp_path / f"{SESSION}.jsonl"
    record = {"type": "user", "uuid": "00000000-0000-4000-8000-000000000001", "parentUuid": None,
              "sessionId": SESSION, "cwd": "/srv/app", "timestamp": "2026-05-01T10:00:00.000Z",
              "message": {"role": "user", "content": f"the deploy token is {SECRET}, why is CI rejecting it"}}
    transcript.write_text(json.dumps(record) + "\n", encoding="utf-8")
    hook_env = engine_env(home, runtime, model_dir, WWT_WORKER_DEBOUNCE_S="0.2")
    _hook(hook_env, transcript, SESSION)
    assert wait_for(lambda: _stats(home)[0] == 2 and _stats(home)[2] == 0, 120, 0.3)
    conn = sqlite3.connect(home / "wwt.sqlite3")
    try:
        texts = [r[0] for r in conn.execute("SELECT text FROM messages WHERE session_id=?", (SESSION,))]
    finally:
        conn.close()
    assert texts and all(SECRET not in t for t in texts) and any("[REDACTED:" in t for t in texts)
    assert len([p for p in engine_pids(runtime) if alive(p)]) == 1  # one engine for both environments
