"""Bytes that are not UTF-8 in a folder name, an argument or an environment value are legal on Linux; through
the engine they must work as they do in-process (issue 24): no traceback from the client, and `wwt mcp` still
answers the agent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES
from test_engine import _ingest, engine_env, runtime  # noqa: F401


def env_bytes(env: dict[str, str], **extra: bytes) -> dict[bytes, bytes]:
    out = {k.encode(): v.encode("utf-8", "surrogateescape") for k, v in env.items()}
    out.update({k.encode(): v for k, v in extra.items()})
    return out


@pytest.fixture
def odd_folder(tmp_path: Path) -> bytes:
    folder = os.fsencode(tmp_path) + b"/proj-\xff\xfe"
    os.mkdir(folder)
    return folder


def run(args: list[bytes], env: dict[bytes, bytes], cwd: bytes, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable.encode(), b"-m", b"wwt", *args], env=env, cwd=cwd, input=stdin,
                          capture_output=True, timeout=300)


@pytest.mark.parametrize("engine", ["on", "off"])
def test_cli_commands_from_a_non_utf8_folder_with_non_utf8_arguments_and_env(tmp_path, runtime, model_dir,  # noqa: F811
                                                                             odd_folder, engine):
    home = tmp_path / "data"
    _ingest(home, model_dir, REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl")
    env = env_bytes(engine_env(home, runtime, model_dir, WWT_ENGINE=engine), WWT_ODD=b"\xff\xfe", LANG=b"C.UTF-8")
    for args in ([b"search", b"--all", b"JOKE.md"], [b"search", b"--all", b"JOKE \xff"], [b"status"],
                 [b"show", b"\xff\xfe"], [b"search", b"JOKE"]):
        result = run(args, env, odd_folder)
        assert b"Traceback" not in result.stderr and b"UnicodeEncodeError" not in result.stderr, (args, result.stderr)
        assert result.returncode in (0, 1, 2), (args, result.returncode)
    found = run([b"search", b"--all", b"JOKE.md"], env, odd_folder)
    assert found.returncode == 0 and b"JOKE" in found.stdout


def test_wwt_mcp_from_a_non_utf8_folder_answers_the_agent(tmp_path, runtime, model_dir, odd_folder):  # noqa: F811
    home = tmp_path / "data"
    _ingest(home, model_dir, REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl")
    env = env_bytes(engine_env(home, runtime, model_dir), CLAUDE_SESSION_ID=b"id-\xff", LANG=b"C.UTF-8")
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search_all", "arguments": {"query": "JOKE.md"}}},
    ]
    proc = subprocess.Popen([sys.executable.encode(), b"-m", b"wwt", b"mcp"], env=env, cwd=odd_folder,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin and proc.stdout
    replies = {}
    try:
        for message in messages:
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()
            if "id" in message:
                deadline = time.monotonic() + 240
                while time.monotonic() < deadline:
                    line = proc.stdout.readline()
                    if not line:
                        break
                    reply = json.loads(line)
                    if reply.get("id") == message["id"]:
                        replies[message["id"]] = reply
                        break
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    assert 1 in replies and 2 in replies, proc.stderr.read()[-2000:]
    text = "".join(c.get("text", "") for c in replies[2]["result"]["content"])
    assert "JOKE" in text
