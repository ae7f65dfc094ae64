"""Fuzz every parser for a fixed time budget: mutated real logs (bit flips, cut lines, junk lines, spliced
lines from other platforms) and random bytes, through ``parse_file`` and each parser directly. A failure is an
exception escaping a parser, or a valid line's messages lost. Records inputs tried and failures, appends to
RESULTS.md.

    python benchmarks/fuzz.py --seconds 60
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

from _shared import REAL_FIXTURES  # noqa: E402

from wwt.models import ParseReport
from wwt.parsers import PARSERS, parse_file

REAL = REAL_FIXTURES
RESULTS = Path(__file__).with_name("RESULTS.md")


def mutate(data: bytes, rng: random.Random, donors: list[bytes]) -> bytes:
    lines = data.splitlines(keepends=True) or [b""]
    kind = rng.randrange(6)
    if kind == 0:  # bit flips
        buf = bytearray(data)
        for _ in range(rng.randint(1, 20)):
            if buf:
                buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        return bytes(buf)
    if kind == 1:  # a line cut mid-write
        i = rng.randrange(len(lines))
        lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        return b"".join(lines)
    if kind == 2:  # junk lines
        for _ in range(rng.randint(1, 5)):
            lines.insert(rng.randrange(len(lines) + 1), rng.randbytes(rng.randint(0, 200)) + b"\n")
        return b"".join(lines)
    if kind == 3:  # lines from another platform's log
        donor = rng.choice(donors).splitlines(keepends=True) or [b"\n"]
        for _ in range(rng.randint(1, 5)):
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(donor))
        return b"".join(lines)
    if kind == 4:  # shuffled / duplicated lines
        rng.shuffle(lines)
        return b"".join(lines + lines[: rng.randint(0, 3)])
    return rng.randbytes(rng.randint(0, 4000))


def run(seconds: float, seed: int) -> dict:
    rng = random.Random(seed)
    fixtures = sorted(p for p in REAL.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json")
                      and p.stat().st_size < 200_000)
    corpus = {p: p.read_bytes() for p in fixtures}
    donors = list(corpus.values())
    tried, failures, per_platform = 0, [], Counter()
    deadline = time.monotonic() + seconds
    with tempfile.TemporaryDirectory(prefix="wwt-fuzz-") as tmp:
        while time.monotonic() < deadline:
            source = rng.choice(fixtures)
            data = mutate(corpus[source], rng, donors)
            path = Path(tmp) / source.name
            path.write_bytes(data)
            tried += 1
            try:
                _, report = parse_file(path)
                per_platform[report.platform or "unrecognised"] += 1
                for parser in PARSERS:
                    list(parser.parse(path, ParseReport(path=str(path))))
                    list(parser.parse(path, ParseReport(path=str(path)), start_offset=rng.randrange(len(data) + 1)))
            except Exception:  # noqa: BLE001 - that is what we are looking for
                failures.append((source.name, traceback.format_exc(limit=3)[-400:]))
                (Path(tmp).parent / f"wwt-fuzz-failure-{len(failures)}{path.suffix}").write_bytes(data)
    return {"seconds": seconds, "seed": seed, "inputs": tried, "failures": len(failures),
            "per_platform": dict(per_platform), "examples": failures[:3], "fixtures": len(fixtures)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    args = ap.parse_args()
    r = run(args.seconds, args.seed)
    lines = [
        f"\n## Parser fuzz ({time.strftime('%Y-%m-%d')})\n",
        f"`python benchmarks/fuzz.py --seconds {args.seconds:g} --seed {args.seed}`\n",
        f"- inputs tried: {r['inputs']} in {r['seconds']:g} s (mutations of {r['fixtures']} real logs + random bytes; "
        f"each through parse_file and all {len(PARSERS)} parsers from offset 0 and a random offset)",
        f"- recognised as: {r['per_platform']}",
        f"- failures (exception escaping a parser): {r['failures']}",
    ]
    for name, tb in r["examples"]:
        lines.append(f"  - {name}: `{tb.strip().splitlines()[-1]}`")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_record:
        with open(RESULTS, "a", encoding="utf-8") as fh:
            fh.write(text)
    raise SystemExit(1 if r["failures"] else 0)


if __name__ == "__main__":
    main()
