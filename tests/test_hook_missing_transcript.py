"""A session-end for a transcript that was never written is not a failure (issue 25): every `claude mcp list`
fires Claude Code's SessionEnd hook (its documented input: session_id, transcript_path, cwd,
hook_event_name "SessionEnd", reason) for a session that wrote nothing. wwt used to retry it, park it, and warn
"given up after 3 failed attempts" in `wwt status` and `wwt doctor` — one false warning per call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

from test_queue_faults import env_for, wait_for


def test_session_ends_for_transcripts_never_written_leave_no_warning(tmp_path, model_dir):
    from _shared import REAL_FIXTURES

    home = tmp_path / "data"
    env = env_for(home, model_dir)
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.jsonl").write_bytes((REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl").read_bytes())
    subprocess.run([sys.executable, "-m", "wwt", "ingest", str(logs)], env=env, check=True, capture_output=True)
    for _ in range(4):  # four `claude mcp list` calls
        sid = str(uuid.uuid4())
        body = {"session_id": sid, "transcript_path": str(tmp_path / "projects" / "-srv" / f"{sid}.jsonl"),
                "cwd": str(tmp_path), "hook_event_name": "SessionEnd", "reason": "other"}
        proc = subprocess.run([sys.executable, "-m", "wwt", "hook", "claude-code"], input=json.dumps(body).encode(),
                              env=env, capture_output=True, timeout=60)
        assert proc.returncode == 0 and proc.stdout == b""

    def drained() -> bool:
        status = subprocess.run([sys.executable, "-m", "wwt", "status"], env=env, capture_output=True, text=True)
        return "waiting to be ingested" not in status.stdout

    assert wait_for(drained, 120), (home / "ingest.log").read_text()[-2000:]
    status = subprocess.run([sys.executable, "-m", "wwt", "status"], env=env, capture_output=True, text=True)
    assert "given up" not in status.stdout, status.stdout
    doctor = subprocess.run([sys.executable, "-m", "wwt", "doctor"], env=env, capture_output=True, text=True)
    assert "gave up on" not in doctor.stdout and "given up" not in doctor.stdout, doctor.stdout


def test_a_session_end_for_a_transcript_never_written_starts_nothing(tmp_path):
    """The same `claude mcp list` SessionEnd (Claude Code's documented hook input) must not queue a row or start
    a worker or an engine (~600 MB each) just to find nothing: a session that ended will not write its file."""
    import sqlite3

    home = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if k not in ("WWT_HOME",)}
    env.update(WWT_HOME=str(home), WWT_ENGINE="off")
    sid = str(uuid.uuid4())
    body = {"session_id": sid, "transcript_path": str(tmp_path / "projects" / "-srv" / f"{sid}.jsonl"),
            "cwd": str(tmp_path), "hook_event_name": "SessionEnd", "reason": "other"}
    proc = subprocess.run([sys.executable, "-m", "wwt", "hook", "claude-code"], input=json.dumps(body).encode(),
                          env=env, capture_output=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == b""
    assert not (home / "worker.spawn").exists()  # no worker started
    db = home / "wwt.sqlite3"
    if db.exists():
        with sqlite3.connect(db) as con:
            assert con.execute("SELECT COUNT(*) FROM queue").fetchone()[0] == 0
    assert "never written" in (home / "ingest.log").read_text()

    # a Stop for a file not there (yet) is still queued: the worker looks again, and drops it if still missing
    body["hook_event_name"] = "Stop"
    subprocess.run([sys.executable, "-m", "wwt", "hook", "claude-code"], input=json.dumps(body).encode(),
                   env=env, capture_output=True, timeout=60)
    assert (home / "worker.spawn").exists()
