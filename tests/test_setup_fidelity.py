"""`wwt setup` keeps the user's config files as they wrote them, through the real CLI in a fake HOME.

Setup adds its entries and nothing else (layout, number spellings, escapes, CRLF, a missing final newline all
stay); `setup --uninstall` then gives every file back byte for byte. Files kept as symlinks (dotfiles repos) are
written through and stay links. What only lenient readers accept (NaN, Infinity, a key twice), broken links, link
loops and read-only files are refused with one line and nothing changes.

The config shapes are re-created from the agents' docs (agent-log-formats §1.5/§1.6/§2.4/§2.5/§3.6) and from
public dotfiles (a Nix home-manager Claude settings file, stow-style relative links, Codex configs with dotted
keys, multi-line arrays and ``60_000``), written in our own words."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_setup import _clean_path

from wwt.setup import jsonedit

CONFIGS = (".claude/settings.json", ".claude.json", ".gemini/settings.json", ".codex/config.toml", ".qwen/settings.json")

CLAUDE_AS_CLAUDE_WRITES = """{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(git status:*)",
      "Bash(npm run test:*)",
      "WebFetch(domain:docs.python.org)"
    ],
    "deny": [
      "Bash(rm -rf:*)"
    ],
    "defaultMode": "acceptEdits"
  },
  "hooks": {
    "Stop": [
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "terminal-notifier -message 'Claude is done'"
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [
          {
            "type": "command",
            "command": "npx prettier --write \\"$CLAUDE_FILE_PATHS\\"",
            "timeout": 30
          }
        ]
      }
    ]
  },
  "statusLine": {
    "type": "command",
    "command": "~/.claude/statusline.sh"
  },
  "alwaysThinkingEnabled": true
}
"""

CLAUDE_STATE_FILE = """{
  "numStartups": 41,
  "installMethod": "native",
  "autoUpdates": false,
  "tipsHistory": {
    "new-user-warmup": 7
  },
  "firstStartTime": "2026-02-11T09:14:03.512Z",
  "projects": {
    "/home/dev/src/api": {
      "allowedTools": [],
      "mcpServers": {},
      "hasTrustDialogAccepted": true,
      "lastCost": 0.4812,
      "lastDuration": 918273
    }
  },
  "mcpServers": {}
}
"""

GEMINI_INLINE = """{
  "general": {"preferredEditor": "vim", "checkpointing": {"enabled": true}},
  "ui": {"theme": "GitHub"},
  "mcpServers": {
    "context7": {"httpUrl": "https://mcp.context7.com/mcp", "timeout": 30000}
  },
  "security": {"auth": {"selectedType": "oauth-personal"}}
}
"""

CODEX_DOTTED = """# ~/.codex/config.toml (managed in ~/dotfiles)
model = "gpt-5-codex"
model_reasoning_effort = "high"  # low | medium | high
tools.web_search = true

[mcp_servers.docs]
url = "https://mcp.deepwiki.com/mcp"

