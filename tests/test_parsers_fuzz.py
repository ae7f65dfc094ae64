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
from wwt.parsers import PARSERS, parse_file

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
