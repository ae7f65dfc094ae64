"""Privacy, end to end: what reaches the disk, who may read it, what leaves the machine, what `forget` leaves
behind. One archive (a real Claude Code log with fresh ids plus turns full of real-looking secrets) is
ingested through `wwt ingest` with the network blocked; the tests read the raw files it wrote."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from test_faults import GROWING, fresh_copy, indexes_agree, run_wwt, wwt_env

SECRETS = {
    "aws access key": "AKIAIOSFODNN7EXAMPLQ",
    "aws secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ",
    "github token": "ghp_1A2b3C4d5E6f7G8h9I0jK1lM2nO3pQ4rS5tU",
    "github fine-grained": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ01",
    "gitlab token": "glpat-xY3kP9qLm2Zr8TvW4nBc",
    "slack bot token": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "slack webhook": "T01ABCDEF/B02GHIJKL/abcdefghijklmnopqrstuvwx",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0"
           ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "private key body": "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
    "postgres password": "S3cr3tPassw0rd",
    "stripe key": "sk_live_51HxYzAbCdEfGhIjKlMnOpQr",
    ".env password": "hunter2-correct-horse",
    "openai key": "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGh",
    "anthropic key": "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-AbCdEfGhIjKlMnOpQrStUv",
    "google api key": "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
    "bearer token": "abcdef0123456789abcdef0123456789",
    "npm token": "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    # the forms the first redaction missed (issue 11): lower-case and abbreviated names, JSON, mid-line, flags,
    # client options, an empty URL user, Basic and X-Api-Key headers, more vendor shapes, an AWS secret in a table
    ".env lower-case password": "hunter2-Lowercase-Env9",
    "yaml db_password": "Yaml-Db-Pw-7731",
    "json password": "json pass phrase 4471",
    "mid-line PASSWORD": "MidLine-Pw-5508",
    "--password flag": "Flag-Pw-Cli-6620",
    "mysql -p": "MySqlInline9931",
    "redis empty user": "Redis-Empty-User-4417",
    "basic auth": base64.b64encode(b"deploy:Basic-Auth-Pw-3386").decode(),
    "x-api-key header": "7f3a9c2e5b1d4f6a8c0e2b4d6f8a0c2e",
    "huggingface token": "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",
    "sendgrid key": "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",
    "digitalocean token": "dop_v1_" + "4f0c9a7b3e2d1c8b" * 4,
    "azure account key": "lJzRc1YdHaAA2KCNJJ1tkYwF/+mKK6Ygw0NGe170Xu592euJv2wYUtBlV8z+qnlcNQSnIYVTkLWntUO1F8j8rQ==",
    "aws secret in a table": "Xy7/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
}
TURNS = [
    ("user", f"The deploy failed. My .env is:\nDATABASE_PASSWORD={SECRETS['.env password']}\n"
             f"STRIPE_SECRET_KEY={SECRETS['stripe key']}\nAWS_ACCESS_KEY_ID={SECRETS['aws access key']}\n"
             f"aws_secret_access_key = {SECRETS['aws secret']}"),
    ("assistant", f"Rotate them. The connection string postgres://admin:{SECRETS['postgres password']}@db.internal:5432/prod "
                  f"also leaked, and so did the JWT {SECRETS['jwt']} in the logs."),
    ("user", f"CI uses {SECRETS['github token']} and {SECRETS['github fine-grained']}, GitLab {SECRETS['gitlab token']}, "
             f"Slack {SECRETS['slack bot token']} posting to https://hooks.slack.com/services/{SECRETS['slack webhook']}"),
    ("assistant", f"Also in the repo: {SECRETS['openai key']}, {SECRETS['anthropic key']}, {SECRETS['google api key']}, "
                  f"{SECRETS['npm token']} and curl -H 'Authorization: Bearer {SECRETS['bearer token']}'."),
    ("user", "-----BEGIN RSA PRIVATE KEY-----\n" + SECRETS["private key body"] + "\n-----END RSA PRIVATE KEY-----"),
    ("user", f"My local config:\npassword={SECRETS['.env lower-case password']}\ndb:\n  db_password: "
             f"{SECRETS['yaml db_password']}\nand settings.json has "
             f'{{"user": "app", "password": "{SECRETS["json password"]}"}}'),
    ("assistant", f"Try `env PASSWORD={SECRETS['mid-line PASSWORD']} ./migrate.sh`, then "
                  f"`mysqladmin --password {SECRETS['--password flag']} status` and "
                  f"`mysql -uroot -p{SECRETS['mysql -p']} shop`; the cache is redis://:{SECRETS['redis empty user']}"
                  "@cache.internal:6379/0."),
    ("user", f"curl -H 'Authorization: Basic {SECRETS['basic auth']}' -H 'x-api-key: {SECRETS['x-api-key header']}' "
             f"https://api.example.com\nhuggingface-cli login --token {SECRETS['huggingface token']}\nmail: {SECRETS['sendgrid key']}\n"
             f"droplets: {SECRETS['digitalocean token']}\nDefaultEndpointsProtocol=https;AccountName=acct;"
             f"AccountKey={SECRETS['azure account key']};EndpointSuffix=core.windows.net\n\n"
             "| Access key ID | Secret access key |\n|---|---|\n"
             f"| AKIAI44QH8DHBEXAMPLQ | {SECRETS['aws secret in a table']} |"),
    ("assistant", "Ordinary text survives: the quokka-zanzibar migration moved the billing cron to 03:15 UTC."),
]
ORDINARY = "quokka-zanzibar migration moved the billing cron"

# Runs `python -m wwt ...` with every way out of the process replaced by a stub that records the attempt.
NET_BLOCK = """
import os, runpy, socket, sys
def _deny(*args, **kwargs):
    with open(os.environ["WWT_NET_LOG"], "a") as fh:
        fh.write(repr(args[1:3]) + "\\n")
    raise OSError("network access blocked by the test")
