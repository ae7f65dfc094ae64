"""Property tests: whatever the bytes, ``parse_file`` and every parser return normally, and junk lines mixed
into a real log (any platform) never cost a message of the valid lines around them."""

from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wwt.models import ParseReport
from wwt.parsers import PARSERS, parse_file, parser_for

REAL = REAL_FIXTURES
JSONL_FIXTURES = sorted(
    p
    for p in REAL.glob("*/*.jsonl")
    if p.stat().st_size < 100_000  # keeps each example fast; the big ones are covered by their own tests
)
FUZZ = settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def message_bag(path: Path) -> Counter:
    sessions, _ = parse_file(path)
    return Counter((s.session_id, m.role, m.kind, m.text) for s in sessions for m in s.messages)


@functools.cache
def baseline(path: Path) -> Counter:
    return message_bag(path)


@settings(FUZZ, max_examples=60)
@given(data=st.binary(max_size=3000))
def test_random_bytes_never_raise(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("rand")
    for name in ("x.jsonl", "x.json"):
        path = folder / name
        path.write_bytes(data)
        parse_file(path)
        for parser in PARSERS:  # also drive each parser directly, bypassing detection
            report = ParseReport(path=str(path))
            list(parser.parse(path, report))
            list(parser.parse(path, report, start_offset=len(data) // 2))


junk_line = st.one_of(
    st.binary(max_size=300).map(lambda b: b"#" + b.replace(b"\n", b" ")),  # never valid JSON
    st.sampled_from([b"{", b'{"type": "user", "message": {"content": "unfinished', b"\xff\xfe\xfd", b"]"]),
)


@pytest.mark.parametrize("fixture", JSONL_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
@FUZZ
@given(data=st.data())
def test_junk_lines_lose_no_valid_message(tmp_path_factory, fixture, data):
    lines = fixture.read_bytes().splitlines(keepends=True)
    inserts = data.draw(
        st.lists(st.tuples(st.integers(1, len(lines)), junk_line), min_size=1, max_size=4), label="inserts"
    )
    truncated_tail = data.draw(st.booleans(), label="truncated tail")
    mutated = list(lines)
    for position, junk in sorted(inserts, key=lambda item: -item[0]):
        mutated.insert(position, junk + b"\n")
    if mutated and not mutated[-1].endswith(b"\n"):
        mutated[-1] += b"\n"
    if truncated_tail and lines:
        cut = data.draw(st.integers(1, max(1, len(lines[0].strip()) - 1)), label="cut")
        mutated.append(lines[0].strip()[:cut])  # a crash mid-write: prefix of a line, no newline
    folder = tmp_path_factory.mktemp("mut")
    path = folder / fixture.name
    path.write_bytes(b"".join(mutated))
    sessions, report = parse_file(path)
    got = Counter((s.session_id, m.role, m.kind, m.text) for s in sessions for m in s.messages)
    assert not (baseline(fixture) - got), "valid messages lost"
    if report.platform is not None:  # files no parser claims (schema-drift samples) are not read at all
        assert report.bad_lines >= 1



@pytest.mark.parametrize("fixture", JSONL_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corrupt_first_line_loses_no_valid_message(tmp_path, fixture):
    path = tmp_path / fixture.name
    path.write_bytes(b'{"type": "user", "mess\n' + fixture.read_bytes())
    sessions, report = parse_file(path)
    got = Counter((s.session_id, m.role, m.kind, m.text) for s in sessions for m in s.messages)
    assert not (baseline(fixture) - got), "valid messages lost"


def _record_lines(path: Path) -> list[bytes]:
    return [ln for ln in path.read_bytes().splitlines() if ln.strip().startswith(b"{")]


@pytest.mark.parametrize("fixture", JSONL_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_first_record_cut_short_and_glued_to_the_next_does_not_hide_the_log(tmp_path, fixture):
    # A crash cut the first record (and its newline); the next append followed on the same line. When that line
    # is all the log holds so far, the whole record after the cut still tells whose log it is.
    first, second = (_record_lines(fixture) + [b"", b""])[:2]
    if not second:
        pytest.skip("one record")
    whole = tmp_path / "whole" / fixture.name
    whole.parent.mkdir()
    whole.write_bytes(first + b"\n" + second + b"\n")
    if parser_for(whole) is None:
        pytest.skip("two records are not enough to tell this log's platform")
    glued = tmp_path / fixture.name
    glued.write_bytes(first[: len(first) // 2] + second + b"\n")
    assert parser_for(glued) is parser_for(whole)
    glued.write_bytes(first + second + b"\n")  # or only the newline between them was lost
    assert parser_for(glued) is parser_for(whole)


@pytest.mark.parametrize("fixture", JSONL_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_junk_on_the_same_line_as_a_record_does_not_cost_the_record(tmp_path, fixture):
    # A crash left a few bytes (or a cut non-JSON line) and the next append followed on the same line; or an
    # editor/agent appended junk after a record before the newline. The record itself is whole: it is read.
    lines = fixture.read_bytes().splitlines(keepends=True)
    expected = baseline(fixture)
    path = tmp_path / fixture.name
    for index, line in enumerate(lines):
        if not line.strip().startswith(b"{"):
            continue
        for broken in (b"no" + line, line.rstrip(b"\r\n") + b" not json\n", b"\xff\xfe" + line):
            path.write_bytes(b"".join(lines[:index] + [broken] + lines[index + 1:]))
            got = message_bag(path)
            lost = expected - got
            assert not lost, f"line {index} ({broken[:20]!r}…): lost {list(lost)[:1]}"
        if index > 12:
            break


@pytest.mark.parametrize("fixture", JSONL_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_records_glued_on_a_line_with_invalid_utf8_are_read(tmp_path, fixture):
    # Two records without the newline between them, the first holding a byte that is not UTF-8: the second is
    # whole and read; the first is read with U+FFFD, as a line of its own with that byte would be.
    lines = fixture.read_bytes().splitlines(keepends=True)
    records = [i for i, line in enumerate(lines) if line.strip().startswith(b"{") and b'":"' in line.replace(b" ", b"")]
    if len(records) < 3:
        pytest.skip("too few records")
    path = tmp_path / fixture.name
    for first in records[1:6]:
        if first + 1 >= len(lines) or not lines[first + 1].strip().startswith(b"{"):
            continue
        damaged = lines[first].replace(b'":"', b'":"\xff', 1).rstrip(b"\r\n")
        alone = tmp_path / "alone" / fixture.name
        alone.parent.mkdir(exist_ok=True)
        alone.write_bytes(b"".join(lines[:first] + [damaged + b"\n"] + lines[first + 1:]))
        path.write_bytes(b"".join(lines[:first] + [damaged + lines[first + 1]] + lines[first + 2:]))
        lost = message_bag(alone) - message_bag(path)
        assert not lost, f"records {first}+{first + 1}: lost {list(lost)[:1]}"


SQLITE_FIXTURES = sorted(
    p for p in (Path(__file__).parent / "fixtures").rglob("*") if p.name.endswith((".db", ".vscdb"))
)


@pytest.mark.parametrize("fixture", SQLITE_FIXTURES, ids=lambda p: str(p.relative_to(p.parents[2])))
def test_a_database_whose_schema_holds_a_byte_that_is_not_utf8_is_noted_not_raised(tmp_path, fixture):
    # One flipped bit in a name in the schema (a disk error, a crash mid-page-write): SQLite reports it in a
    # message Python cannot decode. Every parser that opens databases returns normally and says why in one line.
    data = bytearray(fixture.read_bytes())
    names = [at for at in range(len(data)) if data.startswith(b"CREATE INDEX ", at) or data.startswith(b"CREATE TABLE ", at)]
    if not names:
        pytest.skip("no schema text found in the file")
    folder = tmp_path / fixture.parent.name
    folder.mkdir()
    path = folder / fixture.name
    for at in names:
        start = at + len(b"CREATE INDEX ")
        name = bytes(data[start:start + 64]).split(b" ")[0].split(b"(")[0].strip(b'"`[]')
        stored = data.rfind(name, 0, at)  # the schema row's own name column, just before its statement
        if len(name) < 4 or stored < 0:
            continue
        damaged = bytearray(data)
        damaged[stored + len(name) // 2] |= 0x80  # a letter of the name made a bare UTF-8 lead byte
        path.write_bytes(bytes(damaged))
        for parser in PARSERS:
            list(parser.parse(path, ParseReport(path=str(path))))
        _sessions, report = parse_file(path)
        assert all(not note.startswith("parser error") for note in report.notes), report.notes
