"""Gemini CLI's folder trust (issue 25): in a folder not trusted, headless `gemini -p` exits with code 55 and
the MCP list shows wwt Disabled; `wwt doctor` says what the user must do. The files are Gemini CLI's own
(docs: `security.folderTrust.enabled` in ~/.gemini/settings.json, choices kept in ~/.gemini/trustedFolders.json
as TRUST_FOLDER / TRUST_PARENT / DO_NOT_TRUST)."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def doctor(home, cwd=None) -> str:
    """``wwt doctor`` run in ``cwd`` (default: a project folder under the home)."""
    cwd = cwd or home / "work" / "app"
    cwd.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("WWT_HOME", "GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_CLI_TRUSTED_FOLDERS_PATH")}
    env.update(HOME=str(home), WWT_HOME=str(home / ".wwt"), WWT_ENGINE="off", NO_COLOR="1", COLUMNS="400")
    return subprocess.run([sys.executable, "-m", "wwt", "doctor"], env=env, capture_output=True, text=True,
                          timeout=120, cwd=str(cwd)).stdout


def test_doctor_says_to_trust_a_folder_when_gemini_trusts_none(tmp_path):
    gemini = tmp_path / ".gemini"
    gemini.mkdir()
    (gemini / "settings.json").write_text(json.dumps({"security": {"folderTrust": {"enabled": True}}}))
    out = doctor(tmp_path)
    assert "no trusted folder yet" in out and "gemini" in out.lower(), out
    (gemini / "trustedFolders.json").write_text(json.dumps({str(tmp_path / "work" / "x"): "TRUST_PARENT"}))
    assert "no trusted folder yet" not in doctor(tmp_path)


def test_doctor_judges_the_folder_it_runs_in_with_geminis_rules(tmp_path):
    """Gemini CLI 0.61's rules: a TRUST_FOLDER entry covers the folder and everything under it, TRUST_PARENT the
    entry's parent; of the entries that apply, the longest path wins (a DO_NOT_TRUST deeper down overrides)."""
    gemini = tmp_path / ".gemini"
    gemini.mkdir()
    project = tmp_path / "work" / "app"
    elsewhere = tmp_path / "other"
    trusted = gemini / "trustedFolders.json"
    trusted.write_text(json.dumps({str(elsewhere): "TRUST_FOLDER"}))
    out = doctor(tmp_path)  # trust on by default in Gemini CLI; this project is not covered
    line = next(ln for ln in out.splitlines() if "folder trust" in ln)
    assert str(project) in line and "Disabled" in line and "exit 55" in line, out
    fix = out.splitlines()[out.splitlines().index(line) + 1]
    assert f'"{project}": "TRUST_FOLDER"' in fix and str(trusted) in fix and "--skip-trust" in fix, fix

    trusted.write_text(json.dumps({str(tmp_path / "work"): "TRUST_FOLDER"}))  # a parent folder's entry
    out = doctor(tmp_path)
    assert f"folder trust: {project} is trusted" in out and "Disabled" not in out, out

    trusted.write_text(json.dumps({str(tmp_path / "work"): "TRUST_FOLDER", str(project): "DO_NOT_TRUST"}))
    out = doctor(tmp_path)
    assert "you chose not to trust" in out and str(project) in out, out

    trusted.write_text(json.dumps({str(project / "README.md"): "TRUST_PARENT"}))
    assert "is trusted" in doctor(tmp_path)


def test_gemini_trusted_folders_path_and_trust_workspace_env_are_honoured(tmp_path):
    gemini = tmp_path / ".gemini"
    gemini.mkdir()
    elsewhere = tmp_path / "trust.json"
    elsewhere.write_text(json.dumps({str(tmp_path / "work"): "TRUST_FOLDER"}))
    project = tmp_path / "work" / "app"
    project.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k != "WWT_HOME"}
    env.update(HOME=str(tmp_path), WWT_HOME=str(tmp_path / ".wwt"), WWT_ENGINE="off", NO_COLOR="1",
               GEMINI_CLI_TRUSTED_FOLDERS_PATH=str(elsewhere))
    out = subprocess.run([sys.executable, "-m", "wwt", "doctor"], env=env, capture_output=True, text=True,
                         timeout=120, cwd=str(project)).stdout
    assert "is trusted" in out, out
    env.pop("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
    env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
    out = subprocess.run([sys.executable, "-m", "wwt", "doctor"], env=env, capture_output=True, text=True,
                         timeout=120, cwd=str(project)).stdout
    assert "folder trust" not in out, out


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


def test_doctor_tells_qwen_users_how_to_reach_wwts_tools_behind_tool_search(tmp_path):
    """Qwen Code 0.24's settings docs: `tools.toolSearch.enabled` (default true) puts deferred tools — MCP
    tools among them — behind the ToolSearch + ToolCall bridge; `tools.toolSearch.threshold` > 0 preloads them."""
    qwen = tmp_path / ".qwen"
    qwen.mkdir()
    server = {"command": sys.executable, "args": ["-m", "wwt", "mcp"]}
    (qwen / "settings.json").write_text(json.dumps({"mcpServers": {"wwt": server}}))
    out = doctor(tmp_path)
    assert "tool_search" in out and "tools.toolSearch.threshold" in out, out
    (qwen / "settings.json").write_text(json.dumps({"mcpServers": {"wwt": server},
                                                    "tools": {"toolSearch": {"threshold": 10}}}))
    assert "tool_search" not in doctor(tmp_path)
