"""Secret redaction before anything reaches the store: agent logs are full of pasted keys and ``.env`` dumps.

Two families of rules. Token rules (``RULES``) know a vendor's token shape: a fixed prefix and alphabet.
Context rules know where secrets are written: a secret-sounding name followed by a value (``.env``, YAML,
JSON, code, ``--flag value``, ``?query=``, ``X-Api-Key:`` headers), URL user-info, ``Basic``/``Bearer``
credentials, client passwords (``mysql -psecret``, ``curl -u user:pw``) and AWS secret keys next to their
access key id. A match is replaced by ``[REDACTED:<kind>]``; only the secret part is replaced, the name,
scheme or flag in front of it stays so the text still reads (``DB_PASSWORD=[REDACTED:password]``).

The catalogue of token shapes follows gitleaks' rules (``cmd/generate/config/rules``, commit b58d3f10,
v8.30.0+27) and Yelp detect-secrets' plugins (commit 5e141933, v1.5.0+50), re-expressed here; a few prefixes
documented by their vendors were added (Groq ``gsk_``, xAI ``xai-``, Replicate ``r8_``, Tavily ``tvly-``,
LangSmith ``lsv2_``, Supabase ``sbp_``, Google ``GOCSPX-``/``ya29.``, Stripe ``whsec_``).

Speed: every message of every log passes through ``redact``. One scan of a trie of literal prefixes over the
distinct separator-free pieces of the words of 20+ characters picks the token rules that can match at all,
each pattern starting with its literal prefix (run only where a cheaper backwards screen finds a part of a
prefix: a few texts in a hundred); context rules run only when their cue (``://``, ``Basic``,
``curl``…) is in the text; the keyword scanner runs only where a secret-sounding word occurs and decides in
Python, per hit, whether the name and the value around it are a secret. Values and command spans are bounded, so hostile input stays near-linear.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from wwt.redact_labels import redact_labelled, redact_stated


@dataclass(frozen=True)
class Rule:
    kind: str
    pattern: re.Pattern[str]
    triggers: tuple[str, ...]  # at least one must occur in the text (case-sensitive) for the rule to run
    validate: Callable[[str], bool] | None = None  # extra check on the secret part
    anywhere: bool = False  # triggers may sit in short words (`://`, `Bearer`); else only in words of 20+ chars
    bounded: bool = False  # the match must start at a word boundary


_DIGIT = re.compile(r"[0-9]")
_UPPER = re.compile(r"[A-Z]")
_LOWER = re.compile(r"[a-z]")
_LETTER = re.compile(r"[A-Za-z]")


def _has_digit(value: str) -> bool:
    return _DIGIT.search(value) is not None


def _mixed_case(value: str) -> bool:
    return _UPPER.search(value) is not None and _LOWER.search(value) is not None


def _mixed(value: str) -> bool:
    """Random tokens mix upper case, lower case and digits; words, hex ids and constants do not."""
    return _has_digit(value) and _mixed_case(value)


def _digit_and_letter(value: str) -> bool:
    return _has_digit(value) and _LETTER.search(value) is not None


def _basic_credentials(value: str) -> bool:
    """``Basic`` is followed by base64 of ``user:password``; prose ("Basic authentication") does not decode."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    user, sep, password = decoded.partition(":")
    return bool(sep) and bool(password) and decoded.isprintable()


def _typed_value(value: str) -> bool:
    """A password typed on a command line or in a URL, not a variable or a placeholder (`$PASS`, `<pw>`)."""
    value = value.strip("'\"")
    return bool(value) and not value.startswith("$") and not any(c in value for c in "<>{}[]*") and "$(" not in value \
        and value.lower() not in (
        "pass", "pwd", "password", "token", "secret", "test", "x", "xxx", "passwd", "mypassword", "yourpassword",
        "repo")  # `github://org:repo@` (fsspec's documented form), `smb://myuser:mypassword@host` in docs


# A token starts at a word boundary: the character before it is not a letter, digit, `_` or `-` (a JSON escape
# such as `\n` in front still counts as a break). Checked after the match so that each pattern starts with its
# literal prefix, which the regex engine scans for quickly.
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_E = r"(?![A-Za-z0-9])"  # right boundary for fixed-length alphabets


def _tok(kind: str, regex: str, triggers: tuple[str, ...], validate: Callable[[str], bool] | None = None) -> Rule:
    return Rule(kind, re.compile(regex), triggers, validate, bounded=True)


