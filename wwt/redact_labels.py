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


# What a sentence about passwords names instead of one: a hash, a cipher, an encoding, a protocol, a size
# ("비밀번호는 SHA256으로 해시", "암호는 AES-256-GCM", "비밀번호는 utf8mb4로", "the token is a JWT").
_TECH = re.compile(
    r"(?:sha-?\d*|sha3-\d+|md5|aes(?:-?\d+)?(?:-[a-z]+)?|rsa(?:-?\d+)?|ecdsa|ed25519|x25519|bcrypt|scrypt"
    r"|argon2(?:id|i|d)?|pbkdf2(?:-[\w-]+)?|hmac(?:-?sha-?\d+)?|[hre]s\d{3}|utf-?(?:8|16|32)(?:mb[34])?|base64(?:url)?"
    r"|hex|ascii|latin-?1|euc-?kr|cp949|jwt|oauth-?2?(?:\.\d)?|saml-?2?|oidc|ldap|totp|hotp|[2m]fa|otp|tls-?1\.\d|ssl"
    r"|crc-?32|blake[23]b?|chacha20(?:-poly1305)?|p-?(?:256|384|521)|\d+(?:bits?|bytes?|chars?|characters?|digits?))"
)


def _bare_value_is_secret(value: str) -> bool:
    """A value written without quotes after a label: long enough, not a placeholder or a plain word/number."""
    if len(value) < 4 or len(value) > 200 or value.lower() in _DENY_WORDS or _TECH.fullmatch(value.lower()):
        return False
    if value.startswith(("$", "%", "<", "{", "[", "/", "~", ".", "-", "(", "*", "http")) or "..." in value:
        return False
    if not any(c.isalpha() for c in value) and not value.isdigit():
        return False  # a range or a rule, not a password: `8~16`, `8-20`, `>=12`
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
    r"(?:비밀번호|비번|패스워드|암호|시크릿\s?키|시크릿|인증\s?토큰|토큰|(?:API|api|Api)\s?키|액세스\s?키|비밀\s?키|인증\s?키|접속\s?키)"
    r"(?:\s*[:：=]\s*|(?:[은는이가을를]|으로|로)\s*|\s+)"
)
# After a value, what says it IS the password: a copula ("…는 sunflower야", "…는 X입니다") or "set/changed to"
# ("…를 X로 바꿨어"). A word there is then the password too; elsewhere a word is what a sentence is about.
_KO_STATED = re.compile(
    r"[ \t]?(?:입니다|이에요|예요|이야|야|이다|임|이고|이며|이라고|라고|이라서|라서|이니까|니까|이거든|거든|요)"
    r"|[ \t]?(?:으로|로)[ \t]?(?:바꿨|바꿔|바꾸|바꿈|변경|설정|지정|정했|정해|해[ \t]?놨|해[ \t]?뒀|해[ \t]?둠|만들)"
)
_KO_WORD = re.compile(r"[A-Za-z][A-Za-z_-]{3,63}")
_KO_LABELLED = re.compile(r"[:：=]")  # `비밀번호: sunflower` — a label and its value, like a form
_KO_WORD_END = re.compile(r"[ \t]*(?:$|\n|\\n|[.,;!)]|[^\x00-\x7f])")  # the line, or a Korean particle, after it
_KO_NOT_WORDS = frozenset({"hash", "hashed", "plain", "plaintext", "text", "string", "public", "private", "secret",
                           "password", "token", "bearer", "basic", "config", "salt", "random", "default", "optional"})


def _korean(text: str) -> list[Span]:
    spans: list[Span] = []
    for m in _KO_LABEL.finditer(text):
        found = _value_span(text, m.end())
        if found is None:
            word = _KO_WORD.match(text, m.end())
            if word and (_KO_STATED.match(text, word.end()) or _KO_LABELLED.search(m.group())
                         and _KO_WORD_END.match(text, word.end())) \
                    and word.group().lower() not in _KO_NOT_WORDS and _prose_word(word.group()):
                found = word.span()
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


