"""`wwt setup`: hooks + MCP registration for Claude Code, Gemini CLI, Codex CLI and Qwen Code in a fake HOME holding
realistic existing configs (other hooks and servers, unknown keys, TOML comments)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import tomlkit

from wwt.errors import WwtError
from wwt.setup import claude, codex, gemini, qwen
from wwt.setup.common import HOOK_MARK, our_handlers, remove_hooks, upsert_hook
from wwt.setup.configfile import ConfigFormatError
from wwt.setup.plan import run

FIXTURE_HOME = Path(__file__).parent / "fixtures" / "homes" / "full"
AGENT_BINARIES = ("claude", "gemini", "codex", "qwen")
CONFIG_FILES = (
    ".claude/settings.json", ".claude.json", ".gemini/settings.json", ".codex/config.toml", ".qwen/settings.json"
)


def _clean_path(extra: Path | None = None) -> str:
    """PATH without any real agent binary (and with ``extra`` first, for fake ones)."""
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    kept = [d for d in dirs if not any((Path(d) / b).exists() for b in AGENT_BINARIES)]
    return os.pathsep.join(([str(extra)] if extra else []) + kept)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    shutil.copytree(FIXTURE_HOME, h)
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("WWT_HOME", str(tmp_path / "wwt-data"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("PATH", _clean_path())
    return h


def toml_loads(text: str) -> dict:
    return tomlkit.parse(text).unwrap()


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def load(home: Path, rel: str) -> dict:
    text = (home / rel).read_text()
    return toml_loads(text) if rel.endswith(".toml") else json.loads(text)


def test_setup_registers_every_agent_and_keeps_unrelated_content(home: Path) -> None:
    original = {rel: load(home, rel) for rel in CONFIG_FILES}
    run(use_agent_cli=False)

    settings = load(home, ".claude/settings.json")
    for event in ("Stop", "SessionEnd"):
        [ours] = our_handlers(settings["hooks"], event)
        assert ours["command"].endswith("-m wwt hook claude-code")
        assert ours["type"] == "command"
    # the user's own Stop hook and PreToolUse hook, and unknown keys, are still there
    assert settings["hooks"]["Stop"][0] == original[".claude/settings.json"]["hooks"]["Stop"][0]
    assert settings["hooks"]["PreToolUse"] == original[".claude/settings.json"]["hooks"]["PreToolUse"]
    for key in ("permissions", "env", "statusLine", "enabledPlugins", "cleanupPeriodDays", "$schema"):
        assert settings[key] == original[".claude/settings.json"][key]

    claude_json = load(home, ".claude.json")
    assert claude_json["mcpServers"]["github"] == original[".claude.json"]["mcpServers"]["github"]
    assert claude_json["mcpServers"]["wwt"]["args"][-1] == "mcp"
    assert claude_json["projects"] == original[".claude.json"]["projects"]
    assert claude_json["numStartups"] == 214

    gem = load(home, ".gemini/settings.json")
    assert gem["hooksConfig"]["enabled"] is True
    for event in ("AfterAgent", "SessionEnd"):
        [ours] = our_handlers(gem["hooks"], event)
        assert ours["timeout"] >= 1000  # Gemini timeouts are milliseconds
    assert gem["hooks"]["BeforeTool"] == original[".gemini/settings.json"]["hooks"]["BeforeTool"]
    assert gem["mcpServers"]["context7"] == original[".gemini/settings.json"]["mcpServers"]["context7"]
    assert gem["mcpServers"]["wwt"]["args"][-1] == "mcp"

    toml_text = (home / ".codex/config.toml").read_text()
    cfg = toml_loads(toml_text)
    assert cfg["features"]["codex_hooks"] is True
    assert cfg["features"]["web_search_request"] is True
    assert cfg["mcp_servers"]["github"] == original[".codex/config.toml"]["mcp_servers"]["github"]
    assert cfg["mcp_servers"]["wwt"]["args"][-1] == "mcp"
    assert set(cfg["mcp_servers"]["wwt"]) <= {"command", "args", "env", "startup_timeout_sec", "tools"}  # deny_unknown_fields
    # Codex 0.171's per-tool approval ("auto", "prompt", "writes", "approve": the variants its config parser names):
    # the read-only tools run without asking, archiving a file asks as before
    assert cfg["mcp_servers"]["wwt"]["tools"] == {
        name: {"approval_mode": "approve"} for name in ("search_memory", "search_all", "get_session")}
    assert "tools" not in cfg["mcp_servers"]["github"]
    assert "# Codex CLI configuration — hand-edited, keep the comments!" in toml_text
    assert "# medium was too slow to converge" in toml_text
    [ours] = our_handlers(load(home, ".codex/hooks.json")["hooks"], "Stop")
    assert ours["command"].endswith("wwt hook codex-cli")

    qwen = load(home, ".qwen/settings.json")
    for event in ("Stop", "SessionEnd"):  # Qwen Code names its hook events as Claude Code does
        [ours] = our_handlers(qwen["hooks"], event)
        assert ours["command"].endswith("-m wwt hook qwen-code")
        assert ours["timeout"] >= 1000  # Qwen timeouts are milliseconds
    assert qwen["hooks"]["Stop"][0] == original[".qwen/settings.json"]["hooks"]["Stop"][0]
    assert qwen["hooks"]["PreToolUse"] == original[".qwen/settings.json"]["hooks"]["PreToolUse"]
    assert qwen["mcpServers"]["filesystem"] == original[".qwen/settings.json"]["mcpServers"]["filesystem"]
    assert qwen["mcpServers"]["wwt"]["args"][-1] == "mcp"
    assert "hooksConfig" not in qwen and "disableAllHooks" not in qwen  # Qwen runs hooks unless told not to


def test_second_setup_changes_no_byte_and_makes_no_backup(home: Path) -> None:
    run(use_agent_cli=False)
    first = snapshot(home)
    _, done = run(use_agent_cli=False)
    assert snapshot(home) == first
    assert all(line.startswith("unchanged") for line in done)


def test_uninstall_gives_the_original_content_back(home: Path) -> None:
    before_text = {rel: (home / rel).read_text() for rel in CONFIG_FILES}
    run(use_agent_cli=False)
    run(use_agent_cli=False)
    run(uninstall=True, use_agent_cli=False)
    for rel in CONFIG_FILES:
        if rel.endswith(".toml"):
            assert (home / rel).read_text() == before_text[rel]  # comments and order too
        else:
            assert json.loads((home / rel).read_text()) == json.loads(before_text[rel])
    assert not (home / ".codex/hooks.json").exists()  # setup created it; uninstall removes it


def test_uninstall_removes_only_our_entries_when_user_changed_things_since(home: Path) -> None:
    run(use_agent_cli=False)
    settings = load(home, ".claude/settings.json")
    settings["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "notify-send done"}]})
    (home / ".claude/settings.json").write_text(json.dumps(settings))
    run(uninstall=True, use_agent_cli=False)
    after = load(home, ".claude/settings.json")
    commands = [h["command"] for g in after["hooks"]["Stop"] for h in g["hooks"]]
    assert commands == ["afplay /System/Library/Sounds/Glass.aiff", "notify-send done"]
    assert "SessionEnd" not in after["hooks"]


@pytest.mark.parametrize(
    ("rel", "garbage"),
    [(".claude/settings.json", '{"hooks": {"Stop": [}'), (".codex/config.toml", "[features\ncodex_hooks = true\n")],
)
def test_invalid_config_is_refused_and_nothing_is_written(home: Path, rel: str, garbage: str) -> None:
    (home / rel).write_text(garbage)
    before = snapshot(home)
    with pytest.raises(ConfigFormatError, match=str(home / rel)):
        run(use_agent_cli=False)
    assert snapshot(home) == before


def test_dry_run_prints_a_diff_and_changes_nothing(home: Path) -> None:
    before = snapshot(home)
    _, diff = run(dry_run=True, use_agent_cli=False)
    assert snapshot(home) == before
    assert f"+++ {home / '.claude/settings.json'}" in diff
    assert "+codex_hooks = true" in diff
    assert sum(1 for line in diff.splitlines() if line.startswith("+") and HOOK_MARK in line) == 8  # Codex: Stop and SessionEnd


def test_file_mode_is_kept_and_a_timestamped_backup_holds_the_old_content(home: Path) -> None:
    path = home / ".claude/settings.json"
    os.chmod(path, 0o640)
    original = path.read_bytes()
    run(use_agent_cli=False)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    [backup] = list(path.parent.glob("settings.json.wwt-backup-*"))
    assert backup.read_bytes() == original


def test_only_agents_found_on_the_machine_are_configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    h = tmp_path / "home"
    (h / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("WWT_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("PATH", _clean_path())
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    plan, _ = run(use_agent_cli=False)
    assert [a.PLATFORM for a in plan.agents] == ["claude-code"]
    assert (h / ".claude/settings.json").exists() and (h / ".claude.json").exists()
    assert not (h / ".gemini").exists() and not (h / ".codex").exists()


def test_claude_config_dir_and_codex_home_are_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    h, cdir, xdir = tmp_path / "home", tmp_path / "claude-cfg", tmp_path / "codex-home"
    for d in (h, cdir, xdir):
        d.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("WWT_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(cdir))
    monkeypatch.setenv("CODEX_HOME", str(xdir))
    monkeypatch.setenv("PATH", _clean_path())
    run(use_agent_cli=False)
    assert our_handlers(json.loads((cdir / "settings.json").read_text())["hooks"], "Stop")
    assert "wwt" in json.loads((cdir / ".claude.json").read_text())["mcpServers"]
    assert "wwt" in toml_loads((xdir / "config.toml").read_text())["mcp_servers"]
    assert (xdir / "hooks.json").exists()
    assert not (h / ".claude").exists() and not (h / ".codex").exists()


def test_gemini_hooks_switched_off_by_the_user_are_switched_on_and_restored(home: Path) -> None:
    path = home / ".gemini/settings.json"
    data = json.loads(path.read_text())
    data["hooksConfig"] = {"enabled": False, "disabled": ["shell-audit"]}
    path.write_text(json.dumps(data, indent=2))
    run(use_agent_cli=False)
    assert load(home, ".gemini/settings.json")["hooksConfig"] == {"enabled": True, "disabled": ["shell-audit"]}
    run(uninstall=True, use_agent_cli=False)
    assert load(home, ".gemini/settings.json") == data


def test_codex_feature_flag_name_follows_the_installed_version() -> None:
    assert codex.feature_key((0, 130, 2)) == "hooks"
    assert codex.feature_key((0, 128, 0)) == "codex_hooks"
    assert codex.feature_key(None) == "codex_hooks"
    assert codex.parse_version("codex-cli 0.129.0\n") == (0, 129, 0)


def test_existing_codex_feature_flag_is_left_alone(home: Path) -> None:
    path = home / ".codex/config.toml"
    path.write_text(path.read_text().replace("web_search_request = true", "web_search_request = true\nhooks = true"))
    before = path.read_text()
    run(use_agent_cli=False)
    after = toml_loads(path.read_text())
    assert after["features"] == {"web_search_request": True, "hooks": True}
    run(uninstall=True, use_agent_cli=False)
    assert path.read_text() == before


def test_hook_upsert_collapses_duplicates_and_keeps_neighbours() -> None:
    ours_old = {"type": "command", "command": "/old/wwt hook claude-code"}
    theirs = {"type": "command", "command": "say done"}
    hooks = {"Stop": [{"hooks": [theirs, ours_old]}, {"hooks": [dict(ours_old)]}]}
    new = {"type": "command", "command": "/new/python -m wwt hook claude-code", "timeout": 10}
    upsert_hook(hooks, "Stop", new, "test")
    assert hooks == {"Stop": [{"hooks": [theirs, new]}]}
    remove_hooks(hooks, "Stop", "test")
    assert hooks == {"Stop": [{"hooks": [theirs]}]}


def test_hooks_of_the_wrong_shape_are_refused() -> None:
    with pytest.raises(ConfigFormatError):
        upsert_hook({"Stop": {"not": "a list"}}, "Stop", {"command": "wwt hook x"}, "settings.json")


def test_unknown_agent_name_is_a_clear_error(home: Path) -> None:
    with pytest.raises(WwtError, match="unknown agent"):
        run(only=["windsurf"], use_agent_cli=False)  # cursor and copilot are agents now


FAKE_AGENT = r'''#!{python}
"""Fake `{name}` CLI: records argv; `mcp add` / `mcp remove` really edit {config} like the agent would."""
import json, os, sys
from pathlib import Path
with open(os.environ["FAKE_AGENT_LOG"], "a") as fh:
    fh.write(json.dumps(["{name}", *sys.argv[1:]]) + "\n")
cfg = Path(os.environ["HOME"]) / "{config}"
data = json.loads(cfg.read_text()) if cfg.exists() else {{}}
args = sys.argv[1:]
if args[:2] == ["mcp", "add"]:
    rest = args[args.index("--") + 1:] if "--" in args else args[args.index("wwt") + 1:]
    data.setdefault("mcpServers", {{}})["wwt"] = {{"type": "stdio", "command": rest[0], "args": rest[1:]}}
elif args[:2] == ["mcp", "remove"]:
    data.get("mcpServers", {{}}).pop("wwt", None)
cfg.write_text(json.dumps(data, indent=2))
'''


def fake_agent_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, config: str) -> Path:
    """Put a fake ``name`` CLI (FAKE_AGENT, writing ``~/<config>``) alone on PATH; returns the log of its argv."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / name
    fake.write_text(FAKE_AGENT.format(python=sys.executable, name=name, config=config))
    fake.chmod(0o755)
    log = tmp_path / "argv.log"
    monkeypatch.setenv("FAKE_AGENT_LOG", str(log))
    monkeypatch.setenv("PATH", _clean_path(bin_dir))
    monkeypatch.delenv("WWT_MODEL_DIR", raising=False)
    return log


