"""``wwt ui`` in a real browser (issue 28): how long from pressing Enter on a question to the results, and from
opening a hit to its message highlighted on screen; and a 5,000-message session's first screen.

A fresh data dir gets the real fixture logs (``$WWT_SHARED/fixtures/real``) and one Claude Code session of 5,000
messages (``tests/long_session_log.py``), ingested with vectors; ``wwt ui --no-browser --port 0`` runs as its
own process; headless system Chromium (Playwright, never ``playwright install``) does what a user does: types the
query, presses Enter, presses Enter again on the first result. Times are wall clock in this process around
those key presses until the page shows the answer (``.hit-card``; then ``.msg.hit`` focused). The first
search after the server starts is reported apart (the server loads the model and indexes in the background at
start; the first question may still wait for them).

    WWT_MODEL_DIR=<model folder> python benchmarks/ui_timing.py [--rounds 5] [--append-results]
"""

from __future__ import annotations

import argparse
import http.client
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _shared import load_average, replace_section

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT / "tests"))  # after benchmarks/: its _shared wins
from long_session_log import SESSION, write_long_session  # noqa: E402

SHARED = Path(os.environ.get("WWT_SHARED") or ROOT.parent / "shared")
FIXTURES = SHARED / "fixtures" / "real"
LONG_MESSAGES = 5_000
QUERIES = [  # (query, what it is)
    ("go.mod toolchain", "English identifiers"),
    ("파이썬 버전 통일", "Korean"),
    ("mix phx.server background", "English command"),
    ("quokka4320", "identifier said once, in message #4,320 of the 5,000"),
    ("TodoWrite clear list", "tool name + words"),
]


def start_ui(home: Path) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "WWT_HOME": str(home), "WWT_ENGINE": "off", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "wwt", "ui", "--no-browser", "--port", "0"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    match = re.search(r"(http://127\.0\.0\.1:(\d+)/\?token=\S+)", line)
    if not match:
        proc.kill()
        raise SystemExit(f"wwt ui printed no URL: {line!r}")
    port = int(match.group(2))
    for _ in range(300):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/")
            conn.getresponse().read()
            break
        except OSError:
            time.sleep(0.05)
    return proc, match.group(1)


def ms(values: list[float]) -> str:
    return f"p50 {statistics.median(values) * 1000:.0f} ms, max {max(values) * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--append-results", action="store_true")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from wwt.service import Memory

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    with tempfile.TemporaryDirectory(prefix="wwt-ui-bench-") as tmp:
        work = Path(tmp)
        logs, home = work / "logs", work / "home"
        shutil.copytree(FIXTURES, logs)
        write_long_session(logs / "claude-code" / f"{SESSION}.jsonl", LONG_MESSAGES)
        started = time.perf_counter()
        with Memory(home) as memory:
            summary = memory.ingest([logs], backfill_seconds=None)
        ingest_s = time.perf_counter() - started
        proc, url = start_ui(home)
        base = url.split("/?", 1)[0]
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
                page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
                page.goto(url)
                page.wait_for_selector("body[data-ready=search]")

                def search_and_open(query: str) -> tuple[float, float, int]:
                    page.fill("#q", query)
                    t0 = time.perf_counter()
                    page.keyboard.press("Enter")
                    page.wait_for_selector("#result-count")
                    found = time.perf_counter() - t0
                    hits = page.locator(".hit-card").count()
                    if not hits:
                        return found, float("nan"), 0
                    page.locator("#q").blur()
                    t1 = time.perf_counter()
                    page.keyboard.press("Enter")
                    page.wait_for_selector("body[data-ready=session] .msg.hit")
                    opened = time.perf_counter() - t1
                    page.keyboard.press("Escape")
                    page.wait_for_selector("body[data-ready=search]")
                    return found, opened, hits

                first_found, first_opened, _ = search_and_open(QUERIES[0][0])
                rows = []
                for query, kind in QUERIES:
                    found_all, opened_all, total_all = [], [], []
                    for _ in range(args.rounds):
                        found, opened, hits = search_and_open(query)
                        found_all.append(found)
                        if hits:
                            opened_all.append(opened)
                            total_all.append(found + opened)
                    rows.append((query, kind, found_all, opened_all, total_all))
                screens = []
                for _ in range(args.rounds):
                    t0 = time.perf_counter()
                    page.goto(f"{base}/session/{SESSION}")
                    page.wait_for_selector("body[data-ready=session]")
                    screens.append(time.perf_counter() - t0)
                shown = page.locator("article.msg").count()
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=10)

    lines = [
        f"## Viewer: search → hit → highlighted message, and a {LONG_MESSAGES:,}-message session (issue 28, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
        "",
        f"`python benchmarks/ui_timing.py --rounds {args.rounds}` — headless system Chromium "
        f"({platform.machine()}, Python {platform.python_version()}, load average {load_average()}). Archive: the "
        f"real fixture logs + one {LONG_MESSAGES:,}-message Claude Code session ({summary.messages_added:,} "
        f"messages, {summary.chunks_added:,} chunks, ingested with vectors in {ingest_s:.1f} s). Wall clock around "
        "the key presses, until the page shows it.",
        "",
        f"First search after the server started (model and indexes may still be loading): "
        f"results {first_found * 1000:.0f} ms, open + highlight {first_opened * 1000:.0f} ms.",
        "",
        "| query | kind | Enter → results | Enter → hit highlighted | together |",
        "|---|---|---|---|---|",
    ]
    for query, kind, found_all, opened_all, total_all in rows:
        lines.append(f"| `{query}` | {kind} | {ms(found_all)} | "
                     f"{ms(opened_all) if opened_all else 'no hit'} | {ms(total_all) if total_all else '—'} |")
    lines += [
        "",
        f"{LONG_MESSAGES:,}-message session, first screen (navigation → {shown} messages rendered, paged "
        f"{shown} at a time): {ms(screens)} over {args.rounds} loads (target ≤ 1 s).",
    ]
    text = "\n".join(lines)
    print(text)
    if args.append_results:
        replace_section("ui-timing", text)


if __name__ == "__main__":
    main()
