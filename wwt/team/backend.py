"""The team server as a search backend: the two legs of ``wwt.search.run_search`` answered by PostgreSQL —
meaning by pgvector's HNSW cosine index (``<=>``), words by BM25 computed in SQL over the tsvector of wwt's own
lexical tokens (the same tokenizer, idf and k1/b as the local tantivy index) — so fusion, grouping and the
"nothing relevant" flag are the local code, unchanged. Filters are applied inside each leg's SQL."""

from __future__ import annotations

import heapq
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from wwt.models import Filters
from wwt.search import SearchOutcome, SessionHit

K1 = 1.2  # tantivy's BM25 constants
B = 0.75
CANDIDATE_BUDGET = 1000  # chunks scored by the lexical leg at most (benchmarks/RESULTS.md, team-scale)
MAX_COMMON_TERMS = 8  # common terms paired (28 pairs at most)
EF_SEARCH = 300  # HNSW candidates per vector search at least (team-scale: recall@20 against exact)


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
        self._totals: tuple[int, int, float, int] | None = None
        self._stats_exact = False  # every machine's term frequencies known (``stats_ok``)
        self._dfs: dict[str, int] = {}
        self._held: dict[tuple, Counter] = {}  # scope → chunks the lexical leg read holding each question word
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
    def _stats(self) -> tuple[int, int, float, int]:
        """(chunks, chunks with a vector, mean tokens per chunk, Korean chunks) of the team archive, from the
        machines' exact counters (``wwt_machines``): a count over a million rows would cost more than the search."""
        if self._totals is None:
            row = self.conn.execute(
                "SELECT coalesce(sum(chunk_count), 0), coalesce(sum(vector_count), 0), coalesce(sum(lex_total), 0),"
                " coalesce(sum(korean_count), 0), coalesce(bool_and(stats_ok), true) FROM wwt_machines").fetchone()
            n, v, tokens, korean = (int(x) for x in row[:4])  # sum(bigint) is numeric: Decimal
            self._totals = (n, v, tokens / n if n else 1.0, korean)
            self._stats_exact = bool(row[4])
        return self._totals

    def term_hits(self, terms: Sequence[str], filters: Filters | None, cap: int) -> dict[str, int]:
        """How many chunks in scope each term occurs in, up to ``cap`` (the flag's check whether the question's
        words were said). A search over everything but this machine's rows is answered by the machines' exact
        document frequencies, with no chunk read; a filtered one reads at most ``cap`` matching rows a word."""
        from wwt.team.push import tsquery_literal

        if _where(filters or self.filters)[0] == "true":
            self._stats()
            if self._stats_exact:  # the search's own document frequencies, less this machine's share
                wanted = list(dict.fromkeys(terms))
                counts = self.doc_freqs(wanted)
                if self.exclude_machine is not None:
                    own = dict(self.conn.execute("SELECT term, df FROM wwt_terms WHERE machine_id = %s AND"
                                                 " term = ANY(%s)", (self.exclude_machine, wanted)).fetchall())
                    counts = {term: n - int(own.get(term) or 0) for term, n in counts.items()}
                return {term: min(cap, counts[term]) for term in wanted}
        where, args = _where(filters or self.filters, exclude_machine=self.exclude_machine)
        held = self._held.get((where, tuple(args)), Counter())
        out = {}
        for term in dict.fromkeys(terms):
            match = tsquery_literal([term])
            if held[term] >= cap:  # the search's own candidates hold it often enough (a common word's check
                out[term] = cap    # is the costly one: its whole posting list)
                continue
            out[term] = 0 if not match else int(self.conn.execute(
                "SELECT count(*) FROM (SELECT 1 FROM wwt_chunks c"
                f" WHERE c.lex @@ %s::tsquery AND {where} LIMIT %s) AS hits", (match, *args, cap)).fetchone()[0])
        return out

    def count(self) -> int:
        return self._stats()[0]

    def doc_freqs(self, terms: Iterable[str]) -> dict[str, int]:
        """Each term's document frequency over the team archive (remembered for this search: the flag's checks
        ask again for the question's words)."""
        wanted = list(dict.fromkeys(terms))
        unknown = [t for t in wanted if t not in self._dfs]
        if unknown:
            found = dict(self.conn.execute(
                "SELECT term, sum(df) FROM wwt_terms WHERE term = ANY(%s) GROUP BY term", (unknown,)).fetchall())
            self._dfs.update({term: int(found.get(term) or 0) for term in unknown})
        return {term: self._dfs[term] for term in wanted}

    def search(self, query: str, filters: Filters, limit: int) -> list[tuple[int, float]]:
        from wwt.lexical import tokenize

        return self.search_tokens(tokenize(query), filters, limit)

    def search_tokens(self, tokens: list[str], filters: Filters | None = None, limit: int = 30,
                      extra: Sequence[str] = (), extra_weight: float = 0.5) -> list[tuple[int, float]]:
        """BM25 over the chunks that hold the question's rarer words (``candidate_queries``), every question word
        scored; a chunk's term frequencies read from its tsvector, cut to the question's words in C
        (``setweight`` + ``ts_filter``) so a long chunk costs no more than a short one."""
        from wwt.fusion import bm25_idf
        from wwt.lexical_index import weighted_terms

        weights = weighted_terms(tokens, extra, extra_weight)
        if limit <= 0 or not weights:
            return []
        total, _, avgdl, _ = self._stats()
        freqs = self.doc_freqs(weights)
        terms = [t for t in weights if freqs.get(t)]
        if not terms or not total:
            return []
        idf = [weights[t] * bm25_idf(freqs[t], total) for t in terms]
        rare, pairs = candidate_queries({t: freqs[t] for t in terms}, CANDIDATE_BUDGET)
        where, args = _where(filters or self.filters, exclude_machine=self.exclude_machine)
        rows: list[tuple[int, int, str]] = []
        for match in (rare, pairs):
            if not match or len(rows) >= CANDIDATE_BUDGET:
                continue
            seen = [row[0] for row in rows]
            rows += self.conn.execute(
                "SELECT c.id, c.lex_len, ts_filter(setweight(c.lex, 'A', %s::text[]), '{a}')::text FROM wwt_chunks c"
                f" WHERE c.lex @@ %s::tsquery AND NOT (c.id = ANY(%s)) AND {where} LIMIT %s",
                (terms, match, seen, *args, CANDIDATE_BUDGET - len(rows))).fetchall()
        held = self._held.setdefault((where, tuple(args)), Counter())
        for _, _, text in rows:  # chunks in this scope seen holding each word: the flag's checks need no more
            held.update(lexeme for lexeme, _ in lexeme_tfs(text))
        return bm25_top(rows, dict(zip(terms, idf, strict=True)), avgdl, limit)

    # ---- vector leg
    def vector_count(self) -> int:
        return self._stats()[1]

    def vector_search(
        self, vector: Any, k: int, allowed: set[int] | None = None, korean: bool | None = None
    ) -> list[tuple[int, float]]:
        """Nearest chunks, best first; only Korean chunks (``korean`` True) or only the others (False) when given
        (``wwt.search.vector_leg`` asks for each language's best)."""
        if k <= 0:
            return []
        literal = "[" + ",".join(map(repr, [float(x) for x in vector])) + "]"
        where, args = _where(self.filters, exclude_machine=self.exclude_machine)
        if korean is not None:
            where, args = f"{where} AND c.korean = %s", [*args, korean]
        with self.conn.transaction():
            self.conn.execute(f"SET LOCAL hnsw.ef_search = {max(EF_SEARCH, min(1000, int(k)))}")
            self.conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            rows = self.conn.execute(
                "SELECT id, 1 - (embedding <=> %s::vector) FROM wwt_chunks c"
                f" WHERE embedding IS NOT NULL AND {where} ORDER BY embedding <=> %s::vector LIMIT %s",
                (literal, *args, literal, k)).fetchall()
        hits = [(int(i), float(s)) for i, s in rows if allowed is None or i in allowed]
        hits.sort(key=lambda item: (-item[1], item[0]))
        return hits