socket.socket.connect = socket.socket.connect_ex = socket.socket.sendto = _deny
socket.getaddrinfo = socket.create_connection = _deny
sys.argv = ["wwt", *sys.argv[1:]]
runpy.run_module("wwt", run_name="__main__", alter_sys=True)
"""


def claude_turns(path: Path, session_id: str, turns: list[tuple[str, str]]) -> None:
    lines = path.read_text().splitlines()
    parent = json.loads(lines[-1]).get("uuid")
    with open(path, "a", encoding="utf-8") as fh:
        for n, (role, text) in enumerate(turns):
            uid = str(uuid.uuid4())
            message = {"role": role, "content": text if role == "user" else [{"type": "text", "text": text}]}
            if role == "assistant":
                message.update({"id": f"msg_{uid[:8]}", "type": "message", "model": "claude-sonnet-4-5"})
            fh.write(json.dumps({
                "parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/home/dev/billing",
                "sessionId": session_id, "version": "2.0.14", "gitBranch": "main", "type": role, "message": message,
                "uuid": uid, "timestamp": f"2025-10-13T10:{n:02d}:00.000Z",
            }) + "\n")
            parent = uid


def blocked(args: list[str], env: dict[str, str], log: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", NET_BLOCK, *args]
    if shutil.which("unshare") and subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0:
        command = ["unshare", "-n", *command]  # and no network namespace to reach anything anyway
    return subprocess.run(command, capture_output=True, text=True, env=dict(env, WWT_NET_LOG=str(log)),
                          stdin=subprocess.DEVNULL, timeout=600, preexec_fn=lambda: os.umask(0o022))


@pytest.fixture(scope="module")
def secret_archive(tmp_path_factory: pytest.TempPathFactory, model_dir: Path) -> dict:
    root = tmp_path_factory.mktemp("privacy")
    logs = root / "logs"
    logs.mkdir()
    path, sid = fresh_copy(*GROWING[0], logs)
    claude_turns(path, sid, TURNS)
    other, other_sid = fresh_copy(*GROWING[1], logs)
    home = root / "data"
    env = wwt_env(home, model_dir)
    net_log = root / "net.log"
    proc = blocked(["ingest", str(logs)], env, net_log)
    assert proc.returncode == 0, proc.stderr
    # a hook call writes the log too (a bad payload: logged, no worker started)
    subprocess.run([sys.executable, "-m", "wwt", "hook", "claude-code"], input="{not json", text=True, env=env,
                   capture_output=True, timeout=60, check=True)
    return {"root": root, "logs": logs, "home": home, "env": env, "sid": sid, "other_sid": other_sid,
            "net_log": net_log}


def raw_bytes(home: Path) -> dict[Path, bytes]:
    """Every byte wwt wrote: the SQLite file and its WAL, both indexes, the log, the locks."""
    return {p: p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()}


def test_no_secret_reaches_sqlite_the_indexes_or_the_log_and_ordinary_text_is_intact(secret_archive: dict) -> None:
    files = raw_bytes(secret_archive["home"])
    assert any(p.name == "wwt.sqlite3" for p in files) and any("lexical" in p.parts for p in files)
    assert any(p.name == "ingest.log" for p in files) and any("vectors" in p.parts for p in files)
    leaks = {(name, p.name) for name, secret in SECRETS.items() for p, data in files.items() if secret.encode() in data}
    assert not leaks, leaks
    assert any(ORDINARY.encode() in data for data in files.values())
    terms = lexical_terms(secret_archive["home"])  # tantivy stores lower-cased terms in a compressed dictionary
    assert any("quokka" in t for t in terms)
    in_index = {name for name, secret in SECRETS.items() if any(secret.lower() in t for t in terms)}
    assert not in_index, in_index
    shown = run_wwt("show", secret_archive["sid"], "--full", "--limit", "200", env=secret_archive["env"])
    assert shown.returncode == 0 and ORDINARY in shown.stdout and "[REDACTED:" in shown.stdout


def test_ingest_and_search_run_with_the_network_blocked_and_never_try_it(secret_archive: dict) -> None:
    found = blocked(["search", "--all", "--json", "when did the billing cron move"], secret_archive["env"],
                    secret_archive["net_log"])
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["session_id"] == secret_archive["sid"]
    attempts = secret_archive["net_log"].read_text() if secret_archive["net_log"].exists() else ""
    assert attempts == "", f"network was attempted: {attempts}"


def test_data_dir_is_0700_every_file_0600_and_doctor_names_any_leak(
    secret_archive: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    from wwt.doctor import FAIL, check_store

    home = secret_archive["home"]
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in [home, *home.rglob("*")]}
    open_to_others = {str(p.relative_to(home.parent)): oct(m) for p, m in modes.items() if m & 0o077}
    assert not open_to_others  # created under umask 022: wwt restricts them itself
    assert modes[home] == 0o700 and modes[home / "ingest.log"] == 0o600

    monkeypatch.setenv("WWT_HOME", str(home))
    assert not [f for f in check_store() if f.status == FAIL]
    index_file = next(p for p in (home / "index").rglob("*") if p.is_file())
    for leaked in (index_file, home / "ingest.log"):
        mode = leaked.stat().st_mode
        leaked.chmod(0o644)
        try:
            failures = [f for f in check_store() if f.status == FAIL]
            assert failures and str(leaked) in failures[0].message and "chmod" in failures[0].fix
        finally:
            leaked.chmod(stat.S_IMODE(mode))


def lexical_terms(home: Path) -> list[str]:
    """Every term of the lexical index's text field, asked from tantivy itself."""
    from wwt.indexes import Indexes

    indexes = Indexes.open(home / "index")
    try:
        return [term for term, _ in indexes.lexical._index.searcher().terms_with_prefix("body", "")]
    finally:
        indexes.close()


