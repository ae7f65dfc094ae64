"""Each agent's real CLI, installed from npm, end to end against a fake model on 127.0.0.1 (issue 25).

Per agent, in a fresh HOME holding one older Claude Code session (another project) to recall:

1. ``wwt setup --agent <agent>`` (this checkout's ``wwt`` as a subprocess; the agent's binary on PATH, so setup
   registers the MCP server through the agent's own ``mcp add``) — it must not fall back to editing files;
2. the agent's own ``mcp list`` shows wwt connected (the agent started ``wwt mcp`` and it answered);
3. one real non-interactive session: the fake model calls wwt's search tool, the CLI runs it through MCP, and
   the fake model sees the tool's result — which holds the older session's words — and answers in text;
4. the session-end hook fires (``wwt hook`` queues the transcript: ``ingest.log`` says so) and the new session
   becomes searchable (``wwt search --all --json``) with the agent's platform, the project, a resume line that
   ``cd``s there or names the agent's resume command, and the roles user/assistant/tool in the archive;
5. ``wwt setup --uninstall --agent <agent>`` and the agent's ``mcp list`` no longer names wwt;
6. no request tried to leave 127.0.0.1 (the proxy every CLI is given records CONNECTs and absolute URLs).

A CLI that cannot be installed or run here is skipped with the reason; it never passes."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import time
from pathlib import Path

import clis
import pytest
from agents import AGENTS, PROMPT, Agent
from fake_model import ANSWER, FakeModel
from world import PLANTED_SESSION, QUERY, World

from wwt.models import RESUME_IN_CWD
from wwt.own_tools import is_own_tool

pytestmark = pytest.mark.agents

REPO = Path(__file__).resolve().parents[2]
FIXTURE_OUT = REPO / "tests" / "fixtures" / "agents"
HOOK_WAIT_S = 120
# Words of the planted session that the recall session holds only inside wwt's reply (its prompt asks otherwise)
OWN_REPLY_PHRASE = "refund path truncates instead of rounding"


def _selected() -> list[str]:
    raw = os.environ.get("WWT_AGENTS", "")
    wanted = [k.strip() for k in raw.split(",") if k.strip()] if raw else list(AGENTS)
    return [k for k in wanted if k in AGENTS]


def _install(agent: Agent) -> list[Path]:
    try:
        _exe, path_dirs = clis.install(agent.package, agent.binary)
    except clis.Unavailable as exc:
        pytest.skip(f"{agent.package}: {exc}")
    return path_dirs


def _roles(world: World, session_id: str) -> list[tuple[str, str, str | None]]:
    db = world.home / ".wwt" / "wwt.sqlite3"
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute("SELECT role, kind, tool_name FROM messages WHERE session_id = ? ORDER BY seq",
                            (session_id,)).fetchall()
    finally:
        conn.close()


def _archived_text(world: World, session_id: str, own_tools_only: bool = False) -> str:
    """The archived text of a session's messages (only wwt's own tool results, if asked)."""
    db = world.home / ".wwt" / "wwt.sqlite3"
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        rows = conn.execute("SELECT kind, tool_name, text FROM messages WHERE session_id = ? ORDER BY seq",
                            (session_id,)).fetchall()
    finally:
        conn.close()
    return "\n".join(str(text) for kind, name, text in rows
                     if not own_tools_only or (kind == "tool_result" and name and is_own_tool(name)))


def _stamp(path: Path) -> tuple[int, int]:
    """A transcript's size and mtime (a SQLite store's with its WAL): new or changed since."""
    stamps = [(p.stat().st_size, p.stat().st_mtime_ns) for p in (path, Path(f"{path}-wal")) if p.exists()]
    return (sum(s for s, _ in stamps), max((m for _, m in stamps), default=0))


def _wait_for_session(world: World, marker: str, platform: str) -> list[dict]:
    deadline = time.monotonic() + HOOK_WAIT_S
    while True:
        found = [r for r in world.search(marker) if r.get("platform") == platform
                 and any(marker in c.get("text", "") for c in r.get("chunks") or [])]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(2)


def _replacements(world: World) -> list[tuple[str, str]]:
    pairs = []
    for real, fake in ((os.path.realpath(world.home), "/home/dev"), (str(world.home), "/home/dev"),
                       (os.path.realpath(world.root), "/tmp/wwt-e2e"), (str(world.root), "/tmp/wwt-e2e")):
        pairs.append((re.sub(r"[^A-Za-z0-9]", "-", real), re.sub(r"[^A-Za-z0-9]", "-", fake)))  # Claude's folders
    return pairs


def scrub(text: str, world: World) -> str:
    """Machine-specific parts of a transcript → stable placeholders (the fixture is a format sample)."""
    for real, fake in _replacements(world):
        text = text.replace(real, fake)
    for real, fake in ((os.path.realpath(world.home), "/home/dev"), (str(world.home), "/home/dev"),
                       (os.path.realpath(world.root), "/tmp/wwt-e2e"), (str(world.root), "/tmp/wwt-e2e"),
                       (str(REPO), "/opt/whatwasthat"), (world.fake.url, "http://127.0.0.1:8765"),
                       (world.env.get("WWT_MODEL_DIR", "\0"), "/opt/wwt-model"),
                       (os.path.expanduser("~") + "/", "/home/builder/")):
        text = text.replace(real, fake)
    text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:8765", text)
    for name in {os.uname().nodename, os.environ.get("USER", ""), os.environ.get("LOGNAME", "")} - {"", "root", "dev"}:
        text = text.replace(name, "host")
    return text


def copy_store(path: Path, target: Path, world: World) -> None:
    """A consistent copy of a SQLite transcript store (WAL included), every text cell scrubbed, vacuumed."""
    source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    copy = sqlite3.connect(target)
    try:
        source.backup(copy)
        copy.execute("PRAGMA journal_mode=DELETE")
        tables = [r[0] for r in copy.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
        for table in tables:
            columns = [r[1] for r in copy.execute(f'PRAGMA table_info("{table}")')]
            for column in columns:
                rows = copy.execute(f'SELECT rowid, "{column}" FROM "{table}" WHERE typeof("{column}") = \'text\'').fetchall()
                for rowid, value in rows:
                    clean = scrub(value, world)
                    if clean != value:
                        copy.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = ?', (clean, rowid))
        copy.commit()
        copy.execute("VACUUM")
    finally:
        source.close()
        copy.close()


def keep_fixtures(agent: Agent, world: World, files: list[Path]) -> None:
    if os.environ.get("WWT_WRITE_AGENT_FIXTURES") != "1":
        return
    out = FIXTURE_OUT / agent.platform
    if out.exists():
        shutil.rmtree(out)
    for path in files:
        target = out / scrub(path.relative_to(world.home).as_posix(), world)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix in (".db", ".sqlite"):
            copy_store(path, target, world)
        else:
            target.write_text(scrub(path.read_text(encoding="utf-8"), world), encoding="utf-8")


@pytest.mark.parametrize("key", _selected())
def test_agent_cli_end_to_end(key: str, tmp_path: Path, model_dir: Path) -> None:
    agent = AGENTS[key]
    path_dirs = _install(agent)
    marker = f"quokka{key}fjord"
    with FakeModel(QUERY, dump=tmp_path / "requests") as fake:
        world = World(tmp_path, fake, path_dirs)
        world.build(model_dir, {})
        world.env.update(agent.env(world))
        agent.configure(world)
        timings: dict[str, float] = {}
        try:
            _flow(agent, world, marker, timings)
        finally:
            world.wwt("engine", "stop", timeout=60)
        print(f"\n{key} timings: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))


def _flow(agent: Agent, world: World, marker: str, timings: dict[str, float]) -> None:
    why = world.transcript_log
    # 1. setup through the agent's own CLI
    setup = world.wwt("setup", "--agent", agent.key)
    timings["setup"] = setup.seconds
    assert setup.returncode == 0, why()
    assert "CLI did not do it" not in setup.stdout + setup.stderr, why()
    if agent.after_setup is not None:
        agent.after_setup(world)

    # 2. the agent's own mcp list: wwt connected
    listed = world.run(agent.mcp_list, timeout=120)
    timings["mcp list"] = listed.seconds
    assert agent.connected.search(listed.stdout + listed.stderr), why()

    # 3. one real session: the tool is called through MCP, its result reaches the model, the answer comes back
    before = {p: _stamp(p) for p in agent.transcripts(world)}
    session = world.run(agent.session(world, PROMPT.format(marker=marker)), timeout=300)
    timings["session"] = session.seconds
    assert session.returncode == 0, why()
    assert world.fake.calls(), f"the fake model never called wwt's tool (offered: {sorted(world.fake.offered())})\n{why()}"
    results = world.fake.tool_results()
    assert results and "reconcile" in results[-1], why()
    assert "session(s) for" in results[-1], why()  # wwt's own reply header, not an error line
    assert ANSWER in session.stdout, why()

    # 4. the session-end hook queued the new transcript; it is searchable and parsed right
    new = [p for p in agent.transcripts(world) if before.get(p) != _stamp(p)]
    assert new, f"no new transcript\n{why()}"
    keep_fixtures(agent, world, new + (agent.side_files(world) if agent.side_files else []))
    start = time.monotonic()
    found = _wait_for_session(world, marker, agent.platform)
    timings["hook to searchable"] = time.monotonic() - start
    log = (world.home / ".wwt" / "ingest.log").read_text(encoding="utf-8", errors="replace") \
        if (world.home / ".wwt" / "ingest.log").exists() else ""
    if agent.hooked:
        assert re.search(rf"hook\[\d+\] queued .* \({re.escape(agent.platform)}\)", log), \
            f"the hook never queued a transcript\n{log}\n{why()}"
    else:  # no hook: the engine's scan of agents without hooks queued it
        assert "file(s) of agents without hooks" in log, f"the engine's scan never queued it\n{log}\n{why()}"
    assert found, f"the new session is not searchable by its marker\n{log}\n{why()}"
    hit = found[0]
    assert hit["project"] == world.project.name, hit
    line = hit["resume_line"] or ""
    assert hit["session_id"] in line and agent.binary in line, hit
    if agent.platform in RESUME_IN_CWD:  # resumed per project folder: the line cds there first
        assert line.startswith((f"cd {world.project} && ", f"cd {os.path.realpath(world.project)} && ")), hit
    deadline = time.monotonic() + HOOK_WAIT_S  # a scan may have archived the store mid-session: the next one
    while True:                                 # (its size and mtime changed) brings the rest
        roles = _roles(world, hit["session_id"])
        if ("assistant", "text", None) in roles or time.monotonic() > deadline:
            break
        time.sleep(2)
    kinds = {(r, k) for r, k, _t in roles}
    assert ("user", "text") in kinds and ("assistant", "text") in kinds, roles
    assert any(t and "search_memory" in t for _r, _k, t in roles), f"wwt's tool call is not in the archive: {roles}"

    # wwt does not remember itself: words that reach the recall session only inside wwt's own reply (quoted from
    # the planted session) find the planted session, never the recall session that quoted them
    quoted = _archived_text(world, hit["session_id"], own_tools_only=True)
    assert OWN_REPLY_PHRASE.split()[-1] in quoted, f"wwt's reply is not archived with the session: {quoted[:2000]}"
    echoes = world.search(OWN_REPLY_PHRASE)
    assert echoes and echoes[0]["session_id"] == PLANTED_SESSION, json.dumps(echoes, indent=1)[:6000]
    # the recall session may trail as a neighbour in meaning (its own prompt is about refunds), never by the
    # quoted words: none of its indexed text holds them
    for echo in echoes[1:]:
        indexed = " ".join(chunk["text"] for chunk in echo["chunks"]).lower()
        assert echo["session_id"] != hit["session_id"] or "truncates" not in indexed, json.dumps(echoes, indent=1)

    # 5. uninstall leaves the agent's own mcp list without wwt
    gone = world.wwt("setup", "--uninstall", "--agent", agent.key)
    assert gone.returncode == 0, why()
    after = world.run(agent.mcp_list, timeout=120)
    assert not agent.listed.search(after.stdout), why()

    # 6. nothing tried to leave 127.0.0.1
    stray = [r for r in world.fake.refused() if r not in agent.refusals_allowed]
    assert stray == [], f"requests that tried to leave 127.0.0.1: {stray}"
    print(json.dumps({"agent": agent.key, "hit": {k: hit[k] for k in ("platform", "project", "resume_line")}}))