_LEXEME = re.compile(r"'((?:[^']|'')*)':([0-9A-D,]+)")


def bm25_top(rows: Iterable[tuple[int, int, str]], idf: dict[str, float], avgdl: float,
             limit: int) -> list[tuple[int, float]]:
    """BM25 (tantivy's k1, b) of each (id, token count, tsvector text holding only the question's lexemes) —
    a lexeme's term frequency is its number of positions — best ``limit`` first, ties by id. Scored here rather
    than by unnest + join in SQL: the same numbers for less server time (one 3,600-candidate question at 20k
    chunks, warm: 64–78 → 51–73 ms)."""
    scored = []
    for chunk_id, length, text in rows:
        norm = K1 * (1 - B + B * (length or 0) / avgdl)
        score = 0.0
        for lexeme, tf in lexeme_tfs(text):
            weight = idf.get(lexeme)
            if weight:
                score += weight * tf * (K1 + 1) / (tf + norm)
        if score > 0:
            scored.append((-score, int(chunk_id)))
    return [(chunk_id, -neg) for neg, chunk_id in heapq.nsmallest(limit, scored)]


def lexeme_tfs(text: str | None) -> list[tuple[str, int]]:
    """(lexeme, term frequency) of a tsvector's text form ('it''s':1,2 'x':1): a frequency is its positions."""
    return [(lexeme.replace("''", "'").replace("\\\\", "\\"), positions.count(",") + 1)
            for lexeme, positions in _LEXEME.findall(text or "")]


