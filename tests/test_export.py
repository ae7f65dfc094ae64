"""``wwt export`` (issue 28): a real ingested session as Markdown and as one self-contained HTML file."""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES

from wwt.cli import main as cli_main

CLAUDE_LOG = "claude-code/VibeCodingTracker__claude_code.jsonl"
CLAUDE_SESSION = "e9f146fa-3b20-48d0-9be4-d99ca901cae4"
LOGS = (CLAUDE_LOG, "codex-cli/agent-sessions__small.jsonl", "gemini-cli/VibeCodingTracker@000760c__test_conversation_gemini.json")


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Real logs archived into a private data dir (words only: export needs no vectors)."""
    from wwt.service import Memory

    root = tmp_path_factory.mktemp("export")
    home, logs = root / "home", root / "logs"
    for name in LOGS:
        (logs / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REAL_FIXTURES / name, logs / name)
    with Memory(home) as memory:
        memory.ingest([logs], backfill=False)
    return home


def run_cli(args: list[str], home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    monkeypatch.setenv("WWT_HOME", str(home))
    with pytest.raises(SystemExit) as done:
        cli_main(args)
    out, err = capsys.readouterr()
    return done.value.code or 0, out, err


class _Refs(HTMLParser):
    """Every tag with its attributes, and the text of <style>/<script> elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.styles: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in = tag

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in in ("style", "script"):
            self.styles.append(data)


def assert_self_contained(page: str) -> None:
    parser = _Refs()
    parser.feed(page)
    names = [tag for tag, _ in parser.tags]
    assert "script" not in names and "link" not in names and "img" not in names and "iframe" not in names
    for tag, attrs in parser.tags:
        for key in ("src", "href", "action", "srcset", "data", "poster", "background"):
            assert not attrs.get(key), (tag, key, attrs.get(key))
        assert "url(" not in (attrs.get("style") or "")
    css = "\n".join(parser.styles)
    assert "url(" not in css and "@import" not in css and "http" not in css
    # no network address anywhere in the markup: only inside escaped archived text
    outside_text = re.sub(r"<pre[^>]*>.*?</pre>", "", page, flags=re.S)
    outside_text = re.sub(r"<(dd|summary|title|h1)>.*?</\1>", "", outside_text, flags=re.S)
    assert not re.search(r"https?://", outside_text)


def test_markdown_export_of_a_real_session(archive: Path, monkeypatch, capsys) -> None:
    code, out, _ = run_cli(["export", CLAUDE_SESSION[:8]], archive, monkeypatch, capsys)
    assert code == 0
    assert out.startswith("# 幫我檢查一下 go.mod")
    assert f"`{CLAUDE_SESSION}`" in out and "**agent:** Claude Code" in out
    assert "### [0] user · 2025-08-28T12:57:08.611Z · Claude Code" in out
    assert re.search(r"<details><summary>assistant tool_call Edit: Edit: /home/wei/repo/claude-code/go.mod", out)
    assert out.count("<details>") == out.count("</details>") > 10
    assert "claude --resume " + CLAUDE_SESSION in out


def test_html_export_is_one_self_contained_file(archive: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    target = tmp_path / "out.html"
    code, out, err = run_cli(["export", CLAUDE_SESSION, "--format", "html", "-o", str(target)], archive,
                             monkeypatch, capsys)
    assert code == 0 and out == "" and "wrote" in err
    page = target.read_text(encoding="utf-8")
    assert target.stat().st_mode & 0o077 == 0  # a copy of the private archive stays private
    assert page.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "Noto Sans CJK KR" in page
    assert_self_contained(page)
    assert page.count("<article") == 74  # every message: role, time, agent
    assert '<span class="role role-user">user</span>' in page and "Claude Code · #0" in page
    assert "<details><summary>Edit: /home/wei/repo/claude-code/go.mod</summary>" in page


def test_archived_markup_and_controls_are_escaped() -> None:
    from wwt.export import to_html, to_markdown
    from wwt.service import SessionView
    from wwt.store import MessageRow, SessionRow

    row = SessionRow(session_id="s-1", platform="claude-code", parent_session_id=None, root_session_id="s-1",
                     project="p", project_path=None, cwd="/w", git_branch=None, started_at=None, ended_at=None,
                     title='<img src="https://evil.example/x.png">', source_path=None, message_count=2)
    hostile = '</pre><script src="https://evil.example/a.js"></script><link rel=stylesheet href="http://x/y.css">\x1b[2J\u202e'
    messages = [MessageRow("s-1", 0, "a", "user", "text", hostile, None, None, frozenset()),
                MessageRow("s-1", 1, "b", "assistant", "tool_result", "```\n" + hostile, None, "Bash", frozenset())]
    view = SessionView(session=row, messages=messages, start=0, end=None, total=2)
    page = to_html(view)
    assert_self_contained(page)
    assert "&lt;script src=&quot;https://evil.example/a.js&quot;" in page and "\x1b" not in page
    assert "\\x1b[2J\\u202e" in page
    md = to_markdown(view)
    assert "\x1b" not in md and "````text" in md  # a fence longer than the archived one


def test_unknown_session_and_format_are_one_line_errors(archive: Path, monkeypatch, capsys) -> None:
    code, _, err = run_cli(["export", "zzzz-none"], archive, monkeypatch, capsys)
    assert code != 0 and err.count("\n") == 1 and "no archived session" in err
    code, _, err = run_cli(["export", CLAUDE_SESSION, "--format", "pdf"], archive, monkeypatch, capsys)
    assert code == 2 and "unknown format" in err
