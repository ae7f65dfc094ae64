"""Setup as a plan: compute every change first (pure), then show it (``--dry-run``) or apply it under a lock.

Per agent: hook registration (always a file edit: no agent has a CLI for hooks) and MCP registration (the
agent's own ``mcp add``/``mcp remove`` when its binary is on PATH, else a file edit; a failing CLI falls back to
the file edit). Several edits of one file are composed so each file is read, backed up and written once.

An agent where wwt's own plugin/extension is installed (``wwt.setup.plugins``) gets no entries from setup: the
plugin already runs the same hooks and MCP server, so setup removes any copy of its own instead."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from wwt import limits, paths
from wwt.errors import WwtError
from wwt.setup import claude, cline, codex, copilot, cursor, gemini, opencode, qwen, roo
from wwt.setup import plugins as agent_plugins
from wwt.setup.common import (
    hook_base_command,
    hook_command,
    mcp_argv,
    mcp_matches,
    propagated_env,
    wwt_base_command,
)
from wwt.setup.configfile import (
    EditSkipped,
    FileEdit,
    Transform,
    apply_edit,
    check_writable,
    read_text,
    unified_diff,
)
from wwt.setup.state import SetupState

# Claude Code, Gemini CLI, Codex CLI, Qwen Code, Cursor, Copilot CLI: hooks + MCP. OpenCode, Cline, Roo Code: the
# MCP server only (no command hooks to register).
AGENTS: tuple[ModuleType, ...] = (claude, gemini, codex, qwen, cursor, copilot, opencode, cline, roo)
AGENT_ALIASES = {"claude": "claude-code", "gemini": "gemini-cli", "codex": "codex-cli", "qwen": "qwen-code",
                 "copilot": "copilot-cli", "roo": "roo-code"}


@dataclass
class CliStep:
    """Run an agent's own command; if it fails or leaves the registration wrong, apply ``fallback``."""

    argvs: list[list[str]]
    fallback: FileEdit
    verify: Callable[[], bool]
    what: str


@dataclass
class Plan:
    uninstall: bool
    agents: list[ModuleType]
    skipped: list[str]
    edits: list[FileEdit] = field(default_factory=list)
    cli_steps: list[CliStep] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    state: SetupState = field(default_factory=SetupState)
    released: list[ModuleType] = field(default_factory=list)  # agents whose setup entries are removed


def select_agents(only: list[str] | None) -> tuple[list[ModuleType], list[str]]:
    """Agents to configure: those found on this machine (config dir or binary), or the ones named."""
    wanted = {AGENT_ALIASES.get(x, x) for x in only} if only else None
    unknown = (wanted or set()) - {a.PLATFORM for a in AGENTS}
    if unknown:
        named = limits.clip(", ".join(sorted(unknown)), limits.MAX_ECHO_CHARS)
        raise WwtError(f"unknown agent(s): {named} (known: claude, gemini, codex, qwen, cursor, copilot, opencode, "
                       "cline, roo)")
    chosen, skipped = [], []
    for agent in AGENTS:
        if wanted is not None:
            (chosen if agent.PLATFORM in wanted else skipped).append(agent)
        elif agent.detected() or shutil.which(agent.BINARY):
            chosen.append(agent)
        else:
            skipped.append(agent)
    return chosen, [f"{a.LABEL}: not found on this machine (no {a.config_dir()})" for a in skipped]


def _compose(edits: list[FileEdit]) -> list[FileEdit]:
    by_path: dict[Path, list[FileEdit]] = {}
    for e in edits:
        by_path.setdefault(e.path, []).append(e)
    out = []
    for path, group in by_path.items():
        if len(group) == 1:
            out.append(group[0])
            continue

        def composed(old: str | None, _g: list[FileEdit] = group) -> str | None:
            text = old
            for e in _g:
                text = e.transform(text)
            return text

        transform: Transform = composed
        out.append(FileEdit(path, transform, "; ".join(e.what for e in group)))
    return out


def build_plan(
    uninstall: bool = False, only: list[str] | None = None, use_agent_cli: bool = True
) -> Plan:
    agents, skipped = select_agents(only)
    plan = Plan(uninstall=uninstall, agents=agents, skipped=skipped, state=SetupState.load())
    base, env = wwt_base_command(), propagated_env()
    argv = mcp_argv(base)
    edits: list[FileEdit] = []
    for agent in agents:
        plugin = agent_plugins.installed(agent.PLATFORM)
        remove = uninstall or plugin is not None
        if plugin is not None:
            plan.skipped.append(plugin_line(agent, plugin, uninstall))
        if remove:
            plan.released.append(agent)
        command = hook_command(agent.PLATFORM, hook_base_command(), env)
        if agent is codex:
            edits += codex.hook_edits(command, remove, plan.state, codex.installed_version())
        else:
            edits += agent.hook_edits(command, remove, plan.state)
        try:
            mcp_edit = agent.mcp_edit(argv, env, remove, plan.state)
        except EditSkipped as exc:  # a file wwt cannot edit without loss: say so, go on with the others
            plan.skipped.append(f"{agent.LABEL}: {exc}")
            continue
        exe = shutil.which(agent.BINARY) if use_agent_cli and getattr(agent, "MCP_CLI", True) else None
        if isinstance(mcp_edit, list):  # one settings file per editor installation (Cline, Roo Code)
            edits += mcp_edit
        elif exe:
            found = agent.registered_mcp()
            if remove:
                if found is not None:
                    plan.cli_steps.append(
                        CliStep([agent.cli_remove()], mcp_edit, lambda a=agent: a.registered_mcp() is None,
                                f"{agent.LABEL}: remove MCP server via `{agent.BINARY} mcp remove`")
                    )
            elif not mcp_matches(found, argv, env):
                argvs = ([agent.cli_remove()] if found is not None else []) + [agent.cli_add(argv, env)]
                plan.cli_steps.append(
                    CliStep(argvs, mcp_edit, lambda a=agent: mcp_matches(a.registered_mcp(), argv, env),
                            f"{agent.LABEL}: register MCP server via `{agent.BINARY} mcp add`")
                )
        else:
            edits.append(mcp_edit)
        if not remove:
            plan.notes += agent.approvals()
    plan.edits = _compose(edits)
    if agents and not uninstall:
        plan.notes.append("Restart running agents so they load the wwt MCP server and hooks.")
    return plan


