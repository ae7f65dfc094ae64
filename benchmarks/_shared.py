"""Where the shared benchmark data lives: ``../shared`` beside the checkout, or ``$WWT_SHARED``."""

import os
from pathlib import Path

SHARED = Path(os.environ.get("WWT_SHARED") or Path(__file__).resolve().parents[2] / "shared")
REAL_FIXTURES = SHARED / "fixtures" / "real"
KORQUAD = SHARED / "data" / "korquad" / "KorQuAD_v1.0_dev.json"


def model_key() -> str:
    """Cache key for e5 vectors: the model file (``$WWT_MODEL_DIR``) and how wwt runs it (graph fusions move
    int8 vectors in their last digits)."""
    from wwt.embedder import DISABLED_FUSIONS

    model = Path(os.environ.get("WWT_MODEL_DIR", "")) / "model.onnx"
    stat = model.stat() if model.exists() else None
    runtime = ",".join(DISABLED_FUSIONS)
    return f"{model}:{stat.st_size if stat else 0}:{int(stat.st_mtime) if stat else 0}:{runtime}"


RESULTS = Path(__file__).with_name("RESULTS.md")


def _markers(key: str) -> tuple[str, str]:
    return f"<!-- section: {key} -->", f"<!-- /section: {key} -->"


def replace_section(key: str, body: str, results: Path = RESULTS) -> None:
    """Put one benchmark's current section into RESULTS.md, replacing its previous one (history is git).

    A section sits between ``<!-- section: KEY -->`` and ``<!-- /section: KEY -->``; a new key is added at the
    end, so the summary on top stays where it is."""
    start, end = _markers(key)
    block = f"{start}\n{body.strip()}\n{end}\n"
    text = results.read_text(encoding="utf-8") if results.exists() else "# Benchmark results\n\n"
    head, found, rest = text.partition(start)
    if found:
        _, closed, tail = rest.partition(end)
        if not closed:
            raise ValueError(f"{results.name}: section {key!r} has no end marker")
        text = head + block + ("\n" + tail.lstrip("\n") if tail.strip() else "")
    else:
        text = text.rstrip("\n") + "\n\n" + block
    from wwt.fileio import atomic_write

    atomic_write(results, text, 0o644)
