"""Presentation: search hits, archived conversations and status as terminal text (rich) or stable JSON.

Kept apart from the CLI so the MCP server can reuse the JSON shape. rich measures East-Asian wide characters,
so Korean/Chinese excerpts wrap correctly inside 80–120 columns.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from wwt.limits import clip
from wwt.models import PLATFORM_NAMES, Filters
from wwt.search import RESUME_COMMANDS, SearchOutcome, SessionHit, shell_word, weak_notice
from wwt.search import resume_line as _resume_line
from wwt.store import QUEUE_MAX_ATTEMPTS

JSON_SCHEMA_VERSION = 1
MESSAGE_CHARS = 2000  # `wwt show` cuts longer messages unless --full

BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"  # embeddings, overrides, isolates
LINE_SEPARATORS = "\u2028\u2029"  # not a terminal's line break, but Python's, an LLM reader's and some editors'
# C0 but tab/newline (VT, FF, CR, the C0 separators), DEL, C1 (ESC starts colour/cursor/title sequences; C1 0x9b
# is a one-byte CSI; NEL 0x85 ends a line), bidi controls, the Unicode line/paragraph separators
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + BIDI_CONTROLS + LINE_SEPARATORS + "]")
REPAIR_COUNTS = ("lexical_added", "lexical_removed", "vector_added", "vector_removed")


def terminal_safe(text: str) -> str:
    """Archived text may carry NUL, ESC sequences or bidi overrides that recolour, move the cursor, retitle or
    visibly reorder (spoof) what a terminal shows: each becomes a visible escape (``\\x1b``, ``\\u202e``), as
    does every line break but the newline (CR, VT, FF, NEL, U+2028/2029). Newlines and tabs stay; CRLF becomes a
    newline. For display only: stored text is never changed."""
    return _UNSAFE.sub(_visible_escape, text.replace("\r\n", "\n"))


FIELD_CHARS = 60  # an archived name (project, branch, tool) on a terminal line: longer ones are cut


def terminal_field(text: str, limit: int | None = None) -> str:
    """An archived field shown on one line (project, branch, title, cwd, tool name, file name): ``terminal_safe``
    and its newlines as visible escapes too, so a log cannot forge a line of its own (a fake ``resume:``) under
    it; cut to ``limit`` characters when given."""
    shown = _UNSAFE.sub(_visible_escape, text).replace("\n", "\\x0a")
    return shown if limit is None or len(shown) <= limit else shown[: limit - 1] + "…"


def print_quoted(console: Console, text: Text, first: str, rest: str) -> None:
    """Archived text (an excerpt, a message) with a prefix wwt chose on every line — its own lines and the
    renderer's wraps alike — so no line of it can pass for wwt's own (a ``resume: curl … | sh`` the log wrote,
    or one a wrap at the right width would put first on a line). ``first`` and ``rest`` are as wide."""
    width = max(8, console.width - cell_len(first))
    for i, line in enumerate(text.wrap(console, width)):
        out = Text(first if i == 0 else rest, style="dim")
        out.append_text(line)
        out.rstrip()
        console.print(out, soft_wrap=True)


def _visible_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def repair_line(repair: dict[str, Any] | None) -> str | None:
    """The ingest summary's line about indexes mended from the archive (a damaged index rebuilt, ids out of
    step after a crash); None when nothing was repaired — a new archive's first, empty indexes are not."""
    if not repair:
        return None
    parts = [f"{name} rebuilt" for name in repair.get("rebuilt") or ()]
    parts += [f"{key} {repair[key]}" for key in REPAIR_COUNTS if repair.get(key)]
    return "indexes repaired from the archive: " + ", ".join(parts) if parts else None


def format_when(iso: str | None) -> str:
    """ISO UTC → local ``YYYY-MM-DD HH:MM``; unknown stays visible as ``?``."""
    if not iso:
        return "?"
    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso[:16]
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M")


