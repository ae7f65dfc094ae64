"""``wwt engine status|stop|start``: look at, stop or pre-start the resident engine (see wwt/engine/)."""

from __future__ import annotations

import time

import typer


def _describe(info: dict) -> list[str]:
    from wwt.present import human_bytes

    exits = info.get("exits_in_s")
    idle = (f"exits after {exits:.0f}s more without clients" if exits is not None
            else f"busy (idle exit after {info.get('idle_exit_s', 0):.0f}s without clients)")
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info.get("started_at", 0)))
    return [
        f"engine pid {info.get('pid')} · wwt {info.get('version')} · up {info.get('uptime_s', 0):.0f}s "
        f"(since {started})",
        f"memory {human_bytes(int(info.get('rss_bytes', 0)))} RSS · {info.get('clients', 0)} client(s), "
        f"{info.get('mcp_sessions', 0)} MCP session(s) · {info.get('requests', 0)} request(s) · "
        + ("warm" if info.get("warm") else "warming up") + (" · ingesting" if info.get("ingesting") else ""),
        idle,
        f"data {info.get('data_dir')} · socket {info.get('socket')}",
    ]


def register(app: typer.Typer) -> None:
    engine_app = typer.Typer(help="The resident engine shared by the CLI, MCP servers and hooks.",
                             no_args_is_help=True)
    app.add_typer(engine_app, name="engine")

    @engine_app.command("status")
    def status(as_json: bool = typer.Option(False, "--json", help="Machine-readable.")) -> None:
        """Pid, uptime, RSS, clients and idle timer of this data dir's engine."""
        import json

        from wwt.engine import client, ipc

        if not ipc.enabled():
            typer.echo("engine disabled (WWT_ENGINE=off or no Unix sockets): every command runs in-process")
            return
        info = client.status()
        if as_json:
            typer.echo(json.dumps(info or {"running": False}, indent=2))
            return
        if not info:
            typer.echo(f"no engine running for {ipc.data_dir()} (one starts on the next search or MCP session)")
            return
        if not info.get("ok"):
            typer.echo(f"engine answered with an error: {str(info.get('error'))[:200]}")
            raise typer.Exit(1)
        for line in _describe(info):
            typer.echo(line)

    @engine_app.command("stop")
    def stop() -> None:
        """Stop the engine now (it also exits by itself when idle; WWT_ENGINE=off disables it)."""
        from wwt.engine import client, ipc

        info = client.stop() if ipc.enabled() else None
        if info is None:
            typer.echo("no engine running")
            return
        typer.echo(f"engine {info.get('pid', '')} stopped".replace("  ", " "))

    @engine_app.command("start")
    def start() -> None:
        """Start the engine now and wait until it is warm (it otherwise starts on the first search)."""
        from wwt.engine import client, ipc

        if not ipc.enabled():
            typer.echo("engine disabled (WWT_ENGINE=off or no Unix sockets)")
            raise typer.Exit(1)
        if why := client.unavailable():
            typer.echo(f"no engine can run here: {why}")
            raise typer.Exit(1)
        info = client.start()
        if not info or not info.get("ok"):
            typer.echo("the engine did not start; see the data dir's ingest.log")
            raise typer.Exit(1)
        for line in _describe(info):
            typer.echo(line)
