"""The MCP server as an agent sees it: a real MCP client session over stdio (the SDK's ``stdio_client`` +
``ClientSession``) against a store ingested from real logs with the real model."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _shared import HOSTILE_SESSION, REAL_FIXTURES, TERMINAL_CONTROLS, write_hostile_transcript
from engine_helpers import engine_pids, kill_engines_in
from mcp.client.session import ClientSession
from mcp_helpers import text_of, wwt_mcp_session

from wwt.mcp_server import MAX_OUTPUT_CHARS

REAL = (REAL_FIXTURES / "claude-code")
SPOTTER = ("spotter__short.jsonl", "55604662-cf2a-4331-851a-ec234028f8ca")
CRUD = ("agentlogs__crud.jsonl", "8122657c-fe54-4dc9-89a3-20049e8a84f7")
LATER = ("episodic-memory__short-conversation.jsonl", "982581eb-41b9-46da-86c1-ac34168117a8")


def _copy(name: str, session_id: str, dest: Path) -> Path:
    target = dest / f"{session_id}.jsonl"
    shutil.copy(REAL / name, target)
    return target


def _ingest(env: dict[str, str], *paths: Path) -> None:
    code = "import sys; from wwt.service import Memory; Memory().ingest([__import__('pathlib').Path(p) for p in sys.argv[1:]])"
    subprocess.run([sys.executable, "-c", code, *map(str, paths)], env=env, check=True, timeout=300)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, model_dir: Path) -> dict:
    root = tmp_path_factory.mktemp("mcp")
    logs = root / "logs"
    logs.mkdir()
    env = dict(os.environ, WWT_HOME=str(root / "data"), WWT_MODEL_DIR=str(model_dir), HOME=str(root / "home"))
    for var in ("CLAUDE_SESSION_ID", "CLAUDE_CODE_SESSION_ID", "GEMINI_SESSION_ID", "CODEX_THREAD_ID",
                "CODEX_SESSION_ID", "WWT_EXCLUDE_SESSION_ID"):
        env.pop(var, None)
    _ingest(env, _copy(*SPOTTER, logs), _copy(*CRUD, logs))
    return {"root": root, "logs": logs, "env": env}


def top_session(text: str) -> str | None:
    """The session id of the best hit in a search tool's text."""
    for line in text.splitlines():
        if line.strip().startswith("session: "):
            return line.split("session: ", 1)[1].split(" ")[0]
    return None


def test_tools_listed_with_when_to_use_them(world: dict) -> None:
    async def body(session: ClientSession) -> None:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == {"search_memory", "search_all", "ingest_session", "get_session", "handoff_session"}
        assert "그때 그거 뭐였지?" in tools["search_memory"].description
        assert "how did we fix" in tools["search_memory"].description
        props = tools["search_memory"].input_schema["properties"]
        assert {"query", "project", "source", "git_branch", "cwd", "since", "until", "limit"} <= set(props)

    asyncio.run(body_runner(world, body))


async def body_runner(world: dict, body) -> None:
    await asyncio.wait_for(wwt_mcp_session(world, body), timeout=240)


def test_search_read_ingest_and_see_new_data_without_restart(world: dict) -> None:
    async def body(session: ClientSession) -> None:
        found = await session.call_tool("search_all", {"query": "phoenix server mix phx.server does not start"})
        text = text_of(found)
        assert not found.is_error, text
        assert SPOTTER[1] in text and "spotter" in text and "resume: cd " in text
        assert len(text) <= MAX_OUTPUT_CHARS

        scoped = await session.call_tool(
            "search_memory", {"query": "create JOKE.md file", "project": "spotter", "source": "claude"}
        )
        assert not scoped.is_error, text_of(scoped)
        assert CRUD[1] not in text_of(scoped) and "in project spotter" in text_of(scoped)

        # default scope: the project of the agent's cwd
        by_cwd = await session.call_tool("search_memory", {"query": "server start", "cwd": "/home/marco/projects/spotter"})
        assert "in project spotter" in text_of(by_cwd) and SPOTTER[1] in text_of(by_cwd)

        # concurrent calls are all answered correctly
        many = await asyncio.gather(*(
            session.call_tool("search_all", {"query": q}) for q in ("JOKE.md", "phx.server", "JOKE.md", "phx.server")
        ))
        assert [top_session(text_of(r)) for r in many] == [CRUD[1], SPOTTER[1], CRUD[1], SPOTTER[1]]

        page = await session.call_tool("get_session", {"session_id": SPOTTER[1][:8], "start": 0, "end": 3})
        assert not page.is_error, text_of(page)
        assert text_of(page).startswith(f"session {SPOTTER[1]}") and "[0] user: mix phx.server" in text_of(page)

        query = {"query": "Employee dataclass annual salary department"}
        before = text_of(await session.call_tool("search_all", query))
        assert LATER[1] not in before

        # the worker (another process) writes new data: the running server sees it on the next call
        _ingest(world["env"], _copy(*LATER, world["logs"]))
        after = text_of(await session.call_tool("search_all", query))
        assert LATER[1] in after

        # own session is left out when the agent says which one it is
        mine = await session.call_tool("search_all", {**query, "exclude_session_id": LATER[1]})
        assert LATER[1] not in text_of(mine)

    asyncio.run(body_runner(world, body))