def plugin_line(agent: ModuleType, plugin: agent_plugins.Installed, uninstall: bool) -> str:
    """What setup says about an agent whose wwt plugin is installed (printed with the skipped agents)."""
    if uninstall:
        remove = PLUGIN_REMOVAL[agent.PLATFORM].format(ident=plugin.ident)
        return f"{agent.LABEL}: the wwt plugin {plugin} stays installed; remove it with `{remove}`"
    return (f"{agent.LABEL}: the wwt plugin {plugin} provides the hooks and MCP server; "
            "setup registers no second copy (and removes an earlier one of its own)")


PLUGIN_REMOVAL = {
    "claude-code": "claude plugin uninstall {ident}",
    "gemini-cli": "gemini extensions uninstall {ident}",
    "qwen-code": "qwen extensions uninstall {ident}",
    "codex-cli": "codex plugin remove {ident}",
}


def render(plan: Plan) -> str:
    """The planned changes as unified diffs plus the agent commands that would run (``--dry-run``)."""
    parts = []
    for edit in plan.edits:
        old, new = edit.preview()
        diff = unified_diff(edit.path, old, new)
        if diff:
            parts.append(f"# {edit.what}\n{diff}")
    for step in plan.cli_steps:
        parts.append(f"# {step.what}\n" + "".join(f"$ {shlex.join(a)}\n" for a in step.argvs))
    return "\n".join(parts) if parts else "# nothing to change\n"


def setup_lock():  # -> filelock.FileLock; imported here: `wwt doctor` reads AGENTS from this module, never locks
    from filelock import FileLock

    return FileLock(str(paths.data_dir() / "setup.lock"), mode=0o600)


def _run(argv: list[str]) -> tuple[bool, str]:
    exe = shutil.which(argv[0])
    if not exe:
        return False, f"{argv[0]} not found"
    try:
        proc = subprocess.run([exe, *argv[1:]], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return False, str(exc)
    lines = (proc.stderr or proc.stdout or "").strip().splitlines()
    return proc.returncode == 0, (lines[-1] if lines else "")


def _is_empty_config(path: Path) -> bool:
    """A file holding nothing but an empty JSON object / empty TOML document."""
    text = read_text(path)
    if text is None:
        return False
    stripped = text.strip()
    return stripped in ("", "{}")


def apply_plan(plan: Plan) -> list[str]:
    """Apply every change; returns one line per thing done (for the summary)."""
    done: list[str] = []
    for edit in [*plan.edits, *(step.fallback for step in plan.cli_steps)]:
        old, new = edit.preview()  # every file must parse before any is written: all or nothing on bad config
        if old != new and edit in plan.edits:
            check_writable(edit.path)  # likewise a read-only file stops the run before any write
    for edit in plan.edits:
        old, new = edit.preview()
        if old == new:
            done.append(f"unchanged  {edit.path}  ({edit.what})")
            continue
        backup = apply_edit(edit)
        extra = f"  backup: {backup.name}" if backup else ""
        done.append(f"updated    {edit.path}  ({edit.what}){extra}")
        if old is None and str(edit.path) not in plan.state.created:
            plan.state.created.append(str(edit.path))
        if str(edit.path) in plan.state.created and _is_empty_config(edit.path):
            edit.path.unlink()
            plan.state.created.remove(str(edit.path))
            done.append(f"removed    {edit.path}  (created by wwt setup, now empty)")
    for step in plan.cli_steps:
        ok, last = True, ""
        for argv in step.argvs:
            ok, last = _run(argv)
            if not ok and argv[2] == "remove":
                ok = True  # nothing to remove is fine; the add decides
        if ok and step.verify():
            done.append(f"ran        {' / '.join(shlex.join(a) for a in step.argvs)}")
            continue
        backup = apply_edit(step.fallback)
        done.append(
            f"updated    {step.fallback.path}  ({step.fallback.what}; `{step.argvs[-1][0]}` CLI did not do it"
            f"{': ' + last if last else ''}){'  backup: ' + backup.name if backup else ''}"
        )
    for key in list(plan.state.switches):
        if any(key.startswith(a.PLATFORM.split("-")[0] + ":") for a in plan.released):
            plan.state.forget(key)
    plan.state.save()
    return done


def run(uninstall: bool = False, only: list[str] | None = None, dry_run: bool = False,
        use_agent_cli: bool = True, lock_timeout: float = 120.0) -> tuple[Plan, list[str] | str]:
    """Plan and (unless ``dry_run``) apply under the setup lock, so concurrent runs serialise."""
    if dry_run:
        plan = build_plan(uninstall, only, use_agent_cli)
        return plan, render(plan)
    try:
        with setup_lock().acquire(timeout=lock_timeout):
            plan = build_plan(uninstall, only, use_agent_cli)
            return plan, apply_plan(plan)
    except _lock_timeout() as exc:
        raise WwtError("another `wwt setup` is running; try again when it has finished") from exc


def _lock_timeout() -> type[Exception]:
    from filelock import Timeout

    return Timeout


__all__ = ["Plan", "build_plan", "render", "apply_plan", "run", "select_agents", "wwt_base_command"]
