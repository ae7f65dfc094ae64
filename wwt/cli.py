"""``wwt`` — the command line. A thin shell over ``wwt.service.Memory``: parsing options, asking before
deleting, printing. Heavy modules (onnxruntime, tantivy, kiwipiepy, hnswlib) are imported only inside the
commands that need them, so ``wwt --help`` and ``wwt --version`` start instantly.

Every user error is ONE line on stderr and a non-zero exit (``WwtError``; a bad command line — unknown command,
missing argument, value out of range — exits 2); an unexpected failure is one line plus a hint to rerun with
``WWT_DEBUG=1`` for the traceback. No error line quotes more than ~200 characters of what was typed; input bounds
live in ``wwt.limits`` (shared with the MCP server).
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from wwt import __version__, limits
from wwt.engine import context as engine_context
from wwt.errors import UsageError, WwtError, file_problem, out_of_space
from wwt.limits import check_length, check_range, echo
from wwt.models import PLATFORMS, SOURCE_ALIASES, platform_of
from wwt.when import parse_when

if TYPE_CHECKING:
    from wwt.service import Memory

app = typer.Typer(
    name="wwt",
    help="그때 그거 뭐였지? — search your AI coding agent conversations (Claude Code, Gemini CLI, Codex CLI).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# The terminal of whoever runs the command: this process's, or inside the engine the client's (issue 12).
console = engine_context.ContextConsole()
err_console = engine_context.ContextConsole(stderr=True)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"wwt {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """그때 그거 뭐였지? — local, private search over your AI coding agent conversations."""


# ---------------------------------------------------------------------------------------------- helpers


def _memory() -> Memory:
    from wwt.service import Memory

    return engine_context.shared_memory() or Memory.open()  # inside the engine: its one warm Memory


def _stop_engine() -> bool:
    """Before replacing the archive or the indexes: the engine holds them open (it restarts on demand). True
    when one was running."""
    from wwt.engine import client as engine_client

    return engine_client.stop() is not None


def _restart_engine() -> None:
    """After ``reindex``: the engine that was running is started again, detached, so it warms up on the new
    indexes while the user reads the answer — the next search is not a cold one."""
    from wwt.engine import client as engine_client

    loc = engine_client.location()
    if loc is not None:
        engine_client.spawn(loc, "cli")


def _confirm(question: str, yes: bool) -> None:
    if yes:
        return
    if not sys.stdin.isatty():
        raise UsageError("refusing to delete without confirmation: rerun with --yes")
    if not typer.confirm(question, default=False):
        raise typer.Exit(1)


# ---------------------------------------------------------------------------------------------- commands


@app.command()
def ingest(
    paths: list[Path] = typer.Argument(
        None, help="Log files or folders (any depth). None = every agent's default log locations."
    ),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Per-file notes, unrecognised files' names."),
    as_json: bool = typer.Option(False, "--json", help="The summary as JSON (see docs/cli.md)."),
    pause: bool = typer.Option(False, "--pause", help="Pause the background embedding (laptop on battery)."),
    resume: bool = typer.Option(False, "--resume", help="Resume it, and ingest + embed here now."),
) -> None:
    """Archive and index agent conversation logs (incremental: unchanged files are skipped), then embed them;
    search by words works as soon as the first chunks are indexed."""
    from wwt.present import render_ingest_summary, rich_progress

    for path in paths or []:
        check_length("path", str(path), limits.MAX_PATH_CHARS)
        try:
            present = path.exists()
        except OSError as exc:  # a name too long for the file system, …
            raise UsageError(f"cannot use {echo(path)}: {exc.strerror or exc}") from None
        if not present:
            raise UsageError(f"no such file or folder: {echo(path)}")
    from wwt.settings import env_note

    if note := env_note():  # WWT_REDACT=0 turned redaction off before: say that it no longer does
        err_console.print(f"[yellow]{note}[/]", soft_wrap=True)
    memory = _memory()
    if pause or resume:
        if pause and resume:
            _fail("choose one of --pause and --resume", 2)
        memory.pause_backfill(pause)
        if pause:
            console.print("vector back-fill paused; search by words still works — `wwt ingest --resume` resumes")
            return
    with rich_progress(err_console) as progress:
        summary = memory.ingest(list(paths) if paths else None, progress=progress, vector_progress=progress.vectors,
                                backfill_seconds=None)  # the user waits for it, with a progress bar
    if as_json:
        import json

        sys.stdout.write(json.dumps(summary.to_dict(), ensure_ascii=False, indent=2) + "\n")
        return
    render_ingest_summary(console, summary, verbose=verbose)
    if not summary.files_seen:
        where = "in " + ", ".join(str(p) for p in paths) if paths else "in the agents' default log folders"
        console.print(f"[yellow]no agent logs found {where}[/]")


@app.command()
def search(
    query: list[str] = typer.Argument(..., help="What you are looking for (Korean, English, identifiers…)."),
    all_projects: bool = typer.Option(False, "--all", "-a", help="Search every project."),
    project: str = typer.Option(None, "--project", "-p", help="Search this project (name or path)."),
    source: str = typer.Option(
        None, "--source", "-s", help="Only this agent: " + "|".join(PLATFORMS) + " (or " + "|".join(SOURCE_ALIASES) + ")"
    ),
    branch: str = typer.Option(None, "--branch", "-b", help="Only sessions on this git branch."),
    since: str = typer.Option(None, "--since", help="From: YYYY-MM-DD, ISO time, yesterday, 7d, 2w…"),
    until: str = typer.Option(None, "--until", help="Until (inclusive): same forms as --since."),
    limit: int = typer.Option(10, "--limit", "-n", help=f"How many sessions to show (1-{limits.MAX_LIMIT})."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output (see docs/cli.md)."),
    team: bool = typer.Option(False, "--team", help="Also search the team server (wwt team join)."),
) -> None:
    """Search past conversations. Default scope: the current project (git root or folder name)."""
    import json

    from rich.markup import escape

    from wwt.models import Filters
    from wwt.present import hits_to_json, render_hits, terminal_safe
    from wwt.project import current_project
    from wwt.search import query_terms

    text, shortened = limits.clip_query(" ".join(query))
    if all_projects and project:
        raise UsageError("use either --all or --project, not both")
    platform = platform_of(check_length("--source", source, limits.MAX_NAME_CHARS) or "") if source else None
    if source and platform is None:
        raise UsageError(f"unknown --source {echo(source)}: use one of {', '.join(PLATFORMS)} (or {', '.join(SOURCE_ALIASES)})")
    check_range("--limit", limit, 1, limits.MAX_LIMIT)
    check_length("--project", project, limits.MAX_PATH_CHARS if project and "/" in project else limits.MAX_NAME_CHARS)
    check_length("--branch", branch, limits.MAX_NAME_CHARS)
    if shortened:
        err_console.print(f"[yellow]wwt: {shortened}[/]", highlight=False)
    filters = Filters(
        platform=platform,
        git_branch=branch,
        since=parse_when(since) if since else None,
        until=parse_when(until, end_of_day=True) if until else None,
    )
    memory = _memory()
    if project:
        filters.project = project
        scope = f"project {project}"
    elif all_projects:
        scope = "all projects"
    else:
        here = current_project(engine_context.cwd())
        if here is None or (not memory.has_project(here) and not (team and here)):
            raise WwtError(
                f"no sessions for project {here!r} (from the current folder); searched nothing — "
                "use --all to search every project, or --project NAME"
            )
        filters.project = here
        scope = f"project {here}"
    if team:
        from wwt.cli_team import team_search
        from wwt.search import SearchOutcome

        local = memory.search_outcome(text, filters, limit) if memory.has_data() and (
            not filters.project or memory.has_project(filters.project)) else SearchOutcome(hits=[], weak=True)
        outcome = team_search(memory, text, filters, limit, local,
                              lambda line: err_console.print(f"[yellow]wwt: {escape(line)}[/]", highlight=False))
    else:
        outcome = memory.search_outcome(text, filters, limit)
    if outcome.words_only:  # the model could not be loaded: these hits come from the lexical leg alone
        err_console.print(f"[yellow]wwt: {escape(terminal_safe(outcome.words_only))}[/]", highlight=False,
                          soft_wrap=True)
    if as_json:
        shape = hits_to_json(text, outcome, filters, scope)
        if shortened:
            shape["notice"] = shortened
        sys.stdout.write(json.dumps(shape, ensure_ascii=False, indent=2))
        sys.stdout.write("\n")
        return
    render_hits(console, text, outcome, scope, terms=query_terms(text))


@app.command()
def show(
    session: str = typer.Argument(..., help="Session id (or a unique prefix of at least 4 characters)."),
    around: str = typer.Option(None, "--around", help="Centre the page on this chunk id (from search)."),
    start: int = typer.Option(0, "--start", help="First message position."),
    limit: int = typer.Option(40, "--limit", "-n", help="Messages per page."),
    full: bool = typer.Option(False, "--full", help="Do not shorten long messages."),
) -> None:
    """Print an archived conversation, a page at a time."""
    from rich.markup import escape

    from wwt.present import render_session, terminal_safe
    from wwt.search import shell_word

    check_range("--start", start, 0, limits.MAX_POSITION)
    check_range("--limit", limit, 1, limits.MAX_MESSAGES_PAGE)
    check_length("session id", session, limits.MAX_SESSION_ID_CHARS)
    check_length("--around", around, limits.MAX_NAME_CHARS)
    from rich.text import Text

    from wwt.service import NoDataYet, UnknownSession

    memory = _memory()
    view = None
    try:
        target = memory.resolve_session(session).session_id
    except (UnknownSession, NoDataYet):  # another machine's session, found by `wwt search --team`
        from wwt.cli_team import show_from_team

        remote = None if around else show_from_team(session, start, limit)
        if remote is None:
            raise
        view, label = remote
        console.print(Text(f"from the team server: pushed by {terminal_safe(label)}", style="dim"), soft_wrap=True)
    if view is None:
        if around:
            where = memory.chunk_position(target, around)
            if where is None:
                raise UsageError(f"no chunk {echo(around)} in session {target}")
            target, first_seq = where
            start = max(0, first_seq - limit // 4)
        view = memory.get_session(target, start=start, end=start + limit)
    render_session(console, view, full=full)
    total = view.total or 0
    shown_to = start + sum(1 for m in view.messages if m.session_id == view.session.session_id)
    if shown_to < total:
        console.print(
            f"[dim]messages {start}–{shown_to - 1} of {total}; next page: "
            f"wwt show {escape(terminal_safe(shell_word(view.session.session_id)))} --start {shown_to} --limit {limit}[/]",
            soft_wrap=True,
        )


@app.command()
def status() -> None:
    """What is archived: counts, sizes, model, last ingest."""
    from wwt.model_source import describe_model
    from wwt.present import render_status

    info = _memory().status()
    render_status(console, info, describe_model())


@app.command()
def model(
    fetch: bool = typer.Option(False, "--fetch", help="Download the pinned model now if it is not here yet."),
    print_dir: bool = typer.Option(False, "--print-dir", help="Print only the model folder (for scripts)."),
) -> None:
    """Which embedding model is used, where it lives, and whether its checksums hold."""
    from wwt.model_source import describe_model, resolve_model
    from wwt.present import render_model

    info = resolve_model(allow_download=True) if fetch or print_dir else None
    if fetch:
        from wwt.errors import ModelUnavailable
        from wwt.spm_tokenizer import UnsupportedTokenizer, load_sentencepiece

        try:  # the one-time tokenizer conversion happens here rather than in the first search
            load_sentencepiece(info.tokenizer_path)
        except (OSError, RuntimeError, UnsupportedTokenizer) as exc:
            raise ModelUnavailable(f"cannot read {info.tokenizer_path} ({exc})") from None
    if print_dir:
        typer.echo(str(info.model_dir))
        return
    summary = describe_model(info=info)
    if not summary.get("available"):  # a missing model is an error here: scripts and `&&` must see it
        from wwt.errors import ModelUnavailable

        raise ModelUnavailable(summary.get("error") or "the embedding model is not available")
    render_model(console, summary)


@app.command()
def reindex() -> None:
    """Rebuild the search indexes from the archive (no re-embedding)."""
    was_running = _stop_engine()
    _memory().reindex()
    if was_running:
        _restart_engine()
    console.print("indexes rebuilt from the archive")


@app.command()
def reset(yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask.")) -> None:
    """Delete everything wwt archived and indexed (keeps the downloaded model and agent settings)."""
    from wwt.present import human_bytes

    memory = _memory()
    plan = memory.reset_plan()
    if not plan.delete:
        console.print(f"nothing to delete in {memory.home}")
        return
    console.print("this deletes:")
    for path, size in plan.delete:
        console.print(f"  {path}  ({human_bytes(size)})")
    for path in plan.keep:
        console.print(f"[dim]keeps: {path}[/]")
    console.print(
        "[yellow]conversations whose agent logs are already gone (e.g. Claude Code deletes them after 30 "
        "days) cannot be recovered[/]"
    )
    _confirm("delete?", yes)
    _stop_engine()
    memory.reset()
    console.print("deleted")


@app.command()
def forget(
    session: str = typer.Argument(None, help="Session id (or unique prefix) to forget."),
    project: str = typer.Option(None, "--project", "-p", help="Forget every session of this project."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask."),
) -> None:
    """Remove one session or one project from the archive and the indexes."""
    if (session is None) == (project is None):
        raise UsageError("give a session id or --project NAME (one of them)")
    check_length("session id", session, limits.MAX_SESSION_ID_CHARS)
    check_length("--project", project, limits.MAX_PATH_CHARS if project and "/" in project else limits.MAX_NAME_CHARS)
    memory = _memory()
    doomed = memory.forget_plan(session_id=session, project=project)
    from rich.markup import escape

    from wwt.present import terminal_field

    # an archived id is the log's text: printed as one line, never as rich markup
    what = f"project {project!r}" if project else f"session {doomed[0]}"
    console.print(f"this removes {escape(terminal_field(what))}: {len(doomed)} session(s) including subagents",
                  highlight=False)
    _confirm("forget?", yes)
    removed = memory.forget(session_id=session, project=project)
    console.print(f"forgot {removed} session(s)")
    from wwt.cli_team import after_forget

    after_forget(doomed, lambda line: console.print(line, highlight=False))


# ---------------------------------------------------------------------------------------------- integrations

from wwt.cli_config import register as _register_config  # noqa: E402
from wwt.cli_integrations import register as _register_integrations  # noqa: E402
from wwt.cli_team import register as _register_team  # noqa: E402
from wwt.cli_ui import register as _register_ui  # noqa: E402
from wwt.engine.commands import register as _register_engine  # noqa: E402

_register_integrations(app)
_register_engine(app)
_register_config(app)
_register_ui(app)
_register_team(app)


# ---------------------------------------------------------------------------------------------- entry point


_COMMAND: Any = None
_COMMAND_LOCK = threading.Lock()


def _command() -> Any:
    """The click command typer builds from ``app``, built once per process. ``app(...)`` rebuilds it (every
    parameter's signature and type adapters) on each call: in the engine, which runs ``main`` per request,
    that was about half of a warm search's time. (``app(...)`` also installs typer's excepthook, which with
    ``pretty_exceptions_enable=False`` only hands over to the default one.)"""
    global _COMMAND
    with _COMMAND_LOCK:
        if _COMMAND is None:
            _COMMAND = typer.main.get_command(app)
        return _COMMAND


class _OutputWatch:
    """Standard output that remembers a failed write: a full output device (``> /dev/full``) must not be
    reported as a full disk under the archive."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.failed: OSError | None = None

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except OSError as exc:
            self.failed = exc
            raise

    def flush(self) -> None:
        try:
            self.stream.flush()
        except OSError as exc:
            self.failed = exc
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def main(argv: list[str] | None = None) -> None:
    """Console script. Exit codes: 0 ok, 1 error, 2 usage error, 130 interrupted."""
    watch = None
    if engine_context.CURRENT.get() is None:  # the engine's requests share one sys.stdout: not there
        watch = sys.stdout = _OutputWatch(sys.stdout)  # type: ignore[assignment]
    try:
        _main(argv, watch)
    finally:
        if watch is not None and sys.stdout is watch:
            sys.stdout = watch.stream


