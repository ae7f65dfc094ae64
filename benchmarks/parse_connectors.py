"""Parse throughput and peak RSS of the newer connectors, side by side in one run (issue 15 target: ≥ 30 MB/s on
a 100 MB synthetic file, reader memory flat in file size).

Formats: Qwen Code chat JSONL, Copilot CLI ``events.jsonl``, Cursor CLI agent transcript JSONL, Aider
``.aider.chat.history.md``, Cline ``ui_messages.json`` (one JSON list) and OpenCode's ``opencode.db`` (SQLite;
many sessions, as a real store holds). Two inputs per format:

  real-sized — the texts of ten genuine Claude Code sessions (``fixtures/real/claude-code``) written in the
           connector's format (``real_sized_logs.py``): real message sizes, KB-sized tool calls and outputs
  tiny     — the connector's own test fixture (tests/fixtures/<agent>/) repeated with fresh ids: records of a
           few dozen to a few hundred bytes, the per-record worst case

Reference: the Claude Code parser on ``parse.py``'s transcript (the same real sessions in Claude Code's own
format, repeated with fresh ids), parsed in every round beside the connectors. It met the same 30 MB/s target
(issue 3), so a connector's CPU MB/s as a ratio of it is the figure that travels between machines (these shared
hosts differ by up to 2× in absolute speed; a round's ratio is taken between processes run a few seconds apart).
``text/MB``: characters of message text a connector keeps per MB of file — what the rules (redaction, code
names) read, so what a MB costs.

Two modes, each in a fresh subprocess whose peak RSS (with any children, ``_shared.run_tree_measured``) is its
own:

  reader — the connector's own record reader as the parser calls it (JSONL lines and Markdown lines, dropped
           as read; Cline's JSON list entry by entry through a bounded window; OpenCode's rows one session at
           a time): what must stay flat in file size
  parse  — ``parse_file`` (connector + noise rules + redaction), returning every kept message (grows with the
           kept text by design: one session = one list)

    .venv/bin/python benchmarks/parse_connectors.py --sizes 10,100 [--inputs real-sized,tiny] [--rounds 3]
        [--append-results]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_sized_logs  # noqa: E402
from _shared import REAL_FIXTURES, load_average, replace_section, run_tree_measured  # noqa: E402

FIX = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
JSONL = {
    "qwen-code": (FIX / "qwen-code/projects/-home-mina-src-ledger/chats/7b1e0c52-9d3a-4f61-8a2e-5c4d3b2a1f00.jsonl",
                  "projects/-bench/chats/7b1e0c52-9d3a-4f61-8a2e-5c4d3b2a1f00.jsonl"),
    "copilot-cli": (FIX / "copilot-cli/session-state/4f2a9c1e-8b7d-4e60-9a35-d1c2b3a4e5f6/events.jsonl",
                    "session-state/4f2a9c1e-8b7d-4e60-9a35-d1c2b3a4e5f6/events.jsonl"),
    "cursor": (FIX / "cursor/home/.cursor/projects/home-ana-code-orbit/agent-transcripts/"
               "0c9e5a77-2b1d-4f3e-8a6c-7d5e4f3a2b1c.jsonl",
               ".cursor/projects/home-bench/agent-transcripts/0c9e5a77-2b1d-4f3e-8a6c-7d5e4f3a2b1c.jsonl"),
}
AIDER = FIX / "aider/quillpad/.aider.chat.history.md"
CLINE = FIX / "cline/saoudrizwan.claude-dev/tasks/1767950000000/ui_messages.json"
OPENCODE_SQL = FIX / "opencode/db/opencode.sql"
CONNECTORS = ("qwen-code", "copilot-cli", "cursor", "aider", "cline", "opencode")
REFERENCE = "claude-code"  # parse.py's transcript; measured in every round, parse mode only
INPUTS = ("real-sized", "tiny")


# ------------------------------------------------------------------------------------------ synthetic inputs


def _repeat_lines(source: Path, out_path: Path, megabytes: int, fresh) -> Path:
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    lines = [ln if ln.endswith("\n") else ln + "\n" for ln in lines]
    out_path.parent.mkdir(parents=True, exist_ok=True)
    target, written, rep = megabytes << 20, 0, 0
    with open(out_path, "w", encoding="utf-8") as out:
        while written < target:
            for line in lines:
                text = fresh(line, rep)
                out.write(text)
                written += len(text.encode("utf-8"))
            rep += 1
    return out_path


def _fresh_jsonl(line: str, rep: int) -> str:
    """New record ids per repetition (Qwen ``uuid``/``parentUuid``, Copilot event ``id``/``parentId``)."""
    if not line.startswith("{"):
        return ""
    for key in ('"uuid":"', '"parentUuid":"', '"id":"', '"parentId":"'):
        line = line.replace(key, f"{key}r{rep}-")
    return line


def _fresh_aider(line: str, rep: int) -> str:
    return line.replace("2026-03-14 09:05", f"2026-03-14 {rep // 60 % 24:02d}:{rep % 60:02d}")


def build_cline(out_path: Path, megabytes: int) -> Path:
    """One task's ``ui_messages.json`` (one JSON list, as Cline rewrites it) with the fixture's entries repeated
    at later times."""
    entries = json.loads(CLINE.read_text(encoding="utf-8"))
    out_path.parent.mkdir(parents=True, exist_ok=True)
    target, written, rep = megabytes << 20, 1, 0
    stamps = [e["ts"] for e in entries if isinstance(e, dict) and isinstance(e.get("ts"), int)]
    span = max(stamps) - min(stamps) + 1000
    with open(out_path, "w", encoding="utf-8") as out:
        out.write("[")
        first = True
        while written < target:
            for entry in entries:
                moved = dict(entry, ts=entry["ts"] + rep * span) if isinstance(entry, dict) and "ts" in entry else entry
                text = ("" if first else ",") + json.dumps(moved,
                                                           separators=(",", ":"), ensure_ascii=False)
                first = False
                out.write(text)
                written += len(text.encode("utf-8"))
            rep += 1
        out.write("]")
    return out_path


def build_opencode(out_path: Path, megabytes: int) -> Path:
    """``opencode.db`` from the fixture's schema and rows, sessions copied with fresh ids until the file is big
    enough (a real store holds many sessions of ordinary length)."""
    out_path.parent.mkdir(parents=True, exist_ok=True)
    seed = sqlite3.connect(":memory:")
    seed.executescript(OPENCODE_SQL.read_text(encoding="utf-8"))
    tables = {t: [tuple(r) for r in seed.execute(f"SELECT * FROM {t}")] for t in ("project", "session", "message", "part")}
    schema = [r[0] for r in seed.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL")]
    cols = {t: [c[1] for c in seed.execute(f"PRAGMA table_info({t})")] for t in tables}
    conn = sqlite3.connect(out_path)
    for sql in schema:
        conn.execute(sql)
    conn.executemany(f"INSERT INTO project VALUES ({','.join('?' * len(cols['project']))})", tables["project"])
    id_cols = {"session": ("id", "parent_id"), "message": ("id", "session_id"), "part": ("id", "message_id", "session_id")}
    rep, target = 0, megabytes << 20
    while True:
        for table in ("session", "message", "part"):
            rows = []
            for row in tables[table]:
                values = list(row)
                for name in id_cols[table]:
                    i = cols[table].index(name)
                    if values[i] is not None:
                        values[i] = f"{values[i]}_r{rep}"
                rows.append(values)
            conn.executemany(f"INSERT INTO {table} VALUES ({','.join('?' * len(cols[table]))})", rows)
        rep += 1
        if rep % 200 == 0:
            conn.commit()
            if out_path.stat().st_size >= target:
                break
    conn.commit()
    conn.close()
    return out_path


def build(platform: str, folder: Path, megabytes: int, inputs: str = "tiny") -> Path:
    if platform == REFERENCE:
        path = folder / "claude/session.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        real_sized_logs.build_transcript(path, megabytes)
        return path
    if inputs == "real-sized":
        return real_sized_logs.build(platform, folder, megabytes, REAL_FIXTURES / "claude-code",
                                     OPENCODE_SQL.read_text(encoding="utf-8"))
    if platform in JSONL:
        source, relative = JSONL[platform]
        return _repeat_lines(source, folder / relative, megabytes, _fresh_jsonl)
    if platform == "aider":
        return _repeat_lines(AIDER, folder / "repo/.aider.chat.history.md", megabytes, _fresh_aider)
    if platform == "cline":
        return build_cline(folder / "saoudrizwan.claude-dev/tasks/1767950000000/ui_messages.json", megabytes)
    return build_opencode(folder / "opencode/opencode.db", megabytes)


# ------------------------------------------------------------------------------------------ measuring (child)


def read_records(platform: str, path: Path) -> int:
    """The connector's record reader alone; each record is dropped as soon as it is read."""
    from wwt.models import ParseReport
    from wwt.parsers.common import iter_jsonl

    report = ParseReport(path=str(path))
    if platform in JSONL:
        return sum(1 for _ in iter_jsonl(path, report))
    if platform == "aider":
        from wwt.parsers.aider import _texts

        with open(path, "rb") as fh:
            for _text in _texts(fh, report):  # what parse_history reads: whole lines, a block at a time
                pass
        return report.lines
    if platform == "cline":
        from wwt.parsers.common import iter_json_list

        return sum(1 for _ in iter_json_list(path, report))  # what parse_task reads: the list, entry by entry
    from wwt.parsers.opencode import SESSIONS_SQL, open_readonly, session_rows

    conn = open_readonly(path)  # the rows _parse_db reads, the way it reads them (one session at a time)
    try:
        records = 0
        for row in conn.execute(SESSIONS_SQL):
            messages, parts = session_rows(conn, row[0], report)
            records += 1 + len(messages) + sum(len(p) for p in parts.values())
        return records
    finally:
        conn.close()