def resume_line(hit: SessionHit) -> str | None:
    """The copy-pastable command to reopen the session (``wwt.search.resume_line``: quoted, and None for an
    id that is not the agent's id shape)."""
    if not hit.resume:
        return None
    return _resume_line(hit.platform, hit.session_id, hit.cwd)


def no_resume_reason(hit: SessionHit) -> str:
    """Why a hit has no resume line, for the terminal — and, since the id is then shown nowhere else, the
    (quoted) command that reads the session."""
    name = PLATFORM_NAMES.get(hit.platform, hit.platform)
    show = f"; read it with: wwt show {shell_word(hit.session_id)}" if len(hit.session_id) <= 200 else ""
    machine = getattr(hit, "machine", None)
    if machine:  # a team hit (wwt search --team): the session lives on another machine
        return f"on {machine}: resume or read it there{show.replace('; read it with', ' with')}"
    if hit.platform in RESUME_COMMANDS:
        return f"not offered: the session id is not a {name} session id{show}"
    return f"not supported for {name}{show}"


def hits_to_json(query: str, outcome: SearchOutcome, filters: Filters, scope: str) -> dict[str, Any]:
    """The documented ``wwt search --json`` shape (see docs/cli.md). Only add keys; never rename."""
    return {
        "version": JSON_SCHEMA_VERSION,
        "query": query,
        "scope": scope,
        "filters": {k: v for k, v in vars(filters).items() if v is not None},
        "weak": outcome.weak,
        "absent": list(outcome.absent),
        **({"words_only": outcome.words_only} if outcome.words_only else {}),
        "results": [
            {
                "session_id": hit.session_id,
                "platform": hit.platform,
                "project": hit.project,
                "git_branch": hit.git_branch,
                "cwd": hit.cwd,
                "started_at": hit.started_at,
                "ended_at": hit.ended_at,
                "title": hit.title,
                "score": hit.score,
                "chunks": [vars(chunk).copy() for chunk in hit.chunks],
                "resume": hit.resume,
                "resume_line": resume_line(hit),
                **({"machine": hit.machine} if getattr(hit, "machine", None) else {}),
            }
            for hit in outcome.hits
        ],
    }


def render_hits(
    console: Console, query: str, outcome: SearchOutcome, scope: str, terms: list[str] | None = None
) -> None:
    if not outcome.hits:
        console.print(f"no matches for [bold]{escape(terminal_safe(query))}[/] in {escape(terminal_safe(scope))}")
        return
    if outcome.weak:
        console.print(f"[yellow]{escape(terminal_safe(weak_notice(outcome)))}[/]")
    for rank, hit in enumerate(outcome.hits, 1):
        # one line each, never wrapped (a wrap could put a field's "resume: …" first on a line): cut instead
        header = Text(f"{rank}. ", style="bold")
        header.append(terminal_field(hit.project or "(no project)", FIELD_CHARS), style="bold cyan")
        if hit.git_branch:
            header.append(f" @{terminal_field(hit.git_branch, FIELD_CHARS)}", style="magenta")
        header.append(f"  {terminal_field(PLATFORM_NAMES.get(hit.platform, hit.platform))}", style="green")
        if getattr(hit, "machine", None):  # a team hit (wwt search --team): the machine that pushed it
            header.append(f"  from {terminal_field(hit.machine, FIELD_CHARS)}", style="yellow")
        header.append(f"  {format_when(hit.started_at)}", style="dim")
        header.append(f"  score {hit.score:.3f}", style="dim")
        console.print(header, overflow="ellipsis", no_wrap=True)
        if hit.title:
            title = Text("   title: ", style="dim")
            title.append(terminal_field(hit.title), style="italic")
            console.print(title, overflow="ellipsis", no_wrap=True)
        for chunk in hit.chunks:
            body = Text(terminal_safe(chunk.text))
            if terms:
                body.highlight_words(terms, style="bold yellow", case_sensitive=False)
            body.append(f"  [{terminal_field(str(chunk.chunk_id))} {format_when(chunk.start_ts)}]", style="dim")
            print_quoted(console, body, "   › ", "   │ ")
        resume = resume_line(hit)
        # soft_wrap: never break the command with a newline, so it copy-pastes whole
        resume = terminal_field(resume or no_resume_reason(hit))
        console.print(f"   [dim]resume:[/] {escape(resume)}", soft_wrap=True)
        console.print()


