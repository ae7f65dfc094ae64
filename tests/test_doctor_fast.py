"""`wwt doctor` took 1.3–2.6 s (issue 25), most of it importing the CLI (typer, rich, pydantic) before one
check ran. It is dispatched before those imports now, prints the same report, and keeps every check.
(Times: benchmarks/doctor_time.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from _shared import REAL_FIXTURES

PROBE = """
import sys
sys.argv = ["wwt", "doctor"]
from wwt.__main__ import main
try:
    main()
except SystemExit as exc:
    code = exc.code
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"typer", "rich", "pydantic", "click"})
sys.stderr.write(f"\\nEXIT {code} HEAVY {heavy}\\n")
"""


def test_doctor_runs_without_the_cli_and_reports_the_same(tmp_path: Path, model_dir: Path) -> None:
    home = tmp_path / "home"
    logs = home / ".claude" / "projects" / "-srv-app"
    logs.mkdir(parents=True)
    (logs / "crud.jsonl").write_bytes((REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl").read_bytes())
    (home / ".codex").mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("WWT_HOME", "CODEX_HOME")}
    env.update(HOME=str(home), WWT_MODEL_DIR=str(model_dir), WWT_ENGINE="off", NO_COLOR="1", COLUMNS="400")
    setup = subprocess.run([sys.executable, "-m", "wwt", "setup", "--no-agent-cli"], env=env, capture_output=True,
                           text=True, timeout=300, cwd=str(tmp_path))
    assert setup.returncode == 0, setup.stderr[-1000:]

    fast = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120,
                          cwd=str(tmp_path))
    assert "HEAVY []" in fast.stderr, fast.stderr[-1500:]
    assert "EXIT 0" in fast.stderr and "all good" in fast.stdout, fast.stdout + fast.stderr

    full = subprocess.run([sys.executable, "-c", "import sys; sys.argv = ['wwt', 'doctor']; "
                           "from wwt.cli import main; main()"], env=env, capture_output=True, text=True,
                          timeout=120, cwd=str(tmp_path))
    assert full.returncode == 0
    assert fast.stdout == full.stdout  # the same findings, the same words, every check kept
    for area in ("Claude Code", "Codex CLI", "model", "store", "worker", "indexes"):
        assert f" {area}" in fast.stdout
