"""CLI commands for the integrations: ``setup``, ``hook``, ``mcp``, ``doctor`` and the hidden ``worker``.

``wwt/cli.py`` calls ``register(app)``. Heavy modules load inside the commands, so ``wwt hook`` stays fast."""

from __future__ import annotations

import sys

import typer


def _console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


def _first_ingest(out) -> None:
    """Fetch the model if needed, then ingest every agent's existing logs (incremental: a re-run embeds only
    what is new)."""
    from wwt.errors import ModelUnavailable
    from wwt.model_source import resolve_model
    from wwt.service import Memory

    try:
        info = resolve_model(allow_download=True)
        out.print(f"model: {info.model_dir} ({info.source})")
        backfill = True
    except ModelUnavailable as exc:  # archive and index by words now; vectors once the model is there
        out.print(f"[yellow]model not available ({exc}):[/] archiving and indexing by words now; searches answer "
                  "by words until it is there (`wwt model --fetch`, or WWT_MODEL_DIR), then the next ingest adds "
                  "the vectors", soft_wrap=True)  # one line, however narrow the terminal
        backfill = False
    from wwt.present import render_ingest_summary, rich_progress

    memory = Memory()
    with rich_progress(_console(stderr=True)) as progress:
        summary = memory.ingest(None, progress=progress, vector_progress=progress.vectors, backfill=backfill)
    render_ingest_summary(out, summary)
    memory.close()


def _ask_for_sources() -> list[str]:
    """In a terminal, once per setup: the repositories whose Aider histories to read (Aider keeps one file per
    repository, so there is no folder to find by ourselves). Not asked when piped or when Aider is not here."""
    import shutil

    if not (sys.stdin.isatty() and sys.stdout.isatty()) or shutil.which("aider") is None:
        return []
    answer = typer.prompt(
        "Aider keeps its history in each repository. Folders to read (space-separated, Enter to skip)",
        default="", show_default=False,
    )
    return answer.split()


def _remember_sources(paths: list[str]) -> None:
    from wwt.paths import data_dir
    from wwt.sources import remember

    if not paths:
        return
    for path in remember(data_dir(), paths):  # a path that does not exist: one line, exit 2, nothing changed
        typer.echo(f"remember   {path} (read on every ingest)")


def register(app: typer.Typer) -> None:
    @app.command()
    def setup(
        dry_run: bool = typer.Option(False, "--dry-run", help="Show the planned changes as a diff; change nothing."),
        uninstall: bool = typer.Option(False, "--uninstall", help="Remove exactly what setup added."),
        no_ingest: bool = typer.Option(False, "--no-ingest", help="Skip the first ingest of existing logs."),
        agent: list[str] = typer.Option(None, "--agent", help="Only this agent (claude, gemini, codex, qwen, cursor, copilot, opencode, cline, roo); "
                                         "repeatable."),
        no_agent_cli: bool = typer.Option(
            False, "--no-agent-cli", help="Edit config files directly even when the agent's `mcp add` is on PATH."
        ),
        source: list[str] = typer.Option(
            None, "--source", help="Also read this folder or file on every ingest, e.g. a repository with Aider's "
            ".aider.chat.history.md (remembered); repeatable.",
        ),
    ) -> None:
        """Wire wwt into every agent found here: hooks (automatic capture), MCP server, first ingest.

        Idempotent and safe to re-run; every edited file is backed up and written atomically."""
        from wwt.setup import plan as setup_plan

        out = _console()
        if not (dry_run or uninstall):
            _remember_sources(source or _ask_for_sources())
        plan, result = setup_plan.run(uninstall=uninstall, only=agent or None, dry_run=dry_run,
                                      use_agent_cli=not no_agent_cli)
        for line in plan.skipped:
            typer.echo(f"skip       {line}")
        if dry_run:
            sys.stdout.write(str(result))
            return
        for line in result:
            typer.echo(line)
        if uninstall:
            out.print("wwt hooks and MCP registrations removed (your archive in the data dir is kept).")
            return
        for note in plan.notes:
            typer.echo(f"todo       {note}")
        if not plan.agents:
            out.print("no agent found: install Claude Code, Gemini CLI, Codex CLI, Qwen Code, Cursor, Copilot CLI, "
                      "OpenCode, Cline or Roo Code, then re-run `wwt setup`.")
        if not no_ingest:
            _first_ingest(out)

    @app.command()
    def hook(
        platform: str = typer.Argument(..., help="claude-code | gemini-cli | codex-cli | qwen-code | cursor | copilot-cli"),
        payload: list[str] = typer.Argument(None, hidden=True),
    ) -> None:
        """Entry point for agent hooks: queue the transcript, start the worker, exit 0 (reads JSON on stdin)."""
        from wwt.hook import main as hook_main

        raise typer.Exit(hook_main([platform, *(payload or [])]))

    @app.command()
    def mcp() -> None:
        """Run the MCP server over stdio (what the agents start)."""
        from wwt.mcp_server import main as mcp_main

        mcp_main()

    @app.command()
    def doctor() -> None:
        """Check hooks, MCP registration, model, store, worker and log; say what to fix."""
        from wwt.doctor import render, run_checks

        raise typer.Exit(render(run_checks()))

    @app.command()
    def worker(
        retry_parked: bool = typer.Option(
            False, "--retry-parked", help="First queue again the files the worker gave up on (see `wwt doctor`)."
        ),
    ) -> None:
        """Ingest what the hooks queued, then exit when idle (hooks start it by themselves)."""
        from wwt.worker import main as worker_main
        from wwt.worker import retry_parked as requeue

        if retry_parked:
            typer.echo(f"queued again: {requeue()} file(s)")
        raise typer.Exit(worker_main())
