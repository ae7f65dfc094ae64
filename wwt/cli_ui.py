"""CLI commands ``export``, ``handoff`` and ``ui`` (issue 28): thin shells over ``wwt.export``,
``wwt.handoff`` and ``wwt.ui.server``."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from wwt import limits
from wwt.limits import check_length, check_range


def _memory():  # noqa: ANN202 - a service.Memory, imported lazily
    from wwt.engine import context as engine_context
    from wwt.service import Memory

    return engine_context.shared_memory() or Memory.open()


def _write_out(text: str, output: Path | None) -> None:
    if output is None or str(output) == "-":
        sys.stdout.write(text)
        return
    from wwt.engine import context as engine_context
    from wwt.fileio import atomic_write

    check_length("--output", str(output), limits.MAX_PATH_CHARS)
    target = output if output.is_absolute() else Path(engine_context.cwd()) / output
    atomic_write(target, text, 0o600)  # the archive is private; so is a copy of it
    sys.stderr.write(f"wrote {target} ({len(text.encode('utf-8')):,} bytes)\n")


def register(app: typer.Typer) -> None:
    @app.command()
    def export(
        session: str = typer.Argument(..., help="Session id (or a unique prefix of at least 4 characters)."),
        fmt: str = typer.Option("md", "--format", "-f", help="md (Markdown) or html (one self-contained file)."),
        output: Path = typer.Option(None, "--output", "-o", help="Write to this file (default: standard output)."),
    ) -> None:
        """Export one archived conversation (already redacted) as Markdown or a self-contained HTML file."""
        from wwt.export import export_session

        check_length("session id", session, limits.MAX_SESSION_ID_CHARS)
        _write_out(export_session(_memory(), session, fmt.lower()), output)

    @app.command()
    def handoff(
        session: str = typer.Argument(..., help="Session id (or a unique prefix of at least 4 characters)."),
        to: str = typer.Option(None, "--to", help="The agent that continues (named in the pack)."),
        max_chars: int = typer.Option(12_000, "--max-chars", help="Upper bound of the pack (1000-100000)."),
        output: Path = typer.Option(None, "--output", "-o", help="Write to this file (default: standard output)."),
    ) -> None:
        """A bounded Markdown pack of a conversation — asked, done, where it stopped — to paste into another
        agent. Built from the archive, no LLM."""
        from wwt.handoff import MAX_MAX_CHARS, MIN_MAX_CHARS, session_handoff

        check_length("session id", session, limits.MAX_SESSION_ID_CHARS)
        check_length("--to", to, limits.MAX_NAME_CHARS)
        check_range("--max-chars", max_chars, MIN_MAX_CHARS, MAX_MAX_CHARS)
        _write_out(session_handoff(_memory(), session, to, max_chars), output)

    @app.command()
    def ui(
        port: int = typer.Option(0, "--port", help="Port on 127.0.0.1 (0: any free port)."),
        no_browser: bool = typer.Option(False, "--no-browser", help="Print the URL only; do not open a browser."),
    ) -> None:
        """A local, read-only web viewer on 127.0.0.1: search, read, timeline, status. Prints its URL with a
        one-time token; Ctrl-C stops it."""
        from wwt.ui.server import serve

        check_range("--port", port, 0, 65535)
        serve(port=port, open_browser=not no_browser)
