"""TOML edits that ``--uninstall`` can undo to the byte.

tomlkit keeps comments and order, but when it appends a table it also pads the text before it (a blank line, or
an extra newline in the previous table), and deleting the table leaves that padding behind; it also ends a file
that had no final newline with one and writes bare ``\\n`` into CRLF files. So whole tables are added and
removed here as text: a table we add is appended after exactly one newline, and removing it takes that newline
and its own lines (header to the next header, blank lines after it kept). Every result is re-parsed and must
equal what tomlkit computed, or tomlkit's own text is used."""

from __future__ import annotations

import re
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

_HEADER = re.compile(r"^[ \t]*\[", re.M)


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _key_pattern(key: str) -> str:
    bare = re.escape(key) if re.fullmatch(r"[A-Za-z0-9_-]+", key) else None
    quoted = [re.escape('"' + key + '"'), re.escape("'" + key + "'")]
    return "(?:" + "|".join(([bare] if bare else []) + quoted) + ")"


def table_span(text: str, path: tuple[str, ...]) -> tuple[int, int] | None:
    """The lines of the table ``[a.b]`` (its header to the next header, trailing blank lines left out), when
    exactly one such header exists."""
    dotted = r"[ \t]*\.[ \t]*".join(_key_pattern(k) for k in path)
    header = re.compile(r"^[ \t]*\[[ \t]*" + dotted + r"[ \t]*\][ \t]*(?:#[^\r\n]*)?\r?$", re.M)
    found = list(header.finditer(text))
    if len(found) != 1:
        return None
    start = found[0].start()
    nxt = _HEADER.search(text, found[0].end())
    end = nxt.start() if nxt else len(text)
    body = text[start:end]
    trimmed = body.rstrip(" \t\r\n")
    keep = len(trimmed)
    if keep < len(body):  # keep the newline that ends the last line
        nl = _newline(body)
        if body[keep:].startswith(nl):
            keep += len(nl)
    return start, start + keep


def _value(text: str) -> Any:
    try:
        return tomlkit.parse(text).unwrap()
    except TOMLKitError:
        return None


def _table_paths(before: Any, after: Any, path: tuple[str, ...] = ()) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """Tables present in only one of two values: (removed, added), outermost first."""
    removed: list[tuple[str, ...]] = []
    added: list[tuple[str, ...]] = []
    if not isinstance(before, dict) or not isinstance(after, dict):
        return removed, added
    for key, value in before.items():
        if key not in after and isinstance(value, dict):
            removed.append((*path, key))
        elif key in after:
            r, a = _table_paths(value, after[key], (*path, key))
            removed += r
            added += a
    for key, value in after.items():
        if key not in before and isinstance(value, dict):
            added.append((*path, key))
    return removed, added


def _leaf_spans(text: str, value: Any, path: tuple[str, ...]) -> list[tuple[int, int]] | None:
    """Spans of the table at ``path``, or of its sub-tables when it has no header of its own
    (``[mcp_servers.wwt]`` without ``[mcp_servers]``)."""
    span = table_span(text, path)
    if span is not None:
        return [span]
    if not isinstance(value, dict) or not value or any(not isinstance(v, dict) for v in value.values()):
        return None
    spans: list[tuple[int, int]] = []
    for key, sub in value.items():
        found = _leaf_spans(text, sub, (*path, key))
        if found is None:
            return None
        spans += found
    return spans


def _get(value: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def splice(old: str, new_doc_text: str, before: Any, after: Any) -> str | None:
    """``old`` with whole tables removed/appended as text so that it parses to ``after``; None when the change
    is more than that (then tomlkit's text is used)."""
    removed, added = _table_paths(before, after)
    if not removed and not added:
        return None
    nl = _newline(old or new_doc_text)
    text = old
    for path in removed:
        spans = _leaf_spans(text, _get(before, path), path)
        if spans is None:
            return None
        for start, end in sorted(spans, reverse=True):
            if start >= len(nl) and text[start - len(nl):start] == nl:
                start -= len(nl)
            text = text[:start] + text[end:]
    for path in added:
        spans = _leaf_spans(new_doc_text, _get(after, path), path)
        if spans is None:
            return None
        for start, end in spans:
            block = new_doc_text[start:end].replace("\r\n", "\n").replace("\n", nl)
            if not block.endswith(nl):
                block += nl
            if not text:
                text = block
                continue
            if not text.endswith("\n"):  # no final newline before: keep it that way
                block = block[: -len(nl)]
            text = text + nl + block
    return text if _value(text) == after else None


def keep_layout(old: str, new: str, after: Any) -> str:
    """tomlkit's text, with the file's final-newline choice and CRLF line ends put back where that is safe."""
    out = new
    if old and "\r\n" in old and "\n" not in old.replace("\r\n", ""):
        out = re.sub(r"(?<!\r)\n", "\r\n", out)
    if old and not old.endswith("\n") and out.endswith("\n"):
        out = out.rstrip("\r\n")
    return out if _value(out) == after else new
