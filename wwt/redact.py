"""Secret redaction before anything reaches the store: agent logs are full of pasted keys and ``.env`` dumps.

Each rule is a row in ``RULES`` (kind, regex, cheap trigger substrings, optional validator). A match is
replaced by ``[REDACTED:<kind>]``; for rules with a ``keep`` group (``Bearer ``, ``scheme://user:``,
``NAME=``) only the secret part is replaced. Rules are anchored on vendor prefixes or on an explicit context
so ordinary text, UUIDs, git SHAs and code identifiers are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    kind: str
    pattern: re.Pattern[str]
    triggers: tuple[str, ...]  # at least one must occur in the text (case-sensitive) for the rule to run
    validate: Callable[[str], bool] | None = None  # extra check on the secret part


def _has_digit(value: str) -> bool:
    return any(c.isdigit() for c in value)


_PLAIN_WORDS = frozenset({"true", "false", "none", "null", "undefined", "changeme", "required", "optional"})


def _looks_like_secret_value(value: str) -> bool:
    """``NAME=value`` assignments: skip numbers, booleans and placeholders (``MAX_TOKENS=100000``)."""
    if value.lower() in _PLAIN_WORDS or value.startswith(("$", "<", "%")):
        return False
    has_alpha = any(c.isalpha() for c in value)
    return has_alpha and (_has_digit(value) or len(value) >= 12 or not value.isalpha())


_B = r"(?<![A-Za-z0-9_\-])"  # token boundary on the left (hyphen counts: no match inside kebab names)

RULES: tuple[Rule, ...] = (
    Rule(
        "private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s]*)",
            re.DOTALL,
        ),
        ("-----BEGIN",),
    ),
    Rule("anthropic_key", re.compile(_B + r"sk-ant-[A-Za-z0-9_\-]{20,}"), ("sk-ant-",)),
    Rule(
        "openai_key",
        re.compile(_B + r"sk-(?:proj-|svcacct-|admin-)?(?P<secret>[A-Za-z0-9_\-]{20,})"),
        ("sk-",),
        _has_digit,
    ),
    Rule(
        "aws_access_key",
        re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"),
        ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"),
    ),
    Rule(
        "aws_secret_key",
        re.compile(
            r"(?i)(?P<keep>aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?)(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"
        ),
        ("ecret", "ECRET"),
    ),
    Rule("gcp_api_key", re.compile(_B + r"AIza[0-9A-Za-z_\-]{35}"), ("AIza",)),
    Rule("github_token", re.compile(_B + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"), ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    Rule("gitlab_token", re.compile(_B + r"glpat-[A-Za-z0-9_\-]{20,}"), ("glpat-",)),
    Rule("slack_token", re.compile(_B + r"xox[abprs]-[A-Za-z0-9\-]{10,}"), ("xox",)),
    Rule("slack_webhook", re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{20,}"),
         ("hooks.slack.com",)),
    Rule("npm_token", re.compile(_B + r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"), ("npm_",)),
    Rule("stripe_key", re.compile(_B + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"), ("_live_", "_test_")),
    Rule(
        "jwt",
        re.compile(_B + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{10,}"),
        ("eyJ",),
    ),
    Rule(
        "bearer_token",
        re.compile(r"(?P<keep>\b[Bb]earer\s+)(?P<secret>[A-Za-z0-9\-._~+/]{16,}=*)"),
        ("earer",),
        _has_digit,
    ),
    Rule(
        "url_password",
        re.compile(r"(?P<keep>\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@\"'<>]+:)(?P<secret>[^\s@/\"'<>]+)(?=@)"),
        ("://",),
    ),
    Rule(
        "env_secret",
        re.compile(
            r"(?m)(?P<keep>^[ \t]*(?:export[ \t]+)?[A-Z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY)[A-Z0-9_]*[ \t]*[=:][ \t]*[\"']?)"
            r"(?P<secret>[A-Za-z0-9_\-+/=.:@!%^*~]{6,})(?=[\"']?[ \t]*(?:#.*)?$)"
        ),
        ("PASSWORD", "PASSWD", "SECRET", "TOKEN", "API_KEY", "APIKEY", "ACCESS_KEY"),
        _looks_like_secret_value,
    ),
)


def _replace(rule: Rule, counter: list[int]) -> Callable[[re.Match[str]], str]:
    groups = rule.pattern.groupindex

    def sub(match: re.Match[str]) -> str:
        secret = match.group("secret") if "secret" in groups else match.group(0)
        if rule.validate is not None and not rule.validate(secret):
            return match.group(0)
        counter[0] += 1
        keep = match.group("keep") if "keep" in groups else ""
        return f"{keep}[REDACTED:{rule.kind}]"

    return sub


# One scan finds which rules can possibly match (most texts hold no trigger at all).
_TRIGGER_RE = re.compile("|".join(re.escape(t) for t in sorted({t for r in RULES for t in r.triggers}, key=len, reverse=True)))


def redact(text: str) -> tuple[str, int]:
    """Replace secrets in ``text``; returns the new text and how many were replaced."""
    if not text:
        return text, 0
    present = set(_TRIGGER_RE.findall(text))
    if not present:
        return text, 0
    counter = [0]
    for rule in RULES:
        if present.intersection(rule.triggers):
            text = rule.pattern.sub(_replace(rule, counter), text)
    return text, counter[0]
