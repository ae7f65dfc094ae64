"""Format-preserving JSON edits: parse strictly with positions, change the data in Python, then rewrite only the
spans that changed.

Why: users' (and agents') settings files have their own layout, inline objects, escapes and number spellings
(``1e400``, ``1.50``); re-serialising the whole file rewrote all of that (``1e400`` became ``Infinity``, which
Node refuses), and ``--uninstall`` could not give the bytes back. Inserting a member and deleting it again are
exact inverses here, so setup then uninstall leaves the file byte-identical.

Parsing is the standard library's C decoder made strict (RFC 8259): no NaN/Infinity, comments or trailing
commas, and a key may not appear twice in one object (readers disagree on which copy wins, so we refuse to
guess)."""

from __future__ import annotations

import difflib
import json
import math
import re
from dataclasses import dataclass
from typing import Any

_WS = re.compile(r"[ \t\n\r]*")


class JsonSyntaxError(ValueError):
    """Not strict JSON; ``line`` is 1-based (0 when the decoder did not say where)."""

    def __init__(self, msg: str, text: str = "", pos: int | None = None) -> None:
        self.msg = msg
        self.line = text.count("\n", 0, pos) + 1 if pos is not None else 0
        super().__init__(f"line {self.line}: {msg}" if pos is not None else msg)


class JsonInt(int):
    """An integer that remembers its literal text (``-0``, ``12345678901234567890``)."""

    json_text: str


class JsonFloat(float):
    """A number that remembers its literal text: ``1e400`` stays ``1e400`` (as a float it is infinity)."""

    json_text: str


def _tagged(cls: type, literal: str) -> Any:
    try:
        out = cls(literal)
    except ValueError as exc:  # more digits than Python converts
        raise JsonSyntaxError(f"the number {literal[:40]}… is too long") from exc
    out.json_text = literal
    return out


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise JsonSyntaxError(f"the key {json.dumps(key)[:60]} appears twice in one object")
    return out


def _constant(name: str) -> Any:
    raise JsonSyntaxError(f"{name} is not JSON (NaN and Infinity are not numbers in JSON)")


# The standard library's C scanner, made strict: numbers keep their text, NaN/Infinity and repeated keys refused.
_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs,
    parse_float=lambda lit: _tagged(JsonFloat, lit),
    parse_int=lambda lit: _tagged(JsonInt, lit),
    parse_constant=_constant,
)


def _decode_at(text: str, pos: int) -> tuple[Any, int]:
    try:
        return _DECODER.raw_decode(text, pos)
    except json.JSONDecodeError as exc:
        if text.startswith("/", exc.pos):
            raise JsonSyntaxError("a comment (JSON has none; wwt edits only plain JSON)", text, exc.pos) from exc
        raise JsonSyntaxError(exc.msg, text, exc.pos) from exc
    except RecursionError as exc:
        raise JsonSyntaxError("nested too deeply", text, pos) from exc


def _document(text: str) -> tuple[Any, int, int]:
    if text.startswith("\ufeff"):
        raise JsonSyntaxError("starts with a byte order mark (BOM)", text, 0)
    start = _WS.match(text).end()
    value, end = _decode_at(text, start)
    tail = _WS.match(text, end).end()
    if tail != len(text):
        raise JsonSyntaxError("extra data after the JSON value", text, tail)
    return value, start, end


def loads(text: str) -> Any:
    """The value of a whole document (fresh objects each call), strictly."""
    return _document(text)[0]


