"""The agents' real CLIs end to end (issue 25). Select with ``-m agents``; ``-m "not agents"`` leaves them out.

``WWT_AGENTS=claude,codex`` limits the run to those agents; ``WWT_WRITE_AGENT_FIXTURES=1`` copies the
transcripts the CLIs wrote, scrubbed, into tests/fixtures/agents/<platform>/ (the pinned newest formats)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "agents: drives the agents' real CLIs installed from npm (tests/agents)")

