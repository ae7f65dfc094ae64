"""Settings of a data dir that change what is stored (issue 24). They live in ``<data dir>/settings.json`` and
every process that archives reads them there — ``wwt ingest``, ``wwt setup``, the engine, the background worker,
a hook's take-over, an MCP ``ingest_session`` — so what is stored never depends on the environment of whichever
command happened to start a process. One setting today: ``redact`` (on unless the file says ``false``).

``WWT_REDACT`` is no longer read: an environment variable reaches every child an agent or a shell starts (an
``export`` in a profile, an MCP server's ``env``), and a privacy setting that a stray variable can switch off for
one process is not one. Turning redaction off is a deliberate, persistent, visible step (``wwt config redact
off``); ``wwt config`` and ``wwt doctor`` show it.
"""

from __future__ import annotations

import json
import os

SETTINGS_FILE = "settings.json"
DEFAULTS: dict[str, bool] = {"redact": True}
_OFF_WORDS = ("0", "false", "no", "off")


def settings_path(home: str | None = None) -> str:
    from wwt.paths import data_dir_name

    return os.path.join(home or data_dir_name(), SETTINGS_FILE)


def load(home: str | None = None) -> dict[str, bool]:
    """The data dir's settings over the defaults. A missing file is the defaults; so is a file that cannot be
    read or parsed (redaction stays on: the safe reading of a damaged file)."""
    settings = dict(DEFAULTS)
    try:
        with open(settings_path(home), encoding="utf-8") as f:
            stored = json.load(f)
    except (OSError, ValueError):
        return settings
    if isinstance(stored, dict):
        for name in DEFAULTS:
            if isinstance(stored.get(name), bool):
                settings[name] = stored[name]
    return settings


def redaction_on(home: str | None = None) -> bool:
    """Whether secrets are redacted before they are stored in this data dir: yes unless ``settings.json`` says
    ``"redact": false``. Read on every call (a file parse reads it once): a change applies to a running engine."""
    return load(home)["redact"] is not False


def save(name: str, value: bool, home: str | None = None) -> str:
    """Set one setting; the file is replaced whole (never half written) and private (0600). Returns its path."""
    if name not in DEFAULTS:
        raise KeyError(name)
    path = settings_path(home)
    settings = load(home)
    settings[name] = value
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(settings, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def env_note() -> str | None:
    """One line for a command given ``WWT_REDACT=0`` (which turned redaction off before): it is not read."""
    raw = os.environ.get("WWT_REDACT")
    if raw is None or raw.strip().lower() not in _OFF_WORDS:
        return None
    state = "on" if redaction_on() else "off"
    return (f"WWT_REDACT is not read: redaction is this data dir's setting (now {state}); "
            "`wwt config redact off` changes it for every process that archives here")
