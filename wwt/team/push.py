"""``wwt team push``: what changed in the shared projects goes to the team server.

The local archive (SQLite, opened read-only: ingest and search are never blocked) is compared with what the server
holds for this machine — chunk keys and which local vector each holds (``vector_hash``: the archive's ``embed_hash``
of the vector sent), message keys, session ids. What is missing, or holds no vector or another one than the
archive now has, is sent in batches (COPY into a temp table, then INSERT … ON CONFLICT DO UPDATE on the stable keys,
one transaction per batch with the machine's pushed count), what the server holds but the archive no longer shares
(forgotten, unshared, re-chunked) is deleted. A kill or a lost connection mid-push loses at most the batch in
flight; the next push starts from what the server committed, so a push is resumable and idempotent without a
separate log."""

from __future__ import annotations

import json
import sqlite3
import struct
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from wwt.store.reads import archive_projects
from wwt.token_cache import TokenCache, cache_path

BATCH = 500
BULK_MIN = 5_000  # chunks: a smaller push takes seconds either way (team-push)
CONNECTIONS = 2  # chunk batches sent at once: a second connection keeps a second server core busy (team-push)
MAX_POSITIONS = 255  # a tsvector lexeme keeps at most 255 positions
MAX_LEXEME_BYTES = 2046
MAX_LEXEMES_BYTES = 1_000_000  # a tsvector's lexemes fit in 1 MB


@dataclass
class PushReport:
    chunks: int = 0
    messages: int = 0
    sessions: int = 0
    deleted_chunks: int = 0
    deleted_sessions: int = 0
    deleted_messages: int = 0
    pending_vectors: int = 0  # chunks sent without a vector yet (sent again once embedded)
    bulk: bool = False  # the search indexes were dropped for the load and built after it
    indexes_built: list[str] = field(default_factory=list)
    seconds: float = 0.0
    batches: int = 0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def _lexeme(token: str) -> str | None:
    if not token or len(token.encode("utf-8")) > MAX_LEXEME_BYTES:
        return None
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def tsquery_literal(tokens: Iterable[str]) -> str:
    """Any of ``tokens`` as a tsquery literal."""
    return " | ".join(lex for lex in (_lexeme(t) for t in dict.fromkeys(tokens)) if lex)


def lexeme_counts(tokens: Sequence[str]) -> dict[str, int]:
    """wwt's own lexical tokens as tsvector lexemes with their term frequencies (PostgreSQL's parser never sees
    the text), within tsvector's limits: a lexeme of ≤ 2,046 bytes without NUL, ≤ 255 positions each (a term
    frequency above is cut there), ≤ 1 MB of lexemes in all (the rest, by first occurrence, is left out)."""
    found = Counter(tokens)  # first-occurrence order
    joined = "".join(found)
    if "\x00" not in joined and len(joined) * 4 <= MAX_LEXEMES_BYTES \
            and max(map(len, found), default=0) * 4 <= MAX_LEXEME_BYTES:  # the usual chunk: nothing to cut
        if "" not in found and max(found.values(), default=0) <= MAX_POSITIONS:
            return dict(found)
        return {t: n if n <= MAX_POSITIONS else MAX_POSITIONS for t, n in found.items() if t}
    counts: dict[str, int] = {}
    size = 0
    for token, n in found.items():
        if not token or "\x00" in token:
            continue
        token_bytes = len(token.encode("utf-8"))
        if token_bytes > MAX_LEXEME_BYTES or size + token_bytes > MAX_LEXEMES_BYTES:
            continue
        size += token_bytes
        counts[token] = min(n, MAX_POSITIONS)
    return counts


class Tsvector(dict):
    """Lexeme → term frequency, sent to PostgreSQL in tsvector's binary form (``tsvector_binary``)."""


# A lexeme's positions are 1..tf: the server reads only how many (``backend.bm25_top``), never where; the same
# positions for every lexeme keep the encoding a table look-up (KorQuAD chunks: 0.06 ms each, was 0.13 with positions).
_NUL_POSITIONS = [b"\x00" + struct.pack(f"!{tf + 1}H", tf, *range(1, tf + 1)) for tf in range(MAX_POSITIONS + 1)]


