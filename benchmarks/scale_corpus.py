"""Synthetic agent-log corpus for the scale benchmark, and a store built from it through the real ingest path.

    python benchmarks/scale_corpus.py --chunks 100000 --home benchmarks/.work/scale/home

What is real and what is not:

* Files are Claude Code / Codex CLI / Gemini CLI JSONL in the shapes of the real fixtures
  (``../shared/fixtures/real``), with fresh session ids, 12 projects, several branches and dates spread over a
  year. Turn text is KorQuAD 1.0 dev questions (user) and paragraph excerpts (assistant) mixed with real fixture
  user/assistant texts, real fixture tool calls/results, and a few rare identifiers (``ERR_SCALE_0042``-style) so
  exact-identifier queries have a needle to find.
* Chunks come from the real parsers and chunker (``wwt.parsers.parse_file`` + ``wwt.chunker.chunk_session``),
  and the store/indexes are built by the real ``Memory.ingest`` (SQLite + tantivy/Kiwi + hnswlib).
* Vectors are NOT computed per chunk: embedding 100k chunks with the int8 model on 2 shared cores takes hours.
  Each chunk's vector is the normalised mean of the REAL e5 embeddings of the units its turns were drawn from
  (a KorQuAD paragraph — also used for the questions about it — or a fixture text), plus small Gaussian
  noise, written into the store's embedding cache (``Store.put_vectors``, keyed by the chunk's real
  ``embed_hash``) before ingest, so ingest finds every vector cached and never calls the model. Query vectors at
  search time are real.

The corpus is deterministic for a given ``--chunks``/``--seed``; a marker file makes re-runs skip finished steps.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
from _shared import REAL_FIXTURES, model_key  # noqa: E402
from retrieval_korquad import load_korquad  # noqa: E402  (same passage order: its cached vectors are reused)

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
SCALE_WORK = WORK / "scale"
FIXTURES = REAL_FIXTURES
DIM = 384
NOISE_SIGMA = 0.01  # per dimension: ~0.2 in norm before normalising, cosine to the clean mean ~0.98

PROJECTS = (
    "payments-api", "web-dashboard", "ml-pipeline", "infra-terraform", "mobile-app", "data-warehouse",
    "auth-service", "search-engine", "docs-site", "cli-tools", "game-server", "etl-jobs",
)
BRANCHES = ("main", "main", "main", "develop", "feature/login", "feature/search", "fix/timeout", "release/2.1")
PLATFORM_WEIGHTS = (("claude-code", 0.6), ("codex-cli", 0.25), ("gemini-cli", 0.15))
YEAR_START = datetime(2025, 12, 1, tzinfo=timezone.utc)
IDENT_PREFIXES = ("ERR_SCALE_", "scale_handler_", "ScaleWidget", "SCALE-TICKET-")
MIXED_TEMPLATES = (
    "{ident} 에러가 계속 나요. 원인이 뭘까요?",
    "{ident} 함수 리팩터링 해줘",
    "why does {ident} fail on the staging server?",
    "{ident} 관련 테스트 추가하고 CI 통과시켜줘",
    "rename {ident} and update every caller",
)


# ------------------------------------------------------------------------------------------ units


@dataclass
class Units:
    """Text pools a session draws turns from; each unit knows which base vector stands for it."""

    paragraphs: list[str]  # KorQuAD contexts (base vector i = paragraph i)
    questions: list[tuple[str, int]]  # (question, paragraph index)
    fixture_user: list[str]
    fixture_assistant: list[str]
    tool_calls: list[tuple[str, str]]  # (tool name, input text)
    tool_results: list[str]
    fixture_texts: list[str] = field(default_factory=list)  # user + assistant, base vector P + i

    def __post_init__(self) -> None:
        self.fixture_texts = self.fixture_user + self.fixture_assistant


def load_units(fixture_root: Path = FIXTURES, max_fixture_texts: int = 240) -> Units:
    from wwt.parsers import parse_file

    paragraphs, questions = load_korquad()
    user: dict[str, None] = {}
    assistant: dict[str, None] = {}
    calls: dict[tuple[str, str], None] = {}
    results: dict[str, None] = {}
    for path in sorted(fixture_root.rglob("*.json*")):
        sessions, _ = parse_file(path)
        for session in sessions:
            for m in session.messages:
                text = m.text.strip()
                if not text:
                    continue
                if m.kind == "text" and 40 <= len(text) <= 1200 and "```" not in text:
                    (user if m.role == "user" else assistant)[text] = None
                elif m.kind == "tool_call" and m.tool_name:
                    calls[(m.tool_name, text[:300])] = None
                elif m.kind == "tool_result":
                    results[text[:400]] = None
    half = max_fixture_texts // 2
    return Units(
        paragraphs=paragraphs,
        questions=questions,
        fixture_user=list(user)[:half],
        fixture_assistant=list(assistant)[:half],
        tool_calls=list(calls)[:300],
        tool_results=list(results)[:300],
    )


def base_vectors(units: Units) -> np.ndarray:
    """Real e5 passage vectors: KorQuAD paragraphs (reused from retrieval_korquad's cache when present), then
    fixture texts; rows = len(paragraphs) + len(fixture_texts)."""
    from wwt.embedder import load_embedder

    embedder = None
    key = model_key()
    out = []
    for name, texts in (("paragraphs", units.paragraphs), ("fixtures", units.fixture_texts)):
        digest = hashlib.sha256(("\x00".join(texts) + "\x01" + key).encode("utf-8")).hexdigest()[:16]
        shared = WORK / f"korquad-passages-e5-{digest}.npy"  # retrieval_korquad.py's file for the same texts
        own = SCALE_WORK / f"base-{name}-{digest}.npy"
        path = shared if shared.exists() else own
        if not path.exists():
            embedder = embedder or load_embedder()
            started = time.perf_counter()
            vectors = np.concatenate(
                [embedder.embed_passages(texts[i : i + 16], batch_size=16) for i in range(0, len(texts), 16)]
            ).astype(np.float32)
            print(f"  embedded {len(texts)} base {name} in {time.perf_counter() - started:.0f}s", file=sys.stderr)
            own.parent.mkdir(parents=True, exist_ok=True)
            np.save(own, vectors)
            path = own
        out.append(np.load(path))
    return np.concatenate(out)


# ------------------------------------------------------------------------------------------ generation


@dataclass
class Turn:
    role: str
    text: str
    tool: tuple[str, str, str] | None = None  # (name, input, result) run after an assistant turn


def predicted_chunks(n_turns: int) -> int:
    from wwt.chunker import window_spans

    return len(window_spans(n_turns)) if n_turns >= 2 else 0


def make_session_turns(rng: random.Random, units: Units, n_turns: int, ident: str | None) -> list[Turn]:
    """Alternating user/assistant turns around one topic paragraph per few turns (a conversation drifts)."""
    turns: list[Turn] = []
    para = rng.randrange(len(units.paragraphs))
    for i in range(n_turns):
        if i % 6 == 0 and rng.random() < 0.6:
            para = rng.randrange(len(units.paragraphs))
        if i % 2 == 0:  # user
            r = rng.random()
            if ident and r < 0.08:
                text = rng.choice(MIXED_TEMPLATES).format(ident=ident)
            elif r < 0.6:
                qs = _questions_for(units, para)
                text = rng.choice(qs) if qs else units.paragraphs[para][:80]
            else:
                text = rng.choice(units.fixture_user)
            turns.append(Turn("user", text))
        else:
            if rng.random() < 0.6:
                text = rng.choice(paragraph_excerpts(units, para))
            else:
                text = rng.choice(units.fixture_assistant)
            if ident and rng.random() < 0.05:
                text += f"\n`{ident}` 를 수정했습니다."
            tool = None
            if rng.random() < 0.3:
                name, arg = rng.choice(units.tool_calls)
                tool = (name, arg, rng.choice(units.tool_results))
            turns.append(Turn("assistant", text, tool))
    return turns


_QUESTIONS_BY_PARA: dict[int, list[str]] = {}
_EXCERPTS: dict[int, list[str]] = {}


def paragraph_excerpts(units: Units, para: int) -> list[str]:
    """Two or three consecutive sentences of a paragraph (≤ 400 chars): what an assistant turn quotes."""
    if para not in _EXCERPTS:
        sentences = [s.strip() for s in re.split(r"(?<=[.?!])\s+", units.paragraphs[para]) if s.strip()]
        found = []
        for i in range(len(sentences)):
            for n in (2, 3):
                piece = " ".join(sentences[i : i + n])[:400]
                if len(piece) >= 60:
                    found.append(piece)
        _EXCERPTS[para] = list(dict.fromkeys(found)) or [units.paragraphs[para][:400]]
    return _EXCERPTS[para]


def _questions_for(units: Units, para: int) -> list[str]:
    if not _QUESTIONS_BY_PARA:
        for q, p in units.questions:
            _QUESTIONS_BY_PARA.setdefault(p, []).append(q)
    return _QUESTIONS_BY_PARA.get(para, [])


def _ts(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def claude_lines(sid: str, cwd: str, branch: str, start: datetime, turns: Sequence[Turn], rng: random.Random) -> Iterator[dict]:
    base = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": sid, "version": "2.0.9",
            "gitBranch": branch}
    parent = None
    t = start

    def line(kind: str, message: dict) -> dict:
        nonlocal parent, t
        t += timedelta(seconds=rng.randint(5, 90))
        u = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        obj = {"parentUuid": parent, **base, "type": kind, "message": message, "uuid": u, "timestamp": _ts(t)}
        if kind == "assistant":
            obj["requestId"] = "req_" + u.replace("-", "")[:24]
        parent = u
        return obj

    for turn in turns:
        if turn.role == "user":
            yield line("user", {"role": "user", "content": turn.text})
            continue
        msg_id = "msg_" + format(rng.getrandbits(96), "024x")
        yield line("assistant", {"id": msg_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                                 "content": [{"type": "text", "text": turn.text}]})
        if turn.tool:
            name, arg, result = turn.tool
            tool_id = "toolu_" + format(rng.getrandbits(96), "024x")
            yield line("assistant", {"id": msg_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                                     "content": [{"type": "tool_use", "id": tool_id, "name": name,
                                                  "input": {"command": arg}}]})
            yield line("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id,
                                                             "content": result}]})


def codex_lines(sid: str, cwd: str, branch: str, start: datetime, turns: Sequence[Turn], rng: random.Random) -> Iterator[dict]:
    t = start
    yield {"timestamp": _ts(t), "type": "session_meta",
           "payload": {"id": sid, "timestamp": _ts(t), "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.89.0",
                       "source": "cli", "model_provider": "openai",
                       "git": {"branch": branch, "commit_hash": format(rng.getrandbits(160), "040x")}}}
    for turn in turns:
        t += timedelta(seconds=rng.randint(5, 90))
        if turn.role == "user":
            yield {"timestamp": _ts(t), "type": "response_item",
                   "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": turn.text}]}}
            yield {"timestamp": _ts(t), "type": "event_msg",
                   "payload": {"type": "user_message", "message": turn.text, "images": []}}
            continue
        if turn.tool:
            name, arg, result = turn.tool
            call_id = "call_" + format(rng.getrandbits(96), "024x")
            yield {"timestamp": _ts(t), "type": "response_item",
                   "payload": {"type": "function_call", "name": "exec_command", "arguments": json.dumps({"cmd": arg}),
                               "call_id": call_id}}
            yield {"timestamp": _ts(t), "type": "response_item",
                   "payload": {"type": "function_call_output", "call_id": call_id, "output": result}}
        yield {"timestamp": _ts(t), "type": "response_item",
               "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": turn.text}]}}
        yield {"timestamp": _ts(t), "type": "event_msg", "payload": {"type": "agent_message", "message": turn.text}}


def gemini_lines(sid: str, cwd: str, start: datetime, turns: Sequence[Turn], rng: random.Random) -> Iterator[dict]:
    t = start
    yield {"sessionId": sid, "projectHash": hashlib.sha256(cwd.encode()).hexdigest(), "startTime": _ts(t),
           "lastUpdated": _ts(t), "kind": "main"}
    for turn in turns:
        t += timedelta(seconds=rng.randint(5, 90))
        mid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        if turn.role == "user":
            yield {"id": mid, "timestamp": _ts(t), "type": "user", "content": [{"text": turn.text}]}
        else:
            obj = {"id": mid, "timestamp": _ts(t), "type": "gemini", "content": turn.text,
                   "model": "gemini-3-flash-preview",
                   "tokens": {"input": 1000, "output": 100, "cached": 0, "thoughts": 0, "tool": 0, "total": 1100}}
            if turn.tool:
                name, arg, result = turn.tool
                obj["toolCalls"] = [{"id": f"{name}-{mid[:8]}", "name": "run_shell_command", "args": {"command": arg},
                                     "result": [{"functionResponse": {"id": f"{name}-{mid[:8]}", "name": "run_shell_command",
                                                                      "response": {"output": result}}}],
                                     "status": "success", "timestamp": _ts(t)}]
            yield obj


def generate(corpus: Path, units: Units, target_chunks: int, seed: int = 7) -> dict:
    """Write session files until the chunker's window count reaches ``target_chunks``."""
    rng = random.Random(seed)
    if corpus.exists():
        shutil.rmtree(corpus)
    predicted = sessions = 0
    by_platform: dict[str, int] = {}
    idents: list[str] = []
    bytes_written = 0
    platforms = [p for p, _ in PLATFORM_WEIGHTS]
    weights = [w for _, w in PLATFORM_WEIGHTS]
    while predicted < target_chunks:
        platform = rng.choices(platforms, weights)[0]
        project = PROJECTS[min(int(rng.paretovariate(1.2)) - 1, len(PROJECTS) - 1)]  # a few big projects
        cwd = f"/home/dev/src/{project}"
        branch = rng.choice(BRANCHES)
        start = YEAR_START + timedelta(seconds=rng.randrange(365 * 86400))
        n_turns = rng.choice((4, 8, 12, 16, 24, 32, 40, 48, 60, 80))
        ident = None
        if rng.random() < 0.3:
            ident = f"{rng.choice(IDENT_PREFIXES)}{len(idents):04d}"
            idents.append(ident)
        turns = make_session_turns(rng, units, n_turns, ident)
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        if platform == "claude-code":
            path = corpus / "claude" / "projects" / ("-home-dev-src-" + project) / f"{sid}.jsonl"
            lines = claude_lines(sid, cwd, branch, start, turns, rng)
        elif platform == "codex-cli":
            path = corpus / "codex" / "sessions" / start.strftime("%Y/%m/%d") / (
                f"rollout-{start.strftime('%Y-%m-%dT%H-%M-%S')}-{sid}.jsonl")
            lines = codex_lines(sid, cwd, branch, start, turns, rng)
        else:
            folder = corpus / "gemini" / "tmp" / project
            if not (folder / ".project_root").exists():
                (folder / "chats").mkdir(parents=True, exist_ok=True)
                (folder / ".project_root").write_text(cwd)
            path = folder / "chats" / f"session-{start.strftime('%Y-%m-%dT%H-%M')}-{sid[:8]}.jsonl"
            lines = gemini_lines(sid, cwd, start, turns, rng)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = "".join(json.dumps(obj, ensure_ascii=False) + "\n" for obj in lines)
        path.write_text(data, encoding="utf-8")
        bytes_written += len(data.encode("utf-8"))
        predicted += predicted_chunks(n_turns)
        sessions += 1
        by_platform[platform] = by_platform.get(platform, 0) + 1
    return {"sessions": sessions, "predicted_chunks": predicted, "by_platform": by_platform,
            "identifiers": idents, "log_bytes": bytes_written, "seed": seed}


# ------------------------------------------------------------------------------------------ vectors


def unit_lookup(units: Units) -> dict[str, int]:
    """Text prefix → base-vector row: the key a parsed message's text is matched back to its unit with."""
    n_par = len(units.paragraphs)
    table: dict[str, int] = {}
    for i, text in enumerate(units.fixture_texts):
        table.setdefault(_key(text), n_par + i)
    for q, p in units.questions:
        table.setdefault(_key(q), p)
    return table


def _key(text: str) -> str:
    return " ".join(text.split())[:40]


def paragraph_of(text: str, units: Units, para_index: dict[str, int]) -> int | None:
    """An assistant excerpt is a slice of a paragraph: find it by a 12-gram index."""
    flat = text.strip()
    for pos in (0, 20, 40):
        gram = flat[pos : pos + 12]
        if len(gram) == 12 and gram in para_index:
            return para_index[gram]
    return None


def build_paragraph_index(units: Units) -> dict[str, int]:
    index: dict[str, int] = {}
    for i, p in enumerate(units.paragraphs):
        for pos in range(0, max(1, len(p) - 11)):
            index.setdefault(p[pos : pos + 12], i)
    return index


def chunk_vectors(corpus: Path, units: Units, base: np.ndarray, seed: int = 11) -> tuple[dict[str, np.ndarray], dict]:
    """embed_hash → synthetic vector for every chunk the real parser + chunker make from ``corpus``."""
    from wwt.chunker import chunk_session
    from wwt.parsers import parse_file

    rng = np.random.default_rng(seed)
    lookup = unit_lookup(units)
    para_index = build_paragraph_index(units)
    mean_vec = base.mean(axis=0)
    out: dict[str, np.ndarray] = {}
    stats = {"files": 0, "sessions": 0, "messages": 0, "chunks": 0, "unmatched_turns": 0, "matched_turns": 0}
    for path in sorted(p for p in corpus.rglob("*.jsonl")):
        sessions, _ = parse_file(path)
        stats["files"] += 1
        for session in sessions:
            stats["sessions"] += 1
            msgs = session.messages
            stats["messages"] += len(msgs)
            for chunk in chunk_session(msgs, session_id=session.session_id):
                stats["chunks"] += 1
                if chunk.embed_hash in out:
                    continue
                rows = []
                for m in msgs[chunk.first_seq : chunk.last_seq + 1]:
                    if m.kind != "text":
                        continue
                    row = lookup.get(_key(m.text))
                    if row is None:
                        row = paragraph_of(m.text, units, para_index)
                    if row is None:
                        stats["unmatched_turns"] += 1
                    else:
                        stats["matched_turns"] += 1
                        rows.append(row)
                clean = base[rows].mean(axis=0) if rows else mean_vec
                noisy = clean / np.linalg.norm(clean) + rng.normal(0.0, NOISE_SIGMA, DIM)
                out[chunk.embed_hash] = (noisy / np.linalg.norm(noisy)).astype(np.float32)
    stats["unique_embed_texts"] = len(out)
    return out, stats


# ------------------------------------------------------------------------------------------ store


class GuardEmbedder:
    """Stands in for the model during the seeded ingest: every vector should be cached, so any call is a
    hash mismatch. Counts and delegates to the real model for a handful, refuses beyond that."""

    def __init__(self, limit: int = 200) -> None:
        self.calls = 0
        self.limit = limit
        self._real = None

    def embed_passages(self, texts: Sequence[str], batch_size: int = 16) -> np.ndarray:
        self.calls += len(texts)
        if self.calls > self.limit:
            raise RuntimeError(f"{self.calls} cache misses: the seeded embed hashes do not match ingest's")
        if self._real is None:
            from wwt.embedder import load_embedder

            self._real = load_embedder()
        return self._real.embed_passages(texts)

    def embed_requests(self, texts: Sequence[str]) -> np.ndarray:
        return self._real.embed_requests(texts)  # a chunk's requests follow its passage: the miss is counted

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        raise RuntimeError("no queries during ingest")


class LineMemoTokenizer:
    """Build-time stand-in for ``wwt.lexical.tokenize_many``: the real function applied per distinct LINE and
    cached. The corpus reuses a bounded pool of turn texts, and Kiwi (CoNg model) runs at ~15-30k chars/s of CPU
    here, so tokenizing 100k chunks whole would take hours; per line, each distinct line is analysed once.
    Tokens are the real tokenizer's, except that Kiwi sees one line instead of a ~2,000-char segment (Korean
    morphemes can differ marginally at line edges). Queries are always tokenized by the real function."""

    def __init__(self, real) -> None:
        self.real = real
        self.cache: dict[str, list[str]] = {}
        self.tokenized = 0
        self.hits = 0
        self.seconds = 0.0

    def __call__(self, texts: Sequence[str]) -> list[list[str]]:
        from wwt.lexical import MAX_TOKENS_PER_TEXT

        started = time.perf_counter()
        split = [text.split("\n") for text in texts]
        missing = list(dict.fromkeys(line for lines in split for line in lines if line not in self.cache))
        if missing:
            for line, tokens in zip(missing, self.real(missing), strict=True):
                self.cache[line] = tokens
        self.tokenized += len(missing)
        self.hits += sum(len(lines) for lines in split) - len(missing)
        out = [[tok for line in lines for tok in self.cache[line]][:MAX_TOKENS_PER_TEXT] for lines in split]
        self.seconds += time.perf_counter() - started
        return out


def build_store(corpus: Path, home: Path, vectors: dict[str, np.ndarray], memo_tokenizer: bool = True) -> dict:
    """Seed the embedding cache, then ingest ``corpus`` with the real ``Memory.ingest``; timings + summary."""
    from wwt.service import Memory
    from wwt.store import Store

    if home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True)
    os.chmod(home, 0o700)
    started = time.perf_counter()
    with Store.open(home / "wwt.sqlite3") as store:
        items = [(h, DIM, v.tobytes()) for h, v in vectors.items()]
        for i in range(0, len(items), 5000):
            store.put_vectors(items[i : i + 5000])
    seed_s = time.perf_counter() - started

    import wwt.lexical_index as lexical_index

    real_tokenize_many = lexical_index.tokenize_many
    memo = LineMemoTokenizer(real_tokenize_many)
    if memo_tokenizer:
        lexical_index.tokenize_many = memo  # benchmark shim, see LineMemoTokenizer
    memory = Memory(home)
    guard = GuardEmbedder()
    memory._embedder = guard  # benchmark shim: the vectors are pre-seeded, see module docstring
    started = time.perf_counter()
    try:
        summary = memory.ingest([corpus])
    finally:
        lexical_index.tokenize_many = real_tokenize_many
    ingest_s = time.perf_counter() - started
    memory.close()
    return {"seed_vectors_s": round(seed_s, 1), "ingest_s": round(ingest_s, 1), "guard_embedded": guard.calls,
            "memo_tokenizer": memo_tokenizer, "tokenized_lines": memo.tokenized, "memo_hits": memo.hits,
            "tokenize_s": round(memo.seconds, 1), "summary": summary.to_dict()}


