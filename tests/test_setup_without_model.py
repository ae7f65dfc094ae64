"""A newcomer's first run with no reachable model (issue 25): `wwt setup` used to wire the agents, then exit 1
after its download attempt without archiving anything. It must archive and index by words, say one line about
the model, exit 0 — and searches answer by words with the "words only" notice."""

from __future__ import annotations

import os
import subprocess
import sys

from _shared import REAL_FIXTURES


def test_setup_without_a_model_archives_by_words_and_search_says_so(tmp_path):
    home = tmp_path / "home"
    logs = home / ".claude" / "projects" / "-srv-app"
    logs.mkdir(parents=True)
    (logs / "crud.jsonl").write_bytes((REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl").read_bytes())
    empty = tmp_path / "no-model"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("WWT_HOME", "WWT_DEBUG")}
    env.update(HOME=str(home), WWT_MODEL_DIR=str(empty), WWT_ENGINE="off", HF_HUB_OFFLINE="1", NO_COLOR="1")
    setup = subprocess.run([sys.executable, "-m", "wwt", "setup"], env=env, capture_output=True, text=True,
                           timeout=300, cwd=str(tmp_path))
    assert setup.returncode == 0, setup.stdout[-1500:] + setup.stderr[-1500:]
    assert "model not available" in setup.stdout and "by words" in setup.stdout
    assert "messages: +24" in setup.stdout
    search = subprocess.run([sys.executable, "-m", "wwt", "search", "--all", "joke file"], env=env,
                            capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert search.returncode == 0 and "JOKE.md" in search.stdout, search.stderr
    assert "words only" in search.stderr
