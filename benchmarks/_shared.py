"""Where the shared benchmark data lives: ``../shared`` beside the checkout, or ``$WWT_SHARED``."""

import os
from pathlib import Path

SHARED = Path(os.environ.get("WWT_SHARED") or Path(__file__).resolve().parents[2] / "shared")
REAL_FIXTURES = SHARED / "fixtures" / "real"
KORQUAD = SHARED / "data" / "korquad" / "KorQuAD_v1.0_dev.json"
