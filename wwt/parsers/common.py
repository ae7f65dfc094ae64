"""Helpers every platform parser shares: a bounded-memory JSONL reader, timestamp normalisation, content
flattening, tool-call/tool-result rendering. Pure and small so each rule can be pinned by a test."""

from __future__ import annotations

import codecs
import io
import json
import re
import time
import unicodedata
from collections.abc import Iterator
from datetime import datetime, timezone
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

TOOL_RESULT_HEAD = 2000
TOOL_RESULT_TAIL = 500
TOOL_INPUT_MAX = 1000


# --------------------------------------------------------------------------------------------- reading


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


def lookback_offset(path: Path, offset: int, lines: int, limit: int = 8 << 20) -> int:
    """Start of the line ``lines`` lines before ``offset`` (itself a line start), reading back at most
    ``limit`` bytes; ``offset`` when nothing before it can be had. An incremental parse re-reads these lines
    to recall what the previous parse already kept (Codex text copies, Gemini tool results)."""
    found = offset
    count = 0
    floor = max(0, offset - limit)
    with open(path, "rb") as fh:
        end = offset - 1  # the newline ending the previous line is not a line start
        while end > floor:
            start = max(floor, end - (1 << 16))
            fh.seek(start)
            block = fh.read(end - start)
            cut = len(block)
            while (cut := block.rfind(b"\n", 0, cut)) >= 0:
                found = start + cut + 1
                count += 1
                if count == lines:
                    return found
            end = start
    return 0 if floor == 0 else found


def _read_whole(path: Path, report: ParseReport, max_bytes: int) -> bytes | None:
    """A whole-file source's bytes (its end offset noted), or None with one note: too large, unreadable."""
    try:
        if path.stat().st_size > max_bytes:
            report.note(f"file larger than {max_bytes} bytes skipped")
            return None
        raw = path.read_bytes()
    except OSError as exc:
        report.note(f"cannot read: {exc.strerror or exc}")
        return None
    report.end_offset = len(raw)
    return raw


def load_json_file(path: Path, report: ParseReport, max_bytes: int = 256 * 1024 * 1024) -> Any:
    """Whole-file JSON (Gemini ``.json``, ``.meta.json`` sidecars). None (counted) when unreadable/bad."""
    raw = _read_whole(path, report, max_bytes)
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except UnicodeDecodeError:
        try:
            report.bad_lines += 1
            report.note("invalid UTF-8 (bad bytes replaced)")
            return json.loads(raw.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            return None
    except (ValueError, RecursionError):
        report.bad_lines += 1
        report.note("malformed JSON")
        return None


def load_session_object(path: Path, report: ParseReport, list_key: str, agent: str) -> dict[str, Any] | None:
    """A session file written whole as one object holding its messages under ``list_key`` (Copilot CLI's older
    ``.json``, Continue's sessions), or None — counted, with a note naming ``agent`` — when it is something else."""
    data = load_json_file(path, report)
    if isinstance(data, dict) and isinstance(data.get(list_key), list):
        return data
    if data is not None:
        report.unknown_records += 1
        report.note(f"not a {agent} session object: skipped")
    return None


def rewritten_whole(path: Path, report: ParseReport, start_offset: int) -> None:
    """A source its agent rewrites in place (a database, a session store): a parse from an offset reads it all and
    its result replaces what was archived; the resume point is the file's size."""
    if start_offset:
        report.requires_full_reparse = True
    try:
        report.end_offset = path.stat().st_size
    except OSError:
        pass


def load_json_object(
    path: Path, report: ParseReport, list_key: str, max_bytes: int = 256 * 1024 * 1024
) -> Any:
    """``load_json_file`` for a session written whole as one object holding its messages in ``list_key``
    (Gemini's legacy ``.json``, an OpenCode export). When the file does not decode whole (cut short by a crash
    mid-write, one broken entry), the fields before the damage and every intact entry of the list are kept:
    only the damaged part is lost (counted, noted)."""
    raw = _read_whole(path, report, max_bytes)
    if raw is None:
        return None
    try:
        return json.loads(raw)  # the common case; also UTF-16/32 files, as json detects them
    except (ValueError, RecursionError):  # UnicodeDecodeError included
        pass
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        report.bad_lines += 1
        report.note("invalid UTF-8 (bad bytes replaced)")
        text = raw.decode("utf-8-sig", errors="replace")
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            pass
    salvaged = _salvage_object(text, list_key, report)
    if salvaged is None:
        report.bad_lines += 1
        report.note("malformed JSON")
    return salvaged


def _salvage_object(text: str, list_key: str, report: ParseReport) -> dict[str, Any] | None:
    """The fields of a damaged JSON object decoded one by one up to the damage; the ``list_key`` list entry by
    entry (``json_list_entries``), also when it is found only after a damaged field."""
    pos = _WS.match(text).end()  # type: ignore[union-attr]
    if not text.startswith("{", pos):
        return None
    pos += 1
    out: dict[str, Any] = {}
    while True:
        pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
        if text.startswith(",", pos):
            pos += 1
            continue
        if text.startswith("}", pos):
            return out
        if pos >= len(text):
            break  # cut short between two fields
        try:
            key, pos = _DECODER.raw_decode(text, pos)
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
            if not isinstance(key, str) or not text.startswith(":", pos):
                raise ValueError("not a key")
            pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
        except (ValueError, RecursionError):
            break
        try:
            out[key], pos = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError):
            if key == list_key and text.startswith("[", pos):
                out[key] = list(json_list_entries(text[pos:].encode("utf-8"), report))
                return out
            break
    report.bad_lines += 1
    report.note(f"malformed JSON: fields after {len(out)} kept ones skipped")
    if list_key not in out:  # the list may still follow the damaged field
        found = re.search(r'"' + re.escape(list_key) + r'"\s*:\s*(?=\[)', text[pos:])
        if found is not None:
            out[list_key] = list(json_list_entries(text[pos + found.end():].encode("utf-8"), report))
    return out


