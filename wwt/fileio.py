"""Writing a file so that a crash never leaves half of it: shared by the agent config edits (``wwt setup``),
the tokenizer cache, the model cache's checksum stamp and the lexical index's stamp. Standard library only —
the embedder imports it on every cold start."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: Path, data: str | bytes, default_mode: int = 0o600) -> None:
    """temp file in the same folder + fsync + rename: a reader sees the old or the new file, never half. An
    existing file keeps its mode; a new one gets ``default_mode``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = default_mode
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".wwt-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
