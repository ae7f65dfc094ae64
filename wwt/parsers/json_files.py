"""Reading whole-file JSON logs: size-bounded loads, a cut file's intact entries salvaged, long JSON lists read
entry by entry through a sliding window."""

from __future__ import annotations

import codecs
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wwt.models import ParseReport
from wwt.parsers.jsonl import _DECODER, _WS, open_or_note


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
_DELIMITER = re.compile(r"[,\]]")
_STRUCTURAL = re.compile(r'["\[\]{},]')
_STRING_REST = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.S)


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
