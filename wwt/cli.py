"""Placeholder until the CLI lands."""


def main() -> None:  # pragma: no cover
    raise SystemExit("wwt: CLI not built yet")
