"""A newcomer's first run with no reachable model (issue 25): `wwt setup` used to wire the agents, then exit 1
after its download attempt without archiving anything. It must archive and index by words, say one line about
the model, exit 0 — and searches answer by words with the "words only" notice."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from _shared import REAL_FIXTURES


@pytest.mark.parametrize("engine", ["off", "on"])
def test_setup_without_a_model_archives_by_words_and_search_says_so(tmp_path, engine):
    home = tmp_path / "home"
    logs = home / ".claude" / "projects" / "-srv-app"
    logs.mkdir(parents=True)
    (logs / "crud.jsonl").write_bytes((REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl").read_bytes())
    empty = tmp_path / "no-model"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("WWT_HOME", "WWT_DEBUG")}
    env.update(HOME=str(home), WWT_MODEL_DIR=str(empty), WWT_ENGINE=engine, HF_HUB_OFFLINE="1", NO_COLOR="1",
               WWT_ENGINE_IDLE_S="60")
    setup = subprocess.run([sys.executable, "-m", "wwt", "setup"], env=env, capture_output=True, text=True,
                           timeout=300, cwd=str(tmp_path))
    assert setup.returncode == 0, setup.stdout[-1500:] + setup.stderr[-1500:]
    [said] = [line for line in setup.stdout.splitlines() if "model not available" in line]  # one line
    assert "by words" in said and str(empty) in said
    assert "messages: +24" in setup.stdout
    try:
        for _ in range(2):  # engine on: the first search starts it, the second is answered by it
            search = subprocess.run([sys.executable, "-m", "wwt", "search", "--all", "joke file"], env=env,
                                    capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
            assert search.returncode == 0 and "JOKE.md" in search.stdout, search.stderr
            assert "words only" in search.stderr
    finally:
        if engine == "on":
            subprocess.run([sys.executable, "-m", "wwt", "engine", "stop"], env=env, capture_output=True, timeout=60)
