"""``python -m wwt`` and the ``wwt`` console script.

``wwt hook <agent>`` runs on every agent turn (the plugins call it by name from PATH), so it is dispatched here
before the CLI's imports (typer, rich): ~0.1 s instead of ~0.4 s+ per turn. Then ``wwt.entry`` asks the
resident engine (search/show/status/mcp) before it falls back to the full CLI."""

import sys


def main() -> None:
    from wwt.paths import pin_home

    pin_home()  # a relative WWT_HOME means the folder wwt was started in, for every process it starts too
    if len(sys.argv) > 1 and sys.argv[1] == "hook":
        from wwt.hook import main as hook_main

        sys.exit(hook_main(sys.argv[2:]))
    if sys.argv[1:] == ["doctor"]:  # likewise: the checks without typer/rich (most of its time before)
        from wwt.doctor import main as doctor_main

        if (code := doctor_main()) is not None:
            sys.exit(code)
    from wwt.entry import main as entry_main  # the engine's thin clients first, then the full CLI

    entry_main()


if __name__ == "__main__":
    main()