def tsvector_binary(counts: dict[str, int]) -> bytes:
    """tsvector's binary send format (PostgreSQL's tsvectorrecv): a count, then per lexeme in byte order its
    UTF-8 bytes, NUL, the number of positions and each position (weight bits 0)."""
    # str order is code point order, which is UTF-8's byte order: no need to encode before sorting
    lexemes = sorted(counts)
    return struct.pack("!i", len(lexemes)) + b"".join(map(
        bytes.__add__, [lexeme.encode("utf-8") for lexeme in lexemes], [_NUL_POSITIONS[counts[x]] for x in lexemes]))


def register_types(pg: Any) -> None:
    """Binary COPY of vectors (pgvector's adapter) and of tsvectors (``Tsvector``) on this connection."""
    from pgvector.psycopg import register_vector
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    class TsvectorDumper(Dumper):
        format = Format.BINARY
        oid = pg.adapters.types["tsvector"].oid

        def dump(self, obj: Any) -> bytes:
            return tsvector_binary(obj)

    register_vector(pg)
    pg.adapters.register_dumper(Tsvector, TsvectorDumper)


def _clean(value: Any) -> Any:
    """PostgreSQL text holds no NUL (a malformed log's field may)."""
    return value.replace("\x00", "\ufffd") if isinstance(value, str) else value


def _local(store_path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True, timeout=30)
    conn.execute("PRAGMA query_only = 1")
    return conn


def _marks(values: Sequence[str]) -> str:
    return ",".join("?" * len(values))


def local_sessions(conn: sqlite3.Connection, projects: Sequence[str]) -> list[tuple]:
    if not projects:
        return []
    return conn.execute(
        "SELECT s.session_id, s.root_session_id, s.platform, r.project, r.cwd, r.git_branch, s.started_at,"
        " s.ended_at, s.title FROM sessions s JOIN sessions r ON r.session_id = s.root_session_id"
        f" WHERE r.project IN ({_marks(projects)})", list(projects)).fetchall()


class _Remote:
    """What the server holds of one chunk row: the ``embed_hash`` of its vector (``PRE_V3`` for a vector sent
    before schema 3 said which; None when it holds none) and whether the row is Korean."""

    __slots__ = ("korean", "vector_hash")

    PRE_V3 = object()  # differs from every embed_hash: such a row is sent again once

    def __init__(self, vector_hash: Any, korean: bool) -> None:
        self.vector_hash = vector_hash
        self.korean = korean

    @property
    def has_vector(self) -> bool:
        return self.vector_hash is not None


def _remote_chunks(conn: Any, machine: str) -> dict[str, _Remote]:
    rows = conn.execute("SELECT chunk_key, embedding IS NOT NULL, vector_hash, korean FROM wwt_chunks"
                        " WHERE machine_id = %s", (machine,))
    return {key: _Remote((vector_hash or _Remote.PRE_V3) if has else None, korean)
            for key, has, vector_hash, korean in rows}


def _ensure_schema(conn: Any) -> None:
    """A server whose schema is older than this wwt's is migrated first when the tables are this role's (the
    background push goes on after an upgrade); a member is told in one line that the owner must (``migrate``)."""
    from wwt.team.schema import SCHEMA_VERSION, migrate, schema_version

    found = schema_version(conn)
    conn.commit()
    if found is not None and found < SCHEMA_VERSION:
        migrate(conn)


