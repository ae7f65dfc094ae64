"""A long Claude Code session written in its JSONL shape (one object per line: ``type``, ``uuid``, ``parentUuid``,
``sessionId``, ``cwd``, ``timestamp``, ``message``), for tests/test_long_sessions.py and benchmarks/long_session.py.
No imports from the tests' or benchmarks' helpers, so both can load it."""

from __future__ import annotations

import json
from pathlib import Path

SESSION = "7d2c51f0-4b1e-4c8e-9a55-0c0ffee00001"


def claude_record(i: int, parent: str | None, role: str, text: str) -> dict:
    minute, second = divmod(i, 60)
    hour, minute = divmod(minute, 60)
    return {
        "type": role,
        "uuid": f"00000000-0000-4000-8000-{i:012d}",
        "parentUuid": parent,
        "sessionId": SESSION,
        "cwd": "/home/dev/longproj",
        "gitBranch": "main",
        "timestamp": f"2026-03-0{1 + hour // 24}T{hour % 24:02d}:{minute:02d}:{second:02d}.000Z",
        "message": {"role": role, "content": text if role == "user" else [{"type": "text", "text": text}]},
    }


def write_long_session(path: Path, messages: int, bad_lines: dict[int, str] | None = None) -> None:
    """``messages`` alternating user/assistant turns; ``bad_lines`` puts a raw line before message i."""
    parent = None
    with path.open("w", encoding="utf-8") as f:
        for i in range(messages):
            if bad_lines and i in bad_lines:
                f.write(bad_lines[i] + "\n")
            role = "user" if i % 2 == 0 else "assistant"
            text = f"turn {i}: checking the quokka{i} widget cache" if role == "user" else f"answer {i}: flushed"
            rec = claude_record(i, parent, role, text)
            parent = rec["uuid"]
            f.write(json.dumps(rec) + "\n")