def render_session(console: Console, view: Any, full: bool = False) -> None:
    """A conversation for the terminal. Archived fields sit after a label on one line each (soft-wrapped: a
    terminal may fold them, but they copy whole); message text has the gutter ``│`` on every line."""
    row = view.session
    header = Text("session ", style="dim")
    header.append(terminal_field(row.session_id), style="bold")
    header.append(f"  {terminal_field(PLATFORM_NAMES.get(row.platform, row.platform))}", style="green")
    if getattr(row, "project", None):
        header.append(f"  {terminal_field(row.project)}", style="cyan")
    if getattr(row, "git_branch", None):
        header.append(f" @{terminal_field(row.git_branch)}", style="magenta")
    header.append(f"  {format_when(getattr(row, 'started_at', None))}", style="dim")
    console.print(header, soft_wrap=True)
    if getattr(row, "title", None):
        title = Text("title: ", style="dim")
        title.append(terminal_field(row.title), style="italic")
        console.print(title, soft_wrap=True)
    if getattr(row, "cwd", None):
        console.print(Text(f"cwd: {terminal_field(row.cwd)}", style="dim"), soft_wrap=True)
    console.print()
    for message in view.messages:
        label = Text(f"[{message.seq}] ", style="dim")
        label.append(message.role, style="bold blue" if message.role == "user" else "bold green")
        if message.kind != "text":
            label.append(f" {message.kind}", style="yellow")
        if getattr(message, "tool_name", None):
            label.append(f" {terminal_field(message.tool_name, FIELD_CHARS)}", style="yellow")
        flags = getattr(message, "flags", None)
        if flags:
            label.append(f" ({', '.join(sorted(flags))})", style="dim")
        label.append(f"  {format_when(message.timestamp)}", style="dim")
        console.print(label, soft_wrap=True)
        text = message.text or ""
        if not full and len(text) > MESSAGE_CHARS:
            text = text[:MESSAGE_CHARS] + f"… ({len(text) - MESSAGE_CHARS} more chars; --full shows all)"
        print_quoted(console, Text(terminal_safe(text)), "│ ", "│ ")
        console.print()


def human_bytes(size: int | float | None) -> str:
    if size is None:
        return "?"
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def render_status(console: Console, info: dict[str, Any], model: dict[str, Any] | None) -> None:
    console.print(Text(f"data dir: {info.get('home')}", style="bold"))
    if not info.get("has_data"):
        console.print("no data yet — run `wwt ingest` (or `wwt setup`)")
    else:
        console.print(
            f"sessions: {info.get('sessions', 0)} (+{info.get('subagent_sessions', 0)} subagent)   "
            f"messages: {info.get('messages', 0)}   chunks: {info.get('chunks', 0)}   "
            f"files: {info.get('files', 0)}"
            + (f" ({info['files_missing']} deleted by their agent, kept here)" if info.get("files_missing") else "")
        )
        for platform, counts in sorted((info.get("per_platform") or {}).items()):
            console.print(
                f"  {terminal_field(PLATFORM_NAMES.get(platform, platform), FIELD_CHARS):<12} "
                f"sessions {counts.get('sessions', 0):>6}"
                f"   chunks {counts.get('chunks', 0):>7}"
            )
        console.print(
            f"archive: {human_bytes(info.get('db_bytes'))}   indexes: {human_bytes(info.get('index_bytes'))}"
        )
        console.print(f"last ingest: {format_when(info.get('last_ingest'))}")
        vectors = vectors_line(info.get("chunks_with_vector", 0), info.get("chunks", 0),
                               info.get("backfill_rate") or 0.0, bool(info.get("backfill_paused")),
                               info.get("chunks_refreshing", 0))
        if vectors:
            console.print(vectors)
        if info.get("queue_pending"):
            console.print(f"waiting to be ingested: {info['queue_pending']} file(s)")
        if info.get("queue_parked"):
            console.print(
                f"[yellow]given up after {QUEUE_MAX_ATTEMPTS} failed attempts: {info['queue_parked']} queued file(s)"
                " — `wwt doctor` says why; `wwt worker --retry-parked` tries them again[/]"
            )
    if model is not None:
        if model.get("available"):
            console.print(
                f"model: {model.get('label') or model.get('repo_id') or '?'} ({model.get('source', '?')}, "
                f"{human_bytes(model.get('total_bytes'))}) in {model.get('model_dir')}"
            )
        else:
            console.print(f"[yellow]model: unavailable — {escape(str(model.get('error')))}[/]")


