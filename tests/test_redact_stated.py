"""Secrets stated in a sentence or under a spaced label that round 3 still let through, and the sentences about
secrets that must stay as written (issue 24, second pass).

Inputs come from how the formats are written by their owners, not from the rules: vendor dashboards and docs
print credentials under spaced labels ("API Key:", "Client Secret:", "Access Token:" — gitleaks'
``generic-api-key`` rule reads a label of words and spaces before ``:``/``=``, detect-secrets' keyword plugin
only joined names); Korean chat attaches a particle to the label (은/는/이/가/을/를/(으)로) and ends the sentence
with a copula (입니다/이야/야/예요) or "…로 바꿨어" (set it to); English chat says "the password is X." The
ordinary side is what developers write about passwords without giving one: a rule ("8자 이상"), a hash or a
cipher ("SHA256으로", "AES-256-GCM"), an encoding ("utf8mb4"), a file (".env"), a state ("is incorrect")."""

from __future__ import annotations

import pytest

from wwt.redact import redact, redact_unscreened

STATED = [
    # Korean: object / instrument particles, copulas, set-to verbs
    ("ko-object-particle", "비밀번호를 Tiger2024!로 바꿨어", "Tiger2024!"),
    ("ko-instrument-particle", "관리자 계정은 비밀번호로 Xk29!pq를 쓰세요", "Xk29!pq"),
    ("ko-object-digits", "공유기 비밀번호를 qwer1234로 변경했습니다", "qwer1234"),
    ("ko-copula-word", "회사 와이파이 비번은 sunflower야", "sunflower"),
    ("ko-copula-polite", "테스트 계정 비밀번호는 bluewhale입니다", "bluewhale"),
    ("ko-set-to-word", "패스워드를 moonlight로 설정해 뒀어요", "moonlight"),
    ("ko-colon-word", "테스트 서버 접속 정보\n비밀번호: sunflower\n포트: 2222", "sunflower"),
    ("ko-colon-word-particle", "관리자 비번 = moonlight로 로그인하면 돼", "moonlight"),
    ("ko-secret-key-copula", "스테이징 시크릿 키는 Zx8Kq2LmP9vR4tZ8 이에요", "Zx8Kq2LmP9vR4tZ8"),
    # English spaced labels (dashboards, READMEs, chat)
    ("en-api-key-colon", "API Key: 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    ("en-api-key-is", "Your API key is 4c1b8e2f9a7d3e6b5a0c8f1d2e9b7a34, keep it private",
     "4c1b8e2f9a7d3e6b5a0c8f1d2e9b7a34"),
    ("en-client-secret", "Client Secret: Qm7vT2xL9pR4wZ8kN3bH6yJ1", "Qm7vT2xL9pR4wZ8kN3bH6yJ1"),
    ("en-access-token", "Access Token = 1a2B3c4D5e6F7g8H9i0JkLmN", "1a2B3c4D5e6F7g8H9i0JkLmN"),
    ("en-secret-key", "secret key: 'aZ3kP9qW2xR7tY5u'", "aZ3kP9qW2xR7tY5u"),
    ("en-token-is", "my token is 7Yh3Kd9Lp2Qw8Rt5Zx1Vb6Nm, why does it 401", "7Yh3Kd9Lp2Qw8Rt5Zx1Vb6Nm"),
    ("en-token-for", "the token for the staging bot is 5Fg8Hj2Kl9Qw3Er7Ty1Ui4Op", "5Fg8Hj2Kl9Qw3Er7Ty1Ui4Op"),
    # English prose: a word that ends the sentence, a quoted passphrase
    ("en-password-word", "the password is sunflower.", "sunflower"),
    ("en-password-for-word", "the password for root is toor", "toor"),
    ("en-passphrase-quoted", "my passphrase is 'correct horse battery staple'", "correct horse battery staple"),
    # kubectl's flag spelling of the kubeconfig field
    ("kube-flag", "kubectl config set-credentials ci --client-key-data=LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0t",
     "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0t"),
]


@pytest.mark.parametrize(("name", "text", "secret"), STATED, ids=[s[0] for s in STATED])
def test_a_secret_stated_in_a_sentence_or_under_a_spaced_label_is_redacted(name: str, text: str, secret: str) -> None:
    for fn in (redact, redact_unscreened):
        out, count = fn(text)
        assert secret not in out, (fn.__name__, out)
        assert count >= 1 and "[REDACTED:" in out


def test_a_known_token_under_a_spaced_label_keeps_its_kind() -> None:
    """The spaced-label pass runs last: a vendor token it would also catch is named by its vendor rule."""
    out, _ = redact("API key: ghp_" + "Zq8Lm3Nv7Pw1Rt5Xy9Bc2Df6Gh4Jk0Ms8Uv2W")
    assert out == "API key: [REDACTED:github_token]"


ABOUT = [
    # Korean rules, methods, places (found in how Korean tutorials talk about passwords)
    "비밀번호는 SHA256으로 해시됩니다",
    "암호는 AES256으로 암호화해서 보관",
    "암호는 AES-256-GCM을 씁니다",
    "비밀번호는 .env 파일에 넣어두세요",
    "DB 문자셋: 비밀번호는 utf8mb4로 저장돼요",
    "비밀번호는 8~16자, 특수문자 포함",
    "비밀번호를 bcrypt로 해시해서 저장",
    "비밀번호를 UTF-8로 인코딩한 뒤 비교",
    "토큰은 JWT야",
    "토큰은 JWT로 발급합니다",
    "토큰을 localStorage에 저장하지 마세요",
    "비번은 env로 넘겨",
    "비밀번호는 hash야, 평문 아님",
    "비밀번호를 잊어버렸어요",
    "비밀번호는 8자 이상이어야 합니다",
    "비밀번호: required",
    "비밀번호: 필수, 8자 이상",
    "API 키: YOUR_API_KEY",
    "암호: hashed",
    "비밀번호: bcrypt로 해시",
    # English states and code
    "the password is incorrect.",
    "the password is required",
    "The password is hashed, not stored.",
    "password is None",
    "if the password is empty, prompt",
    "the pw is getpass.getpass()",
    "the token is expired.",
    "the API key is invalid",
    "API key: YOUR_API_KEY",
    "API Key: <your-key-here>",
    "Access token: see the settings page",
    "max token: 4096",
    "secret = get_secret('db')",
    "fetch('/api/me', { credentials: 'include' })",
    "password_field = forms.CharField(widget=forms.PasswordInput)",
    "token = get_token()",
    # found by benchmarks/redact_false_positives.py in the stdlib and installed packages
    "#   token          = 1*tchar",
    "        authorization = base64.decodebytes(authorization).decode('ascii')",
    "   >>> C.output()\n   'Set-Cookie: sugar=wafer\\r\\nSet-Cookie: vienna=finger'",
    "    - 'github://org:repo@/precip/catalog.yml', where the org and repo are",
    "   >>> print(C.output(header=\"Cookie:\"))\n   Cookie: rocky=road; Path=/cookie",
    '        "refresh_token": "hf_oauth__refresh_token",',
    'token = r"[-!#$%&\'*+.^_`|~0-9a-zA-Z]+"',
]


@pytest.mark.parametrize("text", ABOUT, ids=[f"about-{i}" for i in range(len(ABOUT))])
def test_a_sentence_about_a_secret_is_left_alone(text: str) -> None:
    assert redact(text) == (text, 0)
    assert redact_unscreened(text) == (text, 0)
