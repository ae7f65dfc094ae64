"""Conversation-recall benchmark: the questions people ask about their own past agent sessions.

Two question sets, each scored on the *sessions* shown to the user (grouped, limit 10), with the real parsers,
chunker, int8 e5 model, tantivy and hnswlib:

* keyword set (``benchmarks/data/recall_queries.json``, 35 questions that reuse the conversation's words) over
  the real fixture logs (``../shared/fixtures/real``) — the regression guard;
* development set (``benchmarks/data/recall_dev.json``, issue 13: paraphrase, vague, outcome, ko2en, en2ko and
  negatives) over the real fixture logs plus 26 hand-written sessions (``benchmarks/data/recall_dev_logs``).
  Within each kind every other question is held out; the tuned-on half is labelled in-sample.

* paraphrase sets (issue 24: ``benchmarks/data/recall_paraphrase2.json``, written without the sessions' words, its
  held-out half the figure; ``recall_paraphrase.json``, an earlier set, never tuned on) for the "nothing relevant"
  flag, before and after its language rule (``wwt.search.telling_words``) side by side, beside every negative, on
  the dev archive, the dev archive with 1,000 KorQuAD + docstring passages, and the dev archive with 1,200 English
  docstring passages (a mostly-English archive past 1,000 chunks: where Korean paraphrases were flagged).

"now" is exactly what lands (``Memory.search_outcome``: adaptive fusion, glossary bridge, weak flag); "before"
is the previous default computed from the same indexes (weighted_minmax w_lex 0.6, no glossary, second-chunk
bonus 0.1). Each figure has a 95 % bootstrap interval (2,000 resamples of the questions): small sets lie.

    python benchmarks/recall.py [--no-write] [--dump FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from _shared import REAL_FIXTURES, replace_section  # noqa: E402

from wwt.fusion import fuse  # noqa: E402
from wwt.models import PLATFORMS, Filters  # noqa: E402
from wwt.search import candidate_depth, group_by_session  # noqa: E402
from wwt.service import Memory  # noqa: E402

LIMIT = 10
DEV_LOGS = HERE / "data" / "recall_dev_logs"
BEFORE = {"method": "weighted_minmax", "w_lex": 0.6, "bonus": 0.1}
KINDS = ("paraphrase", "vague", "outcome", "ko2en", "en2ko")


def relevant_roots(store, spec: list[str]) -> set[str]:
    """Fixture names (``file`` or ``file@platform``) or ``dev:<session name>`` → root conversations."""
    rows = store.conn.execute(
        "SELECT s.root_session_id, s.platform, f.path FROM sessions s "
        "JOIN session_files sf ON sf.session_id = s.session_id JOIN files f ON f.id = sf.file_id"
    ).fetchall()
    roots: set[str] = set()
    for name in spec:
        if name.startswith("dev:"):  # recall_dev_corpus.py derives every session id from its name
            roots.add(str(uuid.uuid5(uuid.NAMESPACE_URL, "wwt-recall-dev/" + name[4:])))
            continue
        base, _, platform = name.rpartition("@")
        if platform not in PLATFORMS:
            base, platform = name, ""
        for root, plat, path in rows:
            if Path(path).name == base and (not platform or plat == platform):
                roots.add(root)
    return roots


def with_split(queries: list[dict]) -> list[dict]:
    """Within each kind, the 1st, 3rd, … question is the tuning part, the others are held out."""
    seen: Counter[str] = Counter()
    for item in queries:
        item["split"] = "tune" if seen[item["kind"]] % 2 == 0 else "held"
        seen[item["kind"]] += 1
    return queries


def bootstrap(values: list[float], rounds: int = 2000, seed: int = 13) -> tuple[float, float, float]:
    """Mean and 95 % percentile interval of the mean over resampled questions."""
    if not values:
        return 0.0, 0.0, 0.0
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(values[rng.randrange(n)] for _ in range(n)) / n for _ in range(rounds))
    return sum(values) / n, means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]


def fmt(values: list[float]) -> str:
    mean, low, high = bootstrap(values)
    return f"{mean:.2f} [{low:.2f}–{high:.2f}]"


def background_logs(out: Path, count: int, english_only: bool = False) -> Path:
    """``count`` distractor passages as Claude Code sessions (one each): KorQuAD paragraphs and
    paragraphs of the Python standard library's docstrings, half each, so the weak flag can be checked against
    an archive that is not tiny (its thresholds must not depend on a 59-chunk archive). ``english_only``: the
    docstrings alone (from 150 characters, to have enough), an archive of mostly English sessions."""
    import ast
    import sysconfig
    from datetime import datetime, timezone

    from recall_dev_corpus import _claude

    korquad = Path(os.environ.get("WWT_SHARED", ROOT.parent / "shared")) / "data" / "korquad" / "KorQuAD_v1.0_dev.json"
    ko = [p["context"] for a in json.loads(korquad.read_text(encoding="utf-8"))["data"] for p in a["paragraphs"]]
    en: list[str] = []
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)):
                doc = ast.get_docstring(node)
                if doc and len(doc) > (150 if english_only else 300):
                    en.append(doc)
    if english_only:
        passages = en[:count]
    else:
        passages = [p for pair in zip(ko[: count // 2], en[: count - count // 2], strict=False) for p in pair]
    folder = out / "claude-code"
    folder.mkdir(parents=True, exist_ok=True)
    when = datetime(2025, 1, 1, tzinfo=timezone.utc)
    for i, text in enumerate(passages):
        turns = [("u", text)]
        (folder / f"background-{i:05d}.jsonl").write_text(_claude(f"bg-{i}", "background", when, turns), encoding="utf-8")
    return out


def ingest(work: Path, sources: list[Path]) -> Memory:
    logs = work / "logs"
    for i, source in enumerate(sources):
        shutil.copytree(source, logs / f"{i}-{source.name}", ignore=shutil.ignore_patterns("*.md"))
    os.environ["WWT_HOME"] = str(work / "home")
    memory = Memory(work / "home")
    memory.ingest([logs], backfill_seconds=None)  # every vector, however busy the machine
    return memory


def before_rank(memory: Memory, query: str, filters: Filters) -> list[str]:
    """The previous default, from the same indexes."""
    store, indexes, embedder = memory._open_store(), memory._refresh_indexes(), memory._get_embedder()
    depth = candidate_depth(LIMIT)
    allowed = store.chunk_ids_matching(filters)
    lexical = indexes.lexical.search(query, filters, depth)
    vector = indexes.vector.search(embedder.embed_query(query), depth, allowed)
    fused = fuse(lexical, vector, method=BEFORE["method"], w_lex=BEFORE["w_lex"])
    rows = store.chunks_by_ids([chunk_id for chunk_id, _ in fused])
    return [h.session_id for h in group_by_session(fused, {r.id: r for r in rows}, LIMIT, bonus=BEFORE["bonus"])]


def run_set(memory: Memory, queries: list[dict]) -> list[dict]:
    store = memory._open_store()
    rows = []
    for item in queries:
        filters = Filters(platform=item.get("source"))
        relevant = relevant_roots(store, item["relevant"])
        if item["relevant"] and not relevant:
            raise SystemExit(f"no session ingested for {item['relevant']} — parser regression?")
        started = time.perf_counter()
        outcome = memory.search_outcome(item["q"], filters, LIMIT)
        seconds = time.perf_counter() - started
        now = [h.session_id for h in outcome.hits]
        old = before_rank(memory, item["q"], filters)

        def rank(ranked: list[str], relevant: set[str] = relevant) -> int | None:
            return next((i + 1 for i, sid in enumerate(ranked) if sid in relevant), None)

        rows.append(
            {
                "q": item["q"], "kind": item["kind"], "split": item.get("split", "all"),
                "now": rank(now), "before": rank(old), "weak": outcome.weak, "seconds": round(seconds, 4),
                "vector_top": outcome.vector_top, "vector_background": outcome.vector_background,
                "lexical_hits": outcome.lexical_hits, "signals": outcome.signals,
            }
        )
    return rows


@contextmanager
def flag_rules_before_issue24() -> Iterator[None]:
    """The "nothing relevant" flag as it was before issue 24's language rule: every word's absence counted,
    whatever the archive's languages (``telling_words`` keeps every token when LANGUAGE_MIN_SHARE is 0)."""
    import wwt.search as search

    saved = search.LANGUAGE_MIN_SHARE
    search.LANGUAGE_MIN_SHARE = 0.0
    try:
        yield
    finally:
        search.LANGUAGE_MIN_SHARE = saved


