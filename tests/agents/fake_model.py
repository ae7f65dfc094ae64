"""A small fake model API on 127.0.0.1 that the agents' real CLIs talk to instead of their vendors.

It speaks the four wire formats the six CLIs use — Anthropic Messages (Claude Code), OpenAI Responses (Codex),
OpenAI chat completions (Qwen Code, OpenCode, Copilot CLI's own provider), Gemini generateContent (Gemini CLI)
— streaming (SSE) or not, as the request asks. Each reply is decided from the request alone:

* the conversation already holds the result of our call to wwt's search tool → a plain text answer (the tool's
  result text is recorded: the test checks it came from wwt);
* else a wwt search tool is offered (whatever the CLI names it: ``mcp__wwt__search_memory``,
  ``mcp_wwt_search_memory``, ``wwt-search_memory``, ``wwt_search_memory``, a bare ``search_memory``) → a call of
  it with ``QUERY``;
* else a short text (titles, summaries, quota probes and the like).

It is also the HTTP(S) proxy the CLIs are given: a CONNECT (or any absolute-URL request) is an attempt to leave
127.0.0.1; it is refused and recorded, so a test can say which CLI tried to reach where."""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ANSWER = "FAKE-MODEL-ANSWER: the archive says the nightly reconcile job rounded refunds too early."
CALL_ID = "call_wwt_search_1"
# A CLI that defers MCP tools behind a tool-search tool: load wwt's first (call_tool_search_<n>); asked again
# while the CLI says its MCP servers are "still connecting", as a model would, up to MAX_LOADS times.
LOAD_PREFIX = "call_tool_search_"
MAX_LOADS = 8


def _ours(call_id: object) -> bool:
    return call_id == CALL_ID or (isinstance(call_id, str) and call_id.startswith(LOAD_PREFIX))

BRIDGE = "tool_call"  # Qwen Code: "Invokes a deferred tool after its schema has been reviewed with tool_search"
LOADER = re.compile(r"ToolSearch|tool_search|search_tools", re.I)
WWT_NAME = re.compile(r"[\w.\-]*wwt[\w.\-]*search_memory")
# wwt's search tools, in the order tried: this project first, then every project.
SEARCH_TOOL = re.compile(r"(?:^|[_\-.])(search_memory|search_all)$")


@dataclass
class Seen:
    """One request the server answered (or refused)."""

    method: str
    path: str
    api: str
    body: Any
    reply: str  # "tool_call", "answer", "text", "refused", "other"
    tool_names: list[str] = field(default_factory=list)
    tool_result: str | None = None
    loaded: str | None = None  # what the agent's tool loader answered last (ToolSearch, tool_search)


class FakeModel:
    """Start with ``with FakeModel(query) as fake:``; ``fake.url`` is ``http://127.0.0.1:<port>``."""

    def __init__(self, query: str, dump: Path | None = None) -> None:
        self.query = query
        self.dump = dump  # every request body written here as <n>.json (for reading a new CLI's shapes)
        self.seen: list[Seen] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def record(self, seen: Seen) -> None:
        with self.lock:
            self.seen.append(seen)
            if self.dump is not None:
                self.dump.mkdir(parents=True, exist_ok=True)
                (self.dump / f"{len(self.seen):03d}.json").write_text(json.dumps(
                    {"method": seen.method, "path": seen.path, "reply": seen.reply, "body": seen.body}, indent=1))

    # what the tests ask
    def calls(self) -> list[Seen]:
        """Requests answered with a call of wwt's search tool."""
        return [s for s in self.seen if s.reply == "tool_call"]

    def tool_results(self) -> list[str]:
        return [s.tool_result for s in self.seen if s.tool_result is not None]

    def answers(self) -> list[Seen]:
        return [s for s in self.seen if s.reply == "answer"]

    def refused(self) -> list[str]:
        return [s.path for s in self.seen if s.reply == "refused"]

    def offered(self) -> set[str]:
        return {name for s in self.seen for name in s.tool_names}

    def summary(self) -> str:
        """One line per request, for a failing test's message."""
        return "\n".join(f"{s.method} {s.path} [{s.api}] -> {s.reply} tools={len(s.tool_names)}"
                         f"{' wwt-like=' + str([n for n in s.tool_names if 'wwt' in n or 'search' in n]) if s.tool_names else ''}"
                         f"{' loader said: ' + s.loaded[:300] if s.loaded else ''}"
                         for s in self.seen)


