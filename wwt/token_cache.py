"""Tokens of chunk texts kept by content, so what Kiwi worked out once is not worked out again.

The lexical index hands each batch's tokens here as it indexes them (``LexicalIndex.add``); the team push reads
them instead of tokenizing every shared chunk a second time (a Korean-heavy archive's push was bound by Kiwi on
this machine, not by the server: benchmarks/RESULTS.md, team-push). A cache only: keyed by a hash of the text,
stamped with the tokenizer's signature (another tokenizer → emptied on open), written in its own SQLite file
beside the indexes. A missing, locked or unreadable file costs only the tokenizing it would have saved; indexing
never fails because of it."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

FILE_NAME = "tokens.sqlite3"
SEPARATOR = "\x1f"  # between tokens; a text with a token holding it is not cached


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def cache_path(index_dir: Path) -> Path:
    return Path(index_dir) / FILE_NAME


class TokenCache:
    """``put_many`` / ``get_many`` over one SQLite file; every error is swallowed (a cache)."""

    def __init__(self, path: Path, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self._conn: sqlite3.Connection | None = None
        self._failed = False

    def _open(self) -> sqlite3.Connection | None:
        if self._conn is not None or self._failed:
            return self._conn
        from wwt.lexical import tokenizer_signature

        try:
            if self.readonly:
                if not self.path.exists():
                    self._failed = True
                    return None
                conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=5)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))  # conversation words: private
                conn = sqlite3.connect(self.path, timeout=5)
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                conn.execute("CREATE TABLE IF NOT EXISTS tokens (key BLOB PRIMARY KEY, packed BLOB NOT NULL)")
            row = conn.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone()
            signature = tokenizer_signature()
            if row is None or row[0] != signature:
                if self.readonly:
                    conn.close()
                    self._failed = True
                    return None
                with conn:
                    conn.execute("DELETE FROM tokens")
                    conn.execute("INSERT OR REPLACE INTO meta VALUES ('tokenizer', ?)", (signature,))
        except (sqlite3.Error, OSError):
            self._failed = True
            return None
        self._conn = conn
        return conn

    def put_many(self, texts: Sequence[str], token_lists: Sequence[Sequence[str]]) -> None:
        conn = None if self.readonly else self._open()
        if conn is None:
            return
        rows = []
        for text, tokens in zip(texts, token_lists, strict=True):
            joined = SEPARATOR.join(tokens)
            if not any(SEPARATOR in t for t in tokens):
                rows.append((text_key(text), zlib.compress(joined.encode("utf-8", "surrogatepass"), 1)))
        try:
            with conn:
                conn.executemany("INSERT OR REPLACE INTO tokens VALUES (?, ?)", rows)
        except sqlite3.Error:
            pass

    def get_many(self, texts: Sequence[str]) -> dict[int, list[str]]:
        """Index in ``texts`` → its tokens, for the texts the cache holds."""
        conn = self._open()
        if conn is None or not texts:
            return {}
        keys = [text_key(t) for t in texts]
        found: dict[bytes, bytes] = {}
        try:
            for start in range(0, len(keys), 500):
                part = keys[start:start + 500]
                found.update(conn.execute(
                    f"SELECT key, packed FROM tokens WHERE key IN ({','.join('?' * len(part))})", part).fetchall())
        except sqlite3.Error:
            return {}
        out: dict[int, list[str]] = {}
        for index, key in enumerate(keys):
            packed = found.get(key)
            if packed is None:
                continue
            try:
                joined = zlib.decompress(packed).decode("utf-8", "surrogatepass")
            except (zlib.error, UnicodeDecodeError):
                continue
            out[index] = joined.split(SEPARATOR) if joined else []
        return out

    def tokens(self, texts: Sequence[str], tokenize_many: Callable[[Sequence[str]], list[list[str]]]) -> list[list[str]]:
        """Each text's tokens: the cached ones, ``tokenize_many`` for the rest (kept, unless read-only)."""
        found = self.get_many(texts)
        missing = [i for i in range(len(texts)) if i not in found]
        if missing:
            fresh = tokenize_many([texts[i] for i in missing])
            found.update(zip(missing, fresh, strict=True))
            self.put_many([texts[i] for i in missing], fresh)
        return [found[i] for i in range(len(texts))]

    def forget(self, texts: Sequence[str]) -> None:
        """Remove these texts' tokens for good (``wwt forget``: a forgotten conversation leaves no trace here
        either — deleted pages zeroed, the WAL truncated)."""
        conn = None if self.readonly else self._open()
        if conn is None or not texts:
            return
        try:
            conn.execute("PRAGMA secure_delete = ON")
            with conn:
                conn.executemany("DELETE FROM tokens WHERE key = ?", [(text_key(t),) for t in texts])
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:
            pass

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