def _main(argv: list[str] | None, watch: _OutputWatch | None) -> None:
    debug = bool(engine_context.getenv("WWT_DEBUG"))
    click = _click_exceptions()
    try:
        # not standalone: a bad command line comes back here as a click error, printed as one line below
        code = _command()(args=argv, prog_name="wwt", standalone_mode=False)
    except click.NoArgsIsHelpError as exc:
        typer.echo(exc.ctx.get_help() if exc.ctx else "", nl=False)
        sys.exit(2)
    except click.UsageError as exc:
        where = f" — see '{exc.ctx.command_path} -h'" if exc.ctx else ""
        message = _shorten_echoed(exc.format_message(), sys.argv[1:] if argv is None else argv)
        _fail(limits.clip(message, 2 * limits.MAX_ECHO_CHARS) + where, 2)
    except typer.Abort:
        _fail("aborted", 1)
    except WwtError as exc:
        if debug:
            raise
        _fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except Exception as exc:  # noqa: BLE001 - the one place that turns surprises into one line
        if debug:
            raise
        from wwt.store import store_damage, store_damage_error

        if watch is not None and watch.failed is not None:  # writing the answer failed, not the archive
            from wwt.engine.client import output_failure

            sys.exit(output_failure(watch.failed))
        if store_damage(exc):  # reached through a raw query rather than a Store method
            from wwt import paths

            _fail(str(store_damage_error(paths.store_path(), exc)), 1)
        if out_of_space(exc):
            from wwt import paths

            _fail(f"cannot write to {paths.data_dir(create=False)}: no space left on the disk (or a file-size "
                  "limit); free some space and rerun — what was archived before is kept, the rest is redone", 1)
        if problem := file_problem(exc):
            _fail(problem, 1)
        _fail(f"unexpected error: {type(exc).__name__}: {limits.clip(str(exc), limits.MAX_ECHO_CHARS)} "
              "(rerun with WWT_DEBUG=1 for the traceback)", 1)
    else:
        try:
            sys.stdout.flush()  # here, not at interpreter exit, where a failure is a traceback
        except OSError as exc:
            from wwt.engine.client import output_failure

            sys.exit(output_failure(exc))
        sys.exit(code if isinstance(code, int) else 0)


def _shorten_echoed(message: str, argv: list[str]) -> str:
    """click quotes the offending argument whole (``No such command 'zzz…'``): each argument longer than
    ``MAX_ECHO_CHARS`` is cut to that inside ``message``."""
    for arg in sorted({a for a in argv if len(a) > limits.MAX_ECHO_CHARS}, key=len, reverse=True):
        message = message.replace(arg, arg[: limits.MAX_ECHO_CHARS] + f"… ({len(arg):,} characters)")
    return message


def _click_exceptions() -> Any:
    """The click that typer runs on (typer ≥ 0.26 vendors it as ``typer._click``)."""
    try:
        from typer._click import exceptions
    except ImportError:  # an older typer on the real click
        from click import exceptions
    return exceptions


def _fail(message: str, code: int) -> None:
    """One unwrapped line on stderr, then exit (terminal-safe: it may quote an archived name)."""
    from wwt.present import terminal_safe

    sys.stderr.write(f"wwt: {terminal_safe(limits.clip(message, 3 * limits.MAX_ECHO_CHARS))}\n")
    sys.stderr.flush()
    sys.exit(code)