JSON_LIST_CHUNK = 1 << 18  # bytes read per refill of the window over a JSON list: its text stays near 1 MiB in
# memory even when an emoji makes Python keep every character in 4 bytes (a 1 MiB read held 4 MiB, twice over)
MAX_ENTRY_CHARS = 64 << 20  # one list entry may not hold the window open beyond this
_WS = re.compile(r"[ \t\n\r]*")
_DELIMITER = re.compile(r"[,\]]")
_STRUCTURAL = re.compile(r'["\[\]{},]')
_STRING_REST = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_DECODER = json.JSONDecoder()


class _Window:
    """A sliding text window over a UTF-8 file: what was consumed is dropped at each refill, so memory is a
    chunk plus the longest entry, whatever the file size."""

    def __init__(self, fh: Any, report: ParseReport, chunk: int) -> None:
        self.fh, self.report, self.chunk = fh, report, chunk
        self.buf, self.pos, self.eof, self.read_bytes = "", 0, False, 0
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")("strict")  # a BOM is dropped

    def fill(self) -> bool:
        """Append the next chunk (at least as much as is still unread, so an entry spanning many chunks costs
        linear time). False at end of file, when nothing more can come."""
        if self.eof:
            return False
        raw = self.fh.read(max(self.chunk, len(self.buf) - self.pos))
        self.read_bytes += len(raw)
        self.eof = not raw
        state = self.decoder.getstate()
        try:
            text = self.decoder.decode(raw, self.eof)
        except UnicodeDecodeError:
            self.report.bad_lines += 1
            self.report.note("invalid UTF-8 (bad bytes replaced)")
            self.decoder = codecs.getincrementaldecoder("utf-8-sig")("replace")
            self.decoder.setstate(state)
            text = self.decoder.decode(raw, self.eof)
        self.buf = self.buf[self.pos:] + text
        self.pos = 0
        return True

    def skip_ws(self) -> bool:
        """Move past whitespace, refilling as needed; False when the file ends first."""
        if self.pos < len(self.buf) and self.buf[self.pos] not in " \t\n\r":
            return True  # the common case (entries written without spaces): no regex call
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return True
            if not self.fill():
                return False


