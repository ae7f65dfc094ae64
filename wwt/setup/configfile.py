"""Safe edits of other programs' config files: parse strictly, change minimally, write atomically, back up.

An edit is a pure ``transform(old_text) -> new_text`` so the same code path serves ``--dry-run`` (diff only),
the real write, and the tests. A transform that changes nothing semantically returns the old text unchanged,
which is what makes a second ``wwt setup`` byte-identical.
"""

from __future__ import annotations

import difflib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import ParseError as TomlParseError

from wwt.errors import WwtError
from wwt.fileio import atomic_write


class ConfigFormatError(WwtError):
    """A config file we were asked to edit is not valid JSON/TOML: we refuse rather than overwrite it."""


Transform = Callable[[str | None], str | None]


def read_text(path: Path) -> str | None:
    """The file's text, or None when it does not exist."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise ConfigFormatError(f"{path} is not UTF-8 text; not touching it") from exc


def parse_json_object(text: str | None, path: Path) -> dict[str, Any]:
    """A JSON object from ``text`` (missing or blank file = empty object); anything else is refused."""
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigFormatError(
            f"{path} is not valid JSON (line {exc.lineno}: {exc.msg}); fix it or move it away, then re-run"
        ) from exc
    if not isinstance(data, dict):
        raise ConfigFormatError(f"{path} does not hold a JSON object; not touching it")
    return data


def detect_indent(text: str | None) -> int | str:
    """Keep the file's own indentation (Claude writes 2 spaces; users may use 4 or tabs)."""
    if not text:
        return 2
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def dump_json(data: dict[str, Any], like: str | None) -> str:
    return json.dumps(data, indent=detect_indent(like), ensure_ascii=False) + "\n"


def json_transform(path: Path, change: Callable[[dict[str, Any]], None]) -> Transform:
    """Wrap an in-place dict edit as a text transform that leaves the text alone when nothing changed."""

    def transform(old: str | None) -> str | None:
        data = parse_json_object(old, path)
        before = json.loads(json.dumps(data))
        change(data)
        if data == before:
            return old
        return dump_json(data, old)

    return transform


def parse_toml(text: str | None, path: Path) -> tomlkit.TOMLDocument:
    if text is None or not text.strip():
        return tomlkit.document() if text is None else tomlkit.parse(text)
    try:
        return tomlkit.parse(text)
    except TomlParseError as exc:
        raise ConfigFormatError(
            f"{path} is not valid TOML ({exc}); fix it or move it away, then re-run"
        ) from exc


def toml_transform(path: Path, change: Callable[[tomlkit.TOMLDocument], None]) -> Transform:
    """Like ``json_transform`` but through tomlkit, which keeps comments, order and formatting."""

    def transform(old: str | None) -> str | None:
        doc = parse_toml(old, path)
        before = doc.unwrap()
        change(doc)
        if doc.unwrap() == before:
            return old
        return tomlkit.dumps(doc)

    return transform


@dataclass
class FileEdit:
    """One planned change of one file. ``transform`` is pure; ``apply_edit`` does the I/O."""

    path: Path
    transform: Transform
    what: str  # one line for the summary, e.g. "Claude Code hooks (Stop, SessionEnd)"

    def preview(self) -> tuple[str | None, str | None]:
        old = read_text(self.path)
        return old, self.transform(old)


def unified_diff(path: Path, old: str | None, new: str | None) -> str:
    if old == new:
        return ""
    return "".join(
        difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            (new or "").splitlines(keepends=True),
            fromfile=f"{path}" if old is not None else "/dev/null",
            tofile=f"{path}",
        )
    )


def backup_path(path: Path, now: float | None = None) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    candidate = path.with_name(f"{path.name}.wwt-backup-{stamp}")
    n = 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.wwt-backup-{stamp}-{n}")
    return candidate


def apply_edit(edit: FileEdit, attempts: int = 3) -> Path | None:
    """Write the edit if it changes the file; returns the backup path (None: unchanged or new file).

    The agents themselves rewrite some of these files while running (Claude Code's ``.claude.json``), so the
    text is re-read right before the rename and the edit is redone if someone wrote in between."""
    for _ in range(attempts):
        old = read_text(edit.path)
        new = edit.transform(old)
        if new == old or new is None:
            return None
        if read_text(edit.path) != old:
            continue
        backup = None
        if old is not None:
            backup = backup_path(edit.path)
            atomic_write(backup, old, default_mode=edit.path.stat().st_mode & 0o7777)
        atomic_write(edit.path, new)
        return backup
    raise WwtError(f"{edit.path} kept changing while wwt tried to edit it; close the agent and re-run")
