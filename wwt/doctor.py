"""``wwt doctor``: is capture wired up and healthy? Each check is one finding with a fix; pure data so the
CLI prints it and tests assert on it. A ``fail`` means something does not work (exit 1); ``warn`` means it
works but needs attention; ``info`` is a reminder (e.g. Codex hook trust, which only Codex can confirm)."""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from wwt import paths
from wwt.errors import WwtError
from wwt.hook import worker_running
from wwt.setup import codex, gemini, qwen
from wwt.setup import plugins as agent_plugins
from wwt.setup.plan import AGENTS
from wwt.worker import short

OK, INFO, WARN, FAIL = "ok", "info", "warn", "fail"
PARKED_SHOWN = 3  # parked queue rows named one by one; the rest are counted


@dataclass
class Finding:
    status: str
    area: str
    message: str
    fix: str = ""


def command_executable(command: str) -> str | None:
    """The program a registered shell command runs (after ``VAR=value`` prefixes), if it exists."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    words = [w for w in words if not ("=" in w and not w.startswith(("/", ".")) and w.split("=")[0].isidentifier())]
    if not words:
        return None
    exe = words[0]
    return exe if os.path.isfile(exe) and os.access(exe, os.X_OK) else None


def check_plugin(agent: ModuleType, plugin: agent_plugins.Installed) -> list[Finding]:
    """The agent runs wwt through its plugin: ``wwt`` must be on PATH, and setup's own copy must be gone."""
    area = agent.LABEL
    out = [Finding(OK, area, f"hooks and MCP server come from the wwt plugin {plugin}")]
    if shutil.which("wwt") is None:
        out.append(Finding(FAIL, area, "the wwt plugin runs `wwt`, which is not on PATH",
                           "install wwt with pipx (`pipx install .` then `pipx ensurepath`), restart the agent"))
    try:
        doubled = any(agent.registered_hooks().values()) or agent.registered_mcp() is not None
    except WwtError:
        doubled = False
    if doubled:
        out.append(Finding(WARN, area, "wwt setup's own hooks/MCP server are registered too (every turn is "
                           "queued twice, the tools are listed twice)", "run `wwt setup`: it removes its own copy"))
    if agent is gemini and not gemini.hooks_enabled():
        out.append(Finding(FAIL, area, "hooks are switched off (hooksConfig.enabled = false): the extension's "
                           "hooks do not run", "set hooksConfig.enabled to true in ~/.gemini/settings.json"))
    if agent is codex:
        out += check_codex_trust(plugin.ident)
    return out


TRUST_LEVELS = ("TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST")
TRUSTED_FOLDERS_ENV = {"gemini-cli": "GEMINI_CLI_TRUSTED_FOLDERS_PATH", "qwen-code": "QWEN_CODE_TRUSTED_FOLDERS_PATH"}


def folder_trust_rule(rules: dict, folder: str) -> str | None:
    """The trust level Gemini CLI (and Qwen Code, its fork) applies to ``folder``: of the rules whose folder —
    for TRUST_PARENT the rule path's parent — is ``folder`` or above it (real paths), the one with the longest
    rule path wins; None when none applies (Gemini CLI 0.61 ``LoadedTrustedFolders.isPathTrusted``)."""
    location = os.path.realpath(folder)
    best, best_len = None, -1
    for rule_path, level in rules.items():
        if level not in TRUST_LEVELS or not isinstance(rule_path, str) or not rule_path:
            continue
        base = os.path.expanduser(rule_path)
        base = os.path.realpath(os.path.dirname(base) if level == "TRUST_PARENT" else base)
        if (location == base or location.startswith(base.rstrip(os.sep) + os.sep)) and len(rule_path) > best_len:
            best, best_len = level, len(rule_path)
    return best


