"""A cold `wwt mcp` answers the handshake at once (issue 25): Codex does not wait for a slow server, so a
4–12 s `initialize` sent the first turn out with no wwt tools. The recorded answers (wwt/mcp_handshake.json)
must be exactly what the server answers, and a tool call still reaches the real engine."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from _shared import REAL_FIXTURES
from engine_helpers import alive, engine_pids
from test_engine import _ingest, engine_env, runtime  # noqa: F401

from wwt import mcp_handshake


def test_the_recorded_handshake_is_what_the_server_answers():
    recorded = json.loads(open(mcp_handshake.PATH, encoding="utf-8").read())
    assert mcp_handshake.probe() == recorded, "run `python -m wwt.mcp_handshake --write`"


def exchange(proc, message: dict, deadline: float) -> tuple[dict, float]:
    started = time.perf_counter()
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()
    while time.perf_counter() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        reply = json.loads(line)
        if reply.get("id") == message["id"]:
            return reply, time.perf_counter() - started
    raise AssertionError(f"no answer to {message['method']}")


def test_a_cold_wwt_mcp_answers_initialize_and_tools_list_before_the_engine_is_up(tmp_path, runtime, model_dir):  # noqa: F811
    home = tmp_path / "data"
    _ingest(home, model_dir, REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl")
    env = engine_env(home, runtime, model_dir)
    assert not [p for p in engine_pids(runtime) if alive(p)]  # cold: no engine runs
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "wwt", "mcp"], env=env, cwd=str(tmp_path), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.perf_counter() + 240
    try:
        init, _ = exchange(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "codex", "version": "0.17"}}},
            deadline)
        init_s = time.perf_counter() - started  # process start included
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        tools, _ = exchange(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, deadline)
        listed_s = time.perf_counter() - started
        call, _ = exchange(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                  "params": {"name": "search_all", "arguments": {"query": "JOKE.md"}}}, deadline)
        called_s = time.perf_counter() - started
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    assert init["result"]["protocolVersion"] == "2025-06-18" and init["result"]["serverInfo"]["name"] == "wwt"
    assert {t["name"] for t in tools["result"]["tools"]} == {"search_memory", "search_all", "get_session",
                                                             "ingest_session", "handoff_session"}
    assert "JOKE" in call["result"]["content"][0]["text"]
    assert [p for p in engine_pids(runtime) if alive(p)]  # the call went to the engine the pipe started
    # the handshake did not wait for the engine: well under the time the first real answer took
    assert listed_s < 2.0 and listed_s < called_s / 2, (init_s, listed_s, called_s)