def flag_rows(memory: Memory, queries: list[dict]) -> list[dict]:
    """Per question: the relevant session's rank, and the flag now and before issue 24, from the same indexes."""
    store = memory._open_store()
    rows = []
    for item in queries:
        filters = Filters(platform=item.get("source"))
        relevant = relevant_roots(store, item["relevant"])
        outcome = memory.search_outcome(item["q"], filters, LIMIT)
        with flag_rules_before_issue24():
            before = memory.search_outcome(item["q"], filters, LIMIT).weak
        ranked = [h.session_id for h in outcome.hits]
        rows.append({"q": item["q"], "set": item["set"], "kind": item["kind"], "split": item.get("split", "all"),
                     "batch": item.get("batch", ""), "now": next((i + 1 for i, sid in enumerate(ranked)
                                                                   if sid in relevant), None),
                     "weak": outcome.weak, "weak_before": before, "signals": outcome.signals})
    return rows


def paraphrase_lines(by_archive: dict[str, tuple[list[dict], tuple[int, int]]]) -> list[str]:
    """The paraphrase sets' flag, before and after, beside every negative, per archive."""
    lines = [
        "| archive (sessions, chunks) | questions | n | top 1 | top 3 | flagged before | flagged now |",
        "|---|---|---|---|---|---|---|",
    ]

    def row(archive: str, label: str, part: list[dict], answerable: bool = True) -> None:
        if not part:
            return
        n = len(part)
        top1 = f"{sum(r['now'] == 1 for r in part) / n:.2f}" if answerable else "–"
        top3 = f"{sum(1 for r in part if r['now'] and r['now'] <= 3) / n:.2f}" if answerable else "–"
        before, now = sum(r["weak_before"] for r in part), sum(r["weak"] for r in part)
        lines.append(f"| {archive} | {label} | {n} | {top1} | {top3} | {before} ({before / n:.0%}) | "
                     f"{now} ({now / n:.0%}) |")

    for archive, (rows, size) in by_archive.items():
        name = f"{archive} ({size[0]}, {size[1]})"
        mine = [r for r in rows if r["set"] == "paraphrase2"]
        row(name, "**paraphrase set, held-out**", [r for r in mine if r["split"] == "held"])
        row(name, "paraphrase set, held-out, short questions",
            [r for r in mine if r["split"] == "held" and r["batch"] == "short"])
        row(name, "paraphrase set, held-out, cross-language",
            [r for r in mine if r["split"] == "held" and r["kind"] != "paraphrase"])
        row(name, "paraphrase set, tuning part (in-sample)", [r for r in mine if r["split"] == "tune"])
        row(name, "earlier paraphrase set (recall_paraphrase.json, not tuned on)",
            [r for r in rows if r["set"] == "paraphrase"])
        row(name, "negatives, development set (caught)", [r for r in rows if r["set"] == "dev-negative"], False)
        row(name, "negatives, blind set (caught)", [r for r in rows if r["set"] == "blind-negative"], False)
        row(name, "**all negatives (caught)**", [r for r in rows if r["set"].endswith("negative")], False)
        row(name, "everyday questions (caught)", [r for r in rows if r["set"] == "everyday"], False)
    return lines