def _value_end(text: str, start: int) -> int | None:
    """Where the (possibly malformed) list entry at ``start`` ends: after its closing bracket, or at the next
    ``,``/``]`` of the list itself. None when ``text`` ends first. Strings are skipped whole, so brackets and
    commas inside them do not count."""
    depth, i = 0, start
    while True:
        match = _STRUCTURAL.search(text, i)
        if match is None:
            return None
        i, ch = match.start(), match.group()
        if ch == '"':
            rest = _STRING_REST.match(text, i + 1)
            if rest is None:
                return None
            i = rest.end()
            continue
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            if depth == 0:
                return i
            depth -= 1
            if depth == 0:
                return i + 1
        elif depth == 0:  # a comma of the list itself
            return i
        i += 1


def iter_json_list(path: Path, report: ParseReport, chunk: int | None = None) -> Iterator[Any]:
    """Each entry of a file holding one JSON list, read through a bounded window (a 100 MB task log is never
    held whole). A malformed entry is counted (``lines``/``bad_lines``) and skipped, the entries around it are
    kept; a list cut short yields what came before it. A file that is not a list is counted as unknown."""
    fh = open_or_note(path, report)
    if fh is None:
        return
    with fh:
        window = _Window(fh, report, chunk or JSON_LIST_CHUNK)
        try:
            yield from _list_entries(window, report)
        except OSError as exc:
            report.note(f"read error: {exc.strerror or exc}")
        report.end_offset = window.read_bytes


def json_list_entries(data: bytes, report: ParseReport) -> Iterator[Any]:
    """``iter_json_list`` over bytes already read: a JSON list found inside a larger document (a damaged
    export whose list is salvaged entry by entry)."""
    yield from _list_entries(_Window(io.BytesIO(data), report, JSON_LIST_CHUNK), report)


def _list_entries(w: _Window, report: ParseReport) -> Iterator[Any]:
    if not w.skip_ws():
        report.bad_lines += 1
        report.note("malformed JSON (empty file)")
        return
    if w.buf[w.pos] != "[":
        report.unknown_records += 1
        report.note("not a JSON list: skipped")
        return
    w.pos += 1
    want_value = True  # after "[" or ","
    while True:
        if not w.skip_ws():
            report.bad_lines += 1
            report.note("JSON list cut short (no closing bracket)")
            return
        ch = w.buf[w.pos]
        if ch == "]":  # the end (a trailing comma before it is forgiven)
            w.pos += 1
            if w.skip_ws():
                report.note("text after the JSON list ignored")
            return
        if not want_value:
            if ch == ",":
                w.pos += 1
                want_value = True
                continue
            end = _bad_entry_end(w, report)  # stray text after an entry: skip to the list's next comma
            if end is None:
                return
            if end >= 0:
                w.pos = max(end, w.pos + 1)
            continue
        try:
            value, end = _DECODER.raw_decode(w.buf, w.pos)
        except (ValueError, RecursionError):
            end = _bad_entry_end(w, report)
            if end is None:
                return
            if end >= 0:
                w.pos, want_value = max(end, w.pos + 1), False
            continue
        if not isinstance(value, (dict, list, str)) and _DELIMITER.search(w.buf, w.pos) is None and w.fill():
            continue  # a number at the window's edge may go on in the next chunk: decode it again
        w.pos, want_value = end, False
        yield value


def _bad_entry_end(w: _Window, report: ParseReport) -> int | None:
    """End of the malformed entry at the window's position, counted; -1 when it runs past the window (more was
    read: decode again), None when the file ends inside it or it is too large (both noted)."""
    end = _value_end(w.buf, w.pos)
    if end is None:
        if len(w.buf) - w.pos > MAX_ENTRY_CHARS:
            report.lines += 1
            report.bad_lines += 1
            report.note(f"list entry longer than {MAX_ENTRY_CHARS} characters: rest of the file skipped")
            return None
        if w.fill():
            return -1
        report.lines += 1
        report.bad_lines += 1
        report.note("JSON list cut short inside an entry")
        return None
    report.lines += 1
    report.bad_lines += 1
    report.note(f"malformed list entry skipped: {w.buf[w.pos:min(max(end, w.pos + 1), w.pos + 60)]!r}")
    return end