def agent_folder(world: dict, *parts: str) -> Path:
    """A folder inside an agent's log folder under the server's HOME (where ingest_session may read)."""
    folder = Path(world["env"]["HOME"]).joinpath(*parts)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_ingest_session_tool_archives_a_file(world: dict) -> None:
    path = _copy("agentlogs__todos.jsonl", "0b0e0a0d-0000-4000-8000-00000000todo",
                 agent_folder(world, ".claude", "projects", "-todos"))

    async def body(session: ClientSession) -> None:
        result = await session.call_tool("ingest_session", {"path": str(path)})
        assert not result.is_error, text_of(result)
        assert text_of(result).startswith(f"ingested {path}") and "sessions: 1" in text_of(result)

    asyncio.run(body_runner(world, body))


def test_tool_text_shows_archived_control_characters_as_visible_escapes(world: dict) -> None:
    path = write_hostile_transcript(agent_folder(world, ".gemini", "tmp", "hostile", "chats"))

    async def body(session: ClientSession) -> None:
        assert not (await session.call_tool("ingest_session", {"path": str(path)})).is_error
        page = text_of(await session.call_tool("get_session", {"session_id": HOSTILE_SESSION}))
        found = text_of(await session.call_tool("search_all", {"query": "payments deploy invoice"}))
        for text in (page, found):
            assert HOSTILE_SESSION in text
            assert not [c for c in TERMINAL_CONTROLS if c in text], repr(text)
            assert "\\x1b[2J" in text and "invoice\\u202etxt.exe" in text

    asyncio.run(body_runner(world, body))


def test_bad_calls_are_one_line_tool_errors_and_the_server_keeps_serving(world: dict) -> None:
    async def body(session: ClientSession) -> None:
        cases = [
            ("get_session", {"session_id": "no-such-session"}, "no archived session"),
            ("search_memory", {"query": "x", "source": "windsurf"}, "unknown source"),
            ("search_memory", {"query": "x", "project": "nope-project"}, "no sessions for project"),
            ("search_all", {"query": "   "}, "query is empty"),
            ("ingest_session", {"path": "/does/not/exist.jsonl"}, "not an agent log file"),
            ("search_memory", {"query": "x", "since": "last blue moon"}, "bad date"),
        ]
        for tool, args, expected in cases:
            result = await session.call_tool(tool, args)
            text = text_of(result)
            assert result.is_error, (tool, text)
            assert expected in text and "\n" not in text.strip() and "Traceback" not in text
        ok = await session.call_tool("search_all", {"query": "JOKE.md"})
        assert not ok.is_error and CRUD[1] in text_of(ok)

    asyncio.run(body_runner(world, body))


def test_warm_up_loads_the_model_indexes_and_kiwi(world: dict) -> None:
    """Before the first tool call: a Korean first question must not wait for Kiwi (~1.2 s)."""
    code = (
        "import wwt.mcp_server as m, wwt.lexical as lx, wwt.embedder as e; m.warm_up(); "
        "print(m._State.warm_error, lx._kiwi is not None, bool(e._CACHE), m.memory()._indexes is not None)"
    )
    out = subprocess.run([sys.executable, "-c", code], env=world["env"], capture_output=True, text=True,
                         timeout=300, check=True).stdout.split()
    assert out == ["None", "True", "True", "True"]


def test_a_search_for_a_product_never_discussed_says_so_in_the_tool_text(world: dict) -> None:
    async def body(session: ClientSession) -> None:
        result = await session.call_tool("search_all", {"query": "phoenix server behind a Traefik proxy"})
        text = text_of(result)
        assert not result.is_error, text
        assert "weak matches only: nothing in memory mentions Traefik" in text.splitlines()[0]
        assert SPOTTER[1] in text  # the closest matches are still shown

    asyncio.run(body_runner(world, body))