class Node:
    """A value's span ``[start, end)`` in the text and its (read-only) value. A container's members are found
    only when asked for (``keys``/``key_starts``/``items``), so a large file costs one C-speed decode plus the
    levels an edit touches. A member's span runs from its key to the end of its value."""

    def __init__(self, text: str, start: int, end: int, value: Any) -> None:
        self.text, self.start, self.end, self.value = text, start, end, value
        self.kind = "object" if isinstance(value, dict) else "array" if isinstance(value, list) else "scalar"
        self._items: list[Node] | None = None
        self._keys: list[str] = []
        self._key_starts: list[int] = []

    def _expand(self) -> None:
        if self._items is not None:
            return
        text, items = self.text, []
        close = "}" if self.kind == "object" else "]"
        i = _WS.match(text, self.start + 1).end()
        while text[i] != close:
            if self.kind == "object":
                key, after = json.decoder.scanstring(text, i + 1, True)
                self._keys.append(key)
                self._key_starts.append(i)
                i = _WS.match(text, _WS.match(text, after).end() + 1).end()  # past the ':'
            value, end = _decode_at(text, i)
            items.append(Node(text, i, end, value))
            i = _WS.match(text, end).end()
            if text[i] == ",":
                i = _WS.match(text, i + 1).end()
        self._items = items

    @property
    def items(self) -> list[Node]:
        self._expand()
        assert self._items is not None
        return self._items

    @property
    def keys(self) -> list[str]:
        self._expand()
        return self._keys

    @property
    def key_starts(self) -> list[int]:
        self._expand()
        return self._key_starts

    def spans(self) -> list[tuple[int, int]]:
        starts = self.key_starts if self.kind == "object" else [n.start for n in self.items]
        return [(s, n.end) for s, n in zip(starts, self.items, strict=True)]


def parse(text: str) -> Node:
    """The document's root value with positions; raises ``JsonSyntaxError``."""
    value, start, end = _document(text)
    return Node(text, start, end, value)


def same(a: Any, b: Any) -> bool:
    """Equality that tells ``true`` from ``1`` and ``1`` from ``1.0`` (Python's ``==`` does not); key order
    does not count, as in JSON."""
    return bool(a == b) and _fingerprint(a) == _fingerprint(b)


def _fingerprint(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, sort_keys=True)


@dataclass
class Style:
    """How the file is written, for the parts we add: indent unit, newline, key/value separator."""

    unit: str = "  "
    newline: str = "\n"
    colon: str = ": "
    multiline: bool = True

    @classmethod
    def of(cls, text: str, root: Node | None) -> Style:
        style = cls(newline="\r\n" if "\r\n" in text else "\n", multiline=root is None or "\n" in text.strip())
        for line in text.splitlines()[1:]:
            stripped = line.lstrip(" \t")
            if stripped and len(stripped) < len(line):
                lead = line[: len(line) - len(stripped)]
                style.unit = "\t" if lead.startswith("\t") else lead
                break
        if root is not None and root.kind == "object" and root.keys:
            key_end = json.decoder.scanstring(text, root.key_starts[0] + 1, True)[1]
            colon = text[key_end:root.items[0].start]
            style.colon = colon if "\n" not in colon else ": "
        return style


def render(v: Any, style: Style, indent: str | None) -> str:
    """JSON text for a value we add; ``indent`` None = on one line, else the indentation of its line."""
    text = getattr(v, "json_text", None)
    if text is not None:
        return text
    if isinstance(v, dict) or isinstance(v, list):
        if not v:
            return "{}" if isinstance(v, dict) else "[]"
        inner = None if indent is None else indent + style.unit
        if isinstance(v, dict):
            parts = [render(k if isinstance(k, str) else str(k), style, None) + style.colon + render(x, style, inner)
                     for k, x in v.items()]
        else:
            parts = [render(x, style, inner) for x in v]
        brackets = "{}" if isinstance(v, dict) else "[]"
        if inner is None:
            return brackets[0] + ", ".join(parts) + brackets[1]
        sep = style.newline + inner
        return brackets[0] + sep + ("," + sep).join(parts) + style.newline + indent + brackets[1]
    if isinstance(v, float) and not math.isfinite(v):
        raise ValueError("cannot write NaN or Infinity as JSON")
    out = json.dumps(v, ensure_ascii=False)
    try:
        out.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: only the escaped form is writable
        out = json.dumps(v)
    return out