# A word after "the password is" is the password only where the sentence ends with it, and not when it says
# what the password is like ("is incorrect", "is required", "is hashed", "is too short").
_PROSE_WORD = re.compile(r"[A-Za-z][A-Za-z_-]{3,63}(?=[ \t]*(?:[.!?,;)](?![\w(])|\\[nr]|\n|$))")
_PROSE_NOT = frozenset({
    "correct", "incorrect", "wrong", "right", "invalid", "valid", "expired", "required", "mandatory", "optional",
    "missing", "empty", "blank", "unset", "weak", "strong", "short", "long", "secure", "insecure", "unknown", "known",
    "different", "same", "fine", "okay", "good", "bad", "there", "here", "null", "none", "undefined", "true",
    "false", "changed", "reset", "current", "default", "random", "temporary", "hidden", "masked", "visible", "shown",
    "public", "private", "secret", "password", "passwd", "passphrase", "token", "compromised", "leaked", "stored",
    "saved", "hashed", "salted", "encrypted", "encoded", "plaintext", "cleartext", "set", "gone", "new", "old",
    "also", "still", "now", "already", "this", "that", "what", "whatever", "something", "nothing", "useless",
    "case-sensitive", "too", "not", "unchanged", "generated", "needed", "ignored", "accepted", "rejected",
    "prompted", "asked", "printed", "logged", "sent", "used", "unused", "taken", "available", "unavailable",
})
_ADJECTIVE_ENDS = ("ed", "ing", "ly", "able", "ible", "ive", "ous", "ful", "less", "ent", "ant", "ic", "ary", "ated")


def _prose_word(word: str) -> bool:
    low = word.lower()
    return low not in _PROSE_NOT and low not in _DENY_WORDS and not low.endswith(_ADJECTIVE_ENDS) \
        and not _TECH.fullmatch(low) and not word.isupper()


def _prose(text: str) -> list[Span]:
    spans: list[Span] = []
    for m in _PROSE.finditer(text):
        found = _value_span(text, m.end())
        if found is None and m.end() < len(text) and text[m.end()] in "'\"`":  # a passphrase: 'lamp mouse tiger'
            end = text.find(text[m.end()], m.end() + 1, m.end() + 102)
            value = text[m.end() + 1:end] if end > 0 else ""
            if 8 <= len(value.strip()) and value.count(" ") <= 6 and not value.isupper() \
                    and not value.lower().startswith(_DENY_WORDS_PREFIXES):
                found = (m.end() + 1, end)
        if found is None and not m.group().rstrip().endswith(":"):  # `is sunflower.` (not `password: word`)
            word = _PROSE_WORD.match(text, m.end())
            if word and _prose_word(word.group()):
                found = word.span()
        if found:
            spans.append((*found, "password"))
    return spans


_DENY_WORDS_PREFIXES = ("$", "%", "<", "{", "[", "your ", "the ", "a ", "an ")


# English labels written with a space, which the ``name=value`` scan reads as prose ("API Key: 9f8e…",
# "Access token: …", "Client secret = …", "the secret is …"): only a value that looks random (letters and digits
# mixed, 12+ characters; quoted, 8+) is one. Run after the other rules (``redact_stated``), so a token they
# know keeps its kind.
_EN_WORD = re.compile(r"key|token|secret")  # found in the lower-case text, then widened both ways
_EN_BEFORE = re.compile(  # the words in front of the keyword (matched backwards from it: ``$`` is the keyword)
    r"(?:(?:api|access|secret|private|client|auth|app|deploy|personal[ \t]+access|refresh|session|signing|webhook"
    r"|master|license|bot|service[ \t]+account|encryption|bearer)[ \t]+|api[ \t]?)$"
)
_EN_AFTER = re.compile(
    r"(?:[ \t]+(?:for|of)[ \t]+(?:the[ \t]+|my[ \t]+|our[ \t]+|your[ \t]+)?[\w.@/-]+(?:[ \t]+[\w.@/-]+){0,2}?)?"
    r"(?:[ \t]*[:=][ \t]*|[ \t]+(?:is|was)[ \t]+(?:still[ \t]+|now[ \t]+)?)"
)
_DIGIT_THEN_LETTER = re.compile(r"[0-9][A-Za-z]|[A-Za-z][0-9][A-Za-z]")
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_\-.+/=~]+")  # what API keys and tokens are made of (not a regex, a quote)


