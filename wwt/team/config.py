"""This machine's team settings: ``<data dir>/team.json`` (0600). The server URL is kept here and never printed
whole (``masked``)."""

from __future__ import annotations

import json
import socket
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from wwt.fileio import atomic_write

FILE_NAME = "team.json"


@dataclass
class TeamConfig:
    url: str
    machine_id: str
    label: str
    shared: list[str] = field(default_factory=list)
    share_all: bool = False  # joined with --share-all: a project the archive gains later is shared too
    unshared: list[str] = field(default_factory=list)  # with share_all: projects the user took back
    last_push: str | None = None
    last_error: str | None = None
    pushed: dict[str, int] = field(default_factory=dict)

    @property
    def shares_anything(self) -> bool:
        """Named projects, or every project (those to come included)."""
        return bool(self.shared) or self.share_all

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def adopt_new_projects(config: TeamConfig, projects: list[str]) -> list[str]:
    """With ``share_all``, the archive's projects not shared yet and never unshared join ``shared``; the names
    added (none without ``share_all``: sharing is asked for, project by project, otherwise)."""
    if not config.share_all:
        return []
    added = [name for name in dict.fromkeys(projects) if name not in config.shared and name not in config.unshared]
    config.shared.extend(added)
    return added


def config_path(home: Path) -> Path:
    return home / FILE_NAME


def load(home: Path) -> TeamConfig | None:
    """The team settings, or None when this data dir has not joined a team."""
    path = config_path(home)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None
    known = {k: raw[k] for k in TeamConfig.__dataclass_fields__ if k in raw}
    try:
        return TeamConfig(**known)
    except TypeError:
        return None


def save(home: Path, config: TeamConfig) -> None:
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic_write(config_path(home), json.dumps(config.to_dict(), indent=2, ensure_ascii=False) + "\n", 0o600)
    config_path(home).chmod(0o600)


def remove(home: Path) -> bool:
    try:
        config_path(home).unlink()
        return True
    except FileNotFoundError:
        return False


def new_config(url: str, label: str | None) -> TeamConfig:
    return TeamConfig(url=url, machine_id=str(uuid.uuid4()), label=label or socket.gethostname() or "machine")


def masked(url: str) -> str:
    """``url`` with its password replaced by ``***`` (also a ``password=`` query parameter)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable url>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":***"
        netloc = f"{userinfo}@{host}"
    query = "&".join(
        (p.split("=", 1)[0] + "=***") if p.lower().startswith("password=") else p for p in parts.query.split("&") if p
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
