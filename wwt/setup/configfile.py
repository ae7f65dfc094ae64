"""Safe edits of other programs' config files: parse strictly, change minimally, write atomically, back up.

An edit is a pure ``transform(old_text) -> new_text`` so the same code path serves ``--dry-run`` (diff only),
the real write, and the tests. A transform that changes nothing semantically returns the old text unchanged,
which is what makes a second ``wwt setup`` byte-identical.
"""

from __future__ import annotations

import difflib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from wwt.errors import WwtError
from wwt.fileio import atomic_write
from wwt.setup import jsonedit, tomledit


class ConfigFormatError(WwtError):
    """A config file we were asked to edit cannot be edited safely (not valid JSON/TOML, unreadable, a broken
    symlink, read-only): we refuse with one line rather than overwrite it."""


class EditSkipped(WwtError):
    """A config file the agent reads but wwt cannot edit without losing something of the user's (OpenCode's
    JSONC comments): setup says so in one line and goes on with the other agents."""


Transform = Callable[[str | None], str | None]


def read_text(path: Path) -> str | None:
    """The file's text exactly as stored (CRLF stays CRLF), or None when it does not exist."""
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise ConfigFormatError(f"{path} is not UTF-8 text; not touching it") from exc
    except OSError as exc:
        raise ConfigFormatError(f"{path}: cannot read it ({exc.strerror or exc}); not touching it") from exc


def write_target(path: Path) -> Path:
    """The file an edit of ``path`` really writes: ``path`` itself, or for a symlink (dotfiles repos keep these
    files as links) the file it points to, so the link survives. A broken link or a loop is refused."""
    if not path.is_symlink():
        return path
    try:
        return Path(os.path.realpath(path, strict=True))
    except FileNotFoundError as exc:
        raise ConfigFormatError(
            f"{path} is a symlink to {os.readlink(path)}, which does not exist; not touching it"
        ) from exc
    except OSError as exc:
        raise ConfigFormatError(f"{path} is a symlink loop ({exc.strerror or exc}); not touching it") from exc


def check_writable(path: Path) -> None:
    """Refuse a file the user made read-only (no write bit; a read-only file system, e.g. a Nix store link):
    replacing it by rename would work, but it would undo their choice."""
    target = write_target(path)
    via = f" (a symlink to {target})" if target != path else ""
    hint = "; make it writable or add the entries yourself (see `wwt setup --dry-run`)"
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and (not mode & 0o222 or not os.access(target, os.W_OK)):
        raise ConfigFormatError(f"{path}{via} is read-only{hint}")
    folder = target.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigFormatError(f"{path}{via}: its folder {folder} is not writable{hint}")


def _parse_json(text: str | None, path: Path) -> jsonedit.Node | None:
    if text is None or not text.strip():
        return None
    try:
        root = jsonedit.parse(text)
    except jsonedit.JsonSyntaxError as exc:
        raise ConfigFormatError(f"{path} is not valid JSON ({exc}); fix it or move it away, then re-run") from exc
    if root.kind != "object":
        raise ConfigFormatError(f"{path} does not hold a JSON object; not touching it")
    return root


def parse_json_object(text: str | None, path: Path) -> dict[str, Any]:
    """A JSON object from ``text`` (missing or blank file = empty object); anything else is refused, including
    what only lenient readers accept (NaN, Infinity, a key twice)."""
    root = _parse_json(text, path)
    return root.value if root is not None else {}


def json_transform(path: Path, change: Callable[[dict[str, Any]], None]) -> Transform:
    """Wrap an in-place dict edit as a text transform that rewrites only the changed parts of the text (and
    leaves it alone when nothing changed)."""

    def transform(old: str | None) -> str | None:
        root = _parse_json(old, path)
        data = jsonedit.loads(old or "") if root is not None else {}
        change(data)
        if jsonedit.same(data, root.value if root is not None else {}):
            return old
        if root is None:
            return jsonedit.dumps(data)
        return jsonedit.edit(old or "", root, data)

    return transform


def parse_toml(text: str | None, path: Path) -> tomlkit.TOMLDocument:
    if text is None or not text.strip():
        return tomlkit.document() if text is None else tomlkit.parse(text)
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ConfigFormatError(
            f"{path} is not valid TOML ({exc}); fix it or move it away, then re-run"
        ) from exc


def toml_transform(path: Path, change: Callable[[tomlkit.TOMLDocument], None]) -> Transform:
    """Like ``json_transform`` but through tomlkit, which keeps comments, order and formatting; whole tables
    are added and removed as text (``tomledit``) so that uninstall gives the bytes back."""

    def transform(old: str | None) -> str | None:
        doc = parse_toml(old, path)
        before = doc.unwrap()
        try:
            change(doc)
        except (TOMLKitError, ValueError) as exc:  # e.g. our table under an inline `mcp_servers = {…}`
            raise ConfigFormatError(
                f"{path}: wwt cannot add its entries to this layout ({str(exc)[:120]}); add them yourself"
            ) from exc
        after = doc.unwrap()
        if after == before:
            return old
        new = tomlkit.dumps(doc)
        spliced = tomledit.splice(old or "", new, before, after)
        return spliced if spliced is not None else tomledit.keep_layout(old or "", new, after)

    return transform


@dataclass
class FileEdit:
    """One planned change of one file. ``transform`` is pure; ``apply_edit`` does the I/O."""

    path: Path
    transform: Transform
    what: str  # one line for the summary, e.g. "Claude Code hooks (Stop, SessionEnd)"

    def preview(self) -> tuple[str | None, str | None]:
        old = read_text(write_target(self.path))
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
    text is re-read right before the rename and the edit is redone if someone wrote in between. A symlink is
    written through (the target is replaced atomically, the link stays); the backup lies beside the link."""
    target = write_target(edit.path)
    for _ in range(attempts):
        old = read_text(target)
        new = edit.transform(old)
        if new == old or new is None:
            return None
        check_writable(edit.path)
        if read_text(target) != old:
            continue
        backup = None
        if old is not None:
            backup = backup_path(edit.path)
            atomic_write(backup, old, default_mode=target.stat().st_mode & 0o7777)
        atomic_write(target, new)
        return backup
    raise WwtError(f"{edit.path} kept changing while wwt tried to edit it; close the agent and re-run")