[projects."/home/dev/src/api"]
trust_level = "trusted"
"""

# A hand-kept file: 4-space indent, an empty array over two lines (as Nix home-manager writes one), escapes and
# numbers that a re-serialiser would rewrite (1e400 becomes Infinity, which Node refuses), no final newline.
CLAUDE_HAND_KEPT = """{
    "permissions": {
        "allow": [
            "Read(~/.zshrc)"
        ],
        "deny": [
        ]
    },
    "includeCoAuthoredBy": false,
    "env": {
        "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
        "GREETING": "caf\\u00e9 \\ud83d\\ude00 — ☕",
        "PATH_HINT": "C:\\\\tools\\/bin"
    },
    "cleanupPeriodDays": 1e400,
    "feedbackSurveyRate": 0.050,
    "maxTokens": 12345678901234567890,
    "offset": -0,
    "scale": 1E+2
}"""

GEMINI_TABS = (
    '{\n\t"hooksConfig": {"enabled": false, "disabled": ["lint-on-save"]},\n\t"hooks": {},\n'
    '\t"model": {"name": "gemini-2.5-pro", "maxSessionTurns": 1.5e2}\n}\n'
)

CODEX_CRLF = (
    'model = "o3"\r\n\r\n[features]\r\nweb_search_request = true\r\n\r\n[mcp_servers.fs]\r\ncommand = "npx"\r\n'
    'args = [\r\n    "-y",\r\n    "@modelcontextprotocol/server-filesystem",\r\n    "/home/dev/src",\r\n]\r\n'
    "startup_timeout_ms = 60_000\r\n"
)

# Qwen Code writes its settings with JSON.stringify(…, null, 2) (its `mcp add`), keeps the user's hooks with
# Claude's event names and timeouts in milliseconds (QwenLM/qwen-code docs/users/features/hooks.md)
QWEN_AS_QWEN_WRITES = """{
  "$version": 2,
  "model": {
    "name": "qwen3-coder-plus"
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "^(write_file|edit)$",
        "hooks": [
          {
            "type": "command",
            "command": "$QWEN_PROJECT_DIR/.qwen/hooks/guard.sh",
            "name": "guard",
            "timeout": 10000
          }
        ]
      }
    ]
  },
  "mcpServers": {
    "playwright": {
      "command": "npx",
      "args": [
        "@playwright/mcp@latest"
      ]
    }
  }
}"""

QWEN_HAND_KEPT = '{\n\t"disableAllHooks": false,\n\t"hooks": {"Stop": []},\n\t"ui": {"theme": "Qwen Dark", "hideTips": true}\n}\n'

HOMES = {
    "as-the-agents-write-them": {
        ".claude/settings.json": CLAUDE_AS_CLAUDE_WRITES,
        ".claude.json": CLAUDE_STATE_FILE,
        ".gemini/settings.json": GEMINI_INLINE,
        ".codex/config.toml": CODEX_DOTTED,
        ".qwen/settings.json": QWEN_AS_QWEN_WRITES,
    },
    "hand-kept": {
        ".claude/settings.json": CLAUDE_HAND_KEPT,
        ".claude.json": '{"numStartups":3,"autoUpdates":false}',
        ".gemini/settings.json": GEMINI_TABS,
        ".codex/config.toml": CODEX_CRLF,
        ".qwen/settings.json": QWEN_HAND_KEPT,
    },
    "minimal": {
        ".claude/settings.json": "{}\n",
        ".claude.json": "{}",
        ".gemini/settings.json": '{\n  "ui": {\n    "theme": "Default"\n  }\n}',
        ".codex/config.toml": 'model = "gpt-5-codex"',
        ".qwen/settings.json": "{}",
    },
    "windows-line-ends": {
        ".claude/settings.json": '{\r\n  "hooks": {\r\n    "SessionEnd": []\r\n  },\r\n  "model": "sonnet"\r\n}\r\n',
        ".claude.json": '{\r\n  "mcpServers": {\r\n    "github": {\r\n      "command": "npx"\r\n    }\r\n  }\r\n}\r\n',
        ".gemini/settings.json": '{\r\n  "ui": {"theme": "GitHub"}\r\n}\r\n',
        ".codex/config.toml": '[features]\r\n\r\n[tui]\r\nnotifications = true\r\n',
        ".qwen/settings.json": '{\r\n  "security": {"auth": {"selectedType": "qwen-oauth"}}\r\n}\r\n',
    },
}


def _env(home: Path, data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")}
    env.update(HOME=str(home), WWT_HOME=str(data), PATH=_clean_path())
    return env


def wwt_setup(home: Path, data: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wwt", "setup", "--no-ingest", "--no-agent-cli", *extra],
        env=_env(home, data), capture_output=True, text=True, timeout=180,
    )


def write_home(home: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_bytes(text.encode("utf-8"))


def strict_json(text: str) -> object:
    def refuse(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=refuse)


def is_subsequence(old: str, new: str) -> bool:
    """Every character of ``old`` is still in ``new``, in order: ``new`` only adds text."""
    it = iter(new)
    return all(ch in it for ch in old)


def tree(root: Path) -> dict[str, tuple]:
    """Every entry below ``root``: links by where they point, files by bytes and mode."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_file():
                out[rel] = ("file", p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
    return out


@pytest.mark.parametrize("case", sorted(HOMES))
def test_setup_only_adds_and_uninstall_gives_every_byte_back(tmp_path: Path, case: str) -> None:
    home, data = tmp_path / "home", tmp_path / "data"
    files = HOMES[case]
    write_home(home, files)

    proc = wwt_setup(home, data)
    assert proc.returncode == 0, proc.stderr
    for rel in (".claude/settings.json", ".claude.json", ".gemini/settings.json", ".qwen/settings.json"):
        text = (home / rel).read_bytes().decode()
        strict_json(text)  # Node-readable: no Infinity/NaN written
        assert "wwt" in text
        if rel.startswith((".claude", ".qwen")):
            assert is_subsequence(files[rel], text), rel
    if case == "hand-kept":
        settings_text = (home / ".claude/settings.json").read_text()
        for literal in ("1e400", "0.050", "12345678901234567890", "-0,", "1E+2", "caf\\u00e9 \\ud83d\\ude00 — ☕"):
            assert literal in settings_text
    if "\r\n" in files[".codex/config.toml"]:
        toml_bytes = (home / ".codex/config.toml").read_bytes()
        assert b"[mcp_servers.wwt]\r\n" in toml_bytes and b"\n" not in toml_bytes.replace(b"\r\n", b"")

    proc = wwt_setup(home, data, "--uninstall")
    assert proc.returncode == 0, proc.stderr
    for rel, text in files.items():
        assert (home / rel).read_bytes() == text.encode("utf-8"), rel
    assert not (home / ".codex/hooks.json").exists()


@pytest.mark.parametrize(
    ("rel", "text", "why"),
    [
        (".claude/settings.json", '{"model": "opus", "feedbackSurveyRate": NaN}\n', "NaN"),
        (".claude/settings.json", '{"cleanupPeriodDays": Infinity}\n', "Infinity"),
        (".gemini/settings.json", '{"ui": {"theme": "GitHub"}, "x": -Infinity}\n', "Infinity"),
        (".claude.json", '{"mcpServers": {}, "numStartups": 3, "mcpServers": {"a": {"command": "x"}}}\n', "twice"),
        (".codex/config.toml", 'mcp_servers = { github = { command = "npx" } }\n', "layout"),
    ],
)
def test_config_only_lenient_readers_accept_is_refused_with_one_line(
    tmp_path: Path, rel: str, text: str, why: str
) -> None:
    home, data = tmp_path / "home", tmp_path / "data"
    write_home(home, {**HOMES["minimal"], rel: text})
    before = tree(home)
    proc = wwt_setup(home, data)
    assert proc.returncode != 0
    [line] = proc.stderr.strip().splitlines()
    assert str(home / rel) in line and why in line
    assert tree(home) == before


def _dotfiles_home(tmp_path: Path) -> tuple[Path, Path]:
    """stow-style: the four settings files are relative links into ~/dotfiles."""
    home = tmp_path / "home"
    write_home(home, {".claude.json": "{}\n"})
    repo = home / "dotfiles"
    for rel, text in HOMES["as-the-agents-write-them"].items():
        if rel == ".claude.json":
            continue
        target = repo / rel.lstrip(".")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).symlink_to(os.path.relpath(target, (home / rel).parent))
    return home, repo


