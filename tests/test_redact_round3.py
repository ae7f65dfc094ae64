"""Secrets the first catalogue let through (issue 24's held-out kinds), and ordinary text it must not touch.

Inputs are written from each format's own documentation, not from the rules: kubeconfig's ``users[].user``
fields (kubectl docs: ``client-key-data`` is the base64 PEM private key, ``client-certificate-data`` the public
certificate), PuTTY's ``.ppk`` layout (PuTTY manual, appendix C: ``PuTTY-User-Key-File-2/3``, ``Public-Lines``,
``Private-Lines``, ``Private-MAC``), the Apache ``htpasswd`` manual (``-b``: the password is taken from the
command line), RFC 6265 ``Cookie``/``Set-Cookie`` headers, Discord's bot token (base64 of the bot's numeric id,
a timestamp part, an HMAC part), and how Korean and English speakers state a password in a chat."""

from __future__ import annotations

import base64

import pytest

from wwt.redact import redact, redact_unscreened

DISCORD_ID = base64.urlsafe_b64encode(b"1234567890123456789").decode().rstrip("=")
DISCORD_TOKEN = f"{DISCORD_ID}.GbX4Zq.d8Jk2mQpVz7Lr0TnYwA5uH3sEfC9iB1oKxN4"
PPK_PRIVATE = "AAAAgQCqGKukO1De7zhZj6+H0qtjTkVxwTCpvKe4eCZ0FPqri0cb2JZfXJ/DgYSF6vUp\nwmJG8wVQZKjeGcjDOL5UlsuusFncCzWBQ7RKNUSesmQRMSGkVb1/3j+skZ6UtW+5u09lHNsj6tQ5\n"
PPK = (
    "PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: deploy@build\nPublic-Lines: 2\n"
    "AAAAB3NzaC1yc2EAAAADAQABAAAAgQC7vbqajDhA2Kj9pZbkQ0r9c3bd6Q3Yc0Hq5b6Bg2EXAMPLEpub\n"
    "lickeyYQ==\nPrivate-Lines: 2\n" + PPK_PRIVATE + "Private-MAC: 7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b\n"
)
KEY_DATA = "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVBMXh5ejEyMw=="

HELD_OUT = [
    ("korean-colon", "DB 비밀번호: Tiger!2024 로 바꿔뒀어", "Tiger!2024"),
    ("korean-topic", "서버 비밀번호는 qwer1234! 이야", "qwer1234!"),
    ("korean-short", "관리자 비번 Sunflower77 으로 로그인해", "Sunflower77"),
    ("korean-api-key", "API 키: 9f8e7d6c5b4a39281706f5e4d3c2b1a0 넣으면 돼", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    ("korean-token", "토큰=ghx7Kq2LmP9vR4tZ8wY1nB6cD3fH5jQ0 으로 호출", "ghx7Kq2LmP9vR4tZ8wY1nB6cD3fH5jQ0"),
    ("korean-cipher", "zip 암호: Mango#55 입니다", "Mango#55"),
    ("korean-attached", "비밀번호는Tiger2024!야", "Tiger2024!"),
    ("cookie", "curl -H 'Cookie: sessionid=8f2k1m9x0qv7; csrftoken=Zt81kQ0' https://app.local/api", "sessionid=8f2k1m9x0qv7"),
    ("set-cookie", "Set-Cookie: __Host-auth=eyJhbGciOi.J9x2Lk; Path=/; Secure; HttpOnly", "eyJhbGciOi.J9x2Lk"),
    ("htpasswd", "htpasswd -b /etc/nginx/.htpasswd admin Kangaroo7", "Kangaroo7"),
    ("htpasswd-bc", "sudo htpasswd -bcB /etc/apache2/.htpasswd alice s3cretPass", "s3cretPass"),
    ("htpasswd-n", "htpasswd -nb bob hunter22", "hunter22"),
    ("password-flag-letters", "pg_restore --username app --password swordfish --dbname prod", "swordfish"),
    ("kubeconfig", f"users:\n- name: ci\n  user:\n    client-key-data: {KEY_DATA}\n", KEY_DATA),
    ("ppk", PPK, "AAAAgQCqGKukO1De7zhZj6"),
    ("ppk-mac", PPK, "7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b"),
    ("discord", f"bot.run('{DISCORD_TOKEN}')", DISCORD_TOKEN),
    ("discord-bare", f"here is the bot token {DISCORD_TOKEN} keep it safe", DISCORD_TOKEN),
    ("prose", "the password is hunter2, don't share it", "hunter2"),
    ("prose-for", "the password for the staging db is Blue-Whale-42.", "Blue-Whale-42"),
    ("prose-pw", "my pw is Qz8!rT", "Qz8!rT"),
]


@pytest.mark.parametrize(("name", "text", "secret"), HELD_OUT, ids=[h[0] for h in HELD_OUT])
def test_the_held_out_kinds_are_redacted(name: str, text: str, secret: str) -> None:
    for fn in (redact, redact_unscreened):
        out, count = fn(text)
        assert secret not in out, (fn.__name__, out)
        assert count >= 1
        assert "[REDACTED:" in out


ORDINARY = [
    "fetch(url, { method: 'POST', credentials: 'include' })",
    "const res = await fetch('/api', {credentials: \"same-origin\", headers})",
    "axios.create({ withCredentials: true, credentials: 'omit' })",
    "비밀번호를 잊어버렸어요. 재설정 메일이 안 와요",
    "비밀번호는 8자 이상이어야 합니다",
    "비밀번호는 bcrypt로 해시해서 저장해",
    "토큰 수가 4096을 넘으면 잘려요",
    "암호화 알고리즘은 AES-256-GCM을 씁니다",
    "API 키는 환경 변수에 넣어두세요",
    "the password is incorrect, try again",
    "the password is stored hashed with argon2",
    "password is required",
    "the Cookie: header is sent with every request",
    "htpasswd -c /etc/nginx/.htpasswd admin",
    "use the --password option to be prompted",
    "    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUMvekNDQWVlZ0F3SUJBZ0lC",
    "Public-Lines: 6",
    "version 1.2.3.4 of MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.abcdef.not-a-token",
]


@pytest.mark.parametrize("text", ORDINARY, ids=[f"ordinary-{i}" for i in range(len(ORDINARY))])
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == (text, 0)
    assert redact_unscreened(text) == (text, 0)


def test_code_that_names_a_password_variable_is_not_a_secret_stated() -> None:
    """Found by benchmarks/redact_false_positives.py in the stdlib's cgi.py."""
    for text in ("    pwd = os.getcwd()\n", "password: settings.DB_PASSWORD", "the pw is getpass.getpass()"):
        assert redact(text) == (text, 0)
