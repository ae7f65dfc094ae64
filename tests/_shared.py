"""Where the shared test data lives: ``../shared`` beside the checkout (as laid out for CI), or ``$WWT_SHARED``."""

import os
from pathlib import Path

SHARED = Path(os.environ.get("WWT_SHARED") or Path(__file__).resolve().parents[2] / "shared")
REAL_FIXTURES = SHARED / "fixtures" / "real"
