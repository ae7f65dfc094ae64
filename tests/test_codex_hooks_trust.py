"""Codex 0.17x (issue 25): a ``SessionEnd`` hook (wwt registered ``Stop`` only), and hook trust that wwt can
read back — once the user trusted wwt's hooks in ``/hooks`` (``[hooks.state."<key>"] trusted_hash`` in
``config.toml``), ``wwt doctor`` and ``wwt setup`` must stop asking them to.

The hashes below are what the real Codex CLI 0.171.0 reported for these hooks (``codex app-server`` →
``hooks/list`` → ``currentHash``), recorded from the CLI, not computed by wwt. ``test_hashes_agree_with_the_real
codex`` asks a Codex binary again when one is installed (``WWT_CODEX_BIN`` or ``codex`` on PATH)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wwt.setup import codex


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("WWT_HOME", str(tmp_path / "wwt-data"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return h


# codex-cli 0.171.0, hooks.json {"Stop": [… "wwt hook codex-cli", timeout 10], "SessionEnd": [… timeout 3]}
REAL_CODEX_HASHES = {
    ("Stop", "wwt hook codex-cli", 10): "sha256:29b0a69f230691391e8da1756116a8bdcfdfe8919e1a8440fc8bbc50bcc7962a",
    ("SessionEnd", "wwt hook codex-cli", 3): "sha256:38d085a4d0f3aa570173465b05fdc2ef5d0e65d41f6ad63ba07211e03b142263",
}


def test_trust_hash_is_the_one_codex_computes() -> None:
    for (event, command, timeout), expected in REAL_CODEX_HASHES.items():
        handler = {"type": "command", "command": command, "timeout": timeout}
        assert codex.trust_hash(event, handler) == expected


def test_codex_gets_a_session_end_hook_within_its_time_cap(home: Path) -> None:
    from wwt.setup.common import our_handlers
    from wwt.setup.plan import apply_plan, build_plan

    (home / ".codex").mkdir()
    apply_plan(build_plan(only=["codex-cli"], use_agent_cli=False))
    hooks = json.loads((home / ".codex/hooks.json").read_text())["hooks"]
    [stop] = our_handlers(hooks, "Stop")
    [end] = our_handlers(hooks, "SessionEnd")
    assert stop["timeout"] == 10 and end["timeout"] <= 3  # Codex clamps a SessionEnd hook to 3 s (and warns)
    assert end["command"] == stop["command"] and end["command"].endswith("wwt hook codex-cli")
    # `codex mcp add` has no startup timeout option: setup writes the entry itself, with one
    cfg = (home / ".codex/config.toml").read_text()
    assert "startup_timeout_sec" in cfg

    plan = build_plan(uninstall=True, only=["codex-cli"], use_agent_cli=False)
    apply_plan(plan)
    assert not (home / ".codex/hooks.json").exists()


def _trust(home: Path, events: tuple[str, ...]) -> None:
    """What Codex writes when the user trusts a hook in /hooks: the hook's key and its current hash."""
    hooks_file = home / ".codex" / "hooks.json"
    data = json.loads(hooks_file.read_text())["hooks"]
    lines = []
    for event in events:
        for g, group in enumerate(data[event]):
            for h, handler in enumerate(group["hooks"]):
                label = {"Stop": "stop", "SessionEnd": "session_end"}[event]
                # Codex's own hash for the handler, from the real CLI's answer above where it applies
                cmd = handler["command"]
                digest = REAL_CODEX_HASHES.get((event, cmd, handler["timeout"])) or codex.trust_hash(event, handler)
                lines.append(f'[hooks.state."{hooks_file}:{label}:{g}:{h}"]\ntrusted_hash = "{digest}"\n')
    with open(home / ".codex" / "config.toml", "a", encoding="utf-8") as fh:
        fh.write("\n" + "\n".join(lines))


def _doctor_codex(home: Path) -> list:
    from wwt.doctor import check_agent

    return check_agent(codex)


def test_doctor_and_setup_stop_asking_once_the_hooks_are_trusted(home: Path) -> None:
    from wwt.setup.plan import apply_plan, build_plan

    (home / ".codex").mkdir()
    plan = build_plan(only=["codex-cli"], use_agent_cli=False)
    apply_plan(plan)
    assert any("trust" in n for n in plan.notes)
    asks = [f for f in _doctor_codex(home) if "trust" in (f.message + f.fix)]
    assert asks and all(f.status == "info" for f in asks)

    _trust(home, ("Stop",))  # one of two trusted: still asked, for SessionEnd only
    [ask] = [f for f in _doctor_codex(home) if "trust" in (f.message + f.fix) and f.status != "ok"]
    assert "SessionEnd" in ask.message + ask.fix and "Stop" not in (ask.message + ask.fix).replace("SessionEnd", "")

    _trust(home, ("SessionEnd",))
    findings = _doctor_codex(home)
    assert not [f for f in findings if f.status != "ok" and "trust" in (f.message + f.fix)], findings
    assert any(f.status == "ok" and "trusted" in f.message for f in findings)
    again = build_plan(only=["codex-cli"], use_agent_cli=False)
    assert not any("trust" in n for n in again.notes), again.notes


