"""What every benchmark shares: where the shared data lives (``../shared`` beside the checkout, or ``$WWT_SHARED``),
the model cache key, one section per benchmark in RESULTS.md, and the memory of a process tree."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

SHARED = Path(os.environ.get("WWT_SHARED") or Path(__file__).resolve().parents[2] / "shared")
REAL_FIXTURES = SHARED / "fixtures" / "real"
KORQUAD = SHARED / "data" / "korquad" / "KorQuAD_v1.0_dev.json"


def model_key() -> str:
    """Cache key for e5 vectors: the model file (``$WWT_MODEL_DIR``) and how wwt runs it (graph fusions move
    int8 vectors in their last digits)."""
    from wwt.embedder import DISABLED_FUSIONS

    model = Path(os.environ.get("WWT_MODEL_DIR", "")) / "model.onnx"
    stat = model.stat() if model.exists() else None
    runtime = ",".join(DISABLED_FUSIONS)
    return f"{model}:{stat.st_size if stat else 0}:{int(stat.st_mtime) if stat else 0}:{runtime}"


RESULTS = Path(__file__).with_name("RESULTS.md")


def _markers(key: str) -> tuple[str, str]:
    return f"<!-- section: {key} -->", f"<!-- /section: {key} -->"


def replace_section(key: str, body: str, results: Path = RESULTS) -> None:
    """Put one benchmark's current section into RESULTS.md, replacing its previous one (history is git).

    A section sits between ``<!-- section: KEY -->`` and ``<!-- /section: KEY -->`` and starts with an
    ``<a id="KEY">`` anchor; a new key is added at the end, so the summary on top stays where it is."""
    start, end = _markers(key)
    # the anchor is what the summary table links to (a heading's own anchor changes with its date)
    block = f'{start}\n<a id="{key}"></a>\n\n{body.strip()}\n{end}\n'
    text = results.read_text(encoding="utf-8") if results.exists() else "# Benchmark results\n\n"
    head, found, rest = text.partition(start)
    if found:
        _, closed, tail = rest.partition(end)
        if not closed:
            raise ValueError(f"{results.name}: section {key!r} has no end marker")
        text = head + block + ("\n" + tail.lstrip("\n") if tail.strip() else "")
    else:
        text = text.rstrip("\n") + "\n\n" + block
    from wwt.fileio import atomic_write

    atomic_write(results, text, 0o644)


# ------------------------------------------------------------------------------------------ memory of a process tree
#
# ``ru_maxrss`` (``wait4``, ``getrusage``) is the peak of ONE process: a cold ``wwt search`` hands Korean query
# tokenizing to a helper process (``python -m wwt.lexical``, ~210–290 MB) that it would not count. What a user's
# machine holds is the sum over the process and everything it started, at the same moment: that is measured here.


def _status_kb(pid: int, fields: tuple[str, ...] = ("VmRSS", "VmHWM")) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key in fields:
                    out[key] = int(value.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return out


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return kids
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as fh:
                kids.extend(int(x) for x in fh.read().split())
        except (OSError, ValueError):
            continue
    return kids


def process_tree(pid: int) -> list[int]:
    """``pid`` and all its live descendants (children of every thread, recursively)."""
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.append(p)
        todo.extend(_children(p))
    return seen


def tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` plus all its descendants right now, MB (VmRSS summed; shared libraries are
    counted once per process, so this leans high, never low)."""
    return sum(_status_kb(p).get("VmRSS", 0) for p in process_tree(pid)) / 1024


class TreePeak:
    """Peak resident memory of a process tree: a thread samples VmRSS of ``pid`` and all its descendants together
    every ``interval`` s and keeps the largest sum. Sampling can miss a spike shorter than the interval, so the
    peak is also never below the largest VmHWM (the kernel's own per-process peak) of any process seen.

    ``pid`` may be a callable returning the pid to watch now (or None), for a process that is replaced (the
    background worker after a kill). Use as a context manager or ``start()`` / ``stop()``; ``peak_mb`` any time.
    """

    def __init__(self, pid: int | Callable[[], int | None] | None = None, interval: float = 0.02) -> None:
        import threading

        self._pid = os.getpid() if pid is None else pid
        self.interval = interval
        self.peak_sum_kb = 0
        self.hwm_kb: dict[int, int] = {}
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="tree-peak", daemon=True)

    def sample(self) -> None:
        pid = self._pid() if callable(self._pid) else self._pid
        if not pid:
            return
        total = 0
        for p in process_tree(pid):
            st = _status_kb(p)
            total += st.get("VmRSS", 0)
            if "VmHWM" in st:
                self.hwm_kb[p] = max(self.hwm_kb.get(p, 0), st["VmHWM"])
        self.peak_sum_kb = max(self.peak_sum_kb, total)
        self.samples += 1

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def start(self) -> TreePeak:
        self.sample()
        self._thread.start()
        return self

    def stop(self) -> float:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        return self.peak_mb

    @property
    def peak_mb(self) -> float:
        return max([self.peak_sum_kb, *self.hwm_kb.values()]) / 1024

    @property
    def processes(self) -> int:
        """How many distinct processes were seen in the tree."""
        return len(self.hwm_kb)

    def __enter__(self) -> TreePeak:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def run_tree_measured(
    cmd: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
    interval: float = 0.02, detail: dict | None = None, stdin: bytes | None = None,
) -> tuple[float, float, int, str, float]:
    """Run ``cmd`` to its end: (wall s, peak RSS MB of it and all its descendants together, exit code,
    stdout+stderr text, CPU s of it and its waited-for descendants). CPU beside wall because the cores are
    shared: wall time includes waiting for them. ``detail``, if given, receives ``root_peak_mb`` (the process
    alone, its VmHWM as last sampled) and ``processes`` (how many were seen in the tree)."""
    import subprocess
    import time

    started = time.perf_counter()
    proc = subprocess.Popen(list(cmd), env=None if env is None else dict(env), cwd=cwd,
                            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    with TreePeak(proc.pid, interval) as peak:
        if stdin is not None and proc.stdin:
            proc.stdin.write(stdin)
            proc.stdin.close()
        out = proc.stdout.read() if proc.stdout else b""
        peak.sample()  # its last state, before it is reaped
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if proc.stdout:
        proc.stdout.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if detail is not None:
        # VmHWM, not wait4's ru_maxrss: Linux keeps ru_maxrss across exec, so a child forked from a big parent
        # reports the parent's size even when the program it runs stays small
        detail["root_peak_mb"] = peak.hwm_kb.get(proc.pid, 0) / 1024
        detail["processes"] = peak.processes
    return wall, peak.peak_mb, proc.returncode, out.decode("utf-8", "replace"), usage.ru_utime + usage.ru_stime


def load_average() -> str:
    """The machine's 1/5/15-minute load average, for a section header (the cores are shared)."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())
