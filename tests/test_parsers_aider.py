"""Aider parser: a history written with the exact line shapes of aider/io.py (run headers, ``#### `` prompts
ending in two spaces, ``> `` tool output with one prefix per call, answers between blank lines); expectations by
hand."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

from parser_helpers import counts, run_parser, user_texts

from wwt.parsers import discover, parser_for
from wwt.parsers.aider import AiderParser, local_to_utc
from wwt.parsers.common import read_head

HISTORY = Path(__file__).parent / "fixtures" / "aider" / "quillpad" / ".aider.chat.history.md"
PARSER = AiderParser()
parse = partial(run_parser, PARSER)


def _utc(stamp: str) -> str:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S").astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_each_run_is_a_session_of_the_repository():
    sessions, report = parse(HISTORY)
    assert len(sessions) == 2
    first, second = sessions
    assert first.platform == "aider" and first.project == "quillpad"
    assert first.cwd == str(HISTORY.resolve().parent)
    assert first.session_id.startswith("aider-20260314T090511-")
    assert second.session_id.startswith("aider-20260315T184002-")
    assert first.started_at == _utc("2026-03-14 09:05:11") == local_to_utc("2026-03-14 09:05:11")
    assert all(m.timestamp == first.started_at for m in first.messages)


def test_prompts_answers_and_tool_output():
    (first, second), report = parse(HISTORY)
    assert counts(first) == {("user", "text"): 3, ("assistant", "text"): 2, ("user", "tool_result"): 3}
    assert user_texts(first) == [
        "/add quillpad/export.py",  # a command with an argument says what was worked on
        "export to PDF drops every footnote after the first page\nthe footnotes come from markdown-it's footnote plugin",
        "/run pytest -q tests/test_export.py",
    ]
    answer = [m for m in first.messages if m.role == "assistant"][0].text
    assert "#### Fix" in answer and ">>>>>>> REPLACE" in answer and answer.endswith("```")  # a heading and a
    tools = [m.text for m in first.messages if m.kind == "tool_result"]  # marker inside the answer stay there
    assert tools[0] == "Added quillpad/export.py to the chat"
    assert "Commit 3f9e2a1 fix: render footnotes per page in PDF export" in tools[1]
    assert "KeyError: 'fn-3'" in tools[2] and "(Y)es/(N)o" in tools[2]  # a multi-line output, then a question
    assert not any("Aider v0.86.1" in m.text for m in first.messages)  # the startup banner
    assert user_texts(second) == ["what does the --toc flag do in the cli?"]  # "/clear" is a UI action
    assert report.skipped_messages == 1  # the bare "/clear"
    assert report.bad_lines == 0


def test_detection_and_discovery(tmp_path):
    assert PARSER.detect(HISTORY, read_head(HISTORY)) and parser_for(HISTORY).platform == "aider"
    notes = tmp_path / "README.md"
    notes.write_text("# aider notes\n\n#### not a prompt  \n")
    assert not PARSER.detect(notes, read_head(notes))
    repo = tmp_path / "quillpad"
    repo.mkdir()
    shutil.copy(HISTORY, repo / ".aider.chat.history.md")
    (repo / "CHANGELOG.md").write_text("# changes\n")
    assert [(p.name, x.platform) for p, x in discover([tmp_path])] == [(".aider.chat.history.md", "aider")]


def test_a_second_parse_gives_the_same_ids_and_a_resume_is_a_whole_parse():
    first, _ = parse(HISTORY)
    again, report = parse(HISTORY, 500)
    assert report.requires_full_reparse
    assert [m.native_id for s in first for m in s.messages] == [m.native_id for s in again for m in s.messages]


def test_invalid_utf8_is_counted_and_replaced_and_a_missing_header_is_unknown(tmp_path):
    path = tmp_path / ".aider.chat.history.md"
    path.write_bytes(
        b"\n# aider chat started at 2026-03-16 08:00:00\n\n"
        b"#### why does caf\xe9 render as mojibake?  \n\n"
        b"The file is Latin-1; decode it with encoding='latin-1'.\n\n"
    )
    (session,), report = parse(path)
    assert report.bad_lines == 1 and "caf\ufffd" in user_texts(session)[0]
    stray = tmp_path / "x" / ".aider.chat.history.md"
    stray.parent.mkdir()
    stray.write_text("notes before any run\n\n# aider chat started at 2026-03-16 08:00:00\n\n#### hi there  \n")
    (one,), report = parse(stray)
    assert report.unknown_records == 1 and user_texts(one) == ["hi there"]


def _lines_one_at_a_time(data: bytes) -> tuple[list[str], list[str]]:
    """How the history reads line by line: split at ``\\n``, each line decoded alone (bad bytes replaced and
    noted with the line's number), line ends dropped."""
    lines, notes = [], []
    raws = data.split(b"\n")
    if not raws[-1]:
        raws.pop()  # what follows the last line end: nothing, or a last line without one
    for number, raw in enumerate(raws, 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            notes.append(f"invalid UTF-8 in line {number} (bad bytes replaced)")
            line = raw.decode("utf-8", errors="replace")
        lines.append(line.rstrip("\r"))
    return lines, notes


def test_the_history_read_a_block_at_a_time_gives_the_lines_read_one_at_a_time(tmp_path, monkeypatch):
    import wwt.parsers.aider as aider
    from wwt.models import ParseReport

    monkeypatch.setattr(aider, "_BLOCK", 64)  # many block edges: lines across them, lines longer than a block
    cases = [
        HISTORY.read_bytes(),
        b"# aider chat started at 2026-03-16 08:00:00\r\n\r\n#### caf\xc3\xa9 \xed\x95\x9c\xea\xb8\x80  \r\n" * 9,
        b"> " + b"x" * 300 + b"  \n" + b"#### bad \xe9 byte  \n" * 5 + b"\xff\xfe\n\n" + b"last line, no end\r",
        b"\xef\xbb\xbf# aider chat started at 2026-03-16 08:00:00\n" + "한국어 출력 ".encode() * 40 + b"\n\n\n",
        b"", b"\n", b"no newline at all", b"\xe9" * 200,
    ]
    for data in cases:
        path = tmp_path / "h.md"
        path.write_bytes(data)
        report = ParseReport(path=str(path))
        with open(path, "rb") as fh:
            got = [line for block in aider._blocks(fh, report) for line in block]
        want, notes = _lines_one_at_a_time(data)
        assert got == want
        assert report.notes == notes and report.bad_lines == len(notes)
        assert report.end_offset == len(data)


def test_a_run_header_time_is_read_as_strptime_reads_it():
    for stamp in ("2026-03-14 09:05:11", "2024-02-29 23:59:59", "2026-02-29 10:00:00", "2026-13-01 00:00:00",
                  "2026-01-01 24:00:00", "2026-01-01 00:60:00", "2026-01-01 00:00:60", "0000-01-01 00:00:00",
                  "٢٠٢٦-٠٣-١٤ ٠٩:٠٥:١١", "2026-03-14 9:05:11 "):
        try:
            want = _utc(stamp)
        except (ValueError, OverflowError, OSError):
            want = None
        assert local_to_utc(stamp) == want, stamp


def test_a_history_parses_the_same_whatever_the_block_edges(tmp_path, monkeypatch):
    """Long tool outputs and answers are taken a run of lines at a time: where the reader's blocks end (inside a
    quote, an answer, a prompt, between a header and its run) must not change a message. The lines are the
    shapes Aider's ``io.py`` writes (headers, ``#### `` prompts ending in two spaces, ``> `` outputs with one
    two-space ending, answers with quotes and ``####`` headings of their own), mixed at random."""
    import dataclasses
    import random

    import wwt.parsers.aider as aider
    from wwt.models import ParseReport

    shapes = ["# aider chat started at 2026-03-14 09:05:11", "# aider chat started at 2026-03-14 09:05:11  ",
              "# aider chat is not a header", "#### fix the parser  ", "#### no two spaces", "####", "#### /add a.py  ",
              "#### /clear  ", "> Applied edit to a.py  ", "> Running pytest -q", "> ", ">", ">not a quote",
              "> 3 passed  ", "Here is the change:", "", "   ", "  ", "a line ending in two  ", "```python",
              "x = 1", "```", "# a heading in the answer", "> a quote in the answer", "\t", "crlf line\r", "> q\r",
              "#### typed with crlf  \r"]
    rng = random.Random(15)

    def parsed(path):
        report = ParseReport(path=str(path))
        sessions = list(aider.AiderParser().parse(path, report))
        return [dataclasses.asdict(s) for s in sessions], dataclasses.asdict(report)

    for case in range(400):
        lines = [rng.choice(shapes) for _ in range(rng.randrange(1, 80))]
        if rng.random() < 0.8:
            lines.insert(0, shapes[0])
        path = tmp_path / f"{case}" / ".aider.chat.history.md"
        path.parent.mkdir()
        path.write_text("\n".join(lines) + rng.choice(["", "\n"]), encoding="utf-8", newline="")
        whole = parsed(path)
        monkeypatch.setattr(aider, "_BLOCK", rng.choice([8, 17, 64]))
        assert parsed(path) == whole, lines
        monkeypatch.undo()


def test_a_chat_command_logged_again_as_a_prompt_is_one_prompt(tmp_path):
    """``/code X`` (also /ask, /architect, /context) hands X to a new chat, which logs it again as ``#### X``;
    ``/help X`` logs ``# Question: X`` followed by the documentation Aider retrieved (aider/commands.py
    ``_generic_chat_command`` and ``cmd_help``; seen in genuine histories, e.g. AndrewJacop/Simple-Calulator
    .aider.chat.history.md at 8424ac2d). Our own words in that shape:"""
    history = tmp_path / "tally" / ".aider.chat.history.md"
    history.parent.mkdir()
    history.write_text(
        "\n# aider chat started at 2026-03-02 10:00:00\n\n"
        "> Aider v0.86.1  \n\n"
        "#### /code make the totals row sticky when the table scrolls  \n\n"
        "#### make the totals row sticky when the table scrolls  \n\n"
        "The totals row needs `position: sticky` on its cells.\n\n"
        "> Applied edit to tally/table.css  \n\n"
        "#### /help how do i drop a file from the chat ?  \n\n"
        "#### # Question: how do i drop a file from the chat ?  \n"
        "####   \n"
        "#### # Relevant docs:  \n"
        "####   \n"
        "#### <doc from_url=\"https://aider.chat/docs/usage/commands.html\">  \n"
        "#### /drop Remove matching files from the chat session  \n"
        "#### </doc>  \n\n"
        "Use `/drop tally/table.css` to remove it.\n\n"
        "#### make the totals row sticky when the table scrolls  \n\n"
        "It already is: the rule is in tally/table.css.\n",
        encoding="utf-8",
    )
    (session,), report = parse(history)
    assert user_texts(session) == [
        "/code make the totals row sticky when the table scrolls",
        "/help how do i drop a file from the chat ?",
        "make the totals row sticky when the table scrolls",  # typed again later: the user's
    ]
    assert report.skipped_messages == 2


def test_prompts_aider_writes_itself_are_not_the_users(tmp_path):
    """In architect mode the answer is handed to the editor model as a new prompt once the edit is accepted
    (aider/coders/architect_coder.py ``reply_completed``; public histories show the whole answer again as
    ``#### `` lines after ``> Edit the files? (Y)es/(N)o [Yes]: y``), and ``/lint`` sends the linter's report
    (aider/linter.py: "# Fix any errors below, if possible."; Aider-AI/aider tests/fixtures/chat-history.md).
    Our own words in those shapes:"""
    history = tmp_path / "tally" / ".aider.chat.history.md"
    history.parent.mkdir()
    history.write_text(
        "\n# aider chat started at 2026-03-03 09:00:00\n\n"
        "> Aider v0.86.1  \n\n"
        "#### /architect split the csv loader from the report code  \n\n"
        "Move `load_rows` into tally/io.py and import it from tally/report.py.  \n"
        "Keep the column names in one constant.\n\n"
        "> Tokens: 3.1k sent, 120 received.  \n"
        "> Edit the files? (Y)es/(N)o [Yes]: y  \n\n"
        "#### Move `load_rows` into tally/io.py and import it from tally/report.py.  \n"
        "#### Keep the column names in one constant.  \n\n"
        "tally/io.py\n```python\n<<<<<<< SEARCH\n=======\ndef load_rows(path):\n    ...\n>>>>>>> REPLACE\n```\n\n"
        "> Applied edit to tally/io.py  \n\n"
        "#### /lint  \n\n"
        "#### # Fix any errors below, if possible.  \n"
        "####   \n"
        "#### ## Running: flake8 tally/io.py  \n"
        "####   \n"
        "#### tally/io.py:1:1: F401 'csv' imported but unused  \n\n"
        "Removed the unused import.\n",
        encoding="utf-8",
    )
    (session,), report = parse(history)
    assert user_texts(session) == ["/architect split the csv loader from the report code"]
    answers = [m.text for m in session.messages if m.role == "assistant"]
    assert answers[0].startswith("Move `load_rows` into tally/io.py") and len(answers) == 3


def test_a_history_opening_with_other_text_is_still_aiders(tmp_path):
    """Aider-AI/aider tests/fixtures/chat-history.md (at 47252ace) opens with an editor mode line and the tail of
    a run whose header was cut off; the runs after it are read, the orphaned lines counted."""
    history = tmp_path / "tally" / ".aider.chat.history.md"
    history.parent.mkdir()
    history.write_text(
        "-*- mode: fundamental -*-\n> Applied edit to tally/io.py  \n\n"
        "#### and the report module too  \n\n"
        "# aider chat started at 2026-03-04 11:00:00\n\n"
        "> Aider v0.86.1  \n\n"
        "#### why does the monthly total skip refunds?  \n\n"
        "The filter in tally/report.py drops negative rows.\n",
        encoding="utf-8",
    )
    assert parser_for(history).platform == "aider"
    (session,), report = parse(history)
    assert user_texts(session) == ["why does the monthly total skip refunds?"]
    assert report.unknown_records == 3
    notes = tmp_path / "notes.md"  # any other Markdown file must open with the header
    notes.write_text("# Notes\n\n# aider chat started at 2026-03-04 11:00:00\n", encoding="utf-8")
    assert parser_for(notes) is None


def test_a_history_trimmed_of_trailing_spaces_still_has_prompts(tmp_path):
    """A history committed through a trailing-whitespace hook (or saved by an editor that trims) has lost the
    two spaces Aider ends prompt and tool lines with, as kenn-io/agentsview's fixture derived from a real file
    (internal/parser/testdata/aider/myrepo/.aider.chat.history.md at 53860074) shows. Our own words:"""
    history = tmp_path / "tally" / ".aider.chat.history.md"
    history.parent.mkdir()
    history.write_text(
        "\n# aider chat started at 2026-03-05 08:00:00\n\n"
        "> Aider v0.86.1\n> Model: gpt-5 with diff edit format\n\n"
        "#### round the monthly totals to whole cents\n\n"
        "Rounding now happens once, when the total is formatted.\n\n"
        "> Applied edit to tally/report.py\n> Commit 3f1a2b4 fix: round totals once\n\n"
        "#### and add a test for it\n\n"
        "Added `test_totals_round_once`.\n",
        encoding="utf-8",
    )
    (session,), _ = parse(history)
    assert user_texts(session) == ["round the monthly totals to whole cents", "and add a test for it"]
    assert [(m.role, m.kind) for m in session.messages] == [
        ("user", "text"), ("assistant", "text"), ("user", "tool_result"), ("user", "text"), ("assistant", "text")]
    (result,) = [m for m in session.messages if m.kind == "tool_result"]
    assert result.text == "Applied edit to tally/report.py\nCommit 3f1a2b4 fix: round totals once"


def test_taking_runs_of_lines_by_search_gives_what_feeding_each_line_gives(tmp_path, monkeypatch):
    """A long tool output or answer is taken a run of lines at a time, found by searching the block's text; the
    rules are those of ``_Run.feed``, which reads one line at a time. With the runs switched off every line goes
    through ``feed``: the sessions and the report must be the same, on the fixture, on a real-sized history
    (the genuine Claude Code sessions' texts written as Aider writes them) and on random mixes of the line
    shapes Aider writes, with Unicode whitespace, CRLF ends and histories trimmed of trailing spaces."""
    import dataclasses
    import importlib.util
    import random

    from _shared import REAL_FIXTURES

    import wwt.parsers.aider as aider
    from wwt.models import ParseReport

    def parsed(path):
        report = ParseReport(path=str(path))
        sessions = list(aider.AiderParser().parse(path, report))
        return [dataclasses.asdict(s) for s in sessions], dataclasses.asdict(report)

    def line_by_line(path):
        with monkeypatch.context() as patch:
            patch.setattr(aider._Run, "take_quote", lambda self, text, at: at)
            patch.setattr(aider._Run, "take_answer", lambda self, text, at: at)
            patch.setattr(aider._Run, "take_prompt", lambda self, text, at: at)
            return parsed(path)

    spec = importlib.util.spec_from_file_location("real_sized_logs", Path(__file__).parents[1] / "benchmarks" /
                                                  "real_sized_logs.py")
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)  # type: ignore[union-attr]
    sized = builder.build("aider", tmp_path / "sized", 1, REAL_FIXTURES / "claude-code", "")
    for path in (HISTORY, sized):
        whole = parsed(path)
        assert whole[0] and whole == line_by_line(path)

    shapes = ["# aider chat started at 2026-03-14 09:05:11", "# aider chat started at 2026-03-14 09:05:11  ",
              "# aider chat started at 2026-03-14 09:05:11\u3000", "# aider chat is not a header",
              "#### fix the parser  ", "#### no two spaces", "####", "#### /code make it so  ", "make it so",
              "> Applied edit to a.py  ", "> Running pytest -q", "> ", ">", ">not a quote", "> 3 passed  ",
              "Here is the change:", "", "   ", "  ", "\u3000", "\x0b", "\t", "a line ending in two  ", "```python",
              "x = 1", "```", "# a heading in the answer", "> a quote in the answer", "crlf line\r", "> q\r",
              "#### typed with crlf  \r", "  \r", "####  ", "####   ", "#### \u3000x \u3000  ",
              "####\t  ", "#### ", "#### one space at the end ", "> tail\x85", "line\u2028break", "#heading"]
    rng = random.Random(1515)
    for case in range(500):
        lines = [rng.choice(shapes) for _ in range(rng.randrange(1, 90))]
        if rng.random() < 0.85:
            lines.insert(0, shapes[0])
        if rng.random() < 0.2:  # trimmed of trailing whitespace: every "#### " line a prompt, "> " line a tool line
            lines = [line.rstrip(" ") for line in lines]
        path = tmp_path / f"{case}" / ".aider.chat.history.md"
        path.parent.mkdir()
        path.write_text("\n".join(lines) + rng.choice(["", "\n"]), encoding="utf-8", newline="")
        monkeypatch.setattr(aider, "_BLOCK", rng.choice([16, 64, 1 << 18]))
        assert parsed(path) == line_by_line(path), lines


TIDEPOOL = Path(__file__).parent / "fixtures" / "aider" / "tidepool" / ".aider.chat.history.md"


def test_empty_prompts_and_auto_answers_aider_logs_as_prompts_are_not_the_users():
    """Two ``#### `` lines nobody typed (aider/io.py): an empty Enter is logged as ``#### <blank>``
    (``user_input`` with no input), and once a grouped question is answered "All" (or "Skip all") each later
    question of the group is answered by Aider and logged through ``user_input`` as ``<question> … [Yes]: all``
    before its ``> `` copy (``confirm_ask`` with ``group.preference``). Both are common in genuine public
    histories. Our own run in those shapes:"""
    (session,), report = parse(TIDEPOOL)
    assert user_texts(session) == ["the tide table shows yesterday's times after midnight"]  # /exit: bare command
    assert counts(session) == {("user", "text"): 1, ("assistant", "text"): 2, ("user", "tool_result"): 3}
    assert report.skipped_messages == 5  # three <blank>, one auto answer, the bare /exit
    results = [m.text for m in session.messages if m.kind == "tool_result"]
    assert results[1] == "Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: a"


SALTMARSH = Path(__file__).parent / "fixtures" / "aider" / "saltmarsh" / ".aider.chat.history.md"


def test_a_reasoning_models_thinking_is_thinking_not_the_answer():
    """With a reasoning model Aider streams the reasoning into the reply wrapped in its own tag
    ``<thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>`` (aider/reasoning_tags.py ``REASONING_TAG``,
    base_coder.py ``show_send_output``) and logs the reply before removing it (``send`` → ``ai_output``), so the
    history holds the tagged reasoning before the answer (seen in genuine public histories). Our own run:"""
    (session,), report = parse(SALTMARSH)
    assert [(m.role, m.kind) for m in session.messages] == [
        ("user", "text"), ("assistant", "thinking"), ("assistant", "text"), ("user", "tool_result"),
        ("user", "text"), ("assistant", "thinking"), ("assistant", "text"), ("user", "tool_result"),
    ]
    thinking = [m.text for m in session.messages if m.kind == "thinking"]
    answers = [m.text for m in session.messages if m.role == "assistant" and m.kind == "text"]
    assert thinking[0].startswith("The export job filters on last_run") and thinking[0].endswith("fixed at one day.")
    assert thinking[1] == "Change the query to use the stored last_success timestamp."
    assert answers[0].startswith("The export window is one day") and answers[1].startswith("export.py\n```python")
    assert not any("thinking-content" in m.text for m in session.messages)
    assert len({m.native_id for m in session.messages}) == len(session.messages)


KELPFOREST = Path(__file__).parent / "fixtures" / "aider" / "kelpforest" / ".aider.chat.history.md"


def test_a_watched_files_question_keeps_only_the_users_marked_comment():
    """With ``--watch-files`` a comment ending in ``AI?`` makes Aider send ``/ask`` with its own prompt: a fixed
    text and the code around each marked comment, the comment's line marked ``█`` (aider/watch.py
    ``process_changes``, watch_prompts.py ``watch_ask_prompt``); ``/ask`` logs that prompt as ``#### `` lines (seen
    in a genuine history quoted publicly). The user's words there are their comment, not Aider's text or the
    code. Our own run:"""
    (session,), report = parse(KELPFOREST)
    assert user_texts(session) == ["# why do we sleep here before retrying? AI?", "make the retry delay configurable"]
    assert not any("marked with" in m.text or "time.monotonic" in m.text for m in session.messages)
    assert counts(session) == {("user", "text"): 2, ("assistant", "text"): 2, ("user", "tool_result"): 2}
