"""Issue 29 candidate: pseudo-relevance feedback from the vector leg's best chunks into the LEXICAL leg's query
(``wwt.search.feedback_tokens``, off by default: PRF_CHUNKS = 0). Fused R@3 on one half of recall_xlang,
recall_paraphrase2 (cross-language / same language) and recall_dev's answerable kinds, over recall_xlang.py's
archive (benchmarks/.work/xlang; run recall_xlang.py once first).

    WWT_MODEL_DIR=<model folder> python benchmarks/recall_prf.py [--split tune|held] [--config C,T,W,O]
        [--korean-only] [--min-df N]

config = chunks fed back, terms taken, their weight in the lexical query, only chunks in the other language
than the question (1/0). Without --config: a grid over 1–2 chunks, 8/16 terms, weight 0.3/0.6, other language
or not, plus PRF off.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _shared import REAL_FIXTURES  # noqa: E402
from recall import DEV_LOGS, LIMIT, relevant_roots, with_split  # noqa: E402
from recall_xlang import CROSS, archive, load  # noqa: E402

import wwt.search as search  # noqa: E402
from wwt.language_axis import is_korean  # noqa: E402
from wwt.models import Filters  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", default="tune", choices=("tune", "held"))
    ap.add_argument("--config", help="C,T,W,O")
    ap.add_argument("--korean-only", action="store_true", help="feed back for Korean questions only")
    ap.add_argument("--min-df", type=int, default=1, help="feed back only terms in at least N chunks")
    args = ap.parse_args()
    search.PRF_MIN_DF = args.min_df
    if args.korean_only:
        plain = search.feedback_tokens

        def korean_only(query: str, *rest: object) -> list[str]:
            return plain(query, *rest) if is_korean(query) else []  # type: ignore[arg-type]

        search.feedback_tokens = korean_only  # type: ignore[assignment]
    sets = {
        "recall_xlang": load("recall_xlang.json"),
        "recall_paraphrase2": load("recall_paraphrase2.json"),
        "recall_dev": [q for q in with_split(load("recall_dev.json")) if q["kind"] != "negative"],
    }
    memory = archive(HERE / ".work" / "xlang", [REAL_FIXTURES, DEV_LOGS])
    store = memory._open_store()

    def rank(item: dict) -> int | None:
        hits = memory.search_outcome(item["q"], Filters(platform=item.get("source")), LIMIT).hits
        relevant = relevant_roots(store, item["relevant"])
        return next((i + 1 for i, h in enumerate(hits) if h.session_id in relevant), None)

    def r3(ranks: list[int | None]) -> str:
        return f"{sum(1 for r in ranks if r and r <= 3) / len(ranks):.2f}" if ranks else "–"

    if args.config:
        c, t, w, o = args.config.split(",")
        configs = [(int(c), int(t), float(w), o == "1")]
    else:
        configs = [(0, 8, 0.3, True)] + [
            (c, t, w, o) for c in (1, 2) for t in (8, 16) for w in (0.3, 0.6) for o in (True, False)
        ]
    for config in configs:
        search.PRF_CHUNKS, search.PRF_TERMS, search.PRF_WEIGHT, search.PRF_OTHER_LANGUAGE = config
        out = []
        for name, questions in sets.items():
            questions = [q for q in questions if q.get("split") == args.split]
            if name == "recall_dev":
                out.append(f"recall_dev {r3([rank(q) for q in questions])}")
                continue
            cross = r3([rank(q) for q in questions if q["kind"] in CROSS])
            same = r3([rank(q) for q in questions if q["kind"] not in CROSS])
            out.append(f"{name} cross {cross} same {same}")
        print(config, " | ".join(out), flush=True)
    memory.close()


if __name__ == "__main__":
    main()