def test_symlinked_configs_are_written_through_and_stay_links(tmp_path: Path) -> None:
    home, repo = _dotfiles_home(tmp_path)
    links = {rel: os.readlink(home / rel) for rel in CONFIGS if (home / rel).is_symlink()}
    assert len(links) == 4
    originals = {rel: (home / rel).read_bytes() for rel in links}

    proc = wwt_setup(home, tmp_path / "data")
    assert proc.returncode == 0, proc.stderr
    for rel, where in links.items():
        assert (home / rel).is_symlink() and os.readlink(home / rel) == where
        assert b"wwt" in (home / rel).read_bytes()  # the edit landed in the dotfiles repo
        [backup] = (home / rel).parent.glob(Path(rel).name + ".wwt-backup-*")
        assert not backup.is_symlink() and backup.read_bytes() == originals[rel]
    assert not list(repo.rglob("*.wwt-*"))  # no temp or backup files left in the repo

    proc = wwt_setup(home, tmp_path / "data", "--uninstall")
    assert proc.returncode == 0, proc.stderr
    for rel, where in links.items():
        assert os.readlink(home / rel) == where
        assert (home / rel).read_bytes() == originals[rel]


def _break(kind: str, home: Path, repo: Path) -> Path:
    link = home / ".claude/settings.json"
    if kind == "broken link":
        (repo / "claude/settings.json").unlink()
    elif kind == "read-only target":
        os.chmod(repo / "claude/settings.json", 0o444)
    elif kind == "link loop":
        link.unlink()
        link.symlink_to("settings.json")
    return link


