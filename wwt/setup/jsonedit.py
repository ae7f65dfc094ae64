"""Format-preserving JSON edits: parse strictly with positions, change the data in Python, then rewrite only the
spans that changed.

Why: users' (and agents') settings files have their own layout, inline objects, escapes and number spellings
(``1e400``, ``1.50``); re-serialising the whole file rewrote all of that (``1e400`` became ``Infinity``, which
Node refuses), and ``--uninstall`` could not give the bytes back. Inserting a member and deleting it again are
exact inverses here, so setup then uninstall leaves the file byte-identical.

The parser is strict RFC 8259: no NaN/Infinity, comments or trailing commas, and a key may not appear twice in
one object (readers disagree on which copy wins, so we refuse to guess)."""

from __future__ import annotations

import difflib
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 200
_WS = " \t\n\r"
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')


class JsonSyntaxError(ValueError):
    """Not strict JSON; ``line`` is 1-based."""

    def __init__(self, msg: str, text: str, pos: int) -> None:
        self.msg = msg
        self.line = text.count("\n", 0, pos) + 1
        super().__init__(f"line {self.line}: {msg}")


class JsonStr(str):
    """A string value that remembers how it was written (escapes), so moving it keeps its text."""

    json_text: str


class JsonInt(int):
    """An integer that remembers its literal text (``-0``, ``12345678901234567890``)."""

    json_text: str


class JsonFloat(float):
    """A number that remembers its literal text: ``1e400`` stays ``1e400`` (as a float it is infinity)."""

    json_text: str


@dataclass
class Node:
    """A value's span ``[start, end)`` in the text. Containers have ``items``; object members also ``keys`` and
    ``key_starts`` (a member's span runs from its key to the end of its value)."""

    start: int
    end: int
    kind: str  # "object" | "array" | "scalar"
    value: Any = None
    items: list[Node] = field(default_factory=list)
    keys: list[JsonStr] = field(default_factory=list)
    key_starts: list[int] = field(default_factory=list)

    def spans(self) -> list[tuple[int, int]]:
        starts = self.key_starts if self.kind == "object" else [n.start for n in self.items]
        return [(s, n.end) for s, n in zip(starts, self.items, strict=True)]

    def to_python(self) -> Any:
        """A fresh Python value (call it twice for an independent copy)."""
        if self.kind == "object":
            return {k: n.to_python() for k, n in zip(self.keys, self.items, strict=True)}
        if self.kind == "array":
            return [n.to_python() for n in self.items]
        return self.value


def _tagged(cls: type, value: Any, text: str) -> Any:
    out = cls(value)
    out.json_text = text
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.n = len(text)

    def fail(self, msg: str, pos: int) -> JsonSyntaxError:
        return JsonSyntaxError(msg, self.text, pos)

    def ws(self, i: int) -> int:
        while i < self.n and self.text[i] in _WS:
            i += 1
        return i

    def string(self, i: int) -> tuple[JsonStr, int]:
        m = _STRING.match(self.text, i)
        if not m:
            raise self.fail("bad string (unescaped control character, bad escape or missing quote)", i)
        return _tagged(JsonStr, json.loads(m.group()), m.group()), m.end()

    def value(self, i: int, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise self.fail(f"nested more than {MAX_DEPTH} levels deep", i)
        text = self.text
        c = text[i] if i < self.n else ""
        if c == "{":
            return self.container(i, depth, "object", "}")
        if c == "[":
            return self.container(i, depth, "array", "]")
        if c == '"':
            s, end = self.string(i)
            return Node(i, end, "scalar", s)
        for word, val in (("true", True), ("false", False), ("null", None)):
            if text.startswith(word, i):
                return Node(i, i + len(word), "scalar", val)
        if text.startswith(("NaN", "Infinity", "-Infinity"), i):
            raise self.fail("NaN and Infinity are not JSON", i)
        m = _NUMBER.match(text, i)
        if m and m.end() > i:
            lit = m.group()
            try:
                num = _tagged(JsonFloat, float(lit), lit) if m.group(1) or m.group(2) else _tagged(JsonInt, int(lit), lit)
            except ValueError as exc:  # more digits than Python converts
                raise self.fail("number too long", i) from exc
            return Node(i, m.end(), "scalar", num)
        if c == "\ufeff":
            raise self.fail("starts with a byte order mark (BOM)", i)
        if c == "/":
            raise self.fail("a comment (JSON has none; wwt edits only plain JSON)", i)
        raise self.fail("expected a value" if c else "unexpected end of file", i)

    def container(self, start: int, depth: int, kind: str, close: str) -> Node:
        node = Node(start, start, kind)
        seen: set[str] = set()
        i = self.ws(start + 1)
        if i < self.n and self.text[i] == close:
            node.end = i + 1
            return node
        while True:
            if kind == "object":
                if i >= self.n or self.text[i] != '"':
                    if self.text.startswith("/", i):
                        raise self.fail("a comment (JSON has none; wwt edits only plain JSON)", i)
                    raise self.fail("expected a key in double quotes", i)
                key, after = self.string(i)
                if key in seen:
                    raise self.fail(f"the key {key.json_text[:60]} appears twice in one object", i)
                seen.add(key)
                node.keys.append(key)
                node.key_starts.append(i)
                i = self.ws(after)
                if i >= self.n or self.text[i] != ":":
                    raise self.fail("expected ':' after a key", i)
                i = self.ws(i + 1)
            item = self.value(i, depth + 1)
            node.items.append(item)
            i = self.ws(item.end)
            if i < self.n and self.text[i] == ",":
                i = self.ws(i + 1)
                continue
            if i < self.n and self.text[i] == close:
                node.end = i + 1
                return node
            raise self.fail(f"expected ',' or '{close}'", i)


def parse(text: str) -> Node:
    """The document's root value with positions; raises ``JsonSyntaxError``."""
    p = _Parser(text)
    try:
        root = p.value(p.ws(0), 0)
    except RecursionError as exc:
        raise p.fail("nested too deeply", 0) from exc
    end = p.ws(root.end)
    if end != len(text):
        raise p.fail("extra data after the JSON value", end)
    return root


def same(a: Any, b: Any) -> bool:
    """Equality that tells ``true`` from ``1`` and ``1`` from ``1.0`` (Python's ``==`` does not)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return _category(a) == _category(b) and a == b


def _category(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return repr(v)
    if isinstance(v, (int, float)):
        return "int" if isinstance(v, int) else "float"
    return type(v).__name__ if not isinstance(v, str) else "str"


def _fingerprint(v: Any) -> str:
    if isinstance(v, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{_fingerprint(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(_fingerprint(x) for x in v) + "]"
    return f"{_category(v)}:{json.dumps(v)}" if not isinstance(v, float) else f"float:{v!r}"


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
            key_end = root.key_starts[0] + len(root.keys[0].json_text)
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
    if same(node.to_python(), new):
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
        old_fp = [_fingerprint(n.to_python()) for n in node.items]
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