# ------------------------------------------------------------------------------------------ timestamps

_EPOCH_MS_THRESHOLD = 1e11  # numbers above this are milliseconds (1e11 s is year 5138)
_MIN_YEAR, _MAX_YEAR = 1990, 2200


_CANONICAL_TS = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{3}))?Z")


def iso_timestamp(value: Any) -> str | None:
    """Normalise an ISO string or epoch number (s or ms) to ``YYYY-MM-DDTHH:MM:SS[.mmm]Z`` UTC; None for junk.

    Naive datetimes are taken as UTC (the agents write UTC)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str) and len(value) in (20, 24):
        canonical = _CANONICAL_TS.fullmatch(value)
        if canonical:  # fast path for what the agents write (most lines): range-check, no datetime
            year, month, day, hour, minute, second = map(int, canonical.groups()[:6])
            if (
                _MIN_YEAR <= year <= _MAX_YEAR
                and 1 <= month <= 12
                and 1 <= day <= _days_in_month(year, month)
                and hour < 24
                and minute < 60
                and second < 60
            ):
                ms = canonical.group(7)
                return value if ms != "000" else value[:19] + "Z"
            return None
    if type(value) is float and value > 0 and value.is_integer():
        value = int(value)  # a whole number read as a float (OpenCode's message times): the same instant
    if type(value) is int and value > 0:  # epoch s or ms (Cline, OpenCode, Cursor): no datetime, same string
        seconds, millis = divmod(value, 1000) if value > _EPOCH_MS_THRESHOLD else (value, 0)
        day, second = divmod(seconds, 86400)
        if not _FIRST_DAY <= day < _END_DAY:
            return None  # before 1990 or after 2200
        date = _DAY_TEXT.get(day) or _day_text(day)
        return date + _CLOCK[second // 60] + _SECOND[second % 60] + (_MILLIS[millis] if millis else "Z")
    dt: datetime | None = None
    try:
        if isinstance(value, (int, float)):
            dt = _from_epoch(float(value))
        elif isinstance(value, str):
            text = value.strip()
            if not text or len(text) > 64:
                return None
            if text.replace(".", "", 1).isdigit():
                dt = _from_epoch(float(text))
            else:
                if text.endswith(("Z", "z")):
                    text = text[:-1] + "+00:00"
                dt = datetime.fromisoformat(text)
    except (ValueError, OverflowError, OSError):
        return None
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    try:
        dt = dt.astimezone(timezone.utc)
    except (ValueError, OverflowError):
        return None
    if not (_MIN_YEAR <= dt.year <= _MAX_YEAR):
        return None
    base = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if dt.microsecond:
        base += f".{dt.microsecond // 1000:03d}"
    return base + "Z"


# Epoch numbers are formatted from tables (a record's time is read on every record): the day's date, cached, and
# the time of day's parts. Days 7305 and 84371 since 1970 are 1990-01-01 and 2201-01-01.
_FIRST_DAY, _END_DAY = 7305, 84371
_DAY_TEXT: dict[int, str] = {}
_CLOCK = tuple(f"T{h:02d}:{m:02d}:" for h in range(24) for m in range(60))
_SECOND = tuple(f"{s:02d}" for s in range(60))
_MILLIS = ("Z", *(f".{m:03d}Z" for m in range(1, 1000)))


def _day_text(day: int) -> str:
    """``YYYY-MM-DD`` of a day number since 1970 (remembered; forgotten wholesale past 4,096 days)."""
    if len(_DAY_TEXT) >= 4096:
        _DAY_TEXT.clear()
    t = time.gmtime(day * 86400)
    text = _DAY_TEXT[day] = f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}"
    return text


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _from_epoch(number: float) -> datetime | None:
    if number != number or number <= 0:  # NaN or non-positive
        return None
    if number > _EPOCH_MS_THRESHOLD:
        number /= 1000.0
    return datetime.fromtimestamp(number, tz=timezone.utc)


# ------------------------------------------------------------------------------------------------ text


def nfc(text: str) -> str:
    """NFC-normalise (macOS writes NFD Hangul in paths/pastes; search must see one form)."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", text)