# ------------------------------------------------------------------------------------------- per API reading


def _text_of(value: Any) -> str:
    """Every string inside a tool result (its shape differs per API and CLI), joined."""
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return "\n".join(out)


def _pick_tool(names: list[str]) -> str | None:
    found = [n for n in names if SEARCH_TOOL.search(n) and ("wwt" in n or n in ("search_memory", "search_all"))]
    found.sort(key=lambda n: (not n.endswith("search_memory"), n))
    return found[0] if found else None


def anthropic_state(body: dict) -> tuple[list[str], dict[str, str]]:
    names = [t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)]
    results = {}
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result" and _ours(block.get("tool_use_id")):
                    results[block["tool_use_id"]] = _text_of(block.get("content"))
    return names, results


def responses_state(body: dict) -> tuple[list[str], dict[str, str]]:
    names: list[str] = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":  # Codex 0.17x: MCP tools grouped under their server's namespace
            prefix = tool.get("name", "")
            names += [f"{prefix}{t.get('name', '')}" if prefix.endswith("__") else f"{prefix}__{t.get('name', '')}"
                      for t in tool.get("tools") or [] if isinstance(t, dict)]
        else:
            names.append(tool.get("name", ""))
    results = {}
    for item in body.get("input") or []:
        if isinstance(item, dict) and _ours(item.get("call_id")) and item.get("type", "").endswith("_output"):
            results[item["call_id"]] = _text_of(item.get("output"))
    return names, results


def chat_state(body: dict) -> tuple[list[str], dict[str, str]]:
    names = [(t.get("function") or {}).get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)]
    results = {}
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "tool" and _ours(message.get("tool_call_id")):
            results[message["tool_call_id"]] = _text_of(message.get("content"))
    return names, results


def gemini_state(body: dict) -> tuple[list[str], dict[str, str]]:
    names = [d.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)
             for d in t.get("functionDeclarations") or [] if isinstance(d, dict)]
    results = {}
    for content in body.get("contents") or []:
        for part in (content or {}).get("parts") or []:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict):  # matched by name: Gemini's calls carry no id of ours
                name = response.get("name", "")
                loads = sum(1 for k in results if k.startswith(LOAD_PREFIX))
                key = CALL_ID if SEARCH_TOOL.search(name) else f"{LOAD_PREFIX}{loads + 1}" if LOADER.fullmatch(name) else None
                if key:
                    results[key] = _text_of(response.get("response"))
    return names, results


# ------------------------------------------------------------------------------------------- per API writing


def _sse(events: list[tuple[str | None, Any]]) -> bytes:
    out = []
    for name, data in events:
        line = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {line}\n\n")
    return "".join(out).encode()


