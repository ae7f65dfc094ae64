"""Secret redaction: each kind is caught, only the secret part is replaced, ordinary text survives."""

from __future__ import annotations

import pytest

from wwt.redact import redact

# Fake credentials with the real shapes (none of these are live).
SECRETS = [
    ("aws_access_key", "export AWS_KEY_ID is AKIAIOSFODNN7EXAMPLE ok", "AKIAIOSFODNN7EXAMPLE"),
    ("aws_secret_key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
    ("gcp_api_key", "key=AIzaSyA-1234567890abcdefghijklmnopqrstu&q=x", "AIzaSyA-1234567890"),
    ("openai_key", "OPENAI: sk-proj-abcDEF1234567890abcdef_ghij-klmnOPQ", "sk-proj-abcDEF"),
    ("openai_key", "old key sk-abcdefghij1234567890ABCDEFGHIJ0123456789abcd", "sk-abcdefghij12"),
    ("anthropic_key", "use sk-ant-api03-abcdefghijklmnop1234567890-xyzXYZ please", "sk-ant-api03"),
    ("github_token", "token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB", "ghp_abcdef"),
    ("github_token", "gho_abcdefghijklmnopqrstuvwxyz0123456789AB", "gho_abcdef"),
    ("github_token", "ghs_abcdefghijklmnopqrstuvwxyz0123456789AB", "ghs_abcdef"),
    ("github_token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github_pat_11"),
    ("gitlab_token", "glpat-abcdefghij1234567890", "glpat-abcdef"),
    ("slack_token", "xoxb-1234567890-0987654321-abcdefghijklmnop", "xoxb-1234"),
    ("stripe_key", "stripe sk_live_51HxAbCdEfGhIjKlMnOp here", "sk_live_51Hx"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "eyJhbGci"),
    ("bearer_token", "curl -H 'Authorization: Bearer abcdef1234567890abcdef'", "abcdef1234567890abcdef"),
    ("url_password", "DATABASE_URL=postgres://app:Sup3rSecret@db.internal:5432/shop", "Sup3rSecret"),
    ("env_secret", "DB_PASSWORD=hunter2hunter2", "hunter2hunter2"),
    ("env_secret", "export API_KEY='abc123def456'", "abc123def456"),
    ("env_secret", "GITHUB_TOKEN: abcdef123456", "abcdef123456"),
    ("private_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "MIIEow"),
    ("private_key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n(truncated", "b3BlbnNz"),
]


@pytest.mark.parametrize(("kind", "text", "secret"), SECRETS, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(SECRETS)])
def test_secret_kinds_are_redacted(kind, text, secret):
    out, count = redact(text)
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out
    assert count >= 1


def test_context_is_kept_around_the_secret():
    assert redact("Authorization: Bearer abcdef1234567890abcdef")[0] == "Authorization: Bearer [REDACTED:bearer_token]"
    assert redact("see https://bob:pa55word@git.example.com/repo.git")[0] == (
        "see https://bob:[REDACTED:url_password]@git.example.com/repo.git"
    )
    assert redact("DB_PASSWORD=hunter2hunter2 # prod")[0] == "DB_PASSWORD=[REDACTED:env_secret] # prod"


def test_count_is_per_secret():
    text = "AKIAIOSFODNN7EXAMPLE and AKIAI44QH8DHBEXAMPLE and glpat-abcdefghij1234567890"
    assert redact(text)[1] == 3


@pytest.mark.parametrize(
    "text",
    [
        "session 0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f at commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "the bearer of bad news arrived; token budget is 4096",
        "MAX_TOKENS=100000\nTOKEN_LIMIT=4096\nUSE_TOKEN=true\nPASSWORD=$DB_PASS",
        "API_KEY = os.environ['API_KEY']\nSECRET_KEY = settings.get('secret')",
        "def get_password(self): return self._password  # password_hash check",
        "http://localhost:8080/path https://user@host/x ssh://git@github.com/org/repo",
        "task-runner-version-12345678 and sk-learn is not a thing, skip_live_reload",
        "AIza alone, ghp_ alone, xoxb- short, eyJ not a jwt",
        "한국어 문장에는 비밀이 없습니다. 토큰 사용량 1234",
        "",
    ],
)
def test_ordinary_text_is_untouched(text):
    assert redact(text) == (text, 0)
