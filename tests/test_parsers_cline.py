"""Cline and Roo Code parsers: task folders written after the extensions' ClineMessage list (ui_messages.json,
JSON.stringify'd, the task as the first ``say: text``), expectations by hand; the model-bound copy with
<environment_details> (api_conversation_history.json) is read only when the UI log is missing, and then only
what the extension wrapped as the user's (<task>, <feedback>, <answer>) counts as their words."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from parser_helpers import all_text, counts, run_parser, user_texts

from wwt.models import FLAG_COMPACTION_SUMMARY, FLAG_ERROR, FLAG_SUBAGENT, ParseReport
from wwt.parsers import discover, parser_for
from wwt.parsers.cline import ClineParser
from wwt.parsers.common import JSON_LIST_CHUNK, iter_json_list, read_head
from wwt.parsers.roo_code import RooCodeParser

OWN = Path(__file__).parent / "fixtures" / "cline"
CLINE = OWN / "saoudrizwan.claude-dev" / "tasks" / "1767950000000" / "ui_messages.json"
ROO = OWN / "rooveterinaryinc.roo-cline" / "tasks" / "1767960000000" / "ui_messages.json"


def test_cline_task():
    (session,), report = run_parser(ClineParser(), CLINE)
    assert session.session_id == "1767950000000" and session.platform == "cline"
    assert session.cwd == "/home/dev/acme-portal" and session.project == "acme-portal"
    assert session.title == "the settings page shows stale plan names after an upgrade"
    assert session.started_at == "2026-01-09T09:13:20Z" and session.ended_at == "2026-01-09T09:14:10Z"
    assert counts(session) == {("user", "text"): 2, ("assistant", "thinking"): 1, ("assistant", "text"): 3,
                               ("assistant", "tool_call"): 2, ("user", "tool_result"): 2}
    assert user_texts(session) == ["the settings page shows stale plan names after an upgrade",
                                   "schema number, bump it on every plan change"]
    assert "environment_details" not in all_text(session)
    calls = [m.text for m in session.messages if m.kind == "tool_call"]
    assert calls == ["readFile: src/settings/plansCache.ts", "execute_command: npm test -- plansCache"]
    error = [m for m in session.messages if FLAG_ERROR in m.flags]
    assert len(error) == 1 and "replace_in_file" in error[0].text
    texts = [m.text for m in session.messages if m.role == "assistant" and m.kind == "text"]
    assert "Should the cache key include the app version or a schema number?" in texts
    assert report.bad_lines == 1  # the stray string entry


def test_roo_code_task_and_who_claims_what():
    (session,), _ = run_parser(RooCodeParser(), ROO)
    assert session.platform == "roo-code" and session.project == "billing-worker"
    assert user_texts(session) == ["migrate the invoice cron from node-cron to BullMQ repeatable jobs"]
    assert parser_for(ROO).platform == "roo-code" and parser_for(CLINE).platform == "cline"
    assert not ClineParser().detect(ROO, read_head(ROO)) and not RooCodeParser().detect(CLINE, read_head(CLINE))
    for sidecar in ("api_conversation_history.json", "task_metadata.json"):
        assert parser_for(CLINE.with_name(sidecar)) is None


def test_resume_is_a_whole_parse_and_discovery_follows_the_editor_folders(tmp_path, monkeypatch):
    sessions, report = run_parser(ClineParser(), CLINE, 10)
    assert report.requires_full_reparse and len(sessions[0].messages) == 10
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    storage = tmp_path / "config" / "Code" / "User" / "globalStorage"
    shutil.copytree(OWN / "saoudrizwan.claude-dev", storage / "saoudrizwan.claude-dev")
    shutil.copytree(OWN / "rooveterinaryinc.roo-cline", storage / "rooveterinaryinc.roo-cline")
    found = sorted((p.parent.name, x.platform) for p, x in discover())
    assert found == [("1767950000000", "cline"), ("1767960000000", "roo-code"),
                     ("5e8b2a41-7c3d-4f9e-a1b6-2d4c6e8f0a13", "roo-code")]


def _entries() -> list:
    return json.loads(CLINE.read_text(encoding="utf-8"))


def _task_list(path: Path, copies: int, bad_at: int | None = None, bad: str = "") -> Path:
    """The fixture's entries repeated ``copies`` times at later times, written as Cline writes the list
    (JSON.stringify, one line), with ``bad`` spliced in before copy ``bad_at``."""
    entries, pieces = _entries(), []
    for n in range(copies):
        if n == bad_at:
            pieces.append(bad)
        pieces += [json.dumps(dict(e, ts=e["ts"] + n * 100_000) if isinstance(e, dict) else e) for e in entries]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[" + ",".join(pieces) + "]", encoding="utf-8")
    return path


def test_a_malformed_entry_in_a_list_longer_than_the_read_window_costs_only_itself(tmp_path):
    copies = JSON_LIST_CHUNK // len(CLINE.read_bytes()) * 3  # about three read windows
    clean = _task_list(tmp_path / "clean" / "tasks" / "1767950000000" / "ui_messages.json", copies)
    torn = _task_list(tmp_path / "torn" / "tasks" / "1767950000000" / "ui_messages.json", copies, copies // 2,
                      '{"ts":1767950000000,"type":"say","say":"text","text":}')
    assert torn.stat().st_size > 2 * JSON_LIST_CHUNK
    (whole,), clean_report = run_parser(ClineParser(), clean)
    (kept,), report = run_parser(ClineParser(), torn)
    assert [(m.role, m.kind, m.text, m.timestamp) for m in kept.messages] == [
        (m.role, m.kind, m.text, m.timestamp) for m in whole.messages]
    assert report.bad_lines == clean_report.bad_lines + 1 == copies + 1  # each copy's stray string, and the torn entry
    assert report.lines == clean_report.lines + 1


@pytest.mark.parametrize("window", [1, 2, 3, 7, 64, None])
def test_streamed_entries_equal_a_whole_load_at_any_window_size(tmp_path, window):
    """What ``json.load`` of the whole file gives (today's reader), entry by entry, however the reads cut it."""
    tricky = tmp_path / "tricky.json"
    tricky.write_text('\ufeff[ {"text": "a ] , } [ \\" \\\\", "n": [1, {"x": []}]} , -12.5e3, true, null,'
                      ' "\u00e9\u4e2d\U0001F600", 0 ]\n', encoding="utf-8")
    for path in (CLINE, ROO, tricky):
        report = ParseReport(path=str(path))
        assert list(iter_json_list(path, report, window)) == json.loads(path.read_text(encoding="utf-8-sig"))
        assert (report.bad_lines, report.notes, report.end_offset) == (0, [], path.stat().st_size)


def test_a_list_cut_short_keeps_the_entries_before_the_cut(tmp_path):
    text = CLINE.read_text(encoding="utf-8").rstrip()
    cut = tmp_path / "tasks" / "1767950000000" / "ui_messages.json"
    cut.parent.mkdir(parents=True)
    cut.write_text(text[: text.rindex('{"ts"') + 20], encoding="utf-8")  # the writer stopped inside the last entry
    (session,), report = run_parser(ClineParser(), cut)
    (whole,), _ = run_parser(ClineParser(), CLINE)
    # everything but the last entry (the completion result); the stray string after it was never written
    assert whole.messages[-1].text.startswith("plansCache now keys entries")
    assert [m.text for m in session.messages] == [m.text for m in whole.messages[:-1]]
    assert report.bad_lines == 1 and report.notes == ["JSON list cut short inside an entry"]


def test_the_read_window_holds_about_a_mebibyte_even_when_every_character_takes_four_bytes(tmp_path, monkeypatch):
    """Python keeps a text holding one emoji at 4 bytes per character: a window of N characters costs 4N bytes.
    Over a task log of short entries full of emoji and CJK (what real tasks hold), the window's text must stay
    near 1 MiB in memory — not 4 MiB per read — so reading a 100 MB task stays flat and small."""
    from wwt.parsers import common

    entry = {"ts": 1767950000000, "type": "say", "say": "text", "text": "빌드 통과 🎉 テスト済み ✅ " * 8}
    path = tmp_path / "ui_messages.json"
    path.write_text("[" + ",".join(json.dumps(dict(entry, ts=entry["ts"] + i), ensure_ascii=False)
                                   for i in range(30_000)) + "]", encoding="utf-8")
    longest = max(len(json.dumps(dict(entry, ts=entry["ts"] + i), ensure_ascii=False)) for i in (0, 29_999))
    widest = []
    fill = common._Window.fill

    def measured_fill(self):
        more = fill(self)
        widest.append(len(self.buf))
        return more

    monkeypatch.setattr(common._Window, "fill", measured_fill)
    report = ParseReport(path=str(path))
    assert sum(1 for _ in iter_json_list(path, report)) == 30_000 and report.bad_lines == 0
    assert max(widest) * 4 <= (1 << 20) + 4 * longest


# A task folder holding only the model-bound history. Record shapes after tomjnsn/agentlogs
# fixtures/cline/crud.json (commit 06dffa3a, a genuine api_conversation_history.json of Cline CLI 2.2.0 /
# Cline 3.58.0: <task>, notices, <environment_details> with "# Current Time", "[tool for 'x'] Result:" texts,
# <feedback> after attempt_completion) plus the older one-block <answer> reply; the conversation is our own.
HISTORY = (OWN / "history-only" / "saoudrizwan.claude-dev" / "tasks" / "1767970000000"
           / "api_conversation_history.json")


def test_a_history_without_its_ui_log_is_the_session():
    assert parser_for(HISTORY).platform == "cline"
    (session,), report = run_parser(ClineParser(), HISTORY)
    assert session.session_id == "1767970000000" and session.project == "ledger"
    assert session.cwd == "/home/mina/src/ledger"
    assert user_texts(session) == ["refunds round half-cents the wrong way, find where",
                                   "change it to half-even and run the refund tests", "half-even, fix the test"]
    assert session.title == "refunds round half-cents the wrong way, find where"
    text = all_text(session)
    assert "environment_details" not in text and "task_progress" not in text and "has provided feedback" not in text
    assert session.started_at == "2026-01-09T14:46:40Z" and session.ended_at == "2026-01-09T14:52:10Z"  # UTC+1
    assert counts(session) == {("user", "text"): 3, ("assistant", "thinking"): 1, ("assistant", "text"): 2,
                               ("assistant", "tool_call"): 3, ("user", "tool_result"): 4}
    failed = [m for m in session.messages if FLAG_ERROR in m.flags]
    assert [m.tool_name for m in failed] == ["execute_command"]
    assert report.bad_lines == 0


def test_a_history_beside_its_ui_log_or_under_another_name(tmp_path):
    task = tmp_path / "saoudrizwan.claude-dev" / "tasks" / "1767970000000"
    task.mkdir(parents=True)
    shutil.copy(HISTORY, task / HISTORY.name)
    shutil.copy(CLINE, task / "ui_messages.json")
    assert parser_for(task / HISTORY.name) is None  # the UI log is the session; the history is not read twice
    saved = tmp_path / "refund-task.json"
    shutil.copy(HISTORY, saved)
    (session,), _ = run_parser(ClineParser(), saved)
    assert parser_for(saved).platform == "cline" and session.session_id == "refund-task"
    roo = tmp_path / "rooveterinaryinc.roo-cline" / "tasks" / "1767970000000" / HISTORY.name
    roo.parent.mkdir(parents=True)
    shutil.copy(HISTORY, roo)
    assert parser_for(roo).platform == "roo-code"
    other = tmp_path / "chat.json"  # an Anthropic-style message list that no Cline task opened
    other.write_text('[{"role": "user", "content": [{"type": "text", "text": "hi"}]}]')
    assert parser_for(other) is None


def test_roo_code_task_folder_from_its_history_item(tmp_path):
    """Roo Code writes the task's HistoryItem to ``history_item.json`` (``workspace``: the folder the task ran
    in; RooCodeInc/Roo-Code GlobalFileNames.historyItem, and kenn-io/agentsview's roocode tests read it) while
    its ``api_req_started`` entries carry only token counts. Our own task in that shape:"""
    task = tmp_path / "rooveterinaryinc.roo-cline" / "tasks" / "2f6d9c1e-4b7a-4e3c-9d21-8a5b6c7d8e9f"
    task.mkdir(parents=True)
    (task / "ui_messages.json").write_text(json.dumps([
        {"ts": 1767965000000, "type": "say", "say": "text", "text": "add a dry-run flag to the invoice cron"},
        {"ts": 1767965001000, "type": "say", "say": "api_req_started",
         "text": json.dumps({"apiProtocol": "anthropic", "tokensIn": 1200, "tokensOut": 80, "cost": 0.01})},
        {"ts": 1767965005000, "type": "say", "say": "text", "text": "Added --dry-run; it logs instead of sending."},
    ]), encoding="utf-8")
    (task / "history_item.json").write_text(json.dumps({
        "id": task.name, "number": 3, "ts": 1767965005000, "task": "add a dry-run flag to the invoice cron",
        "tokensIn": 1200, "tokensOut": 80, "totalCost": 0.01, "workspace": "/home/dev/billing-worker",
        "mode": "code"}), encoding="utf-8")
    (session,), _ = run_parser(RooCodeParser(), task / "ui_messages.json")
    assert session.cwd == "/home/dev/billing-worker" and session.project == "billing-worker"
    assert parser_for(task / "history_item.json") is None


def test_mcp_tool_calls_and_subtask_results_are_kept(tmp_path):
    """MCP use is ``ask: use_mcp_server`` (JSON ``{type, serverName, toolName, arguments}``) answered by
    ``say: mcp_server_response``, as in genuine Cline tasks (e.g. Jeehunter/mcp-vscode-server ui_messages.json
    at 9b5eeda8); Roo Code reports a finished subtask to its parent as ``say: subtask_result`` (agentsview's
    roocode tests). Our own task in those shapes:"""
    task = tmp_path / "saoudrizwan.claude-dev" / "tasks" / "1767980000000"
    task.mkdir(parents=True)
    (task / "ui_messages.json").write_text(json.dumps([
        {"ts": 1767980000000, "type": "say", "say": "text", "text": "switch the editor to the dark theme"},
        {"ts": 1767980001000, "type": "ask", "ask": "use_mcp_server", "text": json.dumps(
            {"type": "use_mcp_tool", "serverName": "editor-bridge", "toolName": "set_theme",
             "arguments": "{\"theme\": \"Default Dark Modern\"}"})},
        {"ts": 1767980001500, "type": "say", "say": "mcp_server_request_started", "text": ""},
        {"ts": 1767980002000, "type": "say", "say": "mcp_server_response",
         "text": "Error:\nError: bridge extension is not connected"},
        {"ts": 1767980003000, "type": "say", "say": "subtask_result", "text": "The bridge reconnects after a reload."},
    ]), encoding="utf-8")
    (session,), _ = run_parser(ClineParser(), task / "ui_messages.json")
    call = next(m for m in session.messages if m.kind == "tool_call")
    # the server stays in the name (wwt/own_tools.py: wwt's own calls are told by it)
    assert call.tool_name == "editor-bridge__set_theme" and "Default Dark Modern" in call.text
    results = [(m.tool_name, FLAG_ERROR in m.flags) for m in session.messages if m.kind == "tool_result"]
    assert results == [("editor-bridge__set_theme", True), ("new_task", False)]


@pytest.mark.parametrize("variable", ["CLINE_DATA_DIR", "CLINE_DIR"])
def test_discovery_follows_clines_data_folder_overrides(tmp_path, monkeypatch, variable):
    """Cline keeps its tasks in one data folder shared by the CLI and (since its storage moved out of VS Code)
    the extension: ``$CLINE_DATA_DIR``, else ``$CLINE_DIR/data``, else ``~/.cline/data``
    (cline/cline ``apps/vscode/src/shared/storage/storage-context.ts``, ``resolveDataDirFromEnv``)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLINE_DATA_DIR", raising=False)
    monkeypatch.delenv("CLINE_DIR", raising=False)
    data = tmp_path / "elsewhere" / "data" if variable == "CLINE_DIR" else tmp_path / "cline-data"
    monkeypatch.setenv(variable, str(data.parent if variable == "CLINE_DIR" else data))
    shutil.copytree(CLINE.parent, data / "tasks" / CLINE.parent.name)
    found = [(p.parent.name, x.platform) for p, x in discover()]
    assert found == [("1767950000000", "cline")]


ROO_SUBTASK = OWN / "rooveterinaryinc.roo-cline" / "tasks" / "5e8b2a41-7c3d-4f9e-a1b6-2d4c6e8f0a13" / "ui_messages.json"


def test_a_roo_code_subtask_belongs_to_the_task_that_delegated_it():
    """Roo Code's ``new_task`` opens a child task whose first entry (the ``say: text`` that ``startTask`` writes)
    is the instruction the parent's model wrote, not the user's words; the child's ``history_item.json`` names
    the delegating task in ``parentTaskId`` (RooCodeInc/Roo-Code ``packages/types/src/history.ts``; agentsview's
    roocode parser links the two the same way). The child is the parent's subagent session."""
    (session,), report = run_parser(RooCodeParser(), ROO_SUBTASK)
    assert session.session_id == "5e8b2a41-7c3d-4f9e-a1b6-2d4c6e8f0a13" and session.platform == "roo-code"
    assert session.parent_session_id == "9a7c5e31-0b2d-4f6a-8c1e-3d5f7a9b1c24"
    assert session.cwd == "/home/dev/billing-worker"
    assert session.started_at == "2026-01-09T15:06:40Z" and session.ended_at == "2026-01-09T15:06:52Z"
    assert counts(session) == {("user", "text"): 1, ("assistant", "tool_call"): 2, ("user", "tool_result"): 1,
                               ("assistant", "text"): 1}
    assert all(FLAG_SUBAGENT in m.flags for m in session.messages)  # the delegated instruction included
    (own,), _ = run_parser(RooCodeParser(), ROO)  # a task the user started: no parent, nothing flagged
    assert own.parent_session_id is None and not any(FLAG_SUBAGENT in m.flags for m in own.messages)


TIMED_HISTORY = OWN / "history-only" / "saoudrizwan.claude-dev" / "tasks" / "1767990000000" / "api_conversation_history.json"


def test_a_history_whose_entries_carry_their_own_time_is_timed_by_them():
    """Newer Cline writes each API history entry with ``ts`` (epoch ms, when the message was created) beside
    ``modelInfo``/``metrics`` (cline/cline ``apps/vscode/src/shared/messages/content.ts``,
    ``ClineStorageMessage``): an answer then has its own time, not the prompt's, and the user's entries their
    exact one rather than the environment details' whole second."""
    (session,), _ = run_parser(ClineParser(), TIMED_HISTORY)
    assert [(m.role, m.kind, m.timestamp) for m in session.messages] == [
        ("user", "text", "2026-01-09T20:20:00.500Z"),
        ("assistant", "text", "2026-01-09T20:20:27.250Z"),
        ("assistant", "tool_call", "2026-01-09T20:20:27.250Z"),
        ("user", "tool_result", "2026-01-09T20:20:41Z"),
        ("assistant", "text", "2026-01-09T20:21:03.900Z"),
    ]
    assert session.started_at == "2026-01-09T20:20:00.500Z" and session.ended_at == "2026-01-09T20:21:03.900Z"
    assert session.cwd == "/home/mina/src/site"


def test_a_roo_code_task_kept_in_a_custom_storage_folder_is_roo_codes(tmp_path):
    """Roo Code's ``customStoragePath`` setting moves its ``tasks/<id>/`` folders anywhere (RooCodeInc/Roo-Code
    ``src/utils/storage.ts``, ``getTaskDirectoryPath``), so no ``roo-cline`` folder names them; the
    ``history_item.json`` Roo Code writes in each task folder (Cline writes none) still does."""
    task = tmp_path / "agent-logs" / "tasks" / ROO_SUBTASK.parent.name
    shutil.copytree(ROO_SUBTASK.parent, task)
    assert parser_for(task / "ui_messages.json").platform == "roo-code"
    head = read_head(task / "ui_messages.json")
    claims = [p.platform for p in (ClineParser(), RooCodeParser()) if p.detect(task / "ui_messages.json", head)]
    assert claims == ["roo-code"]
    (session,), _ = run_parser(RooCodeParser(), task / "ui_messages.json")
    assert session.platform == "roo-code" and session.parent_session_id == "9a7c5e31-0b2d-4f6a-8c1e-3d5f7a9b1c24"
    (task / "history_item.json").unlink()  # without it nothing tells the two apart: Cline's, as before
    assert parser_for(task / "ui_messages.json").platform == "cline"


# ------------------------------------------------------------------------------ the SDK runtime's sessions
# Cline's CLI and extension now run on @cline/core, which keeps each session in
# ``<data>/sessions/<id>/<id>.messages.json`` (``{version, updated_at, agent, sessionId, origin, messages}``, each
# message ``{id, role, content, ts}``) beside the manifest ``<id>.json`` (cwd, workspace_root, times, title), a
# subagent's messages in ``<agent id>.messages.json`` in its root's folder (cline/cline sdk/packages/core,
# commit 21cb8d25). The fixture is a plan-mode question answered with tools and a subagent, then an act-mode fix.
SESSIONS = OWN / "cline-data" / "sessions"
RUN_ID = "1786104000000_q7Rk2"
RUN = SESSIONS / RUN_ID / f"{RUN_ID}.messages.json"
SUBAGENT = SESSIONS / RUN_ID / "agent_1786104027000_h2k9dq.messages.json"
FIRST_ID = "cli_1772200000000_m4x8c1q"
FIRST = SESSIONS / FIRST_ID / f"{FIRST_ID}.messages.json"


def test_a_cline_runtime_session():
    (session,), report = run_parser(ClineParser(), RUN)
    assert session.session_id == RUN_ID and session.platform == "cline" and session.parent_session_id is None
    # the manifest: cwd as started, the project its workspace root, the (renamed) title, start and end
    assert session.cwd == "/home/rosa/work/tally-cli/packages/core"
    assert session.project_path == "/home/rosa/work/tally-cli" and session.project == "tally-cli"
    assert session.title == "leap-day due dates in the nightly run"
    assert session.started_at == "2026-08-07T12:00:00Z" and session.ended_at == "2026-08-07T12:08:30Z"
    assert counts(session) == {("user", "text"): 2, ("assistant", "thinking"): 1, ("assistant", "text"): 6,
                               ("assistant", "tool_call"): 4, ("user", "tool_result"): 4}
    # only what was typed inside <user_input>: not the mode notice, the @mentioned file's body, the hook's
    # system-shown note, the resumption prompt or the system prompt
    assert user_texts(session) == [
        "why does parse_due_date fail on 29 February in the nightly run? @packages/core/src/tally/dates.py",
        "go ahead, but keep the public signature unchanged"]
    text = all_text(session)
    for injected in ("user_input", "mode_notice", "switched from plan", "PostToolUse hook", "TASK RESUMPTION",
                     "You are Cline", "day, month = (int(part)"):
        assert injected not in text
    assert report.skipped_messages == 2 and report.bad_lines == 0
    first = session.messages[0]
    assert (first.role, first.timestamp) == ("user", "2026-08-07T12:00:02Z")
    calls = [(m.tool_name, m.timestamp) for m in session.messages if m.kind == "tool_call"]
    assert calls == [("read_files", "2026-08-07T12:00:09Z"), ("run_commands", "2026-08-07T12:00:15Z"),
                     ("spawn_agent", "2026-08-07T12:00:26Z"), ("editor", "2026-08-07T12:03:26Z")]
    results = [m for m in session.messages if m.kind == "tool_result"]
    assert [m.tool_name for m in results] == ["read_files", "run_commands", "spawn_agent", "editor"]
    assert [FLAG_ERROR in m.flags for m in results] == [False, True, False, False]
    assert "day is out of range for month" in results[1].text
    assert "Replaced 1 occurrence." in results[3].text  # the editor's answer, stored as JSON text
    thinking = next(m for m in session.messages if m.kind == "thinking")
    assert thinking.text.startswith("The helper takes the year from today")


def test_a_subagents_messages_are_its_own_session_under_the_root():
    (sub,), _ = run_parser(ClineParser(), SUBAGENT)
    assert sub.session_id == f"{RUN_ID}__agent_1786104027000_h2k9dq" and sub.parent_session_id == RUN_ID
    assert all(FLAG_SUBAGENT in m.flags for m in sub.messages) and len(sub.messages) == 4
    assert sub.project == "tally-cli" and sub.cwd == "/home/rosa/work/tally-cli/packages/core"  # the root's
    assert sub.title.startswith("List every call site of parse_due_date")  # its task, not the root's title
    assert sub.started_at == "2026-08-07T12:00:27.100Z" and sub.ended_at == "2026-08-07T12:01:00Z"


def test_the_first_runtime_releases_files_are_read_too():
    """The first SDK CLI wrote ``{version, updated_at, messages}`` only, with plain-text contents and no ids."""
    (session,), _ = run_parser(ClineParser(), FIRST)
    assert session.session_id == FIRST_ID and session.project == "tally-cli"
    assert [(m.role, m.kind) for m in session.messages] == [("user", "text"), ("assistant", "text")]
    assert user_texts(session) == ["what does the --dry-run flag of tally import print?"]
    assert session.started_at == "2026-02-27T13:46:40Z" and session.ended_at == "2026-02-27T13:47:05Z"


def test_only_cline_claims_the_runtime_files_and_discovery_finds_them(tmp_path, monkeypatch):
    for path in (RUN, SUBAGENT, FIRST):
        assert parser_for(path).platform == "cline"
        assert not RooCodeParser().detect(path, read_head(path))
    for manifest in (SESSIONS / RUN_ID / f"{RUN_ID}.json", SESSIONS / FIRST_ID / f"{FIRST_ID}.json"):
        assert parser_for(manifest) is None  # read beside the messages, never a session of its own
    for var in ("CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    shutil.copytree(SESSIONS, tmp_path / "home" / ".cline" / "data" / "sessions")
    expected = sorted([RUN.name, SUBAGENT.name, FIRST.name])
    assert sorted(p.name for p, x in discover() if x.platform == "cline") == expected
    monkeypatch.setenv("CLINE_SESSION_DATA_DIR", str(tmp_path / "elsewhere"))  # the runtime's own override
    shutil.copytree(SESSIONS, tmp_path / "elsewhere")
    shutil.rmtree(tmp_path / "home" / ".cline")
    assert sorted(p.name for p, x in discover() if x.platform == "cline") == expected


def test_a_runtime_session_is_rewritten_whole_and_offers_the_cli_resume():
    from wwt.search import resume_line

    sessions, report = run_parser(ClineParser(), RUN, 200)
    assert report.requires_full_reparse and len(sessions[0].messages) == 17
    assert resume_line("cline", RUN_ID, "/home/rosa/work/tally-cli/packages/core") == (
        f"cd /home/rosa/work/tally-cli/packages/core && cline --id {RUN_ID}")
    assert resume_line("cline", "1767950000000", "/home/dev/acme-portal") is None  # an extension task
    assert resume_line("cline", f"{RUN_ID}__agent_1786104027000_h2k9dq", None) is None  # a subagent


def _runtime_file(path: Path, messages: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "updated_at": "2026-08-08T09:00:00.000Z", "agent": "lead",
                                "sessionId": path.parent.name, "messages": messages}, indent=2), encoding="utf-8")
    return path


