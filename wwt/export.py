"""``wwt export``: one archived conversation as Markdown or as one self-contained HTML file (issue 28).

Only the archive's text is written — it was redacted when it was stored (unless the user turned redaction off,
``wwt config redact``). The HTML page is standalone: inline CSS, no script, no font, image or style from
anywhere, and a Content-Security-Policy of its own (``default-src 'none'``) so a browser opening it loads nothing
even if an archived text tried. Every archived string is HTML-escaped; URLs in it stay plain text (no links).
Tool calls and their outputs are folded in ``<details>``. The UI's export button serves the same HTML.
"""

from __future__ import annotations

import html
import re
from typing import Any

from wwt.models import PLATFORM_NAMES
from wwt.search import resume_line

FORMATS = ("md", "html")
FOLDED_KINDS = ("tool_call", "tool_result", "thinking")
FONT_STACK = ('system-ui, -apple-system, "Segoe UI", "Noto Sans CJK KR", "Noto Sans KR", "Apple SD Gothic Neo", '
              '"Malgun Gothic", sans-serif')
MONO_STACK = 'ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", "Noto Sans Mono CJK KR", monospace'
# Control characters a file viewer or terminal would act on (ESC sequences, bidi overrides, NUL…): shown as
# visible escapes, as ``wwt show`` does. Newline and tab stay.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def visible(text: str | None) -> str:
    """Archived text with its control characters (but newline and tab) as visible ``\\xNN`` escapes."""
    if not text:
        return ""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                         else f"\\u{ord(m.group()):04x}", text.replace("\r\n", "\n"))


def agent_name(platform: str) -> str:
    return PLATFORM_NAMES.get(platform, platform)


def message_label(message: Any) -> str:
    """``user`` / ``assistant`` plus the kind and tool for a folded message (``tool_call Bash``)."""
    parts = [message.role]
    if message.kind != "text":
        parts.append(message.kind)
    if getattr(message, "tool_name", None):
        parts.append(visible(message.tool_name)[:80])
    if "subagent" in (getattr(message, "flags", None) or ()):
        parts.append("(subagent)")
    return " ".join(parts)


def session_facts(row: Any) -> list[tuple[str, str]]:
    """(label, value) pairs that head an export: what a reader needs to know where this came from."""
    facts = [("session", row.session_id), ("agent", agent_name(row.platform))]
    for label, name in (("project", "project"), ("branch", "git_branch"), ("cwd", "cwd"),
                        ("started", "started_at"), ("ended", "ended_at")):
        value = getattr(row, name, None)
        if value:
            facts.append((label, str(value)))
    facts.append(("messages", str(getattr(row, "message_count", 0) or 0)))
    resume = resume_line(row.platform, row.session_id, getattr(row, "cwd", None))
    if resume:
        facts.append(("resume", resume))
    return facts


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks inside ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def to_markdown(view: Any) -> str:
    """The whole conversation in ``view`` (a ``service.SessionView``) as Markdown."""
    row = view.session
    out = [f"# {_md_line(row.title or 'Conversation ' + row.session_id)}", ""]
    for label, value in session_facts(row):
        out.append(f"- **{label}:** `{_md_code(value)}`" if label in ("session", "cwd", "resume")
                   else f"- **{label}:** {_md_line(value)}")
    out += ["", "_Exported by wwt from its local archive (secrets were redacted when archived)._", ""]
    agent = agent_name(row.platform)
    for message in view.messages:
        when = message.timestamp or "?"
        out.append(f"### [{message.seq}] {_md_line(message_label(message))} · {_md_line(when)} · {_md_line(agent)}")
        out.append("")
        text = visible(message.text)
        if message.kind in FOLDED_KINDS:
            fence = _fence(text)
            summary = html.escape(message_label(message))
            first = html.escape(_first_line(text, 100))
            out += [f"<details><summary>{summary}: {first}</summary>", "", f"{fence}text", text, fence, "",
                    "</details>", ""]
        else:
            out += [text, ""]
    return "\n".join(out).rstrip() + "\n"


def _md_line(text: str) -> str:
    """One archived field on a Markdown line: no line break, no HTML, no emphasis of its own."""
    flat = visible(text).replace("\n", " ").replace("\t", " ")
    return html.escape(flat, quote=False).replace("*", "\\*").replace("_", "\\_").replace("`", "\\`")


def _md_code(text: str) -> str:
    return visible(text).replace("\n", " ").replace("`", "'")


