"""Hostile and odd input: a 1 GB line, a 500 MB file, symlink loops, unreadable folders, Unicode edge cases,
paths with spaces and non-ASCII, and queries written in tantivy's query syntax (MCP: tests/test_privacy.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES
from test_faults import GROWING, fresh_copy, wwt_env

import wwt.parsers as parsers

# Parse a file in a fresh process and report what came out and the peak RSS.
PARSE_RSS = """
import json, sys
from wwt.parsers import parse_file
sessions, report = parse_file(sys.argv[1])
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over execve from the (big) pytest parent
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"messages": sum(len(s.messages) for s in sessions), "bad_lines": report.bad_lines,
                  "max_rss_mb": hwm / 1024}))
"""


def huge_log(dest: Path, hole: int, lines_after: int = 1) -> tuple[Path, int]:
    """A real Claude log whose middle is a sparse hole of NUL bytes (no newline: one giant line)."""
    path, _ = fresh_copy(*GROWING[0], dest)
    lines = path.read_text().splitlines(keepends=True)
    with open(path, "w") as fh:
        fh.writelines(lines[:4])
    with open(path, "r+b") as fh:
        fh.truncate(path.stat().st_size + hole)
        fh.seek(0, 2)
        fh.write(b"\n" + "".join(lines[4 : 4 + lines_after]).encode())
    return path, 4 + lines_after


@pytest.mark.slow
@pytest.mark.parametrize(("hole", "label"), [(1 << 30, "1 GB line"), (500 << 20, "500 MB file")])
def test_a_giant_line_or_file_parses_in_bounded_memory(tmp_path: Path, hole: int, label: str) -> None:
    path, kept_lines = huge_log(tmp_path, hole, lines_after=1 if hole == 1 << 30 else 20)
    proc = subprocess.run([sys.executable, "-c", PARSE_RSS, str(path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    assert out["bad_lines"] >= 1 and out["messages"] >= 2, out  # the lines around the monster survive
    assert out["max_rss_mb"] < 250, f"{label}: peak RSS {out['max_rss_mb']:.0f} MB"  # 32 MB line cap + Python


def test_symlink_loops_are_cut_and_unreadable_folders_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "logs"
    (root / "a" / "b").mkdir(parents=True)
    (root / "secret").mkdir()
    good, _ = fresh_copy(*GROWING[0], root / "a" / "b")
    hidden, _ = fresh_copy(*GROWING[1], root / "secret")
    (root / "a" / "b" / "up").symlink_to(root)  # loop back to the top
    (root / "self").symlink_to(root / "self")  # a link to itself
    (root / "a" / "dangling.jsonl").symlink_to(root / "nowhere.jsonl")
    # Tests run as root, where chmod 000 does not stop reads: make the folder unreadable the way the OS would.
    real_scandir = os.scandir

    def scandir(path):
        if Path(path) == root / "secret":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    found = [p for p, _ in parsers.discover([root])]
    assert [p.resolve() for p in found] == [good.resolve()]
    assert hidden.exists()


def test_unicode_edge_cases_and_odd_paths_go_through_ingest_search_and_show(tmp_path: Path, model_dir: Path) -> None:
    folder = tmp_path / "my logs ✓ 한글 مجلد"
    folder.mkdir()
    path, sid = fresh_copy(*GROWING[0], folder)
    lines = path.read_text().splitlines()
    last = json.loads(lines[-1])
    nfd = unicodedata.normalize("NFD", "레디스 캐시 만료 시간을 설정했다")
    text = f"{nfd} 🔥👩‍💻 مرحبا بالعالم \u202eRTL\u202c NUL\x00byte ZWJ\u200d end"
    turn = dict(last, uuid="0c0c0c0c-0000-4000-8000-000000000001", parentUuid=last.get("uuid"), type="user",
                message={"role": "user", "content": text})
    path.write_text("\n".join(lines + [json.dumps(turn)]) + "\n")
    env = wwt_env(tmp_path / "data", model_dir)
    run = lambda *a: subprocess.run([sys.executable, "-m", "wwt", *a], capture_output=True, text=True, env=env,  # noqa: E731
                                    timeout=600, stdin=subprocess.DEVNULL)
    ingest = run("ingest", str(folder))
    assert ingest.returncode == 0, ingest.stderr
    found = run("search", "--all", "--json", unicodedata.normalize("NFC", "레디스 캐시 만료"))
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["session_id"] == sid
    shown = run("show", sid, "--full", "--limit", "200")
    assert shown.returncode == 0 and unicodedata.normalize("NFC", nfd) in shown.stdout and "🔥" in shown.stdout
    assert "NUL" in shown.stdout and "byte ZWJ" in shown.stdout  # kept verbatim, nothing after it lost


QUERIES = ['"unbalanced', "title:JOKE", "JOKE AND", "OR OR NOT", "*", "(foo", "foo)", "-JOKE", "JOKE^2", "JOKE~1",
           "C:\\Users\\x\\JOKE.md", "[1 TO", "{", "\\", "a:b:c", "+", '"', "NOT JOKE.md", "JOKE.md)", "\x00"]


def test_tantivy_syntax_in_a_cli_query_is_plain_text(tmp_path: Path, model_dir: Path, capsys, monkeypatch) -> None:
    from wwt import cli

    logs = tmp_path / "logs"
    logs.mkdir()
    fresh_copy(*GROWING[0], logs)
    monkeypatch.setenv("WWT_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("WWT_MODEL_DIR", str(model_dir))

    def wwt(*args: str) -> tuple[int, str, str]:
        try:
            cli.main(list(args))
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        out = capsys.readouterr()
        return code, out.out, out.err

    assert wwt("ingest", str(logs))[0] == 0
    for query in QUERIES:
        code, out, err = wwt("search", "--all", "--json", "--", query)
        assert code == 0 and err == "", (query, err)
        assert json.loads(out)["query"] == query.strip()
    code, out, _ = wwt("search", "--all", "--json", "--", "JOKE.md)")
    assert json.loads(out)["results"], "an unbalanced parenthesis must not hide an exact match"


INCREMENTAL = [
    "claude-code/agentlogs__crud.jsonl", "claude-code/spotter__tool_heavy.jsonl",
    "codex-cli/agentlogs__crud.jsonl", "codex-cli/VibeCodingTracker__codex.jsonl",
    "gemini-cli/VibeCodingTracker__gemini.jsonl",  # a tool result repeated under a later message id
]


@pytest.mark.parametrize("src", INCREMENTAL)
def test_a_log_parsed_line_by_line_as_it_grows_yields_each_message_once(tmp_path: Path, src: str) -> None:
    """What the ingest does while an agent writes: parse from the last consumed offset after every line.
    (Codex writes each visible text twice, a few lines apart, and Gemini repeats a tool result in the next
    prompt: the copy after the offset must pair with the original before it.)"""
    from wwt.parsers import parse_file

    lines = (REAL_FIXTURES / src).read_bytes().splitlines(keepends=True)
    path = tmp_path / Path(src).name
    path.write_bytes(b"")
    seen: dict = {}  # (session, native id) → message: what the store's merge keeps (a re-written id replaces)
    offset = 0
    for line in lines:
        with open(path, "ab") as fh:
            fh.write(line)
        sessions, report = parse_file(path, offset)
        seen.update({(s.session_id, m.native_id): (m.role, m.kind, m.text) for s in sessions for m in s.messages})
        offset = report.end_offset or offset
    full, _ = parse_file(path)
    expected = {(s.session_id, m.native_id): (m.role, m.kind, m.text) for s in full for m in s.messages}
    assert sorted(seen.values()) == sorted(expected.values()), {
        "extra": [v[2][:80] for k, v in seen.items() if k not in expected][:3],
        "missing": [v[2][:80] for k, v in expected.items() if k not in seen][:3]}


def test_a_deeply_nested_line_with_bad_bytes_costs_only_itself(tmp_path: Path) -> None:
    # a corrupt line: 100k nested arrays and an invalid UTF-8 byte; the transcript's other lines must survive
    lines = (REAL_FIXTURES / "claude-code" / "spotter__short.jsonl").read_bytes().splitlines(keepends=True)
    hostile = b"[" * 100_000 + b"\xff" + b"]" * 100_000 + b"\n"
    path = tmp_path / "55604662-cf2a-4331-851a-ec234028f8ca.jsonl"
    path.write_bytes(b"".join([lines[0], hostile, *lines[1:]]))
    clean = tmp_path / "clean" / path.name
    clean.parent.mkdir()
    clean.write_bytes(b"".join(lines))
    got, report = parsers.parse_file(path)
    want, _ = parsers.parse_file(clean)
    assert [m.text for s in got for m in s.messages] == [m.text for s in want for m in s.messages]
    assert report.bad_lines >= 1
