"""Text the agents inject into "user" messages (reminders, command echoes, environment blocks), shared by all
parsers. Rules are DATA (``TAG_RULES``, ``PATTERN_RULES``, ``WHOLE_MESSAGE_RULES``), each with an example the
tests replay, so adding a rule is one table row.

Slash commands (Claude ``<command-name>…<command-args>``, the expanded command file in ``<command-contents>``,
never kept): a command typed with arguments keeps
``"/name args"`` as the user text (the arguments carry intent: ``/review-pr 123``, custom commands with a
request); a bare command (``/clear``, ``/compact``, ``/model``, ``/mcp``) is a UI action and the message is
dropped (``clean_user_text`` returns None).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class TagRule:
    """An injected ``<tag>…</tag>`` span removed wherever it appears (also inside real prompts)."""

    tag: str
    source: str  # which agent injects it, for humans
    example: str  # a message containing it
    expected: str | None  # clean_user_text(example)


@dataclass(frozen=True)
class PatternRule:
    """A regex whose matches are removed wherever they appear."""

    name: str
    pattern: str
    example: str
    expected: str | None
    trigger: str = ""  # literal that must occur for the pattern to be tried (speed); "" = always


TAG_RULES: tuple[TagRule, ...] = (
    TagRule("system-reminder", "claude", "fix the bug<system-reminder>todo list empty</system-reminder>", "fix the bug"),
    TagRule("local-command-stdout", "claude", "<local-command-stdout>Set model to opus</local-command-stdout>", None),
    TagRule("local-command-stderr", "claude", "<local-command-stderr>boom</local-command-stderr>", None),
    TagRule("local-command-caveat", "claude", "<local-command-caveat>Caveat: …</local-command-caveat>", None),
    TagRule("user-prompt-submit-hook", "claude", "hi <user-prompt-submit-hook>ctx</user-prompt-submit-hook>", "hi"),
    TagRule("session-start-hook", "claude", "<session-start-hook>loaded</session-start-hook>", None),
    TagRule("bash-stdout", "claude", "<bash-stdout>a.txt</bash-stdout><bash-stderr></bash-stderr>", None),
    TagRule("bash-stderr", "claude", "<bash-stderr>not found</bash-stderr>", None),
    TagRule("ide_opened_file", "claude", "<ide_opened_file>opened a.py</ide_opened_file>why slow?", "why slow?"),
    TagRule("ide_selection", "claude", "<ide_selection>x = 1</ide_selection>", None),
    TagRule("command-contents", "claude", "<command-contents>Analyze this codebase</command-contents>", None),
    TagRule("tick", "claude", "<tick>3</tick>", None),
    TagRule("goal", "claude", "<goal>ship it</goal>", None),
    # A background task or agent finishing: Claude Code queues it as a prompt of its own (queued_command
    # attachment, queue-operation, or a user line), never typed by the user.
    TagRule("task-notification", "claude",
            "<task-notification>\n<task-id>b7</task-id>\n<status>completed</status>\n</task-notification>", None),
    # Copilot CLI's spelling: an AGENTS.md it discovered, or a reminder it appends to the model-bound turn.
    TagRule("system_reminder", "copilot", "<system_reminder>\nCustom instructions from AGENTS.md\n</system_reminder>",
            None),
    # Cursor's notice that a background task finished (the prompt it writes after it is WHOLE_MESSAGE_RULES'
    # cursor-task-followup; the <timestamp> before a prompt is read, and cut, by wwt.parsers.cursor).
    TagRule("system_notification", "cursor",
            "<system_notification>\nThe following task has finished.\n<task>\nstatus: success\n</task>\n"
            "</system_notification>", None),
    TagRule("environment_context", "codex", "<environment_context><cwd>/r</cwd></environment_context>", None),
    TagRule("user_instructions", "codex", "<user_instructions>be terse</user_instructions>", None),
    TagRule("turn_aborted", "codex", "<turn_aborted>interrupted</turn_aborted>", None),
    TagRule("permissions instructions", "codex", "<permissions instructions>sandbox</permissions instructions>", None),
    TagRule("INSTRUCTIONS", "codex", "<INSTRUCTIONS>use uv</INSTRUCTIONS>", None),
    TagRule("collaboration_mode", "codex", "<collaboration_mode>pair</collaboration_mode>", None),
    TagRule("skill", "codex", "<skill>body</skill>", None),
    TagRule("user_shell_command", "codex", "<user_shell_command>ls</user_shell_command>", None),
    TagRule("subagents", "codex", "<subagents>list</subagents>", None),
    TagRule("subagent_notification", "codex", "<subagent_notification>done</subagent_notification>", None),
    TagRule("session_context", "gemini", "<session_context>cwd</session_context>", None),
    TagRule("hook_context", "gemini", "<hook_context>x</hook_context>", None),
    # Qwen Code wraps hook output (UserPromptSubmit / SessionStart additionalContext) in its own part; a user
    # record without systemPayload.displayText carries it among the model-bound parts.
    TagRule("qwen:user-prompt-submit-context", "qwen",
            "fix it\n<qwen:user-prompt-submit-context>\nbranch rules\n</qwen:user-prompt-submit-context>", "fix it"),
    TagRule("qwen:session-start-context", "qwen",
            "<qwen:session-start-context>\nrepo notes\n</qwen:session-start-context>", None),
)

PATTERN_RULES: tuple[PatternRule, ...] = (
    PatternRule(
        "local-commands-caveat",
        r"Caveat: The messages below were generated by the user while running local commands\."
        r"(?:[^\n<]*?unless the user explicitly asks you to\.)?",
        "Caveat: The messages below were generated by the user while running local commands. DO NOT respond "
        "to these messages or otherwise consider them in your response unless the user explicitly asks you to.",
        None,
        "Caveat: ",
    ),
    PatternRule(
        "request-interrupted",
        r"\[Request interrupted by user[^\]\n]{0,40}\]",
        "[Request interrupted by user for tool use]",
        None,
        "[Request interrupted",
    ),
    PatternRule(
        "agents-md-header",
        r"^# AGENTS\.md instructions for [^\n]*$",
        "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nuse uv\n</INSTRUCTIONS>",
        None,
        "# AGENTS.md",
    ),
    PatternRule(
        "codex-ide-context",  # VS Code extension preface (active file, open tabs) before the real request
        r"^# Context from my IDE setup:[\s\S]*?^## My request for Codex:[ \t]*\n?",
        "# Context from my IDE setup:\n\n## Active file: a.py\n\n## My request for Codex:\nfix it",
        "fix it",
    ),
    PatternRule(
        "codex-request-prefix",
        r"^## My request for Codex:\s*",
        "## My request for Codex:\nadd tests",
        "add tests",
        "## My request",
    ),
    PatternRule(
        "codex-image-tag",
        r"</?image(?: name=[^>]*)?>",
        "<image name=[Image #1]></image>what is this?",
        "what is this?",
        "image",
    ),
)

WHOLE_MESSAGE_RULES: tuple[PatternRule, ...] = (
    PatternRule("gemini-continue", r"System: Please continue\.", "System: Please continue.", None),
    PatternRule(
        "cursor-task-followup",  # what Cursor asks, as the user, once a background task has finished
        r"Briefly inform the user about the task result and perform any follow-up actions \(if needed\)\."
        r"(?:\s*If there['’]s no follow-ups needed, don['’]t explicitly say that\.)?",
        "Briefly inform the user about the task result and perform any follow-up actions (if needed). If there's "
        "no follow-ups needed, don't explicitly say that.",
        None,
    ),
)

_TAG_RE = re.compile(
    r"<(?P<tag>" + "|".join(re.escape(r.tag) for r in TAG_RULES) + r")(?:\s[^<>]*)?>.*?</(?P=tag)\s*>",
    re.DOTALL | re.IGNORECASE,
)
_PATTERN_RES = tuple((r.trigger, re.compile(r.pattern, re.MULTILINE)) for r in PATTERN_RULES)
_WHOLE_RE = re.compile("|".join(f"(?:{r.pattern})" for r in WHOLE_MESSAGE_RULES))
_BLANK_RUNS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")

_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.DOTALL)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
_COMMAND_PARTS = re.compile(r"<(command-name|command-message|command-args|command-contents)>.*?</\1>", re.DOTALL)
_BASH_INPUT = re.compile(r"<bash-input>(.*?)</bash-input>", re.DOTALL)

# Cheap pre-check: text without any of these cannot match a rule (most assistant text and tool output).
_TRIGGERS = ("<", "Caveat:", "[Request interrupted", "# AGENTS.md", "## My request", "System: Please")


def strip_injected_tags(text: str) -> str:
    """Remove every injected span (tags, caveats, interrupt markers) and tidy the blank lines left behind."""
    if not text or not any(t in text for t in _TRIGGERS):
        return text.strip() if text else ""
    out = _TAG_RE.sub("", text) if "<" in text else text
    for trigger, pattern in _PATTERN_RES:
        if trigger in out:
            out = pattern.sub("", out)
    if len(out) != len(text):
        out = _BLANK_RUNS.sub("\n\n", out)
    return out.strip()


def command_text(text: str) -> str | None:
    """What a slash-command echo keeps: ``"/name args"`` when it has arguments, "" when bare, None when
    ``text`` is not a command echo."""
    name_match = _COMMAND_NAME.search(text)
    if not name_match:
        return None
    name = name_match.group(1).strip()
    args_match = _COMMAND_ARGS.search(text)
    args = args_match.group(1).strip() if args_match else ""
    if not args or not name:
        return ""
    if not name.startswith("/"):
        name = "/" + name
    return f"{name} {args}"


def clean_user_text(text: str) -> str | None:
    """The part of a user message the human actually typed; None when the whole message is injected."""
    if not text:
        return None
    command = command_text(text)
    if command is not None:
        rest = _COMMAND_PARTS.sub("", text)
        text = f"{command}\n\n{rest}" if command else rest
    if "<bash-input>" in text:
        text = _BASH_INPUT.sub(lambda m: "!" + m.group(1).strip(), text)
    cleaned = strip_injected_tags(text)
    if not cleaned or _WHOLE_RE.fullmatch(cleaned):
        return None
    return cleaned
