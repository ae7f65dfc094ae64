"""Rerun the whole summary: every maintained benchmark's recording command, one after another, each writing its
own section of RESULTS.md. ``BENCHMARKS`` below is the one list of those commands (key = the section written).

    WWT_MODEL_DIR=<model folder> python benchmarks/run_all.py                  # every section (hours)
    python benchmarks/run_all.py --dry-run                                     # the commands, run nothing
    python benchmarks/run_all.py --only parse parse-connectors                 # some sections
    python benchmarks/run_all.py --quick                                       # smaller runs that write nothing
    python benchmarks/run_all.py --stand-in <folder> --fp32 <fp32 model.onnx>  # + the S-model and int8 sections

``--quick`` checks that every benchmark still runs end to end (small sizes, few rounds) and records nothing, so
the sections keep the full runs' figures that the summary cites. Sections that need the fully-int8 stand-in
(``--stand-in``: a ``WWT_MODEL_DIR`` folder, e.g. ``scripts/export_int8.py --variants per-channel``'s
``OUT/model``) or the fp32 export (``--fp32``) are skipped without them. The scale store (``scale``, ~100k
chunks, built on its first run and reused) is what ``mcp``, ``recall-latency`` and ``engine`` search, so it runs
before them. A failing benchmark is reported and the others still run; the exit code says whether any failed.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SCALE_HOME = {False: "benchmarks/.work/scale/100k/home", True: "benchmarks/.work/scale/3000/home"}  # by --quick


@dataclass(frozen=True)
class Bench:
    key: str  # the section of RESULTS.md it writes
    script: str  # path from the checkout
    args: tuple[str, ...]  # the full run
    record: tuple[str, ...] = ()  # what makes it write its section (added to ``args``)
    quick: tuple[str, ...] | None = None  # --quick: a small run (None: same as ``args``) ...
    quiet: tuple[str, ...] = ()  # ... plus what keeps it from writing (scripts that write unless told not to)
    model: str = ""  # "stand-in": run with WWT_MODEL_DIR = --stand-in
    needs: str = ""  # a run_all option without which it is skipped ("stand_in", "fp32")
    with_stand_in: tuple[str, ...] = ()  # added when --stand-in is given ({stand_in} = its folder)

    def command(self, quick: bool = False) -> list[str]:
        args = (self.args if self.quick is None else self.quick) + self.quiet if quick else self.args + self.record
        scale_home = SCALE_HOME[quick]
        return ["python", self.script, *(a.replace("{scale_home}", scale_home) for a in args)]


APPEND, WRITE = ("--append-results",), ("--record",)
BENCHMARKS: tuple[Bench, ...] = (
    Bench("footprint", "benchmarks/footprint.py", ("--reuse",), quiet=("--no-write",)),
    Bench("int8-export", "scripts/export_int8.py", ("--fp32", "{fp32}", "--out", "benchmarks/.work/int8-export"),
          ("--write-results",), quick=("--fp32", "{fp32}", "--out", "benchmarks/.work/int8-export",
                                       "--variants", "per-channel"), needs="fp32"),
    Bench("parse", "benchmarks/parse.py", ("--sizes", "10,100"), APPEND, quick=("--sizes", "10")),
    Bench("parse-connectors", "benchmarks/parse_connectors.py",
          ("--sizes", "10,100", "--inputs", "real-sized,tiny", "--rounds", "3"), APPEND,
          quick=("--sizes", "10", "--inputs", "real-sized", "--rounds", "1")),
    Bench("fuzz", "benchmarks/fuzz.py", ("--seconds", "150", "--seed", "7"), quick=("--seconds", "15", "--seed", "7"),
          quiet=("--no-record",)),
    Bench("redact-false-positives", "benchmarks/redact_false_positives.py", (), APPEND, quick=("--code-mb", "1")),
    Bench("hook", "benchmarks/hook.py", ("--runs", "40"), APPEND, quick=("--runs", "5")),
    Bench("embed", "benchmarks/embed.py", ("--rounds", "2"), quick=("--rounds", "1", "--passages", "8", "--no-torch"),
          quiet=("--no-write",), with_stand_in=("--also-model", "{stand_in}", "--also-label", "fully-int8 stand-in")),
    Bench("memory-parts", "benchmarks/memory_parts.py", ("--runs", "3"), APPEND, quick=("--runs", "1")),
    Bench("retrieval-korquad", "benchmarks/retrieval_korquad.py", ("--skip-original",), WRITE,
          quick=("--skip-original", "--questions", "200")),
    Bench("retrieval-korquad-fully-int8-stand-in", "benchmarks/retrieval_korquad.py",
          ("--skip-original", "--model-label", "fully-int8 stand-in"), WRITE,
          quick=("--skip-original", "--model-label", "fully-int8 stand-in", "--questions", "200"),
          model="stand-in", needs="stand_in"),
    Bench("recall-by-kind", "benchmarks/recall.py", (), quiet=("--no-write",)),
    Bench("recall-paraphrase", "benchmarks/recall_paraphrase.py", (), APPEND),
    Bench("flag-korquad", "benchmarks/flag_korquad.py", ("--questions", "2000"), quick=("--questions", "200"),
          quiet=("--no-write",)),
    Bench("ingest", "benchmarks/ingest.py", ("--copies", "3"), APPEND, quick=("--copies", "1")),
    Bench("ingest-two-phase", "benchmarks/ingest.py",
          ("--two-phase", "--copies", "30", "--dense-copies", "195", "--repeats", "8", "--kill-after", "45,240",
           "--max-seconds", "420"), APPEND,
          quick=("--two-phase", "--copies", "1", "--kill-after", "20", "--max-seconds", "90", "--skip-embedder")),
    Bench("long-session", "benchmarks/long_session.py", ("--sizes", "5000", "50000"), APPEND,
          quick=("--sizes", "500", "5000")),
    Bench("scale", "benchmarks/scale.py", ("--no-original", "--cold-runs", "7"), WRITE,
          quick=("--chunks", "3000", "--real-path-chunks", "300", "--small-chunks", "300", "--queries", "20",
                 "--no-original", "--cold-runs", "1")),
    Bench("scale-3000", "benchmarks/scale.py",
          ("--chunks", "3000", "--real-path-chunks", "300", "--small-chunks", "300", "--queries", "60",
           "--no-original", "--cold-runs", "7"), WRITE,
          quick=("--chunks", "3000", "--real-path-chunks", "300", "--small-chunks", "300", "--queries", "20",
                 "--no-original", "--cold-runs", "1")),
    Bench("recall-latency", "benchmarks/recall_latency.py", ("--home", "{scale_home}"),
          quick=("--home", "{scale_home}", "--rounds", "1"), quiet=("--no-write",)),
    Bench("mcp", "benchmarks/mcp.py", ("--queries", "40", "--home", "{scale_home}"), APPEND,
          quick=("--queries", "5", "--cold-runs", "1", "--home", "{scale_home}")),
    Bench("engine", "benchmarks/engine.py", ("--home", "{scale_home}"), quick=("--home", "{scale_home}", "--runs", "3"),
          quiet=("--no-results",)),
    Bench("soak", "benchmarks/soak.py", ("--searches", "10000", "--window", "1000"),
          quick=("--searches", "500", "--window", "100"), quiet=("--no-write",)),
    Bench("engine-flood", "benchmarks/engine_flood.py", (), APPEND),
    Bench("stress", "benchmarks/stress.py", ("--seconds", "60", "--engine", "on"),
          quick=("--seconds", "15", "--kills", "1", "--engine", "on"), quiet=("--no-record",)),
    Bench("doctor-time", "benchmarks/doctor_time.py", ("--runs", "9"), APPEND, quick=("--runs", "3")),
    Bench("cold-start", "benchmarks/cold_start.py", ("--runs", "7"), ("--record",), quick=("--runs", "2")),
    Bench("team-push", "benchmarks/team_push.py", ("--chunks", "5000"), APPEND, quick=("--chunks", "500")),
    Bench("team-scale", "benchmarks/team_scale.py", ("--agreement", "--million"), APPEND,  # after scale (100k)
          quick=("--million", "--chunks", "20000", "--queries", "20")),
    Bench("recall-xlang", "benchmarks/recall_xlang.py", (), ("--write",)),
    Bench("recall-xlang-bg1000", "benchmarks/recall_xlang.py", ("--background", "1000"), ("--write",)),
    Bench("vector-leg", "benchmarks/vector_leg.py", ("--scale-home", "{scale_home}"), ("--write",)),  # after both
    Bench("blend-upgrade", "benchmarks/blend_upgrade.py", (), ("--write",), quick=("--embed", "40")),  # after scale
    Bench("ui-timing", "benchmarks/ui_timing.py", ("--rounds", "5"), APPEND, quick=("--rounds", "1")),
)


def selected(only: list[str] | None) -> list[Bench]:
    if not only:
        return list(BENCHMARKS)
    keys = {b.key for b in BENCHMARKS}
    unknown = [k for k in only if k not in keys]
    if unknown:
        raise SystemExit(f"unknown section(s): {', '.join(unknown)}; known: {', '.join(sorted(keys))}")
    return [b for b in BENCHMARKS if b.key in only]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small runs that write nothing: does everything still run?")
    ap.add_argument("--only", nargs="+", metavar="KEY", help="only these sections (keys as in RESULTS.md)")
    ap.add_argument("--dry-run", action="store_true", help="print the commands, one a line (KEY<TAB>command)")
    ap.add_argument("--stand-in", type=Path, help="WWT_MODEL_DIR of the fully-int8 stand-in (S) for its sections")
    ap.add_argument("--fp32", type=Path, help="fp32 model.onnx for int8-export (scripts/export_int8.py)")
    args = ap.parse_args(argv)

    options = {"stand_in": args.stand_in, "fp32": args.fp32}
    failed: list[str] = []
    for bench in selected(args.only):
        cmd = bench.command(args.quick) + list(bench.with_stand_in if args.stand_in else ())
        cmd = [a.replace("{fp32}", str(args.fp32 or "<fp32 model.onnx>")).replace("{stand_in}", str(args.stand_in))
               for a in cmd]
        env_note = "WWT_MODEL_DIR=<stand-in> " if bench.model == "stand-in" else ""
        missing = bench.needs and options[bench.needs] is None
        line = env_note + shlex.join(cmd)
        if args.dry_run:
            print(f"{bench.key}\t{line}" + (f"\t(skipped without --{bench.needs.replace('_', '-')})" if missing else ""))
            continue
        if missing:
            print(f"== {bench.key}: skipped (needs --{bench.needs.replace('_', '-')})", flush=True)
            continue
        env = dict(os.environ)
        if bench.model == "stand-in":
            env["WWT_MODEL_DIR"] = str(args.stand_in.resolve())
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
        print(f"== {bench.key}: {line}", flush=True)
        started = time.perf_counter()
        code = subprocess.call([sys.executable, *cmd[1:]], cwd=ROOT, env=env)
        print(f"== {bench.key}: exit {code} after {time.perf_counter() - started:.0f} s", flush=True)
        if code != 0:
            failed.append(bench.key)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
