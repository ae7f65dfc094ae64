"""Shared fixtures. Tests never touch the real ~/.wwt: ``wwt_home`` points WWT_HOME at a temp dir."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES

REAL_FIXTURES = REAL_FIXTURES

# The resident engine (wwt/engine/): off for the suite unless WWT_TEST_ENGINE=1, which runs every CLI/MCP
# test through engines in a private runtime folder with a short idle exit. Engine tests turn it on themselves
# (tests/test_engine.py) and stop what they started; either way no engine outlives the session.
if os.environ.get("WWT_TEST_ENGINE") == "1":
    import tempfile

    os.environ["WWT_ENGINE"] = "on"
    os.environ["WWT_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="wwt-rt-")
    os.environ.setdefault("WWT_ENGINE_IDLE_S", "20")
else:
    os.environ["WWT_ENGINE"] = "off"


@pytest.fixture(scope="session", autouse=True)
def _no_engine_outlives_the_suite():
    yield
    runtime = os.environ.get("WWT_RUNTIME_DIR")
    if runtime and Path(runtime).is_dir():
        from engine_helpers import kill_engines_in

        kill_engines_in(Path(runtime))


@pytest.fixture(scope="session")
def model_dir() -> Path:
    """The real ONNX model folder. CI always sets WWT_MODEL_DIR, so a missing one is a failure, not a skip."""
    raw = os.environ.get("WWT_MODEL_DIR")
    if not raw:
        pytest.fail("WWT_MODEL_DIR is not set: point it at a folder with model.onnx + tokenizer.json")
    path = Path(raw)
    if not (path / "model.onnx").is_file() or not (path / "tokenizer.json").is_file():
        pytest.fail(f"WWT_MODEL_DIR={path} lacks model.onnx or tokenizer.json")
    return path


@pytest.fixture
def wwt_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty, private data dir for this test (WWT_HOME)."""
    home = tmp_path / "wwt-home"
    monkeypatch.setenv("WWT_HOME", str(home))
    return home
