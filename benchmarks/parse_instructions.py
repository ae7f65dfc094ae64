"""Instructions per MB of ``parse_file`` (callgrind), for two or more ``wwt`` checkouts in alternating runs: the
load-independent before/after of a parser change on a shared machine (wall and CPU time there move with the
other work; the instruction count does not).

Each count is one process under ``valgrind --tool=callgrind``: the interpreter, ``wwt.parsers`` and
``wwt.redact`` imported from the checkout, then ``parse_file`` on the input; the same process without the parse
is subtracted. Inputs as in ``parse_connectors.py`` (``real-sized``: the genuine Claude Code sessions' texts in
the connector's format; ``tiny``: the connector's test fixture repeated), written once and read by every
checkout. The checkouts' outputs are compared too (a digest of the sessions and report): a change that alters
what is parsed is named.

    .venv/bin/python benchmarks/parse_instructions.py --roots /work/main,. [--only aider,cursor]
        [--inputs real-sized,tiny] [--size 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def child(root: str, path: str | None, digest_it: bool) -> None:
    """In the measured process: import the checkout's parsers, parse ``path`` (none: the import alone). The
    output's digest is made only in an unmeasured run (``digest_it``): it would count as parse work."""
    sys.path.insert(0, root)
    import wwt

    if not wwt.__file__.startswith(root):
        raise SystemExit(f"wwt imported from {wwt.__file__}, not {root}")
    import wwt.parsers
    import wwt.redact  # noqa: F401  (parse_file imports it on first use: counted with the import)

    if path is None:
        return
    sessions, report = wwt.parsers.parse_file(Path(path))
    if not digest_it:
        return
    digest = hashlib.sha256()
    for session in sessions:
        digest.update(json.dumps(dataclasses.asdict(session), sort_keys=True, default=sorted).encode())
    digest.update(json.dumps(dataclasses.asdict(report), sort_keys=True).encode())
    print(digest.hexdigest()[:16])


def count(root: str, path: Path | None) -> int:
    """Instructions of one child process (import, then the parse of ``path`` if given)."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__,
               "--child", root, str(path) if path else "-"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"callgrind run failed ({root}, {path}): {done.stderr[-600:]}")
    return int(found.group(1))


def digest(root: str, path: Path) -> str:
    """The digest of what the checkout parses from ``path`` (a plain run, not measured)."""
    command = [sys.executable, __file__, "--child", root, str(path), "--digest"]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--roots", default=".", help="wwt checkouts to compare, comma-separated (first = before)")
    ap.add_argument("--only", default="qwen-code,cursor,aider,opencode", help="connectors, comma-separated")
    ap.add_argument("--inputs", default="real-sized", help="real-sized, tiny (comma-separated)")
    ap.add_argument("--size", type=int, default=3, help="input size in MB (callgrind runs ~50x slower)")
    ap.add_argument("--child", nargs=2, metavar=("ROOT", "PATH"), help=argparse.SUPPRESS)
    ap.add_argument("--digest", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], None if args.child[1] == "-" else args.child[1], args.digest)
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import parse_connectors  # here, not at the top: the measured child imports no wwt but the checkout's

    roots = [os.path.abspath(r) for r in args.roots.split(",")]
    imports = {root: count(root, None) for root in roots}
    with tempfile.TemporaryDirectory(prefix="wwt-instr-") as tmp:
        for inputs in args.inputs.split(","):
            for platform in args.only.split(","):
                path = parse_connectors.build(platform, Path(tmp) / inputs / platform, args.size, inputs)
                megabytes = path.stat().st_size / 1e6
                per_mb, digests = [], set()
                for root in roots:
                    per_mb.append((count(root, path) - imports[root]) / megabytes / 1e6)
                    digests.add(digest(root, path))
                change = " → ".join(f"{m:.1f}" for m in per_mb)
                versus = f" ({(per_mb[-1] / per_mb[0] - 1) * 100:+.1f} %)" if len(per_mb) > 1 else ""
                same = "same output" if len(digests) == 1 else "OUTPUT DIFFERS"
                print(f"{platform:12} {inputs:10} {megabytes:5.1f} MB  {change} M instructions/MB{versus}  {same}",
                      flush=True)


if __name__ == "__main__":
    main()