def push(config: Any, store_path: Path, progress: Callable[[str], None] | None = None,
         batch: int = BATCH, connections: int = CONNECTIONS) -> PushReport:
    """Push the shared projects of the archive at ``store_path`` for ``config`` (a ``TeamConfig``). Chunks go
    over ``connections`` connections at once: the server's HNSW insert is the push's cost, and one connection
    keeps one server core busy."""
    from wwt.team.config import adopt_new_projects
    from wwt.team.schema import build_search_indexes, connect, missing_search_indexes, owns_chunks

    started = time.monotonic()
    report = PushReport()
    conn = connect(config.url)
    local = _local(store_path)
    cache: TokenCache | None = None
    side: ThreadPoolExecutor | None = None  # the messages' push and a bulk push's index builds
    building: Future[list[str]] | None = None
    try:
        machine = config.machine_id
        for name in adopt_new_projects(config, archive_projects(local)):
            report.notes.append(f"now sharing {name} (joined with --share-all)")
        shared = list(config.shared)
        # one push per machine at a time (the worker's background push and `wwt team push`): the second waits
        conn.execute("SELECT pg_advisory_lock(hashtext('wwt_push:' || %s))", (machine,))
        conn.commit()
        _ensure_schema(conn)
        sessions = local_sessions(local, shared)
        session_ids = [row[0] for row in sessions]
        owner = owns_chunks(conn)
        conn.commit()
        if owner:
            report.indexes_built += _rebuild_left_indexes(conn, config.url)
        _ensure_stats(conn, machine)
        # sessions: small rows, upserted whole every push
        with conn.transaction():
            remote_sessions = {r[0] for r in conn.execute(
                "SELECT session_id FROM wwt_sessions WHERE machine_id = %s", (machine,))}
            gone = sorted(remote_sessions - set(session_ids))
            if gone:
                delete_chunks(conn, machine, "session_id = ANY(%s)", [gone])
                conn.execute("DELETE FROM wwt_messages WHERE machine_id = %s AND session_id = ANY(%s)", (machine, gone))
                conn.execute("DELETE FROM wwt_sessions WHERE machine_id = %s AND session_id = ANY(%s)", (machine, gone))
                report.deleted_sessions = len(gone)
            _upsert(conn, "wwt_sessions",
                    ["session_id", "root_session_id", "platform", "project", "cwd", "git_branch", "started_at",
                     "ended_at", "title"], [(machine, *row) for row in sessions], ["machine_id", "session_id"])
            report.sessions = len(sessions)
        # messages on their own connection meanwhile: the server has cores to spare while this process prepares
        # chunks (or, for a bulk push, while it builds the indexes)
        side = ThreadPoolExecutor(max_workers=2, thread_name_prefix="wwt-push-side")
        messages = side.submit(_push_messages, config.url, store_path, machine, session_ids, batch * 4)

        # chunks: what the server lacks, or holds without the vector the archive now has (none yet, or another
        # one: a chunk's vector may change under the same key — a new embed_hash, then its new vector)
        remote = _remote_chunks(conn, machine)
        conn.commit()
        rows = local.execute(
            "SELECT c.chunk_key, c.root_session_id, c.session_id, r.project, r.platform, r.git_branch, r.cwd,"
            " c.first_seq, c.last_seq, c.start_ts, c.end_ts, c.display_text, c.lexical_text,"
            " e.text_hash IS NOT NULL, c.embed_text, c.embed_hash"
            " FROM chunks c JOIN sessions r ON r.session_id = c.root_session_id"
            " LEFT JOIN embeddings e ON e.text_hash = c.embed_hash"
            f" WHERE r.project IN ({_marks(shared)}) ORDER BY c.id", shared).fetchall() if shared else []
        local_keys = {row[0] for row in rows}
        stale = sorted(set(remote) - local_keys)
        if stale:
            with conn.transaction():
                delete_chunks(conn, machine, "chunk_key = ANY(%s)", [stale])
            report.deleted_chunks = len(stale)
        todo = [row for row in rows if row[0] not in remote or (row[13] and remote[row[0]].vector_hash != row[15])]
        report.pending_vectors = sum(1 for row in rows if not row[13])
        cache = TokenCache(cache_path(store_path.parent / "index"), readonly=True)
        on_server = _server_chunks(conn)
        report.bulk = owner and bulk_wanted(len(todo), on_server) and _bulk_begin(conn, machine)
        terms: Counter = Counter()  # a bulk push's document frequencies, sent once after the load
        batches = (_prepare(local, todo[start:start + batch], machine, remote, cache)
                   for start in range(0, len(todo), batch))
        for sent in _send_parallel(config.url, machine, batches, max(1, connections),
                                   terms if report.bulk else None):
            report.chunks += sent
            report.batches += 1
            if progress:
                progress(f"{report.chunks}/{len(todo)} chunks")
        if report.bulk:  # the server builds the indexes while this connection sends the rest
            if progress:
                progress("building the search indexes")
            dropped = missing_search_indexes(conn)
            conn.commit()
            building = side.submit(build_search_indexes, config.url, dropped,
                                   on_server + sum(1 for row in todo if row[0] not in remote))
            _bulk_end(conn, machine, terms)
        if todo or stale:
            _push_language_axis(conn, local, machine, shared)

        report.messages, report.deleted_messages = messages.result()
        if building is not None:
            report.indexes_built += building.result()
            if progress:
                progress("search indexes built")
            conn.execute("SELECT pg_advisory_unlock(hashtext('wwt_bulk'))")
            conn.commit()
        with conn.transaction():
            conn.execute("UPDATE wwt_machines SET last_push = now() WHERE machine_id = %s", (machine,))
    finally:
        if side is not None:  # an error above: the messages and builds still end (or fail) before the locks go
            side.shutdown(wait=True)
        local.close()
        if cache is not None:
            cache.close()
        conn.close()  # the advisory lock goes with the session
    report.seconds = time.monotonic() - started
    return report


