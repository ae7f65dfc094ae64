"""Cline and Roo Code parsers: task folders written after the extensions' ClineMessage list (ui_messages.json,
JSON.stringify'd, the task as the first ``say: text``), expectations by hand; the model-bound copy with
<environment_details> (api_conversation_history.json) is never read as the user's words."""

from __future__ import annotations

import shutil
from pathlib import Path

from parser_helpers import all_text, counts, run_parser, user_texts

from wwt.models import FLAG_ERROR
from wwt.parsers import discover, parser_for
from wwt.parsers.cline import ClineParser
from wwt.parsers.common import read_head
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
    assert found == [("1767950000000", "cline"), ("1767960000000", "roo-code")]
