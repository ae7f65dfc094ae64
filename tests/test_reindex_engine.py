"""`wwt reindex` with an engine running (issue 25): the engine has to let go of the indexes, but the next search
must not be a cold one — an engine comes back, warming up on the rebuilt indexes."""

from __future__ import annotations

from _shared import REAL_FIXTURES
from engine_helpers import alive, engine_pids
from test_engine import _ingest, engine_env, runtime, wait_for, wwt  # noqa: F401


def test_reindex_leaves_an_engine_running_for_the_next_search(tmp_path, runtime, model_dir):  # noqa: F811
    home = tmp_path / "data"
    _ingest(home, model_dir, REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl")
    env = engine_env(home, runtime, model_dir)
    assert wwt("search", "--all", "JOKE.md", env=env).returncode == 0
    [before] = [p for p in engine_pids(runtime) if alive(p)]
    result = wwt("reindex", env=env)
    assert result.returncode == 0, result.stderr
    assert not alive(before)  # it let go of the indexes
    assert wait_for(lambda: any(alive(p) for p in engine_pids(runtime)), 30, 0.2)
    found = wwt("search", "--all", "JOKE.md", env=env)
    assert "JOKE" in found.stdout