def _push_messages(url: str, store_path: Path, machine: str, session_ids: Sequence[str],
                   batch: int) -> tuple[int, int]:
    """The shared sessions' messages, by key (text never changes under a key: a rewritten message gets a new
    native id), on their own connections: messages sent, messages deleted."""
    from wwt.team.schema import connect

    conn = connect(url)
    local = _local(store_path)
    try:
        remote = {(s, n) for s, n in conn.execute(
            "SELECT session_id, native_id FROM wwt_messages WHERE machine_id = %s", (machine,))}
        conn.commit()
        rows = local.execute(
            "SELECT session_id, native_id, seq, role, kind, text, timestamp, tool_name FROM messages"
            f" WHERE session_id IN ({_marks(session_ids)})", list(session_ids)).fetchall() if session_ids else []
        extra = remote - {(m[0], m[1]) for m in rows}
        if extra:
            with conn.transaction():
                conn.execute(
                    "DELETE FROM wwt_messages m USING unnest(%s::text[], %s::text[]) AS x(s, n)"
                    " WHERE m.machine_id = %s AND m.session_id = x.s AND m.native_id = x.n",
                    ([s for s, _ in extra], [n for _, n in extra], machine))
        missing = [m for m in rows if (m[0], m[1]) not in remote]
        columns = ["session_id", "native_id", "seq", "role", "kind", "text", "timestamp", "tool_name"]
        for start in range(0, len(missing), batch):
            with conn.transaction():
                _upsert(conn, "wwt_messages", columns, [(machine, *m) for m in missing[start:start + batch]],
                        ["machine_id", "session_id", "native_id"], casts={"seq": "integer"})
        return len(missing), len(extra)
    finally:
        local.close()
        conn.close()


@dataclass
class _Batch:
    """One batch of chunk rows, ready to send: the rows (binary COPY values) and what they change in the machine's
    statistics (a row new to the server counts whole; a row sent again for its vector — an UPDATE that keeps the
    row's ``lex``: same key, same lexical text — counts its vector if the row held none, and a change of its
    Korean flag)."""

    rows: list[tuple]
    new_chunks: int
    new_vectors: int
    new_tokens: int
    terms: Counter
    new_korean: int = 0


