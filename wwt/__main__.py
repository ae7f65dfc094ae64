"""``python -m wwt`` and the ``wwt`` console script.

``wwt hook <agent>`` runs on every agent turn (the plugins call it by name from PATH), so it is dispatched here
before the CLI's imports (typer, rich): ~0.1 s instead of ~0.4 s+ per turn."""

import sys


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "hook":
        from wwt.hook import main as hook_main

        sys.exit(hook_main(sys.argv[2:]))
    from wwt.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
