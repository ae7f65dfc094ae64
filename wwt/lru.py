"""A small thread-safe least-recently-used map, shared by the caches that search keeps between calls (query
vectors in the embedder, scope matrices in the vector index). Standard library only."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any


class LruDict(OrderedDict):
    """At most ``limit`` entries; ``recall`` refreshes an entry, ``remember`` drops the least recent ones.
    Both and ``forget_all`` take the lock (the MCP server searches from worker threads); plain dict reads
    are for tests."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self._lock = threading.Lock()

    def recall(self, key: Any) -> Any:
        with self._lock:
            value = self.get(key)
            if value is not None:
                self.move_to_end(key)
            return value

    def remember(self, key: Any, value: Any) -> None:
        with self._lock:
            self[key] = value
            while len(self) > self.limit:
                self.popitem(last=False)

    def forget_all(self) -> None:
        with self._lock:
            self.clear()