def lexical_hits(home: Path, query: str) -> list:
    from wwt.indexes import Indexes

    indexes = Indexes.open(home / "index")
    try:
        return indexes.lexical.search(query, None, 5)
    finally:
        indexes.close()


def _snapshot(home: Path) -> dict[str, str]:
    return {str(p.relative_to(home)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(home.rglob("*")) if p.is_file() and not p.name.endswith((".lock", "-shm"))}


HOSTILE_QUERIES = ['"unbalanced', "title:JOKE", "a AND", "OR OR NOT", "*", "(foo", "foo)", "-x", "^2", "fo~2",
                   "C:\\path\\x", "[1 TO", "{", "\\", "a:b:c", "+", '"', "🔥 مرحبا 한글"]


def test_mcp_server_only_reads_the_store_and_answers_hostile_queries(
    secret_archive: dict, tmp_path: Path
) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    home = tmp_path / "data"
    shutil.copytree(secret_archive["home"], home)
    env = dict(secret_archive["env"], WWT_HOME=str(home))
    chats = Path(env["HOME"]) / ".gemini" / "tmp" / tmp_path.name / "chats"  # MCP ingests only agents' log folders
    chats.mkdir(parents=True)
    new_log, _ = fresh_copy(*GROWING[2], chats)
    results: dict[str, object] = {}

    async def body() -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "wwt", "mcp"], env=env, cwd=str(tmp_path))
        with open(tmp_path / "stderr.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    await session.call_tool("search_all", {"query": "warm up"})
                    before = _snapshot(home)
                    for q in HOSTILE_QUERIES:
                        r = await session.call_tool("search_all", {"query": q})
                        results[q] = (r.is_error, "".join(getattr(c, "text", "") for c in r.content))
                    page = await session.call_tool("get_session", {"session_id": secret_archive["sid"]})
                    results["page"] = page.is_error
                    results["reads_wrote"] = {k for k in set(before) | set(_snapshot(home))
                                              if before.get(k) != _snapshot(home).get(k)}
                    ingested = await session.call_tool("ingest_session", {"path": str(new_log)})
                    results["ingest"] = ingested.is_error
                    results["ingest_wrote"] = _snapshot(home) != before

    asyncio.run(asyncio.wait_for(body(), timeout=300))
    errors = {q: r[1][:120] for q, r in results.items() if isinstance(r, tuple) and r[0]}
    assert not errors, errors
    assert results["page"] is False and results["ingest"] is False
    assert results["reads_wrote"] == set()
    assert results["ingest_wrote"] is True  # the one tool allowed to write did


def test_forget_removes_a_conversation_from_sqlite_and_both_indexes_for_good(
    secret_archive: dict, tmp_path: Path
) -> None:
    home = tmp_path / "data"
    shutil.copytree(secret_archive["home"], home)
    env = dict(secret_archive["env"], WWT_HOME=str(home))
    other_text = b"JOKE.md"  # the Codex session's own words: must survive
    assert lexical_hits(home, "quokka zanzibar")  # tantivy compresses its terms: ask it instead
    gone = run_wwt("forget", secret_archive["sid"], "--yes", env=env)
    assert gone.returncode == 0, gone.stderr
    files = raw_bytes(home)
    holders = [str(p.relative_to(home)) for p, data in files.items() if ORDINARY.encode() in data
               or b"quokka" in data or b"zanzibar" in data]
    assert not holders, holders
    assert any(other_text in data for p, data in files.items() if p.name == "wwt.sqlite3")
    assert indexes_agree(home) and not lexical_hits(home, "quokka zanzibar")
    again = run_wwt("ingest", str(secret_archive["logs"]), env=env)  # the log is still there
    assert again.returncode == 0
    shown = run_wwt("show", secret_archive["sid"], env=env)
    assert shown.returncode != 0 and "no archived session" in shown.stderr