def flag_section(flags: dict[str, tuple[list[dict], tuple[int, int]]], english: int) -> list[str]:
    """Issue 24's part of the report: the paraphrase sets' flag before and after, and its targets."""
    if not flags:
        return []
    checks = []
    for archive, (rows, _size) in flags.items():
        held = [r for r in rows if r["set"] == "paraphrase2" and r["split"] == "held"]
        negatives = [r for r in rows if r["set"].endswith("negative")]
        lost = [r["q"] for r in negatives if r["weak_before"] and not r["weak"]]
        share = sum(r["weak"] for r in held) / max(1, len(held))
        checks.append(f"{archive}: held-out paraphrases flagged {share:.0%} (≤ 5 %: {'met' if share <= 0.05 else 'NOT met'}), "
                      f"negatives caught {sum(r['weak'] for r in negatives)}/{len(negatives)} vs "
                      f"{sum(r['weak_before'] for r in negatives)}/{len(negatives)} before"
                      + (f" (lost: {'; '.join(lost)})" if lost else ""))
    false_flags = [f"{r['q']} ({archive}: {', '.join(k for k in ('names_unseen', 'topics_unseen', 'is_weak', 'never_said') if r['signals'].get(k))})"
                   for archive, (rows, _size) in flags.items()
                   for r in rows if r["set"] == "paraphrase2" and r["split"] == "held" and r["weak"]]
    return [
        "",
        "**Paraphrases and the \"nothing relevant\" flag (issue 24).** benchmarks/data/recall_paraphrase2.json: 130 "
        "answerable questions written from each dev session's meaning without its words (78 long, 52 of search-box "
        "length; same language, Korean about English sessions and the reverse), split held-out / tuning by a seeded "
        "shuffle written into the file before any result was seen; the held-out half is the figure. The earlier set "
        "(recall_paraphrase.json, 52) was never looked at question by question: a second held-out check. \"before\" "
        "= the flag without the language rule (every word's absence counted), from the same indexes in the same run. "
        f"Archives: the dev archive; with 1,000 KorQuAD + docstring passages; with {english} English docstring "
        "passages (mostly English, past 1,000 chunks: a Korean question's everyday words are missing there because "
        "the archive holds almost no Korean).",
        "",
        *paraphrase_lines(flags),
        "",
        "Targets (issue 24): " + "; ".join(checks) + ".",
        "",
        "Held-out paraphrases still flagged (rule): " + ("; ".join(false_flags) or "none"),
    ]


