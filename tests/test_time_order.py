"""Times are compared as times, not as strings. Stored timestamps are ``YYYY-MM-DDTHH:MM:SS[.mmm]Z`` (a whole
second drops ``.000``: ``iso_timestamp``), and in plain string order ``…:00.640Z`` sorts before ``…:00Z``
('.' < 'Z') although it is 640 ms later; a time written with a UTC offset is the instant it names. Each case
below is a pair of moments within one second, or across an offset, whose string order is the wrong one."""

from __future__ import annotations

import json
import os

import pytest

from wwt.chunker import chunk_session
from wwt.models import Filters, Message, ParseReport, Session
from wwt.parsers.common import iso_timestamp
from wwt.parsers.qwen_code import QwenCodeParser
from wwt.store import Store, StoredChunk

WHOLE = "2026-09-14T08:00:00Z"  # what 08:00:00.000 becomes once normalised
LATER = "2026-09-14T08:00:00.640Z"  # 640 ms later, and "smaller" as a string


def test_the_pair_is_misordered_as_strings():
    assert LATER < WHOLE  # the trap every comparison below must avoid


def test_time_key_orders_instants():
    from wwt.models import earliest, latest, time_key

    assert time_key(WHOLE) < time_key("2026-09-14T10:00:00.100+02:00") < time_key(LATER)  # 08:00:00.100 UTC
    assert earliest([LATER, WHOLE, None]) == WHOLE and latest([WHOLE, LATER]) == LATER
    assert earliest([]) is None


@pytest.mark.parametrize("raw,expected", [
    ("2026-09-14T10:00:00.640+02:00", LATER),
    ("2026-09-14T08:00:00.000Z", WHOLE),
    ("2026-09-14T08:00:00.640000Z", LATER),
])
def test_offsets_and_precisions_normalise_to_the_same_instant(raw, expected):
    assert iso_timestamp(raw) == expected


def test_a_sessions_start_and_end_are_its_first_and_last_moment(tmp_path):
    """Qwen Code writes ``new Date().toISOString()`` (always .mmm): a prompt at .000 and its answer 640 ms later."""
    path = tmp_path / "projects" / "-x" / "chats" / "s.jsonl"
    path.parent.mkdir(parents=True)
    base = {"sessionId": "s", "cwd": "/x", "version": "0.21.13"}
    lines = [
        {**base, "uuid": "u1", "parentUuid": None, "timestamp": "2026-09-14T08:00:00.000Z", "type": "user",
         "message": {"role": "user", "parts": [{"text": "rename the flag"}]}},
        {**base, "uuid": "u2", "parentUuid": "u1", "timestamp": "2026-09-14T10:00:00.640+02:00", "type": "assistant",
         "message": {"role": "model", "parts": [{"text": "Renamed it."}]}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (session,) = list(QwenCodeParser().parse(path, ParseReport(path=str(path))))
    assert (session.started_at, session.ended_at) == (WHOLE, LATER)


def test_a_chunks_time_range_runs_from_its_first_to_its_last_moment():
    prose = "we were discussing how the ingest worker debounces hook events before it takes the writer lock"
    messages = [Message("u1", "user", "text", f"question: {prose}", timestamp=WHOLE),
                Message("a1", "assistant", "text", f"answer: {prose}, and here is why", timestamp=LATER)]
    (chunk,) = chunk_session(messages, "s")
    assert (chunk.start_ts, chunk.end_ts) == (WHOLE, LATER)


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("WWT_HOME", str(tmp_path / "wwt-home"))
    with Store.open() as opened:
        yield opened


def _add(store: Store, session: Session, path: str = "/a") -> None:
    with store.transaction():
        fid = store.upsert_file(path, session.platform, 10, 10, 10, "h")
        store.upsert_session(session, session.session_id, fid)
        store.merge_messages(session.session_id, session.messages, fid, True)


def test_a_session_parsed_again_keeps_its_earliest_start_and_latest_end(store):
    _add(store, Session("s", "claude-code", "/a", started_at=LATER, ended_at=WHOLE,
                        messages=[Message("1", "user", "text", "x", timestamp=LATER)]))
    _add(store, Session("s", "claude-code", "/a", started_at=WHOLE, ended_at=LATER, messages=[]))
    row = store.get_session("s")
    assert (row.started_at, row.ended_at) == (WHOLE, LATER)


def test_since_and_until_compare_moments(store):
    _add(store, Session("s", "claude-code", "/a", messages=[Message("1", "user", "text", "x", timestamp=LATER)]))
    with store.transaction():
        (cid,), _ = store.replace_chunks("s", [StoredChunk("k", "s", "s", 0, 0, LATER, LATER, "e", "l", "d", "h")])
    assert store.chunk_ids_matching(Filters(since=WHOLE)) == {cid}  # 08:00:00.640 is after 08:00:00
    assert store.chunk_ids_matching(Filters(until=WHOLE)) == set()  # and not before it


def test_a_bare_date_as_upper_bound_includes_its_last_second(store):
    import time

    from wwt.cli import parse_when

    saved = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"  # a bare date is local time: pinned to UTC for this one call
    time.tzset()
    try:
        until = parse_when("2026-09-14", end_of_day=True)
    finally:
        if saved is None:
            os.environ.pop("TZ")
        else:
            os.environ["TZ"] = saved
        time.tzset()
    late = "2026-09-14T23:59:59.640Z"
    _add(store, Session("s", "claude-code", "/a", messages=[Message("1", "user", "text", "x", timestamp=late)]))
    with store.transaction():
        (cid,), _ = store.replace_chunks("s", [StoredChunk("k", "s", "s", 0, 0, late, late, "e", "l", "d", "h")])
    assert store.chunk_ids_matching(Filters(until=until)) == {cid}
    assert parse_when("2026-09-14T10:00:00.640+02:00") == LATER  # a time given to the millisecond keeps it
