"""False positives of the redaction on ordinary developer text (issue 24): every redaction ``wwt.redact`` makes
in text that holds no secret, listed with its kind and context so a person can judge each one.

Bodies (none written by this project): the message texts of the real agent logs in the shared fixtures (parsed
with redaction off; their SOURCES.md names the projects), KorQuAD 1.0's dev paragraphs and questions (Korean
Wikipedia prose), and the Python standard library's source (code, docstrings, tests — which do hold test
credentials: those hits are listed and judged, not hidden).

    python benchmarks/redact_false_positives.py [--stdlib-mb 2] [--append-results]
"""

from __future__ import annotations

import argparse
import json
import os
import sysconfig
import time
from collections import Counter
from pathlib import Path

from _shared import KORQUAD, REAL_FIXTURES, replace_section

from wwt.redact import redact


def fixture_texts() -> list[str]:
    os.environ["WWT_REDACT"] = "0"
    from wwt.parsers import discover, parse_file

    texts = []
    for path, parser in discover([REAL_FIXTURES]):
        sessions, _ = parse_file(path, parser=parser if not isinstance(parser, str) else None)
        texts += [m.text for s in sessions for m in s.messages if m.text]
    return texts


def korquad_texts() -> list[str]:
    data = json.loads(KORQUAD.read_text(encoding="utf-8"))
    out = []
    for article in data["data"]:
        for para in article["paragraphs"]:
            out.append(para["context"])
            out += [qa["question"] for qa in para["qas"]]
    return out


def stdlib_texts(limit_mb: float) -> list[str]:
    root = Path(sysconfig.get_paths()["stdlib"])
    out, size = [], 0
    for path in sorted(root.rglob("*.py")):
        if "site-packages" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        out += text.split("\n\n")  # paragraph-sized pieces, like messages
        size += len(text.encode())
        if size >= limit_mb * 1e6:
            break
    return out


def hits(texts: list[str]) -> list[tuple[str, str]]:
    found = []
    for text in texts:
        out, count = redact(text)
        if not count:
            continue
        at = 0
        while (start := out.find("[REDACTED:", at)) >= 0:
            end = out.find("]", start)
            kind = out[start + 10:end]
            context = out[max(0, start - 60):end + 40].replace("\n", "⏎")
            found.append((kind, context))
            at = end + 1
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stdlib-mb", type=float, default=2.0)
    parser.add_argument("--append-results", action="store_true")
    args = parser.parse_args()
    bodies = {"agent logs (fixtures/real)": fixture_texts(), "KorQuAD 1.0 dev": korquad_texts(),
              f"Python stdlib source (first {args.stdlib_mb:g} MB)": stdlib_texts(args.stdlib_mb)}
    lines = ["## Redaction false positives on ordinary text (issue 24)", "",
             "`python benchmarks/redact_false_positives.py --append-results` — every redaction in text that holds "
             "no secret by construction (the stdlib's own test credentials aside), listed for a person to judge.",
             "", "| body | MB | texts | redactions | per MB | seconds |", "|---|---|---|---|---|---|"]
    listed = []
    for name, texts in bodies.items():
        mb = sum(len(t.encode()) for t in texts) / 1e6
        started = time.perf_counter()
        found = hits(texts)
        seconds = time.perf_counter() - started
        lines.append(f"| {name} | {mb:.1f} | {len(texts):,} | {len(found)} | {len(found) / mb:.2f} | {seconds:.1f} |")
        listed += [(name, kind, context) for kind, context in found]
    kinds = Counter(kind for _, kind, _ in listed)
    lines += ["", "Kinds: " + (", ".join(f"{k} {n}" for k, n in kinds.most_common()) or "none"), "",
              "Every hit (body · kind · context):", ""]
    lines += [f"- {name} · {kind} · `{context.replace('`', chr(39))}`" for name, kind, context in listed[:80]]
    if len(listed) > 80:
        lines.append(f"- … {len(listed) - 80} more")
    print("\n".join(lines))
    if args.append_results:
        replace_section("redact-false-positives", "\n".join(lines))


if __name__ == "__main__":
    main()
