"""The one protocol every platform parser implements. Adding a platform = one file + one registry line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, runtime_checkable

from wwt.models import ParseReport, Session


@runtime_checkable
class SessionParser(Protocol):
    platform: str

    def default_roots(self) -> list[Path]:
        """Folders where this agent writes its logs on this machine (env overrides honoured)."""
        ...

    def detect(self, path: Path, head: bytes) -> bool:
        """Can this parser read ``path``? ``head`` is the first few KiB of the file (may be empty)."""
        ...

    def parse(self, path: Path, report: ParseReport, start_offset: int = 0) -> Iterator[Session]:
        """Yield the sessions in ``path``. Never raises for bad content: count it in ``report``.

        With ``start_offset > 0`` (append-only formats) only records after that byte offset are read and the
        yielded sessions hold only the new messages; ``report.end_offset`` is set to the resume point, and
        ``report.requires_full_reparse`` is set when the new data rewrites history."""
        ...