_TEXT_BLOCK_TYPES = frozenset({"text", "input_text", "output_text"})


def flatten_text(content: Any) -> str:
    """Join the text of a string / block list / ``{"text": ...}`` part; images, base64 and other binary
    blocks are dropped. Blocks are joined with a blank line."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict) and content.get("type") != "tool_result":
        return _block_text(content)
    parts: list[str] = []
    stack: list[Any] = [content]  # depth first, in order: no recursion however deep the blocks nest
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            text = item
        elif isinstance(item, dict) and item.get("type") == "tool_result":
            stack.append(item.get("content"))
            continue
        elif isinstance(item, dict):
            text = _block_text(item)
        elif isinstance(item, list):
            stack.extend(reversed(item))
            continue
        else:
            continue
        if text:
            parts.append(text)
    return "\n\n".join(parts)


def _block_text(block: dict[str, Any]) -> str:
    ctype = block.get("type")
    if ctype is None or ctype in _TEXT_BLOCK_TYPES:
        text = block.get("text")
        return text if isinstance(text, str) else ""
    return ""


_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")


def strip_ansi(text: str) -> str:
    """Drop terminal colour/cursor escapes (tool output and command echoes carry them)."""
    return _ANSI_RE.sub("", text) if "\x1b" in text else text


def bound_text(text: str, head: int = TOOL_RESULT_HEAD, tail: int = TOOL_RESULT_TAIL) -> str:
    """Keep the head and tail of a huge output with a marker saying how much was cut — and which code names
    the cut part held, so a class or error name seen in the middle of a long file read stays findable."""
    if len(text) <= head + tail + 100:
        return text
    cut = len(text) - head - tail
    names = names_note(text, head, len(text) - tail)
    return f"{text[:head]}\n[… {cut} chars omitted{names} …]\n{text[-tail:]}"


# Identifier-shaped words: snake_case, camelCase/PascalCase with an inner capital, dotted or ::-joined names,
# ALL_CAPS codes. Plain words are left out: they are what the kept head and tail already say plenty of.
_NAME_RE = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*")
_NAME_SHAPE_RE = re.compile(r"_|[a-z][A-Z]|[A-Za-z](?:\.|::)[A-Za-z]")
NAMES_CHARS = 1500  # ≈ 80 names: the whole middle of a 6 kB file read (measured on a real one: 1,124 chars)
# Where a name-shaped word has its mark (what _NAME_SHAPE_RE finds in it), written to start with one character
# class so the regex engine skips quickly to the candidates; and the run of characters a _NAME_RE word is made of.
_NAME_MARK_RE = re.compile(
    r"[_A-Z.:](?:(?<=_)|(?<=[a-z][A-Z])|(?<=[A-Za-z]\.)(?=[A-Za-z])|(?<=[A-Za-z]:)(?=:[A-Za-z]))")
_RUN_RE = re.compile(r"[\w$.:]*")
_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_$")


def _is_word(char: str) -> bool:
    return char.isalnum() or char in "_$"


def names_note(text: str, start: int, end: int, limit_chars: int = NAMES_CHARS) -> str:
    """``"; names: …"`` for an omission marker over ``text[start:end]``, or ``""`` when it holds none."""
    names = code_names(text, start, end, limit_chars)
    return f"; names: {names}" if names else ""


def code_names(text: str, start: int = 0, end: int | None = None, limit_chars: int = NAMES_CHARS) -> str:
    """Distinct identifier-shaped words of ``text[start:end]`` in order of first appearance, space-joined, at
    most ``limit_chars`` long. A word cut by ``start`` or ``end`` is not a name and is left out."""
    end = len(text) if end is None else min(end, len(text))
    if not 0 <= start < end:
        return ""
    cut_first = 0 < start and _is_word(text[start - 1]) and text[start] in _NAME_START
    cut_last = end < len(text) and _is_word(text[end])
    visited: set[str] = set()
    seen: set[str] = set()
    runs: set[str] = set()
    out: list[str] = []
    size = 0
    # Only the runs of name characters that hold a mark of a name (`_`, an inner capital, `.`/`::` between
    # letters) are split into words: the regex engine skips to such a mark, the run around it is read, and the
    # rest of a cut middle — often megabytes of plain words — never reaches Python.
    pos = start
    backward = text[start:end][::-1]  # text[i] is backward[end - 1 - i]
    while True:
        mark = _NAME_MARK_RE.search(text, pos, end)
        if mark is None:
            break
        at = mark.start()
        # The run's start, walked back to from the mark: matched forward in the reversed range.
        run_start = end - _RUN_RE.match(backward, end - at, end - pos).end()  # type: ignore[union-attr]
        run_end = _RUN_RE.match(text, at, end).end()  # type: ignore[union-attr]  # `*`: always matches
        pos = run_end if run_end > at else at + 1
        run = text[run_start:run_end]
        if run in runs:  # its words were all looked at (a file's names repeat: `self.x`, `os.path.join`)
            continue
        words = _NAME_RE.findall(run)
        if cut_first and run_start == start:
            words = words[1:]
        if cut_last and run_end == end and words and text.endswith(words[-1], start, end):
            words = words[:-1]  # the last word runs on past ``end``
        if run_start != start and run_end != end:
            runs.add(run)  # a run at ``start`` or ``end`` may have lost a cut word: not its whole set of words
        for word in words:
            if word in visited:
                continue
            visited.add(word)
            name = word.strip("._$")
            if not _NAME_SHAPE_RE.search(word) or not 4 <= len(name) <= 64 or name in seen \
                    or not _NAME_SHAPE_RE.search(name):
                continue
            if size + len(name) + 1 > limit_chars:
                return " ".join(out)
            seen.add(name)
            out.append(name)
            size += len(name) + 1
    return " ".join(out)


# Keys whose value best says what a tool call did, in priority order.
_TOOL_INPUT_KEYS = (
    "command",
    "cmd",
    "file_path",
    "pattern",
    "query",
    "path",
    "absolute_path",
    "notebook_path",
    "url",
    "prompt",
    "description",
    "dir_path",
    "content",
)


def render_tool_call(name: str, tool_input: Any, limit: int = TOOL_INPUT_MAX) -> str:
    """``name`` + a compact rendering of its input: the command/path/pattern when there is one, else
    compact JSON. Bounded so a Write of a 1 MB file does not become a 1 MB message."""
    detail = _render_input(tool_input)
    text = f"{name}: {detail}" if detail else name
    if len(text) > limit:
        text = text[:limit] + " …"
    return text


def _render_input(tool_input: Any) -> str:
    if tool_input is None:
        return ""
    if isinstance(tool_input, str):
        # Codex stores arguments as a JSON string.
        stripped = tool_input.strip()
        if stripped.startswith(("{", "[")):
            try:
                return _render_input(json.loads(stripped))
            except ValueError:
                return stripped
        return stripped
    if isinstance(tool_input, list):
        if all(isinstance(x, str) for x in tool_input):
            return " ".join(tool_input)
        return _compact_json(tool_input)
    if isinstance(tool_input, dict):
        for key in _TOOL_INPUT_KEYS:
            value = tool_input.get(key)
            if isinstance(value, list) and value and all(isinstance(x, str) for x in value):
                value = " ".join(value)
            if isinstance(value, str) and value.strip():
                rendered = value.strip()
                where = tool_input.get("path")
                if key in ("pattern", "query") and isinstance(where, str) and where.strip():
                    rendered += f" in {where.strip()}"
                return rendered
        return _compact_json(tool_input)
    return str(tool_input)


def _compact_json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return str(value)