# Token rules, in order: a later rule never sees what an earlier one replaced.
RULES: tuple[Rule, ...] = (
    Rule(
        "private_key",
        re.compile(
            r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----"
            r"(?:(?:[A-Za-z0-9+/=\s:,.]|-(?!----)|\\[nr]){0,20000}?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----"
            r"|(?:[A-Za-z0-9+/=\s]|\\[nr]){8,})",
        ),
        ("-----BEGIN",),
        anywhere=True,
    ),
    # AI providers
    _tok("anthropic_key", r"sk-ant-[A-Za-z0-9_\-]{20,}", ("sk-ant-",)),
    _tok("openai_key", r"sk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_\-]{20,}", ("sk-",), _has_digit),
    _tok("groq_key", r"gsk_[A-Za-z0-9]{40,}", ("gsk_",)),
    _tok("xai_key", r"xai-[A-Za-z0-9]{60,}", ("xai-",)),
    _tok("huggingface_token", r"(?:hf_[A-Za-z0-9]{30,}|api_org_[A-Za-z]{34})" + _E, ("hf_", "api_org_"),
         _mixed_case),
    _tok("replicate_token", r"r8_[A-Za-z0-9]{30,}", ("r8_",), _has_digit),
    _tok("perplexity_key", r"pplx-[A-Za-z0-9]{40,}", ("pplx-",)),
    _tok("tavily_key", r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{30,}", ("tvly-",)),
    _tok("langsmith_key", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}", ("lsv2_",)),
    # clouds
    _tok(
        "aws_access_key",
        r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b",
        ("A3T", "AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"),
    ),
    _tok("aws_bedrock_key", r"(?:ABSK[A-Za-z0-9+/]{100,}={0,2}|bedrock-api-key-[A-Za-z0-9+/=%_\-]{20,})",
         ("ABSK", "bedrock-api-key-")),
    Rule(
        "aws_secret_key",  # after its name, separated by anything short: `=`, `:`, spaces, a table's `|`
        re.compile(
            r"(?i)(?P<keep>(?:aws_?secret_?(?:access_?)?key|secret_?access_?key|secret access key)"
            r"(?:[ \t]*\[[^\]\n]{0,12}\])?[\"'`\s:=|,>]{1,12})(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"
        ),
        ("ecret", "ECRET"),
        anywhere=True,
    ),
    _tok("gcp_api_key", r"AIza[0-9A-Za-z_\-]{35}", ("AIza",)),
    _tok("google_oauth", r"(?:GOCSPX-[A-Za-z0-9_\-]{24,}|ya29\.[A-Za-z0-9_\-]{30,})", ("GOCSPX-", "ya29.")),
    Rule(
        "azure_key",
        re.compile(r"(?P<keep>\b(?:AccountKey|SharedAccessKey|SharedSecret)=)(?P<secret>[A-Za-z0-9+/]{20,}={0,2})"),
        ("AccountKey=", "SharedAccessKey=", "SharedSecret="),
    ),
    _tok("azure_key", r"(?<![\w~.\-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![\w~.\-])", ("Q~",),
         lambda v: len(set(v[6:])) > 8),  # not `bP88Q~xxxxxxxx…`
    Rule("azure_key", re.compile(r"(?P<keep>[?&]sig=)(?P<secret>[A-Za-z0-9%+/=]{20,})"), ("sig=",)),
    _tok("digitalocean_token", r"do[opr]_v1_[a-f0-9]{64}", ("dop_v1_", "doo_v1_", "dor_v1_")),
    _tok("alibaba_key", r"LTAI[A-Za-z0-9]{20}" + _E, ("LTAI",)),
    _tok("cloudflare_key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", ("v1.0-",)),
    _tok("heroku_key", r"HRKU-AA[A-Za-z0-9_\-]{58}", ("HRKU-",)),
    _tok("flyio_token", r"(?:fo1_[\w\-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})", ("fo1_", "fm1", "fm2")),
    _tok("supabase_key", r"(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_\-]{20,})", ("sbp_", "sb_secret_")),
    _tok("planetscale_token", r"pscale_(?:tkn|pw|oauth)_[\w=.\-]{32,}", ("pscale_",)),
    _tok("databricks_token", r"dapi[a-f0-9]{32}(?:-\d)?" + _E, ("dapi",)),
    # code hosting, CI, package registries
    _tok("github_token", r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
         ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    _tok("gitlab_token",
         r"(?:gl(?:pat|dt|ft|rt|cbt|imt|agent|oas|ptt|soat|ffct)-[A-Za-z0-9_\-.]{20,}|GR1348941[\w\-]{20,})",
         ("glpat-", "gldt-", "glft-", "glrt-", "glcbt-", "glimt-", "glagent-", "gloas-", "glptt-", "glsoat-", "glffct-",
          "GR1348941")),
    Rule("gitlab_token", re.compile(r"(?P<keep>_gitlab_session=)(?P<secret>[0-9a-z]{32})"), ("_gitlab_session=",)),
    _tok("npm_token", r"npm_[A-Za-z0-9]{36}" + _E, ("npm_",)),
    _tok("pypi_token", r"pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[\w\-]{50,}", ("pypi-",)),
    _tok("rubygems_token", r"rubygems_[a-f0-9]{48}", ("rubygems_",)),
    _tok("clojars_token", r"CLOJARS_[a-z0-9]{60}", ("CLOJARS_",)),
    _tok("artifactory_token", r"(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})\b", ("AKCp", "cmVmd")),
    _tok("pulumi_token", r"pul-[a-f0-9]{40}" + _E, ("pul-",)),
    _tok("vault_token", r"(?:hv[sb]\.[\w\-]{90,}|[a-z0-9]{14}\.atlasv1\.[\w=\-]{60,})", ("hvs.", "hvb.", "atlasv1")),
    _tok("doppler_token", r"dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,}", ("dp.pt.", "dp.st.", "dp.ct.", "dp.sa.", "dp.scim.", "dp.audit.")),
    _tok("onepassword_token",
         r"(?:ops_eyJ[A-Za-z0-9+/]{200,}={0,3}|\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})"
         r"-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b)",
         ("ops_eyJ", "A3-")),
    _tok("age_secret_key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", ("AGE-SECRET-KEY-1",)),
    _tok("sentry_token", r"sntry[us]_[A-Za-z0-9+/=_]{60,}", ("sntrys_", "sntryu_")),
    _tok("grafana_token",
         r"(?:glc_[A-Za-z0-9+/]{32,}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|eyJrIjoi[A-Za-z0-9]{70,}={0,3})",
         ("glc_", "glsa_", "eyJrIjoi")),
    _tok("atlassian_token", r"ATATT3[A-Za-z0-9_\-=]{150,}", ("ATATT3",)),
    _tok("linear_key", r"lin_api_[A-Za-z0-9]{40}", ("lin_api_",)),
    _tok("notion_token", r"ntn_\d{11}[A-Za-z0-9]{35}", ("ntn_",)),
    _tok("postman_key", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", ("PMAK-",)),
    _tok("dynatrace_token", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", ("dt0c01.",)),
    _tok("prefect_key", r"pnu_[A-Za-z0-9]{36}", ("pnu_",)),
    _tok("readme_key", r"rdme_[a-z0-9]{70}", ("rdme_",)),
    _tok("infracost_key", r"ico-[A-Za-z0-9]{32}" + _E, ("ico-",)),
    _tok("openshift_token", r"sha256~[\w\-]{43}", ("sha256~",)),
    _tok("harness_key", r"(?:pat|sat)\.[\w\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}", ("pat.", "sat.")),
    # messaging, mail, payments, commerce
    _tok("slack_token",
         r"(?:xox[abeoprs]-[A-Za-z0-9\-]{10,}|xoxe\.xox[bp]-\d-[A-Za-z0-9]{40,}|xapp-\d-[A-Za-z0-9\-]{20,})",
         ("xox", "xapp-"), _has_digit),
    _tok("slack_webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{20,}", ("hooks.slack.com",)),
    _tok("discord_webhook", r"discord(?:app)?\.com/api/webhooks/\d+/[\w\-]{60,}", ("discord",)),
    _tok("teams_webhook", r"[a-z0-9]+\.webhook\.office\.com/webhookb2/[\w@\-/]{60,}", ("webhook.office.com",)),
    _tok("telegram_token", r"(?<![\w:])\d{8,10}:AA[A-Za-z0-9_\-]{33}" + _E, (":AA",)),
    _tok("sendgrid_key", r"SG\.[\w\-]{16,32}\.[\w\-]{30,64}", ("SG.",)),
    _tok("sendinblue_key", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", ("xkeysib-",)),
    _tok("mailgun_key", r"key-[0-9a-f]{32}" + _E, ("key-",), _has_digit),
    _tok("mailchimp_key", r"[0-9a-f]{32}-us\d{1,2}" + _E, ("-us",)),
    _tok("twilio_key", r"SK[0-9a-fA-F]{32}" + _E, ("SK",), _digit_and_letter),
    _tok("stripe_key", r"(?:(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{24,})",
         ("_live_", "_test_", "_prod_", "whsec_")),
    _tok("square_token", r"(?:sq0(?:atp|csp)-[\w\-]{22,}|EAAA[\w\-]{22,60})", ("sq0", "EAAA")),
    _tok("shopify_token", r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}", ("shpat_", "shpss_", "shpca_", "shppa_")),
    _tok("shippo_token", r"shippo_(?:live|test)_[a-fA-F0-9]{40}", ("shippo_",)),
    _tok("duffel_token", r"duffel_(?:test|live)_[A-Za-z0-9_\-=]{43}", ("duffel_",)),
    _tok("easypost_key", r"EZ[AT]K[A-Za-z0-9]{54}\b", ("EZAK", "EZTK")),
    _tok("flutterwave_key", r"FLWSECK(?:_TEST)?-[a-hA-H0-9]{12,32}(?:-X)?", ("FLWSECK",)),
    _tok("newrelic_key", r"NR(?:AK|II)-[A-Za-z0-9_\-]{27,32}", ("NRAK-", "NRII-")),
    _tok("frameio_token", r"fio-u-[\w=\-]{64}", ("fio-u-",)),
    # generic shapes
    _tok("jwt", r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{10,}", ("eyJ",)),
    Rule(
        "bearer_token",
        re.compile(r"(?P<keep>[Bb](?<![A-Za-z0-9_][Bb])earer\s+)(?P<secret>[A-Za-z0-9\-._~+/]{16,}=*)"),
        ("earer",),
        _has_digit,
        anywhere=True,
    ),
    Rule(
        "basic_auth",
        re.compile(r"(?P<keep>[Bb](?<![A-Za-z0-9_][Bb])asic\s+)(?P<secret>[A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])"),
        ("asic",),
        _basic_credentials,
        anywhere=True,
    ),
    Rule(  # docker's config.json: "auth": base64 of user:password
        "basic_auth",
        re.compile(r"(?P<keep>\"auth\"[ \t]*:[ \t]*\")(?P<secret>[A-Za-z0-9+/]{8,}={0,2})(?=\")"),
        ('"auth"',),
        _basic_credentials,
        anywhere=True,
    ),
    Rule(  # `Authorization: <token>` / `Token <token>` (the Bearer and Basic schemes have their own rules)
        "auth_header",
        re.compile(
            r"(?i)(?P<keep>\bauthorization\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?(?!bearer\b|basic\b|negotiate\b)"
            r"(?:(?:token|api-token|apikey|sso-key)[ \t]+)?)(?P<secret>[\w~+/.=\-]{12,})(?![\w~+/.=\-(])"
        ),
        ("uthorization", "UTHORIZATION"),
        _has_digit,
        anywhere=True,
    ),
    Rule(  # scheme://user:password@host, the user may be empty (redis://:pw@host); the last @ ends the password
        "url_password",
        re.compile(r"(?P<keep>://[^\s:/@\"'<>]*:)(?P<secret>[^\s/\"'<>]{1,300})(?=@[^\s@/\"'<>]*)"),
        ("://",),
        _typed_value,
        anywhere=True,
    ),
    Rule(  # curl -u user:password (gitleaks curl-auth-user), in a text that runs curl; not uid:gid
        "cli_password",
        re.compile(r"(?P<keep>-(?<=\s-)(?:u|-user)(?:=|[ \t]+)[\"']?[^\s:\"']*:)(?P<secret>[^\s\"']{3,300})"),
        ("curl",),
        lambda v: _typed_value(v) and not v.isdigit(),
        anywhere=True,
    ),
    Rule(  # password options of database and login clients: mysql -psecret, sshpass -p pw, redis-cli -a pw, ...
        "cli_password",
        re.compile(
            r"(?P<keep>(?:(?:mysql|mariadb)[\w\-]*[^\n|;&]{0,120}?[ \t]-p"
            r"|(?:sshpass|docker[ \t]+login|az[ \t]+login|mongo(?:sh|dump|restore|import|export)?)\b[^\n|;&]{0,120}?[ \t]-p[ \t]+"
            r"|redis-cli\b[^\n|;&]{0,120}?[ \t]-a[ \t]+|sqlcmd\b[^\n|;&]{0,120}?[ \t]-P[ \t]*"
            r"|-pass(?:in|out)[ \t]+pass:))"
            r"(?P<secret>'[^'\n]{1,300}'|\"[^\"\n]{1,300}\"|[^\s'\"-][^\s'\"]{0,300})"
        ),
        ("mysql", "mariadb", "sshpass", "docker login", "az login", "mongo", "redis-cli", "sqlcmd", "-passin", "-passout"),
        _typed_value,
        anywhere=True,
    ),
)


def _replace(rule: Rule, counter: list[int]) -> Callable[[re.Match[str]], str]:
    groups = rule.pattern.groupindex

    def sub(match: re.Match[str]) -> str:
        start = match.start()
        if rule.bounded and start and match.string[start - 1] in _WORD_CHARS and not (
                start > 1 and match.string[start - 2] == "\\" and match.string[start - 1] in "nrt"):
            return match.group(0)
        secret = match.group("secret") if "secret" in groups else match.group(0)
        if secret.startswith("[REDACTED:") or rule.validate is not None and not rule.validate(secret):
            return match.group(0)
        counter[0] += 1
        keep = match.group("keep") if "keep" in groups else ""
        return f"{keep}[REDACTED:{rule.kind}]"

    return sub


def _trie(words: list[str]) -> str:
    """One alternation with shared prefixes factored out, so the scan tries few branches per position."""
    tree: dict = {}
    for word in words:
        node = tree
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict) -> str:
        alts = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        if "" in node:  # a trigger ends here: the shorter trigger is enough
            return ""
        return body

    return build(tree)


_ALL_TRIGGERS = sorted({t for r in RULES if not r.anywhere for t in r.triggers})
_TRIGGER_PATTERN = _trie(_ALL_TRIGGERS)  # compiled for bytes below (``_TRIGGER_BYTES``); as text only by redact_unscreened
# The scan reports the shortest trigger at a position (`sk-` for `sk-ant-`): a rule also runs on a found
# trigger that is a prefix of one of its own.
_RULE_TRIGGERS = tuple(
    frozenset(s for s in _ALL_TRIGGERS if any(t.startswith(s) for t in rule.triggers)) for rule in RULES
)
_MIN_TOKEN = 20  # every vendor token is at least this long (an AWS key id is exactly 20)
_RULES_BY_TRIGGER: dict[str, tuple[int, ...]] = {
    t: tuple(i for i, triggers in enumerate(_RULE_TRIGGERS) if t in triggers and not RULES[i].anywhere)
    for t in _ALL_TRIGGERS
}
_RULES_BY_TRIGGER_BYTES = {t.encode(): rules for t, rules in _RULES_BY_TRIGGER.items()}
_AWS_SECRET_RULE = next(i for i, rule in enumerate(RULES) if rule.kind == "aws_secret_key")  # runs on _AWS_CONTEXT
# The rules whose triggers count anywhere in the text, by trigger (the AWS context's cues run no rule of theirs).
_RULES_BY_CUE: dict[str, tuple[int, ...]] = {}
for _i, _rule in enumerate(RULES):
    if _rule.anywhere and _i != _AWS_SECRET_RULE:
        for _t in _rule.triggers:
            _RULES_BY_CUE[_t] = (*_RULES_BY_CUE.get(_t, ()), _i)
_AWS_CUES = ("ecret", "ECRET", "AKIA", "ASIA")  # one is in every text the AWS context is looked for in
_CUE_TRIGGERS = (*_RULES_BY_CUE, *_AWS_CUES)
# Screening: the exact triggers are looked for only behind an anchor found in the lower-case text (fewer scans
# of every text). An anchor is there whenever one of its triggers could change anything: it is the trigger
# lower-cased, or a part of every match of the trigger's rule (`-p`/`-a`: each client-password match holds
# `-p`, `-P`, `-a` or `-pass…`; `auth`: both `Authorization` and docker's `"auth"` hold it). Triggers
# without an anchor here are looked for directly.
_DB_TRIGGERS = RULES[next(i for i, r in enumerate(RULES) if "mysql" in r.triggers)].triggers
_ANCHORS: dict[str, tuple[str, ...]] = {
    "auth": ('"auth"', "uthorization", "UTHORIZATION"),
    "-p": _DB_TRIGGERS,
    "-a": _DB_TRIGGERS,
    "ecret": ("ecret", "ECRET"),
    "akia": ("AKIA",),
    "asia": ("ASIA",),
}
_DIRECT_CUES = tuple(t for t in _CUE_TRIGGERS if not any(t in ts for ts in _ANCHORS.values()))
_ANCHOR_TEXT = tuple((a, tuple((t, t) for t in ts)) for a, ts in _ANCHORS.items())
# The triggers in the words of 20+ characters, found in the text's bytes (``_view``; an ASCII text encoded):
# the words are runs of non-space bytes (a class string: whitespace ``b" "``, every other byte ``b"x"``, found by
# substring search), and since no trigger holds a separator (`/`, quotes, brackets…: ``_SEGMENT``) nor a
# non-ASCII character (a ``?`` in the view), each word is cut there and each distinct piece scanned once — the
# same triggers as the trie over the whole words (a path's folders repeat; the trie pays a match attempt at most
# letters, so fewer letters is what counts). A word of the view holding whitespace beyond ASCII (`\u3000`, NBSP…:
# a ``?`` there) is split again as ``str.split`` splits it.
_TRIGGER_CHARS = frozenset("".join(_ALL_TRIGGERS))
_SPACE_CLASS = bytes(32 if chr(i).isspace() else 120 for i in range(128)) + b"x" * 128
_RUN = b"x" * _MIN_TOKEN
_SEGMENT = bytes(32 if i < 128 and chr(i) not in _TRIGGER_CHARS and not chr(i).isalnum() else i for i in range(256))
_TRIGGER_BYTES = re.compile(_TRIGGER_PATTERN.encode())


def _screen_part(trigger: str) -> str:
    """The longest prefix of ``trigger`` that ends in a character other than a lower-case letter (not its first
    alone), else the prefix up to its rarest letter (``_SCREEN_RARITY``) — reversed."""
    last = max((i for i, c in enumerate(trigger) if not c.islower()), default=0)
    if last == 0:  # `-us`: not the `-` alone, which half the pieces hold
        last = max(range(len(trigger)), key=lambda i: (_SCREEN_RARITY.find(trigger[i]), i))
    return trigger[:last + 1][::-1]


# Whether any trigger is in the pieces at all (rarely: a few texts in a hundred), read backwards: the reversed
# trie of the triggers' parts above starts with a capital, a digit or a sign (`_ - . = ~`; four parts with a
# letter: `u-`, `pad`, `csid`, `xox`), which the regex engine skips to; forwards, nearly every lower-case letter
# starts a trigger and costs a try of every branch. A trigger found by the trie holds its part, so nothing the
# trie finds is screened out.
_SCREEN_RARITY = "etaoinsrhldcumfpgwybvkxjqz"  # letters from the most to the least frequent in English text
_TRIGGER_SCREEN = re.compile(_trie(sorted({_screen_part(t) for t in _ALL_TRIGGERS})).encode())
_WIDE_SPACE = re.compile("[\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")  # what str.isspace() says beyond ASCII


def _long_triggers(text: str, view: bytes) -> set[bytes]:
    """The triggers (as bytes) that ``_TRIGGER_PATTERN`` finds in ``text``'s words of 20+ characters; ``view``: the
    text's bytes, one per character."""
    find = view.translate(_SPACE_CLASS).find
    start = find(_RUN)
    words = []
    while start >= 0:
        end = find(b" ", start + _MIN_TOKEN)
        if end < 0:
            end = len(view)
        word = view[start:end]
        if word.find(b"?") >= 0 and _WIDE_SPACE.search(text, start, end):  # split where str.split splits (``find``,
            # not ``in``: see ``_views``)
            words += [w.encode("ascii", "replace") for w in text[start:end].split() if len(w) >= _MIN_TOKEN]
        else:
            words.append(word)
        start = find(_RUN, end)
    if not words:
        return set()
    pieces = b" ".join(set(b" ".join(words).translate(_SEGMENT).split()))
    if _TRIGGER_SCREEN.search(pieces[::-1]) is None:
        return set()
    return set(_TRIGGER_BYTES.findall(pieces))


# ---------------------------------------------------------------------------------------------------------------
# AWS secret access keys without their name next to them (a table, a CSV export, `aws configure list`): a
# 40-character base64 word with upper, lower and digits, in a text that holds an access key id or names the
# secret access key. Git SHAs (hex) and paths (several `/`) are not such words.
# Python's case-insensitive matching folds four non-ASCII letters onto ASCII ones (İ ı → i, ſ → s, Kelvin K → k).
_FOLDS_TO_ASCII = "\u0130\u0131\u017f\u212a"


def _caseless(word: str) -> str:
    """A pattern matching exactly what ``(?i)word`` matches, with each letter as a character class: the regex
    engine scans classes many times faster than it folds case (an IGNORECASE search ran at ~6 MB/s)."""
    out = []
    for char in word:
        if not char.isalpha():
            out.append(re.escape(char))
            continue
        same = dict.fromkeys(char.lower() + char.upper() + _FOLDS_TO_ASCII)
        out.append("[" + "".join(c for c in same if re.fullmatch(re.escape(char), c, re.IGNORECASE)) + "]")
    return "".join(out)


# ``(?i)\b(?:AKIA|ASIA)[A-Z0-9]{16}\b|secret[ _]?access[ _]?key|aws[ _]?secret``, written out caseless.
_ALNUM_CASELESS = "[A-Za-z0-9" + "".join(c for c in _FOLDS_TO_ASCII if re.fullmatch("[A-Z]", c, re.IGNORECASE)) + "]"
_AWS_CONTEXT = re.compile(
    rf"\b(?:{_caseless('AKIA')}|{_caseless('ASIA')}){_ALNUM_CASELESS}{{16}}\b"
    rf"|{_caseless('secret')}[ _]?{_caseless('access')}[ _]?{_caseless('key')}|{_caseless('aws')}[ _]?{_caseless('secret')}"
)
_AWS_SECRET_WORD = re.compile(r"(?<![A-Za-z0-9/+=\\])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


def _aws_secret_word(value: str) -> bool:
    return _mixed(value) and value.count("/") <= 4 and value.count("+") <= 4


# ---------------------------------------------------------------------------------------------------------------
# Secret-sounding names followed by a value. The scan finds a keyword, widens it to the whole name, splits the
# name into words (snake, kebab, dotted and camelCase) and asks: does the name END in a secret word (a few
# harmless suffixes allowed: _PROD, _BASE, _2)? `password_reset_url`, `token_count`, `public_key`, `csrf_token`
# and `max_tokens` do not. Then the value: written as a literal (quoted, or in `.env`/YAML/flag/query form),
# and not a placeholder, a variable, a path or a code expression.

_KEYWORDS = ("pass", "pwd", "secret", "token", "key", "cred", "contrase")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

_PASSWORD_WORDS = frozenset({"password", "passwd", "passwort", "passphrase", "passcode", "pwd", "pass",
                             "contrasena"})
_KEY_PREFIXES = frozenset({"api", "secret", "private", "access", "auth", "account", "service", "master", "signing",
                           "encryption", "subscription", "app", "client", "consumer", "license", "admin", "webhook",
                           "jwt", "session", "storage", "shared", "sas", "deploy"})
_TOKEN_DENY = frozenset({"csrf", "xsrf", "page", "next", "continuation", "cursor", "pagination", "sync", "max", "min",
                         "num", "total", "eos", "bos", "pad", "unk", "sep", "cls", "mask", "special", "input",
                         "output", "prompt", "completion", "cancellation", "cancel", "lexer", "parser", "the",
                         "last", "first", "current", "sort", "stop", "end", "start", "reasoning", "cached"})
_ALLOWED_SUFFIXES = frozenset({"prod", "production", "dev", "development", "staging", "stage", "test", "live",
                               "local", "base", "value", "val", "str", "string", "plain", "plaintext", "raw", "b64",
                               "base64", "hex", "old", "new", "secure", "enc", "v1", "v2", "v3"})
_COMPOUND_ENDS = ("password", "passwd", "passphrase", "secret", "token", "apikey", "secretkey", "privatekey",
                  "accesskey", "authkey", "accountkey")


_NAME_PARTS = re.compile(r"[_.\-]+")


@lru_cache(maxsize=4096)  # a log repeats its names (`api_key`, `max_tokens`) in every tool output
def _name_kind(name: str) -> str | None:
    """``password`` / ``secret`` when the name ends in a secret word (after allowed suffixes), else None."""
    words = [w.lower() for part in _NAME_PARTS.split(name) for w in _CAMEL.findall(part)]
    end = len(words)
    while end and (words[end - 1] in _ALLOWED_SUFFIXES or words[end - 1].isdigit()):
        end -= 1
    if not end:
        return None
    last, before = words[end - 1], words[end - 2] if end >= 2 else ""
    if last in _PASSWORD_WORDS:
        if last == "pass" and end == 1 or last == "pwd" and (end == 1 or before == "old"):
            return None  # `pass` alone is a keyword, $PWD/$OLDPWD are directories
        return "password"
    if last in ("secret", "credential", "credentials", "creds"):
        return "secret"
    if "public" in words[:end] or "publishable" in words[:end]:
        return None  # publicKeyToken, STRIPE_PUBLISHABLE_KEY
    if last == "token":
        return None if before in _TOKEN_DENY else "secret"
    if last == "key":
        return "secret" if before in _KEY_PREFIXES else None
    if last.endswith(_COMPOUND_ENDS):
        return "password" if "pass" in last else "secret"
    return None


_PLACEHOLDER_WORDS = frozenset({
    "true", "false", "none", "null", "nil", "undefined", "yes", "no", "on", "off", "required", "optional", "string",
    "str", "int", "number", "bool", "boolean", "any", "object", "bytes", "secret", "secrets", "password", "token",
    "redacted", "hidden", "masked", "empty", "default", "changeme", "changeit", "example", "placeholder", "xxx",
    "todo", "tbd", "env", "value", "your", "dummy", "test", "testing", "sample", "foo", "bar", "foobar", "admin",
    "user", "username", "private", "public", "here", "unset", "auto", "inherit", "file", "text", "type",
    "include", "omit", "same-origin",  # fetch()'s `credentials:` option
})


def _placeholder(value: str) -> bool:
    low = value.lower()
    if low in _PLACEHOLDER_WORDS or len(set(low)) <= 2:  # `xxxxxxxx`, `********`, `...`
        return True
    if value.startswith(("$", "%", "<", "{", "[", "#", "/", "~/", "./", "../", "!", "&", "*", "@", "(", "\\")):
        return True  # $VAR ${VAR} %s <your-key> {{ secrets.X }} [REDACTED: paths, YAML tags/anchors, @file
    return low.startswith(("your", "process.env", "os.environ", "env.", "secrets.", "http")) or (
        "..." in value or "…" in value or "{{" in value or "${" in value or "***" in value or "xxxx" in low
        or value.endswith(("()", "(", "]"))
    )


_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_WORDS = re.compile(r"[A-Za-z]+(?:[-_ ]+[A-Za-z]+)*")  # `hf_oauth__refresh_token` is words too
_CASE_CHANGE = re.compile(r"[a-z][A-Z]")


def _value_is_secret(value: str, kind: str, quoted: bool, literal: bool) -> bool:
    """``literal``: the form says the value is data (quoted, ``.env`` line, YAML), not a variable name; other
    forms (a keyword argument, a flag, a header, a comparison) must hold a value that looks random."""
    if not any(c.isalnum() for c in value) or _placeholder(value) or _DOTTED.fullmatch(value):
        return False  # `token = settings.API_TOKEN`
    if kind == "password":
        if len(value) < 4 or (not quoted and value.isdigit() and len(value) < 6):
            return False
        if " " in value and (not quoted or value.count(" ") > 4):
            return False
    elif len(value) < 6 or " " in value or value.isdigit() and len(value) < 8:
        return False
    if _WORDS.fullmatch(value):  # only letters (and - _ space): a word, a name, a passphrase
        low = value.lower()
        if kind != "password" and not _IDENTIFIER.fullmatch(value) or any(kw in low for kw in _KEYWORDS):
            return False  # "X-Xet-Access-Token", "my-client-secret", "fal-ai-api-key"
        if not literal:
            return False  # `token=token_value`, `--password options`
        if _IDENTIFIER.fullmatch(value) and ("_" in value or _CASE_CHANGE.search(value)):
            return False  # a snake_case / camelCase variable even where a literal is expected
    elif not literal and not (_has_digit(value) and any(c.isalpha() for c in value) and len(value) >= 6) \
            or not literal and "*" in value:  # `token = 1*tchar` (a grammar), a glob
        return False
    return True


_QUOTED = (
    r"(?P<at>@)?(?:(?P<q>\\?\")(?P<dq>(?:[^\"\\\n]|\\[^\"\n]){0,300})\\?\"|'(?P<sq>[^'\n]{0,300})'|`(?P<bq>[^`\n]{0,300})`)"
)
_TAIL = re.compile(
    r"(?P<close>(?:\\?[\"'`])?\]?)"  # end of a quoted key ("password": / ['password'])
    r"(?P<op>(?:[ \t]*:[ \t]*[A-Za-z_][\w.\[\]]*[ \t]+(?==[^=])|[ \t]+(?:string|String|str)[ \t]*(?==[^=]))?"  # a type
    # (`key: str = `, Go `key string = `), then the operator
    r"[ \t]*(?:=>|:{1,3}=|\?=|\|\|=|\.=|===?|!==?|=|:(?![:/])|(?<=[\"'`]),)[ \t]*|[ \t]+)"
    r"(?:" + _QUOTED + r"|(?P<bare>[^\s\"'`,;()\[\]{}<>|&]{1,300}))"
)
_LINE_START = re.compile(r"(?:^|\n)[ \t]*(?:export[ \t]+|set[ \t]+|setx[ \t]+|ENV[ \t]+|ARG[ \t]+|-[ \t]+|\$env:)?\"?$")
_LINE_END = re.compile(r"[\"']?[ \t]*(?:#.*)?(?:\n|$)")
_ESCAPE = re.compile(r"\\[nrt\"]")  # `\n` inside a JSON string ends an unquoted value
_COMPARE = frozenset({"==", "===", "!=", "!=="})


def _keyword_spans(text: str, lower: str | bytes, keywords: list[str]) -> list[tuple[int, int, str]]:
    """(start, end, kind) of each secret value written after a secret-sounding name; ``keywords``: those of
    ``_KEYWORDS`` that occur in ``lower`` (the lower-case text, or its ASCII view: see ``_view``)."""
    spans: list[tuple[int, int, str]] = []
    done = 0  # names already looked at end before this offset
    size = len(text)
    as_bytes = isinstance(lower, bytes)
    hits = sorted({i for kw in keywords for i in _find_all(lower, kw.encode() if as_bytes else kw)})
    for hit in hits:
        if hit < done:
            continue
        start, end = hit, hit
        while start > 0 and text[start - 1] in _NAME_CHARS:
            start -= 1
        while end < size and text[end] in _NAME_CHARS:
            end += 1
        done = end
        while end > start and text[end - 1] == ".":
            end -= 1  # sentence end
        dashes = len(text[start:end]) - len(text[start:end].lstrip("-"))
        name = text[start + dashes:end]
        kind = _name_kind(name) if name else None
        if kind is None:
            continue
        tail = _TAIL.match(text, end)
        if tail is None:
            continue
        op = tail.group("op").strip()
        if op[:1] == ":" and len(op) > 1 and op[1] not in "=:":
            op = "="  # `api_key: str = "..."`: typed assignment
        elif op[-1:] == "=" and op[:1].isalpha():
            op = "="  # Go `apiKey string = "..."`
        before = text[start - 1] if start else "\n"
        flag = dashes >= 1 and before in " \t\n'\""
        if not op and not flag:
            continue  # `password hunter2` is prose; `--password hunter2` is a flag
        if op == "," and tail.group("bare") is not None:
            continue  # `("token", value)`: only a quoted literal after a quoted name
        if tail.group("bare") is None:
            group = next(g for g in ("dq", "sq", "bq") if tail.group(g) is not None)
            value, vstart = tail.group(group), tail.start(group)
            quoted, literal = True, op not in _COMPARE and op != ","  # `("TOKEN", "x")` may be a list of words
        else:
            value, vstart = _ESCAPE.split(tail.group("bare"), 1)[0].rstrip(".:"), tail.start("bare")
            quoted = False
            after = text[vstart + len(value):vstart + len(value) + 1]
            if after in ("(", "[") or flag and value.startswith("-"):
                continue  # `token = make_token(...)`, `--password --verbose`
            line_start = _LINE_START.search(text, max(0, start - 40), start) is not None
            line_end = _LINE_END.match(text, vstart + len(value)) is not None
            spaced = tail.group("op") != op  # `name = value` is code; `.env` writes NAME=value
            env_name = name.upper() == name and any(c.isalpha() for c in name)
            if op in _COMPARE:
                literal = False
            elif line_start and line_end and (op == ":" or not spaced or env_name):
                literal = True  # .env, YAML, properties: the rest of the line is the value
            elif op in ("=", ":=") and (env_name or before in "?&"):
                literal = True  # PGPASSWORD=x psql, docker run -e DB_PASSWORD=x, ?access_token=x
            elif flag or op in ("=", ":=") or op == ":" and before in "'\"" and not tail.group("close"):
                literal = False  # --password x, f(password=x), -H 'X-Api-Key: x'
            else:
                continue  # `token: the word` in prose, `{ password: pw }` in code
        done = max(done, vstart + len(value))  # a keyword inside this value is not a name
        if value.startswith("[REDACTED:") or not _value_is_secret(value, kind, quoted, literal):
            continue
        spans.append((vstart, vstart + len(value), kind))
    return spans


def _find_all(haystack: str | bytes, needle: str | bytes) -> list[int]:
    out, i = [], haystack.find(needle)
    while i >= 0:
        out.append(i)
        i = haystack.find(needle, i + 1)
    return out


def _apply(text: str, spans: list[tuple[int, int, str]]) -> str:
    parts, last = [], 0
    for start, end, kind in sorted(spans):
        if start < last:
            continue
        parts.append(text[last:start])
        parts.append(f"[REDACTED:{kind}]")
        last = end
    parts.append(text[last:])
    return "".join(parts)


_ASCII_LOWER = {c: c + 32 for c in range(65, 91)}


def _lower(text: str) -> str:
    """Lower case with the same length as ``text`` (offsets are shared); a few letters grow in ``str.lower``."""
    lower = text.lower()
    return lower if len(lower) == len(text) else text.translate(_ASCII_LOWER)


def redact(text: str) -> tuple[str, int]:
    """Replace secrets in ``text``; returns the new text and how many were replaced."""
    if not text:
        return text, 0
    text, labelled = redact_labelled(text)
    cues = _cues(text)
    if cues is None:
        return text, labelled  # no `key`, `token` or `secret` either: nothing for redact_stated
    text, count = _redact_cued(text, *cues)
    text, stated = redact_stated(text)
    return text, count + labelled + stated


def _view(text: str) -> tuple[str | bytes, str | bytes]:
    """The text as the cue scans read it, and its lower case. Every trigger, anchor and keyword is ASCII, so a
    text holding other characters is read as its ASCII view — one byte per character (offsets are shared), each
    other character a ``?`` (in no trigger) — which Python lowers and scans without its Unicode tables (most
    tool outputs hold one: the `…` of a cut middle, CJK, emoji). The Kelvin sign lowers to an ASCII ``k``: a
    text holding it is read as text."""
    if text.isascii():
        return text, text.lower()
    if "\u212a" in text:
        return text, _lower(text)
    view = text.encode("ascii", "replace")
    return view, view.lower()


def _views(text: str) -> tuple[str, str, bytes]:
    """``_view`` as text, and the bytes ``_long_triggers`` reads. The scans for the cues test ``needle in str``: on
    bytes, ``in`` first tries the needle as an integer and formats a TypeError for it each time (8 % of the
    redaction's cost was those messages); an ASCII view decodes back to text at memory speed."""
    view, lower = _view(text)
    if isinstance(view, bytes):
        return view.decode("ascii"), lower.decode("ascii"), view  # type: ignore[union-attr]
    return view, lower, text.encode("ascii", "replace")  # type: ignore[return-value]


def _cues(text: str) -> tuple[frozenset[str], tuple[int, ...], str, list[str]] | None:
    """What the rules look for, each found by a C-level substring scan: the anywhere triggers present that could
    change anything, the token rules whose trigger is in a word of 20+ characters, the lower-case view and the
    keywords in it. None when there is none of them: no rule could change the text (most messages)."""
    view, lower, raw = _views(text)
    keywords = [kw for kw in _KEYWORDS if kw in lower]
    found = [t for t in _DIRECT_CUES if t in view]
    for anchor, triggers in _ANCHOR_TEXT:
        if anchor in lower:
            found += [t for t, needle in triggers if needle in view]
    present = _long_triggers(text, raw) if len(text) >= _MIN_TOKEN else ()  # no word of 20+ in a shorter text
    if not found and not present and not keywords:
        return None
    return frozenset(found), tuple({i for t in present for i in _RULES_BY_TRIGGER_BYTES[t]}), lower, keywords


def redact_unscreened(text: str) -> tuple[str, int]:
    """``redact`` without the screening by ``_cues``: every check made in full (what the screening must never
    change; the tests compare the two)."""
    if not text:
        return text, 0
    text, labelled = redact_labelled(text)
    long_words = [w for w in text.split() if len(w) >= _MIN_TOKEN]
    present = set(re.findall(_TRIGGER_PATTERN, " ".join(long_words)))
    lower = _lower(text)
    text, count = _redact_cued(text, frozenset(t for t in _CUE_TRIGGERS if t in text),
                               tuple({i for t in present for i in _RULES_BY_TRIGGER[t]}), lower,
                               [kw for kw in _KEYWORDS if kw in lower])
    text, stated = redact_stated(text)
    return text, count + labelled + stated


def _redact_cued(text: str, found: frozenset[str], token_rules: tuple[int, ...], lower: str | bytes,
                 keywords: list[str]) -> tuple[str, int]:
    """``token_rules``: the token rules whose trigger is in a word of 20+ characters (``_long_triggers``)."""
    counter = [0]
    aws_context = not found.isdisjoint(_AWS_CUES) and bool(
        _AWS_CONTEXT.search(text))  # looked for before the key id itself is replaced
    todo = set(token_rules)
    todo.update([i for t in found for i in _RULES_BY_CUE.get(t, ())])
    if aws_context:  # the secret key's name is what _AWS_CONTEXT looks for
        todo.add(_AWS_SECRET_RULE)
    for i in sorted(todo):
        text = RULES[i].pattern.sub(_replace(RULES[i], counter), text)
    if aws_context:
        spans = [(m.start(), m.end(), "aws_secret_key") for m in _AWS_SECRET_WORD.finditer(text)
                 if _aws_secret_word(m.group())]
        if spans:
            counter[0] += len(spans)
            text = _apply(text, spans)
    if counter[0]:  # replaced: `[REDACTED:github_token]` holds keywords of its own
        _, lower, _ = _views(text)
        keywords = [kw for kw in _KEYWORDS if kw in lower]
    spans = _keyword_spans(text, lower, keywords) if keywords else []
    if spans:
        counter[0] += len(spans)
        text = _apply(text, spans)
    return text, counter[0]