def test_runtime_notices_summaries_and_bad_entries(tmp_path):
    """A compaction summary is the agent's text, flagged; a reminder the runtime adds is nobody's words; a
    broken entry is counted and costs only itself; a file cut mid-write keeps the messages before the cut."""
    path = _runtime_file(tmp_path / "sessions" / "1786190400000_Zz-9a" / "1786190400000_Zz-9a.messages.json", [
        {"id": "u1", "role": "user", "content": "<user_input mode=\"yolo\">rename the tally export flag</user_input>",
         "ts": 1786190401000},
        "not a message",
        {"id": "u2", "role": "user", "content": [{"type": "text", "text": "Context summary:\n\nflag renamed"}],
         "ts": 1786190402000, "metadata": {"kind": "compaction_summary", "displayRole": "system"}},
        {"id": "u3", "role": "user", "content": [{"type": "text", "text": "Remember to call submit_and_exit."}],
         "ts": 1786190403000, "metadata": {"kind": "completion_reminder"}},
        {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "Renamed --out to --output."}],
         "ts": 1786190404000},
    ])
    (session,), report = run_parser(ClineParser(), path)
    assert [(m.role, m.kind, m.text) for m in session.messages] == [
        ("user", "text", "rename the tally export flag"),
        ("assistant", "text", "Context summary:\n\nflag renamed"),
        ("assistant", "text", "Renamed --out to --output.")]
    assert FLAG_COMPACTION_SUMMARY in session.messages[1].flags
    assert report.bad_lines == 1 and report.skipped_messages == 1
    assert session.cwd is None and session.started_at == "2026-08-08T12:00:01Z"  # no manifest beside it
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: text.index('"id": "a1"')], encoding="utf-8")  # the writer stopped mid-entry
    (cut,), cut_report = run_parser(ClineParser(), path)
    assert [m.native_id for m in cut.messages] == ["u1", "u2"] and cut_report.bad_lines >= 1