def refresh_lexical(home: Path, memo_tokenizer: bool, log=print) -> None:
    """A cached store whose lexical index an older tokenizer built: rebuild only that index from SQLite (the
    same way ``wwt`` repairs it), through the same tokenizer shim as the original build."""
    import wwt.lexical_index as lexical_index
    from wwt.indexes import LEXICAL_DIR, SYNC_FILE, Indexes
    from wwt.lexical import tokenizer_signature
    from wwt.store import Store

    stamp_path = home / "index" / LEXICAL_DIR / lexical_index.STAMP_FILE
    try:
        found = json.loads(stamp_path.read_text()).get("tokenizer")
    except (OSError, ValueError):
        found = None
    if found == tokenizer_signature():
        return
    log(f"lexical index built by {found!r}, rebuilding it with {tokenizer_signature()!r}…")
    shutil.rmtree(home / "index" / LEXICAL_DIR, ignore_errors=True)
    (home / "index" / SYNC_FILE).unlink(missing_ok=True)
    real_tokenize_many = lexical_index.tokenize_many
    if memo_tokenizer:
        lexical_index.tokenize_many = LineMemoTokenizer(real_tokenize_many)
    started = time.perf_counter()
    try:
        with Store.open(home / "wwt.sqlite3") as store:
            indexes = Indexes.open(home / "index")
            indexes.repair(store)
            indexes.close()
    finally:
        lexical_index.tokenize_many = real_tokenize_many
    log(f"  lexical index rebuilt in {time.perf_counter() - started:.0f}s")