def _random_looking(value: str) -> bool:
    """Letters and digits mixed inside the value (not an identifier with a number at its end: ``item_2024``)."""
    return 12 <= len(value) <= 200 and _DIGIT_THEN_LETTER.search(value) is not None \
        and _TOKEN_CHARS.fullmatch(value) is not None \
        and not value.startswith(("$", "%", "<", "{", "[", "/", ".", "-", "http", "[REDACTED:")) \
        and not _DOTTED.fullmatch(value) and not _TECH.fullmatch(value.lower())


def _english_labels(text: str, lower: str) -> list[Span]:
    spans: list[Span] = []
    for hit in _EN_WORD.finditer(lower):
        word_start, word_end = hit.span()
        if word_end < len(lower) and (lower[word_end].isalnum() or lower[word_end] in "_-"):
            continue  # `tokens`, `keyboard`, `secret_name`
        before = _EN_BEFORE.search(lower, max(0, word_start - 32), word_start)
        label_start = before.start() if before else word_start
        if hit.group() == "key" and before is None:
            continue  # a key alone is anything (a dict's, a keyboard's); an API/access/secret key is one
        if label_start and (lower[label_start - 1].isalnum() or lower[label_start - 1] in "_-"):
            continue  # `GITHUB_TOKEN`, `x-api-key` (the name=value scan reads names)
        after = _EN_AFTER.match(lower, word_end)
        if after is None or after.end() >= len(text):
            continue
        start = after.end()
        if text[start] in "'\"`":
            end = text.find(text[start], start + 1, start + 202)
            value = text[start + 1:end] if end > 0 else ""
            if len(value) >= 8 and " " not in value and _random_looking(value.rjust(12, "_")):
                spans.append((start + 1, end, "secret"))
            continue
        found = _value_span(text, start, bare=_random_looking)
        if found:
            spans.append((*found, "secret"))
    return spans


_ASCII_LOWER = {c: c + 32 for c in range(65, 91)}


def redact_stated(text: str) -> tuple[str, int]:
    """The last pass of ``wwt.redact``: English labels written with a space (``_english_labels``)."""
    lower = text.lower()
    if len(lower) != len(text):  # a letter that grows when lowered (İ): offsets would drift
        lower = text.translate(_ASCII_LOWER)
    if "key" not in lower and "token" not in lower and "secret" not in lower:
        return text, 0
    spans = _english_labels(text, lower)
    return _apply(text, spans) if spans else (text, 0)


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


_COOKIE_PAIR = re.compile(r"([^\s=;,]+)=\"?([^;\s\"]*)")
_COOKIE_ATTRIBUTES = frozenset({"path", "domain", "expires", "max-age", "samesite", "version", "comment", "priority"})


def _cookie(text: str) -> list[Span]:
    """A ``Cookie``/``Set-Cookie`` header's value (RFC 6265: ``name=value`` pairs): session ids are credentials.
    A header whose values are all short words (``theme=dark; lang=en``, ``sugar=wafer`` in the stdlib's docs)
    carries none."""
    spans: list[Span] = []
    for m in _COOKIE.finditer(text):
        value = _COOKIE_VALUE.match(text, m.end())
        if value and len(value.group().strip()) >= 4 and any(
                len(v) >= 16 or len(v) >= 6 and any(c.isdigit() or c in "%+/" for c in v)
                for n, v in _COOKIE_PAIR.findall(value.group()) if n.lower() not in _COOKIE_ATTRIBUTES):
            spans.append((value.start(), value.start() + len(value.group().rstrip()), "cookie"))
    return spans


# ------------------------------------------------------------------------------------------------ key files, Discord

_KUBE_KEY = re.compile(r"client-key-data[\"']?[ \t]*[:=][ \t]*[\"']?([A-Za-z0-9+/=]{16,})")
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


_DISCORD_MIDDLE = re.compile(r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}")  # a fast scan (it starts at a `.`)


def _discord(text: str) -> list[Span]:
    spans: list[Span] = []
    for middle in _DISCORD_MIDDLE.finditer(text):  # only around a middle part: scanning for [MNO] cost 20 %
        m = _DISCORD.search(text, max(0, middle.start() - 28), middle.end() + 13)  # holds the end check
        if m and m.end(1) == middle.start() and _discord_id(m.group(1)):
            spans.append((m.start(), m.end(), "discord_token"))
    return spans


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