def test_a_changed_or_switched_off_hook_is_named(home: Path) -> None:
    from wwt.setup.plan import apply_plan, build_plan

    (home / ".codex").mkdir()
    apply_plan(build_plan(only=["codex-cli"], use_agent_cli=False))
    hooks_file = home / ".codex" / "hooks.json"
    with open(home / ".codex" / "config.toml", "a", encoding="utf-8") as fh:
        fh.write(f'\n[hooks.state."{hooks_file}:stop:0:0"]\ntrusted_hash = "sha256:{"0" * 64}"\n'
                 f'\n[hooks.state."{hooks_file}:session_end:0:0"]\nenabled = false\n')
    findings = [f for f in _doctor_codex(home) if f.status != "ok"]
    text = " ".join(f.message + " " + f.fix for f in findings)
    assert "changed since" in text and "Stop" in text
    assert any(f.status == "warn" and "SessionEnd" in f.message and "off" in f.message for f in findings)


def _codex_binary() -> str | None:
    found = os.environ.get("WWT_CODEX_BIN") or shutil.which("codex")
    return found if found and os.access(found, os.X_OK) else None


def test_hashes_agree_with_the_real_codex(tmp_path: Path) -> None:
    exe = _codex_binary()
    if exe is None:
        pytest.skip("no Codex CLI here (set WWT_CODEX_BIN or put codex on PATH) — the recorded hashes are checked above")
    home = tmp_path / "home"
    cx = home / ".codex"
    cx.mkdir(parents=True)
    env = {**os.environ, "HOME": str(home), "CODEX_HOME": str(cx)}
    subprocess.run([sys.executable, "-m", "wwt", "setup", "--agent", "codex", "--no-ingest"], env=env,
                   capture_output=True, timeout=300, check=False)
    if not (cx / "hooks.json").exists():
        pytest.skip("wwt setup did not wire Codex here")
    proc = subprocess.Popen([exe, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, text=True, cwd=str(home))
    try:
        assert proc.stdin and proc.stdout
        for msg in ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "0"}}},
                    {"jsonrpc": "2.0", "method": "initialized"},
                    {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(home)]}}):
            proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            assert line, "codex app-server closed without answering hooks/list"
            reply = json.loads(line)
            if reply.get("id") == 2:
                break
    finally:
        proc.kill()
    listed = [h for d in reply["result"]["data"] for h in d["hooks"] if "wwt hook" in (h.get("command") or "")]
    assert {h["eventName"] for h in listed} == {"stop", "sessionEnd"}
    data = json.loads((cx / "hooks.json").read_text())["hooks"]
    for h in listed:
        event = {"stop": "Stop", "sessionEnd": "SessionEnd"}[h["eventName"]]
        [ours] = [x for g in data[event] for x in g["hooks"] if "wwt hook" in x["command"]]
        assert h["currentHash"] == codex.trust_hash(event, ours)


def test_the_plugins_hooks_are_judged_by_codexs_plugin_keys(home: Path) -> None:
    """Codex 0.171 lists a plugin's hook as ``wwt@<marketplace>:hooks/hooks.json:<event>:<group>:<handler>``
    with ``currentHash`` = the hook's hash, "/", the plugin files' hash (as `hooks/list` answered for
    plugins/codex-cli installed with `codex plugin add wwt@wwt`)."""
    from wwt.doctor import check_agent

    (home / ".codex").mkdir()
    stop = REAL_CODEX_HASHES[("Stop", "wwt hook codex-cli", 10)]
    (home / ".codex" / "config.toml").write_text(
        '[features]\nhooks = true\n\n[plugins."wwt@wwt"]\nenabled = true\n\n'
        f'[hooks.state."wwt@wwt:hooks/hooks.json:stop:0:0"]\ntrusted_hash = "{stop}/sha256:{"b" * 64}"\n')
    findings = check_agent(codex)
    assert any(f.status == "ok" and "Stop hook trusted" in f.message for f in findings), findings
    [ask] = [f for f in findings if f.status == "info" and "trust" in f.fix]
    assert "SessionEnd" in ask.message and "plugin" in ask.fix


def test_setup_asks_again_when_it_changes_a_trusted_hook(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hook trusted for one wwt (its python path in the command) is a new hook to Codex once setup writes
    another command there: setup's note must ask again."""
    from wwt.setup.plan import apply_plan, build_plan

    (home / ".codex").mkdir()
    apply_plan(build_plan(only=["codex-cli"], use_agent_cli=False))
    _trust(home, ("Stop", "SessionEnd"))
    assert not any("trust" in n for n in build_plan(only=["codex-cli"], use_agent_cli=False).notes)
    monkeypatch.setenv("WWT_MODEL_DIR", str(home / "another-model"))  # goes into the hook command line
    plan = build_plan(only=["codex-cli"], use_agent_cli=False)
    assert any("trust" in n and "Stop" in n and "SessionEnd" in n for n in plan.notes), plan.notes
