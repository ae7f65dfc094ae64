"""``python -m wwt.model_check [--load] [--json]``: resolve the embedding model (downloading it if needed) and
report it — above both ``wwt.model_source`` (where the model comes from) and ``wwt.embedder`` (loading it)."""

from __future__ import annotations

import json
import sys

from wwt.embedder import load_embedder
from wwt.errors import WwtError
from wwt.model_source import describe_model, resolve_model


def main(argv: list[str] | None = None) -> int:
    """``python -m wwt.model_check [--load] [--json]``: resolve (downloading if needed) and report.

    ``--load`` also opens the ONNX session, so a folder that exists but cannot be loaded is reported too.
    Errors are one line on stderr and exit code 1, never a traceback.
    """
    args = sys.argv[1:] if argv is None else argv
    try:
        info = resolve_model()
        if "--load" in args:
            load_embedder()
        summary = describe_model(info=info)
    except WwtError as exc:
        print(f"wwt: {exc}", file=sys.stderr)
        return exc.exit_code
    if "--json" in args:
        print(json.dumps(summary, indent=2))
    else:
        state = {True: "checksums ok", False: "CHECKSUM MISMATCH", None: "unpinned"}[summary["checksums_ok"]]
        mb = summary["total_bytes"] / 1e6
        which = (
            "WWT_MODEL_DIR"
            if summary["source"] == "env"
            else f"{summary['repo_id']}@{summary['revision'][:12]}"
        )
        print(f"{which} ({summary['source']}): {summary['model_dir']} ({mb:.0f} MB, {state})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