def bigger_lines(rows: list[dict] | None, size: tuple[int, int] | None, passages: int) -> list[str]:
    """The weak flag's figures on the dev archive with background passages (an archive that is not tiny)."""
    if not rows or not size:
        return []
    negatives = [r for r in rows if r["kind"] == "negative"]
    real = [r for r in rows if r["kind"] != "negative"]
    split = {s: [r for r in negatives if r["split"] == s] for s in ("held", "tune")}
    return [
        "",
        f"Same dev set with {passages} background passages added (KorQuAD paragraphs and Python standard library "
        f"docstrings, one session each: {size[1]} chunks): negatives flagged {sum(r['weak'] for r in negatives)}/"
        f"{len(negatives)} (held-out {sum(r['weak'] for r in split['held'])}/{len(split['held'])}, tuning part "
        f"{sum(r['weak'] for r in split['tune'])}/{len(split['tune'])}); answerable questions flagged "
        f"{sum(r['weak'] for r in real)}/{len(real)}; top 3 of the answerable "
        f"{sum(1 for r in real if r['now'] and r['now'] <= 3) / len(real):.2f}.",
    ]


def metrics(rows: list[dict], which: str) -> dict[str, list[float]]:
    ranks = [r[which] for r in rows]
    return {
        "top1": [1.0 if k == 1 else 0.0 for k in ranks],
        "top3": [1.0 if k and k <= 3 else 0.0 for k in ranks],
        "mrr": [1.0 / k if k else 0.0 for k in ranks],
    }