def _first_line(text: str, width: int) -> str:
    line = text.strip().split("\n", 1)[0]
    return line if len(line) <= width else line[: width - 1] + "…"


# ------------------------------------------------------------------------------------------------ HTML

HTML_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'none'"

EXPORT_CSS = """
:root { color-scheme: light dark; --fg: #1d1d1f; --bg: #fff; --dim: #6b6b70; --line: #d9d9de;
  --user: #0b57d0; --assistant: #137333; --tool: #8a5300; --box: #f5f5f7; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8e8ea; --bg: #161618; --dim: #9a9aa2; --line: #34343a;
  --user: #8ab4f8; --assistant: #81c995; --tool: #fdd663; --box: #212125; } }
body { margin: 0 auto; max-width: 60rem; padding: 1.5rem; color: var(--fg); background: var(--bg);
  font-family: FONTS; line-height: 1.5; }
h1 { font-size: 1.35rem; margin: 0 0 .5rem; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .15rem .8rem; font-size: .9rem; }
dl.facts dt { color: var(--dim); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
code, pre { font-family: MONO; font-size: .85rem; }
.msg { border-top: 1px solid var(--line); padding: .6rem 0; }
.meta { font-size: .8rem; color: var(--dim); }
.role { font-weight: 600; } .role-user { color: var(--user); } .role-assistant { color: var(--assistant); }
.kind { color: var(--tool); }
pre.text { white-space: pre-wrap; overflow-wrap: anywhere; margin: .3rem 0 0; font-family: inherit;
  font-size: .95rem; }
details { margin-top: .3rem; } summary { cursor: pointer; color: var(--tool); overflow-wrap: anywhere; }
details pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--box); padding: .5rem;
  border-radius: 4px; max-height: 40rem; overflow: auto; }
.note { font-size: .8rem; color: var(--dim); }
""".replace("FONTS", FONT_STACK).replace("MONO", MONO_STACK)


def message_html(message: Any, agent: str, marked: bool = False) -> str:
    """One message as an ``<article>``: role, time, agent; a folded ``<details>`` for tool calls, outputs and
    thinking. Everything archived is escaped."""
    esc = html.escape
    text = visible(message.text)
    role = esc(message.role)
    kind = f' <span class="kind">{esc(message_label(message)[len(message.role) + 1:])}</span>' \
        if message_label(message) != message.role else ""
    when = esc(message.timestamp or "?")
    meta = (f'<div class="meta"><span class="role role-{role}">{role}</span>{kind} · '
            f'<time datetime="{when}">{when}</time> · {esc(agent)} · #{message.seq}</div>')
    if message.kind in FOLDED_KINDS:
        body = (f"<details><summary>{esc(_first_line(text, 120)) or esc(message.kind)}</summary>"
                f"<pre>{esc(text)}</pre></details>")
    else:
        body = f'<pre class="text">{esc(text)}</pre>'
    mark = " hit" if marked else ""
    sid = esc(message.session_id)
    return (f'<article class="msg{mark}" id="m-{message.seq}" data-seq="{message.seq}" data-session="{sid}">'
            f"{meta}{body}</article>")


def to_html(view: Any) -> str:
    """The whole conversation as one self-contained HTML page (inline CSS, no script, loads nothing)."""
    esc = html.escape
    row = view.session
    title = row.title or f"Conversation {row.session_id}"
    agent = agent_name(row.platform)
    facts = "".join(f"<dt>{esc(label)}</dt><dd>{esc(visible(value))}</dd>" for label, value in session_facts(row))
    messages = "\n".join(message_html(m, agent) for m in view.messages)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="und"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{HTML_CSP}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(visible(title))} — wwt export</title><style>{EXPORT_CSS}</style></head><body>"
        f"<h1>{esc(visible(title))}</h1><dl class=\"facts\">{facts}</dl>"
        '<p class="note">Exported by wwt from its local archive; secrets were redacted when archived.</p>'
        f"<main>\n{messages}\n</main></body></html>\n"
    )


def export_session(memory: Any, session_id: str, fmt: str = "md") -> str:
    """``session_id`` (or a unique prefix) from ``memory`` (a ``service.Memory``, or anything with its
    ``resolve_session``/``get_session``) in ``fmt`` (``md``/``html``)."""
    from wwt.errors import UsageError

    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt[:20]!r}: use md or html")
    view = memory.get_session(memory.resolve_session(session_id).session_id)
    return to_html(view) if fmt == "html" else to_markdown(view)
