"""Search orchestration: filters → both legs → fusion → chunks → sessions.

Rules kept as small pure functions so tests can pin them:
- ``candidate_depth``: how many chunks each leg fetches (enough that grouping still fills ``limit`` sessions
  when one long session owns many of the top chunks).
- ``session_score``: a session ranks by its best chunk, plus a small bonus for more matching chunks
  (``SECOND_CHUNK_BONUS`` × the next best chunk scores). The bonus is proportional to the chunk scores, so it
  means the same under every fusion method's scale, and it can only reorder sessions whose best chunks are close.
- ``group_by_session``: chunks are grouped by their ROOT conversation (a subagent chunk counts for its parent);
  at most ``CHUNKS_PER_SESSION`` chunks are shown per session; ties break by newer session, then session id,
  so the same query on the same data always prints the same list.
- ``excerpt``: the window of a chunk's text that covers the most query terms, so the user sees why it matched.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from wwt.errors import UsageError
from wwt.models import RESUME_IN_CWD, Filters
from wwt.store.reads import SearchStore

CHUNKS_PER_SESSION = 3
SECOND_CHUNK_BONUS = 0.0  # weight of the 2nd and 3rd best chunk scores added to the best one (0.1 until issue 13:
# on recall_dev it let a session with three middling chunks outrank the one whose best chunk answered)
MIN_DEPTH = 50
DEPTH_PER_RESULT = 5
THIN_WORDS = 12  # a chunk with fewer distinct words than this is "thin" (thin_factor)
THIN_PENALTY = 0.3  # at most this share of a thin chunk's fused score is taken off
EXCERPT_CHARS = 320

RESUME_COMMANDS = {
    # Claude Code and Gemini CLI look sessions up per project folder: run these in the session's cwd.
    "claude-code": "claude --resume {id}",
    "gemini-cli": "gemini --resume {id}",
    # Codex keeps every rollout under ~/.codex/sessions and resumes by thread id from anywhere.
    "codex-cli": "codex resume {id}",
    # Qwen Code keeps chats per project folder (~/.qwen/projects/<cwd>/chats): run it in the session's cwd.
    "qwen-code": "qwen --resume {id}",
    # Copilot CLI keeps every session under ~/.copilot/session-state and resumes by id from anywhere.
    "copilot-cli": "copilot --resume {id}",
    # OpenCode lists sessions per project: `opencode --session <id>` (-s) run in the session's folder.
    "opencode": "opencode --session {id}",
    # Aider has no per-run resume: in the repository, --restore-chat-history reloads its chat history file.
    "aider": "aider --restore-chat-history",
    # Cursor's CLI agent resumes a chat by id (editor chats open from the editor's history).
    "cursor": "cursor-agent --resume {id}",
    # Goose keeps every session in one store (~/.local/share/goose/sessions) and resumes by id from anywhere.
    "goose": "goose session --resume --session-id {id}",
    # The Cline CLI resumes a runtime session by id (`--id`), working in the folder it is started from: run it in
    # the session's cwd. Extension tasks (tasks/<ms>/) are reopened from the extension: their ids get none.
    "cline": "cline --id {id}",
}
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# The ids each agent's resume command takes (agent-log-formats.md, docs/formats-notes.md): Claude Code a UUID (the
# transcript's stem; Anthropic's SDK rejects other stems), Gemini CLI and Qwen Code the session UUID, Codex the
# thread id (a UUIDv7), Copilot CLI and Cursor's agent a UUID, OpenCode `ses_` + base62 (its Identifier), Goose
# `yyyymmdd_N` (its store) or `yyyymmdd_hhmmss` (its older JSONL files).
# Aider's command takes no id. An id of another shape came from a log we cannot vouch for: no command is offered
# for it, the hit itself still shows.
RESUME_ID_SHAPES = {"claude-code": _UUID, "gemini-cli": _UUID, "codex-cli": _UUID, "qwen-code": _UUID,
                    "copilot-cli": _UUID, "cursor": _UUID, "opencode": re.compile(r"ses_[0-9A-Za-z]{8,64}"),
                    "goose": re.compile(r"\d{8}_\d{1,6}"),
                    # Cline's runtime: `<ms>_<5 nanoid chars>` (its createRootSessionWithArtifacts)
                    "cline": re.compile(r"\d{13}_[0-9A-Za-z_-]{5}")}


class ChunkLike(Protocol):
    """What grouping needs from ``wwt.store.ChunkHit``."""

    id: int
    chunk_key: str
    session_id: str
    text: str
    start_ts: str | None
    first_seq: int
    last_seq: int
    platform: str
    project: str | None
    cwd: str | None
    git_branch: str | None
    started_at: str | None
    ended_at: str | None
    title: str | None


@dataclass
class ChunkMatch:
    chunk_id: str  # the stable chunk_key users and --json see
    text: str  # excerpt centred on the query terms
    score: float
    start_ts: str | None
    end_ts: str | None
    first_seq: int
    last_seq: int


@dataclass
class SessionHit:
    session_id: str
    platform: str
    project: str | None
    git_branch: str | None
    cwd: str | None
    started_at: str | None
    ended_at: str | None
    title: str | None
    score: float
    chunks: list[ChunkMatch] = field(default_factory=list)
    resume: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SearchOutcome:
    """Hits plus how confident the legs were. ``weak`` = neither leg found anything that stands out: the
    results are the nearest neighbours, not answers (shown, with a warning, never hidden)."""

    hits: list[SessionHit]
    weak: bool = False
    lexical_hits: int = 0
    vector_top: float | None = None
    vector_background: float | None = None
    signals: dict[str, float] = field(default_factory=dict)  # what the flag was decided from (benchmarks read it)
    absent: list[str] = field(default_factory=list)  # names in the question the archive never mentions
    words_only: str | None = None  # why the vector leg did not run (the model is not available), else None


# ---------------------------------------------------------------------------------------------- pure rules


def weak_notice(outcome: SearchOutcome) -> str:
    """What to say above results when nothing clearly answers: the names the archive never mentions, if the
    question had any (at most three, each clipped), else the general warning."""
    if outcome.absent:
        names = ", ".join(name[:40] for name in outcome.absent[:3])
        return f"nothing in memory mentions {names} — these are only the closest matches"
    return "nothing in memory clearly answers this — these are only the closest matches"


def words_only_notice(reason: str) -> str:
    """The one line above results found by words alone because the embedding model could not be loaded
    (``reason``: the model's own one-line error, clipped)."""
    from wwt.limits import clip

    return f"words only: the model is not available ({clip(reason, 200)}); run `wwt model` to see why, `wwt model --fetch` to get it"


def candidate_depth(limit: int) -> int:
    return max(MIN_DEPTH, DEPTH_PER_RESULT * limit)


def session_score(chunk_scores: Sequence[float], bonus: float | None = None) -> float:
    """Best chunk + ``bonus`` (default SECOND_CHUNK_BONUS) × (2nd + 3rd best). Empty → 0."""
    ordered = sorted(chunk_scores, reverse=True)
    if not ordered:
        return 0.0
    weight = SECOND_CHUNK_BONUS if bonus is None else bonus
    return ordered[0] + weight * sum(ordered[1:CHUNKS_PER_SESSION])


# Words about the act of remembering, not about the topic: "what did we end up choosing", "the time the …",
# "그거 결국 어떻게 정리했지". In a small archive BM25 takes them for evidence and lifts whichever session happens to
# say "decided" or "정리". Dropped from the lexical leg's query only (documents keep every word; the vector leg
# sees the whole question).
RECALL_FILLER = frozenset(
    """time times thing things stuff one ones end ended up choose choosing chose chosen pick picked picking
    decide decided deciding decision settle settled land landed remember remembered recall happened happen
    again last earlier ago before chat conversation session talked discussed final finally way get got went go
    going wouldn couldn didn doesn don won isn wasn weren
    결국 거 그거 것 일 때 그때 뭐 무엇 정리 대화 세션 날 그날 예전 지난번 기억 해결 문제 처리 하기""".split()
)


def topic_tokens(tokens: Sequence[str]) -> list[str]:
    """The query's lexical tokens without RECALL_FILLER; all of them when nothing else is left."""
    kept = [t for t in tokens if t not in RECALL_FILLER]
    return kept or list(tokens)


def bridged_query(query: str, bridge: Sequence[str]) -> str:
    """What the vector leg embeds: the query, plus the other language's words for its developer terms in
    parentheses (``wwt.glossary.translations``). The small e5 model ranks same-language passages above the right
    one; a few words of the other language pull the query vector towards it."""
    return f"{query} ({', '.join(bridge)})" if bridge else query


def resumable(platform: str, session_id: str) -> bool:
    """Does ``session_id`` have the shape ``platform``'s resume command takes? (Always, for a command that
    takes no id.)"""
    template = RESUME_COMMANDS.get(platform)
    if template is not None and "{id}" not in template:
        return True
    shape = RESUME_ID_SHAPES.get(platform)
    return bool(shape and shape.fullmatch(session_id))


def resume_command(platform: str, session_id: str) -> str | None:
    """The agent's resume command for this session; None for an agent without one or an id of the wrong
    shape. Every interpolated value is shell-quoted (a no-op for a well-formed id)."""
    template = RESUME_COMMANDS.get(platform)
    if not template or not resumable(platform, session_id):
        return None
    return template.format(id=shlex.quote(session_id))


def resume_line(platform: str, session_id: str, cwd: str | None) -> str | None:
    """``resume_command`` to paste as is: agents that find sessions per project folder (``RESUME_IN_CWD``)
    get a (quoted) ``cd`` into the session's cwd first."""
    command = resume_command(platform, session_id)
    if command and platform in RESUME_IN_CWD and cwd:
        return f"cd {shell_word(cwd)} && {command}"
    return command


def shell_word(text: str) -> str:
    """``text`` as one shell word on one line. ``shlex.quote`` keeps a newline inside its quotes, so an archived
    cwd holding one would print as two lines, the second forged by the log; such a text (any character that is
    not printable: line breaks, controls, separators) is written in ``$'…'`` quoting (bash, zsh, ksh, POSIX 2024
    sh) with every such character as an escape."""
    if text.isprintable():
        return shlex.quote(text)
    out = []
    for ch in text:
        if ch in "\\'":
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "$'" + "".join(out) + "'"


_WORD = re.compile(r"\w+")
# Words that say nothing of a chunk's subject: the chunker's role labels (``user: …``, ``assistant: …``) and
# English function words. Korean particles sit inside their words and need no list.
_EMPTY_WORDS = frozenset(
    "user assistant the a an and or but of to in on at by for from with as is are was were be been it its this "
    "that these those there here i me my we our you your he she they them do does did can could will would "
    "should please just so not no yes ok okay".split())


def thin_factor(text: str) -> float:
    """What a chunk's fused score is multiplied by for how little it says: 1 for THIN_WORDS or more distinct
    words, down to 1 − THIN_PENALTY for none. A chunk of a few generic words ("user: Hello", "user: continue",
    a placeholder) has a vector near the middle of everything, so it comes up close to any vague question and
    outranks the conversation that answers it; the words it does have still match a question that uses them.
    Role labels and function words (``_EMPTY_WORDS``) are not counted: "user: List the files user: [trimmed]"
    says three things, not eight. Stops reading at THIN_WORDS distinct words."""
    seen: set[str] = set()
    for match in _WORD.finditer(text):
        word = match.group().lower()
        if word in _EMPTY_WORDS:
            continue
        seen.add(word)
        if len(seen) >= THIN_WORDS:
            return 1.0
    return 1.0 - THIN_PENALTY * (1.0 - len(seen) / THIN_WORDS)


def demote_thin(fused: Sequence[tuple[int, float]], chunks: dict[int, Any]) -> list[tuple[int, float]]:
    """``fused`` (chunk id, score) with each score times its chunk's ``thin_factor``, best first (a chunk not in
    ``chunks`` keeps its score)."""
    scored = [(i, s * thin_factor(chunks[i].text or "") if i in chunks else s) for i, s in fused]
    return sorted(scored, key=lambda item: (-item[1], item[0]))


def group_by_session(
    fused: Sequence[tuple[int, float]],
    chunks: dict[int, ChunkLike],
    limit: int,
    terms: Sequence[str] = (),
    exclude_session_id: str | None = None,
    bonus: float | None = None,
) -> list[SessionHit]:
    """Fused (chunk id, score) pairs → at most ``limit`` sessions, best first, ≤ CHUNKS_PER_SESSION chunks each."""
    by_session: dict[str, list[tuple[float, ChunkLike]]] = {}
    for chunk_id, score in fused:
        chunk = chunks.get(chunk_id)
        if chunk is None or chunk.session_id == exclude_session_id:
            continue  # deleted since the index was read, or the caller's own session
        by_session.setdefault(chunk.session_id, []).append((float(score), chunk))

    ranked: list[tuple[float, str, str, list[tuple[float, ChunkLike]]]] = []
    for session_id, scored in by_session.items():
        scored.sort(key=lambda pair: (-pair[0], pair[1].first_seq, pair[1].chunk_key))
        started = scored[0][1].started_at or ""
        ranked.append((session_score([s for s, _ in scored], bonus), started, session_id, scored))
    # score desc, then newer session first, then session id: deterministic for equal scores. Three stable
    # sorts, least significant key first (one sort with a descending-string key cost ~0.7 ms a search).
    ranked.sort(key=lambda row: row[2])
    ranked.sort(key=lambda row: row[1], reverse=True)
    ranked.sort(key=lambda row: -row[0])

    hits = []
    for score, _started, session_id, scored in ranked[:limit]:
        first = scored[0][1]
        hits.append(
            SessionHit(
                session_id=session_id,
                platform=first.platform,
                project=first.project,
                git_branch=first.git_branch,
                cwd=first.cwd,
                started_at=first.started_at,
                ended_at=first.ended_at,
                title=first.title,
                score=round(score, 6),
                chunks=[
                    ChunkMatch(
                        chunk_id=chunk.chunk_key,
                        text=excerpt(chunk.text, terms),
                        score=round(chunk_score, 6),
                        start_ts=chunk.start_ts,
                        end_ts=getattr(chunk, "end_ts", None),
                        first_seq=chunk.first_seq,
                        last_seq=chunk.last_seq,
                    )
                    for chunk_score, chunk in scored[:CHUNKS_PER_SESSION]
                ],
                resume=resume_command(first.platform, session_id),
            )
        )
    return hits


_WORD = re.compile(r"[\w][\w.\-/:]*[\w]|[\w]", re.UNICODE)


def query_terms(query: str, extra: Sequence[str] = ()) -> list[str]:
    """Lower-cased terms to highlight: the query's words, their identifier parts, and ``extra`` (e.g. the
    lexical tokenizer's morphemes, so 데이터베이스를 finds 데이터베이스). Longest first, no duplicates."""
    found: list[str] = []
    for word in _WORD.findall(query):
        found.append(word)
        found.extend(part for part in re.split(r"[^\w]+|_", word) if part)
    found.extend(extra)
    terms = {t.lower() for t in found if len(t) >= 2}
    return sorted(terms, key=lambda t: (-len(t), t))


def excerpt(text: str, terms: Sequence[str], width: int = EXCERPT_CHARS) -> str:
    """About ``width`` terminal cells of text (a Hangul/Han character takes two) covering as many distinct query
    terms as possible (longer terms count more: they are rarer). Falls back to the start of the text when no
    term occurs."""
    flat = " ".join(text.split())
    if len(flat) <= width and _cells(flat) <= width:
        return flat
    # in characters, at the average character width of the text's opening (a long tool output would cost
    # milliseconds per hit to measure whole)
    sample = flat[: 4 * width]
    width = max(40, width * len(sample) // _cells(sample))
    lower = flat.lower()
    hits: list[tuple[int, str]] = []
    for term in terms:
        start = lower.find(term)
        while start != -1 and len(hits) < 400:
            hits.append((start, term))
            start = lower.find(term, start + len(term))
    if not hits:
        return _cut(flat, 0, width)
    hits.sort()
    best_start, best_value = 0, -1.0
    for anchor, _ in hits:
        window_start = max(0, anchor - width // 4)
        window_end = window_start + width
        covered = {t for pos, t in hits if window_start <= pos and pos + len(t) <= window_end}
        value = sum(len(t) for t in covered)
        if value > best_value:
            best_start, best_value = window_start, value
    return _cut(flat, best_start, width)


# East Asian Wide/Fullwidth blocks (Hangul, CJK, kana, fullwidth forms, emoji): two terminal cells each.
# Ranges rather than unicodedata per character: this runs on every hit of every search.
_WIDE = re.compile(
    "[\u1100-\u115f\u231a\u231b\u2329\u232a\u23e9-\u23ec\u23f0\u23f3\u25fd\u25fe\u2614\u2615"
    "\u2648-\u2653\u267f\u2693\u26a1\u26aa\u26ab\u26bd\u26be\u26c4\u26c5\u26ce\u26d4\u26ea"
    "\u26f2\u26f3\u26f5\u26fa\u26fd\u2705\u270a\u270b\u2728\u274c\u274e\u2753-\u2755\u2757"
    "\u2795-\u2797\u27b0\u27bf\u2b1b\u2b1c\u2b50\u2b55\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf"
    "\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f"
    "\uff00-\uff60\uffe0-\uffe6"
    "\\U0001f004\\U0001f02c-\\U0001f02f\\U0001f094-\\U0001f09f\\U0001f0af-\\U0001f0b0\\U0001f0c0"
    "\\U0001f0cf-\\U0001f0d0\\U0001f0f6-\\U0001f0ff\\U0001f18e\\U0001f191-\\U0001f19a\\U0001f1ae-\\U0001f1e5"
    "\\U0001f200-\\U0001f320\\U0001f32d-\\U0001f335\\U0001f337-\\U0001f37c\\U0001f37e-\\U0001f393\\U0001f3a0-\\U0001f3ca"
    "\\U0001f3cf-\\U0001f3d3\\U0001f3e0-\\U0001f3f0\\U0001f3f4\\U0001f3f8-\\U0001f43e\\U0001f440"
    "\\U0001f442-\\U0001f4fc\\U0001f4ff-\\U0001f53d\\U0001f54b-\\U0001f54e\\U0001f550-\\U0001f567\\U0001f57a"
    "\\U0001f595-\\U0001f596\\U0001f5a4\\U0001f5fb-\\U0001f64f\\U0001f680-\\U0001f6c5\\U0001f6cc"
    "\\U0001f6d0-\\U0001f6d2\\U0001f6d5-\\U0001f6df\\U0001f6eb-\\U0001f6ef\\U0001f6f4-\\U0001f6ff\\U0001f774-\\U0001f77f"
    "\\U0001f7d9-\\U0001f7ff\\U0001f80c-\\U0001f80f\\U0001f848-\\U0001f84f\\U0001f85a-\\U0001f85f\\U0001f888-\\U0001f88f"
    "\\U0001f8ae-\\U0001f8af\\U0001f8b2-\\U0001f8ff\\U0001f90c-\\U0001f93a\\U0001f93c-\\U0001f945\\U0001f947-\\U0001f9ff"
    "\\U0001fa54-\\U0001fa5f\\U0001fa6e-\\U0001faff"
    "\U00020000-\U0003fffd]"
)


def _cells(text: str) -> int:
    return len(text) if text.isascii() else len(text) + len(_WIDE.findall(text))


def _cut(flat: str, start: int, width: int) -> str:
    start = min(start, max(0, len(flat) - width))
    end = min(len(flat), start + width)
    if start > 0:
        space = flat.find(" ", start, start + 20)
        start = space + 1 if space != -1 else start
    if end < len(flat):
        space = flat.rfind(" ", end - 20, end)
        end = space if space > start else end
    return ("…" if start > 0 else "") + flat[start:end] + ("…" if end < len(flat) else "")


def legs_agree(lexical: Sequence[tuple[int, float]], vector: Sequence[tuple[int, float]], chunks: dict[int, Any]) -> bool:
    """Whether both legs' best chunks belong to the same session (an empty leg never agrees)."""
    if not lexical or not vector:
        return False
    best_lexical = chunks.get(max(lexical, key=lambda item: (item[1], -item[0]))[0])
    best_vector = chunks.get(max(vector, key=lambda item: (item[1], -item[0]))[0])
    return best_lexical is not None and best_vector is not None and best_lexical.session_id == best_vector.session_id


def lexically_unmatched(term_hits: dict[str, int]) -> bool:
    """True when most of the query's terms occur nowhere in scope: the lexical leg matched, at best, the
    query's filler words ("how", "best", "values") and not what the query is about. No terms → True."""
    if not term_hits:
        return True
    missing = sum(1 for hits in term_hits.values() if hits == 0)
    return missing * 2 > len(term_hits)


def is_weak(unmatched: bool, vector_scores: Sequence[float]) -> tuple[bool, float | None, float | None]:
    """"Nothing in memory answers this": the lexical leg missed most query terms AND the best vector
    similarity does not stand out from the query's own background (the median of its candidates) by
    WEAK_GAP. e5 similarities sit in a narrow band (~0.75-0.95), so only the gap is meaningful."""
    if not vector_scores:
        return unmatched, None, None
    ordered = sorted(vector_scores, reverse=True)
    top = ordered[0]
    background = ordered[len(ordered) // 2]
    if len(ordered) < WEAK_MIN_CANDIDATES:  # a new, tiny archive has no background to stand out from
        return False, top, background
    return unmatched and (top - background) < WEAK_GAP, top, background


def unseen_share(doc_freqs: dict[str, int], total: int) -> float:
    """Share of the query's information (BM25 idf) carried by terms that occur nowhere in the archive. A
    paraphrase loses only common words (low idf even when present elsewhere); a question about something the
    archive never discussed loses its rare, telling ones. No terms → 0."""
    from wwt.fusion import bm25_idf

    if not doc_freqs or total <= 0:
        return 0.0
    weights = {term: bm25_idf(df, total) for term, df in doc_freqs.items()}
    whole = sum(weights.values())
    return sum(w for term, w in weights.items() if doc_freqs[term] == 0) / whole if whole else 0.0


def unseen_names(doc_freqs: dict[str, int]) -> int:
    """Latin-script query terms (tool, product and library names, even inside a Korean question) that occur
    nowhere in the archive."""
    return sum(1 for term, df in doc_freqs.items() if df == 0 and term.isascii() and term[:1].isalpha())


_NAME_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:[._+#/-][A-Za-z0-9_]+)*(?:\+\+|#)?")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_KOREAN_WORD = re.compile(r"[\uac00-\ud7a3]+")


def name_words(query: str) -> list[str]:
    """Words in the question that name one specific thing — a product, library, protocol or acronym: what a user
    does not paraphrase (nobody calls Kafka "the message thing" and then expects a Kafka session). A word is a
    name when the developer-name list knows it (any case, either language), when it is written like one
    (GraphQL, iOS, CockroachDB, SAML, e5, xterm.js, c++ — a lowercase hyphenated word like "sign-outs" is not),
    when it is capitalised anywhere but the question's
    first word, or when it is Latin script inside a Korean question (HPA, PDF, CI)."""
    from wwt.glossary import known_names

    known = known_names()
    korean = bool(_HANGUL.search(query))
    first = _NAME_WORD.search(query)
    names: list[str] = []
    for match in _NAME_WORD.finditer(query):
        word = match.group()
        lower = word.lower()
        if len(lower) < 2 or lower in _NAME_STOP:
            continue
        capitalised = word[0].isupper() and first is not None and match.start() != first.start()
        written_as_name = (
            any(c.isupper() for c in word[1:])
            or any(c.isdigit() for c in word)
            or any(c in "._+#/" for c in word)  # also snake_case
        )
        if lower in RECALL_FILLER and not (capitalised or written_as_name):
            continue  # "did we go with …" — but "which Go version"
        if lower in known or korean or capitalised or written_as_name:
            names.append(word)
    for word in _KOREAN_WORD.findall(query):  # the word, or a name followed by a particle: 카프카에서, 레디스를
        names.extend(word[:cut] for cut in range(2, len(word) + 1) if word[:cut] in known)
    return list(dict.fromkeys(names))[:MAX_TERMS_CHECKED]


_NAME_STOP = frozenset({"i", "im", "ive", "id", "ok", "okay", "pr", "vs", "etc", "eg", "ie", "e.g", "i.e", "a.k.a"})


def said_anywhere(word: str, seen: Callable[[str], bool]) -> bool:
    """Does ``word`` occur in the archive under any spelling? ``seen`` answers for one spelling (its lexical
    token), tried for the word, its other spellings (``glossary.spellings``: k8s → kubernetes, 쿠버네티스) and its
    singular."""
    from wwt.glossary import spellings

    forms = [word, *spellings(word)]
    if word.lower().endswith("s") and len(word) > 3:
        forms.append(word[:-1])
    return any(seen(form) for form in forms)


def unseen_name_words(names: Sequence[str], seen: Callable[[str], bool]) -> list[str]:
    """The names (``name_words``) that occur nowhere in the archive under any spelling (``said_anywhere``)."""
    return [name for name in names if not said_anywhere(name, seen)]


def unsaid_topics(found: Sequence[tuple[str, ...]], seen: Callable[[str], bool]) -> list[str]:
    """The topic terms (``wwt.glossary.topics``: each the query's word and its other spellings) of which the
    archive says no spelling: the question's own word for each."""
    return [spelled[0] for spelled in found if not any(seen(form) for form in spelled)]


def telling_words(tokens: Sequence[str], korean_chunks: int | None, chunks: int) -> list[str]:
    """The tokens whose absence from the archive says something: those of a language the archive holds a fair
    amount of — at least LANGUAGE_MIN_SHARE of its chunks, or GAP_MIN_CHUNKS of them (a Hangul token: the chunks
    that are Korean, ``wwt.language_axis.is_korean``; any other: the rest). A Korean question over an archive of
    English sessions misses its everyday words (하루, 사람, 바꾸) because the archive holds almost no Korean, not
    because it never discussed the topic: the same holds for the question's lexical misses (``is_weak``) and its
    vocabulary gap (``never_said``); a word that is not telling still counts when it was said. Languages unknown (``korean_chunks`` None, or no vectors yet): every token."""
    if korean_chunks is None or chunks <= 0:
        return list(tokens)
    floor = min(LANGUAGE_MIN_SHARE * chunks, GAP_MIN_CHUNKS)
    english_chunks = chunks - korean_chunks
    return [t for t in tokens if (korean_chunks if _HANGUL.search(t) else english_chunks) >= floor]


def vocabulary_gap(tokens: Sequence[str], seen: Callable[[str], bool]) -> float:
    """Share of the question's topic tokens that occur nowhere in the archive in either language
    (``said_anywhere``). 0 for no tokens."""
    distinct = list(dict.fromkeys(tokens))
    if not distinct:
        return 0.0
    return sum(not said_anywhere(token, seen) for token in distinct) / len(distinct)


def never_said(gap: float, distinct_tokens: int, chunks: int) -> bool:
    """"Nothing relevant", third rule: most of a question's topic words (≥ GAP_SHARE of at least GAP_MIN_TOKENS)
    were never said in this archive in either language — in an archive of GAP_MIN_CHUNKS or more: in a smaller
    one, everyday words a paraphrase uses are missing too, and their absence says little. Not one of them said
    is enough once the archive holds more than a handful of sessions (NONE_SAID_MIN_CHUNKS): a paraphrase still
    shares some word with its session."""
    if distinct_tokens < GAP_MIN_TOKENS:
        return False
    return (chunks >= GAP_MIN_CHUNKS and gap >= GAP_SHARE) or (chunks >= NONE_SAID_MIN_CHUNKS and gap >= 1.0)


GAP_SHARE = 0.6
LANGUAGE_MIN_SHARE = 0.1  # telling_words: Korean held 24 % of the dev archive's chunks, 1 % of one with 1,200
# English docstrings added (where Korean paraphrases were flagged for their everyday words: issue 24)
GAP_MIN_TOKENS = 3
GAP_MIN_CHUNKS = 1000
NONE_SAID_MIN_CHUNKS = 50
WEAK_GAP = 0.03  # benchmarks/weak_signal.py (28-chunk fixture corpus): 2/6 off-topic flagged, 0/8 false alarms
WEAK_MIN_CANDIDATES = 5  # fewer vector candidates than this: no warning (nothing to compare the best with)
MAX_TERMS_CHECKED = 12


def term_hits(lexical: _Lexical, terms: Sequence[str], filters: Filters) -> dict[str, int]:
    """How many chunks in scope (capped at 2) each of the first MAX_TERMS_CHECKED query terms occurs in."""
    return lexical.term_hits(list(dict.fromkeys(terms))[:MAX_TERMS_CHECKED], filters, 2)


# ---------------------------------------------------------------------------------------------- orchestration


def _in_archive(lexical: Any, tokenize: Callable[[str], list[str]], form: str) -> bool:
    """Does ``form`` occur anywhere in the archive? A Latin identifier by its whole token (xterm.js, not js); a
    Korean word, or a phrase of several words (shipping fee), by every token it makes."""
    tokens = tokenize(form)
    if not tokens:
        return True  # nothing to look up: never evidence of absence
    wanted = tokens[:1] if form.isascii() and " " not in form.strip() else tokens
    return all(count > 0 for count in lexical.doc_freqs(wanted).values())


LANGUAGE_WINDOW = 4  # a bilingual archive: the vector leg first reads this × its depth, uncorrected


def vector_leg(
    vector: Any, query_vector: Any, depth: int, allowed: set[int] | None, weight: float
) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    """The vector leg's best ``depth`` chunks as scored (the "nothing relevant" check reads them) and as fusion
    sees them: corrected for language (``wwt.language_axis``, ``weight`` by the question's language) when the
    archive is bilingual — exactly, not within a window.

    The correction moves every Korean chunk's score by one amount, so any chunk past the uncorrected best
    LANGUAGE_WINDOW × ``depth`` (all scoring at most the last of them) can only come back in by its language's
    shift — the language the shift lifts: when that bound beats the corrected ``depth``-th best, its own best
    ``depth`` are fetched too (``search(korean=…)``). Until 2026-12-06 the window alone was re-scored: once a few hundred Korean chunks
    outscored an English answer before the correction, a Korean question could no longer find it (issue 29;
    benchmarks/vector_leg.py). An English question (weight 0) still reads the window alone."""
    axis = getattr(vector, "language_axis", None)
    if axis is None:
        hits = vector.search(query_vector, depth, allowed)
        return hits, hits
    from wwt.language_axis import korean_shift

    asked = depth * LANGUAGE_WINDOW
    found = vector.search(query_vector, asked, allowed)
    shift = korean_shift(query_vector, axis, weight)
    ranked = vector.neutralise(found, query_vector, weight=weight)
    if shift and len(found) >= asked:  # else the window already holds every chunk in scope
        # only the language the shift lifts can come back: every chunk of the window is corrected to at least the
        # other language's best outside it (the window's last raw score, moved as that language is)
        lifted = shift < 0  # a negative shift lifts the Korean chunks
        floor = found[-1][1]
        if (floor - shift if lifted else floor) > ranked[depth - 1][1]:
            held = {i for i, _ in found}
            found = found + [hit for hit in vector.search(query_vector, depth, allowed, korean=lifted)
                             if hit[0] not in held]
            ranked = vector.neutralise(found, query_vector, weight=weight)
    return found[:depth], ranked[:depth]


def _stand_ins(lexical_hits: list[tuple[int, float]], vector_hits: list[tuple[int, float]], vector: Any) -> list:
    """While vectors are back-filled, lexical hits without one get a fair vector-leg score (wwt.fusion)."""
    from wwt.fusion import stand_in_vector_scores

    missing = getattr(vector, "missing", None)
    if missing is None or not lexical_hits or not vector_hits:
        return []
    return stand_in_vector_scores(lexical_hits, vector_hits, set(missing([i for i, _ in lexical_hits])))


class _Lexical(Protocol):
    def search(self, query: str, filters: Filters, limit: int) -> list[tuple[int, float]]: ...

    def search_tokens(self, tokens: list[str], filters: Filters, limit: int) -> list[tuple[int, float]]: ...

    def term_hits(self, terms: Sequence[str], filters: Filters, cap: int) -> dict[str, int]: ...


class _Vector(Protocol):
    def search(
        self, vector: Any, k: int, allowed: set[int] | None, korean: bool | None = None
    ) -> list[tuple[int, float]]: ...

    def count(self) -> int: ...


class SearchBackend(Protocol):
    """Where ``run_search``'s two legs and the chunks they name come from: the local archive (the SQLite
    ``Store`` + ``Indexes.lexical``/``Indexes.vector``) or a team server (``wwt.team.backend.TeamBackend``). The
    ranking — fusion, grouping, the "nothing relevant" flag — is the same code for both."""

    store: SearchStore
    lexical: _Lexical
    vector: _Vector


def run_search(
    query: str,
    filters: Filters,
    limit: int,
    *,
    store: SearchStore,
    lexical: _Lexical,
    vector: _Vector,
    embed_query: Callable[[str], Any],
    tokenize: Callable[[str], list[str]] | None = None,
    method: str | None = None,
) -> SearchOutcome:
    """Both legs over the same filters, fused, grouped. ``store``: what the legs need from storage
    (``wwt.store.SearchStore``: the local ``Store``, or another backend). ``embed_query``
    returning None (no model) leaves the vector leg out: the lexical leg alone ranks, every hit on the same
    footing."""
    from wwt.fusion import DEFAULT_METHOD, fuse, idf_mass, lexical_coverage
    from wwt.glossary import EXPANSION_WEIGHT, topics, translations

    query = query.strip()
    if not query:
        raise UsageError("empty query: say what you are looking for")
    if limit < 1:
        raise UsageError("--limit must be at least 1")

    allowed = store.chunk_ids_matching(filters)
    if allowed is not None and not allowed:
        return SearchOutcome(hits=[], weak=True)
    depth = candidate_depth(limit)

    bridge = translations(query)
    vector_hits: list[tuple[int, float]] = []
    ranked_vector: list[tuple[int, float]] = []  # what fusion sees: scores without the language's own share
    query_vector = embed_query(bridged_query(query, bridge)) if vector.count() > 0 else None
    if query_vector is not None:
        from wwt.language_axis import question_weight

        vector_hits, ranked_vector = vector_leg(vector, query_vector, depth, allowed, question_weight(query))
    query_tokens = topic_tokens(tokenize(query)) if tokenize is not None else []
    # each translation alone, as the "nothing relevant" checks look words up: its tokens are then Kiwi's recorded
    # ones (wwt.known_tokens) and an English question needs no Kiwi, whose load was most of a cold search
    bridge_tokens = [token for form in bridge for token in tokenize(form)] if tokenize is not None else []
    if tokenize is not None:
        lexical_hits = lexical.search_tokens(
            query_tokens, filters, depth, extra=bridge_tokens, extra_weight=EXPANSION_WEIGHT
        )
    else:
        lexical_hits = lexical.search(query, filters, depth)
    if allowed is not None:  # belt and braces: never show a chunk outside the scope
        lexical_hits = [(i, s) for i, s in lexical_hits if i in allowed]
        vector_hits = [(i, s) for i, s in vector_hits if i in allowed]
        ranked_vector = [(i, s) for i, s in ranked_vector if i in allowed]

    freqs = lexical.doc_freqs(query_tokens) if query_tokens and hasattr(lexical, "doc_freqs") else {}
    total = lexical.count() if freqs else 0
    chosen = method or DEFAULT_METHOD
    fusable = ranked_vector + _stand_ins(lexical_hits, ranked_vector, vector)  # vectors still being back-filled
    if query_vector is None:  # no vector leg at all (no model, or no vector yet): the lexical leg alone ranks
        fused = fuse(lexical_hits, [], method="weighted_minmax", w_lex=1.0)
    elif chosen == "adaptive":
        fused = fuse(lexical_hits, fusable, method=chosen, idf_mass=idf_mass(freqs, total) if freqs else None)
    else:
        fused = fuse(lexical_hits, fusable, method=chosen)
    rows = store.chunks_by_ids([chunk_id for chunk_id, _ in fused])
    chunks = {row.id: row for row in rows}
    fused = demote_thin(fused, chunks)
    hits = group_by_session(
        fused,
        chunks,
        limit,
        query_terms(query, [*query_tokens, *bridge_tokens]),
        exclude_session_id=filters.exclude_session_id,
    )
    tokens = list(query_tokens) if query_tokens else query_terms(query)
    korean_chunks = vector.korean_count() if hasattr(vector, "korean_count") else None
    telling = set(telling_words(tokens, korean_chunks, vector.count()))  # words whose miss is evidence
    if lexical_hits:
        found = {term: n for term, n in term_hits(lexical, tokens, filters).items() if n or term in telling}
        unmatched = lexically_unmatched(found) if found or not tokens else False
    else:
        found, unmatched = {}, bool(telling) or not tokens
    weak, top, background = is_weak(unmatched, [s for _, s in vector_hits])
    signals = {
        "vector_top": top if top is not None else 0.0,
        "vector_gap": (top - background) if top is not None and background is not None else 0.0,
        "coverage": lexical_coverage(lexical_hits, idf_mass(freqs, total)) if freqs else 0.0,
        "unseen": unseen_share(freqs, total) if freqs else 0.0,
        "names": float(unseen_names(freqs)),
        "agree": float(legs_agree(lexical_hits, vector_hits, chunks)),
        "missing": (sum(1 for n in found.values() if n == 0) / len(found)) if found else 1.0,
        "fused_top": fused[0][1] if fused else 0.0,
        "chunks": float(vector.count()),
    }
    if tokenize is not None and hasattr(lexical, "doc_freqs"):
        answers: dict[str, bool] = {}  # names and topic words share spellings: each is looked up once

        def seen(form: str) -> bool:
            if form not in answers:
                answers[form] = _in_archive(lexical, tokenize, form)
            return answers[form]

        missing_names = unseen_name_words(name_words(query), seen)
        signals["names_unseen"] = float(len(missing_names))
        missing_topics = unsaid_topics(topics(query)[:MAX_TERMS_CHECKED], seen)  # a bounded cost per question
        signals["topics_unseen"] = float(len(missing_topics))
        missing_names += [word for word in missing_topics if word not in missing_names]
        telling = set(telling_words(query_tokens, korean_chunks, int(signals["chunks"])))
        counted = [t for t in query_tokens if t in telling or said_anywhere(t, seen)]  # a said word always counts
        gap = vocabulary_gap(counted, seen)
        signals["vocabulary_gap"] = gap
        said_little = never_said(gap, len(set(counted)), int(signals["chunks"]))
        signals["is_weak"], signals["never_said"] = float(weak), float(said_little)  # which rule fired
        weak = weak or bool(missing_names) or said_little
    else:
        missing_names = []
    return SearchOutcome(
        hits=hits, weak=weak, lexical_hits=len(lexical_hits), vector_top=top, vector_background=background,
        signals=signals, absent=missing_names,
    )
