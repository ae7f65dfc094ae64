"""Message text: NFC, content blocks flattened, ANSI stripped, long tool output bounded, code names noted,
tool calls rendered."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

TOOL_RESULT_HEAD = 2000
TOOL_RESULT_TAIL = 500
TOOL_INPUT_MAX = 1000



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
    if ctype == "tool_reference":  # Claude Code's ToolSearch result: the tools it found, by name
        name = block.get("tool_name")
        return name if isinstance(name, str) else ""
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