def _line_indent(text: str, pos: int) -> str:
    line_start = text.rfind("\n", 0, pos) + 1
    line = text[line_start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _separator(text: str, node: Node, spans: list[tuple[int, int]]) -> str:
    """The white space the container puts before an item (after the comma)."""
    if len(spans) >= 2:
        between = text[spans[-2][1]:spans[-1][0]]
        return between.split(",", 1)[1]
    return text[node.start + 1:spans[0][0]]


def _diff(text: str, node: Node, new: Any, style: Style, edits: list[tuple[int, int, str]]) -> None:
    if same(node.value, new):
        return
    kind = "object" if isinstance(new, dict) else "array" if isinstance(new, list) else "scalar"
    if kind != node.kind or kind == "scalar":
        edits.append((node.start, node.end, _render_at(text, node.start, new, style)))
        return
    alive = [True] * len(node.items)
    inserts: list[tuple[int, Any]] = []  # (original index to insert before, new item)
    if kind == "object":
        for i, key in enumerate(node.keys):
            if key in new:
                _diff(text, node.items[i], new[key], style, edits)
            else:
                alive[i] = False
        old_keys = set(node.keys)
        inserts = [(len(node.items), (k, v)) for k, v in new.items() if k not in old_keys]
    else:
        old_fp = [_fingerprint(n.value) for n in node.items]
        matcher = difflib.SequenceMatcher(None, old_fp, [_fingerprint(x) for x in new], autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                continue
            for t in range(max(i2 - i1, j2 - j1)):
                old_i, new_j = i1 + t, j1 + t
                if old_i < i2 and new_j < j2 and node.items[old_i].kind != "scalar" and (
                    node.items[old_i].kind == ("object" if isinstance(new[new_j], dict) else
                                               "array" if isinstance(new[new_j], list) else "scalar")
                ):
                    _diff(text, node.items[old_i], new[new_j], style, edits)
                    continue
                if old_i < i2:
                    alive[old_i] = False
                if new_j < j2:
                    inserts.append((min(old_i + 1, i2), new[new_j]))
    if not any(alive):  # nothing of the old container is left (or it was empty): write it anew
        edits.append((node.start, node.end, _render_at(text, node.start, new, style)))
        return
    _splice(text, node, alive, inserts, style, edits)


def _render_at(text: str, pos: int, value: Any, style: Style) -> str:
    return render(value, style, _line_indent(text, pos) if style.multiline else None)


def _splice(text: str, node: Node, alive: list[bool], inserts: list[tuple[int, Any]], style: Style,
            edits: list[tuple[int, int, str]]) -> None:
    """Delete dead items with the separator on one side, insert new ones beside a surviving item. A member
    appended after the last one and deleted again removes exactly the text that was added."""
    spans = node.spans()
    n = len(spans)
    i = 0
    while i < n:
        if alive[i]:
            i += 1
            continue
        j = i
        while j + 1 < n and not alive[j + 1]:
            j += 1
        if j + 1 < n:
            edits.append((spans[i][0], spans[j + 1][0], ""))
        else:
            edits.append((spans[i - 1][1], spans[j][1], ""))
        i = j + 1
    sep = _separator(text, node, spans)
    indent = sep.rsplit("\n", 1)[1] if "\n" in sep else None
    for pos, item in inserts:
        if node.kind == "object":
            key, value = item
            rendered = render(key, style, None) + style.colon + render(value, style, indent)
        else:
            rendered = render(item, style, indent)
        nxt = next((k for k in range(pos, n) if alive[k]), None)
        if nxt is not None:
            edits.append((spans[nxt][0], spans[nxt][0], rendered + "," + sep))
        else:
            prv = max(k for k in range(n) if alive[k])
            edits.append((spans[prv][1], spans[prv][1], "," + sep + rendered))


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    out, cursor = [], 0
    for start, end, repl in sorted(edits, key=lambda e: (e[0], e[1])):
        if start < cursor:
            raise AssertionError("overlapping JSON edits")
        out.append(text[cursor:start])
        out.append(repl)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def edit(text: str, root: Node, new: Any) -> str:
    """``text`` changed so that it parses to ``new``, touching only what differs."""
    edits: list[tuple[int, int, str]] = []
    _diff(text, root, new, Style.of(text, root), edits)
    return _apply(text, edits)


def dumps(value: Any) -> str:
    """A new file (none existed): two-space indent, like the agents write theirs."""
    return render(value, Style(), "") + "\n"
