"""Reading JSONL logs in bounded memory: the head for detection, line by line with offsets, records glued
onto one line taken apart, one bad line counted and skipped."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from wwt.limits import map_json_strings
from wwt.models import ParseReport

MAX_LINE_BYTES = 32 * 1024 * 1024  # longer lines are skipped (counted): one pasted blob must not eat RAM
HEAD_BYTES = 8192  # what ``detect`` gets to look at
DETECT_RECORDS = 8  # records of a JSONL log whose views vote on its platform
DETECT_SKIP_LIMIT = 8 * 1024 * 1024  # how far past an over-long first line detection looks for the next one
_BOM = b"\xef\xbb\xbf"
_SKIP_CHUNK = 1 << 20
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()




def read_head(path: Path, size: int = HEAD_BYTES) -> bytes:
    """First ``size`` bytes of a file, or b"" when it cannot be read (detection must never raise)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(size)
    except OSError:
        return b""


def detection_views(path: Path, head: bytes | None = None, records: int = DETECT_RECORDS) -> Iterator[bytes]:
    """The heads ``detect`` is asked about, so that no single first line decides a file's platform.

    Not JSONL: the head alone (a UTF-8 byte-order mark dropped). JSONL: ``HEAD_BYTES`` from each of the file's
    first ``records`` record lines (found within ``DETECT_SKIP_LIMIT`` bytes): a line that parses as a JSON
    object, or one longer than a head that opens like one. Blank, undecodable and cut lines are never a
    start. Each view is judged by its own first record; the registry counts the votes. Never raises."""
    if head is None:
        head = read_head(path)
    if head.startswith(_BOM):
        head = head[len(_BOM):]
    if not path.name.endswith(".jsonl"):
        yield head
        return
    found = 0
    try:
        with open(path, "rb") as fh:
            for start in _line_starts(fh):
                if start == 0:
                    view = head
                else:
                    fh.seek(start)
                    view = fh.read(HEAD_BYTES)
                view = _record_view(view)
                if view is not None:
                    found += 1
                    yield view
                    if found == records:
                        return
    except OSError:
        pass
    if not found:
        yield head


def _line_starts(fh: Any, limit: int = DETECT_SKIP_LIMIT) -> Iterator[int]:
    """Offsets of the line starts in the first ``limit`` bytes (read in chunks; the caller may seek)."""
    yield 0
    position = 0
    while position < limit:
        fh.seek(position)
        chunk = fh.read(min(_SKIP_CHUNK, limit - position))
        if not chunk:
            return
        cut = chunk.find(b"\n")
        while cut >= 0:
            yield position + cut + 1
            cut = chunk.find(b"\n", cut + 1)
        position += len(chunk)


def _record_view(view: bytes) -> bytes | None:
    """``view`` (a line's head) as detection judges it: as is when its line is a record (or opens like a long
    one); a line of records written without a newline between them (one possibly cut short first) with each whole
    record on its own line, so the first whole one decides; None when no record opens there."""
    end = view.find(b"\n")
    if end < 0:  # the line is longer than a head (or the file's cut last line): judged by how it opens
        return view if len(view) >= HEAD_BYTES - len(_BOM) and view.lstrip().startswith(b"{") else None
    line = view[:end].strip()
    if not (line.startswith(b"{") and line.endswith(b"}")):
        return None
    try:
        return view if isinstance(json.loads(line), dict) else None
    except (ValueError, RecursionError):  # includes invalid UTF-8
        pass
    glued = glued_records(line)
    if glued is None:
        return None
    starts = [at for at, _ in glued[1]] + [len(line)]
    records = [line[a:b].strip() for a, b in zip(starts, starts[1:], strict=False)]
    return (b"\n".join(records) + view[end:])[:HEAD_BYTES]


def decode_line(raw: bytes, report: ParseReport, offset: int) -> Any:
    """json.loads with salvage: invalid UTF-8 bytes become U+FFFD (line counted bad but kept). The line is
    decoded here (UTF-8, what every agent writes) so json does not sniff each line's encoding."""
    try:
        text = raw.decode("utf-8")
        return _json_value(text[1:] if text.startswith("\ufeff") else text)  # a byte-order mark, as json allows
    except UnicodeDecodeError:
        report.bad_lines += 1
        report.note(f"invalid UTF-8 in line at byte {offset} (bad bytes replaced)")
        try:
            return json.loads(raw.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):  # nested past the interpreter's limit: this line only
            return None
    except (ValueError, RecursionError):
        report.bad_lines += 1
        report.note(f"malformed JSON line at byte {offset}")
        return None