def _prepare(local: sqlite3.Connection, part: list[tuple], machine: str, remote: dict[str, _Remote],
             tokens: TokenCache) -> _Batch:
    """A batch's rows with vectors (and the embed_hash each was read under) and lexical tokens: the tokens the
    lexical index kept when it indexed these texts (``wwt.token_cache``), Kiwi only for the rest. A row held on
    the server whose vector is pending again here (its embed_hash changed since the push chose it) is left out:
    the server keeps the vector it has until the new one exists."""
    from wwt.language_axis import is_korean
    from wwt.lexical import tokenize_many

    keys = [row[0] for row in part]
    vectors = {key: (embed_hash, blob) for key, embed_hash, blob in local.execute(
        "SELECT c.chunk_key, c.embed_hash, e.vector FROM chunks c JOIN embeddings e ON e.text_hash = c.embed_hash"
        f" WHERE c.chunk_key IN ({_marks(keys)})", keys)}
    token_lists = tokens.tokens([row[12] or "" for row in part], tokenize_many)
    out = _Batch([], 0, 0, 0, Counter())
    for row, tokens in zip(part, token_lists, strict=True):
        held = remote.get(row[0])
        vector_hash, blob = vectors.get(row[0], (None, None))
        if blob is None and held is not None and held.has_vector:
            continue
        vector = None if blob is None else np.frombuffer(blob, dtype=np.float32)
        lexemes = lexeme_counts(tokens)
        korean = is_korean(row[14] or "")  # as the local vector index tells a Korean chunk
        out.rows.append((machine, *map(_clean, row[:7]), int(row[7]), int(row[8]), *map(_clean, row[9:12]),
                         vector, Tsvector(lexemes), len(tokens), korean, vector_hash))
        if held is not None:  # an UPDATE: its lex (and so its tokens and terms) stays as counted
            out.new_vectors += (vector is not None) - held.has_vector
            out.new_korean += korean - held.korean
        else:
            out.new_korean += korean
            out.new_chunks += 1
            out.new_vectors += vector is not None
            out.new_tokens += len(tokens)
            out.terms.update(lexemes.keys())
    return out


def bulk_wanted(pending: int, on_server: int) -> bool:
    """Whether dropping the search indexes for this push and building them after it is faster than inserting into
    them: building HNSW runs ≈ 3× the rate of the push's two inserting connections (measured, team-push), so it
    pays when the push brings at least half as many chunks as the server already holds, and some thousands."""
    return pending >= BULK_MIN and 2 * pending > on_server


def _server_chunks(conn: Any) -> int:
    row = conn.execute("SELECT coalesce(sum(chunk_count), 0) FROM wwt_machines").fetchone()
    conn.commit()
    return int(row[0])


def _rebuild_left_indexes(conn: Any, url: str) -> list[str]:
    """The search indexes a bulk push killed between its drop and its build left missing, built — unless a bulk
    push is under way (it holds the bulk lock: its indexes are missing on purpose and it builds them itself)."""
    from wwt.team.schema import build_search_indexes, missing_search_indexes

    missing = missing_search_indexes(conn)
    if not missing or not conn.execute("SELECT pg_try_advisory_lock(hashtext('wwt_bulk'))").fetchone()[0]:
        conn.commit()
        return []
    try:
        conn.commit()
        return build_search_indexes(url, missing, _server_chunks(conn))
    finally:
        conn.execute("SELECT pg_advisory_unlock(hashtext('wwt_bulk'))")
        conn.commit()


def _bulk_begin(conn: Any, machine: str) -> bool:
    """Drop the search indexes for a big push (one bulk push on the server at a time; a table other sessions hold
    for more than a few seconds is left alone: the push then inserts as usual). The machine's term frequencies are
    marked unknown until the load ends, so a push killed meanwhile has them rebuilt (``_ensure_stats``)."""
    import psycopg

    from wwt.team.schema import SEARCH_INDEXES

    locked = conn.execute("SELECT pg_try_advisory_lock(hashtext('wwt_bulk'))").fetchone()[0]
    conn.commit()  # the lock is the session's; the drop below must be its own transaction
    if not locked:
        return False
    try:
        with conn.transaction():
            conn.execute("SET LOCAL lock_timeout = '5s'")
            for name in SEARCH_INDEXES:
                conn.execute(f"DROP INDEX IF EXISTS {name}")
            conn.execute("UPDATE wwt_machines SET stats_ok = false WHERE machine_id = %s", (machine,))
    except psycopg.errors.LockNotAvailable:  # not granted in time: push the usual way
        conn.execute("SELECT pg_advisory_unlock(hashtext('wwt_bulk'))")
        conn.commit()
        return False
    return True


