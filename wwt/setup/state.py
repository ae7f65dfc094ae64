"""What setup changed besides its own marked entries (switches it flipped), so uninstall can put them back."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wwt import paths
from wwt.fileio import atomic_write

_ABSENT = "__absent__"


@dataclass
class SetupState:
    """``switches`` maps "agent:dotted.key" to the value it had before setup set it (``_ABSENT`` = no key)."""

    switches: dict[str, Any] = field(default_factory=dict)
    created: list[str] = field(default_factory=list)  # config files that did not exist before setup

    @staticmethod
    def path() -> Path:
        return paths.data_dir() / "setup-state.json"

    @classmethod
    def load(cls) -> SetupState:
        try:
            raw = json.loads(cls.path().read_text(encoding="utf-8"))
            return cls(switches=dict(raw.get("switches", {})), created=list(raw.get("created", [])))
        except (FileNotFoundError, ValueError, AttributeError):
            return cls()

    def save(self) -> None:
        atomic_write(self.path(), json.dumps({"switches": self.switches, "created": self.created}, indent=2) + "\n")

    def remember(self, key: str, existed: bool, prior: Any) -> None:
        """First setup wins: a re-run must not record our own value as the user's."""
        self.switches.setdefault(key, prior if existed else _ABSENT)

    def prior(self, key: str) -> tuple[bool, Any] | None:
        """(existed, value) before setup, or None when setup never changed it."""
        if key not in self.switches:
            return None
        value = self.switches[key]
        return (False, None) if value == _ABSENT else (True, value)

    def forget(self, key: str) -> None:
        self.switches.pop(key, None)
