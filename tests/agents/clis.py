"""Installing the agents' real CLIs from npm into a cache folder, reused between runs.

Versions are pinned in ``cli_versions.json`` (one place). Each package goes to
``$WWT_AGENTS_CACHE/<package with / as +>@<version>`` (default ``~/.cache/wwt-agents``) with
``npm install --prefix``; a folder whose binary is there is reused as is. A CLI whose ``engines.node`` asks for a
newer Node.js than the machine's gets the pinned ``node-<os>-<arch>`` package from npm (Node's own binaries,
published there by the ``node`` package's maintainers) in front of PATH. What cannot be installed is a skip
whose reason names the step that failed — never a pass."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
VERSIONS: dict[str, str] = {k: v for k, v in json.loads((HERE / "cli_versions.json").read_text()).items()
                            if not k.startswith("_")}
NPM_TIMEOUT_S = 600


class Unavailable(Exception):
    """Why a CLI cannot be run here (the test skips with this text)."""


def cache_root() -> Path:
    raw = os.environ.get("WWT_AGENTS_CACHE")
    return Path(raw).expanduser() if raw else Path.home() / ".cache" / "wwt-agents"


def _folder(package: str, version: str) -> Path:
    return cache_root() / f"{package.replace('/', '+')}@{version}"


def _version_tuple(text: str) -> tuple[int, ...]:
    m = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(x) for x in m.groups()) if m else (0, 0, 0)


def _npm_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(npm_config_fund="false", npm_config_audit="false", npm_config_update_notifier="false",
               npm_config_loglevel="error")
    return env


@contextlib.contextmanager
def _locked(path: Path):  # noqa: ANN202 - one installer per package folder (parallel tests, .ci/run)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def npm_install(package: str, version: str, binary: str) -> Path:
    """``<folder>/node_modules/.bin/<binary>``, installed now unless a previous run left it there."""
    folder = _folder(package, version)
    exe = folder / "node_modules" / ".bin" / binary
    if exe.exists():
        return exe
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable("npm is not on PATH: cannot install the agents' CLIs")
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _locked(Path(str(folder) + ".lock")):
        if exe.exists():
            return exe
        folder.mkdir(exist_ok=True)
        if not (folder / "package.json").exists():
            (folder / "package.json").write_text('{"private": true}\n')
        # run inside the folder: a spec such as node@22 next to a folder of that name would be read as a path
        try:
            done = subprocess.run([npm, "install", "--prefix", str(folder), "--no-save", f"{package}@{version}"],
                                  cwd=folder, env=_npm_env(), capture_output=True, text=True, timeout=NPM_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise Unavailable(f"npm install {package}@{version} took over {NPM_TIMEOUT_S} s") from None
        if done.returncode != 0 or not exe.exists():
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise Unavailable(f"npm install {package}@{version} failed (exit {done.returncode}): {' | '.join(tail)}")
    return exe


def engines_node(package: str, version: str) -> str | None:
    """The ``engines.node`` range the installed package declares (``>=22.0.0``), if any."""
    manifest = _folder(package, version) / "node_modules" / package / "package.json"
    try:
        return (json.loads(manifest.read_text()).get("engines") or {}).get("node")
    except (OSError, ValueError):
        return None


def node_satisfies(node_version: str, wanted: str | None) -> bool:
    """Only the ``>=X[.Y.Z]`` form the six CLIs use; anything else counts as satisfied (npm checked it)."""
    m = re.fullmatch(r"\s*>=\s*v?([\d.]+)\s*", wanted or "")
    if not m:
        return True
    need = tuple(int(x) for x in m.group(1).split(".") if x)
    have = _version_tuple(node_version)
    return have[: len(need)] >= need


def system_node_version() -> str:
    node = shutil.which("node")
    if node is None:
        return "none"
    try:
        return subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "none"


def node_bin_for(package: str, version: str) -> Path | None:
    """A folder to put first on PATH so the CLI finds the Node.js it needs (None: the machine's will do)."""
    wanted = engines_node(package, version)
    have = system_node_version()
    if node_satisfies(have, wanted):
        return None
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower())
    system = {"Linux": "linux", "Darwin": "darwin"}.get(platform.system())
    if machine is None or system is None:
        raise Unavailable(f"{package}@{version} needs node {wanted} (this machine has {have}); no npm build of "
                          f"node for {platform.system()}/{platform.machine()}")
    node_version = VERSIONS["node"]
    if not node_satisfies(node_version, wanted):
        raise Unavailable(f"{package}@{version} needs node {wanted}; the pinned node {node_version} is older")
    try:
        exe = npm_install(f"node-{system}-{machine}", node_version, "node")
    except Unavailable as exc:
        raise Unavailable(f"{package}@{version} needs node {wanted} (this machine has {have}); {exc}") from None
    return exe.parent


def install(package: str, binary: str) -> tuple[Path, list[Path]]:
    """The CLI's executable and the folders it needs first on PATH (its own .bin, a newer node's)."""
    version = VERSIONS[package]
    exe = npm_install(package, version, binary)
    node_bin = node_bin_for(package, version)
    return exe, [exe.parent] + ([node_bin] if node_bin else [])


def main() -> int:
    """``python tests/agents/clis.py``: install every pinned CLI (in parallel) before the suite runs; prints one
    line per package. Exit 0 always: a CLI that cannot be installed is skipped by its test with the reason."""
    import sys
    from concurrent.futures import ThreadPoolExecutor

    from agents import AGENTS

    def one(package: str, binary: str) -> str:
        try:
            exe, path = install(package, binary)
        except Unavailable as exc:
            return f"unavailable  {package}: {exc}"
        node = f" (node from {path[1]})" if len(path) > 1 else ""
        return f"ready        {package}@{VERSIONS[package]}: {exe}{node}"

    with ThreadPoolExecutor(max_workers=len(AGENTS)) as pool:
        for line in pool.map(lambda a: one(a.package, a.binary), AGENTS.values()):
            print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(HERE))
    raise SystemExit(main())
