"""Never answer an agent with its own question (issue 25, found by the real OpenCode CLI): an agent that does not
tell its MCP server which session it serves is archived by the engine's scan while it waits for wwt's answer. Its
session then holds only the question, which matches itself, fills the current project's results and keeps the
older session that answers it (another project) out. Such a session — no answer yet, active minutes ago — is
left out of an MCP search; an answered session of a minute ago (another agent, same project) is not."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from mcp.client.session import ClientSession
from mcp_helpers import text_of, wwt_mcp_session

from wwt.mcp_server import LIVE_QUESTION_S, live_question

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "claude"
ANSWERING = FIXTURES / "7a9e4c21-3b5d-4f60-8a71-c2d3e4f5a6b7.jsonl"  # project ledger, July: the answer
ANSWERING_ID = "7a9e4c21-3b5d-4f60-8a71-c2d3e4f5a6b7"
QUESTION = "What did we find out about the nightly reconcile job and refunds before?"


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def test_a_session_without_an_answer_active_minutes_ago_is_the_live_question() -> None:
    now = time.time()
    recent = _iso(datetime.fromtimestamp(now - 30, timezone.utc))
    assert live_question(recent, answered=False, now=now)
    assert not live_question(recent, answered=True, now=now)  # another agent's finished turn: recall it
    old = _iso(datetime.fromtimestamp(now - LIVE_QUESTION_S - 60, timezone.utc))
    assert not live_question(old, answered=False, now=now)  # an abandoned prompt of long ago: still findable
    assert not live_question(None, answered=False, now=now)
    assert not live_question("not a time", answered=False, now=now)
    assert live_question(recent.replace("Z", ""), answered=False, now=now)  # no zone: UTC, as agents write


def _transcript(path: Path, session_id: str, cwd: Path, lines: list[tuple[str, str]], start: datetime) -> Path:
    records = []
    parent = None
    for i, (role, text) in enumerate(lines):
        uuid = f"{session_id[:8]}-0000-4000-8000-{i:012d}"
        message = {"role": "user", "content": text} if role == "user" else {
            "role": "assistant", "type": "message", "id": f"msg_{i}", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": text}]}
        records.append({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": str(cwd),
                        "sessionId": session_id, "version": "2.1.332", "gitBranch": "main", "type": role,
                        "message": message, "uuid": uuid, "timestamp": _iso(start + timedelta(seconds=i))})
        parent = uuid
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_an_agents_own_question_archived_mid_turn_does_not_answer_it(tmp_path: Path, model_dir: Path) -> None:
    project = tmp_path / "src" / "tidewater"
    project.mkdir(parents=True)
    logs = tmp_path / "logs"
    logs.mkdir()
    now = datetime.now(timezone.utc)
    live = _transcript(logs / "live.jsonl", "11111111-aaaa-4bbb-8ccc-000000000001", project,
                       [("user", QUESTION + " Search your memory (wwt).")], now - timedelta(seconds=5))
    answered = _transcript(logs / "other-agent.jsonl", "22222222-aaaa-4bbb-8ccc-000000000002", project,
                           [("user", "the reconcile job's refunds: anything new about them?"),
                            ("assistant", "Yes: reconcile now rounds refunds half-up since this morning.")],
                           now - timedelta(minutes=2))
    shutil.copy(ANSWERING, logs / ANSWERING.name)
    env = dict(os.environ, WWT_HOME=str(tmp_path / "data"), WWT_MODEL_DIR=str(model_dir), HOME=str(tmp_path / "home"),
               WWT_ENGINE="off")
    for var in ("CLAUDE_SESSION_ID", "CLAUDE_CODE_SESSION_ID", "GEMINI_SESSION_ID", "CODEX_THREAD_ID",
                "CODEX_SESSION_ID", "WWT_EXCLUDE_SESSION_ID"):
        env.pop(var, None)

    def ingest(*paths: Path) -> None:
        code = ("import sys, pathlib; from wwt.service import Memory; "
                "Memory().ingest([pathlib.Path(p) for p in sys.argv[1:]])")
        subprocess.run([sys.executable, "-c", code, *map(str, paths)], env=env, check=True, timeout=300)

    ingest(live, logs / ANSWERING.name)
    texts: list[str] = []

    async def body(session: ClientSession) -> None:
        result = await session.call_tool("search_memory", {"query": QUESTION, "cwd": str(project)})
        texts.append(text_of(result))

    world = {"env": env, "root": tmp_path}
    asyncio.run(asyncio.wait_for(wwt_mcp_session(world, body), timeout=240))
    assert ANSWERING_ID in texts[0], texts[0]  # the project held only the live question: all projects searched
    assert "11111111-aaaa" not in texts[0], texts[0]

    ingest(answered)  # another agent answered in this project a minute ago: that is memory, found
    asyncio.run(asyncio.wait_for(wwt_mcp_session(world, body), timeout=240))
    assert "22222222-aaaa" in texts[1], texts[1]
    assert "11111111-aaaa" not in texts[1], texts[1]
