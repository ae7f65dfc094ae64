"""Fuzz every parser for a fixed time budget: mutated real logs and every connector's test fixtures (JSONL,
JSON, Markdown, SQLite databases: bit flips, cut lines, junk lines, spliced lines from other platforms, shuffled
lines) and random bytes, through ``parse_file`` and each parser directly. Each fixture is mutated in place inside
a copy of its own folder, so the folder layout a connector reads (task folders, session trees, databases beside
their logs) is what it meets.
A failure is an exception escaping a parser, or a valid line's messages lost: for a JSONL log, every original
line the mutation left whole must still give its messages — the mutated file must yield every message that the
original file gives with the broken lines simply left out (``lost_messages``). Records inputs tried, failures
and lost messages per mutation kind in its RESULTS.md section.

    python benchmarks/fuzz.py --seconds 60
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from _shared import REAL_FIXTURES, replace_section  # noqa: E402

from wwt.models import ParseReport
from wwt.parsers import PARSERS, _is_candidate, parse_file
from wwt.parsers.common import DETECT_RECORDS

REAL = REAL_FIXTURES
TEST_FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
MAX_FIXTURE_BYTES = 200_000
KINDS = ("bit flips", "cut line", "junk lines", "other platform's lines", "shuffled/duplicated", "random bytes")


def mutate(data: bytes, rng: random.Random, donors: list[bytes], kind: int | None = None) -> bytes:
    lines = data.splitlines(keepends=True) or [b""]
    kind = rng.randrange(6) if kind is None else kind
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
            line = rng.choice(donor)
            lines.insert(rng.randrange(len(lines) + 1), line if line.endswith(b"\n") else line + b"\n")
        return b"".join(lines)
    if kind == 4:  # shuffled / duplicated lines
        rng.shuffle(lines)
        return b"".join(lines + lines[: rng.randint(0, 3)])
    return rng.randbytes(rng.randint(0, 4000))


Signature = tuple[str, str, str]  # (role, kind, text): what a user would search for, ids aside


def messages_of(path: Path) -> Counter[Signature]:
    sessions, _ = parse_file(path)
    return Counter((m.role, m.kind, m.text) for s in sessions for m in s.messages)


def _is_json(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:  # includes UnicodeDecodeError
        return False
    return True


def lost_messages(
    original: bytes, mutated: bytes, path: Path, parse: Callable[[Path], Counter[Signature]] = messages_of,
    foreign: frozenset[bytes] = frozenset(),
) -> Counter[Signature] | None:
    """Messages the original gives from the lines the mutation left whole, missing from the mutated file's.

    The baseline is the original with every line that is not whole in the mutated file left out, parsed the
    same way (so a line whose removal changes its neighbours' meaning is judged fairly). None when it cannot be
    judged: a mutated line that is valid JSON but neither an original line nor a ``foreign`` (spliced) line is a
    changed record, not a broken one. ``path`` is where the files are written (its name picks the parser)."""
    before = [ln.rstrip(b"\r\n") for ln in original.splitlines()]
    after = [ln.rstrip(b"\r\n") for ln in mutated.splitlines()]
    available = Counter(after)
    originals = set(before)
    for line in after:  # records glued on one line (a cut, or a lost newline, took the newline between) are read
        if line not in originals:
            heads = [o for o in originals if o and len(o) < len(line) and line.startswith(o)
                     and line[len(o):].strip() in originals]
            for head in heads[:1]:
                available[head] += 1
                available[line[len(head):].strip()] += 1
            tails = [o for o in originals if o and len(o) < len(line) and line.endswith(o)]
            if tails and not heads:
                available[max(tails, key=len)] += 1
    kept: list[bytes] = []
    for line in before:
        if available[line] > 0:
            available[line] -= 1
            kept.append(line)
    whole = Counter(before) - Counter(kept)  # original lines the mutation broke
    if whole and any(available[ln] > 0 and ln not in foreign and ln.strip() and _is_json(ln)
                     for ln in available if ln not in Counter(before)):
        return None
    path.write_bytes(b"".join(ln + b"\n" for ln in kept))
    expected = parse(path)
    path.write_bytes(mutated)
    got = parse(path)
    return expected - got


MIXED = f"other platform's records at least as many as the log's own among the first {DETECT_RECORDS} records"
ORDER = "shuffled log still read as its platform: an order rule picked another write"


def explained(kind: int, original: bytes, mutated: bytes, foreign: frozenset[bytes], unrecognised: bool) -> str | None:
    """Why a loss is not a lost valid line, or None. Two cases have no order-free or owner-free answer: a log
    whose spliced records from another agent are as many as its own (no rule can tell whose file it is), and
    a shuffled log its parser still reads, where a rule defined by file order (Claude Code's newest rewind
    branch, Gemini's last write of a re-appended record id) now picks the other write."""
    if kind == 3:
        records = [ln.rstrip(b"\r\n") for ln in mutated.splitlines() if ln.strip() and _is_json(ln)]
        window = records[:DETECT_RECORDS]  # the records detection votes on
        spliced = sum(1 for ln in window if ln in foreign)
        return MIXED if spliced >= len(window) - spliced else None
    if kind == 4 and not unrecognised:
        return ORDER
    return None


def fixture_units() -> list[tuple[Path, Path]]:
    """(folder copied whole, log file inside it) for every log the fuzz mutates: the real logs (their folder is
    one platform's flat list) and each connector's test fixtures (the fixture's top folder under its platform:
    a home, a storage tree, a task folder's extension dir)."""
    units: list[tuple[Path, Path]] = []
    for root, depth in ((REAL, 1), (TEST_FIXTURES, 2)):
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if not path.is_file() or not _is_candidate(path.name) or path.stat().st_size >= MAX_FIXTURE_BYTES:
                continue
            parts = path.relative_to(root).parts
            unit = root.joinpath(*parts[: min(depth, len(parts) - 1)])
            units.append((unit, path))
    return units


def run(seconds: float, seed: int) -> dict:
    rng = random.Random(seed)
    units = fixture_units()
    fixtures = [path for _, path in units]
    corpus = {p: p.read_bytes() for p in fixtures}
    tried, failures, per_platform = 0, [], Counter()
    checked, lost_inputs, lost_total, explained_inputs = Counter(), Counter(), Counter(), Counter()
    lost_examples: list[str] = []
    copies: dict[Path, Path] = {}
    platform_of = {p: parse_file(p)[1].platform for p in fixtures}
    misdetected = 0
    deadline = time.monotonic() + seconds
    with tempfile.TemporaryDirectory(prefix="wwt-fuzz-") as tmp:
        for index, unit in enumerate(dict.fromkeys(u for u, _ in units)):
            copies[unit] = Path(tmp) / f"u{index}" / unit.name
            shutil.copytree(unit, copies[unit], symlinks=True)
        unit_of = {path: unit for unit, path in units}
        while time.monotonic() < deadline:
            source = rng.choice(fixtures)
            platform = platform_of[source]
            # spliced lines come from the other platforms' logs (a platform's own lines are valid records)
            donors = [data for p, data in corpus.items() if platform_of[p] != platform] or [b"\n"]
            kind = rng.randrange(len(KINDS))
            data = mutate(corpus[source], rng, donors, kind)
            unit = unit_of[source]
            path = copies[unit] / source.relative_to(unit)
            path.write_bytes(data)
            tried += 1
            try:
                _, report = parse_file(path)
                per_platform[report.platform or "unrecognised"] += 1
                for parser in PARSERS:
                    list(parser.parse(path, ParseReport(path=str(path))))
                    list(parser.parse(path, ParseReport(path=str(path)), start_offset=rng.randrange(len(data) + 1)))
                if source.suffix == ".jsonl" and kind != 5 and platform is not None:
                    foreign = frozenset(ln.rstrip(b"\r\n") for d in donors for ln in d.splitlines()) if kind == 3 \
                        else frozenset()
                    lost = lost_messages(corpus[source], data, path, foreign=foreign)
                    if lost is not None:
                        checked[KINDS[kind]] += 1
                        if lost:
                            unrecognised = parse_file(path)[1].platform != platform_of[source]
                            why = explained(kind, corpus[source], data, foreign, unrecognised)
                            if why:
                                explained_inputs[why] += 1
                                continue
                            lost_inputs[KINDS[kind]] += 1
                            misdetected += unrecognised
                            lost_total[KINDS[kind]] += sum(lost.values())
                            if len(lost_examples) < 3 or (not unrecognised and len(lost_examples) < 6):
                                role, mkind, text = next(iter(lost))
                                lost_examples.append(f"{source.parent.name}/{source.name} ({KINDS[kind]}): "
                                                     f"{sum(lost.values())} lost"
                                                     + (" (not recognised as its platform)" if unrecognised else "")
                                                     + f", e.g. {role} {mkind} {text[:60]!r}")
                                (Path(tmp).parent / f"wwt-fuzz-lost-{len(lost_examples)}{path.suffix}").write_bytes(data)
            except Exception:  # noqa: BLE001 - that is what we are looking for
                failures.append((source.name, traceback.format_exc(limit=3)[-400:]))
                (Path(tmp).parent / f"wwt-fuzz-failure-{len(failures)}{path.suffix}").write_bytes(data)
            finally:
                path.write_bytes(corpus[source])  # the next input meets the folder as it was
    return {"seconds": seconds, "seed": seed, "inputs": tried, "failures": len(failures),
            "per_platform": dict(per_platform), "examples": failures[:3], "fixtures": len(fixtures),
            "checked": dict(checked), "lost_inputs": dict(lost_inputs), "lost_messages": dict(lost_total),
            "lost_examples": lost_examples, "explained": dict(explained_inputs),
            "misdetected": misdetected}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-record", action="store_true", help="do not write the section into RESULTS.md")
    args = ap.parse_args()
    r = run(args.seconds, args.seed)
    per_kind = "; ".join(
        f"{k}: {r['lost_inputs'].get(k, 0)} of {r['checked'].get(k, 0)} inputs lost messages"
        + (f" ({r['lost_messages'][k]} messages)" if r["lost_messages"].get(k) else "")
        for k in KINDS[:5]
    )
    lost = sum(r["lost_inputs"].values())
    lines = [
        f"## Parser fuzz ({time.strftime('%Y-%m-%d')})\n",
        f"Command: `python benchmarks/fuzz.py --seconds {args.seconds:g} --seed {args.seed}`\n",
        f"- inputs tried: {r['inputs']} in {r['seconds']:g} s (mutations of {r['fixtures']} logs — the real ones and every "
        "connector's test fixtures, each inside a copy of its folder — + random bytes; "
        f"each through parse_file and all {len(PARSERS)} parsers from offset 0 and a random offset)",
        f"- recognised as: {r['per_platform']}",
        f"- failures (exception escaping a parser): {r['failures']}",
    ]
    for name, tb in r["examples"]:
        lines.append(f"  - {name}: `{tb.strip().splitlines()[-1]}`")
    lines += [
        f"- valid lines' messages lost (JSONL logs; baseline = the original with the broken lines left out): "
        f"{lost} of {sum(r['checked'].values())} checked inputs — {per_kind}; of the {lost}, {r['misdetected']} "
        "lost them because the mutated log was no longer recognised as its platform. Not checked: whole-file JSON "
        "logs, random bytes, and bit flips that left a changed but valid record",
    ]
    lines += [f"  - {ex}" for ex in r["lost_examples"]]
    lines.append(
        "- losses explained, not counted above (no order-free or owner-free answer exists): "
        + ("; ".join(f"{why}: {n} inputs" for why, n in sorted(r["explained"].items())) or "none")
    )
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_record:
        replace_section("fuzz", text)
    raise SystemExit(1 if r["failures"] or lost else 0)


if __name__ == "__main__":
    main()
