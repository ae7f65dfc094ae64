"""The lexical leg: a tantivy BM25 index over text pre-tokenized by ``wwt.lexical.tokenize``.

Text is tokenized in Python (Kiwi + identifier rules) and stored space-joined in a field indexed with
tantivy's ``whitespace`` tokenizer, so index and query tokens come from the same function. Filter fields
(session, project, platform, branch, cwd, time) are indexed too, so filters run *inside* the tantivy query.
Queries are always built programmatically from tokens: user text is never handed to tantivy's query parser,
so ``"``, ``:``, ``AND``, ``*`` or unbalanced parentheses are just text.

The index is derived data (rebuildable from SQLite): a missing, damaged or outdated folder raises
``IndexCorrupt`` so the owner can rebuild it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import tantivy

from wwt.errors import UsageError, WwtError
from wwt.fileio import atomic_write
from wwt.lexical import tokenize_many, tokenizer_signature
from wwt.models import Filters
from wwt.token_cache import TokenCache, cache_path

SCHEMA_VERSION = 1
STAMP_FILE = "wwt-lexical.json"
MAX_QUERY_TERMS = 256  # a pasted log as a query: keep the first distinct terms
ADD_BATCH = 256  # documents tokenized per Kiwi batch call
WRITER_HEAP_BYTES = 64_000_000


class IndexCorrupt(WwtError):
    """A derived index is missing, unreadable, or was built by another format/tokenizer: rebuild it."""


class IndexBusy(WwtError):
    """Another process holds the index writer lock."""


@dataclass
class LexDoc:
    """One chunk as the lexical index sees it; ``id`` is the SQLite chunk row id."""

    id: int
    text: str
    session_id: str | None = None
    project: str | None = None
    platform: str | None = None
    git_branch: str | None = None
    cwd: str | None = None
    start_ts: str | None = None
    end_ts: str | None = None


_FILTER_FIELDS = ("session_id", "project", "platform", "git_branch", "cwd")


def _build_schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("id", stored=True, indexed=True, fast=True)
    builder.add_text_field("body", tokenizer_name="whitespace", index_option="freq")
    for name in _FILTER_FIELDS:
        builder.add_text_field(name, tokenizer_name="raw", index_option="basic")
    builder.add_date_field("start_ts", indexed=True, fast=True)
    builder.add_date_field("end_ts", indexed=True, fast=True)
    return builder.build()


def parse_iso(value: str | None) -> datetime | None:
    """An aware UTC datetime from an ISO 8601 string (``Z`` accepted, naive = UTC); None when unparseable."""
    if not value:
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)


def weighted_terms(tokens: Iterable[str], extra: Iterable[str] = (), extra_weight: float = 0.5) -> dict[str, float]:
    """Each query term's weight: its count in the query; ``extra`` terms (e.g. a glossary's translations of the
    query's words) not already there count ``extra_weight`` of a query token. The team server's BM25 weighs the
    same way (``wwt.team.backend``)."""
    weights: dict[str, float] = {t: float(n) for t, n in query_terms(tokens)}
    for t, n in query_terms(t for t in extra if t not in weights):
        weights[t] = extra_weight * n
    return weights


def query_terms(tokens: Iterable[str]) -> list[tuple[str, int]]:
    """Distinct query terms with their repeat counts (a repeated word weighs more, as in BM25 over a bag)."""
    counts = Counter(tokens)
    return list(counts.items())[:MAX_QUERY_TERMS]


class LexicalIndex:
    """tantivy index in ``path`` (a folder it owns). Readers never need the writer lock; the writer is
    opened on the first ``add``/``delete`` and held until ``close``."""

    def __init__(self, path: Path, create: bool = True) -> None:
        self.path = Path(path)
        self._schema = _build_schema()
        self._writer: tantivy.IndexWriter | None = None
        self._index = self._open_or_create(create)
        self._tokens = TokenCache(cache_path(self.path.parent))  # Kiwi's work kept for reindex and team push

    # ----- lifecycle -------------------------------------------------------------------------------------

    def _open_or_create(self, create: bool) -> tantivy.Index:
        stamp = {"schema_version": SCHEMA_VERSION, "tokenizer": tokenizer_signature()}
        stamp_path = self.path / STAMP_FILE
        is_empty = not self.path.exists() or not any(self.path.iterdir())
        if is_empty:
            if not create:
                raise IndexCorrupt(f"lexical index missing at {self.path}")
            self.path.mkdir(parents=True, exist_ok=True)
            index = tantivy.Index(self._schema, path=str(self.path), reuse=False)
            atomic_write(stamp_path, json.dumps(stamp, sort_keys=True))
            return _manual_reload(index)
        try:
            found = json.loads(stamp_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise IndexCorrupt(f"lexical index at {self.path} has no readable {STAMP_FILE}") from exc
        if found != stamp:
            raise IndexCorrupt(
                f"lexical index at {self.path} was built by {found.get('tokenizer')!r} "
                f"(schema {found.get('schema_version')}); this wwt needs {stamp['tokenizer']!r}"
            )
        try:
            index = tantivy.Index.open(str(self.path))
            index.searcher()
        except (ValueError, OSError) as exc:
            raise IndexCorrupt(f"lexical index at {self.path} is unreadable: {exc}") from exc
        return _manual_reload(index)

    def forget_tokens(self, texts: Sequence[str]) -> None:
        """Drop these texts' cached tokens for good (``wwt forget``)."""
        self._tokens.forget(texts)

    def close(self) -> None:
        """Release the writer lock (uncommitted changes are dropped)."""
        self._tokens.close()
        if self._writer is not None:
            try:
                self._writer.rollback()
            except ValueError:
                pass
            self._writer = None

    def __enter__(self) -> LexicalIndex:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _get_writer(self) -> tantivy.IndexWriter:
        if self._writer is None:
            try:
                self._writer = self._index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=1)
            except ValueError as exc:
                raise IndexBusy(f"lexical index at {self.path} is being written by another process") from exc
            # A writer killed mid-commit (kill -9, power loss) leaves files the last meta.json does not name,
            # e.g. "<segment>.<opstamp>.del"; this writer reaches the same opstamp and tantivy refuses to
            # overwrite them (FileAlreadyExists) — found by tests/test_faults.py. Drop them first: tantivy's
            # own collection covers the files it had registered, ours the delete files it had not.
            self._writer.garbage_collect_files()
            drop_uncommitted_delete_files(self.path)
        return self._writer

    # ----- writes ----------------------------------------------------------------------------------------

    def add(self, docs: Iterable[LexDoc]) -> int:
        """Add (or replace, by id) documents; visible to searches after ``commit``. Returns how many."""
        writer = self._get_writer()
        added = 0
        batch: list[LexDoc] = []
        for doc in docs:
            batch.append(doc)
            if len(batch) >= ADD_BATCH:
                added += self._add_batch(writer, batch)
                batch = []
        if batch:
            added += self._add_batch(writer, batch)
        return added

    def _add_batch(self, writer: tantivy.IndexWriter, docs: list[LexDoc]) -> int:
        token_lists = self._tokens.tokens([doc.text or "" for doc in docs], tokenize_many)
        for doc, tokens in zip(docs, token_lists, strict=True):
            writer.delete_documents_by_term(
                "id", int(doc.id)
            )  # replace semantics; applies to older docs only
            writer.add_document(self._to_document(doc, tokens))
        return len(docs)

    def _to_document(self, doc: LexDoc, tokens: list[str]) -> tantivy.Document:
        document = tantivy.Document()
        document.add_integer("id", int(doc.id))
        document.add_text("body", " ".join(tokens))
        for name in _FILTER_FIELDS:
            value = getattr(doc, name)
            if value:
                document.add_text(name, value)
        start = parse_iso(doc.start_ts)
        end = parse_iso(doc.end_ts)
        start, end = start or end, end or start  # a chunk with one known time is an instant
        if start is not None and end is not None:
            document.add_date("start_ts", min(start, end))
            document.add_date("end_ts", max(start, end))
        return document

    def delete(self, ids: Iterable[int]) -> None:
        writer = self._get_writer()
        for chunk_id in ids:
            writer.delete_documents_by_term("id", int(chunk_id))

    def commit(self) -> None:
        """Make writes durable and visible to this instance's searches."""
        if self._writer is None:
            return
        self._writer.commit()
        self._writer.wait_merging_threads()  # consumes the writer; the next write opens a fresh one
        self._writer = None
        self._index.reload()

    def reload(self) -> None:
        """Pick up commits made by another process (the ingest worker)."""
        self._index.reload()

    # ----- reads -----------------------------------------------------------------------------------------

    def count(self) -> int:
        return self._index.searcher().num_docs

    def all_ids(self) -> set[int]:
        searcher = self._index.searcher()
        total = searcher.num_docs
        if total == 0:
            return set()
        hits = searcher.search(tantivy.Query.all_query(), limit=total, count=False).hits
        return {int(v) for v in searcher.fast_field_values("id", [address for _, address in hits])}

    def search(self, query: str, filters: Filters | None = None, limit: int = 30) -> list[tuple[int, float]]:
        """``(chunk id, BM25 score)`` best first (ties by id), with ``filters`` applied inside the query."""
        if limit <= 0 or not query or not query.strip():
            return []
        return self.search_tokens(tokenize_many([query])[0], filters, limit)

    def search_tokens(
        self,
        tokens: list[str],
        filters: Filters | None = None,
        limit: int = 30,
        extra: Sequence[str] = (),
        extra_weight: float = 0.5,
    ) -> list[tuple[int, float]]:
        """Like ``search`` for text that is already tokenized (by ``wwt.lexical.tokenize``). ``extra`` tokens
        (e.g. a glossary's translations of the query's words) count ``extra_weight`` of a query token."""
        terms = weighted_terms(tokens, extra, extra_weight)
        if limit <= 0 or not terms:
            return []
        text_query = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, self._term_query(term, count)) for term, count in terms.items()]
        )
        clauses = [(tantivy.Occur.Must, text_query)]
        clauses.extend(self._filter_clauses(filters or Filters()))
        searcher = self._index.searcher()
        hits = searcher.search(tantivy.Query.boolean_query(clauses), limit=limit, count=False).hits
        if not hits:
            return []
        ids = searcher.fast_field_values("id", [address for _, address in hits])
        results = [(int(chunk_id), float(score)) for (score, _), chunk_id in zip(hits, ids, strict=True)]
        results.sort(key=lambda item: (-item[1], item[0]))
        return results

    def term_hits(self, terms: Sequence[str], filters: Filters | None, cap: int) -> dict[str, int]:
        """How many chunks in scope each term occurs in, counted up to ``cap``."""
        return {term: len(self.search_tokens([term], filters, cap)) for term in terms}

    def doc_freqs(self, terms: Iterable[str]) -> dict[str, int]:
        """How many chunks (in the whole index, unfiltered) each term occurs in: how rare it is here."""
        searcher = self._index.searcher()
        return {term: searcher.doc_freq("body", term) for term in dict.fromkeys(terms)}

    def _term_query(self, term: str, count: float) -> tantivy.Query:
        query = tantivy.Query.term_query(self._schema, "body", term, index_option="freq")
        return query if count == 1 else tantivy.Query.boost_query(query, float(count))

    def _filter_clauses(self, filters: Filters) -> list[tuple[tantivy.Occur, tantivy.Query]]:
        """Term/range clauses that restrict without scoring (constant score 0)."""
        clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
        for name in ("project", "platform", "git_branch", "cwd"):
            value = getattr(filters, name)
            if value:
                term = tantivy.Query.term_query(self._schema, name, value, index_option="basic")
                clauses.append((tantivy.Occur.Must, tantivy.Query.const_score_query(term, 0.0)))
        since = _filter_time(filters.since, "since")
        until = _filter_time(filters.until, "until")
        # A chunk matches a time window when its [start, end] overlaps it.
        if since is not None:
            clauses.append((tantivy.Occur.Must, self._range("end_ts", since, None)))
        if until is not None:
            clauses.append((tantivy.Occur.Must, self._range("start_ts", None, until)))
        if filters.exclude_session_id:
            term = tantivy.Query.term_query(
                self._schema, "session_id", filters.exclude_session_id, index_option="basic"
            )
            clauses.append((tantivy.Occur.MustNot, term))
        return clauses

    def _range(self, field: str, lower: datetime | None, upper: datetime | None) -> tantivy.Query:
        query = tantivy.Query.range_query(
            self._schema, field, tantivy.FieldType.Date, lower_bound=lower, upper_bound=upper
        )
        return tantivy.Query.const_score_query(query, 0.0)