def claude_mcp_add_name(args: list[str]) -> str:
    """The server name `claude mcp add` reads from ``args`` the way its commander parser does: `-e/--env
    <env...>` is variadic (it takes every following word up to the next option or `--`, each must be KEY=VALUE),
    `-s/--scope` and `-t/--transport` take one; the first free word before `--` is the name."""
    free: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            break
        if word in ("-e", "--env"):
            i += 1
            while i < len(args) and not args[i].startswith("-"):
                assert "=" in args[i], f"Invalid environment variable format: {args[i]}"
                i += 1
            continue
        if word in ("-s", "--scope", "-t", "--transport"):
            i += 2
            continue
        free.append(word)
        i += 1
    assert free, "missing required argument 'name'"
    return free[0]


def test_agent_cli_is_preferred_for_mcp_registration(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = fake_agent_on_path(tmp_path, monkeypatch, "claude", ".claude.json")
    run(only=["claude"])
    [call] = [json.loads(line) for line in log.read_text().splitlines()]
    assert call[:3] == ["claude", "mcp", "add"] and "--scope" in call and "user" in call
    assert claude_mcp_add_name(call[3:]) == "wwt" and call[-1] == "mcp"
    assert "WWT_HOME=" + os.environ["WWT_HOME"] in call  # the custom data dir reaches the server
    run(only=["claude"])  # already registered with the same command: the CLI is not called again
    assert len(log.read_text().splitlines()) == 1
    run(only=["claude"], uninstall=True)
    assert json.loads(log.read_text().splitlines()[-1])[:3] == ["claude", "mcp", "remove"]
    assert "wwt" not in load(home, ".claude.json")["mcpServers"]


def test_a_failing_agent_cli_falls_back_to_editing_the_file(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "gemini"
    fake.write_text("#!/bin/sh\necho 'unknown command mcp' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", _clean_path(bin_dir))
    _, done = run(only=["gemini"])
    assert any("CLI did not do it" in line for line in done)
    assert "wwt" in load(home, ".gemini/settings.json")["mcpServers"]


def _cli_env(home: Path, data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")}
    env.update(HOME=str(home), WWT_HOME=str(data), PATH=_clean_path())
    return env


def test_cli_setup_then_concurrent_setups_leave_valid_files(home: Path, tmp_path: Path) -> None:
    env = _cli_env(home, tmp_path / "wwt-data")
    procs = [
        subprocess.Popen([sys.executable, "-m", "wwt", "setup", "--no-ingest"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    assert any("updated" in out for out, _ in outs)
    for rel in CONFIG_FILES:
        load(home, rel)  # parses
    assert len(our_handlers(load(home, ".claude/settings.json")["hooks"], "Stop")) == 1
    assert len(our_handlers(load(home, ".gemini/settings.json")["hooks"], "AfterAgent")) == 1
    assert len(our_handlers(load(home, ".qwen/settings.json")["hooks"], "Stop")) == 1
    assert (home / ".codex/config.toml").read_text().count("[mcp_servers.wwt]") == 1
    assert "todo" in outs[0][0] + outs[1][0] + outs[2][0] and "/hooks" in outs[0][0]


def test_agent_modules_describe_their_files(home: Path) -> None:
    assert claude.settings_path() == home / ".claude/settings.json"
    assert claude.mcp_config_path() == home / ".claude.json"
    assert gemini.settings_path() == home / ".gemini/settings.json"
    assert codex.config_path() == home / ".codex/config.toml"
    assert qwen.settings_path() == qwen.mcp_config_path() == home / ".qwen/settings.json"


# ------------------------------------------------------------------------------------------------ doctor


def _by_area(findings, area: str):
    return [f for f in findings if f.area == area]


def test_doctor_passes_after_setup_and_first_ingest_and_names_each_problem(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model_dir: Path
) -> None:
    from wwt import paths
    from wwt.doctor import FAIL, OK, exit_code, run_checks
    from wwt.store import Store

    monkeypatch.setenv("WWT_MODEL_DIR", str(model_dir))
    run(use_agent_cli=False)
    findings = run_checks()
    assert all(f.status == OK for f in _by_area(findings, "Claude Code"))
    assert any(f.status == FAIL and "no store" in f.message for f in _by_area(findings, "store"))
    assert exit_code(findings) == 1

    Store.open(paths.store_path()).close()
    findings = run_checks()
    assert [f.status for f in findings if f.status == FAIL] == [], [f for f in findings if f.status == FAIL]
    assert any("trust" in f.message for f in _by_area(findings, "Codex CLI"))
    assert exit_code(findings) == 0

    os.chmod(paths.data_dir(), 0o755)
    settings = home / ".claude/settings.json"
    settings.write_text(settings.read_text().replace(sys.executable, "/gone/bin/python"))
    findings = run_checks()
    assert any(f.status == FAIL and "chmod 700" in f.fix for f in _by_area(findings, "store"))
    assert any(f.status == FAIL and "missing program" in f.message for f in _by_area(findings, "Claude Code"))
    assert exit_code(findings) == 1


def test_doctor_reports_unregistered_agents_and_a_missing_model(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from wwt.doctor import FAIL, run_checks

    monkeypatch.setenv("WWT_MODEL_DIR", str(home / "no-model-here"))
    findings = run_checks()
    assert any(f.status == FAIL and "no wwt hook for Stop" in f.message for f in _by_area(findings, "Claude Code"))
    assert any(f.status == FAIL and "feature flag" in f.message for f in _by_area(findings, "Codex CLI"))
    assert any(f.status == FAIL for f in _by_area(findings, "model"))


def test_doctor_cli_exit_code(home: Path, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "wwt", "doctor"], env=_cli_env(home, tmp_path / "wwt-data"),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "run `wwt setup`" in proc.stdout
