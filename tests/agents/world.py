"""One agent's world for an end-to-end run: a fresh HOME, a git project in it, an older archived session to
recall, the fake model server, and the environment every command runs in (the real CLI, ``wwt`` from this
checkout's venv)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from fake_model import FakeModel

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PLANTED = FIXTURES / "claude" / "7a9e4c21-3b5d-4f60-8a71-c2d3e4f5a6b7.jsonl"
PLANTED_SESSION = "7a9e4c21-3b5d-4f60-8a71-c2d3e4f5a6b7"
# What the fake model asks wwt: words of the planted (older, other-project) Claude Code session only.
QUERY = "nightly reconcile job drop cents on refunds"
PROJECT = "tidewater"
# Variables of the machine's own agents and wwt that must not leak into a fresh HOME's run.
DROPPED_ENV = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_RUNTIME_DIR", "COPILOT_HOME",
               "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR",
               "WWT_HOME", "WWT_DEBUG", "WWT_ENGINE", "WWT_RUNTIME_DIR", "WWT_EXCLUDE_SESSION_ID", "WWT_REDACT",
               "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GITHUB_TOKEN",
               "GH_TOKEN", "COPILOT_GITHUB_TOKEN", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "PYTEST_CURRENT_TEST",
               "PYTEST_XDIST_WORKER", "OLDPWD")


def wwt_executable() -> str:
    """This checkout's ``wwt`` (the venv's script beside the running Python)."""
    sibling = Path(sys.executable).parent / "wwt"
    return str(sibling) if sibling.exists() else shutil.which("wwt") or "wwt"


@dataclass
class Run:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def __str__(self) -> str:
        return (f"$ {' '.join(self.argv)}\nexit {self.returncode} after {self.seconds:.1f} s\n"
                f"--- stdout\n{self.stdout[-4000:]}\n--- stderr\n{self.stderr[-4000:]}")


@dataclass
class World:
    root: Path
    fake: FakeModel
    path_dirs: list[Path]
    env: dict[str, str] = field(default_factory=dict)
    log: list[Run] = field(default_factory=list)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def project(self) -> Path:
        return self.home / "src" / PROJECT

    def build(self, model_dir: Path, extra_env: dict[str, str]) -> None:
        self.project.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", "-b", "main", str(self.project)], check=True, capture_output=True)
        (self.project / "README.md").write_text("tidewater: tide tables for harbours\n")
        planted = self.home / ".claude" / "projects" / "-home-mina-src-ledger" / PLANTED.name
        planted.parent.mkdir(parents=True)
        shutil.copyfile(PLANTED, planted)
        env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
        path = [str(p) for p in self.path_dirs] + [str(Path(wwt_executable()).parent)]
        env.update(
            HOME=str(self.home),
            PATH=os.pathsep.join(path + [env.get("PATH", "/usr/bin:/bin")]),
            WWT_MODEL_DIR=str(model_dir),
            LANG="C.UTF-8", TERM="dumb", NO_COLOR="1", CI="1",
            # every stray request goes to the fake server, which refuses and records it
            HTTP_PROXY=self.fake.url, HTTPS_PROXY=self.fake.url, http_proxy=self.fake.url, https_proxy=self.fake.url,
            NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost",
            GIT_CONFIG_NOSYSTEM="1",
        )
        env.update(extra_env)
        self.env = env

    def run(self, argv: list[str], timeout: float = 180, cwd: Path | None = None, stdin: str | None = None) -> Run:
        start = time.monotonic()
        try:
            folder = cwd or self.project
            env = {**self.env, "PWD": str(folder)}  # as a shell sets it: OpenCode takes its folder from PWD
            proc = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True,
                                  timeout=timeout, input=stdin if stdin is not None else "",
                                  start_new_session=True)
            run = Run(argv, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)
        except subprocess.TimeoutExpired as exc:
            def text(b: bytes | str | None) -> str:
                return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")
            run = Run(argv, -9, text(exc.stdout), text(exc.stderr) + f"\n(timed out after {timeout} s)",
                      time.monotonic() - start)
        self.log.append(run)
        return run

    def wwt(self, *args: str, timeout: float = 300) -> Run:
        return self.run([wwt_executable(), *args], timeout=timeout)

    def search(self, words: str) -> list[dict]:
        run = self.wwt("search", words, "--all", "--json")
        if run.returncode != 0:
            return []
        try:
            data = json.loads(run.stdout)
        except ValueError:
            return []
        return data.get("results", data) if isinstance(data, dict) else data

    def transcript_log(self) -> str:
        """Every command run so far, for a failing test's message."""
        return "\n\n".join(str(r) for r in self.log) + "\n\n--- fake model\n" + self.fake.summary()
