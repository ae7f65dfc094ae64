"""Which client a request inside the engine serves: its working folder, environment and terminal.

The engine runs the same ``wwt.cli`` commands and MCP tools as a one-shot process, for many clients at once in
threads; what a one-shot process reads from ``os.getcwd()``, ``os.environ`` and its own terminal comes from the
current ``Client`` instead (a ContextVar, so concurrent requests never see each other's). Outside the engine
there is no current client and everything falls back to the process's own values."""

from __future__ import annotations

import os
import sys
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Client:
    cwd: str
    env: dict[str, str] = field(default_factory=dict)
    out: Any = None  # rich Console writing to ``stdout``
    err: Any = None
    stdout: Any = None  # text buffers the reply carries back
    stderr: Any = None


CURRENT: ContextVar[Client | None] = ContextVar("wwt_engine_client", default=None)
SHARED: dict[str, Any] = {}  # "memory": the engine's one Memory (set by the engine only)


def cwd() -> str:
    client = CURRENT.get()
    return client.cwd if client is not None else os.getcwd()


def getenv(name: str) -> str | None:
    client = CURRENT.get()
    return client.env.get(name) if client is not None else os.environ.get(name)


def shared_memory() -> Any:
    """The engine's long-lived ``Memory`` while serving a client; None in a one-shot process."""
    return SHARED.get("memory") if CURRENT.get() is not None else None


MIN_WIDTH, MAX_WIDTH = 20, 1000  # columns: beyond these a width is a broken COLUMNS, not a terminal


def sane_width(width: int) -> int:
    """The width to lay text out in: rich prints nothing at 0 columns and pads lines to any width given
    (``COLUMNS=0`` hid every answer; ``COLUMNS=100000000`` printed 100 MB). Unknown (< 1) → 80."""
    return 80 if width < 1 else min(max(width, MIN_WIDTH), MAX_WIDTH)


class ContextConsole:
    """Stands in for a rich ``Console``: the current client's inside the engine, else one for this process."""

    def __init__(self, stderr: bool = False) -> None:
        self._stderr = stderr
        self._default: Any = None

    def _target(self) -> Any:
        client = CURRENT.get()
        if client is not None:
            chosen = client.err if self._stderr else client.out
            if chosen is not None:
                return chosen
        if self._default is None:
            from rich.console import Console

            self._default = Console(stderr=self._stderr, highlight=False)
            if sane_width(self._default.width) != self._default.width:
                self._default.width = sane_width(self._default.width)
        return self._default

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target(), name)

    def __enter__(self) -> Any:
        return self._target().__enter__()

    def __exit__(self, *exc: Any) -> Any:
        return self._target().__exit__(*exc)


class StreamRouter:
    """Replaces ``sys.stdout``/``sys.stderr`` in the engine: writes of a request go to its client's buffer,
    everything else to the engine's own stream (its log)."""

    def __init__(self, name: str, fallback: Any) -> None:
        self._name = name
        self._fallback = fallback

    def _target(self) -> Any:
        client = CURRENT.get()
        buffer = getattr(client, self._name, None) if client is not None else None
        return buffer if buffer is not None else self._fallback

    def write(self, text: str) -> int:
        return self._target().write(text)

    def flush(self) -> None:
        target = self._target()
        if hasattr(target, "flush"):
            target.flush()

    def isatty(self) -> bool:
        client = CURRENT.get()
        if client is not None:
            return client.env.get(f"__tty_{self._name}") == "1"
        return bool(getattr(self._fallback, "isatty", lambda: False)())

    @property
    def encoding(self) -> str:
        return "utf-8"

    def fileno(self) -> int:
        return self._fallback.fileno()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fallback, name)


def install_routers() -> None:
    if not isinstance(sys.stdout, StreamRouter):
        sys.stdout = StreamRouter("stdout", sys.stdout)  # type: ignore[assignment]
        sys.stderr = StreamRouter("stderr", sys.stderr)  # type: ignore[assignment]
