"""Where the engine listens follows from the user and the data dir alone, and another local user cannot take
that away or hand us their data dir (issues 24, 25)."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

from wwt.engine import ipc

AS_ROOT = os.geteuid() == 0
NOBODY = pwd.getpwnam("nobody").pw_uid if AS_ROOT else None
needs_root = pytest.mark.skipif(not AS_ROOT, reason="simulating another local user needs chown (run as root)")


def test_the_engine_address_ignores_the_agents_environment(tmp_path, monkeypatch):
    """Codex starts MCP servers with a minimal environment: no XDG_RUNTIME_DIR, no TMPDIR."""
    monkeypatch.delenv("WWT_RUNTIME_DIR", raising=False)
    home = str(tmp_path / "data")
    xdg = tmp_path / "xdg"
    xdg.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(xdg))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    with_env = ipc.Location(home).socket_path
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    monkeypatch.delenv("TMPDIR")
    assert ipc.Location(home).socket_path == with_env


@needs_root
def test_a_runtime_folder_another_user_made_is_passed_over_for_one_in_the_data_dir(tmp_path, monkeypatch):
    monkeypatch.delenv("WWT_RUNTIME_DIR", raising=False)
    planted = tmp_path / "wwt-planted"
    planted.mkdir(mode=0o777)
    os.chown(planted, NOBODY, NOBODY)
    monkeypatch.setattr(ipc, "shared_runtime_dir", lambda: str(planted))
    home = tmp_path / "data"
    home.mkdir(mode=0o700)
    loc = ipc.Location(str(home)).prepare()
    assert loc.dir_path == str(home / "run")
    assert "another user" in (loc.passed_over or "")
    assert (os.stat(loc.dir_path).st_mode & 0o777) == 0o700


@needs_root
def test_a_symlink_planted_as_the_runtime_folder_is_passed_over(tmp_path, monkeypatch):
    monkeypatch.delenv("WWT_RUNTIME_DIR", raising=False)
    target = tmp_path / "elsewhere"
    target.mkdir()
    link = tmp_path / "wwt-link"
    link.symlink_to(target)
    monkeypatch.setattr(ipc, "shared_runtime_dir", lambda: str(link))
    home = tmp_path / "data"
    home.mkdir(mode=0o700)
    assert ipc.Location(str(home)).dir_path == str(home / "run")


def run_wwt_raw(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "WWT_DEBUG"}
    env.update(WWT_HOME=str(home), HOME=str(home.parent), WWT_ENGINE="on", WWT_RUNTIME_DIR=str(home.parent / "rt"))
    return subprocess.run([sys.executable, "-m", "wwt", *args], capture_output=True, text=True, env=env,
                          cwd=str(home.parent), timeout=120)


@needs_root
@pytest.mark.parametrize("how", ["owned by another user", "writable by anyone"])
def test_a_data_dir_that_is_not_ours_alone_is_refused_in_one_line(tmp_path, how):
    home = tmp_path / "shared-home"
    home.mkdir()
    if how == "owned by another user":
        os.chown(home, NOBODY, NOBODY)
        home.chmod(0o777)
    else:
        home.chmod(0o777)
    for args in (["status"], ["search", "anything"], ["ingest", str(tmp_path)]):
        result = run_wwt_raw(args, home)
        assert result.returncode != 0, (args, result.stdout)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and "data dir" in lines[0] and "Traceback" not in result.stderr, result.stderr
    assert not (home / "wwt.sqlite3").exists()


@pytest.mark.parametrize("damage", ["vector", "lexical"])
def test_doctor_finds_a_truncated_index_file(tmp_path, model_dir, damage):
    from _shared import REAL_FIXTURES
    from test_cli import run_wwt

    logs = tmp_path / "logs"
    logs.mkdir()
    source = REAL_FIXTURES / "claude-code" / "spotter__short.jsonl"
    (logs / source.name).write_bytes(source.read_bytes())
    home = tmp_path / "wwt-home"
    assert run_wwt("ingest", str(logs), home=home, model_dir=model_dir).returncode == 0
    healthy = run_wwt("doctor", home=home, model_dir=model_dir)
    assert "indexes" in healthy.stdout and "match the archive" in healthy.stdout, healthy.stdout
    folder = home / "index" / ("vectors" if damage == "vector" else "lexical")
    files = [p for p in folder.rglob("*") if p.is_file() and p.stat().st_size > 64
             and (p.suffix == ".hnsw" if damage == "vector" else p.suffix in (".idx", ".store", ".term"))]
    assert files, list(folder.rglob("*"))
    for path in files:
        with open(path, "r+b") as fh:
            fh.truncate(path.stat().st_size // 3)
    result = run_wwt("doctor", home=home, model_dir=model_dir)
    assert result.returncode != 0
    assert "reindex" in result.stdout + result.stderr, result.stdout