def _bulk_end(conn: Any, machine: str, terms: Counter) -> None:
    """A bulk push's document frequencies in one statement; the machine's statistics are known again."""
    with conn.transaction():
        if terms:
            _add_terms(conn, machine, terms)
        conn.execute("UPDATE wwt_machines SET stats_ok = true WHERE machine_id = %s", (machine,))


def _add_terms(conn: Any, machine: str, terms: Counter) -> None:
    """Add ``terms``' document frequencies to the machine's (sorted: two connections of one machine lock the same
    term rows in the same order)."""
    ordered = sorted(terms)
    conn.execute(
        "INSERT INTO wwt_terms (term, machine_id, df) SELECT t, %s, n FROM unnest(%s::text[], %s::int[])"
        " AS x(t, n) ORDER BY t ON CONFLICT (term, machine_id) DO UPDATE SET df = wwt_terms.df + excluded.df",
        (machine, ordered, [terms[t] for t in ordered]))


def _send_parallel(url: str, machine: str, batches: Iterable[_Batch], connections: int,
                   bulk_terms: Counter | None = None) -> Iterator[int]:
    """Send ``batches`` over up to ``connections`` connections, each batch one transaction; yields each batch's
    size as it commits, in order. The next batch is prepared (tokenized) while the others are sent. The first
    error stops the rest (what committed stays: the next push resumes from it). With ``bulk_terms`` the batches'
    document frequencies are gathered there instead of sent with each batch."""
    from wwt.team.schema import connect

    local = threading.local()
    opened: list[Any] = []
    guard = threading.Lock()

    def send(item: _Batch) -> int:
        if not item.rows:  # every row of it left out (``_prepare``)
            return 0
        pg = getattr(local, "pg", None)
        if pg is None:
            pg = connect(url)
            with guard:
                opened.append(pg)
            register_types(pg)
            local.pg = pg
        _send(pg, machine, item, with_terms=bulk_terms is None)
        return len(item.rows)

    inflight: deque[Future[int]] = deque()
    pool = ThreadPoolExecutor(max_workers=connections, thread_name_prefix="wwt-push")
    try:
        for item in batches:
            inflight.append(pool.submit(send, item))
            if bulk_terms is not None:
                bulk_terms.update(item.terms)
            if len(inflight) >= connections:
                yield inflight.popleft().result()
        while inflight:
            yield inflight.popleft().result()
    finally:
        for future in inflight:
            future.cancel()
        pool.shutdown(wait=True)
        for pg in opened:
            pg.close()


_CHUNK_COLUMNS = [
    ("machine_id", "text"), ("chunk_key", "text"), ("session_id", "text"), ("source_session_id", "text"),
    ("project", "text"), ("platform", "text"), ("git_branch", "text"), ("cwd", "text"), ("first_seq", "int4"),
    ("last_seq", "int4"), ("start_ts", "text"), ("end_ts", "text"), ("text", "text"), ("embedding", "vector"),
    ("lex", "tsvector"), ("lex_len", "int4"), ("korean", "bool"), ("vector_hash", "text")]
_KEPT_ON_UPDATE = ("machine_id", "chunk_key", "lex", "lex_len")  # a row sent again keeps what its terms counted


_SQL_TYPES = {"int4": "integer", "bool": "boolean"}


