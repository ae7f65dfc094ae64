"""Where the shared test data lives: ``../shared`` beside the checkout (as laid out for CI), or ``$WWT_SHARED``."""

import os
import sqlite3
from pathlib import Path

SHARED = Path(os.environ.get("WWT_SHARED") or Path(__file__).resolve().parents[2] / "shared")
REAL_FIXTURES = SHARED / "fixtures" / "real"
KORQUAD_DEV = SHARED / "data" / "korquad" / "KorQuAD_v1.0_dev.json"


def ingest_real_fixtures(tmp_path: Path, embedder_factory, backfill: bool = True):
    """Every real fixture log copied under ``tmp_path/logs`` and ingested into a fresh ``tmp_path/home`` (set as
    WWT_HOME by the caller): (home, logs, store, indexes, summary)."""
    import shutil

    from wwt import ingest
    from wwt.indexes import open_synced
    from wwt.store import Store

    home, logs = tmp_path / "home", tmp_path / "logs"
    for path in sorted(p for p in REAL_FIXTURES.rglob("*.json*") if p.is_file()):
        target = logs / path.relative_to(REAL_FIXTURES)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    home.mkdir()
    store = Store.open(home / "wwt.sqlite3")
    indexes, _ = open_synced(store, home / "index")
    summary = ingest.ingest([logs], store, indexes, embedder_factory, backfill=backfill)
    return home, logs, store, indexes, summary


# A Gemini transcript whose text carries terminal control characters: an OSC title change ended by BEL, a
# clear-screen CSI, a right-to-left override, NUL, colour CSIs (7-bit ESC and 8-bit C1) and bidi isolates.
HOSTILE_SESSION = "b1d1c0de-0000-4000-8000-000000000001"
HOSTILE_QUESTION = "why does the payments deploy fail\x1b]0;pwned\x07 after\x1b[2J the invoice\u202etxt.exe check\x00?"
HOSTILE_ANSWER = "The payments deploy fails because \u2066the\u2069 invoice check\x1b[31m exits\x9b0m early.\tsee\nbelow"
TERMINAL_CONTROLS = ("\x00", "\x07", "\x1b", "\x9b", "\u202e", "\u2066", "\u2069")


def write_hostile_transcript(folder: Path) -> Path:
    import json

    folder.mkdir(parents=True, exist_ok=True)
    records = [
        {"sessionId": HOSTILE_SESSION, "projectHash": "h", "startTime": "2026-05-03T10:00:00Z"},
        {"id": "u1", "timestamp": "2026-05-03T10:00:01Z", "type": "user", "content": HOSTILE_QUESTION},
        {"id": "g1", "timestamp": "2026-05-03T10:00:02Z", "type": "gemini", "content": HOSTILE_ANSWER},
    ]
    path = folder / "session-2026-05-03T10-00-b1d1c0de.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def claimed_queue_rows(db: Path, timeout: float = 5.0) -> int:
    """Queue rows an ingest has claimed and not finished (read-only; 0 while the store cannot be read): a worker
    or the engine is in the middle of an ingest."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=timeout)
        try:
            return conn.execute("SELECT COUNT(*) FROM ingest_queue WHERE claimed_at IS NOT NULL").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0