def measure(mode: str, platform: str, path: str) -> dict:
    from wwt.parsers import parse_file

    wall, cpu = time.perf_counter(), time.process_time()
    if mode == "reader":
        records, messages, sessions = read_records(platform, Path(path)), 0, 0
    else:
        found, report = parse_file(Path(path))
        assert report.platform == platform, (report.platform, platform)
        records, sessions, messages = report.lines, len(found), sum(len(s.messages) for s in found)
    seconds, cpu_seconds = time.perf_counter() - wall, time.process_time() - cpu
    chars = sum(len(m.text) for s in found for m in s.messages) if mode == "parse" else 0  # after the clock
    return {"seconds": seconds, "cpu_seconds": cpu_seconds, "records": records, "sessions": sessions,
            "messages": messages, "chars": chars}


def run_child(mode: str, platform: str, path: Path) -> dict:
    _, peak, code, out, _ = run_tree_measured([sys.executable, __file__, "--child", mode, platform, str(path)])
    if code != 0:
        raise SystemExit(f"{platform} {mode} child failed: {out[-800:]}")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_rss_mb"] = peak
    return result


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10,100", help="synthetic input sizes in MB, comma-separated")
    ap.add_argument("--only", default=",".join(CONNECTORS), help="connectors to measure, comma-separated")
    ap.add_argument("--inputs", default=",".join(INPUTS), help="synthetic inputs: real-sized, tiny (comma-separated)")
    ap.add_argument("--rounds", type=int, default=1, help="parses of each input, alternating with the reference")
    ap.add_argument("--append-results", action="store_true", help="write its section into benchmarks/RESULTS.md")
    ap.add_argument("--child", nargs=3, metavar=("MODE", "PLATFORM", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure(*args.child)))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    _, base, _, _, _ = run_tree_measured([sys.executable, "-c", "import wwt.parsers"])
    with tempfile.TemporaryDirectory(prefix="wwt-bench-") as tmp:
        inputs = {}  # (platform, inputs, size) -> path, every file written before the first measurement
        for size in sizes:
            inputs[(REFERENCE, "real-sized", size)] = build(REFERENCE, Path(tmp) / f"ref-{size}", size)
            for platform in args.only.split(","):
                for kind in args.inputs.split(","):
                    inputs[(platform, kind, size)] = build(platform, Path(tmp) / f"{platform}-{kind}-{size}", size, kind)
        rows = [measure_one("reader", *key, path) for key, path in inputs.items() if key[0] != REFERENCE]
        parses: dict[tuple, list[dict]] = {key: [] for key in inputs}
        for _ in range(max(1, args.rounds)):
            for key, path in inputs.items():  # the reference first in each size, then the connectors
                parses[key].append(measure_one("parse", *key, path))
    for key, runs in parses.items():
        rows.append(_combined(runs, parses[(REFERENCE, "real-sized", key[2])]))
    print(f"baseline RSS (python + wwt.parsers imported): {base:.1f} MB")
    for r in rows:
        if r["mode"] == "parse":
            print(f"{r['platform']:12} {r['inputs']:10} {r['size']:4} MB  parse  median {r['cpu_mb_s']:5.1f} MB/s CPU  "
                  f"= {r['ratio']:.2f}× the Claude Code parser (median of {r['rounds']} rounds' ratios)  "
                  f"text {r['chars_per_mb'] / 1e3:.0f} K chars/MB")
    if args.append_results:
        _append(rows, base, args.sizes, args.inputs, args.rounds)


