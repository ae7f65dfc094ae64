"""Console scripts ``wwt`` and ``wwt-mcp``: ask the resident engine first (standard library only up to that
point), and fall back to the full in-process CLI (typer, rich, the model…) when no engine can answer."""

from __future__ import annotations

import sys


def main() -> None:
    from wwt.paths import pin_home

    pin_home()  # before the engine's location is computed from it (also when called without wwt.__main__)
    args = sys.argv[1:]
    if args and args[0] in ("search", "show", "status", "mcp"):
        from wwt.engine import client

        if args[0] == "mcp" and len(args) == 1:
            code = client.mcp_pipe()
            if code is not None:
                _exit_now(code)
        elif (code := client.run_cli(args)) is not None:
            _exit_now(code)  # the engine answered: skip interpreter shutdown (a few ms of a ~50 ms command)
    from wwt.cli import main as cli_main

    cli_main()


def mcp_main() -> None:
    from wwt.engine import client
    from wwt.paths import pin_home

    pin_home()
    code = client.mcp_pipe()
    if code is not None:
        _exit_now(code)
    from wwt.mcp_server import main as server_main

    server_main()


def _exit_now(code: int) -> None:
    """End a thin client without interpreter shutdown. The MCP pipe's stdin thread may sit in a read, and
    finalising while it holds stdin's lock aborts the process; a CLI client has printed its answer, and has
    nothing to clean up but would spend a noticeable part of its run tearing down modules."""
    import os

    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
