"""Helpers for tests that start real engines: find them by their info files and make sure they are gone."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path


def engine_pids(runtime: Path) -> list[int]:
    pids = []
    for info in runtime.glob("*.json"):
        try:
            pids.append(int(json.loads(info.read_text())["pid"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return pids


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except OSError:
        return True


def kill_engines_in(runtime: Path, grace_s: float = 3.0) -> None:
    """SIGTERM every engine with an info file in ``runtime`` (SIGKILL after ``grace_s``)."""
    pids = [p for p in engine_pids(runtime) if alive(p)]
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace_s
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in pids:
        if alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
