import sys

if len(sys.argv) > 1 and sys.argv[1] == "hook":
    # Fast path for agent hooks (`python -m wwt hook <platform>`): skip the CLI's imports (typer, rich).
    from wwt.hook import main as _hook_main

    sys.exit(_hook_main(sys.argv[2:]))

from wwt.cli import main

if __name__ == "__main__":
    main()