def _send(pg: Any, machine: str, item: _Batch, with_terms: bool = True) -> None:
    """One batch in one transaction: rows (binary COPY into a temp table, then INSERT … ON CONFLICT: COPY FROM
    does not run row-level security checks, INSERT does), then the terms' document frequencies (sorted: two
    connections of one machine lock the same term rows in the same order), then the machine's counters."""
    names = [c for c, _ in _CHUNK_COLUMNS]
    with pg.transaction():
        pg.execute("CREATE TEMP TABLE IF NOT EXISTS tmp_push_chunks ("
                   + ", ".join(f"{c} {_SQL_TYPES.get(t, t)}" for c, t in _CHUNK_COLUMNS)
                   + ") ON COMMIT DELETE ROWS")
        with pg.cursor().copy(f"COPY tmp_push_chunks ({', '.join(names)}) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types([t for _, t in _CHUNK_COLUMNS])
            for row in item.rows:
                copy.write_row(row)
        updates = ", ".join(f"{c} = excluded.{c}" for c in names if c not in _KEPT_ON_UPDATE)
        pg.execute(f"INSERT INTO wwt_chunks ({', '.join(names)}) SELECT {', '.join(names)} FROM tmp_push_chunks"
                   f" ON CONFLICT (machine_id, chunk_key) DO UPDATE SET {updates}")
        if item.terms and with_terms:
            _add_terms(pg, machine, item.terms)
        pg.execute(
            "UPDATE wwt_machines SET pushed_chunks = pushed_chunks + %s, chunk_count = chunk_count + %s,"
            " vector_count = vector_count + %s, lex_total = lex_total + %s, korean_count = korean_count + %s,"
            " last_push = now() WHERE machine_id = %s",
            (len(item.rows), item.new_chunks, item.new_vectors, item.new_tokens, item.new_korean, machine))


def delete_chunks(conn: Any, machine: str, where: str, args: Sequence[Any]) -> int:
    """Delete this machine's chunks matching ``where`` and take them out of its statistics (term frequencies,
    counts), in the caller's transaction. The number of chunks deleted."""
    row = conn.execute(
        f"WITH gone AS (DELETE FROM wwt_chunks WHERE machine_id = %s AND {where}"
        "  RETURNING lex, lex_len, embedding IS NOT NULL AS has_vector, korean),"
        " terms AS (SELECT u.lexeme AS term, count(*) AS n FROM gone, unnest(gone.lex) AS u GROUP BY u.lexeme),"
        " fixed AS (UPDATE wwt_terms w SET df = w.df - terms.n FROM terms"  # runs though nothing reads it
        "  WHERE w.machine_id = %s AND w.term = terms.term)"
        " SELECT count(*), count(*) FILTER (WHERE has_vector), coalesce(sum(lex_len), 0),"
        " count(*) FILTER (WHERE korean) FROM gone", (machine, *args, machine)).fetchone()
    removed, vectors, tokens, korean = int(row[0]), int(row[1]), int(row[2]), int(row[3])
    if removed:
        conn.execute("DELETE FROM wwt_terms WHERE machine_id = %s AND df <= 0", (machine,))
        conn.execute("UPDATE wwt_machines SET chunk_count = chunk_count - %s, vector_count = vector_count - %s,"
                     " lex_total = lex_total - %s, korean_count = korean_count - %s WHERE machine_id = %s",
                     (removed, vectors, tokens, korean, machine))
    return removed


def _ensure_stats(conn: Any, machine: str) -> None:
    """A machine that pushed before the statistics existed (schema 1), or whose counts were lost, rebuilds its
    own from the rows the server holds — once."""
    row = conn.execute("SELECT stats_ok FROM wwt_machines WHERE machine_id = %s", (machine,)).fetchone()
    if row is None or row[0]:
        conn.commit()
        return
    with conn.transaction():
        conn.execute("DELETE FROM wwt_terms WHERE machine_id = %s", (machine,))
        conn.execute("INSERT INTO wwt_terms (term, machine_id, df) SELECT u.lexeme, %s, count(*)"
                     " FROM wwt_chunks c, unnest(c.lex) AS u WHERE c.machine_id = %s GROUP BY u.lexeme",
                     (machine, machine))
        conn.execute(
            "UPDATE wwt_machines m SET chunk_count = s.n, vector_count = s.v, lex_total = s.t, korean_count = s.k,"
            " stats_ok = true FROM (SELECT count(*) AS n, count(embedding) AS v, coalesce(sum(lex_len), 0) AS t,"
            " count(*) FILTER (WHERE korean) AS k FROM wwt_chunks WHERE machine_id = %s) AS s"
            " WHERE m.machine_id = %s", (machine, machine))


def _push_language_axis(conn: Any, local: sqlite3.Connection, machine: str, shared: Sequence[str]) -> None:
    """This machine's language axis (``wwt.language_axis.fit``) over an even sample of its shared chunks with
    vectors — what the team search's vector leg corrects by, as the local index does with its own."""
    from wwt.language_axis import fit, is_korean, sample_ids

    if not shared:
        return
    ids = [row[0] for row in local.execute(
        "SELECT c.id FROM chunks c JOIN sessions r ON r.session_id = c.root_session_id"
        " JOIN embeddings e ON e.text_hash = c.embed_hash"
        f" WHERE r.project IN ({_marks(shared)})", list(shared))]
    chosen = sample_ids(ids)
    sample = []  # only the sample's texts and vectors are read (an archive's whole would be 100s of MB)
    for start in range(0, len(chosen), 500):
        part = chosen[start:start + 500]
        sample += local.execute("SELECT c.id, c.embed_text, e.vector FROM chunks c"
                                " JOIN embeddings e ON e.text_hash = c.embed_hash"
                                f" WHERE c.id IN ({_marks(part)})", part).fetchall()
    axis = None
    if sample:
        vectors = np.stack([np.frombuffer(r[2], dtype=np.float32) for r in sample])
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        axis = fit(vectors, [is_korean(r[1] or "") for r in sample], len(ids))
    with conn.transaction():
        conn.execute("UPDATE wwt_machines SET language_axis = %s::jsonb WHERE machine_id = %s",
                     (None if axis is None else json.dumps(axis.to_json()), machine))


def _upsert(conn: Any, table: str, columns: list[str], rows: list[tuple], key: list[str],
            casts: dict[str, str] | None = None) -> None:
    """COPY ``rows`` (machine_id first, then ``columns``) into a temp table, then INSERT … ON CONFLICT (key) DO
    UPDATE into ``table``. Must run inside a transaction."""
    if not rows:
        return
    casts = casts or {}
    cols = ["machine_id", *columns]
    conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS tmp_{table} ({', '.join(c + ' text' for c in cols)})"
                 " ON COMMIT DELETE ROWS")
    with conn.cursor().copy(f"COPY tmp_{table} ({', '.join(cols)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row([None if v is None else str(v).replace("\x00", "\ufffd") for v in row])
    select = ", ".join(f"{c}::{casts[c]}" if c in casts else c for c in cols)
    updates = ", ".join(f"{c} = excluded.{c}" for c in cols if c not in key)
    conn.execute(f"INSERT INTO {table} ({', '.join(cols)}) SELECT {select} FROM tmp_{table}"
                 f" ON CONFLICT ({', '.join(key)}) DO UPDATE SET {updates}")
    conn.execute(f"TRUNCATE tmp_{table}")


def unshare_remote(conn: Any, machine_id: str, project: str) -> int:
    """Delete this machine's rows of ``project`` from the server; the number of sessions removed."""
    with conn.transaction():
        ids = [r[0] for r in conn.execute(
            "SELECT session_id FROM wwt_sessions WHERE machine_id = %s AND project = %s", (machine_id, project))]
        delete_chunks(conn, machine_id, "project = %s", [project])
        if ids:
            conn.execute("DELETE FROM wwt_messages WHERE machine_id = %s AND session_id = ANY(%s)", (machine_id, ids))
            conn.execute("DELETE FROM wwt_sessions WHERE machine_id = %s AND session_id = ANY(%s)", (machine_id, ids))
    return len(ids)


def forget_remote(conn: Any, machine_id: str, session_ids: Sequence[str]) -> int:
    """Delete these sessions (ids of roots and subagents) of this machine from the server; sessions removed."""
    ids = list(session_ids)
    with conn.transaction():
        delete_chunks(conn, machine_id, "session_id = ANY(%s)", [ids])
        conn.execute("DELETE FROM wwt_messages WHERE machine_id = %s AND session_id = ANY(%s)", (machine_id, ids))
        removed = conn.execute("DELETE FROM wwt_sessions WHERE machine_id = %s AND session_id = ANY(%s)",
                               (machine_id, ids)).rowcount
    return removed


def counts(conn: Any, machine_id: str) -> dict[str, int]:
    out = {}
    for table in ("wwt_sessions", "wwt_messages", "wwt_chunks"):
        out[table.removeprefix("wwt_")] = conn.execute(
            f"SELECT count(*) FROM {table} WHERE machine_id = %s", (machine_id,)).fetchone()[0]
    conn.commit()
    return out
