"""Gemini CLI's folder trust (issue 25): in a folder not trusted, headless `gemini -p` exits with code 55 and
the MCP list shows wwt Disabled; `wwt doctor` says what the user must do. The files are Gemini CLI's own
(docs: `security.folderTrust.enabled` in ~/.gemini/settings.json, choices kept in ~/.gemini/trustedFolders.json
as TRUST_FOLDER / TRUST_PARENT / DO_NOT_TRUST)."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def doctor(home) -> str:
    env = {k: v for k, v in os.environ.items() if k != "WWT_HOME"}
    env.update(HOME=str(home), WWT_HOME=str(home / ".wwt"), WWT_ENGINE="off", NO_COLOR="1", COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "wwt", "doctor"], env=env, capture_output=True, text=True,
                          timeout=120).stdout


def test_doctor_says_to_trust_a_folder_when_gemini_trusts_none(tmp_path):
    gemini = tmp_path / ".gemini"
    gemini.mkdir()
    (gemini / "settings.json").write_text(json.dumps({"security": {"folderTrust": {"enabled": True}}}))
    out = doctor(tmp_path)
    assert "no trusted folder yet" in out and "gemini" in out.lower(), out
    (gemini / "trustedFolders.json").write_text(json.dumps({str(tmp_path / "src"): "TRUST_PARENT"}))
    assert "no trusted folder yet" not in doctor(tmp_path)


def test_doctor_is_silent_when_folder_trust_is_off(tmp_path):
    gemini = tmp_path / ".gemini"
    gemini.mkdir()
    (gemini / "settings.json").write_text(json.dumps({"security": {"folderTrust": {"enabled": False}}}))
    assert "no trusted folder yet" not in doctor(tmp_path)


def test_qwen_code_trusts_every_folder_unless_trust_is_switched_on(tmp_path):
    qwen = tmp_path / ".qwen"
    qwen.mkdir()
    (qwen / "settings.json").write_text(json.dumps({"model": {"name": "qwen3-coder-plus"}}))
    assert "no trusted folder yet" not in doctor(tmp_path)
    (qwen / "settings.json").write_text(json.dumps({"security": {"folderTrust": {"enabled": True}}}))
    assert "no trusted folder yet" in doctor(tmp_path)
