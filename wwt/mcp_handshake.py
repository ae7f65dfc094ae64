"""The MCP handshake a cold ``wwt mcp`` answers itself (issue 25): ``initialize`` and ``tools/list`` at once,
before the engine is up. Codex does not wait for a slow server: a cold start took 4–12 s to answer
``initialize``, so the first turn went out with no wwt tools and no error.

The answers are the real server's, recorded in ``mcp_handshake.json`` (``python -m wwt.mcp_handshake --write``
runs ``wwt mcp`` in-process and records what it answers; tests/test_mcp_handshake.py fails when the file and
the server disagree). Standard library only: this runs in the thin client before anything heavy is imported."""

from __future__ import annotations

import json
import os
import sys

PATH = os.path.join(os.path.dirname(__file__), "mcp_handshake.json")
PROBE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "1999-01-01")
_cache: dict | None = None


def recorded() -> dict | None:
    """The recorded handshake, or None (missing or unreadable file: the pipe then waits for the engine)."""
    global _cache
    if _cache is None:
        try:
            with open(PATH, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or not {"versions", "fallback", "result", "tools"} <= set(data):
            return None
        _cache = data
    return _cache


def local_reply(line: bytes) -> bytes | None:
    """The reply to ``line`` when it is an ``initialize`` or ``tools/list`` request this module can answer as
    the server would; None for anything else."""
    data = recorded()
    try:
        msg = json.loads(line)
    except ValueError:
        return None
    if data is None or not isinstance(msg, dict) or "id" not in msg:
        return None
    method = msg.get("method")
    if method == "initialize":
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        asked = params.get("protocolVersion")
        version = data["versions"].get(asked, data["fallback"]) if isinstance(asked, str) else data["fallback"]
        result = {**data["result"], "protocolVersion": version}
    elif method == "tools/list":
        result = {"tools": data["tools"]}
    else:
        return None
    return (json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}, ensure_ascii=False) + "\n").encode()


def probe() -> dict:
    """Ask the real server (``python -m wwt mcp`` in-process, a scratch data dir) what it answers."""
    import subprocess
    import tempfile

    versions: dict[str, str] = {}
    result: dict = {}
    tools: list = []
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, WWT_ENGINE="off", WWT_HOME=home)
        for version in PROBE_VERSIONS:
            lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": version, "capabilities": {},
                                 "clientInfo": {"name": "probe", "version": "1"}}},
                     {"jsonrpc": "2.0", "method": "notifications/initialized"},
                     {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
            proc = subprocess.Popen([sys.executable, "-m", "wwt", "mcp"], env=env, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            replies: dict = {}
            try:
                for message in lines:  # one at a time, each answer read before the next (no EOF race)
                    proc.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
                    proc.stdin.flush()  # type: ignore[union-attr]
                    while "id" in message and message["id"] not in replies:
                        raw = proc.stdout.readline()  # type: ignore[union-attr]
                        if not raw:
                            break
                        reply = json.loads(raw)
                        if isinstance(reply, dict) and "id" in reply:
                            replies[reply["id"]] = reply
                    if message.get("id") == 1 and "result" not in replies.get(1, {}):
                        break
            finally:
                proc.stdin.close()  # type: ignore[union-attr]
                proc.wait(timeout=60)
            init = replies.get(1, {}).get("result")
            if not isinstance(init, dict):
                continue  # a version the server refuses outright
            versions[version] = init.pop("protocolVersion")
            if version != "1999-01-01":
                result, tools = init, replies[2]["result"]["tools"]
    fallback = versions.pop("1999-01-01", None) or max(versions.values())
    return {"versions": {k: v for k, v in versions.items() if v == k}, "fallback": fallback, "result": result,
            "tools": tools}


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        answered = probe()
        with open(PATH, "w", encoding="utf-8") as fh:
            json.dump(answered, fh, ensure_ascii=False, indent=1, sort_keys=True)
            fh.write("\n")
    else:
        print(json.dumps(probe(), ensure_ascii=False, indent=1, sort_keys=True))
