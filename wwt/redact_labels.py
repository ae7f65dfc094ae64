"""Secrets that no token shape and no ``name=value`` form finds: stated in a sentence, in Korean or English
("비밀번호는 Tiger!2024", "the password is hunter2"), sent as a ``Cookie`` header, given to ``htpasswd -b`` or a
``--password`` flag, or written in a key file's own layout (kubeconfig ``client-key-data``, PuTTY ``.ppk``),
and Discord bot tokens, which carry no prefix at all.

``redact_labelled(text)`` runs before ``wwt.redact``'s rules (its markers are then left alone by them). Each
rule runs only when its cue — a label, a command or a header name — is in the text, so most messages cost a
few substring scans. Values are judged, not just matched: a sentence *about* passwords ("비밀번호는 8자 이상",
"the password is incorrect", "비밀번호는 bcrypt로 해시") states a rule, not a secret, so a bare value must hold a
digit or a symbol; words alone pass only in quotes.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

Span = tuple[int, int, str]

_TRAILING = ".,;:)]}>"
_DOTTED = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+")
_DENY_WORDS = frozenset({
    "option", "options", "flag", "flags", "prompt", "stdin", "file", "argument", "arguments", "value", "parameter",
    "required", "none", "null", "true", "false", "empty", "env", "variable", "here", "below", "above",
})


def _bare_value_is_secret(value: str) -> bool:
    """A value written without quotes after a label: long enough, not a placeholder or a plain word/number."""
    if len(value) < 4 or len(value) > 200 or value.lower() in _DENY_WORDS:
        return False
    if value.startswith(("$", "%", "<", "{", "[", "/", "~", "./", "-", "(", "*", "http")) or "..." in value:
        return False
    if "(" in value or _DOTTED.fullmatch(value):
        return False  # a call or an attribute: `os.getcwd()`, `settings.DB_PASSWORD`
    if value.isdigit():
        return len(value) >= 8
    if value.isalpha() or value.replace("-", "").replace("_", "").isalpha():
        return False  # a word (bcrypt, incorrect, stored) or a placeholder (PASSWORD)
    return any(c.isalnum() for c in value)


def _quoted_value_is_secret(value: str) -> bool:
    if len(value) < 4 or len(value) > 200 or value.lower() in _DENY_WORDS or value.isupper():
        return False
    return not value.startswith(("$", "%", "<", "{", "[")) and "..." not in value and " " not in value.strip()


def _value_span(text: str, start: int, bare: Callable[[str], bool] = _bare_value_is_secret) -> tuple[int, int] | None:
    """The secret's span when a value starting at ``start`` is one: quoted (``'…'``, ``"…"``, `` `…` ``) or a
    run of visible ASCII (a Korean particle after it ends it: ``Tiger2024!야``), trailing punctuation left out."""
    if start >= len(text):
        return None
    quote = text[start]
    if quote in "'\"`":
        end = text.find(quote, start + 1, start + 202)
        if end < 0:
            return None
        value = text[start + 1:end]
        return (start + 1, end) if _quoted_value_is_secret(value) else None
    end = start
    while end < len(text) and "!" <= text[end] <= "~" and end - start <= 200:
        end += 1
    while end > start and text[end - 1] in _TRAILING:
        end -= 1
    if end - start > 200:
        return None
    return (start, end) if bare(text[start:end]) else None


# ------------------------------------------------------------------------------------------------ Korean labels

_KO_CUES = ("비밀번호", "비번", "패스워드", "암호", "시크릿", "토큰", "키")
_KO_LABEL = re.compile(
    r"(?:비밀번호|비번|패스워드|암호|시크릿|인증\s?토큰|토큰|(?:API|api|Api)\s?키|액세스\s?키|비밀\s?키|시크릿\s?키|인증\s?키|접속\s?키)"
    r"(?:\s*[:：=]\s*|[은는이가]\s*|\s+)"
)


def _korean(text: str) -> list[Span]:
    spans: list[Span] = []
    for m in _KO_LABEL.finditer(text):
        found = _value_span(text, m.end())
        if found:
            kind = "password" if m.group().startswith(("비밀번호", "비번", "패스워드", "암호")) else "secret"
            spans.append((*found, kind))
    return spans


# ------------------------------------------------------------------------------------------------ English prose

_PROSE = re.compile(
    r"(?i)\b(?:password|passwd|passphrase|passcode|pw|pwd)"
    r"(?:\s+(?:for|of|to|on)\s+(?:the\s+|my\s+|our\s+|your\s+)?[\w.@/-]+(?:\s+[\w.@/-]+){0,2}?)?"
    r"\s+(?:is|was|will\s+be|should\s+be|:)\s+"  # not `=`: code (`pwd = os.getcwd()`) is the keyword scan's
)


def _prose(text: str) -> list[Span]:
    return [(*found, "password") for m in _PROSE.finditer(text) if (found := _value_span(text, m.end()))]


# ------------------------------------------------------------------------------------------------ commands, headers

_PASSWORD_FLAG = re.compile(r"(?<![\w-])--?(?:password|passwd)(?:=|[ \t]+)")


def _password_flag(text: str) -> list[Span]:
    """``--password swordfish``: a flag's value is the password even when it is a word (not ``--password
    option``, ``--password PASSWORD``, ``--password $PW``)."""
    spans: list[Span] = []
    for m in _PASSWORD_FLAG.finditer(text):
        found = _value_span(text, m.end(), bare=_flag_value_is_secret)
        if found:
            spans.append((*found, "password"))
    return spans


def _flag_value_is_secret(value: str) -> bool:
    if value.isalpha():
        return 4 <= len(value) <= 200 and value.lower() not in _DENY_WORDS and not value.isupper()
    return _bare_value_is_secret(value)


_HTPASSWD = re.compile(r"\bhtpasswd((?:[ \t]+-[A-Za-z]+)+)((?:[ \t]+[^\s|;&]+){1,3})")


def _htpasswd(text: str) -> list[Span]:
    """``htpasswd -b [-c] FILE USER PASSWORD`` and ``htpasswd -nb USER PASSWORD`` (the Apache manual: with
    ``-b`` the password is the last argument)."""
    spans: list[Span] = []
    for m in _HTPASSWD.finditer(text):
        flags = m.group(1).replace("-", "").replace(" ", "").replace("\t", "")
        if "b" not in flags:
            continue
        args = list(re.finditer(r"[^\s|;&]+", m.group(2)))
        wanted = 2 if "n" in flags else 3
        if len(args) >= wanted:
            arg = args[wanted - 1]
            start = m.start(2) + arg.start()
            spans.append((start, m.start(2) + arg.end(), "password"))
    return spans


_COOKIE = re.compile(r"(?i)(?<![\w-])(?:set-)?cookie[ \t]*:[ \t]*(?=[^\s=;,'\"]+=)")
_COOKIE_VALUE = re.compile(r"[^\n'\"\\]+")


def _cookie(text: str) -> list[Span]:
    """A ``Cookie``/``Set-Cookie`` header's value (RFC 6265: ``name=value`` pairs): session ids are credentials."""
    spans: list[Span] = []
    for m in _COOKIE.finditer(text):
        value = _COOKIE_VALUE.match(text, m.end())
        if value and len(value.group().strip()) >= 4:
            spans.append((value.start(), value.start() + len(value.group().rstrip()), "cookie"))
    return spans


