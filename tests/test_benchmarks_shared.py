"""What the benchmarks' figures mean: memory of a whole process tree, one current section per benchmark in
RESULTS.md with commands anyone can run, and a fuzz that notices lost messages, not only exceptions."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
RESULTS = BENCH / "RESULTS.md"


def bench_shared():
    spec = importlib.util.spec_from_file_location("bench_shared", BENCH / "_shared.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


# A parent that holds ~120 MB while its child holds ~160 MB: together ~280 MB at the same moment. This is the
# shape of a cold Korean `wwt search` (the search process and its Kiwi helper process).
PARENT = r"""
import subprocess, sys
held = bytearray(120 * 2**20)
child = subprocess.Popen([sys.executable, "-c",
    "import sys, time; b = bytearray(160 * 2**20); print('ready', flush=True); time.sleep(1.5)"],
    stdout=subprocess.PIPE)
child.stdout.readline()
child.wait()
print(len(held))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_peak_memory_counts_the_child_process_beside_its_parent():
    shared = bench_shared()
    detail: dict = {}
    _, peak, code, _, _ = shared.run_tree_measured([sys.executable, "-c", PARENT], detail=detail)
    assert code == 0
    assert detail["processes"] >= 2
    # the process alone (what wait4's ru_maxrss reports) misses the child's 160 MB; the tree does not
    assert detail["root_peak_mb"] < 120 + 100
    assert peak >= 120 + 160
    assert peak - detail["root_peak_mb"] >= 120


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_a_small_program_started_from_a_big_process_is_measured_at_its_own_size():
    # Linux keeps ru_maxrss across exec: wait4 reports a child forked from a 300 MB process as >= 300 MB even
    # when the program it runs is a bare interpreter
    shared = bench_shared()
    held = bytearray(300 * 2**20)
    held[:: 4096] = b"x" * len(held[:: 4096])  # touch every page: resident, not just reserved
    detail: dict = {}
    _, peak, code, _, _ = shared.run_tree_measured([sys.executable, "-c", "import time; time.sleep(0.3)"],
                                                   detail=detail)
    assert code == 0
    assert peak < 150 and detail["root_peak_mb"] < 150
    assert len(held) == 300 * 2**20


def test_a_benchmark_section_is_replaced_in_place_and_others_are_kept(tmp_path):
    shared = bench_shared()
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n\nsummary table\n", encoding="utf-8")
    shared.replace_section("alpha", "## Alpha\n\nfirst run", results)
    shared.replace_section("beta", "## Beta\n\nonly run", results)
    shared.replace_section("alpha", "## Alpha\n\nsecond run", results)
    text = results.read_text(encoding="utf-8")
    assert text.startswith("# Benchmark results\n\nsummary table\n")
    assert "first run" not in text and text.count("<!-- section: alpha -->") == 1
    assert text.index("second run") < text.index("only run")  # replaced where it stood


def sections(text: str) -> list[str]:
    return re.findall(r"<!-- section: ([\w.-]+) -->", text)


def test_results_keep_one_current_section_per_benchmark():
    text = RESULTS.read_text(encoding="utf-8")
    keys = sections(text)
    assert keys, "RESULTS.md has no sections between markers"
    assert len(keys) == len(set(keys)), f"a benchmark has more than one section: {keys}"
    assert keys == re.findall(r"<!-- /section: ([\w.-]+) -->", text), "every section is closed, in order"
    # every heading lives inside a section: nothing appended outside the markers
    outside = re.sub(r"<!-- section: ([\w.-]+) -->.*?<!-- /section: \1 -->", "", text, flags=re.S)
    assert re.findall(r"^## ", outside, flags=re.M) == []
    # the keys the scripts write are the keys the file has (a script writing an unknown key would append)
    written = set()
    for script in list(BENCH.glob("*.py")) + [BENCH.parent / "scripts" / "export_int8.py"]:
        written |= set(re.findall(r'replace_section\(\s*"([\w.-]+)"', script.read_text(encoding="utf-8")))
    assert written - set(keys) == set(), f"scripts write sections RESULTS.md lacks: {written - set(keys)}"


def test_results_commands_name_no_machine_paths():
    text = RESULTS.read_text(encoding="utf-8")
    commands = re.findall(r"`([^`]*python[^`]*benchmarks/[^`]*)`", text)
    assert commands
    for command in commands:
        assert not re.search(r"(^|[\s=])/(work|root|home|tmp)/", command), command


def run_all_dry(*args: str) -> list[tuple[str, str]]:
    proc = subprocess.run([sys.executable, str(BENCH / "run_all.py"), "--dry-run", *args], cwd=BENCH.parent,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-800:]
    return [tuple(line.split("\t")[:2]) for line in proc.stdout.splitlines() if line.strip()]


def script_of(command: str) -> str:
    return next(word for word in command.split() if word.endswith(".py"))


