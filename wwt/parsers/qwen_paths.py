"""Where Qwen Code keeps its data, and the marks of a Qwen recording in Gemini's legacy shape: below both the
Gemini and the Qwen reader (Qwen Code forked Gemini CLI and kept its recorder), and light enough for the hook."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path


def qwen_runtime_dir() -> Path:
    """``$QWEN_RUNTIME_DIR`` (Qwen's own override for session data, config/storage.ts) or ``~/.qwen``."""
    raw = os.environ.get("QWEN_RUNTIME_DIR")
    return Path(raw).expanduser() if raw else Path.home() / ".qwen"


def qwen_runtime_dirs() -> list[Path]:
    """Every folder Qwen Code may keep session data in: ``$QWEN_RUNTIME_DIR``, else the settings' folder first and
    ``~/.qwen`` (chats written there before the setting stay there)."""
    runtimes = [qwen_runtime_dir()]
    configured = _configured_runtime_dir()
    if configured is not None and not os.environ.get("QWEN_RUNTIME_DIR"):
        runtimes.insert(0, configured)
    return list(dict.fromkeys(runtimes))


def _configured_runtime_dir() -> Path | None:
    """``advanced.runtimeOutputDir`` of ``~/.qwen/settings.json`` when it names one folder (absolute or ``~/…``; a
    relative value is resolved per project by Qwen, so it names no single folder). Unreadable settings: None."""
    try:
        data = json.loads((Path.home() / ".qwen" / "settings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    advanced = data.get("advanced") if isinstance(data, dict) else None
    raw = advanced.get("runtimeOutputDir") if isinstance(advanced, dict) else None
    if not isinstance(raw, str) or not raw.strip():
        return None
    folder = Path(raw.strip()).expanduser()
    return folder if folder.is_absolute() else None


_QWEN_TYPED_RE = re.compile(rb'"type"\s*:\s*"qwen"')


def legacy_qwen_marks(path: Path, head: bytes) -> bool:
    """A ``.json`` recording in Qwen's ``tmp/<hash>/chats`` folder, or one whose model turns are typed ``qwen``
    (whether it is Gemini's shape at all is the caller's check)."""
    return path.name.endswith(".json") and (_in_qwen_tmp(path) or bool(_QWEN_TYPED_RE.search(head)))


def _in_qwen_tmp(path: Path) -> bool:
    parents = path.parents
    if len(parents) < 4 or parents[0].name != "chats" or parents[2].name != "tmp":
        return False
    return parents[3].name == ".qwen" or parents[3] == qwen_runtime_dir()