def _filter_time(value: str | None, name: str) -> datetime | None:
    if not value:
        return None
    parsed = parse_iso(value)
    if parsed is None:
        raise UsageError(f"{name}: {value!r} is not an ISO 8601 date/time")
    return parsed


def _manual_reload(index: tantivy.Index) -> tantivy.Index:
    """Searches see new commits when ``reload`` is called (after our own commit, or when the store says the
    worker committed), not from tantivy's default meta.json watcher: that is a second, background reload of
    the same commits, opening segment files from a native thread at a moment nobody chose."""
    index.config_reader(reload_policy="Manual")
    return index


_DELETE_FILE = re.compile(r"^([0-9a-f]{32})\.(\d+)\.del$")


def drop_uncommitted_delete_files(path: Path) -> None:
    """Remove ``<segment>.<opstamp>.del`` files newer than the committed opstamp in ``meta.json``: only a
    writer that died before its commit could have written them, and names of this form are the only ones a
    later writer can collide with (new segments get fresh random ids). Call with the writer lock held."""
    try:
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
        committed = int(meta["opstamp"])
        segments = {str(s["segment_id"]).replace("-", "") for s in meta["segments"]}
    except (OSError, ValueError, KeyError, TypeError):
        return
    for entry in path.iterdir():
        match = _DELETE_FILE.match(entry.name)
        if match and match.group(1) in segments and int(match.group(2)) > committed:
            entry.unlink(missing_ok=True)