def render_model(console: Console, model: dict[str, Any]) -> None:
    for key, value in model.items():
        if key == "files":
            for item in value:
                console.print(
                    f"  {item['name']:<24} {human_bytes(item['bytes']):>10}  checksum {item['checksum']}"
                )
        else:
            console.print(f"{key}: {escape(str(value))}")


def render_ingest_summary(console: Console, summary: Any, verbose: bool = False) -> None:
    """Short lines (they fit 80 columns) from ``wwt.ingest.IngestSummary``."""
    g = lambda name: getattr(summary, name, 0) or 0  # noqa: E731
    missing = f", {g('files_missing')} deleted by their agent (archive kept)" if g("files_missing") else ""
    console.print(
        f"files: {g('files_seen')} seen, {g('files_parsed')} parsed, {g('files_skipped')} unchanged{missing}"
    )
    console.print(
        f"sessions changed: {g('sessions')}   messages: +{g('messages_added')} -{g('messages_removed')}"
    )
    console.print(
        f"chunks: +{g('chunks_added')} -{g('chunks_removed')}   embedded: {g('chunks_embedded')}   "
        f"bad lines: {g('bad_lines')}   ({g('seconds'):.1f} s)"
    )
    unrecognised = g("files_unrecognised")
    if unrecognised:
        hint = "" if verbose else "; -v lists them"
        console.print(f"[yellow]{unrecognised} file(s) not recognised as an agent log, skipped{hint}[/]")
        if verbose:
            for name in getattr(summary, "unrecognised", None) or []:
                console.print(Text(f"  - {terminal_field(name)}", style="dim"), soft_wrap=True)  # one path a line
            if unrecognised > len(getattr(summary, "unrecognised", None) or []):
                console.print(Text("  …", style="dim"))
    vectors = pending_vectors_line(g("vectors_pending"), getattr(summary, "model_unavailable", None),
                                   g("vectors_refreshing"))
    if vectors:
        console.print(f"[yellow]{escape(terminal_safe(vectors))}[/]", soft_wrap=True)
    repaired = repair_line(getattr(summary, "index_repair", None))
    if repaired:  # a crash or a damaged index file was mended from SQLite (no re-embedding)
        console.print(Text(repaired, style="dim"))
    failed = getattr(summary, "failed", None) or {}
    if failed:  # wwt's own failure on a file (the others were archived): said without -v
        console.print(Text(f"{len(failed)} file(s) not archived: wwt failed on them (the next ingest retries "
                           "them; -v says why)", style="yellow"))
    notes = getattr(summary, "notes", None) or []
    if verbose:
        for note in notes:
            console.print(Text(f"  - {terminal_field(note)}", style="dim"), soft_wrap=True)
    elif notes:
        console.print(f"[dim]{len(notes)} per-file note(s); -v shows them[/]")