def test_without_a_model_the_tools_answer_by_words_and_say_so(world: dict, tmp_path: Path) -> None:
    # The model is gone (WWT_MODEL_DIR names an empty folder) after an ingest that embedded the archive: the
    # search tools still answer from the lexical leg with a notice, and ingest_session still archives by words.
    root = tmp_path
    env = dict(world["env"], WWT_HOME=str(root / "data"), HOME=str(root / "home"))
    logs = root / "logs"
    logs.mkdir()
    _ingest(env, _copy(*SPOTTER, logs))
    (root / "empty").mkdir()
    env["WWT_MODEL_DIR"] = str(root / "empty")
    here = {"root": root, "env": env}
    path = _copy(*CRUD, agent_folder(here, ".claude", "projects", "-crud"))

    async def body(session: ClientSession) -> None:
        found = await session.call_tool("search_all", {"query": "mix phx.server doesnt seem to start"})
        text = text_of(found)
        assert not found.is_error, text
        assert top_session(text) == SPOTTER[1]
        assert "words only: the model is not available" in text and "wwt model" in text
        added = await session.call_tool("ingest_session", {"path": str(path)})
        assert not added.is_error, text_of(added)
        assert "sessions: 1" in text_of(added) and "wait for vectors" in text_of(added)
        joke = text_of(await session.call_tool("search_all", {"query": "create JOKE.md file"}))
        assert top_session(joke) == CRUD[1]

    asyncio.run(body_runner(here, body))


def raw_exchange(env: dict[str, str], cwd: Path, lines: list[str], replies: int, timeout: float = 240) -> list[dict]:
    """Send JSON-RPC ``lines`` as they are (bytes an SDK client would never write) to `wwt mcp` and read
    ``replies`` answers, each within ``timeout`` — an unanswered request fails instead of hanging."""
    import json
    import select

    server = subprocess.Popen([sys.executable, "-m", "wwt", "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, env=env, cwd=str(cwd))
    answers = []
    try:
        for line in lines:
            server.stdin.write(line.encode() + b"\n")
        server.stdin.flush()
        for _ in range(replies):
            ready, _, _ = select.select([server.stdout], [], [], timeout)
            assert ready, f"no reply after the answers to {[answer.get('id') for answer in answers]}"
            answers.append(json.loads(server.stdout.readline()))
    finally:
        server.kill()
        server.wait()
    return answers


HANDSHAKE = [
    '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", '
    '"capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}',
    '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
]


@pytest.mark.parametrize("engine", ["off", "on"])
def test_a_lone_surrogate_escape_in_a_request_still_gets_its_answer(world: dict, tmp_path: Path, engine: str) -> None:
    # JSON allows "\ud800" (RFC 8259 §8.2: an unpaired surrogate escape is syntactically valid); the SDK's
    # parser refused such a line and dropped the request without any reply, so the agent waited for ever.
    # The lone surrogate becomes U+FFFD; the request is answered like any other, and so is the next one.
    lone = ('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search_all", '
            '"arguments": {"query": "\\ud800 mix phx.server \\udfff"}}}')
    paired = ('{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search_all", '
              '"arguments": {"query": "phx.server \\ud83d\\ude80"}}}')
    after = '{"jsonrpc": "2.0", "id": 4, "method": "tools/list"}'
    env = dict(world["env"], WWT_ENGINE=engine, WWT_RUNTIME_DIR=str(tmp_path / "rt"), WWT_ENGINE_IDLE_S="30")
    (tmp_path / "rt").mkdir(mode=0o700)
    try:  # through the engine, the same reading layer sits in front of the SDK's transport on its socket
        init, *answers = raw_exchange(env, world["root"], [*HANDSHAKE, lone, paired, after], replies=4)
        assert bool(engine_pids(tmp_path / "rt")) == (engine == "on")
    finally:
        kill_engines_in(tmp_path / "rt")
    assert init["id"] == 1 and "result" in init
    by_id = {answer["id"]: answer for answer in answers}
    assert set(by_id) == {2, 3, 4}
    text = by_id[2]["result"]["content"][0]["text"]
    assert not by_id[2]["result"].get("isError") and SPOTTER[1] in text and "\ufffd mix phx.server \ufffd" in text
    assert "phx.server \U0001f680" in by_id[3]["result"]["content"][0]["text"]  # a real pair is kept as it is
    assert "tools" in by_id[4]["result"]