def candidate_queries(freqs: dict[str, int], budget: int) -> tuple[str, str]:
    """The two tsqueries that find the chunks to score (each question term still scores every candidate):
    the rare terms — rarest first while their document frequencies add up to at most ``budget`` — each alone
    (such a term carries most of BM25's weight), then the chunks holding two or more of the other, common terms
    (a chunk with one common word and nothing else seldom ranks), read until the budget is spent."""
    from wwt.team.push import tsquery_literal

    ordered = sorted(freqs, key=lambda t: (freqs[t], t))
    rare: list[str] = []
    spent = 0
    for term in ordered:
        if spent + freqs[term] > budget:
            break
        rare.append(term)
        spent += freqs[term]
    common = ordered[len(rare):][:MAX_COMMON_TERMS]
    if len(common) == 1 and not rare:
        return tsquery_literal(common), ""
    pairs = [f"({tsquery_literal([a])} & {tsquery_literal([b])})"
             for i, a in enumerate(common) for b in common[i + 1:]]
    return tsquery_literal(rare), " | ".join(pairs)


class _VectorLeg:
    """The vector leg as ``run_search`` sees the local ``VectorIndex``: search, count, and the language
    correction (``language_axis``, ``neutralise``, ``korean_count``) from what the machines pushed."""

    def __init__(self, backend: TeamBackend) -> None:
        self._backend = backend
        self._axis: Any = False  # not read yet

    def search(
        self, vector: Any, k: int, allowed: set[int] | None = None, korean: bool | None = None
    ) -> list[tuple[int, float]]:
        return self._backend.vector_search(vector, k, allowed, korean)

    def count(self) -> int:
        return self._backend.vector_count()

    def korean_count(self) -> int:
        return self._backend._stats()[3]

    @property
    def language_axis(self) -> Any:
        """The machines' axes, averaged by their chunk counts (None when no machine has both languages)."""
        if self._axis is False:
            self._axis = team_axis(self._backend.conn.execute(
                "SELECT language_axis, chunk_count FROM wwt_machines WHERE language_axis IS NOT NULL").fetchall())
        return self._axis

    def neutralise(self, hits: list[tuple[int, float]], query: Any, weight: float | None = None) -> list[tuple[int, float]]:
        from wwt.language_axis import WEIGHT
        from wwt.language_axis import neutralise as rescore

        axis = self.language_axis
        if axis is None or not hits:
            return hits
        korean = {int(r[0]) for r in self._backend.conn.execute(
            "SELECT id FROM wwt_chunks WHERE id = ANY(%s) AND korean", ([i for i, _ in hits],))}
        return rescore(hits, query, korean, axis, WEIGHT if weight is None else weight)


def team_axis(rows: Sequence[tuple[Any, int]]) -> Any:
    """One ``LanguageAxis`` from the machines' (axis JSON, chunk count): directions averaged by count."""
    import numpy as np

    from wwt.language_axis import LanguageAxis
    from wwt.team.schema import DIM

    axes = [(LanguageAxis.from_json(data, DIM), int(n)) for data, n in rows]
    axes = [(axis, n) for axis, n in axes if axis is not None and n > 0]
    if not axes:
        return None
    total = sum(n for _, n in axes)
    direction = sum(axis.direction * (n / total) for axis, n in axes)
    return LanguageAxis(np.asarray(direction, dtype=np.float32), total)


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


def team_session(conn: Any, session: str, start: int = 0, end: int | None = None) -> tuple[Any, list[Any], int, str] | None:
    """A session another machine pushed, for ``wwt show``: (``SessionRow``, a page of ``MessageRow`` from
    position ``start`` to ``end`` exclusive, the message count, the machine's label), by id or a unique prefix
    of at least 4 characters; None when the server has no such session (or several match the prefix)."""
    from wwt.store.rows import MessageRow, SessionRow

    found = conn.execute(
        "SELECT s.session_id, s.platform, s.root_session_id, s.project, s.cwd, s.git_branch, s.started_at,"
        " s.ended_at, s.title, m.label, s.machine_id FROM wwt_sessions s JOIN wwt_machines m USING (machine_id)"
        " WHERE s.session_id = %s OR (length(%s) >= 4 AND starts_with(s.session_id, %s)) LIMIT 2",
        (session, session, session)).fetchall()
    exact = [row for row in found if row[0] == session]
    if len(exact) != 1 and len(found) != 1:
        conn.commit()
        return None
    sid, platform, root, project, cwd, branch, started, ended, title, label, machine = (exact or found)[0]
    total = int(conn.execute("SELECT count(*) FROM wwt_messages WHERE machine_id = %s AND session_id = %s",
                             (machine, sid)).fetchone()[0])
    rows = conn.execute(
        "SELECT seq, native_id, role, kind, text, timestamp, tool_name FROM wwt_messages"
        " WHERE machine_id = %s AND session_id = %s AND seq >= %s AND (%s::int IS NULL OR seq < %s)"
        " ORDER BY seq", (machine, sid, start, end, end)).fetchall()
    conn.commit()
    row = SessionRow(session_id=sid, platform=platform, parent_session_id=None if root == sid else root,
                     root_session_id=root, project=project, project_path=None, cwd=cwd, git_branch=branch,
                     started_at=started, ended_at=ended, title=title, source_path=None, message_count=total)
    messages = [MessageRow(session_id=sid, seq=seq, native_id=native, role=role, kind=kind, text=text,
                           timestamp=ts, tool_name=tool, flags=frozenset())
                for seq, native, role, kind, text, ts, tool in rows]
    return row, messages, total, label
