"""The team database: a versioned schema (``wwt_meta.schema_version``), created or migrated under an advisory lock
by ``wwt team join``. Every row carries the machine it came from and the PostgreSQL role that wrote it
(``owner``); row-level security lets a role write only rows of machines it registered, and every member of the
group role ``wwt_team`` read everything (what is in the database was shared on purpose)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wwt.errors import WwtError

SCHEMA_VERSION = 3
DIM = 384
GROUP_ROLE = "wwt_team"
CONNECT_TIMEOUT_S = 5

# The search indexes a bulk push drops and builds again after its load (``wwt.team.push``): name → definition.
SEARCH_INDEXES = {
    "wwt_chunks_embedding": "CREATE INDEX IF NOT EXISTS wwt_chunks_embedding ON wwt_chunks"
                            " USING hnsw (embedding vector_cosine_ops)",
    "wwt_chunks_lex": "CREATE INDEX IF NOT EXISTS wwt_chunks_lex ON wwt_chunks USING gin (lex)",
}
BUILD_MEMORY_CAP_MB = 1024  # maintenance_work_mem for a build: the HNSW graph in memory, within a modest server

_V1 = f"""
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE IF NOT EXISTS wwt_machines (
    machine_id text PRIMARY KEY,
    label text NOT NULL,
    owner name NOT NULL DEFAULT current_user,
    joined_at timestamptz NOT NULL DEFAULT now(),
    last_push timestamptz,
    pushed_chunks bigint NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS wwt_sessions (
    machine_id text NOT NULL REFERENCES wwt_machines ON DELETE CASCADE,
    session_id text NOT NULL,
    root_session_id text NOT NULL,
    platform text NOT NULL,
    project text, cwd text, git_branch text, started_at text, ended_at text, title text,
    owner name NOT NULL DEFAULT current_user,
    PRIMARY KEY (machine_id, session_id)
);
CREATE INDEX IF NOT EXISTS wwt_sessions_project ON wwt_sessions(project);
CREATE TABLE IF NOT EXISTS wwt_messages (
    machine_id text NOT NULL REFERENCES wwt_machines ON DELETE CASCADE,
    session_id text NOT NULL,
    native_id text NOT NULL,
    seq integer NOT NULL,
    role text NOT NULL, kind text NOT NULL, text text NOT NULL,
    timestamp text, tool_name text,
    owner name NOT NULL DEFAULT current_user,
    PRIMARY KEY (machine_id, session_id, native_id)
);
CREATE TABLE IF NOT EXISTS wwt_chunks (
    id bigserial UNIQUE,
    machine_id text NOT NULL REFERENCES wwt_machines ON DELETE CASCADE,
    chunk_key text NOT NULL,
    session_id text NOT NULL,
    source_session_id text NOT NULL,
    project text, platform text, git_branch text, cwd text,
    first_seq integer NOT NULL, last_seq integer NOT NULL,
    start_ts text, end_ts text,
    text text NOT NULL,
    embedding vector({DIM}),
    lex tsvector NOT NULL,
    lex_len integer NOT NULL,
    owner name NOT NULL DEFAULT current_user,
    PRIMARY KEY (machine_id, chunk_key)
);
CREATE INDEX IF NOT EXISTS wwt_chunks_project ON wwt_chunks(project);
"""

# v2: the lexical leg's statistics kept exact as rows arrive and leave, so a search never counts 1M rows — per
# machine (each role writes only its own): chunk / vector / Korean-chunk counts and the token total (BM25's N and
# avgdl), a term's document frequency (idf); and what the vector leg's language correction needs, as local search
# has it (``wwt.language_axis``): whether a chunk is Korean, and each machine's fitted axis. A machine whose
# statistics are not known yet (pushed before v2) rebuilds its own on its next push (``stats_ok``).
_V2 = """
ALTER TABLE wwt_machines ADD COLUMN IF NOT EXISTS chunk_count bigint NOT NULL DEFAULT 0;
ALTER TABLE wwt_machines ADD COLUMN IF NOT EXISTS vector_count bigint NOT NULL DEFAULT 0;
ALTER TABLE wwt_machines ADD COLUMN IF NOT EXISTS lex_total bigint NOT NULL DEFAULT 0;
ALTER TABLE wwt_machines ADD COLUMN IF NOT EXISTS stats_ok boolean NOT NULL DEFAULT false;
ALTER TABLE wwt_machines ADD COLUMN IF NOT EXISTS korean_count bigint NOT NULL DEFAULT 0;
ALTER TABLE wwt_machines ADD COLUMN IF NOT EXISTS language_axis jsonb;
ALTER TABLE wwt_chunks ADD COLUMN IF NOT EXISTS korean boolean NOT NULL DEFAULT false;
CREATE TABLE IF NOT EXISTS wwt_terms (
    term text NOT NULL,
    machine_id text NOT NULL REFERENCES wwt_machines ON DELETE CASCADE,
    df integer NOT NULL,
    owner name NOT NULL DEFAULT current_user,
    PRIMARY KEY (term, machine_id)
);
CREATE INDEX IF NOT EXISTS wwt_terms_machine ON wwt_terms(machine_id);
"""

# v3: which local vector a chunk row holds — the archive's ``embed_hash`` of the vector sent (NULL while the row
# holds none; NULL too for a row pushed before v3, which the next push sends again once). A chunk whose vector
# changes under the same key (a new ``embed_hash``, then a new vector) is sent again by the next push.
_V3 = """
ALTER TABLE wwt_chunks ADD COLUMN IF NOT EXISTS vector_hash text;
"""

_TABLES = ("wwt_machines", "wwt_sessions", "wwt_messages", "wwt_chunks", "wwt_terms")


def _rls_sql() -> str:
    own_machine = ("EXISTS (SELECT 1 FROM wwt_machines m WHERE m.machine_id = {t}.machine_id "
                   "AND m.owner = current_user)")
    parts = []
    for table in _TABLES:
        check = "owner = current_user" + ("" if table == "wwt_machines" else " AND " + own_machine.format(t=table))
        parts.append(f"""
ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
ALTER TABLE {table} FORCE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS wwt_read ON {table};
CREATE POLICY wwt_read ON {table} FOR SELECT USING (true);
DROP POLICY IF EXISTS wwt_write ON {table};
CREATE POLICY wwt_write ON {table} FOR INSERT WITH CHECK ({check});
DROP POLICY IF EXISTS wwt_update ON {table};
CREATE POLICY wwt_update ON {table} FOR UPDATE USING (owner = current_user) WITH CHECK ({check});
DROP POLICY IF EXISTS wwt_delete ON {table};
CREATE POLICY wwt_delete ON {table} FOR DELETE USING (owner = current_user);""")
    parts.append(f"""
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{GROUP_ROLE}') THEN CREATE ROLE {GROUP_ROLE} NOLOGIN; END IF;
END $$;
GRANT SELECT, INSERT, UPDATE, DELETE ON {", ".join(_TABLES)} TO {GROUP_ROLE};
GRANT SELECT ON wwt_meta TO {GROUP_ROLE};
GRANT USAGE ON SEQUENCE wwt_chunks_id_seq TO {GROUP_ROLE};""")
    return "\n".join(parts)


def connect(url: str, autocommit: bool = False, timeout: int = CONNECT_TIMEOUT_S) -> Any:
    """A psycopg connection, or one line naming the server (password masked) and why not."""
    import psycopg

    from wwt.team.config import masked

    try:
        return psycopg.connect(url, connect_timeout=timeout, autocommit=autocommit)
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise WwtError(f"team server {masked(url)} unreachable: {reason}") from None


def schema_version(conn: Any) -> int | None:
    row = conn.execute("SELECT to_regclass('wwt_meta')").fetchone()
    if row[0] is None:
        return None
    got = conn.execute("SELECT value FROM wwt_meta WHERE key = 'schema_version'").fetchone()
    return int(got[0]) if got else None


def migrate(conn: Any) -> int:
    """Create or bring the schema to SCHEMA_VERSION (one transaction, under an advisory lock). A newer schema is
    refused in one line; a member without rights to create tables can still join an existing current schema, and
    is told in one line that an older one waits for the tables' owner to migrate it (only the owner may ALTER)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('wwt_team_schema'))")
        found = schema_version(conn)
        if found is not None and found > SCHEMA_VERSION:
            raise WwtError(f"the team database has schema {found}; this wwt knows {SCHEMA_VERSION}: upgrade wwt")
        if found == SCHEMA_VERSION:
            return found
        if found is not None and not owns_chunks(conn):
            raise WwtError(f"the team database has schema {found}; this wwt uses {SCHEMA_VERSION} and only the"
                           " owner of its tables can migrate it: ask them to run `wwt team join <url>` once")
        conn.execute("CREATE TABLE IF NOT EXISTS wwt_meta (key text PRIMARY KEY, value text NOT NULL)")
        conn.execute(_V1)
        conn.execute(";\n".join(SEARCH_INDEXES.values()))
        conn.execute(_V2)
        conn.execute(_V3)
        conn.execute(_rls_sql())
        conn.execute(
            "INSERT INTO wwt_meta VALUES ('schema_version', %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (str(SCHEMA_VERSION),))
    return SCHEMA_VERSION


def register_machine(conn: Any, machine_id: str, label: str) -> None:
    with conn.transaction():
        conn.execute(
            "INSERT INTO wwt_machines (machine_id, label) VALUES (%s, %s) "
            "ON CONFLICT (machine_id) DO UPDATE SET label = excluded.label", (machine_id, label))


def missing_search_indexes(conn: Any) -> list[str]:
    """The search indexes absent from the server (a bulk push killed between its drop and its build)."""
    present = {r[0] for r in conn.execute(
        "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'wwt_chunks'")}
    return [name for name in SEARCH_INDEXES if name not in present]


def owns_chunks(conn: Any) -> bool:
    """Whether this role may drop and build the chunk table's indexes (it owns the table, or is a superuser)."""
    row = conn.execute("SELECT pg_has_role(current_user, relowner, 'USAGE') FROM pg_class"
                       " WHERE oid = to_regclass('wwt_chunks')").fetchone()
    return bool(row and row[0])


def build_memory_mb(rows: int) -> int:
    """maintenance_work_mem for building the HNSW index over ``rows`` chunks: enough for pgvector to keep the
    graph in memory (≈ 3 KB a 384-d vector with its links), at least 64 MB, at most BUILD_MEMORY_CAP_MB (past it
    pgvector goes on building on disk, slower)."""
    return max(64, min(BUILD_MEMORY_CAP_MB, (rows * 3 + 1023) // 1024))


GIN_MEMORY_CAP_MB = 256  # the GIN build's sort memory: it runs beside the HNSW build, whose memory matters more


def _build_one(url: str, name: str, rows: int) -> str:
    """Build one search index on its own connection (other members' searches read meanwhile; their writes wait).
    The HNSW build may use parallel workers whatever the table's size (PostgreSQL plans none under
    min_parallel_table_scan_size of heap, and the vectors' heap is small beside their build's cost); a server whose
    shared memory cannot hold a parallel build's graph (a container's 64 MB /dev/shm) builds it again alone."""
    import psycopg

    conn = connect(url)
    try:
        for parallel in (True, False):
            try:
                with conn.transaction():
                    current = int(conn.execute(
                        "SELECT setting::bigint * 1024 / 1048576 FROM pg_settings WHERE name = 'maintenance_work_mem'"
                    ).fetchone()[0])  # setting is in kB
                    wanted = build_memory_mb(rows)
                    if name != "wwt_chunks_embedding":
                        wanted = min(GIN_MEMORY_CAP_MB, wanted)
                    conn.execute(f"SET LOCAL maintenance_work_mem = '{max(current, wanted)}MB'")
                    if parallel:
                        conn.execute("SET LOCAL min_parallel_table_scan_size = 0")
                    else:
                        conn.execute("SET LOCAL max_parallel_maintenance_workers = 0")
                    conn.execute(SEARCH_INDEXES[name])
                break
            except (psycopg.errors.DiskFull, psycopg.errors.OutOfMemory):
                if not parallel:
                    raise
    finally:
        conn.close()
    return name


def build_search_indexes(url: str, names: Sequence[str], rows: int) -> list[str]:
    """Build the search indexes ``names`` (``missing_search_indexes``) over ``rows`` chunks, each on its own
    connection at the same time (both take a SHARE lock, which admits the other: the GIN build then costs nothing
    beside the HNSW one). The names built; the first failure is raised once every build has ended."""
    from concurrent.futures import ThreadPoolExecutor

    if not names:
        return []
    with ThreadPoolExecutor(max_workers=len(names), thread_name_prefix="wwt-build") as pool:
        futures = [pool.submit(_build_one, url, name, rows) for name in names]
    return [future.result() for future in futures]
