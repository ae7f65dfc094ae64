"""False positives of the redaction on ordinary developer text (issue 24): every redaction ``wwt.redact`` makes
in text that holds no secret, listed with its kind and context so a person can judge each one.

Bodies (none written by this project): the message texts of the real agent logs in the shared fixtures (parsed
without redaction; their SOURCES.md names the projects), KorQuAD 1.0's dev paragraphs and questions (Korean
Wikipedia prose), the Python standard library's source and the source of the packages installed beside wwt
(code, comments, docstrings). Test modules (``test_*.py``, ``tests/``) are a body of their own: they hold test
credentials on purpose (``password = 'xyzzy'``, ``Set-Cookie: a=b``), which redacting is right, so their hits are
listed apart from those in ordinary code.

    python benchmarks/redact_false_positives.py [--code-mb 8] [--append-results]

Every hit goes to stdout; RESULTS.md gets the table and every hit outside the test modules (those: a sample).
"""

from __future__ import annotations

import argparse
import json
import site
import sysconfig
import time
from collections import Counter
from pathlib import Path

from _shared import KORQUAD, REAL_FIXTURES, replace_section

from wwt.redact import redact

Text = tuple[str, str]  # (where, text)


def fixture_texts() -> list[Text]:
    from wwt.parsers import discover, parse_file

    texts = []
    for path, parser in discover([REAL_FIXTURES]):
        sessions, _ = parse_file(path, parser=parser if not isinstance(parser, str) else None, redact=False)
        texts += [(path.name, m.text) for s in sessions for m in s.messages if m.text]
    return texts


def korquad_texts() -> list[Text]:
    data = json.loads(KORQUAD.read_text(encoding="utf-8"))
    out = []
    for article in data["data"]:
        for para in article["paragraphs"]:
            out.append((article["title"], para["context"]))
            out += [(article["title"], qa["question"]) for qa in para["qas"]]
    return out


def _is_test(path: Path) -> bool:
    return path.name.startswith("test") or any(p in ("test", "tests", "testing") for p in path.parts)


def code_texts(roots: list[Path], limit_mb: float, tests: bool) -> list[Text]:
    """Python files under ``roots`` (test modules or the others), in paragraph-sized pieces like messages."""
    out, size = [], 0
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if _is_test(path) != tests or "wwt" in path.parts or "site-packages" in path.parts and root.name != "site-packages":
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            where = str(path.relative_to(root))
            out += [(where, piece) for piece in text.split("\n\n")]
            size += len(text.encode())
            if size >= limit_mb * 1e6:
                return out
    return out


# A person's verdict on the hits this script listed (file, kind) — printed beside each; a hit without one is new.
RIGHT_BY_FORM = "a documented example credential in the form a real one takes (a reader cannot tell them apart)"
JUDGED = {
    ("distutils/command/register.py", "password"): RIGHT_BY_FORM + ": `.pypirc` `password: sekrit`",
    ("httpx2/_urls.py", "url_password"): RIGHT_BY_FORM + ": `https://user:a%20secret@host`",
    ("distutils/tests/test_config.py", "password"): "a test credential (test module)",
    ("distutils/tests/test_register.py", "password"): "a test credential (test module)",
}


def hits(texts: list[Text]) -> list[tuple[str, str, str]]:
    """(where, kind, context) of every redaction."""
    found = []
    for where, text in texts:
        out, count = redact(text)
        if not count:
            continue
        at = 0
        while (start := out.find("[REDACTED:", at)) >= 0:
            end = out.find("]", start)
            kind = out[start + 10:end]
            context = out[max(0, start - 60):end + 40].replace("\n", "⏎")
            found.append((where, kind, context))
            at = end + 1
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code-mb", type=float, default=8.0, help="MB of each code body (stdlib, packages, tests)")
    parser.add_argument("--append-results", action="store_true")
    args = parser.parse_args()
    for needed in (REAL_FIXTURES, KORQUAD):
        if not needed.exists():
            raise SystemExit(f"{needed} not found: set WWT_SHARED to the shared data folder")
    stdlib = [Path(sysconfig.get_paths()["stdlib"])]
    packages = [Path(p) for p in site.getsitepackages() if Path(p).is_dir()]
    bodies = {
        "agent logs (fixtures/real)": fixture_texts(),
        "KorQuAD 1.0 dev": korquad_texts(),
        f"Python stdlib, not tests (first {args.code_mb:g} MB)": code_texts(stdlib, args.code_mb, tests=False),
        f"installed packages, not tests (first {args.code_mb:g} MB)": code_texts(packages, args.code_mb, tests=False),
        f"test modules of both (first {args.code_mb:g} MB)": code_texts(stdlib + packages, args.code_mb, tests=True),
    }
    lines = ["## Redaction false positives on ordinary text (issue 24)", "",
             "`python benchmarks/redact_false_positives.py --append-results` — every redaction in text written by "
             "others that holds no secret of anyone's (test modules hold test credentials on purpose: counted "
             "apart), listed for a person to judge.", "",
             "| body | MB | texts | redactions | per MB | seconds |", "|---|---|---|---|---|---|"]
    listed: list[tuple[str, str, str, str]] = []
    total_mb = 0.0
    for name, texts in bodies.items():
        mb = sum(len(t.encode()) for _, t in texts) / 1e6
        total_mb += mb
        started = time.perf_counter()
        found = hits(texts)
        seconds = time.perf_counter() - started
        lines.append(f"| {name} | {mb:.1f} | {len(texts):,} | {len(found)} | {len(found) / max(mb, 1e-9):.2f} "
                     f"| {seconds:.1f} |")
        listed += [(name, where, kind, context) for where, kind, context in found]
    ordinary = [hit for hit in listed if not hit[0].startswith("test modules")]
    tests = [hit for hit in listed if hit[0].startswith("test modules")]
    kinds = Counter(kind for _, _, kind, _ in ordinary)
    lines += ["", f"{total_mb:.1f} MB in all. Kinds outside the test modules: "
              + (", ".join(f"{k} {n}" for k, n in kinds.most_common()) or "none")
              + "; in the test modules: "
              + (", ".join(f"{k} {n}" for k, n in Counter(k for _, _, k, _ in tests).most_common()) or "none"), "",
              f"Judged false positives outside the test modules: "
              f"{sum('false positive' in JUDGED.get((w, k), '') for _, w, k, _ in ordinary)}; not judged yet: "
              f"{sum((w, k) not in JUDGED for _, w, k, _ in ordinary)}.", "",
              "Every hit outside the test modules (body · file · kind · context — verdict), then a sample of the test "
              "modules':", ""]

    def row(hit: tuple[str, str, str, str]) -> str:
        name, where, kind, context = hit
        verdict = JUDGED.get((where, kind), "not judged yet")
        return f"- {name.split(' (')[0]} · {where} · {kind} · `{context.replace('`', chr(39))}` — {verdict}"

    lines += [row(hit) for hit in ordinary] or ["- none"]
    lines += [""] + [row(hit) for hit in tests[:15]]
    if len(tests) > 15:
        lines.append(f"- … {len(tests) - 15} more in the test modules (all printed by the script)")
    print("\n".join(lines))
    if len(tests) > 15:
        print("\n".join(row(hit) for hit in tests[15:]))
    if args.append_results:
        replace_section("redact-false-positives", "\n".join(lines))


if __name__ == "__main__":
    main()
