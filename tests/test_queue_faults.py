"""Automatic capture survives hostile queue rows. Hook payloads naming paths no transcript can have (5,000
characters, a NUL byte, bytes that are not UTF-8, a folder, a FIFO, a file nobody may read, a symlink loop,
a file that does not exist) go through the real hook entry point (`python -m wwt hook claude-code` with the
payload on stdin) and the real background worker, queued together with real transcripts. Each bad row is
marked failed with its reason and parked after its last attempt — shown by `wwt status` and `wwt doctor`,
queued again by `wwt worker --retry-parked` — while the good transcripts are archived and the worker exits by
itself. Nothing may block (a FIFO opened for reading waits for a writer forever)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES

from wwt.store import QUEUE_MAX_ATTEMPTS

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def fresh_copy(src: str, pattern: str, dest: Path) -> tuple[Path, str]:
    """A real log with every UUID replaced by a fresh one (a session the store has never seen)."""
    text = (REAL_FIXTURES / src).read_text()
    mapping = {old: str(uuid.uuid4()) for old in dict.fromkeys(UUID.findall(text))}
    sid = next(iter(mapping.values()))
    path = dest / pattern.format(sid=sid, short=sid[:8])
    path.write_text(UUID.sub(lambda m: mapping[m.group(0)], text))
    return path, sid


def env_for(home: Path, model_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "WWT_DEBUG"}
    env.update(WWT_HOME=str(home), WWT_MODEL_DIR=str(model_dir), HOME=str(home.parent), NO_COLOR="1",
               COLUMNS="200", WWT_WORKER_DEBOUNCE_S="0.5", WWT_WORKER_MAX_WAIT_S="3", WWT_WORKER_IDLE_S="2")
    return env


def hook(raw: bytes, env: dict[str, str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "wwt", "hook", "claude-code"], input=raw, env=env,
                          capture_output=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout == b"", proc  # a hook never fails the agent


def payload(path: str) -> bytes:
    return json.dumps({"session_id": str(uuid.uuid4()), "transcript_path": path, "hook_event_name": "Stop"}).encode()


def unreadable_file(folder: Path) -> str:
    """A regular file this process may not open: chmod 000, or for root (who may open anything chmod says
    no to) a write-only kernel attribute."""
    if os.geteuid() != 0:
        target = folder / "secret.jsonl"
        target.write_text("{}\n")
        target.chmod(0)
        return str(target)
    for candidate in ("/sys/bus/cpu/uevent", "/proc/sys/vm/compact_memory"):
        try:
            open(candidate, "rb").close()
        except PermissionError:
            return candidate
        except OSError:
            continue
    pytest.skip("no file here that refuses to be read")


def queue_rows(db: Path) -> dict[str, dict]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    conn.row_factory = sqlite3.Row
    try:
        return {r["path"]: dict(r) for r in conn.execute("SELECT * FROM ingest_queue")}
    finally:
        conn.close()


def archived(db: Path, session_id: str) -> bool:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
        try:
            return conn.execute("SELECT COUNT(*) FROM chunks WHERE session_id=?", (session_id,)).fetchone()[0] > 0
        finally:
            conn.close()
    except sqlite3.Error:
        return False


def wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


@pytest.mark.slow
def test_hostile_queue_rows_are_parked_with_their_reason_and_never_stop_capture(tmp_path: Path, model_dir: Path) -> None:
    from wwt.hook import worker_running

    logs, home = tmp_path / "logs", tmp_path / "data"
    logs.mkdir()
    env = env_for(home, model_dir)
    folder = logs / "a folder.jsonl"
    folder.mkdir()
    fresh_copy("claude-code/agentlogs__crud.jsonl", "{sid}.jsonl", folder)  # a folder must not be walked
    fifo = logs / "fifo.jsonl"
    os.mkfifo(fifo)
    (logs / "loop-a.jsonl").symlink_to(logs / "loop-b.jsonl")
    (logs / "loop-b.jsonl").symlink_to(logs / "loop-a.jsonl")
    later = logs / "written-later.jsonl"
    hostile = {
        "/" + "x" * 5000 + ".jsonl": "File name too long",
        str(logs / "nul\x00byte.jsonl"): "NUL byte",
        str(folder): "folder",
        str(fifo): "FIFO",
        unreadable_file(logs): "Permission denied",
        str(logs / "loop-a.jsonl"): "symbolic links",
    }
    for path in hostile:
        hook(payload(path), env)
    hook(payload(str(later)), env)  # a transcript never written (yet): nothing to archive, and no failure
    # bytes that are not UTF-8: raw in the payload, and as a JSON escape of a lone surrogate
    hook(b'{"transcript_path": "/tmp/\xff\xfe-not-utf8.jsonl", "session_id": "x"}', env)
    hook(b'{"transcript_path": "/tmp/\\udcff-lone-surrogate.jsonl", "session_id": "y"}', env)
    good = [fresh_copy("claude-code/agentlogs__crud.jsonl", "{sid}.jsonl", logs),
            fresh_copy("gemini-cli/VibeCodingTracker__gemini.jsonl", "session-2026-04-23T12-52-{short}.jsonl", logs)]
    for path, _sid in good:
        hook(payload(str(path)), env)

    db = home / "wwt.sqlite3"
    log = home / "ingest.log"
    try:
        assert wait_for(lambda: all(archived(db, sid) for _, sid in good), 240), log.read_text()[-1500:][:1500]
        assert wait_for(lambda: not worker_running(home), 60), "the worker did not exit when idle"
    finally:
        if worker_running(home):  # a blocked worker must not outlive the test
            os.kill(int((home / "worker.spawn").read_text().split()[0]), 9)
    rows = queue_rows(db)
    assert set(rows) == set(hostile), sorted(p[:80] for p in rows)
    for path, reason in hostile.items():
        row = rows[path]
        assert row["attempts"] == QUEUE_MAX_ATTEMPTS and reason in (row["error"] or ""), (path[:80], row)
    assert not any(archived(db, sid) for sid in _ids_under(folder)), "the folder was ingested"
    assert "worker crashed" not in log.read_text()

    status = subprocess.run([sys.executable, "-m", "wwt", "status"], env=env, capture_output=True, text=True,
                            timeout=120)
    assert status.returncode == 0, status.stderr
    assert f"given up after {QUEUE_MAX_ATTEMPTS} failed attempts: {len(hostile)} queued file(s)" in status.stdout
    doctor = subprocess.run([sys.executable, "-m", "wwt", "doctor"], env=env, capture_output=True, text=True,
                            timeout=120)
    assert "gave up on" in doctor.stdout and "wwt worker --retry-parked" in doctor.stdout, doctor.stdout
    assert max(len(line) for line in doctor.stdout.splitlines()) < 600  # the 5,000-char path is shortened

    assert "not there" in log.read_text()  # the missing transcript was dropped, not parked

    # the missing transcript appears: the agent's next hook queues it again and it is archived
    written, written_sid = fresh_copy("codex-cli/agentlogs__crud.jsonl", "rollout-{sid}.jsonl", logs)
    written.rename(later)
    hook(payload(str(later)), env)
    assert wait_for(lambda: archived(db, written_sid), 240), log.read_text()[-1500:]
    assert wait_for(lambda: not worker_running(home), 60), "the worker did not exit when idle"
    retry = subprocess.run([sys.executable, "-m", "wwt", "worker", "--retry-parked"], env=env,
                           capture_output=True, text=True, timeout=300)
    assert retry.returncode == 0, retry.stderr
    assert f"queued again: {len(hostile)} file(s)" in retry.stdout
    rows = queue_rows(db)
    assert set(rows) == set(hostile)
    assert all(row["error"] for row in rows.values())


def _ids_under(folder: Path) -> list[str]:
    return [UUID.search(p.name).group(0) for p in folder.iterdir() if UUID.search(p.name)]