def anthropic_reply(body: dict, call: str | None, args: dict, text: str, cid: str = CALL_ID) -> tuple[str, bytes]:
    model = body.get("model", "fake")
    usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    block = ({"type": "tool_use", "id": cid, "name": call, "input": args} if call
             else {"type": "text", "text": text})
    stop = "tool_use" if call else "end_turn"
    if not body.get("stream"):
        return "application/json", json.dumps({
            "id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [block],
            "stop_reason": stop, "stop_sequence": None, "usage": usage}).encode()
    start = {"type": "message_start", "message": {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": usage}}
    if call:
        events = [("content_block_start", {"type": "content_block_start", "index": 0,
                                           "content_block": {"type": "tool_use", "id": cid, "name": call, "input": {}}}),
                  ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                           "delta": {"type": "input_json_delta", "partial_json": json.dumps(args)}})]
    else:
        events = [("content_block_start", {"type": "content_block_start", "index": 0,
                                           "content_block": {"type": "text", "text": ""}}),
                  ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                           "delta": {"type": "text_delta", "text": text}})]
    return "text/event-stream", _sse([
        ("message_start", start), *events,
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"})])


def responses_reply(body: dict, call: str | None, args: dict, text: str, namespaced: dict[str, tuple[str, str]],
                    cid: str = CALL_ID) -> tuple[str, bytes]:
    rid = f"resp_fake_{int(time.time() * 1000)}"
    if call:
        item: dict[str, Any] = {"type": "function_call", "id": f"fc_{cid}", "call_id": cid, "name": call,
                                "arguments": json.dumps(args), "status": "completed"}
        if call in namespaced:  # a namespaced tool is called by its namespace and bare name
            item["namespace"], item["name"] = namespaced[call]
    else:
        item = {"type": "message", "id": "msg_fake_1", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    response = {"id": rid, "object": "response", "created_at": int(time.time()), "status": "completed",
                "model": body.get("model", "fake"), "output": [item], "usage": usage}
    if not body.get("stream"):
        return "application/json", json.dumps(response).encode()
    return "text/event-stream", _sse([
        ("response.created", {"type": "response.created", "response": {**response, "status": "in_progress", "output": []}}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": response})])


def chat_reply(body: dict, call: str | None, args: dict, text: str, cid: str = CALL_ID) -> tuple[str, bytes]:
    created = int(time.time())
    model = body.get("model", "fake")
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    if call:
        tool_call = {"index": 0, "id": cid, "type": "function", "function": {"name": call, "arguments": json.dumps(args)}}
        message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [tool_call]}
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": text}
        finish = "stop"
    if not body.get("stream"):
        whole = dict(message)
        if call:
            whole["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in message["tool_calls"]]
        return "application/json", json.dumps({
            "id": "chatcmpl-fake", "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": whole, "finish_reason": finish}], "usage": usage}).encode()
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created, "model": model}
    chunks = [{**base, "choices": [{"index": 0, "delta": message, "finish_reason": None}]},
              {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
              {**base, "choices": [], "usage": usage}]
    return "text/event-stream", _sse([*[(None, c) for c in chunks], (None, "[DONE]")])


def sample_of(schema: Any) -> Any:
    """A value of a JSON schema's shape (Gemini CLI's router and other helpers ask for JSON output): strings
    "fake", numbers 10, the first enum value, objects with their required (else all) properties. Iterative."""
    def leaf(node: Any) -> Any:
        if not isinstance(node, dict):
            return "fake"
        kind = str(node.get("type", "object")).lower()
        if node.get("enum"):
            return node["enum"][0]
        return {"string": "fake", "integer": 10, "number": 10, "boolean": False, "array": [], "null": None}.get(kind, {})
    root: dict[str, Any] = {}
    todo: list[tuple[Any, dict[str, Any], str]] = [(schema, root, "value")]
    while todo:
        node, parent, key = todo.pop()
        if isinstance(node, dict) and str(node.get("type", "object")).lower() == "object" and not node.get("enum"):
            props = node.get("properties") or {}
            wanted = node.get("required") or list(props)
            parent[key] = {}
            todo.extend((props.get(name, {}), parent[key], name) for name in wanted)
        else:
            parent[key] = leaf(node)
    return root["value"]


def _forced_tool(body: dict) -> tuple[str, Any] | None:
    """The one function a chat request forces (``tool_choice`` "required" with a single tool, or by name), and
    its parameter schema."""
    choice = body.get("tool_choice")
    tools = [t.get("function") or {} for t in body.get("tools") or [] if isinstance(t, dict)]
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        tools = [t for t in tools if t.get("name") == name]
    elif choice != "required" or len(tools) != 1:
        return None
    return (tools[0].get("name", ""), tools[0].get("parameters") or {}) if tools else None


def gemini_reply(stream: bool, call: str | None, args: dict, text: str) -> tuple[str, bytes]:
    part = {"functionCall": {"name": call, "args": args}} if call else {"text": text}
    reply = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
             "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
             "modelVersion": "fake"}
    if not stream:
        return "application/json", json.dumps(reply).encode()
    return "text/event-stream", _sse([(None, reply)])


# ------------------------------------------------------------------------------------------------ server


def _handler(fake: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet
            return

        def _send(self, status: int, ctype: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_CONNECT(self) -> None:  # noqa: N802 - an attempt to leave 127.0.0.1 through the proxy
            fake.record(Seen("CONNECT", self.path, "proxy", None, "refused"))
            self._send(403, "text/plain", b"no traffic leaves 127.0.0.1 in this test\n")
            self.close_connection = True

        def do_GET(self) -> None:  # noqa: N802
            if self.path.startswith("http"):
                fake.record(Seen("GET", self.path, "proxy", None, "refused"))
                self._send(403, "text/plain", b"refused\n")
                return
            fake.record(Seen("GET", self.path, "other", None, "other"))
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, "application/json", json.dumps({"object": "list", "data": [
                    {"id": "fake-model", "object": "model", "created": 0, "owned_by": "fake"}]}).encode())
                return
            self._send(404, "application/json", b'{"error": {"message": "not found"}}')

        def do_HEAD(self) -> None:  # noqa: N802
            fake.record(Seen("HEAD", self.path, "other", None, "other"))
            self._send(200, "text/plain", b"")

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.path.startswith("http"):
                fake.record(Seen("POST", self.path, "proxy", None, "refused"))
                self._send(403, "text/plain", b"refused\n")
                return
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {}
            path = self.path.split("?", 1)[0]
            if path.endswith("/messages") and "count_tokens" not in path:
                api, (names, results) = "anthropic", anthropic_state(body)
            elif path.endswith("/messages/count_tokens"):
                fake.record(Seen("POST", self.path, "anthropic", body, "other"))
                self._send(200, "application/json", b'{"input_tokens": 10}')
                return
            elif path.endswith("/responses"):
                api, (names, results) = "responses", responses_state(body)
            elif path.endswith("/chat/completions"):
                api, (names, results) = "chat", chat_state(body)
            elif ":generateContent" in path or ":streamGenerateContent" in path:
                api, (names, results) = "gemini", gemini_state(body)
            elif ":countTokens" in path:
                fake.record(Seen("POST", self.path, "gemini", body, "other"))
                self._send(200, "application/json", b'{"totalTokens": 10}')
                return
            else:
                fake.record(Seen("POST", self.path, "other", body, "other"))
                self._send(404, "application/json", b'{"error": {"message": "not found"}}')
                return
            result = results.get(CALL_ID)
            call = None if result is not None else _pick_tool(names)
            args: dict[str, Any] = {"query": fake.query}
            reply = "answer" if result is not None else ("tool_call" if call else "text")
            loader = next((n for n in names if LOADER.fullmatch(n)), None)
            loads = sum(1 for k in results if k.startswith(LOAD_PREFIX))
            loaded = WWT_NAME.search("\n".join(v for k, v in results.items() if k.startswith(LOAD_PREFIX)))
            if reply == "text" and loaded and BRIDGE in names:  # Qwen Code: a loaded deferred tool is run via tool_call
                call, reply, args = BRIDGE, "tool_call", {"name": loaded.group(), "arguments": args}
            elif reply == "text" and loader and loads < MAX_LOADS and (loads == 0 or "connecting" in results[f"{LOAD_PREFIX}{loads}"]):
                named = WWT_NAME.search(raw.decode("utf-8", "replace").replace("\\n", "\n"))  # a JSON "\n" is no name's start
                call, reply = loader, "load_tools"
                args = {"query": f"select:{named.group()}" if named and loader == "ToolSearch" else "wwt search_memory"}
            forced = _forced_tool(body) if api == "chat" and reply == "text" else None
            if forced is not None:  # a helper call that must answer through one tool (Qwen's approval classifier)
                call, reply, args = forced[0], "forced", sample_of(forced[1])
            last_load = results.get(f"{LOAD_PREFIX}{loads}") if loads else None
            fake.record(Seen("POST", self.path, api, body, reply, names, result, last_load))
            text = ANSWER if result is not None else "ok"
            cid = f"{LOAD_PREFIX}{loads + 1}" if reply == "load_tools" else "call_forced_1" if reply == "forced" else CALL_ID
            if api == "anthropic":
                ctype, payload = anthropic_reply(body, call, args, text, cid)
            elif api == "responses":
                namespaced = {}
                for tool in body.get("tools") or []:
                    if isinstance(tool, dict) and tool.get("type") == "namespace":
                        for t in tool.get("tools") or []:
                            full = responses_state({"tools": [{**tool, "tools": [t]}]})[0][0]
                            namespaced[full] = (tool.get("name", ""), t.get("name", ""))
                ctype, payload = responses_reply(body, call, args, text, namespaced, cid)
            elif api == "chat":
                ctype, payload = chat_reply(body, call, args, text, cid)
            else:
                config = body.get("generationConfig") or {}
                if reply == "text" and config.get("responseMimeType") == "application/json":
                    text = json.dumps(sample_of(config.get("responseJsonSchema") or config.get("responseSchema") or {}))
                ctype, payload = gemini_reply(":streamGenerateContent" in path, call, args, text)
            self._send(200, ctype, payload)

    return Handler
