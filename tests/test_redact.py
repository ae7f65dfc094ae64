"""Secret redaction: each kind is caught, only the secret part is replaced, ordinary text survives.

The cases are not written next to the rules. Token shapes, the places people write them and the look-alikes
that must survive are re-created from gitleaks' rule tests (cmd/generate/config/rules/*.go and
utils.GenerateSampleSecrets, commit b58d3f10, v8.30.0+27) and from Yelp detect-secrets' plugin tests
(tests/plugins/*_test.py, commit 5e141933, v1.5.0+50); where those generate a random secret from an
alphabet, ``fake`` does the same with a fixed seed. The rest are lines shaped like what people paste into
an agent: ``.env`` dumps, compose files, shell history, curl commands, `aws configure` output.
"""

from __future__ import annotations

import base64
import json
import os
import random
import string
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES

from wwt.redact import redact

HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
WORD = ALNUM + "_-"


def fake(alphabet: str, n: int, seed: int = 0) -> str:
    """A random-looking string like gitleaks' secrets.NewSecret, but the same on every run."""
    rng = random.Random(f"{alphabet}{n}{seed}")
    while True:
        out = "".join(rng.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in out) or not any(c.isdigit() for c in alphabet):
            return out


# (kind, token) — vendor token shapes, each recognised by its own shape wherever it is written.
TOKENS = [
    ("huggingface_token", "hf_" + fake(string.ascii_letters, 34)),
    ("huggingface_token", "api_org_" + fake(string.ascii_letters, 34)),
    ("sendgrid_key", "SG." + fake(WORD, 22) + "." + fake(WORD, 43)),
    ("digitalocean_token", "dop_v1_" + fake(HEX, 64)),
    ("digitalocean_token", "doo_v1_" + fake(HEX, 64, 1)),
    ("digitalocean_token", "dor_v1_" + fake(HEX, 64, 2)),
    ("azure_key", fake(ALNUM, 3) + "8Q~" + fake(ALNUM + "_~.-", 34)),
    ("pypi_token", "pypi-AgEIcHlwaS5vcmc" + fake(HEX, 32) + fake(HEX, 32, 1)),
    ("twilio_key", "SK" + fake(HEX, 32)),
    ("mailgun_key", "key-" + fake(HEX, 32)),
    ("mailchimp_key", fake(HEX, 32, 3) + "-us20"),
    ("shopify_token", "shpat_" + fake(HEX, 32)),
    ("shopify_token", "shpss_" + fake(HEX, 32, 1)),
    ("databricks_token", "dapi" + fake(HEX, 32)),
    ("doppler_token", "dp.pt." + fake(ALNUM, 43)),
    ("pulumi_token", "pul-" + fake(HEX, 40)),
    ("vault_token", "hvs." + fake(WORD, 90)),
    ("vault_token", "hvb." + fake(WORD, 138)),
    ("vault_token", fake(LOWER_ALNUM, 14) + ".atlasv1." + fake(LOWER_ALNUM + "-_=", 67)),
    ("gitlab_token", "gldt-" + fake(ALNUM, 20)),
    ("gitlab_token", "glrt-" + fake(ALNUM, 20)),
    ("gitlab_token", "glcbt-" + fake(ALNUM, 5) + "_" + fake(ALNUM, 20)),
    ("gitlab_token", "glptt-" + fake(HEX, 40)),
    ("gitlab_token", "GR1348941" + fake(ALNUM, 20)),
    ("slack_token", "xapp-1-A0" + fake(UPPER_ALNUM, 9) + "-" + fake(string.digits, 13) + "-" + fake(HEX, 64)),
    ("slack_token", "xoxe-1-" + fake(UPPER_ALNUM, 146)),
    ("stripe_key", "rk_prod_" + fake(ALNUM, 99)),
    ("stripe_key", "whsec_" + fake(ALNUM, 32)),
    ("google_oauth", "GOCSPX-" + fake(WORD, 28)),
    ("aws_access_key", "ABIA" + fake("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)),
    ("aws_bedrock_key", "ABSKQmVkcm9ja0FQSUtleS1" + fake(ALNUM, 108) + "="),
    ("groq_key", "gsk_" + fake(ALNUM, 52)),
    ("xai_key", "xai-" + fake(ALNUM, 80)),
    ("replicate_token", "r8_" + fake(ALNUM, 37)),
    ("perplexity_key", "pplx-" + fake(ALNUM, 48)),
    ("tavily_key", "tvly-dev-" + fake(ALNUM, 32)),
    ("langsmith_key", "lsv2_pt_" + fake(HEX, 32) + "_" + fake(HEX, 10)),
    ("supabase_key", "sbp_" + fake(HEX, 40)),
    ("planetscale_token", "pscale_tkn_" + fake(WORD, 43)),
    ("linear_key", "lin_api_" + fake(ALNUM, 40)),
    ("notion_token", "ntn_" + fake(string.digits, 11) + fake(ALNUM, 35)),
    ("sentry_token", "sntryu_" + fake(HEX, 64)),
    ("grafana_token", "glsa_" + fake(ALNUM, 32) + "_" + fake(HEX, 8)),
    ("grafana_token", "glc_" + fake(B64, 60)),
    ("heroku_key", "HRKU-AA" + fake(WORD, 58)),
    ("atlassian_token", "ATATT3" + fake(ALNUM + "_-=", 186)),
    ("postman_key", "PMAK-" + fake(HEX, 24) + "-" + fake(HEX, 34)),
    ("age_secret_key", "AGE-SECRET-KEY-1" + fake("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
    ("onepassword_token", "A3-" + fake(UPPER_ALNUM, 6) + "-" + fake(UPPER_ALNUM, 11) + "-"
     + "-".join(fake(UPPER_ALNUM, 5, i) for i in range(3))),
    ("dynatrace_token", "dt0c01." + fake(UPPER_ALNUM, 24) + "." + fake(UPPER_ALNUM, 64)),
    ("prefect_key", "pnu_" + fake(ALNUM, 36)),
    ("readme_key", "rdme_" + fake(LOWER_ALNUM, 70)),
    ("rubygems_token", "rubygems_" + fake(HEX, 48)),
    ("clojars_token", "CLOJARS_" + fake(LOWER_ALNUM, 60)),
    ("artifactory_token", "AKCp" + fake(ALNUM, 69)),
    ("infracost_key", "ico-" + fake(ALNUM, 32)),
    ("openshift_token", "sha256~" + fake(WORD, 43)),
    ("harness_key", "pat." + fake(WORD, 22) + "." + fake(ALNUM, 24) + "." + fake(ALNUM, 20)),
    ("flyio_token", "fo1_" + fake(WORD, 43)),
    ("cloudflare_key", "v1.0-" + fake(HEX, 24) + "-" + fake(HEX, 146)),
    ("alibaba_key", "LTAI" + fake(ALNUM, 20)),
    ("telegram_token", "7213808860:AAH1bjqpKKW3maRSPAxzIU-0v6xNuq2-NjM"),  # detect-secrets' own example
    ("discord_webhook", "https://discord.com/api/webhooks/" + fake(string.digits, 18) + "/" + fake(WORD, 68)),
    ("square_token", "sq0atp-" + fake(WORD, 22)),
    ("shippo_token", "shippo_live_" + fake(HEX, 40)),
    ("duffel_token", "duffel_test_" + fake(WORD, 43)),
    ("easypost_key", "EZAK" + fake(ALNUM, 54)),
    ("flutterwave_key", "FLWSECK_TEST-" + fake("abcdefgh0123456789", 32) + "-X"),
    ("newrelic_key", "NRAK-" + fake(UPPER_ALNUM, 27)),
    ("frameio_token", "fio-u-" + fake(WORD, 64)),
    ("sendinblue_key", "xkeysib-" + fake(HEX, 64) + "-" + fake(ALNUM, 16)),
]

# The places gitleaks writes each sample secret ({i}: an identifier, {I}: upper case, {s}: the secret).
LAYOUTS = [
    '{i}Token="{s}"', "{i}Token = {s}", '{\n    "{i}_token": "{s}"\n}', '{"config.ini": "{I}_TOKEN={s}\\nBACKUP_ENABLED=true"}',
    "{i}_token: '{s}'", 'var {i}Token string = "{s}"', "{i}Token := `{s}`", 'String {i}Token = "{s}";',
    '${i}Token .= "{s}"', 'System.setProperty("{I}_TOKEN", "{s}")', '  "{i}Token" => "{s}"', '{I}_TOKEN ::= "{s}"',
]


def layout(n: int, secret: str) -> str:
    return LAYOUTS[n % len(LAYOUTS)].replace("{i}", "vendor").replace("{I}", "VENDOR").replace("{s}", secret)


@pytest.mark.parametrize(("kind", "token"), TOKENS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(TOKENS)])
def test_vendor_tokens_are_recognised_by_their_shape_in_prose_and_in_config(kind: str, token: str) -> None:
    for n, text in enumerate([f"here is the key I used: {token} (rotate it)", layout(TOKENS.index((kind, token)), token)]):
        out, count = redact(text)
        assert token not in out, (n, out)
        assert f"[REDACTED:{kind}]" in out and count >= 1, (n, out)


PW = "Tr0ub4dor-3x"  # a password with the usual mix
KEY = fake(ALNUM, 32, 7)
BASIC = base64.b64encode(b"deploy:Pa55w0rd!").decode()

# (kind, text, secret) — a secret-sounding name, a client option or a header, then the value.
CONTEXT = [
    # .env and shell: lower case, abbreviated names, mid-line, PowerShell, Dockerfile
    ("password", "password=hunter2-correct", "hunter2-correct"),
    ("password", "export DB_PASS=" + PW, PW),
    ("password", "echo ok && PGPASSWORD=" + PW + " psql -h db -U app", PW),
    ("password", "docker run -d -e POSTGRES_PASSWORD=" + PW + " -p 5432:5432 postgres:16", PW),
    ("secret", '$env:OPENAI_API_KEY = "' + KEY + '"', KEY),
    ("secret", "ENV API_TOKEN=" + KEY, KEY),
    ("password", "spring.datasource.password=" + PW, PW),
    # YAML / JSON / code (detect-secrets' keyword forms)
    ("password", "services:\n  db:\n    environment:\n      db_password: " + PW + "\n", PW),
    ("password", '{"user": "app", "password": "correct horse battery staple"}', "correct horse battery staple"),
    ("password", 'password = "value with quotes and spaces"', "value with quotes and spaces"),
    ("secret", 'apikey := "' + KEY + '"', KEY),
    ("secret", "private_key := `" + KEY + "`", KEY),
    ("password", 'password => "' + PW + '"', PW),
    ("secret", 'NSString *secret = @"' + KEY + '";', KEY),
    ("secret", 'if (api_key == "' + KEY + '") {', KEY),
    ("password", 'if (db_pass !== "' + PW + '") {', PW),
    ("secret", 'mySecretString="' + KEY + '"', KEY),
    ("secret", "client = Client(api_key='" + KEY + "', timeout=30)", KEY),
    ("secret", 'const config = { clientSecret: "' + KEY + '" };', KEY),
    # flags and client options
    ("password", "mysqladmin --user root --password " + PW + " status", PW),
    ("password", "pg_dump --dbname=shop --password=" + PW, PW),
    ("cli_password", "mysql -uroot -p" + PW + " shop < dump.sql", PW),
    ("cli_password", "mysqldump -h db -u admin -p'" + PW + "' shop > shop.sql", PW),
    ("cli_password", "sshpass -p '" + PW + "' ssh deploy@10.0.0.5", PW),
    ("cli_password", "redis-cli -h cache -a " + PW + " ping", PW),
    ("cli_password", "docker login -u ci -p " + PW + " registry.example.com", PW),
    ("cli_password", "curl --cacert ca.crt -u elastic:P@ssw0rd$1 https://localhost:9200", "P@ssw0rd$1"),  # gitleaks
    ("cli_password", "curl -k -X POST https://infinispan:11222/rest/v2/caches/default/hello \\\n"
                     "  -d 'world' \\\n  -u developer:yqDVtkqPECriaLRi", "yqDVtkqPECriaLRi"),  # gitleaks
    # URLs and headers
    ("url_password", "REDIS_URL=redis://:" + PW + "@cache.internal:6379/0", PW),
    ("url_password", "mongodb://admin:p@ss" + PW + "@mongo:27017/app", PW),  # an unescaped @ in the password
    ("secret", "GET /v1/items?access_token=" + KEY + "&page=2", KEY),
    ("basic_auth", "curl -H 'Authorization: Basic " + BASIC + "' https://api.example.com", BASIC),
    ("basic_auth", 'headers = {"Authorization": "Basic ' + BASIC + '"}', BASIC),
    ("basic_auth", '{"auths": {"https://index.docker.io/v1/": {"auth": "' + BASIC + '"}}}', BASIC),  # docker login
    ("password", "kind: Secret\ndata:\n  password: " + base64.b64encode(PW.encode()).decode() + "\n",
     base64.b64encode(PW.encode()).decode()),
    ("secret", 'curl -H "x-api-key: ' + KEY + '" https://api.example.com/v1', KEY),
    ("secret", 'curl -X GET https://octopus.corp.net/ -H "X-Octopus-ApiKey: 3a16750d-d363-41a4-8ebd-035408f7730f"',
     "3a16750d-d363-41a4-8ebd-035408f7730f"),  # gitleaks
    ("auth_header", "curl -H 'Authorization: Token 22cb987851bc5659229114c62e60c79abd0d2c08' https://x.example",
     "22cb987851bc5659229114c62e60c79abd0d2c08"),  # gitleaks
    ("secret", "PRIVATE-TOKEN: " + KEY, KEY),
    # cloud credentials written without `=`
    ("aws_secret_key", "aws_secret_access_key    wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ", "wJalrXUtnFEMI"),
    ("aws_secret_key", "AWS Secret Access Key [None]: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ", "wJalrXUtnFEMI"),
    ("aws_secret_key", "| Access key ID | Secret access key |\n|---|---|\n"
                       "| AKIAIOSFODNN7EXAMPLQ | wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ |", "wJalrXUtnFEMI"),
    ("aws_secret_key", "User name,Password,Access key ID,Secret access key\n"
                       "ci,,AKIAIOSFODNN7EXAMPLQ,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ", "wJalrXUtnFEMI"),
    ("azure_key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=lJzRc1YdHaAA2KCNJJ1tkYwF/+mKK6Ygw0NGe"
                  "170Xu592euJv2wYUtBlV8z+qnlcNQSnIYVTkLWntUO1F8j8rQ==;EndpointSuffix=core.windows.net", "lJzRc1YdHaAA"),
    ("azure_key", "https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&sr=b&sig=" + KEY + "%3D", KEY),
]


@pytest.mark.parametrize(("kind", "text", "secret"), CONTEXT, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(CONTEXT)])
def test_secrets_written_after_a_name_a_flag_or_a_header_are_redacted(kind: str, text: str, secret: str) -> None:
    out, count = redact(text)
    assert secret not in out, out
    assert f"[REDACTED:{kind}]" in out and count >= 1, out


def test_only_the_value_is_replaced_and_the_line_still_reads() -> None:
    assert redact("db_password: " + PW + "  # prod")[0] == "db_password: [REDACTED:password]  # prod"
    assert redact('{"password": "' + PW + '", "user": "app"}')[0] == '{"password": "[REDACTED:password]", "user": "app"}'
    assert redact("mysql -uroot -p" + PW + " shop")[0] == "mysql -uroot -p[REDACTED:cli_password] shop"
    assert redact("redis://:" + PW + "@cache:6379")[0] == "redis://:[REDACTED:url_password]@cache:6379"
    assert redact("curl -H 'X-Api-Key: " + KEY + "' https://x")[0] == "curl -H 'X-Api-Key: [REDACTED:secret]' https://x"


# Look-alikes that must survive: code that handles secrets, flags that are not passwords, placeholders, and the
# false positives gitleaks and detect-secrets keep in their own tests.
ORDINARY = [
    'password_reset_url = "https://example.com/reset"',
    "def get_password(self) -> str:\n    return self._password",
    "passwordless sign-in is enabled; token_count = 12345; max_tokens=4096",
    "docker run -p 8080:80 nginx && docker run -p8443:443 caddy",
    "mysql -u root -p  # prompts for the password",
    "bot.run(token=discord_config.discord_bot_token)",
    "params: { _csrf_token: csrfToken },",
    '  "private_key_id": "0123456789abcdef0123456789abcdef01234567",',
    "token: ${{ secrets.GITHUB_TOKEN }}\npassword: ${DB_PASSWORD}\nAPI_KEY = os.environ['API_KEY']",
    "token = tokenizer.decode(ids)\nsecret = load_secret(name)\nif token == \"integer\":",
    "the --username and --password options can't be used for svn+ssh URLs",
    '"accessor":"rA1wk0Y45YCufyfq",',  # gitleaks generic-api-key false positives from here on
    "report_access_id: e8e4df51-2054-49b0-ab1c-516ac95c691d",
    'public_key = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"',
    'publicToken = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"',
    "key_down_event=Zx0Lq8Wd3Yv7Nc2Bm5Kp9Rt4Hs6Jg1Ff",
    'keyword: "Befaehigung_P2"',
    "csrf-token=Mj2qykJO5rELyHgezQ69nzUX0i3OH67V7+V4eUrLfpuyOuxmiW9rhROG/Whikle15syazJOkrjJa3U2AbhIvUw==",
    'clientId = "73082700-1f09-405b-80d0-3131bfd6272d"',
    "GITHUB_API_KEY=\nDYNATRACE_API_KEY=",
    'LLM_SECRET_NAME = "NEXUS-GPT4-API-KEY"',
    "secret_length = X25519.secret_length",
    "    access_token_url='https://github.com/login/oauth/access_token',",
    "PuttyPassword=0",
    "curl -u <user:password> https://test.com/endpoint",  # gitleaks curl false positives
    '   curl -sL --user "$1:$2" "$3" > "$4"',
    'curl -u "${username}":"${password}"',
    'curl -H "Authorization: Bearer $API_KEY" -H "Authorization: Basic ..." https://api.example.com',
    "xoxb-xxxxxxxxx-xxxxxxxxxx-xxxxxxxxxxxx",  # gitleaks slack false positive
    "client_secret=bP88Q~xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",  # gitleaks azure false positive
    "http://localhost:5000/<%= @variable %>",  # detect-secrets basic-auth false positives
    "'https://url:8000';@something else https://url:8000 @something else",
    'api_key = ""\nsome_key = "real_secret"',  # detect-secrets keyword false positives
    "Basic authentication is disabled; use the Bearer scheme.",
]


@pytest.mark.parametrize("text", ORDINARY, ids=[f"ordinary-{i}" for i in range(len(ORDINARY))])
def test_code_prose_and_placeholders_are_left_alone(text: str) -> None:
    assert redact(text) == (text, 0)


def test_real_agent_logs_hold_no_secret_and_come_out_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    from wwt.parsers import parse_file

    shared = Path(os.environ.get("WWT_SHARED", "/work/shared")) / "fixtures" / "real"
    if not shared.is_dir():
        pytest.skip(f"real fixtures not found under {shared}")
    texts = [m.text for path in sorted(shared.rglob("*.json*")) if not path.name.endswith(".meta.json")
             for s in parse_file(path, redact=False)[0] for m in s.messages]  # as the agents wrote them
    assert len(texts) > 300 and sum(map(len, texts)) > 200_000
    changed = [(t, redact(t)[0]) for t in texts if redact(t)[1]]
    assert not changed, json.dumps(changed[:3])[:600]


# --- the cases the first version was written with (still true) -----------------------------------------------
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
    ("password", "DB_PASSWORD=hunter2hunter2", "hunter2hunter2"),
    ("secret", "export API_KEY='abc123def456'", "abc123def456"),
    ("secret", "GITHUB_TOKEN: abcdef123456", "abcdef123456"),
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
    assert redact("DB_PASSWORD=hunter2hunter2 # prod")[0] == "DB_PASSWORD=[REDACTED:password] # prod"


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


def test_the_aws_context_written_caseless_finds_what_the_case_insensitive_rule_finds() -> None:
    """``_AWS_CONTEXT`` spells each letter as a class instead of using IGNORECASE (20× faster). It must say yes
    exactly where ``(?i)`` does: for every character of the letters it uses (Python folds İ ı ſ and the Kelvin
    sign onto ASCII letters), and on real logs and look-alikes."""
    import re

    from wwt.redact import _AWS_CONTEXT

    rule = re.compile(r"(?i)\b(?:AKIA|ASIA)[A-Z0-9]{16}\b|secret[ _]?access[ _]?key|aws[ _]?secret")
    for char in map(chr, [*range(0x3000), 0x212A, 0xFF21, 0xFF41, 0x1D400]):
        for text in (f"AKI{char}IOSFODNN7EXAMPLE", f"AKIAIOSFODNN7EXAMPL{char}", f"{char}AKIAIOSFODNN7EXAMPLE",
                     f"se{char}ret access key", f"a{char}s_secret", f"AW{char}SECRET", f"secret acce{char}s key",
                     f"secret_access_{char}ey"):
            assert bool(_AWS_CONTEXT.search(text)) == bool(rule.search(text)), ascii(text)
    texts = ["ſecret access key", "AWS_SECRET", "\u212aey", "asia" + "z" * 16, "xASIA" + "Z" * 16, "ASİA" + "A" * 16,
             "secret__access key", "my aws secret here", "AKIA" + "\u212a" * 16 + " x"]
    for path in sorted(REAL_FIXTURES.glob("*/*.json*")):
        texts += path.read_text(encoding="utf-8", errors="replace").splitlines()
    for text in texts:
        assert bool(_AWS_CONTEXT.search(text)) == bool(rule.search(text)), ascii(text[:120])


# --- screening: a message holding nothing any rule looks for is left alone after a few scans ------------------
# Texts at the edges of what the screening looks for: each client-password form (`-p`, `-P`, `-a`, `-passin`),
# `Authorization` and docker's `"auth"` in any case, the AWS context's cues (`ſ` folds onto `s`), and words of
# 20+ characters cut by any whitespace Python knows (after gitleaks' curl/mysql/sqlcmd/openssl rule examples and
# detect-secrets' keyword tests, re-written here).
SCREEN_EDGES = [
    "sqlcmd -S tcp:db,1433 -U sa -P " + PW + " -Q 'select 1'",
    "mongosh --host db -u admin -p " + PW,
    "openssl rsa -in key.pem -passin pass:" + PW + " -out plain.pem",
    "openssl pkcs12 -export -passout pass:" + PW,
    "mariadb\t-uroot\t-p" + PW,
    "az login --service-principal -u app -p " + PW + " --tenant t",
    "docker\tlogin -u ci -p " + PW + " registry.example.com",  # not the trigger `docker login`: left alone
    "AUTHORIZATION: token 22cb987851bc5659229114c62e60c79abd0d2c08",
    "authorization=apikey 0f3c9a7e5b1d4c2a8e6f0b3d",
    '{"AUTH": "' + BASIC + '", "auth": "' + BASIC + '"}',
    "ſecret access key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ",
    "SECRET ACCESS KEY wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ and AKIAIOSFODNN7EXAMPLQ",
    "api_\u212aey = '" + KEY + "'",  # the Kelvin sign lowers to k
    *(f"token{space}ghp_{fake(ALNUM, 36)}{space}end" for space in ("\u3000", "\x1c", "\x85", "\u2028", "\xa0", "\t")),
    "ghp_" + fake(ALNUM, 36),
    "x" * 19 + " sk-" + fake(ALNUM, 40),
]


def _message_texts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from wwt.parsers import parse_file

    return [m.text for path in sorted(REAL_FIXTURES.rglob("*.json*")) if not path.name.endswith(".meta.json")
            for s in parse_file(path, redact=False)[0] for m in s.messages]


def test_screening_never_changes_what_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    """``redact`` skips the rules whose cues are absent; ``redact_unscreened`` looks for every trigger in every
    text. They agree on real messages, on every secret sample of this file and on those samples spliced into
    real messages at random places."""
    from wwt.redact import redact_unscreened

    texts = _message_texts(monkeypatch)
    samples = ([t for _, t in TOKENS] + [layout(i, t) for i, (_, t) in enumerate(TOKENS)] + [t for _, t, _ in CONTEXT]
               + [t for _, t, _ in SECRETS] + ORDINARY + SCREEN_EDGES)
    rng = random.Random(15)
    spliced = []
    for sample in samples:
        for _ in range(4):
            text = rng.choice(texts)
            at = rng.randrange(len(text) + 1)
            spliced.append(text[:at] + rng.choice(["", " ", "\n"]) + sample + rng.choice(["", " ", "\n"]) + text[at:])
    redacted = 0
    for text in texts + samples + spliced:
        want = redact_unscreened(text)
        assert redact(text) == want, ascii(text[:200])
        redacted += want[1] > 0
    assert redacted > len(samples) * 3  # the comparison covers redacted texts, not only untouched ones


def test_most_real_messages_are_screened_out_before_any_rule_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    from wwt.redact import _cues

    texts = _message_texts(monkeypatch)
    quiet = [t for t in texts if _cues(t) is None]
    assert len(quiet) > len(texts) / 2
    assert all(redact(t) == (t, 0) for t in quiet)


def test_words_of_20_characters_are_those_str_split_gives_whatever_the_whitespace() -> None:
    """The words are found in a byte view where each non-ASCII character is a ``?``: whitespace beyond ASCII
    must still cut a word where ``str.split`` cuts it (a trigger in a piece shorter than 20 is not looked for)."""
    from wwt.redact import _long_triggers

    spaces = [c for c in map(chr, range(0x3001)) if c.isspace()] + ["\u200b", "\ufeff", "\u180e"]  # last: not space
    for space in spaces:
        for text in (f"SK{'a' * 18}{space}sk-{'b' * 16}{space}ghp_{'c' * 17}", f"{space}hf_{'d' * 22}",
                     f"xox{'e' * 17}{space}", f"{space * 2}dapi{'f' * 26}{space}x{space}{'g' * 20}",
                     f"é{space}{'h' * 10}{space}AKIA{'I' * 16}", f"{'j' * 10}{space}AIza{'k' * 8}{space}r8_{'l' * 30}"):
            view = text.encode("ascii", "replace")
            assert {t.decode() for t in _long_triggers(text, view)} == _triggers_by_words(text), ascii(text)


def _triggers_by_words(text: str) -> set[str]:
    """The rule as ``redact_unscreened`` reads it: the trie over the words ``str.split`` gives, 20+ chars."""
    import re

    from wwt.redact import _TRIGGER_PATTERN

    return set(re.findall(_TRIGGER_PATTERN, " ".join(w for w in text.split() if len(w) >= 20)))


def test_triggers_found_in_the_bytes_are_those_the_trie_finds_in_the_words() -> None:
    """``_long_triggers`` finds the token triggers in one byte view of the text (words located by substring
    search, cut at characters no trigger holds, each distinct piece scanned once). It must name exactly the
    triggers the trie names over the 20+-character words: on every line of the real logs, on the vendor
    samples above in their gitleaks layouts, and on those samples glued to neighbours by every ASCII
    character, by non-ASCII letters and by whitespace Python knows beyond ASCII."""
    from wwt.redact import _long_triggers, _view

    def check(text: str) -> None:
        view, _ = _view(text)
        got = {t.decode() for t in _long_triggers(text, view if isinstance(view, bytes) else text.encode())}
        assert got == _triggers_by_words(text), ascii(text[:200])

    lines = []
    for path in sorted(REAL_FIXTURES.rglob("*.json*")):
        lines += path.read_text(encoding="utf-8", errors="replace").splitlines()
    samples = [t for _, t in TOKENS] + [layout(i, t) for i, (_, t) in enumerate(TOKENS)]
    glue = [chr(c) for c in range(1, 128)] + ["é", "…", "한", "\u3000", "\xa0", "\x85", "\u2028", "\ufeff"]
    rng = random.Random(20)
    found = 0
    for text in lines:
        check(text)
    for sample in samples:
        for sep in glue:
            check(f"{sep}{sample}{sep}")
            check("x" * rng.randrange(0, 25) + sep + sample[: rng.randrange(len(sample) + 1)])
            cut = rng.randrange(len(sample))
            check(sample[:cut] + sep + sample[cut:] + sep + "y" * 19)
        text = rng.choice(lines)
        at = rng.randrange(len(text) + 1)
        check(text[:at] + sample + text[at:])
        found += bool(_triggers_by_words(sample))
    assert found > len(samples) * 0.9  # the comparison covers texts with triggers, not only empty sets


def test_every_trigger_of_the_catalogue_in_a_long_word_gets_past_the_screen() -> None:
    """The trie runs only on the pieces in which a screen (read backwards, for speed) finds a part of some
    trigger: each trigger of the catalogue, in a word of 20+ characters — alone, after a path, among long plain
    words, in the middle of a real log line — must still be named exactly as the trie over the words names it."""
    from wwt.redact import _ALL_TRIGGERS, _long_triggers

    line = next(p for p in sorted(REAL_FIXTURES.rglob("*.jsonl"))).read_text(encoding="utf-8").splitlines()[0]
    for trigger in _ALL_TRIGGERS:
        for text in (f"{trigger}{'0' * 24}", f"see /srv/app/{trigger}{'Ab9' * 8}/x plain words",
                     f"{'configuration' * 2} {'q' * 20}{trigger} {'w' * 30}",
                     f"{line[:200]}{trigger}{'Zz' * 12}{line[200:400]}"):
            view = text.encode("ascii", "replace")
            want = _triggers_by_words(text)
            assert want and {t.decode() for t in _long_triggers(text, view)} == want, (trigger, text[:80])