# ------------------------------------------------------------------------------------------------ key files, Discord

_KUBE_KEY = re.compile(r"client-key-data[\"']?[ \t]*:[ \t]*[\"']?([A-Za-z0-9+/=]{16,})")
_PPK_PRIVATE = re.compile(r"Private-Lines:[ \t]*\d+[ \t]*\r?\n((?:[A-Za-z0-9+/=]+[ \t]*(?:\r?\n|$))+)")
_PPK_MAC = re.compile(r"Private-MAC:[ \t]*([0-9a-fA-F]{16,})")
_DISCORD = re.compile(r"(?<![\w.-])([MNO][A-Za-z0-9_-]{22,27})\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![\w.-])")


def _key_files(text: str) -> list[Span]:
    spans: list[Span] = []
    if "client-key-data" in text:
        spans += [(m.start(1), m.end(1), "private_key") for m in _KUBE_KEY.finditer(text)]
    if "Private-" in text:
        for m in _PPK_PRIVATE.finditer(text):
            spans.append((m.start(1), m.start(1) + len(m.group(1).rstrip()), "private_key"))
        spans += [(m.start(1), m.end(1), "private_key") for m in _PPK_MAC.finditer(text)]
    return spans


def _discord_id(part: str) -> bool:
    """Discord's bot token opens with the bot's numeric id (a snowflake: 17–20 digits) in base64."""
    try:
        decoded = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError):
        return False
    return decoded.isdigit() and 17 <= len(decoded) <= 20


def _discord(text: str) -> list[Span]:
    return [(m.start(), m.end(), "discord_token") for m in _DISCORD.finditer(text) if _discord_id(m.group(1))]


# ------------------------------------------------------------------------------------------------ entry


def redact_labelled(text: str) -> tuple[str, int]:
    """``text`` with the secrets these rules find replaced by ``[REDACTED:<kind>]``, and how many."""
    if not text:
        return text, 0
    spans: list[Span] = []
    lower = text.lower()
    if not text.isascii() and any(cue in text for cue in _KO_CUES):
        spans += _korean(text)
    if "pw" in lower or "pass" in lower:
        spans += _prose(text)
        if "-pass" in lower:
            spans += _password_flag(text)
        if "htpasswd" in lower:
            spans += _htpasswd(text)
    if "cookie" in lower:
        spans += _cookie(text)
    spans += _key_files(text)
    if len(text) >= 59 and "." in text:
        spans += _discord(text)
    if not spans:
        return text, 0
    return _apply(text, spans)


def _apply(text: str, spans: list[Span]) -> tuple[str, int]:
    parts: list[str] = []
    last = count = 0
    for start, end, kind in sorted(spans):
        if start < last or end <= start or text.startswith("[REDACTED:", start):
            continue
        parts.append(text[last:start])
        parts.append(f"[REDACTED:{kind}]")
        last = end
        count += 1
    parts.append(text[last:])
    return "".join(parts), count