def table(rows: list[dict], groups: list[tuple[str, list[dict]]]) -> list[str]:
    lines = [
        "| questions | n | top 1 now | top 3 now | MRR@10 now | top 1 before | top 3 before | MRR@10 before | flagged weak |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, part in groups:
        if not part:
            continue
        now, old = metrics(part, "now"), metrics(part, "before")
        weak = sum(r["weak"] for r in part)
        lines.append(
            f"| {label} | {len(part)} | {fmt(now['top1'])} | {fmt(now['top3'])} | {fmt(now['mrr'])} | "
            f"{fmt(old['top1'])} | {fmt(old['top3'])} | {fmt(old['mrr'])} | {weak}/{len(part)} |"
        )
    return lines


def everyday_line(rows: list[dict]) -> str:
    """The flag on everyday questions (benchmarks/data/recall_everyday.json) over the same developer archive."""
    by_split = {s: [r for r in rows if r["split"] == s] for s in ("tune", "held")}
    return (
        "Everyday questions over the same developer archive (benchmarks/data/recall_everyday.json; nothing there "
        f"answers them): flagged {sum(r['weak'] for r in by_split['held'])}/{len(by_split['held'])} of those "
        f"written last, {sum(r['weak'] for r in by_split['tune'])}/{len(by_split['tune'])} of those written while "
        "trying an everyday-topic similarity rule, which was dropped (written last, it caught 2 of them while one "
        "real question already scored above its threshold)."
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fixtures", type=Path, default=REAL_FIXTURES)
    ap.add_argument("--no-write", action="store_true", help="print only; do not write RESULTS.md")
    ap.add_argument("--dump", type=Path, help="write per-question rows (JSON) here")
    ap.add_argument("--background", type=int, default=0,
                    help="dev set only, plus this many distractor passages (KorQuAD + stdlib docstrings); no write")
    ap.add_argument("--bigger", type=int, default=1000,
                    help="also run the dev set with this many background passages for the flag's figures (0: skip)")
    ap.add_argument("--english", type=int, default=1200,
                    help="also run the paraphrase sets with this many English docstring passages added (0: skip)")
    args = ap.parse_args()

    keyword = json.loads((HERE / "data" / "recall_queries.json").read_text(encoding="utf-8"))["queries"]
    dev = with_split(json.loads((HERE / "data" / "recall_dev.json").read_text(encoding="utf-8"))["queries"])
    everyday = json.loads((HERE / "data" / "recall_everyday.json").read_text(encoding="utf-8"))["queries"]
    blind = json.loads((HERE / "data" / "recall_blind.json").read_text(encoding="utf-8"))["queries"]
    flag_set = [{**q, "set": "paraphrase2"}
                for q in json.loads((HERE / "data" / "recall_paraphrase2.json").read_text(encoding="utf-8"))["queries"]]
    flag_set += [{**q, "set": "paraphrase"}
                 for q in json.loads((HERE / "data" / "recall_paraphrase.json").read_text(encoding="utf-8"))["queries"]]
    flag_set += [{**q, "set": "dev-negative"} for q in dev if q["kind"] == "negative"]
    flag_set += [{**q, "set": "blind-negative"} for q in blind if q["kind"] == "negative"]
    flag_set += [{**q, "set": "everyday"} for q in everyday]
    flags: dict[str, tuple[list[dict], tuple[int, int]]] = {}
    results: dict[str, list[dict]] = {}
    sizes: dict[str, tuple[int, int]] = {}
    sets = [("keyword", [args.fixtures], keyword), ("dev", [args.fixtures, DEV_LOGS], dev)]
    if args.background:
        sets, args.no_write = sets[1:], True
    else:
        if args.bigger:  # the flag again on an archive that is not tiny: everyday words there are seen
            sets.append(("dev-bigger", [args.fixtures, DEV_LOGS], dev))
        if args.english:  # a mostly-English archive past 1,000 chunks (issue 24): the paraphrase sets' flag only
            sets.append(("dev-english", [args.fixtures, DEV_LOGS], []))
    for name, sources, queries in sets:
        work = Path(tempfile.mkdtemp(prefix=f"wwt-recall-{name}-"))
        try:
            extra = args.background or (args.bigger if name == "dev-bigger" else 0)
            if extra:
                sources = [*sources, background_logs(work / "background", extra)]
            if name == "dev-english":
                sources = [*sources, background_logs(work / "background", args.english, english_only=True)]
            memory = ingest(work, sources)
            stats = memory.status()
            sizes[name] = (stats.get("sessions", 0), stats.get("chunks", 0))
            results[name] = run_set(memory, queries)
            if name.startswith("dev") and not args.background:
                flags[name] = (flag_rows(memory, flag_set), sizes[name])
            if name == "dev":  # everyday questions over the same developer archive
                results["everyday"] = run_set(memory, everyday)
                results["blind"] = run_set(memory, blind)
            memory.close()
        finally:
            shutil.rmtree(work, ignore_errors=True)
    if args.dump:
        args.dump.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
    if args.background:
        print(f"dev set with {args.background} background passages: {sizes['dev'][1]} chunks")
        return

    dev_rows = results["dev"]
    positives = [r for r in dev_rows if r["kind"] != "negative"]
    negatives = [r for r in dev_rows if r["kind"] == "negative"]
    groups: list[tuple[str, list[dict]]] = []
    for split, label in (("held", "held-out"), ("tune", "tuning part (in-sample)")):
        groups.append((f"**all five kinds, {label}**", [r for r in positives if r["split"] == split]))
        groups += [(f"{kind}, {label}", [r for r in positives if r["kind"] == kind and r["split"] == split])
                   for kind in KINDS]
    groups.append(("**all five kinds, both parts**", positives))
    keyword_rows = results["keyword"]
    kw_groups = [("keyword set, all", keyword_rows)] + [
        (f"keyword set, {kind}", [r for r in keyword_rows if r["kind"] == kind])
        for kind in sorted({r["kind"] for r in keyword_rows})
    ]
    blind_rows = results.get("blind", [])
    blind_pos = [r for r in blind_rows if r["kind"] != "negative"]
    blind_neg = [r for r in blind_rows if r["kind"] == "negative"]
    blind_groups = [("blind set, all answerable", blind_pos)] + [
        (f"blind set, {kind}", [r for r in blind_pos if r["kind"] == kind]) for kind in KINDS
    ]
    real = positives + keyword_rows + blind_pos
    false_alarms = sum(r["weak"] for r in real)
    neg_by_split = {s: [r for r in negatives if r["split"] == s] for s in ("held", "tune")}
    misses = [f"{r['q']} → {r['now']}" for r in positives if r["split"] == "held" and r["now"] != 1]
    latency = sorted(r["seconds"] for r in dev_rows)
    held = metrics([r for r in positives if r["split"] == "held"], "now")
    keyword_mrr = sum(metrics(keyword_rows, "now")["mrr"]) / len(keyword_rows)
    flagged = sum(r["weak"] for r in negatives) / len(negatives)
    alarms = false_alarms / len(real)

    def check(label: str, value: float, target: float, at_most: bool = False) -> str:
        ok = value <= target if at_most else value >= target
        return f"{label} {value:.2f} ({'≤' if at_most else '≥'} {target:.2f}: {'met' if ok else 'NOT met'})"

    targets = "; ".join(
        [
            check("held-out five kinds top 3", sum(held["top3"]) / len(held["top3"]), 0.85),
            check("top 1", sum(held["top1"]) / len(held["top1"]), 0.65),
            check("keyword MRR@10", keyword_mrr, 0.96),
            check("development negatives flagged", flagged, 0.70),
            check("blind negatives flagged", sum(r["weak"] for r in blind_neg) / max(1, len(blind_neg)), 0.70),
            check("all negatives (development + blind) flagged",
                  sum(r["weak"] for r in negatives + blind_neg) / max(1, len(negatives + blind_neg)), 0.70),
            check("real questions flagged", alarms, 0.05, at_most=True),
        ]
    )
    report = "\n".join(
        [
            f"## Recall by kind ({time.strftime('%Y-%m-%d')})",
            "",
            "Command: `python benchmarks/recall.py` (real parsers, chunker, int8 e5 model, tantivy, hnswlib). "
            f"Development set: {len(dev_rows)} hand-written questions ({len(positives)} answerable in five kinds, "
            f"{len(negatives)} negatives) over the real fixture logs plus the 26 sessions of "
            f"benchmarks/data/recall_dev_logs ({sizes['dev'][0]} sessions, {sizes['dev'][1]} chunks). Keyword set: "
            f"{len(keyword_rows)} questions over the real fixture logs alone ({sizes['keyword'][0]} sessions, "
            f"{sizes['keyword'][1]} chunks). \"now\" = what lands (`Memory.search_outcome`); \"before\" = "
            "weighted_minmax w_lex 0.6 without the glossary, second-chunk bonus 0.1, on the same indexes. "
            "Figures: mean [95 % bootstrap interval].",
            "",
            *table(positives, groups),
            "",
            *table(keyword_rows, kw_groups),
            "",
            f"Blind set (benchmarks/data/recall_blind.json, over the same archive as the development set): "
            f"{len(blind_rows)} questions written by a separate session that had read only the archive's sessions "
            "(not the code, the glossary or the other sets); used once to decide one change (a flag rule dropped "
            "for its false alarms on it), never tuned on otherwise.",
            "",
            *table(blind_pos, blind_groups),
            "",
            f"\"Nothing relevant\" (weak flag): negatives flagged {sum(r['weak'] for r in negatives)}/{len(negatives)} "
            f"(held-out {sum(r['weak'] for r in neg_by_split['held'])}/{len(neg_by_split['held'])}, tuning part "
            f"{sum(r['weak'] for r in neg_by_split['tune'])}/{len(neg_by_split['tune'])}); answerable questions "
            f"flagged {false_alarms}/{len(real)} (development, keyword and blind sets). Blind set: negatives flagged "
            f"{sum(r['weak'] for r in blind_neg)}/{len(blind_neg)}, answerable questions flagged "
            f"{sum(r['weak'] for r in blind_pos)}/{len(blind_pos)}.",
            *bigger_lines(results.get("dev-bigger"), sizes.get("dev-bigger"), args.bigger),
            "",
            everyday_line(results.get("everyday", [])),
            *flag_section(flags, args.english),
            "",
            f"Targets (issue 13): {targets}. Per kind (held-out), see the table: one kind can miss while the "
            "whole meets.",
            "",
            "How the flag decides (wwt/search.py, docs/architecture.md): a name in the question (a word the "
            "developer-name list in wwt/glossary.py knows, or one written like a name) that the archive never "
            "mentions under any spelling; a topic term (a glossary line marked as a technique, feature or artefact: "
            "failover, 샤딩, feature flag — not a symptom or everyday word) none of whose spellings the archive "
            "says; in an archive of ≥ 1,000 chunks, ≥ 60 % of ≥ 3 topic words never said in either language (from 50 "
            "chunks: all of them); and "
            "the original tool's rule (lexical leg missed most words, flat vector leg). The name list and the "
            "2026-12-03 glossary additions and topic marks were written after reading this development set, and "
            "hold words some of its negatives use (Kafka, Stripe, Okta, 웹소켓, 크롬, 페일오버, 샤딩, 위젯, 블루그린, "
            "접근성): those flags are not blind — the blind set's are. Negatives about topics the archive does "
            "discuss in other words (Rust, PDF, Windows installers, fonts here) are not caught: no similarity "
            "signal of this e5 model separates them from paraphrases (finished investigation weak_flag_signals.py).",
            "",
            f"Search time per question (this small archive, shared machine): p50 {latency[len(latency) // 2] * 1000:.0f} ms.",
            "",
            "Held-out questions not ranked first now: " + ("; ".join(misses) or "none"),
        ]
    )
    print(report)
    if not args.no_write:
        replace_section("recall-by-kind", report)


if __name__ == "__main__":
    main()
