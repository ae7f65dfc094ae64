"""A Codex session whose folder is named only in its environment context (issue 25): Codex puts
``<environment_context><cwd>…</cwd>…</environment_context>`` in a user-role message at the start of a turn; a
rollout whose ``session_meta`` and ``turn_context`` carry no ``cwd`` (older and `codex exec` rollouts) got no
project at all."""

from __future__ import annotations

import json

from wwt.parsers import parse_file

SESSION = "019a1b2c-3d4e-7f50-8a9b-0c1d2e3f4a5b"


def test_the_environment_contexts_folder_gives_the_project(tmp_path):
    records = [
        {"timestamp": "2026-11-30T09:00:00.000Z", "type": "session_meta",
         "payload": {"id": SESSION, "timestamp": "2026-11-30T09:00:00.000Z", "originator": "codex_exec",
                     "cli_version": "0.171.0"}},
        {"timestamp": "2026-11-30T09:00:00.100Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text":
                     "<environment_context>\n  <cwd>/home/dev/src/payroll-api</cwd>\n  <approval_policy>never"
                     "</approval_policy>\n  <shell>bash</shell>\n</environment_context>"}]}},
        {"timestamp": "2026-11-30T09:00:01.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "user",
                     "content": [{"type": "input_text", "text": "why does the payslip export round down?"}]}},
        {"timestamp": "2026-11-30T09:00:02.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "assistant",
                     "content": [{"type": "output_text", "text": "It truncates before converting currency."}]}},
    ]
    path = tmp_path / f"rollout-2026-11-30T09-00-00-{SESSION}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    [session], _ = parse_file(path)
    assert session.cwd == "/home/dev/src/payroll-api"
    assert session.project == "payroll-api"
    assert [m.role for m in session.messages] == ["user", "assistant"]  # the context itself is no message
