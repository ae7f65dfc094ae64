"""Parser registry. One line per platform."""

from __future__ import annotations

from wwt.parsers.base import SessionParser

PARSERS: list[SessionParser] = []
