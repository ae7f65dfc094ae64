"""The team server as a search backend: the two legs of ``wwt.search.run_search`` answered by PostgreSQL —
meaning by pgvector's HNSW cosine index (``<=>``), words by BM25 computed in SQL over the tsvector of wwt's own
lexical tokens (the same tokenizer, idf and k1/b as the local tantivy index) — so fusion, grouping and the
"nothing relevant" flag are the local code, unchanged. Filters are applied inside each leg's SQL."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from wwt.models import Filters
from wwt.search import SearchOutcome, SessionHit

K1 = 1.2  # tantivy's BM25 constants
B = 0.75


@dataclass
class TeamChunk:
    """What ``wwt.search.group_by_session`` needs from a chunk (``ChunkLike``), plus where it came from."""

    id: int
    chunk_key: str
    session_id: str
    source_session_id: str
    text: str
    start_ts: str | None
    end_ts: str | None
    first_seq: int
    last_seq: int
    platform: str
    project: str | None
    cwd: str | None
    git_branch: str | None
    started_at: str | None
    ended_at: str | None
    title: str | None
    machine_id: str
    machine: str


@dataclass
class TeamHit(SessionHit):
    """A session found on the team server: ``machine`` is the label of the machine that pushed it."""

    machine: str | None = None
    machine_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _where(filters: Filters, alias: str = "c", exclude_machine: str | None = None) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    if exclude_machine:
        clauses.append(f"{alias}.machine_id <> %s")
        args.append(exclude_machine)
    for column, value in (("project", filters.project), ("platform", filters.platform),
                          ("git_branch", filters.git_branch), ("cwd", filters.cwd)):
        if value:
            clauses.append(f"{alias}.{column} = %s")
            args.append(value)
    if filters.since:
        clauses.append(f"coalesce({alias}.end_ts, {alias}.start_ts) >= %s")
        args.append(filters.since)
    if filters.until:
        clauses.append(f"coalesce({alias}.start_ts, {alias}.end_ts) <= %s")
        args.append(filters.until)
    if filters.exclude_session_id:
        clauses.append(f"{alias}.session_id <> %s")
        args.append(filters.exclude_session_id)
    return (" AND ".join(clauses) if clauses else "true"), args


class TeamBackend:
    """``store``/``lexical``/``vector`` for ``run_search`` over one PostgreSQL connection."""

    def __init__(self, conn: Any, filters: Filters, exclude_machine: str | None = None) -> None:
        self.conn = conn
        self.filters = filters
        self.exclude_machine = exclude_machine  # this machine's own rows: the local search has them already
        self._counts: dict[str, int] = {}
        self.labels: dict[str, tuple[str, str]] = {}  # session id → (machine id, label)
        # wwt.search.SearchBackend: this object answers the chunk look-ups and the lexical leg itself
        self.store = self
        self.lexical = self
        self.vector = _VectorLeg(self)

    # ---- store
    def chunk_ids_matching(self, filters: Filters) -> set[int] | None:
        return None  # every leg applies the filters in its own SQL

    def chunks_by_ids(self, ids: Sequence[int]) -> list[TeamChunk]:
        if not ids:
            return []
        rows = self.conn.execute(
            "SELECT c.id, c.chunk_key, c.session_id, c.source_session_id, c.text, c.start_ts, c.end_ts,"
            " c.first_seq, c.last_seq, c.platform, c.project, c.cwd, c.git_branch, s.started_at, s.ended_at,"
            " s.title, c.machine_id, m.label FROM wwt_chunks c JOIN wwt_machines m USING (machine_id)"
            " LEFT JOIN wwt_sessions s ON s.machine_id = c.machine_id AND s.session_id = c.session_id"
            " WHERE c.id = ANY(%s)", (list(ids),)).fetchall()
        chunks = [TeamChunk(*row) for row in rows]
        for chunk in chunks:
            self.labels.setdefault(chunk.session_id, (chunk.machine_id, chunk.machine))
        return chunks

    # ---- lexical leg
    def count(self) -> int:
        return self._count("all", "SELECT count(*) FROM wwt_chunks")

    def _count(self, name: str, sql: str) -> int:
        if name not in self._counts:
            self._counts[name] = int(self.conn.execute(sql).fetchone()[0])
        return self._counts[name]

    def doc_freqs(self, terms: Iterable[str]) -> dict[str, int]:
        from wwt.team.push import tsquery_literal

        out = {}
        for term in dict.fromkeys(terms):
            literal = tsquery_literal([term])
            out[term] = int(self.conn.execute(
                "SELECT count(*) FROM wwt_chunks WHERE lex @@ %s::tsquery", (literal,)).fetchone()[0]) if literal else 0
        return out

    def search(self, query: str, filters: Filters, limit: int) -> list[tuple[int, float]]:
        from wwt.lexical import tokenize

        return self.search_tokens(tokenize(query), filters, limit)

    def search_tokens(self, tokens: list[str], filters: Filters | None = None, limit: int = 30,
                      extra: Sequence[str] = (), extra_weight: float = 0.5) -> list[tuple[int, float]]:
        from wwt.fusion import bm25_idf
        from wwt.lexical_index import query_terms
        from wwt.team.push import tsquery_literal

        weights: dict[str, float] = {t: float(n) for t, n in query_terms(tokens)}
        for t, n in query_terms(t for t in extra if t not in weights):
            weights[t] = extra_weight * n
        if limit <= 0 or not weights:
            return []
        total = self.count()
        freqs = self.doc_freqs(weights)
        terms = [t for t in weights if freqs.get(t)]
        if not terms:
            return []
        idf = [weights[t] * bm25_idf(freqs[t], total) for t in terms]
        avgdl = float(self.conn.execute("SELECT coalesce(avg(lex_len), 1) FROM wwt_chunks").fetchone()[0] or 1)
        where, args = _where(filters or self.filters, exclude_machine=self.exclude_machine)
        rows = self.conn.execute(
            "WITH q(term, w) AS (SELECT * FROM unnest(%s::text[], %s::float8[]))"
            " SELECT c.id, sum(q.w * (array_length(u.positions, 1) * (%s + 1.0))"
            "   / (array_length(u.positions, 1) + %s * (1 - %s + %s * c.lex_len / %s))) AS score"
            f" FROM wwt_chunks c, unnest(c.lex) AS u JOIN q ON q.term = u.lexeme"
            f" WHERE c.lex @@ %s::tsquery AND {where}"
            " GROUP BY c.id ORDER BY score DESC, c.id LIMIT %s",
            (terms, idf, K1, K1, B, B, avgdl, tsquery_literal(terms), *args, limit)).fetchall()
        return [(int(i), float(s)) for i, s in rows]

    # ---- vector leg
    def vector_count(self) -> int:
        return self._count("vec", "SELECT count(*) FROM wwt_chunks WHERE embedding IS NOT NULL")

    def vector_search(self, vector: Any, k: int, allowed: set[int] | None = None) -> list[tuple[int, float]]:
        if k <= 0:
            return []
        literal = "[" + ",".join(map(repr, [float(x) for x in vector])) + "]"
        where, args = _where(self.filters, exclude_machine=self.exclude_machine)
        with self.conn.transaction():
            self.conn.execute(f"SET LOCAL hnsw.ef_search = {max(40, min(1000, int(k)))}")
            self.conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            rows = self.conn.execute(
                "SELECT id, 1 - (embedding <=> %s::vector) FROM wwt_chunks c"
                f" WHERE embedding IS NOT NULL AND {where} ORDER BY embedding <=> %s::vector LIMIT %s",
                (literal, *args, literal, k)).fetchall()
        hits = [(int(i), float(s)) for i, s in rows if allowed is None or i in allowed]
        hits.sort(key=lambda item: (-item[1], item[0]))
        return hits


class _VectorLeg:
    def __init__(self, backend: TeamBackend) -> None:
        self._backend = backend

    def search(self, vector: Any, k: int, allowed: set[int] | None = None) -> list[tuple[int, float]]:
        return self._backend.vector_search(vector, k, allowed)

    def count(self) -> int:
        return self._backend.vector_count()


def team_search(conn: Any, query: str, filters: Filters, limit: int, embed_query: Any,
                own_machine: str | None = None) -> SearchOutcome:
    """``run_search`` over the team server; each hit a ``TeamHit`` naming its machine. Hits this machine pushed
    itself (``own_machine``) are left to the local search (left out in SQL, so they take no place in the
    limit); the legs' statistics (idf, vector count) stay those of the whole team archive."""
    from wwt.lexical import tokenize
    from wwt.search import run_search

    backend = TeamBackend(conn, filters, exclude_machine=own_machine)  # a wwt.search.SearchBackend
    outcome = run_search(query, filters, limit, store=backend.store, lexical=backend.lexical, vector=backend.vector,
                         embed_query=embed_query, tokenize=tokenize)
    conn.commit()
    hits: list[SessionHit] = []
    for hit in outcome.hits:
        machine_id, label = backend.labels.get(hit.session_id, (None, None))
        if own_machine is not None and machine_id == own_machine:
            continue
        fields = {k: getattr(hit, k) for k in SessionHit.__dataclass_fields__}
        fields["resume"] = None  # another machine's session: its agent's resume command does not apply here
        hits.append(TeamHit(**fields, machine=label, machine_id=machine_id))
    outcome.hits = hits
    return outcome


def merge(local: SearchOutcome, team: SearchOutcome, limit: int) -> SearchOutcome:
    """Local and team hits in one list by score, a session found both ways shown once (the local copy)."""
    seen = {hit.session_id for hit in local.hits}
    hits = list(local.hits) + [hit for hit in team.hits if hit.session_id not in seen]
    hits.sort(key=lambda hit: -hit.score)
    local.hits = hits[:limit]
    local.weak = local.weak and team.weak
    local.absent = [name for name in local.absent if name in team.absent]
    return local