def build(chunks: int, root: Path, rebuild: bool = False, memo_tokenizer: bool = True, log=print) -> dict:
    """Corpus + store under ``root`` (cached: a marker records what was built)."""
    root = root.resolve()
    marker = root / "built.json"
    if marker.exists() and not rebuild:
        info = json.loads(marker.read_text())
        if info.get("target_chunks") == chunks and info["store"].get("memo_tokenizer") == memo_tokenizer:
            refresh_lexical(Path(info["home"]), memo_tokenizer, log)
            return info
    corpus, home = root / "corpus", root / "home"
    started = time.perf_counter()
    log("loading units (KorQuAD + fixtures)…")
    units = load_units()
    base = base_vectors(units)
    log(f"  {len(units.paragraphs)} paragraphs, {len(units.questions)} questions, "
        f"{len(units.fixture_texts)} fixture texts, base vectors {base.shape}")
    t0 = time.perf_counter()
    gen = generate(corpus, units, chunks)
    gen_s = time.perf_counter() - t0
    log(f"generated {gen['sessions']} sessions ({gen['log_bytes'] / 1e6:.0f} MB) in {gen_s:.0f}s")
    t0 = time.perf_counter()
    vectors, vstats = chunk_vectors(corpus, units, base)
    vec_s = time.perf_counter() - t0
    log(f"parsed + chunked for vectors: {vstats} in {vec_s:.0f}s")
    t0 = time.perf_counter()
    store_info = build_store(corpus, home, vectors, memo_tokenizer)
    log(f"ingest: {store_info['ingest_s']}s, summary chunks_added={store_info['summary']['chunks_added']}, "
        f"model calls={store_info['guard_embedded']}")
    info = {
        "target_chunks": chunks, "generate": gen | {"seconds": round(gen_s, 1)},
        "vectors": vstats | {"seconds": round(vec_s, 1)}, "store": store_info, "home": str(home),
        "corpus": str(corpus), "total_s": round(time.perf_counter() - started, 1),
    }
    marker.write_text(json.dumps(info, indent=1))
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--root", type=Path, default=SCALE_WORK / "100k")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--real-tokenizer", action="store_true", help="tokenize every chunk whole (slow: Kiwi)")
    args = parser.parse_args(argv)
    info = build(args.chunks, args.root, args.rebuild, memo_tokenizer=not args.real_tokenizer)
    print(json.dumps({k: v for k, v in info.items() if k != "generate"} | {
        "sessions": info["generate"]["sessions"]}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