def _json_value(text: str) -> Any:
    """``json.loads(text)`` without its two wrapper calls (it runs once per JSONL line): the same decoder, the
    same whitespace around the value, ``ValueError`` for what json.loads refuses."""
    value, end = _DECODER.raw_decode(text, _WS.match(text).end())  # type: ignore[union-attr]
    if _WS.match(text, end).end() != len(text):  # type: ignore[union-attr]
        raise ValueError("extra data after the JSON value")
    return value


def first_head_value(head: bytes, lines: int = 20) -> Any | None:
    """The first of ``head``'s first ``lines`` lines that parses as JSON (blank and undecodable lines passed
    over), or None: what a detector that judges a log by its first record looks at."""
    for raw in head.split(b"\n")[:lines]:
        raw = raw.strip()
        if not raw:
            continue
        try:
            return json.loads(raw)
        except ValueError:
            continue
    return None


def open_or_note(path: Path, report: ParseReport) -> BinaryIO | None:
    """The file opened for binary reading, or None with a ``cannot open: …`` note in ``report``."""
    try:
        return open(path, "rb")
    except OSError as exc:
        report.note(f"cannot open: {exc.strerror or exc}")
        return None


def iter_jsonl(
    path: Path,
    report: ParseReport,
    start_offset: int = 0,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Yield ``(offset, end_offset, obj)`` for every complete JSON-object line from ``start_offset`` on.

    Memory is bounded by ``max_line_bytes`` whatever the file size. Malformed lines, non-object values,
    invalid UTF-8 and over-long lines are counted in ``report`` (invalid UTF-8 is salvaged with U+FFFD).
    A last line without a newline is yielded only if it parses (a writer may still be appending to it);
    otherwise it is counted as truncated and ``report.end_offset`` stays before it so a later resume
    re-reads it. ``report.end_offset`` always ends up at the resume point."""
    report.end_offset = start_offset
    fh = open_or_note(path, report)
    if fh is None:
        return
    with fh:
        try:
            if start_offset:
                fh.seek(start_offset)
        except OSError as exc:
            report.note(f"cannot seek: {exc}")
            return
        offset = start_offset
        while True:
            try:
                raw = fh.readline(max_line_bytes + 1)
            except OSError as exc:
                report.note(f"read error at byte {offset}: {exc.strerror or exc}")
                return
            if not raw:
                return
            end = offset + len(raw)
            complete = raw.endswith(b"\n")
            if not complete and len(raw) > max_line_bytes:
                # Over-long line: skip to its end in bounded chunks.
                while True:
                    more = fh.readline(_SKIP_CHUNK)
                    end += len(more)
                    if not more or more.endswith(b"\n"):
                        complete = bool(more)
                        break
                report.lines += 1
                report.bad_lines += 1
                report.note(f"line at byte {offset} longer than {max_line_bytes} bytes skipped")
                if complete:
                    report.end_offset = end
                offset = end
                continue
            stripped = raw.strip()
            if not stripped:
                offset = end
                if complete:
                    report.end_offset = end
                continue
            report.lines += 1
            if not complete:
                # Last line without newline: accept only if it is a whole JSON value.
                try:
                    obj = json.loads(stripped)
                except (ValueError, RecursionError):
                    report.bad_lines += 1
                    report.note(f"truncated last line at byte {offset}")
                    return
                if isinstance(obj, dict):
                    report.end_offset = end
                    yield offset, end, obj
                else:
                    report.bad_lines += 1
                    report.end_offset = end
                return
            bad_before, notes_before = report.bad_lines, len(report.notes)
            obj = decode_line(stripped, report, offset)
            report.end_offset = end
            if obj is None and report.bad_lines > bad_before:  # only then (rare): records glued on the line?
                glued = glued_records(stripped, raw.find(stripped[:1]))
                if glued is not None:
                    report.bad_lines = bad_before
                    del report.notes[notes_before:]
                    yield from _glued(glued, offset, end, report)
                    offset = end
                    continue
            if isinstance(obj, dict):
                yield offset, end, obj
            elif obj is not None:
                report.bad_lines += 1
                report.note(f"line at byte {offset} is JSON but not an object")
            offset = end


GLUE_TRIES = 64  # record starts tried after a cut record on one line, before the line counts as just malformed


def glued_records(line: bytes, lead: int = 0) -> tuple[int, list[tuple[int, dict[str, Any]]]] | None:
    """The whole JSON objects of a line that failed to parse as one: a writer appended a record without its
    newline, a crash cut a record short (or left a few junk bytes) and the next append followed on the same line,
    or junk follows whole records. Returns (broken parts skipped — a cut record, junk, invalid UTF-8 —: 0 or 1,
    [(byte position in the file's line, object)…]), or None when the line is one value (the common case, tried
    first) or holds no whole record. ``lead``: whitespace before ``line`` in the file's line."""
    if b"{" not in line:
        return None
    broken = escaped = 0
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:  # kept byte for byte (positions stay exact); the strings get U+FFFD below
        text = line.decode("utf-8", errors="surrogateescape")
        broken = escaped = 1
    if not broken and line.startswith(b"{") and line.endswith(b"}"):
        try:
            _json_value(text)
            return None  # one value: not glued
        except (ValueError, RecursionError):
            pass
    records: list[tuple[int, dict[str, Any]]] = []
    pos = 0
    if not text.startswith("{"):  # junk before the records: they start at a record opening
        records = _run_after_cut(text, -1) or []
        pos, broken = len(text), 1
    while pos < len(text):
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError):
            rest = _run_after_cut(text, pos)
            if rest is None and not records:
                return None
            records += rest or []  # none after: the line ends in junk or a cut record after whole ones
            broken = 1
            break
        if not isinstance(value, dict):
            return None
        records.append((pos, value))
        pos = _WS.match(text, end).end()  # type: ignore[union-attr]
    if not records or (len(records) < 2 and not broken):
        return None
    if escaped:
        records = [(at, _replace_escaped(obj)) for at, obj in records]
    return broken, [(lead + len(text[:at].encode("utf-8", "surrogateescape")), obj) for at, obj in records]


def _replace_escaped(value: Any) -> Any:
    """Invalid UTF-8 bytes decoded with ``surrogateescape`` → U+FFFD, as a whole line's salvage does."""
    return map_json_strings(value, lambda text: text.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))


def _run_after_cut(text: str, pos: int) -> list[tuple[int, dict[str, Any]]] | None:
    """After a record cut short at ``pos``: the whole records that follow it to the end of the line, found at the
    first of the next ``GLUE_TRIES`` record openings from which the rest decodes."""
    start = text.find('{"', pos + 1)
    for _ in range(GLUE_TRIES):
        if start < 0:
            return None
        run = _object_run(text, start)
        if run is not None:
            return run
        start = text.find('{"', start + 1)
    return None


def _object_run(text: str, pos: int) -> list[tuple[int, dict[str, Any]]] | None:
    """The objects written back to back from ``pos`` to the end of ``text`` (whitespace between them allowed),
    or None when anything else is met."""
    out: list[tuple[int, dict[str, Any]]] = []
    while pos < len(text):
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return None
        if not isinstance(value, dict):
            return None
        out.append((pos, value))
        pos = _WS.match(text, end).end()  # type: ignore[union-attr]
    return out


def _glued(
    glued: tuple[int, list[tuple[int, dict[str, Any]]]], offset: int, end: int, report: ParseReport
) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Yield a glued line's records, each at its own byte offset (ids built from offsets stay unique); the cut
    record before them, if any, is the line's one loss (counted)."""
    cut, records = glued
    if cut:
        report.bad_lines += 1
        report.note(f"cut record at byte {offset} skipped; {len(records)} record(s) after it on the line kept")
    else:
        report.note(f"{len(records)} records on one line at byte {offset} (no newline between them): all kept")
    for position, obj in records:
        yield offset + position, end, obj