def test_run_all_lists_every_maintained_benchmark_and_every_section():
    listed = run_all_dry()
    keys = [key for key, _ in listed]
    assert len(keys) == len(set(keys)), "one command per section"
    text = RESULTS.read_text(encoding="utf-8")
    # every listed command writes a section RESULTS.md has, and every section has its command
    assert set(keys) == set(sections(text)), set(keys) ^ set(sections(text))
    scripts = {script_of(command) for _, command in listed}
    for script in scripts:
        path = BENCH.parent / script
        assert path.is_file(), script
        assert "replace_section(" in path.read_text(encoding="utf-8") or script == "benchmarks/ingest.py", script
    # every script in benchmarks/ that writes a section is run by run_all, or is a part a listed script imports
    # (ingest_two_phase: `ingest.py --two-phase`); the rest are helpers (corpus builders, the original's rules)
    listed_sources = "\n".join((BENCH.parent / s).read_text(encoding="utf-8") for s in scripts)
    for path in BENCH.glob("*.py"):
        if re.search(r'replace_section\(\s*"', path.read_text(encoding="utf-8")) and path.name != "_shared.py":
            assert (f"benchmarks/{path.name}" in scripts
                    or re.search(rf"^\s*(from|import) {path.stem}\b", listed_sources, re.M)), \
                f"{path.name} writes a section but run_all.BENCHMARKS does not run it"
    # a mistyped option would fail hours into a run: every option a command passes is one its script declares
    for key, command in listed + run_all_dry("--quick"):
        source = (BENCH.parent / script_of(command)).read_text(encoding="utf-8")
        for option in re.findall(r"(?<!\S)(--[\w-]+)", command):
            assert f'"{option}"' in source, f"{key}: {script_of(command)} has no {option}"


def test_run_all_only_selects_sections_and_refuses_unknown_ones():
    assert [key for key, _ in run_all_dry("--only", "parse", "fuzz")] == ["parse", "fuzz"]
    proc = subprocess.run([sys.executable, str(BENCH / "run_all.py"), "--dry-run", "--only", "no-such-section"],
                          cwd=BENCH.parent, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "no-such-section" in proc.stderr


def test_benchmarks_import_no_circle():
    local = {p.stem for p in BENCH.glob("*.py")}
    imports = {}
    for path in BENCH.glob("*.py"):
        found = re.findall(r"^\s*(?:from\s+(\w+)\s+import|import\s+(\w+))", path.read_text(encoding="utf-8"), re.M)
        imports[path.stem] = {a or b for a, b in found} & local - {path.stem}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(m == goal or (m not in seen and reaches(m, goal, seen | {m})) for m in imports[start])

    circles = sorted(m for m in imports if reaches(m, m, {m}))
    assert circles == [], f"benchmark modules importing each other in a circle: {circles}"


def test_summary_links_point_at_sections():
    text = RESULTS.read_text(encoding="utf-8")
    summary = text[: re.search(r"^<!-- section: [\w.-]+ -->$", text, re.M).start()]
    links = set(re.findall(r"\]\(#([\w.-]+)\)", summary))
    assert links and links <= set(sections(text)), links - set(sections(text))
    rows = [line for line in summary.splitlines() if line.startswith("| ") and not line.startswith("| target")]
    for row in rows:
        assert len(row.split(" | ")[1]) <= 130, f"summary figure longer than a short row: {row[:80]}"


FUZZ_CHECK = r"""
import json, sys
from collections import Counter
from pathlib import Path
import fuzz

src = Path(sys.argv[1])
tmp = Path(sys.argv[2]) / src.name
original = src.read_bytes()
lines = original.splitlines(keepends=True)
middle = len(lines) // 2
mutated = b"".join(lines[:middle] + [lines[middle][: len(lines[middle]) // 2] + b"\n"] + lines[middle + 1:])

def stops_at_first_bad_line(path):  # a parser that gives up at a broken line: loses the lines after it
    text = path.read_bytes().splitlines(keepends=True)
    good = []
    for line in text:
        try:
            json.loads(line)
        except ValueError:
            break
        good.append(line)
    path.write_bytes(b"".join(good))
    try:
        return fuzz.messages_of(path)
    finally:
        path.write_bytes(b"".join(text))

real = fuzz.lost_messages(original, mutated, tmp)
broken = fuzz.lost_messages(original, mutated, tmp, parse=stops_at_first_bad_line)
print(json.dumps({"real": sum(real.values()), "broken": sum(broken.values()),
                  "messages": sum(fuzz.messages_of(src).values())}))
"""


def test_fuzz_counts_messages_lost_after_a_broken_line(tmp_path):
    from _shared import REAL_FIXTURES

    log = REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl"
    env = dict(os.environ, PYTHONPATH=str(BENCH))
    proc = subprocess.run([sys.executable, "-c", FUZZ_CHECK, str(log), str(tmp_path)], cwd=BENCH, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-800:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["messages"] > 4
    assert got["real"] == 0  # the real parsers skip the cut line and keep every other line's messages
    assert got["broken"] > 0  # a parser that stops at the cut line is caught