REFRESHING = "re-embedded with their user turns blended in; their earlier vectors serve searches meanwhile"


def vectors_line(with_vector: int, total: int, rate: float = 0.0, paused: bool = False,
                 refreshing: int = 0) -> str | None:
    """"vectors: 12 % — results improve as embedding finishes (ETA …)" while the back-fill is not done;
    ``refreshing``: how many of the waiting chunks still have their earlier vector (a new vector recipe)."""
    if total <= 0 or with_vector >= total:
        return None
    pct = int(100 * with_vector / total)
    line = f"vectors: {pct} % ({with_vector:,} of {total:,} chunks) — results improve as embedding finishes"
    if refreshing > 0:
        line += f" ({refreshing:,} being {REFRESHING})"
    if paused:
        return line + "; paused (`wwt ingest --resume`)"
    if rate > 0:
        line += f"; ~{human_duration((total - with_vector) / rate)} left at {rate:.1f}/s"
    return line


def pending_vectors_line(pending: int, model_problem: str | None = None, refreshing: int = 0) -> str | None:
    """After an ingest that left vectors pending (paused, given paths with a backlog, or no model:
    ``model_problem`` is the model's own one-line error). ``refreshing`` of the ``pending`` still have their
    earlier vector: searchable by meaning already, only their vector improves."""
    if 0 < pending <= refreshing and not model_problem:
        return f"{pending:,} chunk(s) to be {REFRESHING} (`wwt status` shows progress)"
    pending -= min(pending, refreshing)
    if pending <= 0:
        return None
    if model_problem:
        return (f"searchable by words now; {pending:,} chunk(s) wait for vectors: the model is not available "
                f"({clip(model_problem, 200)}); run `wwt model` to see why, then "
                "`wwt ingest` again embeds them")
    return (f"searchable by words now; {pending:,} chunk(s) still waiting for vectors — the background worker "
            "embeds them (`wwt status` shows progress; `wwt ingest` again finishes them here)")


def human_duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


class rich_progress:  # noqa: N801 - used as a context manager like rich's own helpers
    """A rich progress bar (files done/total, elapsed, ETA) on ``console`` fed by ``wwt.ingest``'s
    ``progress(total, done, current_path)`` callback. Invisible when stderr is not a terminal."""

    def __init__(self, console: Console) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]{task.description:<7}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("[dim]{task.fields[current]}"),
            console=console,
            transient=True,
        )
        self._task: Any = None
        self._vector_task: Any = None
        self._vector_start: tuple[float, int] | None = None

    def __enter__(self) -> rich_progress:
        self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.__exit__(*exc)  # type: ignore[arg-type]

    def __call__(self, total: int, done: int, current: str | None) -> None:
        name = "" if current is None else _tail(current, 40)
        if self._task is None:
            self._task = self._progress.add_task("ingest", total=total, current=name)
        self._progress.update(self._task, total=total, completed=done, current=name)

    def vectors(self, total: int, done: int, current: str | None = None) -> None:
        """The back-fill's ``progress`` callback: chunks with a vector of all chunks, with the rate."""
        import time

        now = time.monotonic()
        if self._vector_start is None:
            self._vector_start = (now, done)
            if total > done:  # nothing to embed: no notice
                self._progress.console.print(
                    f"searchable by words now; embedding {total - done:,} chunk(s) for search by meaning "
                    "(`wwt ingest --pause` pauses it)"
                )
        t0, d0 = self._vector_start
        rate = (done - d0) / (now - t0) if now > t0 else 0.0
        label = f"{rate:.1f} chunks/s" if rate > 0 else ""
        if self._vector_task is None:
            self._vector_task = self._progress.add_task("vectors", total=total, completed=done, current=label)
        self._progress.update(self._vector_task, total=total, completed=done, current=label)


def _tail(path: str, width: int) -> str:
    return path if len(path) <= width else "…" + path[-(width - 1) :]
