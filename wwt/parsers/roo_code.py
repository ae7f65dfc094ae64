"""Roo Code task logs (VS Code extension ``rooveterinaryinc.roo-cline``, a Cline fork): the same
``tasks/<id>/ui_messages.json`` layout and message kinds, read by ``cline.parse_task`` under its own platform."""

from __future__ import annotations

from pathlib import Path

from wwt.parsers.cline import ClineParser, editor_global_storage, is_roo_task

PLATFORM = "roo-code"
EXTENSION_ID = "rooveterinaryinc.roo-cline"


class RooCodeParser(ClineParser):
    platform = PLATFORM
    marker = EXTENSION_ID

    def default_roots(self) -> list[Path]:
        return [root / "tasks" for root in editor_global_storage(EXTENSION_ID)]

    def owns(self, path: Path) -> bool:
        """Only Roo Code's task logs: under its storage folder or beside its ``history_item.json`` (Cline claims
        the rest)."""
        return is_roo_task(path)
