"""What moving an archive to blended chunk vectors costs (issue 29): the first ingest after the upgrade re-chunks
every session (schema 7 marks them), each chunk with user turns to blend gets a new vector key and keeps its
old vector until the back-fill embeds the new one; and the back-fill's embedding per chunk, blended (the text as
a passage + each user turn as a question) against the text alone, side by side in one run.

The archive: a copy of ``benchmarks/scale.py``'s 100k-chunk home (``benchmarks/.work/scale/100k/home``, build
it first with ``python benchmarks/scale.py``) — or ``--home`` for another. A copy written by this wwt (schema 7)
is first put back the way wwt left it before the blend: schema 6, each chunk's vector key the hash of its text
alone, holding its present vector as the stand-in for the old one (what it holds does not change the cost). The
copy is opened by this wwt in a fresh process (``WWT_ENGINE=off``): the migration, then
phase 1 of an ingest with no new log (only the re-chunking), timed with its CPU and the peak memory of the
process tree. Then ``--embed N`` pending chunks of the migrated copy, embedded both ways in alternating rounds.

    WWT_MODEL_DIR=<model folder> python benchmarks/blend_upgrade.py [--home DIR] [--embed 240] [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _shared import load_average, replace_section, run_tree_measured

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

UPGRADE = (
    "import json, sys, time; from pathlib import Path\n"
    "from wwt.store import Store\n"
    "from wwt.indexes import open_synced\n"
    "from wwt import ingest\n"
    "home = Path(sys.argv[1]); t0 = time.monotonic()\n"
    "store = Store.open(home / 'wwt.sqlite3'); migrated = time.monotonic() - t0\n"
    "dirty = len(store.dirty_sessions())\n"
    "indexes, _ = open_synced(store, home / 'index'); t1 = time.monotonic()\n"
    "def no_model(): raise SystemExit('phase 1 loaded the model')\n"
    "s = ingest.ingest([Path(sys.argv[2])], store, indexes, no_model, backfill=False)\n"
    "rechunk = time.monotonic() - t1\n"
    "with_vector, total = store.vector_progress()\n"
    "print(json.dumps({'migrate_s': migrated, 'dirty': dirty, 'rechunk_s': rechunk, 'added': s.chunks_added,\n"
    "    'removed': s.chunks_removed, 'chunks': total, 'pending': total - with_vector,\n"
    "    'in_vector_index': indexes.vector.count(), 'consistent': indexes.verify_against(store),\n"
    "    'left_dirty': len(store.dirty_sessions())}))\n"
)


def schema_of(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0])
    finally:
        conn.close()


def as_before_the_blend(db: Path) -> None:
    """Schema 7 → the schema-6 shape: no ``requests``/``stale_hash``, keys = sha256(embed text), vectors kept."""
    import hashlib

    conn = sqlite3.connect(db)
    with conn:
        rows = conn.execute("SELECT c.id, c.embed_text, e.vector, e.dim FROM chunks c"
                            " LEFT JOIN embeddings e ON e.text_hash = c.embed_hash").fetchall()
        conn.execute("DELETE FROM embeddings")
        for chunk_id, text, vector, dim in rows:
            key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
            conn.execute("UPDATE chunks SET embed_hash = ? WHERE id = ?", (key, chunk_id))
            if vector is not None:
                conn.execute("INSERT OR IGNORE INTO embeddings VALUES (?, ?, ?)", (key, dim, vector))
        conn.execute("DROP INDEX chunks_stale")
        conn.execute("ALTER TABLE chunks DROP COLUMN stale_hash")
        conn.execute("ALTER TABLE chunks DROP COLUMN requests")
        conn.execute("DELETE FROM dirty_sessions")
        conn.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
    conn.execute("VACUUM")
    conn.close()


def upgrade(home: Path, work: Path) -> dict:
    copy = work / "home"
    shutil.copytree(home, copy, ignore=shutil.ignore_patterns("*.lock", "engine*"))
    schema = schema_of(copy / "wwt.sqlite3")
    if schema_of(copy / "wwt.sqlite3") == 7:
        as_before_the_blend(copy / "wwt.sqlite3")
    empty = work / "no-new-logs"
    empty.mkdir()
    env = dict(os.environ, WWT_HOME=str(copy), WWT_ENGINE="off", HOME=str(work))
    detail: dict = {}
    wall, peak, code, out, cpu = run_tree_measured([sys.executable, "-c", UPGRADE, str(copy), str(empty)], env=env,
                                                   detail=detail)
    if code != 0:
        raise SystemExit(f"upgrade failed: {out[-600:]}")
    result = json.loads(out.strip().splitlines()[-1])
    result.update(wall=wall, cpu=cpu, peak_mb=peak, processes=detail.get("processes", 1), home=copy, schema=schema)
    return result


def embedding_cost(home: Path, count: int, rounds: int = 3) -> dict:
    """Seconds per chunk, blended vs the text alone, on ``count`` pending chunks of the migrated copy, in
    alternating rounds (load from other work falls on both alike)."""
    from wwt.chunker import REQUEST_WEIGHT
    from wwt.embedder import chunk_vectors, load_embedder
    from wwt.store import Store

    store = Store.open(home / "wwt.sqlite3")
    items = [(text, requests) for _, text, requests in store.pending_vectors(count)]
    all_chunks = store.conn.execute("SELECT requests FROM chunks").fetchall()
    store.close()
    embedder = load_embedder()
    embedder.embed_passages(["warm up the model"])
    times: dict[str, list[float]] = {"text alone": [], "blended": []}
    step = max(1, len(items) // 4)
    for round_ in range(rounds):
        for start in range(0, len(items), step):
            part = items[start:start + step]
            order = ("text alone", "blended") if (round_ + start // step) % 2 == 0 else ("blended", "text alone")
            for label in order:
                began = time.perf_counter()
                if label == "blended":
                    chunk_vectors(embedder, part, REQUEST_WEIGHT)
                else:
                    embedder.embed_passages([text for text, _ in part])
                times[label].append((time.perf_counter() - began) / len(part))
    from wwt.store.rows import requests_of

    per_chunk = [len(requests_of(r[0])) for r in all_chunks]
    return {
        "items": len(items),
        "requests_sample": statistics.mean(len(r) for _, r in items) if items else 0.0,
        "requests_archive": statistics.mean(per_chunk) if per_chunk else 0.0,
        "with_requests": sum(1 for n in per_chunk if n) / max(1, len(per_chunk)),
        **{label: statistics.median(values) for label, values in times.items()},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, default=HERE / ".work" / "scale" / "100k" / "home")
    ap.add_argument("--embed", type=int, default=240, help="pending chunks embedded both ways")
    ap.add_argument("--write", action="store_true", help="write section blend-upgrade of RESULTS.md")
    args = ap.parse_args()
    db = args.home / "wwt.sqlite3"
    if not db.exists():
        raise SystemExit(f"no archive at {args.home}: build it with `python benchmarks/scale.py` or pass --home")
    if schema_of(db) not in (6, 7):
        raise SystemExit(f"{db} has schema {schema_of(db)}: this measures the move from schema 6 (or 7 put back)")
    with tempfile.TemporaryDirectory(dir=HERE / ".work") as tmp:
        up = upgrade(args.home, Path(tmp))
        cost = embedding_cost(up["home"], args.embed)
    ratio = cost["blended"] / cost["text alone"]
    lines = [
        "`python benchmarks/blend_upgrade.py --write` — multilingual-e5-small int8 "
        f"(offline test build), Python {sys.version.split()[0]}, load {load_average()}. Archive: a copy of the "
        f"scale benchmark's home ({up['chunks']:,} chunks) as wwt left it before the blend (schema "
        f"{up['schema']}{' put back to 6' if up['schema'] == 7 else ''}), opened by this wwt in a fresh process, "
        "WWT_ENGINE=off.",
        "",
        "| step | figure |",
        "|---|---|",
        f"| migration to schema 7 (columns added, sessions marked) | {up['migrate_s']:.1f} s, {up['dirty']:,} sessions "
        "to re-chunk |",
        f"| first ingest after it, phase 1, no new log (re-chunks every session) | {up['rechunk_s']:.0f} s wall "
        f"(process {up['wall']:.0f} s, CPU {up['cpu']:.0f} s, peak {up['peak_mb']:.0f} MB, "
        f"{up['processes']} process(es)) |",
        f"| chunks added / removed by it | {up['added']} / {up['removed']} (keys unchanged) |",
        f"| chunks waiting for a blended vector | {up['pending']:,} of {up['chunks']:,} "
        f"({up['pending'] / max(1, up['chunks']):.0%}); left dirty {up['left_dirty']} |",
        f"| chunks in the vector index meanwhile | {up['in_vector_index']:,} (their old vectors); indexes agree "
        f"with SQLite: {up['consistent']} |",
        f"| embedding per chunk, text alone → blended ({cost['items']} pending chunks, "
        f"{cost['requests_sample']:.1f} user turns each; median of rounds) | {cost['text alone'] * 1000:.0f} ms → "
        f"{cost['blended'] * 1000:.0f} ms ({ratio:.2f}×) |",
        f"| user turns blended per chunk, whole archive | {cost['requests_archive']:.2f} "
        f"({cost['with_requests']:.0%} of chunks have any) |",
        f"| back-fill of every waiting chunk at that rate (in slices, old vectors serving meanwhile) | "
        f"≈ {up['pending'] * cost['blended'] / 3600:.1f} h |",
        "",
        "Not real here: the scale corpus's turns are KorQuAD and fixture texts (its user turns are KorQuAD questions "
        "and fixture requests), so the share of chunks with user turns to blend is the corpus's, not a user's.",
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        replace_section("blend-upgrade", "## Moving an archive to blended vectors (issue 29)\n\n" + text)


if __name__ == "__main__":
    main()
