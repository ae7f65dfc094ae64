"""Agent config wiring for ``wwt setup`` / ``wwt setup --uninstall`` / ``wwt doctor``."""

from __future__ import annotations

from wwt.setup.configfile import ConfigFormatError
from wwt.setup.plan import AGENTS, Plan, apply_plan, build_plan, render, run

__all__ = ["AGENTS", "ConfigFormatError", "Plan", "apply_plan", "build_plan", "render", "run"]