def test_a_reopened_pre_runtime_task_keeps_only_the_users_words(tmp_path):
    """The extension reopens a task from before the runtime by seeding its session with the task's API history
    (apps/vscode/src/sdk/sdk-session-history-loader.ts): those entries carry the ``<task>`` wrapper and the
    ``<environment_details>`` the old extension sent, not a ``<user_input>`` one."""
    path = _runtime_file(tmp_path / "sessions" / "1767980000000" / "1767980000000.messages.json", [
        {"id": "h1", "role": "user", "content": [
            {"type": "text", "text": "<task>\nadd a --json flag to tally report\n</task>"},
            {"type": "text", "text": "<environment_details>\n# Current Working Directory (/home/rosa/work/tally-cli)"
                                     " Files\nsrc/\n</environment_details>"}]},
        {"id": "h2", "role": "assistant", "content": [{"type": "text", "text": "Added --json to tally report."}]},
        {"id": "n1", "role": "user", "content": [
            {"type": "text", "text": "<user_input mode=\"act\">now the same for tally export</user_input>"}],
         "ts": 1786190401000},
    ])
    (session,), _ = run_parser(ClineParser(), path)
    assert user_texts(session) == ["add a --json flag to tally report", "now the same for tally export"]
    assert "Current Working Directory" not in all_text(session)


def test_an_api_history_saved_under_a_messages_name_is_still_read_as_one(tmp_path):
    saved = tmp_path / "task.messages.json"
    saved.write_text(json.dumps([{"role": "user", "content": [{"type": "text", "text": "<task>\ntrim the csv\n</task>"}]},
                                 {"role": "assistant", "content": [{"type": "text", "text": "Trimmed."}]}]),
                     encoding="utf-8")
    assert parser_for(saved).platform == "cline"
    (session,), _ = run_parser(ClineParser(), saved)
    assert user_texts(session) == ["trim the csv"] and session.session_id == "task.messages"
