"""Every platform has a human name; --source (CLI) and MCP `source` take platform names and short aliases in
any case, and refuse the rest in one line."""

from __future__ import annotations

import pytest

from wwt.errors import WwtError
from wwt.mcp_server import normalise_source
from wwt.models import PLATFORM_NAMES, PLATFORMS, SOURCE_ALIASES, platform_of
from wwt.search import RESUME_COMMANDS


def test_every_platform_has_a_name_and_every_alias_names_a_platform():
    assert set(PLATFORM_NAMES) == set(PLATFORMS)
    assert set(SOURCE_ALIASES.values()) <= set(PLATFORMS)


@pytest.mark.parametrize(("given", "platform"), [
    ("qwen", "qwen-code"), ("Qwen-Code", "qwen-code"), ("copilot", "copilot-cli"), ("copilot-cli", "copilot-cli"),
    ("opencode", "opencode"), ("aider", "aider"), ("CURSOR", "cursor"), ("cline", "cline"), ("roo", "roo-code"),
    ("roo-code", "roo-code"), (" claude ", "claude-code"), ("Continue", "continue"), ("GOOSE", "goose"),
])
def test_names_and_aliases_are_accepted(given, platform):
    assert platform_of(given) == platform
    assert normalise_source(given) == platform


def test_an_unknown_source_is_refused():
    assert platform_of("windsurf") is None
    with pytest.raises(WwtError, match="unknown source"):
        normalise_source("windsurf")


def test_resume_commands_exist_for_the_agents_that_have_one():
    assert RESUME_COMMANDS["qwen-code"].format(id="x") == "qwen --resume x"
    assert RESUME_COMMANDS["copilot-cli"].format(id="x") == "copilot --resume x"
    assert RESUME_COMMANDS["opencode"].format(id="x") == "opencode --session x"
    assert RESUME_COMMANDS["cline"].format(id="x") == "cline --id x"  # the Cline CLI's runtime sessions
    assert "roo-code" not in RESUME_COMMANDS
    assert "continue" not in RESUME_COMMANDS  # `cn --resume` takes no session id
    assert RESUME_COMMANDS["goose"].format(id="x") == "goose session --resume --session-id x"
