"""Every way a one-shot command ends — results, nothing in scope, a user error — ends the process cleanly:
exit code as documented, never an abort from a native thread (onnxruntime loading the model on a side
thread) still running while the interpreter shuts down, and no helper process (the Kiwi tokenizer started for
a Korean query) left behind. Real CLI as a subprocess, real model, real agent logs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
LOGS = [
    ("claude-code/agentlogs__crud.jsonl", "{sid}.jsonl"),
    ("gemini-cli/VibeCodingTracker__gemini.jsonl", "session-2026-04-23T12-52-{short}.jsonl"),
]
# Measured before the fix: 6 of 25 runs of the nothing-in-scope search died (134 "terminate called without an
# active exception", once 139). 30 clean runs in a row would happen by chance with probability < 0.001.
RUNS = 30


def _env(home: Path, model_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "WWT_DEBUG"}
    env.update(WWT_HOME=str(home), WWT_MODEL_DIR=str(model_dir), HOME=str(home.parent), NO_COLOR="1", **extra)
    return env


def _wwt(*args: str, env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wwt", *args], capture_output=True, text=True, env=env,
                          cwd=str(cwd) if cwd else None, stdin=subprocess.DEVNULL, timeout=300)


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory, model_dir: Path) -> Path:
    """Two real logs (fresh ids), dated months ago: nothing in them is from the last hour."""
    root = tmp_path_factory.mktemp("exit-paths")
    logs = root / "logs"
    logs.mkdir()
    for src, pattern in LOGS:
        text = (REAL_FIXTURES / src).read_text()
        mapping = {old: str(uuid.uuid4()) for old in dict.fromkeys(UUID.findall(text))}
        text = UUID.sub(lambda m, ids=mapping: ids[m.group(0)], text)
        sid = next(iter(mapping.values()))
        (logs / pattern.format(sid=sid, short=sid[:8])).write_text(text)
    home = root / "data"
    proc = _wwt("ingest", str(logs), env=_env(home, model_dir))
    assert proc.returncode == 0, proc.stderr
    return home


@pytest.mark.slow
def test_a_search_with_nothing_in_scope_exits_0_every_time(archive: Path, model_dir: Path) -> None:
    env = _env(archive, model_dir)
    codes = []
    for _ in range(RUNS):
        proc = _wwt("search", "error handling", "--all", "--since", "1h", "--json", env=env)
        codes.append(proc.returncode)
        if proc.returncode == 0:
            assert json.loads(proc.stdout)["results"] == []
    assert codes == [0] * RUNS, f"{sum(c != 0 for c in codes)} of {RUNS} runs died: {codes}"


def _processes_marked(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if f"WWT_TEST_MARK={marker}".encode() in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc to find leftover processes")
def test_a_korean_search_that_ends_in_an_error_leaves_no_tokenizer_process_behind(
    archive: Path, model_dir: Path, tmp_path: Path
) -> None:
    marker = uuid.uuid4().hex
    elsewhere = tmp_path / "not-an-archived-project"
    elsewhere.mkdir()
    proc = _wwt("search", "데이터베이스 마이그레이션 오류", env=_env(archive, model_dir, WWT_TEST_MARK=marker),
                cwd=elsewhere)
    assert proc.returncode == 1 and "no sessions for project" in proc.stderr, proc.stderr
    leftover = _processes_marked(marker)
    for pid in leftover:  # do not leave them running for the next test either
        os.kill(pid, 9)
    assert leftover == [], "the Kiwi helper outlived the command"
