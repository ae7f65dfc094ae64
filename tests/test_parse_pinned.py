"""What ``parse_file`` returns is pinned, so that making the parsers, the noise rules or the redaction faster
cannot change what gets stored.

Inputs: every log in tests/fixtures/ and in the shared real logs (fixtures/real: Claude Code, Codex, Gemini),
and one real-sized log per newer connector (``benchmarks/real_sized_logs.py``: the genuine Claude Code
sessions' texts written in Qwen Code, Copilot CLI, Cursor, Aider, Cline and OpenCode format — KB-sized tool
outputs, code names in cut middles, CJK text). Each file's sessions, messages and report are digested
(paths and file times made machine-independent). The pins in ``fixtures/parse_pins.json`` were written by
the code before the speed-ups (main at 8863e55): ``WWT_WRITE_PARSE_PINS=1 pytest tests/test_parse_pinned.py``
rewrites them — only when a change of output is intended.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import os
import shutil
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES

from wwt.parsers import discover, parse_file

HERE = Path(__file__).resolve().parent
PINS = HERE / "fixtures" / "parse_pins.json"
REAL_SIZED = ("qwen-code", "copilot-cli", "cursor", "aider", "cline", "opencode")
FILE_TIME = 1_767_950_000  # every input's mtime/atime, so logs timed by their file (Cursor) digest the same


def _real_sized_module():
    spec = importlib.util.spec_from_file_location("real_sized_logs", HERE.parent / "benchmarks" / "real_sized_logs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _inputs(root: Path) -> list[Path]:
    shutil.copytree(HERE / "fixtures", root / "fixtures", ignore=shutil.ignore_patterns("parse_pins.json"))
    shutil.copytree(REAL_FIXTURES, root / "real")
    builder = _real_sized_module()
    schema = (HERE / "fixtures" / "opencode" / "db" / "opencode.sql").read_text(encoding="utf-8")
    for platform in REAL_SIZED:
        builder.build(platform, root / "real-sized" / platform, 1, REAL_FIXTURES / "claude-code", schema)
    for folder, _dirs, files in os.walk(root):
        for name in files:
            os.utime(Path(folder) / name, (FILE_TIME, FILE_TIME))
    return sorted(path for path, _parser in discover([root]))


def _digest(path: Path, root: Path) -> dict:
    sessions, report = parse_file(path)
    body = {
        "report": {k: v for k, v in dataclasses.asdict(report).items() if k != "path"},
        # title_is_first_prompt (added after the pins) only steers how the store merges a title: not output
        "sessions": [{k: v for k, v in dataclasses.asdict(s).items() if k != "title_is_first_prompt"} for s in sessions],
    }
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, default=sorted)  # flags: frozensets, sorted
    # Machine-independent: where the copies live, and Aider's session ids, which hash the file's real path.
    aider_hash = hashlib.sha1(os.path.realpath(path).encode("utf-8", "replace")).hexdigest()[:8]
    for where in {os.path.realpath(root), str(root)}:
        text = text.replace(where, "<root>")
    text = text.replace(f"-{aider_hash}", "-<path-hash>")
    messages = sum(len(s.messages) for s in sessions)
    return {"messages": messages, "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


@pytest.fixture(scope="module")
def digests(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("pinned")
    return {path.relative_to(root).as_posix(): _digest(path, root) for path in _inputs(root)}


def test_parse_output_of_every_fixture_and_real_sized_log_is_unchanged(digests: dict[str, dict]) -> None:
    if os.environ.get("WWT_WRITE_PARSE_PINS") == "1":
        PINS.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    pinned = json.loads(PINS.read_text(encoding="utf-8"))
    assert sorted(digests) == sorted(pinned), "the set of parsed inputs changed"
    changed = [f"{name}: {pinned[name]} -> {digests[name]}" for name in pinned if digests[name] != pinned[name]]
    assert changed == []


def test_the_pinned_inputs_cover_every_newer_connector_with_real_sized_logs(digests: dict[str, dict]) -> None:
    for platform in REAL_SIZED:
        sized = [v for k, v in digests.items() if k.startswith(f"real-sized/{platform}/")]
        assert len(sized) == 1 and sized[0]["messages"] > 300, platform


def _names_in_one_pass(text: str, start: int, end: int, limit: int) -> str:
    """The rule of ``code_names`` read straight from its docstring: every word of the range, the cut first and
    last ones dropped, distinct names in order of first appearance until the limit."""
    import re

    word_re = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*")
    shape = re.compile(r"_|[a-z][A-Z]|[A-Za-z](?:\.|::)[A-Za-z]")
    matches = list(word_re.finditer(text, start, end))
    if matches and start > 0 and matches[0].start() == start and (text[start - 1].isalnum() or text[start - 1] in "_$"):
        matches = matches[1:]
    if matches and end < len(text) and matches[-1].end() == end and (text[end].isalnum() or text[end] in "_$"):
        matches = matches[:-1]
    out: list[str] = []
    for match in matches:
        name = match.group().strip("._$")
        if not 4 <= len(name) <= 64 or name in out or not shape.search(name):
            continue
        if sum(len(n) + 1 for n in out) + len(name) + 1 > limit:
            break
        out.append(name)
    return " ".join(out)


def test_code_names_of_a_long_middle_are_those_of_one_pass() -> None:
    from wwt.parsers.common import code_names

    plain = "the quick brown fox jumps over the lazy dog " * 400  # ≈ 18 kB of plain words: chunks of no names
    names = " ".join(f"load_item_{i} parseHeader{i} pkg.mod{i}.fn" for i in range(300))
    texts = [
        plain + names,  # the names come after several chunks
        names + plain + "tail_name_after_plain",
        "x" * 9000 + " " + names,  # one word longer than a chunk
        plain.replace(" ", "\n") + names,
    ]
    for real in REAL_FIXTURES.glob("*/*.json*"):
        texts.append(real.read_text(encoding="utf-8", errors="replace"))
    for text in texts:
        for start, end, limit in ((0, len(text), 1500), (3, len(text) - 7, 1500), (2000, len(text) - 500, 10**6),
                                  (1, len(text) - 1, 200)):
            assert code_names(text, start, end, limit) == _names_in_one_pass(text, start, end, limit)


def _epoch_by_datetime(value: float) -> str | None:
    """The epoch rule as datetime reads it: numbers above 1e11 are milliseconds, UTC, years 1990–2200, ``.mmm``
    only when there are milliseconds."""
    from datetime import datetime, timezone

    number = float(value)
    if number <= 0:
        return None
    try:
        moment = datetime.fromtimestamp(number / 1000.0 if number > 1e11 else number, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    if not 1990 <= moment.year <= 2200:
        return None
    millis = f".{moment.microsecond // 1000:03d}" if moment.microsecond else ""
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + millis + "Z"


def test_epoch_numbers_read_without_datetime_give_the_strings_datetime_gives() -> None:
    import random

    from wwt.parsers.common import iso_timestamp

    rng = random.Random(15)
    edges = [0, 1, -1, 10**11 - 1, 10**11, 10**11 + 1, 631151999, 631152000, 7258118399, 7258118400,
             631151999999, 631152000000, 7258118399999, 7258118400000, 1767950000000, 1767950000999, 2**63, 10**30]
    values = edges + [rng.randrange(1, 8 * 10**12) for _ in range(20000)] + [rng.randrange(1, 8 * 10**9)
                                                                           for _ in range(20000)]
    values += [float(v) for v in values[::7]] + [1e300, 1767950000123.5, 1767950000.25, 2.0**60]  # OpenCode: floats
    assert [iso_timestamp(v) for v in values] == [_epoch_by_datetime(v) for v in values]


def test_a_jsonl_line_is_decoded_as_json_loads_decodes_it() -> None:
    from wwt.models import ParseReport
    from wwt.parsers.common import decode_line

    lines = ['{"a": 1}', ' {"a": [1, 2.5e3, null, true]}\t', '{"a": 1} x', '{"a": 1}{"b": 2}', "", "   ", "1", '"s"',
             "[1, 2]", "\ufeff{}", "\ufeff\ufeff{}", "{\"k\": \"\\ud83d\\ude00 \u00e9\"}", "{'a': 1}", "{\"a\": NaN}",
             "\x0c{}", "{}\x0c", "[" * 100000 + "]" * 100000, '{"a": 1}\n\n', "nul\x00l", '{"a":"\x01"}']
    for line in lines:
        raw = line.encode("utf-8")
        try:
            want = json.loads(line[1:] if line.startswith("\ufeff") else line)
        except (ValueError, RecursionError):
            want = None
        report = ParseReport(path="x")
        assert decode_line(raw, report, 0) == want, ascii(line[:40])
        assert report.bad_lines == (want is None), ascii(line[:40])


@pytest.mark.parametrize("seed", [3, 11, 8192])
def test_code_names_of_random_text_are_those_of_one_pass(seed: int) -> None:
    """Random mixes of the characters that make or break a name (``_ . : $``, digits, non-ASCII letters, case
    changes), cut anywhere: ``code_names`` reads only the runs around a name's mark, one pass reads every word."""
    import random

    from wwt.parsers import common

    rng = random.Random(seed)
    alphabet = "aaabcXYZ__..::$9é9 \n-/()"
    pieces = ["foo_bar", "fooBar", "a.b", "x::y", "HTTP_OK", "plain", "é_x", "9abc_d", "_x_", "$a.b", "..", "a.9b", "ab:cd"]
    for _ in range(6000):
        if rng.random() < 0.5:
            text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(60)))
        else:
            text = "".join(rng.choice(pieces) + rng.choice(["", " ", ".", ":", "\n", "_"]) for _ in range(rng.randrange(30)))
        start = rng.randrange(len(text) + 1)
        end = rng.randrange(start, len(text) + 1)
        limit = rng.choice([1500, 30, 10, 5])
        assert common.code_names(text, start, end, limit) == _names_in_one_pass(text, start, end, limit), (text, start, end)
