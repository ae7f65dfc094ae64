"""``wwt config``: the data dir's settings that change what is stored (``wwt.settings``). ``wwt/cli.py`` calls
``register(app)``."""

from __future__ import annotations

import typer

from wwt.errors import UsageError

_ON = ("on", "true", "yes", "1")
_OFF = ("off", "false", "no", "0")


def register(app: typer.Typer) -> None:
    @app.command()
    def config(
        name: str = typer.Argument(None, help="Setting: redact."),
        value: str = typer.Argument(None, help="on | off (omit to print the current value)."),
    ) -> None:
        """Show or change this data dir's settings. `redact` (on by default): secrets are replaced before
        anything is stored, by every process that archives here (ingest, the engine, hooks, MCP)."""
        from wwt import settings
        from wwt.limits import echo
        from wwt.paths import data_dir

        if name is None:
            for key, current in settings.load().items():
                typer.echo(f"{key} = {'on' if current else 'off'}")
            typer.echo(f"(stored in {settings.settings_path()}; defaults when missing)")
            return
        if name not in settings.DEFAULTS:
            raise UsageError(f"no setting named {echo(name, 40)} (settings: {', '.join(settings.DEFAULTS)})")
        if value is None:
            typer.echo("on" if settings.load()[name] else "off")
            return
        if value.lower() not in _ON + _OFF:
            raise UsageError(f"{name} is on or off, not {echo(value, 40)}")
        on = value.lower() in _ON
        data_dir()  # created 0700 if new; a data dir another user owns is refused here
        path = settings.save(name, on)
        if on:
            typer.echo(f"redact = on ({path}): secrets are replaced before they are stored, from now on; what was "
                       "archived while it was off keeps its text (`wwt forget` or `wwt reset` removes it)")
        else:
            typer.echo(f"redact = off ({path}): from now on every process that archives here — wwt ingest, the "
                       "engine, the agents' hooks, MCP ingest_session — stores secrets as they were written; "
                       "`wwt config redact on` undoes it", err=True)
