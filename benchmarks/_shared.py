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