def measure_one(mode: str, platform: str, inputs: str, size: int, path: Path) -> dict:
    actual = path.stat().st_size / 1e6
    r = run_child(mode, platform, path)
    r.update(platform=platform, inputs=inputs, mode=mode, size=size, mb=actual, mb_s=actual / r["seconds"],
             cpu_mb_s=actual / r["cpu_seconds"], chars_per_mb=r["chars"] / actual)
    print(f"{platform:12} {inputs:10} {actual:7.1f} MB  {mode:6}  {r['mb_s']:6.1f} MB/s wall  "
          f"{r['cpu_mb_s']:6.1f} MB/s cpu  peak RSS {r['peak_rss_mb']:6.1f} MB  "
          f"records {r['records']}  sessions {r['sessions']}  messages {r['messages']}", flush=True)
    return r


def _combined(runs: list[dict], reference: list[dict]) -> dict:
    """One row for an input's parses: the median round by CPU MB/s, the median of the rounds' ratios to the
    reference's parse of the same round, the highest peak RSS."""
    ordered = sorted(runs, key=lambda r: r["cpu_mb_s"])
    row = dict(ordered[len(ordered) // 2])
    ratios = sorted(r["cpu_mb_s"] / ref["cpu_mb_s"] for r, ref in zip(runs, reference, strict=True))
    row.update(ratio=ratios[len(ratios) // 2], rounds=len(runs), peak_rss_mb=max(r["peak_rss_mb"] for r in runs),
               all_cpu_mb_s=[r["cpu_mb_s"] for r in runs])
    return row


def _append(rows: list[dict], base: float, sizes: str, inputs: str, rounds: int) -> None:
    small, large = min(r["size"] for r in rows), max(r["size"] for r in rows)
    lines = [
        f"## Parse throughput and peak RSS — the newer connectors ({time.strftime('%Y-%m-%d')})",
        "",
        f"Command: `python benchmarks/parse_connectors.py --sizes {sizes} --inputs {inputs} --rounds {rounds} "
        "--append-results` "
        f"({os.cpu_count()} shared CPU cores, load average {load_average()}, Python {sys.version.split()[0]}). "
        "Inputs: `real-sized` = the texts of the ten genuine Claude Code sessions in `fixtures/real/claude-code` "
        "(SOURCES.md), in order, written in each connector's format and repeated with fresh ids "
        "(`real_sized_logs.py`); their sizes: " + real_sized_logs.distribution(real_sized_logs.script(REAL_FIXTURES / "claude-code")) + ". "
        "`tiny` = each connector's test fixture repeated with fresh ids (records of a few dozen to a few hundred "
        "bytes: the per-record worst case; OpenCode: whole sessions copied into one `opencode.db`). `reader` = the "
        "connector's record reader alone (records dropped as read); `parse` = `parse_file`, keeping every message. "
        "Peak RSS = the measuring process and any it starts. `claude-code` = the reference: the Claude Code parser "
        "on `parse.py`'s transcript of the same real sessions, parsed in every round; `× ref` = the median of the "
        "rounds' ratios of a connector's CPU MB/s to the reference's in the same round (the figure that travels: "
        "these hosts differ by up to 2× in absolute speed). Parse rows: the median round. `text/MB` = characters of "
        "message text kept per MB of file. Targets: ≥ 30 MB/s at 100 MB, reader RSS flat in file size.",
        "",
        "| connector | input | size | mode | MB/s (wall) | MB/s (CPU time) | × ref | text/MB | peak RSS MB | records | "
        "sessions | messages |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ratio = f"{r['ratio']:.2f}" if "ratio" in r and r["platform"] != REFERENCE else ""
        text = f"{r['chars_per_mb'] / 1e3:.0f} K" if r["mode"] == "parse" else ""
        lines.append(f"| {r['platform']} | {r['inputs']} | {r['mb']:.1f} MB | {r['mode']} | {r['mb_s']:.1f} | "
                     f"{r['cpu_mb_s']:.1f} | {ratio} | {text} | {r['peak_rss_mb']:.1f} | {r['records']} | "
                     f"{r['sessions'] or ''} | {r['messages'] or ''} |")
    lines += ["", f"Baseline RSS (interpreter + `wwt.parsers` imported): {base:.1f} MB.", ""]
    for platform, kind in dict.fromkeys((r["platform"], r["inputs"]) for r in rows):
        get = {(r["size"], r["mode"]): r for r in rows if r["platform"] == platform and r["inputs"] == kind}
        if (small, "reader") in get and (large, "reader") in get and small != large:
            a, b, p = get[(small, "reader")], get[(large, "reader")], get[(large, "parse")]
            lines.append(f"- {platform} ({kind}): reader RSS above baseline {a['peak_rss_mb'] - base:.1f} → "
                         f"{b['peak_rss_mb'] - base:.1f} MB ({small} → {large} MB); parse at {large} MB "
                         f"{p['mb_s']:.1f} MB/s wall, {p['cpu_mb_s']:.1f} MB/s CPU (rounds: "
                         + ", ".join(f"{v:.1f}" for v in p["all_cpu_mb_s"]) + f"), {p['ratio']:.2f}× the reference")
    replace_section("parse-connectors", "\n".join(lines))


if __name__ == "__main__":
    main()
