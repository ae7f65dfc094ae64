"""A hook while the engine is stopped (SIGSTOP, a debugger, a laptop's frozen process): the agent's transcript
is archived anyway, by a process of its own, instead of waiting until the engine runs again (issue 24)."""

from __future__ import annotations

import os
import shutil
import signal

from _shared import REAL_FIXTURES
from engine_helpers import alive, engine_pids
from test_engine import SPOTTER, _hook, _ingest, _stats, engine_env, runtime, wait_for, wwt  # noqa: F401

CLAUDE = REAL_FIXTURES / "claude-code"


def test_a_hook_while_the_engine_is_stopped_archives_the_transcript_anyway(tmp_path, runtime, model_dir):  # noqa: F811
    home = tmp_path / "data"
    _ingest(home, model_dir, CLAUDE / "agentlogs__crud.jsonl")
    env = engine_env(home, runtime, model_dir)
    assert wwt("search", "--all", "JOKE.md", env=env).returncode == 0
    [pid] = [p for p in engine_pids(runtime) if alive(p)]
    os.kill(pid, signal.SIGSTOP)
    try:
        transcript = tmp_path / f"{SPOTTER}.jsonl"
        shutil.copy(CLAUDE / "spotter__short.jsonl", transcript)
        assert _hook(env, transcript, SPOTTER) < 5
        log = home / "ingest.log"
        assert wait_for(lambda: "took over" in log.read_text(), 60, 0.3), log.read_text()  # logged after archiving
        assert _stats(home)[0] == 2
    finally:
        os.kill(pid, signal.SIGCONT)
    found = wwt("search", "--all", "mix phx.server", env=env)
    assert SPOTTER in found.stdout, found.stdout + found.stderr