def check_folder_trust(agent: ModuleType, folder: str | None = None) -> list[Finding]:
    """Gemini CLI and Qwen Code trust folders one by one (``~/.gemini/trustedFolders.json``,
    ``~/.qwen/trustedFolders.json``): in a folder not trusted, a headless run stops (Gemini: exit code 55) and
    MCP servers, wwt's included, show as Disabled. Judged for ``folder`` (the one doctor runs in) when trust is
    not switched off, with the exact fix."""
    import json

    base = agent.config_dir()
    try:
        settings = json.loads((base / "settings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        settings = {}
    trust = ((settings.get("security") or {}).get("folderTrust") or {}) if isinstance(settings, dict) else {}
    # on unless switched off in Gemini CLI (as its newest versions run); off unless switched on in Qwen Code
    # (its docs: "disabled by default — every folder counts as trusted")
    enabled = trust.get("enabled") if isinstance(trust, dict) else None
    if enabled is False or (enabled is None and agent is not gemini):
        return []
    if agent is gemini and os.environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return []
    path = Path(os.environ.get(TRUSTED_FOLDERS_ENV.get(agent.PLATFORM, "")) or base / "trustedFolders.json")
    try:
        rules = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        rules = {}
    rules = rules if isinstance(rules, dict) else {}
    try:
        folder = folder or os.getcwd()
    except OSError:
        return []
    level = folder_trust_rule(rules, folder)
    if level in ("TRUST_FOLDER", "TRUST_PARENT"):
        return [Finding(OK, agent.LABEL, f"folder trust: {folder} is trusted (wwt's MCP server is enabled there)")]
    headless = " (headless: `gemini --skip-trust` or GEMINI_CLI_TRUST_WORKSPACE=true)" if agent is gemini else ""
    if level == "DO_NOT_TRUST":
        return [Finding(WARN, agent.LABEL, f"folder trust: you chose not to trust {folder}: wwt's MCP server is "
                        "Disabled there and a headless run stops",
                        f"change it in {agent.BINARY}'s /permissions, or set \"{folder}\" to \"TRUST_FOLDER\" in "
                        f"{path}{headless}")]
    none_yet = not any(v in ("TRUST_FOLDER", "TRUST_PARENT") for v in rules.values())
    return [Finding(INFO, agent.LABEL, ("no trusted folder yet; " if none_yet else "") + f"folder trust: {folder} "
                    "is not trusted: there wwt's MCP server shows Disabled and a headless run stops"
                    + (" (exit 55)" if agent is gemini else ""),
                    f"run {agent.BINARY} in your project folder once and choose Trust folder, or add "
                    f"\"{folder}\": \"TRUST_FOLDER\" to {path} (a folder's entry covers everything under it)"
                    f"{headless}")]


def check_qwen_tool_search(server: dict | None) -> list[Finding]:
    """Qwen Code 0.24 keeps MCP tools "deferred" behind its ``tool_search`` + ``tool_call`` bridge
    (``tools.toolSearch.enabled``, on by default): the model sees no wwt tool until it searches for one, so a
    question must make it look. Said unless the user turned the bridge off, preloads deferred tools
    (``tools.toolSearch.threshold`` > 0), lists a wwt tool in ``tools.visible``, or marks the server
    ``alwaysLoadTools``."""
    import json

    try:
        settings = json.loads(qwen.settings_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    tools = settings.get("tools") if isinstance(settings, dict) else None
    tools = tools if isinstance(tools, dict) else {}
    search = tools.get("toolSearch") if isinstance(tools.get("toolSearch"), dict) else {}
    visible = tools.get("visible") if isinstance(tools.get("visible"), list) else []
    threshold = search.get("threshold")
    if (search.get("enabled") is False or (isinstance(threshold, (int, float)) and threshold > 0)
            or any("wwt" in str(v) for v in visible) or (server or {}).get("alwaysLoadTools") is True):
        return []
    return [Finding(INFO, qwen.LABEL, "Qwen Code lists MCP tools behind its tool_search tool: the model sees "
                    "wwt's tools only after searching for them",
                    "ask in words (\"search my memory for …\"), or set tools.toolSearch.threshold (e.g. 10) in "
                    f"{qwen.settings_path()} so MCP tools are declared up front")]


def check_agent(agent: ModuleType) -> list[Finding]:
    area = agent.LABEL
    plugin = agent_plugins.installed(agent.PLATFORM)
    if plugin is not None:
        return check_plugin(agent, plugin)
    out: list[Finding] = []
    try:
        hooks = agent.registered_hooks()
        server = agent.registered_mcp()
    except WwtError as exc:
        return [Finding(FAIL, area, str(exc), "fix the file by hand, then run `wwt setup`")]
    for event, handlers in hooks.items():
        if not handlers:
            out.append(Finding(FAIL, area, f"no wwt hook for {event}", "run `wwt setup`"))
        elif not command_executable(handlers[0].get("command", "")):
            out.append(Finding(FAIL, area, f"{event} hook runs a missing program: {handlers[0].get('command')}",
                               "run `wwt setup` again from the wwt you want to use"))
        else:
            out.append(Finding(OK, area, f"{event} hook registered"))
    if not server:
        out.append(Finding(FAIL, area, "MCP server 'wwt' not registered", "run `wwt setup`"))
    elif not (os.path.isfile(str(server.get("command", ""))) and os.access(str(server.get("command")), os.X_OK)):
        out.append(Finding(FAIL, area, f"MCP server command is missing: {server.get('command')}", "run `wwt setup`"))
    else:
        out.append(Finding(OK, area, "MCP server registered"))
    if agent is gemini and not gemini.hooks_enabled():
        out.append(Finding(FAIL, area, "hooks are switched off (hooksConfig.enabled = false)", "run `wwt setup`"))
    if agent is qwen and server:
        out += check_qwen_tool_search(server)
    if agent is qwen and not qwen.hooks_enabled():
        out.append(Finding(FAIL, area, "hooks are switched off (disableAllHooks = true): turns are not captured",
                           f"remove disableAllHooks from {qwen.settings_path()} (it stops all your Qwen hooks)"))
    if agent is codex:
        if not codex.hooks_feature_enabled():
            out.append(Finding(FAIL, area, "hooks feature flag is off in config.toml", "run `wwt setup`"))
        out += check_codex_trust()
    return out


def check_codex_trust(plugin: str | None = None) -> list[Finding]:
    """Codex runs a new or changed hook only once the user trusted it in ``/hooks``; it records that in
    config.toml (``[hooks.state."<key>"] trusted_hash``), which ``codex.hook_trust`` compares with the hash Codex
    computes for wwt's hooks today: asked only while one is not trusted."""
    area = codex.LABEL
    whose = "the wwt plugin's" if plugin else "wwt's"
    try:
        trust = codex.hook_trust(plugin=plugin)
    except WwtError as exc:
        return [Finding(WARN, area, f"cannot read hook trust: {exc}")]
    out: list[Finding] = []
    waiting = [e for e, s in trust.items() if s == codex.UNTRUSTED]
    changed = [e for e, s in trust.items() if s == codex.CHANGED]
    off = [e for e, s in trust.items() if s == codex.OFF]
    trusted = [e for e, s in trust.items() if s == codex.TRUSTED]
    if trusted:
        out.append(Finding(OK, area, f"{' and '.join(trusted)} hook{'s' if len(trusted) > 1 else ''} trusted"))
    if waiting:
        out.append(Finding(INFO, area, f"Codex runs new hooks only after you trust them: {', '.join(waiting)} not "
                           "trusted yet", f"in Codex, open /hooks and trust {whose} {' and '.join(waiting)} hook"
                           f"{'s' if len(waiting) > 1 else ''}"))
    if changed:
        out.append(Finding(INFO, area, f"{whose} {' and '.join(changed)} hook changed since you trusted it "
                           "(a new wwt path or setting): Codex waits for you to trust it again",
                           "in Codex, open /hooks and trust it again"))
    if off:
        out.append(Finding(WARN, area, f"{whose} {' and '.join(off)} hook is switched off in Codex's /hooks: "
                           "those turns are not captured", "in Codex, open /hooks and switch it on"))
    return out


def check_model() -> list[Finding]:
    try:
        from wwt.model_source import describe_model

        info = describe_model(allow_download=False)
    except Exception as exc:  # noqa: BLE001
        return [Finding(FAIL, "model", f"cannot inspect the model: {exc}", "run `wwt model`")]
    if not info.get("available"):
        return [Finding(FAIL, "model", info.get("error", "model not available"), "run `wwt model` (or set WWT_MODEL_DIR)")]
    if info.get("checksums_ok") is False:
        return [Finding(FAIL, "model", f"model files in {info.get('model_dir')} fail their checksums",
                        "delete that folder and run `wwt model`")]
    return [Finding(OK, "model", f"model ready ({info.get('source')}: {info.get('model_dir')})")]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def exposed_paths(home: Path) -> list[Path]:
    """Files and folders under the data dir that group/others may access (indexes and the log hold
    conversation text too). The downloaded model is public data and is not checked."""
    found: list[Path] = []
    for root, dirs, files in os.walk(home):
        if Path(root) == home and "models" in dirs:
            dirs.remove("models")
        for name in dirs + files:
            path = Path(root) / name
            try:
                if _mode(path) & 0o077:
                    found.append(path)
            except OSError:
                continue
    return sorted(found)


def check_store() -> list[Finding]:
    home = paths.data_dir(create=False)
    out: list[Finding] = []
    if not home.exists():
        return [Finding(FAIL, "store", f"no data dir at {home}", "run `wwt setup`")]
    if _mode(home) & 0o077:
        out.append(Finding(FAIL, "store", f"{home} is readable by others (mode {_mode(home):o})", f"chmod 700 {home}"))
    db = home / "wwt.sqlite3"
    if not db.exists():
        out.append(Finding(FAIL, "store", f"no store at {db}", "run `wwt setup` or `wwt ingest`"))
        return out
    for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        if p.exists() and _mode(p) & 0o077:
            out.append(Finding(FAIL, "store", f"{p} is readable by others (mode {_mode(p):o})", f"chmod 600 {p}"))
    exposed = [p for p in exposed_paths(home) if p not in (db, Path(f"{db}-wal"), Path(f"{db}-shm"))]
    if exposed:
        shown = ", ".join(f"{p} ({_mode(p):o})" for p in exposed[:3]) + (f" and {len(exposed) - 3} more" if len(exposed) > 3 else "")
        out.append(Finding(FAIL, "store", f"readable by others: {shown}", f"chmod -R go-rwx {home}"))
    try:
        from wwt.store import Store, store_damage_error

        with Store.open(db, readonly=True) as store:
            damage = store.damage()  # reads every page: a bad one anywhere, not just where stats() looks
            if damage is not None:
                raise store_damage_error(db, damage)
            stats = store.stats()
            pending = store.queue_size()
            parked = store.parked_queue(limit=PARKED_SHOWN)
            oldest = store.oldest_pending()
    except WwtError as exc:
        return [*out, Finding(FAIL, "store", str(exc))]
    out.append(Finding(OK, "store", f"{stats.get('sessions', 0)} sessions, {stats.get('chunks', 0)} chunks in {db}"))
    for item in parked:
        out.append(Finding(WARN, "worker", f"gave up on {short(item.path)}: {item.error}",
                           "fix or remove that file, then `wwt worker --retry-parked`"))
    if stats.get("queue_parked", 0) > len(parked):
        out.append(Finding(WARN, "worker", f"{stats['queue_parked'] - len(parked)} more queued file(s) given up on",
                           "`wwt worker --retry-parked` tries them all again"))
    running = worker_running(home)
    if pending and oldest and time.time() - oldest > 300 and not running:
        out.append(Finding(FAIL, "worker", f"{pending} queued file(s) waiting for > 5 min and no worker running",
                           "run `wwt worker` (or `wwt ingest`); see ingest.log"))
    else:
        state = "running" if running else "idle"
        out.append(Finding(OK, "worker", f"{state}, {pending} file(s) queued"))
    return out


def check_log(tail_bytes: int = 20000) -> list[Finding]:
    log = paths.data_dir(create=False) / "ingest.log"
    if not log.exists():
        return [Finding(INFO, "log", f"no {log} yet (written by hooks and the worker)")]
    try:
        if not log.is_file() or not os.access(log, os.W_OK):
            raise PermissionError(errno.EACCES, "not a file this user can write")
        with open(log, "rb") as fh:
            fh.seek(max(0, log.stat().st_size - tail_bytes))
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError as exc:  # the worker and the engine log to stderr instead: nobody sees their errors
        return [Finding(WARN, "log", f"cannot use {log}: {exc.strerror or exc}",
                        f"remove or fix it (`ls -ld {log}`); hooks' background work is not logged until then")]
    errors = [ln for ln in lines if " ERROR " in ln or "hook failed" in ln or "crashed" in ln]
    if errors:
        return [Finding(WARN, "log", f"recent errors in {log}: {errors[-1][:200]}", f"see {log}")]
    return [Finding(OK, "log", f"{log} ({log.stat().st_size} bytes, no recent errors)")]


# Agents whose log folders doctor names (those `wwt setup` wires also get their hook/MCP checks above; Aider is
# read from its logs only).
LOG_FOLDER_PLATFORMS = ("qwen-code", "copilot-cli", "opencode", "aider", "cursor", "cline", "roo-code", "continue", "goose")


def check_log_folders() -> list[Finding]:
    """The other agents `wwt ingest` reads: where their logs were found on this machine (nothing is said
    about an agent with no logs here). Aider keeps one history per repository: it is only named."""
    from wwt.models import PLATFORM_NAMES
    from wwt.parsers import PARSERS

    wired = {agent.PLATFORM for agent in AGENTS if agent.EVENTS}  # agents with a wwt hook
    out: list[Finding] = []
    for parser in PARSERS:
        if parser.platform not in LOG_FOLDER_PLATFORMS:
            continue
        name = PLATFORM_NAMES.get(parser.platform, parser.platform)
        found = [root for root in parser.default_roots() if root.exists()]
        if found:
            how = ("read by its wwt hook and `wwt ingest`" if parser.platform in wired
                   else "read by `wwt ingest` (no hook: run it, or let another agent's hook do it)")
            out.append(Finding(OK, name, f"logs found in {', '.join(str(r) for r in found[:2])}", how))
        elif parser.platform == "aider":
            out.append(Finding(INFO, name, "histories live in each repository (.aider.chat.history.md)",
                               "run `wwt ingest <repository>`"))
    return out


def check_indexes() -> list[Finding]:
    """The search indexes against the archive: a truncated or damaged tantivy/hnsw file, or indexes out of step
    with SQLite, is found here, not by the next search. Opened without repairing (doctor changes nothing)."""
    home = paths.data_dir(create=False)
    db, index_dir = home / "wwt.sqlite3", home / "index"
    if not db.exists() or not index_dir.exists():
        return []
    try:
        from wwt.indexes import Indexes
        from wwt.store import Store

        with Store.open(db, readonly=True) as store:
            indexes = Indexes.open(index_dir)
            try:
                broken = [name for name in indexes.broken if name not in indexes.absent]
                absent = list(indexes.absent) if store.chunk_count() else []
                in_step = not broken and not absent and indexes.verify_against(store)
            finally:
                indexes.close()
    except WwtError as exc:
        return [Finding(FAIL, "indexes", str(exc), "`wwt reindex` rebuilds them from the archive")]
    except Exception as exc:  # an index library's own error on a damaged file
        return [Finding(FAIL, "indexes", f"cannot read the indexes in {index_dir}: {type(exc).__name__}",
                        "`wwt reindex` rebuilds them from the archive")]
    if broken or absent:
        what = ", ".join([f"{n} damaged" for n in broken] + [f"{n} missing" for n in absent])
        return [Finding(FAIL, "indexes", f"{what} in {index_dir}",
                        "`wwt reindex` rebuilds them from the archive (the next ingest repairs them too)")]
    if not in_step:
        return [Finding(WARN, "indexes", f"indexes in {index_dir} are out of step with the archive",
                        "the next `wwt ingest` repairs them; `wwt reindex` rebuilds them now")]
    return [Finding(OK, "indexes", f"lexical and vector indexes match the archive ({index_dir})")]


def check_runtime() -> list[Finding]:
    """Where the engine's socket lives, when it is not the usual /tmp/wwt-<uid> (another user's folder or a
    symlink there), no folder that can hold it (every command then loads its own model: seconds per search),
    and a data dir that is refused. Looks only: creates nothing."""
    from wwt.engine import ipc

    home = paths.data_dir_name()
    problem = paths.foreign_data_dir(home)
    if problem:
        return [Finding(FAIL, "data dir", problem)]
    if not ipc.enabled():
        return []
    slow = "every search and MCP session loads its own model (seconds each)"
    try:
        loc = ipc.Location(home)
    except ipc.EngineUnavailable as exc:
        return [Finding(WARN, "engine", f"no engine: {exc}; {slow}",
                        "set WWT_RUNTIME_DIR to a short folder of your own")]
    if loc.passed_over:
        return [Finding(WARN, "engine", f"{loc.passed_over}: the engine's socket is in {loc.dir_path} instead",
                        f"remove it if it is not in use (`ls -ld {ipc.shared_runtime_dir()}`)")]
    if (unusable := ipc.unusable_runtime_dir(loc.dir_path)) is not None:
        return [Finding(WARN, "engine", f"no engine: {unusable}; {slow}",
                        "unset WWT_RUNTIME_DIR, or point it at a folder of your own")]
    return []


def check_redaction() -> list[Finding]:
    """Redaction off in this data dir is said every time (it changes what every process stores), and a
    ``WWT_REDACT`` that someone still expects to work."""
    from wwt.settings import env_note, redaction_on, settings_path

    findings = []
    if not redaction_on():
        findings.append(Finding(WARN, "privacy", f"redaction is off for this data dir ({settings_path()}): secrets "
                                "in agent logs are archived as written", "`wwt config redact on`"))
    note = env_note()
    if note:
        findings.append(Finding(INFO, "privacy", note))
    return findings


def check_team(connect_timeout: int = 3) -> list[Finding]:
    """The team setup (``wwt team``), when this data dir joined one: its settings file, the driver, the server
    (reachable, schema, this machine still registered), the last background push's error, what waits."""
    from wwt.team import INSTALL_HINT
    from wwt.team import config as team_config

    home = paths.data_dir(create=False)
    path = team_config.config_path(home)
    if not path.exists():
        return []
    conf = team_config.load(home)
    if conf is None:
        return [Finding(FAIL, "team", f"{path} is unreadable", "`wwt team join <postgresql-url>` again")]
    findings = []
    if _mode(path) & 0o077:
        findings.append(Finding(WARN, "team", f"{path} (it holds the server URL) is readable by others",
                                f"chmod 600 {shlex.quote(str(path))}"))
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return [*findings, Finding(FAIL, "team", INSTALL_HINT, "pip install 'whatwasthat[team]'")]
    from wwt.team.schema import SCHEMA_VERSION, connect, missing_search_indexes, schema_version

    server = team_config.masked(conf.url)
    if not conf.shares_anything:
        findings.append(Finding(INFO, "team", f"in a team ({server}) as {conf.label}, sharing nothing",
                                "`wwt team share PROJECT` (or join with --share-all)"))
    if conf.last_error:
        findings.append(Finding(WARN, "team", f"last push failed: {conf.last_error}", "`wwt team push` to retry now"))
    try:
        conn = connect(conf.url, timeout=connect_timeout)
    except WwtError as exc:  # "team server <masked url> unreachable: <reason>"
        return [*findings, Finding(WARN, "team", f"{exc}; local search works, pushes wait and resume",
                                   "check the server and the URL (`wwt team status`)")]
    try:
        found = schema_version(conn)
        if found is None or found < SCHEMA_VERSION:
            findings.append(Finding(WARN, "team", f"the team database has schema {found or 'none'}; this wwt "
                                    f"uses {SCHEMA_VERSION}", "`wwt team join <url>` again (it migrates)"))
            return findings
        if found > SCHEMA_VERSION:
            return [*findings, Finding(FAIL, "team", f"the team database has schema {found}; this wwt knows "
                                       f"{SCHEMA_VERSION}", "upgrade wwt")]
        row = conn.execute("SELECT label, chunk_count, last_push FROM wwt_machines WHERE machine_id = %s",
                           (conf.machine_id,)).fetchone()
        missing = missing_search_indexes(conn)
    finally:
        conn.close()
    if missing:  # a bulk push stopped between dropping them and building them: team search scans meanwhile
        findings.append(Finding(WARN, "team", f"the team server lacks its search index(es) {', '.join(missing)} "
                                "(a big push was cut short); team search is slow until they are built",
                                "`wwt team push` by the tables' owner builds them"))
    if row is None:
        findings.append(Finding(WARN, "team", f"this machine ({conf.label}) is no longer registered on {server}",
                                "`wwt team join <url>` again"))
        return findings
    findings.append(Finding(OK, "team", f"team server {server} reachable; {conf.label} has {row[1]} chunk(s) "
                            f"there, last push {row[2].isoformat(timespec='seconds') if row[2] else 'never'}"))
    return findings


def run_checks(agents: list[ModuleType] | None = None) -> list[Finding]:
    chosen = agents if agents is not None else [a for a in AGENTS if a.detected()]
    findings: list[Finding] = []
    if not chosen:
        findings.append(Finding(WARN, "agents", "no Claude Code, Gemini CLI, Codex CLI or Qwen Code config found",
                                "install an agent, then run `wwt setup`"))
    for agent in chosen:
        findings += check_agent(agent)
        if agent in (gemini, qwen):  # plugin or setup alike: trust is the agent's own setting
            findings += check_folder_trust(agent)
    runtime = check_runtime()
    findings += runtime + check_log_folders() + check_model() + check_redaction()
    if not any(f.area == "data dir" for f in runtime):  # a refused data dir is not opened
        findings += check_store() + check_indexes() + check_log()
    findings += check_team()
    return findings


def exit_code(findings: list[Finding]) -> int:
    return 1 if any(f.status == FAIL for f in findings) else 0


_COLOURS = {OK: "32", INFO: "36", WARN: "33", FAIL: "31"}  # green, cyan, yellow, red


def render(findings: list[Finding], stream=None) -> int:
    """Print the findings, one line each plus the fix, and return the exit code. Plain text (colour on a
    terminal unless NO_COLOR): no rich, so ``wwt doctor`` runs without the CLI's imports, and a message holding
    ``[brackets]`` (a path) is printed as it is, not read as markup."""
    import sys

    out = stream if stream is not None else sys.stdout
    colour = getattr(out, "isatty", lambda: False)() and not os.environ.get("NO_COLOR")
    lines = []
    for f in findings:
        status = f"{f.status:<4}"
        if colour:
            status = f"\033[{_COLOURS.get(f.status, '0')}m{status}\033[0m"
        lines.append(f"{status} {f.area:<11} {f.message}")
        if f.fix and f.status != OK:
            lines.append(f"     {'':<11} → {f.fix}")
    code = exit_code(findings)
    lines.append("all good" if code == 0 else "something needs fixing (see above)")
    out.write("\n".join(lines) + "\n")
    out.flush()
    return code


def main() -> int | None:
    """``wwt doctor`` without the CLI (typer, rich: most of its time before): the exit code, or None when
    something unexpected happened — the full CLI then runs the checks again and reports it its usual way."""
    try:
        findings = run_checks()
    except Exception:  # noqa: BLE001 - e.g. a refused data dir: the CLI's one-line error handling applies
        return None
    return render(findings)


__all__ = ["Finding", "run_checks", "exit_code", "render", "main", "check_agent", "check_plugin",
           "command_executable"]
