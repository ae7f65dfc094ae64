"""The newer agents end to end, as a user meets them: a fake HOME holding Qwen Code, Copilot CLI, OpenCode,
Cursor (CLI transcripts and the editor's database), Cline and Roo Code logs in their default folders and a repository with an Aider history; real `wwt ingest` (default folders, then the
repository by path), real model and indexes; `wwt search` finds a session of each by a phrase from it, with the
right agent and resume line, and `wwt status` lists every agent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIX = Path(__file__).parent / "fixtures"
QWEN_ID = "7b1e0c52-9d3a-4f61-8a2e-5c4d3b2a1f00"
COPILOT_ID = "4f2a9c1e-8b7d-4e60-9a35-d1c2b3a4e5f6"
COPILOT_OLD_ID = "7d3e2f10-1c4b-4a59-8e6d-0f9a8b7c6d5e"
OPENCODE_ID = "ses_4a1b2c3d4e5fAbCdEfGhIjKl"
CURSOR_CLI_ID = "0c9e5a77-2b1d-4f3e-8a6c-7d5e4f3a2b1c"
CURSOR_CHAT_ID = "7e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b"
CLINE_RUN_ID = "1786104000000_q7Rk2"  # a Cline CLI session in ~/.cline/data/sessions
AGENT_ENV = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_RUNTIME_DIR", "COPILOT_HOME",
             "XDG_DATA_HOME", "XDG_CONFIG_HOME", "WWT_DEBUG", "CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR")


def wwt(*args: str, home: Path, model_dir: Path, columns: int = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in AGENT_ENV}
    env.update(HOME=str(home), WWT_HOME=str(home / "wwt-data"), WWT_MODEL_DIR=str(model_dir), COLUMNS=str(columns),
               NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "wwt", *args], capture_output=True, text=True, env=env,
                          cwd=str(home), timeout=600)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, model_dir: Path) -> Path:
    home = tmp_path_factory.mktemp("home")
    shutil.copytree(FIX / "qwen-code" / "projects", home / ".qwen" / "projects")
    shutil.copytree(FIX / "copilot-cli", home / ".copilot")
    (home / ".local" / "share" / "opencode").mkdir(parents=True)
    shutil.copy(FIX / "opencode" / "db" / "opencode.db", home / ".local" / "share" / "opencode" / "opencode.db")
    shutil.copytree(FIX / "cursor" / "home" / ".cursor", home / ".cursor")
    shutil.copytree(FIX / "cursor" / "User", home / ".config" / "Cursor" / "User")
    storage = home / ".config" / "Code" / "User" / "globalStorage"
    shutil.copytree(FIX / "cline" / "saoudrizwan.claude-dev", storage / "saoudrizwan.claude-dev")
    shutil.copytree(FIX / "cline" / "rooveterinaryinc.roo-cline", storage / "rooveterinaryinc.roo-cline")
    shutil.copytree(FIX / "cline" / "cline-data" / "sessions", home / ".cline" / "data" / "sessions")  # the CLI's
    repo = home / "src" / "quillpad"
    repo.mkdir(parents=True)
    shutil.copy(FIX / "aider" / "quillpad" / ".aider.chat.history.md", repo / ".aider.chat.history.md")
    first = wwt("ingest", home=home, model_dir=model_dir)  # the default folders
    assert first.returncode == 0, first.stderr[-1000:]
    second = wwt("ingest", str(repo), home=home, model_dir=model_dir)  # Aider has no central folder
    assert second.returncode == 0, second.stderr[-1000:]
    return home


def top(home: Path, model_dir: Path, source: str, query: str) -> dict:
    result = wwt("search", "--all", "--source", source, "--json", query, home=home, model_dir=model_dir)
    assert result.returncode == 0, result.stderr[-1000:]
    results = json.loads(result.stdout)["results"]
    assert results, f"nothing found for {query!r} in {source}"
    assert all(r["platform"] for r in results)
    return results[0]


def test_qwen_code_session_is_found_with_its_resume_line(home: Path, model_dir: Path) -> None:
    hit = top(home, model_dir, "qwen", "Decimal ROUND_HALF_UP for refund half-cent rounding")
    assert hit["session_id"] == QWEN_ID and hit["platform"] == "qwen-code" and hit["project"] == "ledger"
    assert hit["resume_line"] == f"cd /home/mina/src/ledger && qwen --resume {QWEN_ID}"


def test_copilot_cli_sessions_are_found_with_their_resume_line(home: Path, model_dir: Path) -> None:
    hit = top(home, model_dir, "copilot-cli", "stop webhook retries on 410 Gone")
    assert hit["session_id"] == COPILOT_ID and hit["platform"] == "copilot-cli" and hit["project"] == "tide-api"
    assert hit["resume_line"] == f"copilot --resume {COPILOT_ID}"
    old = top(home, model_dir, "copilot", "nightly backup cron skipping Sundays")
    assert old["session_id"] == COPILOT_OLD_ID


def test_opencode_session_is_found_with_its_resume_line(home: Path, model_dir: Path) -> None:
    hit = top(home, model_dir, "opencode", "flaky orbit sync test stale epoch")
    assert hit["session_id"] == OPENCODE_ID and hit["platform"] == "opencode" and hit["project"] == "orbit"
    assert hit["resume_line"] == f"cd /home/ana/code/orbit && opencode --session {OPENCODE_ID}"


def test_aider_run_is_found_with_its_resume_line(home: Path, model_dir: Path) -> None:
    hit = top(home, model_dir, "aider", "PDF export drops footnotes after the first page")
    repo = home / "src" / "quillpad"
    assert hit["session_id"].startswith("aider-20260314T090511-") and hit["platform"] == "aider"
    assert hit["project"] == "quillpad"
    assert hit["resume_line"] == f"cd {repo} && aider --restore-chat-history"


def test_cursor_cli_and_editor_chats_are_found(home: Path, model_dir: Path) -> None:
    hit = top(home, model_dir, "cursor", "daemon leaks a file descriptor per reconnect")
    assert hit["session_id"] == CURSOR_CLI_ID and hit["platform"] == "cursor"
    assert hit["resume_line"] == f"cursor-agent --resume {CURSOR_CLI_ID}"
    chat = top(home, model_dir, "cursor", "retry budget with jitter for uploads after a 503")
    assert chat["session_id"] == CURSOR_CHAT_ID and chat["project"] == "orbit"


def test_cline_and_roo_code_tasks_are_found_without_a_resume_command(home: Path, model_dir: Path) -> None:
    hit = top(home, model_dir, "cline", "settings page shows stale plan names after an upgrade")
    assert hit["session_id"] == "1767950000000" and hit["platform"] == "cline" and hit["project"] == "acme-portal"
    assert hit["resume"] is None and hit["resume_line"] is None  # reopened from the extension, not a shell
    roo = top(home, model_dir, "roo", "invoice cron to BullMQ repeatable jobs")
    assert roo["session_id"] == "1767960000000" and roo["platform"] == "roo-code"


def test_a_cline_cli_session_is_found_with_its_resume_line(home: Path, model_dir: Path) -> None:
    hit = top(home, model_dir, "cline", "roll 29 February forward to 1 March when the year is not a leap year")
    assert hit["session_id"] == CLINE_RUN_ID and hit["platform"] == "cline" and hit["project"] == "tally-cli"
    assert hit["resume_line"] == f"cd /home/rosa/work/tally-cli/packages/core && cline --id {CLINE_RUN_ID}"


def test_status_lists_every_new_agent(home: Path, model_dir: Path) -> None:
    result = wwt("status", home=home, model_dir=model_dir)
    assert result.returncode == 0, result.stderr[-500:]
    for name in ("Qwen Code", "Copilot CLI", "OpenCode", "Aider", "Cursor", "Cline", "Roo Code"):
        assert name in result.stdout


def test_a_second_ingest_reads_nothing_again(home: Path, model_dir: Path) -> None:
    again = wwt("ingest", "--json", home=home, model_dir=model_dir)
    assert again.returncode == 0, again.stderr[-500:]
    summary = json.loads(again.stdout)
    assert summary["files_parsed"] == 0 and summary["messages_added"] == 0


def test_doctor_names_where_each_agents_logs_were_found(home: Path, model_dir: Path) -> None:
    result = wwt("doctor", home=home, model_dir=model_dir, columns=400)  # long temp paths stay on one line
    for name, where in (("Qwen Code", ".qwen/projects"), ("Copilot CLI", ".copilot/session-state"),
                        ("OpenCode", ".local/share/opencode"), ("Cursor", ".cursor/projects"),
                        ("Cline", "saoudrizwan.claude-dev"), ("Roo Code", "rooveterinaryinc.roo-cline")):
        line = next((ln for ln in result.stdout.splitlines() if name in ln and "logs found" in ln), None)
        assert line is not None and where in line, (name, result.stdout[-2000:])
    assert "wwt ingest <repository>" in result.stdout  # Aider: one history per repository


def test_a_repository_named_at_setup_is_read_by_every_later_ingest(tmp_path: Path, model_dir: Path) -> None:
    # Aider keeps its history in each repository: `wwt setup --source` remembers the repository, and a plain
    # `wwt ingest` (what the engine and every re-run do) reads it from then on
    home = tmp_path / "home"
    repo = home / "src" / "quillpad"
    repo.mkdir(parents=True)
    shutil.copy(FIX / "aider" / "quillpad" / ".aider.chat.history.md", repo / ".aider.chat.history.md")
    missing = wwt("setup", "--source", str(home / "nowhere"), "--no-ingest", home=home, model_dir=model_dir)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "nowhere" in missing.stderr
    assert not (home / "wwt-data" / "sources.json").exists()
    setup = wwt("setup", "--source", str(repo), "--no-ingest", home=home, model_dir=model_dir)
    assert setup.returncode == 0, setup.stderr[-1000:]
    assert f"remember   {repo}" in setup.stdout
    again = wwt("setup", "--source", str(repo), "--no-ingest", home=home, model_dir=model_dir)
    assert again.returncode == 0 and "remember" not in again.stdout  # idempotent
    ingest = wwt("ingest", home=home, model_dir=model_dir)
    assert ingest.returncode == 0, ingest.stderr[-1000:]
    hit = top(home, model_dir, "aider", "PDF export drops footnotes after the first page")
    assert hit["platform"] == "aider" and hit["session_id"].startswith("aider-20260314T090511-")