@pytest.mark.parametrize(("kind", "says"), [("broken link", "does not exist"), ("read-only target", "read-only"),
                                            ("link loop", "loop")])
def test_a_link_that_cannot_be_written_through_stops_setup_before_any_change(
    tmp_path: Path, kind: str, says: str
) -> None:
    home, repo = _dotfiles_home(tmp_path)
    link = _break(kind, home, repo)
    before = tree(home)
    proc = wwt_setup(home, tmp_path / "data")
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert str(link) in line and says in line
    assert tree(home) == before  # not even the other agents' files


# ------------------------------------------------------------------------------------- jsonedit as a unit

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**20), 10**20), st.text(max_size=8),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)
json_values = st.recursive(
    json_scalars,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids, max_size=4),
    max_leaves=12,
)
layouts = st.sampled_from([None, 0, 2, 4, "\t"])


@settings(max_examples=150, deadline=None)
@given(doc=st.dictionaries(st.text(max_size=6), json_values, max_size=5), indent=layouts,
       key=st.text(max_size=6), value=json_values, ascii=st.booleans())
def test_adding_a_key_and_removing_it_again_restores_the_text(doc, indent, key, value, ascii) -> None:
    text = json.dumps(doc, indent=indent, ensure_ascii=ascii) + "\n"
    root = jsonedit.parse(text)
    if key in doc:
        return
    added = jsonedit.edit(text, root, {**root.value, key: value})
    assert json.loads(added) == {**doc, key: value}
    assert is_subsequence(text, added)
    back = jsonedit.edit(added, jsonedit.parse(added), doc)
    assert back == text


@settings(max_examples=150, deadline=None)
@given(old=json_values, new=json_values, indent=layouts)
def test_any_edit_yields_text_that_parses_to_the_new_value(old, new, indent) -> None:
    text = json.dumps({"v": old}, indent=indent)
    out = jsonedit.edit(text, jsonedit.parse(text), {"v": new})
    assert jsonedit.same(jsonedit.loads(out), {"v": new})
    assert json.loads(out) == {"v": new}


def test_an_install_whose_state_was_lost_still_uninstalls_without_leftovers(tmp_path: Path) -> None:
    """An earlier wwt wired these files, then the data dir (and its setup state) went away: uninstall must still
    drop the containers that held only our entries, not keep them as if the user had made them."""
    home, data = tmp_path / "home", tmp_path / "data"
    old_hook = {"type": "command", "command": "/old/venv/bin/python -m wwt hook claude-code", "timeout": 10}
    old_server = {"type": "stdio", "command": "/old/venv/bin/wwt", "args": ["mcp"]}
    write_home(home, {
        ".claude/settings.json": json.dumps({"model": "opus", "hooks": {"Stop": [{"hooks": [old_hook]}]}}, indent=2),
        ".claude.json": json.dumps({"numStartups": 2, "mcpServers": {"wwt": old_server}}, indent=2),
        ".codex/config.toml": 'model = "o3"\n\n[mcp_servers.wwt]\ncommand = "/old/venv/bin/wwt"\nargs = ["mcp"]\n',
    })
    assert wwt_setup(home, data).returncode == 0
    assert wwt_setup(home, data, "--uninstall").returncode == 0
    assert strict_json((home / ".claude/settings.json").read_text()) == {"model": "opus"}
    assert strict_json((home / ".claude.json").read_text()) == {"numStartups": 2}
    assert (home / ".codex/config.toml").read_text() == 'model = "o3"\n'
