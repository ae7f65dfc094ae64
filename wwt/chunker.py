"""Messages → chunks (pure). Rules, from the original tool and improved:

* Turns are user text and assistant text messages. Tool calls/results, thinking, compaction summaries and
  assistant status lines (< ``STATUS_LINE_TOKENS`` estimated tokens, so CJK counts fairly) attach to the turn they follow (or the first turn).
* Windows of up to ``WINDOW_TURNS`` turns on a fixed grid (start every ``WINDOW_STEP`` turns ⇒ 2-turn
  overlap). A window needs ≥ 2 turns, ≥ 1 user turn and ≥ ``MIN_CHARS`` characters of embedded text; a tail
  window wholly inside the previous one is skipped. A session that yields no window at all but has a user
  turn becomes one chunk (a short exchange should still be findable).
* The fixed grid plus content-derived keys make chunks stable: an unchanged window keeps its key, and an
  appended turn changes at most the last two windows.
* ``embed_text`` (what e5 sees): role-labelled prose, fenced code blocks and injected tags removed, fitted to a
  token budget (≈ 480 e5 tokens) by giving each turn an equal share and handing unused share on.
* ``lexical_text`` = embed text without the budget + code blocks + tool calls and results (head and tail of
  each result, so the error at the end of a long log survives) + thinking, bounded per item and per chunk.
* ``requests``: the window's user turns, each alone (fitted to the same budget, ≥ ``MIN_REQUEST_CHARS``). The
  chunk's vector is its embed text's blended with theirs, embedded as questions (``wwt.embedder.chunk_vectors``):
  a user's request is phrased like the question asked weeks later, in either language (issue 29).
* ``display_text``: a readable excerpt for results.
* Compaction summaries are context (lexical only), never user text. A subagent session's chunks carry the
  ROOT session id so results group under the conversation the user had.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from wwt.models import FLAG_COMPACTION_SUMMARY, FLAG_ERROR, Message, time_key
from wwt.own_tools import is_wwt_reply, is_wwt_tool, unquoted
from wwt.parsers.common import NAMES_CHARS, names_note

WINDOW_TURNS = 6
WINDOW_STEP = 4
MIN_TURNS = 2
MIN_CHARS = 200
STATUS_LINE_TOKENS = 26  # assistant text under this (≈ 80 English chars, ≈ 26 Hangul/CJK chars) is a status line
FALLBACK_MIN_CHARS = 20  # a session with no regular window still gets one chunk if it says this much
EMBED_TOKEN_BUDGET = 480
TOOL_RESULT_HEAD = 1200
TOOL_RESULT_TAIL = 600
ERROR_RESULT_HEAD = 2000  # errors get more room: the message and the stack trace are what people search
TOOL_CALL_CHARS = 600
THINKING_CHARS = 1500
SUMMARY_CHARS = 2000
CODE_BLOCK_CHARS = 3000
LEXICAL_CHARS = 24000
DISPLAY_CHARS = 700
MIN_REQUEST_CHARS = 40  # a request saying less ("user: yes, go on") sits near the middle of everything
REQUEST_WEIGHT = 0.4  # the requests' share of a chunk's vector (chosen on recall_xlang's tuning halves)
VECTOR_RECIPE = f"requests-{REQUEST_WEIGHT}"  # in every blended vector's key: a new blend re-embeds them

_FENCE_RE = re.compile(r"```[^\n`]*\n.*?(?:```|\Z)|~~~[^\n]*\n.*?(?:~~~|\Z)", re.S)
_BLANKS_RE = re.compile(r"[ \t]*\n(?:[ \t]*\n)+")


@dataclass
class Chunk:
    chunk_key: str  # stable: session id + first message native id + content hash
    session_id: str  # the session the messages are in
    root_session_id: str  # the conversation results group under
    first_seq: int
    last_seq: int
    first_native_id: str
    last_native_id: str
    start_ts: str | None
    end_ts: str | None
    embed_text: str
    lexical_text: str
    display_text: str
    embed_hash: str  # the embedding cache key: ``vector_key(embed_text, requests)``
    turn_count: int = 0
    requests: list[str] = field(default_factory=list)


@dataclass
class Turn:
    role: str  # "user" | "assistant"
    text: str  # cleaned prose (no code blocks)
    code: list[str] = field(default_factory=list)
    context: list[str] = field(default_factory=list)  # tool calls/results, thinking, summaries (lexical only)
    seqs: list[int] = field(default_factory=list)
    timestamps: list[str] = field(default_factory=list)
    native_ids: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------ small rules


def split_code_blocks(text: str) -> tuple[str, list[str]]:
    """Prose without fenced code blocks, and the blocks (kept for the lexical index)."""
    blocks = [m.group(0) for m in _FENCE_RE.finditer(text)]
    prose = _FENCE_RE.sub(" ", text)
    return _BLANKS_RE.sub("\n", prose).strip(), blocks


def strip_tags(text: str) -> str:
    """Injected tags out (shared rules in ``wwt.parsers.noise`` when available)."""
    try:
        from wwt.parsers.noise import strip_injected_tags
    except ImportError:  # pragma: no cover - parsers package not present
        return text
    return strip_injected_tags(text)


def bound_middle(text: str, head: int, tail: int, keep_names: bool = False) -> str:
    """Keep the head and the tail of a long text: errors tend to sit at the end of a command's output. With
    ``keep_names`` the marker lists the code names of the cut part (see ``names_note``)."""
    if len(text) <= head + tail + 20:
        return text
    names = names_note(text, head, len(text) - tail, limit_chars=2 * NAMES_CHARS) if keep_names else ""
    marker = f"[… {len(text) - head - tail} chars{names} …]"
    return f"{text[:head]}\n{marker}\n{text[-tail:]}" if tail else f"{text[:head]} {marker}"


def estimate_tokens(text: str) -> int:
    """Conservative e5 (XLM-R) token estimate without the tokenizer: Hangul/CJK/other non-ASCII ≈ 1 token per
    char, ASCII ≈ 1 token per 3 chars (English prose measures ~4–5, code ~2.5–3)."""
    ascii_chars = len(text.encode("ascii", "ignore"))  # = count of chars < 128, at C speed
    return (len(text) - ascii_chars) + (ascii_chars + 2) // 3


def fit_to_budget(texts: Sequence[str], budget: int, count: Callable[[str], int]) -> list[str]:
    """Cut texts so their total cost fits ``budget``: equal shares, unused share handed to longer texts."""
    costs = [count(t) for t in texts]
    if sum(costs) <= budget:
        return list(texts)
    remaining = budget
    order = sorted(range(len(texts)), key=lambda i: costs[i])
    shares = [0] * len(texts)
    for n_left, i in enumerate(order):
        share = remaining // (len(texts) - n_left)
        shares[i] = min(costs[i], share)
        remaining -= shares[i]
    return [texts[i] if shares[i] >= costs[i] else _cut_to(texts[i], shares[i], count) for i in range(len(texts))]


def _cut_to(text: str, budget: int, count: Callable[[str], int]) -> str:
    if budget <= 0:
        return ""
    lo, hi = 0, len(text)
    while lo < hi:  # longest prefix within budget
        mid = (lo + hi + 1) // 2
        if count(text[:mid]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    cut = text[:lo]
    space = cut.rfind(" ")
    if space > lo * 0.8:
        cut = cut[:space]
    return cut.rstrip() + " …"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# ------------------------------------------------------------------------------------------ turns


def build_turns(messages: Sequence[Message], seqs: Sequence[int] | None = None) -> list[Turn]:
    """Group messages into turns; non-turn messages attach to the current turn (or wait for the first)."""
    seqs = list(seqs) if seqs is not None else list(range(len(messages)))
    turns: list[Turn] = []
    pending: Turn | None = None  # context seen before the first turn
    # wwt's own tool results since the user last spoke: an answer repeating them is not this session's content
    recalled: list[str] = []
    calls: dict[str | None, tuple[list[str], int]] = {}  # a tool's last call piece: its result may prove it wwt's

    for m, seq in zip(messages, seqs, strict=True):
        is_summary = FLAG_COMPACTION_SUMMARY in m.flags
        text = m.text or ""
        own = m.kind in ("tool_call", "tool_result") and (
            is_wwt_tool(m.tool_name) or (m.kind == "tool_result" and is_wwt_reply(text)))
        if own and m.kind == "tool_result":
            recalled.append(text)
            if m.tool_name in calls:  # a bare-named call (`search_memory`) its reply shows to be wwt's: its query out
                context, index = calls.pop(m.tool_name)
                context[index] = f"$ {m.tool_name}"
        elif m.kind == "text" and m.role == "user":
            recalled = []
        if m.kind == "text" and m.role == "assistant" and not is_summary and (recalled or is_wwt_reply(text)):
            text = unquoted(text, "\n".join(recalled))  # what it says of its own; "" when it mostly quotes
        if m.kind == "text" and not text.strip():
            piece = None
        elif m.kind == "text" and not is_summary:
            prose, code = split_code_blocks(strip_tags(text))
            is_turn = bool(prose) and (m.role == "user" or estimate_tokens(prose) >= STATUS_LINE_TOKENS or code)
            if is_turn:
                turn = Turn(role=m.role, text=prose, code=code)
                if pending is not None:
                    turn.context, turn.seqs = pending.context, pending.seqs
                    turn.timestamps, turn.native_ids = pending.timestamps, pending.native_ids
                    pending = None
                _attach(turn, m, seq, None)
                turns.append(turn)
                continue
            piece = f"{m.role}: {prose}" if prose else ""
            piece = "\n".join([piece, *code]).strip()
        elif is_summary:
            piece = "summary: " + bound_middle(text, SUMMARY_CHARS, 0)
        elif own:
            piece = f"$ {m.tool_name}" if m.kind == "tool_call" else ""  # wwt's own recall: archived, not indexed
        elif m.kind == "tool_call":
            piece = f"$ {m.tool_name or 'tool'}: {bound_middle(text, TOOL_CALL_CHARS, 0)}"
            target = turns[-1] if turns else pending
            if target is None:
                pending = target = Turn(role="context", text="")
            calls[m.tool_name] = (target.context, len(target.context))
            _attach(target, m, seq, piece)
            continue
        elif m.kind == "tool_result":
            head = ERROR_RESULT_HEAD if FLAG_ERROR in m.flags else TOOL_RESULT_HEAD
            label = "error" if FLAG_ERROR in m.flags else "output"
            piece = f"{label}: {bound_middle(text, head, TOOL_RESULT_TAIL, keep_names=True)}"
        elif m.kind == "thinking":
            piece = f"thinking: {bound_middle(text, THINKING_CHARS, 0)}" if text.strip() else ""
        else:
            piece = bound_middle(text, TOOL_RESULT_HEAD, TOOL_RESULT_TAIL)
        target = turns[-1] if turns else pending
        if target is None:
            pending = target = Turn(role="context", text="")
        _attach(target, m, seq, piece)
    if pending is not None and turns:
        _merge_into(turns[-1], pending)
    return turns


def _attach(turn: Turn, m: Message, seq: int, piece: str | None) -> None:
    if piece:
        turn.context.append(piece)
    turn.seqs.append(seq)
    turn.native_ids.append(m.native_id)
    if m.timestamp:
        turn.timestamps.append(m.timestamp)


def _merge_into(turn: Turn, extra: Turn) -> None:
    turn.context += extra.context
    turn.seqs += extra.seqs
    turn.native_ids += extra.native_ids
    turn.timestamps += extra.timestamps


# ------------------------------------------------------------------------------------------ windows


def window_spans(n_turns: int, size: int = WINDOW_TURNS, step: int = WINDOW_STEP) -> list[tuple[int, int]]:
    """Fixed-grid windows ``[k·step, k·step + size)``; a tail wholly inside the previous window is dropped."""
    spans: list[tuple[int, int]] = []
    start = 0
    while start < n_turns:
        end = min(start + size, n_turns)
        if not spans or end > spans[-1][1]:
            spans.append((start, end))
        start += step
    return spans


def chunk_session(
    messages: Sequence[Message],
    session_id: str = "",
    root_session_id: str | None = None,
    seqs: Sequence[int] | None = None,
    count_tokens: Callable[[str], int] | None = None,
    token_budget: int = EMBED_TOKEN_BUDGET,
) -> list[Chunk]:
    """Chunks of one session's ordered messages. ``seqs`` are the messages' stored positions (default
    0..n-1); ``count_tokens`` defaults to a conservative estimate."""
    count = count_tokens or estimate_tokens
    root = root_session_id or session_id
    turns = build_turns(messages, seqs)
    chunks: list[Chunk] = []
    for start, end in window_spans(len(turns)):
        window = turns[start:end]
        chunk = _make_chunk(window, session_id, root, count, token_budget)
        if len(window) >= MIN_TURNS and _has_user(window) and len(chunk.embed_text) >= MIN_CHARS:
            chunks.append(chunk)
    if not chunks and _has_user(turns):
        chunk = _make_chunk(turns, session_id, root, count, token_budget)
        if len(chunk.embed_text) >= FALLBACK_MIN_CHARS:
            chunks.append(chunk)
    return chunks


def _has_user(turns: Sequence[Turn]) -> bool:
    return any(t.role == "user" for t in turns)


def _make_chunk(window: Sequence[Turn], session_id: str, root: str, count: Callable[[str], int], budget: int) -> Chunk:
    lines = [f"{t.role}: {t.text}" for t in window]
    embed_lines = fit_to_budget(lines, budget, count)
    embed_text = "\n".join(line for line in embed_lines if line)
    lexical_parts: list[str] = []
    for t, line in zip(window, lines, strict=True):
        lexical_parts.append(line)
        lexical_parts += [bound_middle(c, CODE_BLOCK_CHARS, 0) for c in t.code]
        lexical_parts += t.context
    lexical_text = bound_middle("\n".join(lexical_parts), LEXICAL_CHARS - 2000, 2000)
    display_text = bound_middle("\n".join(lines), DISPLAY_CHARS, 0)
    requests = user_requests(window, embed_text, budget, count)
    seqs = [s for t in window for s in t.seqs]
    native_ids = [n for t in window for n in t.native_ids]
    stamps = sorted((ts for t in window for ts in t.timestamps if ts), key=time_key)
    first = min(range(len(seqs)), key=lambda i: seqs[i])
    last = max(range(len(seqs)), key=lambda i: seqs[i])
    content_hash = _sha(lexical_text)
    return Chunk(
        chunk_key=_sha(f"{session_id}\x00{native_ids[first]}\x00{content_hash}")[:20],
        session_id=session_id,
        root_session_id=root,
        first_seq=seqs[first],
        last_seq=seqs[last],
        first_native_id=native_ids[first],
        last_native_id=native_ids[last],
        start_ts=stamps[0] if stamps else None,
        end_ts=stamps[-1] if stamps else None,
        embed_text=embed_text,
        lexical_text=lexical_text,
        display_text=display_text,
        embed_hash=vector_key(embed_text, requests),
        turn_count=len(window),
        requests=requests,
    )


def user_requests(window: Sequence[Turn], embed_text: str, budget: int, count: Callable[[str], int]) -> list[str]:
    """The window's user turns as the chunk's vector blends them in: each alone, role-labelled like the embed
    text and fitted to ``budget``; too short ones, repeats and one equal to the whole embed text left out."""
    out: list[str] = []
    for turn in window:
        if turn.role != "user":
            continue
        text = "\n".join(line for line in fit_to_budget([f"user: {turn.text}"], budget, count) if line)
        if len(text) >= MIN_REQUEST_CHARS and text != embed_text and text not in out:
            out.append(text)
    return out


def vector_key(embed_text: str, requests: Sequence[str]) -> str:
    """The key of a chunk's vector in the embedding cache: the text alone when nothing is blended in (such a
    vector is the same as before blending existed), else the recipe, the text and the requests."""
    if not requests:
        return _sha(embed_text)
    return _sha("\x00".join([VECTOR_RECIPE, embed_text, *requests]))
