"""Shared fixtures. Tests never touch the real ~/.wwt: ``wwt_home`` points WWT_HOME at a temp dir."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES

REAL_FIXTURES = REAL_FIXTURES


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
