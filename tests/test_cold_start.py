"""A cold first `wwt search` (no engine running) waited ~4 s (issue 25), most of it Kiwi's load — which an
English question needed only to tokenize the Korean words the glossary bridges it to (server → 서버) — and
a warm-up that loaded Kiwi and the MCP SDK while the first search waited. Speed itself is measured by
benchmarks/cold_start.py; these tests pin what the speed comes from, with the real model, Kiwi and indexes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES
from test_engine import _ingest, engine_env, runtime  # noqa: F401

from wwt import known_tokens, known_tokens_write
from wwt.lexical import tokenize, tokenizer_signature

QUESTION = "phoenix server does not start"  # English; the glossary adds 서버 for "server"
SPOTTER = "55604662-cf2a-4331-851a-ec234028f8ca"  # spotter__short.jsonl: "mix phx.server doesnt seem to start"


def test_the_recorded_glossary_tokens_are_what_kiwi_gives_now():
    """Regenerate with `python -m wwt.known_tokens_write` when Kiwi, the tokenizer or the glossary changes."""
    record = known_tokens.recorded(tokenizer_signature())
    assert record, "known_tokens.json was made with another tokenizer: run `python -m wwt.known_tokens_write`"
    assert record == known_tokens_write.compute()
    assert set(record) == set(known_tokens_write.glossary_words())
    # what a search gets for such a word: the record's answer, the same as Kiwi's own
    assert tokenize("서버") == record["서버"] and tokenize("쿠버네티스") == record["쿠버네티스"]


@pytest.fixture(scope="module")
def archive(tmp_path_factory, model_dir: Path) -> Path:
    home = tmp_path_factory.mktemp("cold") / "data"
    _ingest(home, model_dir, REAL_FIXTURES / "claude-code" / "spotter__short.jsonl",
            REAL_FIXTURES / "claude-code" / "agentlogs__crud.jsonl")
    return home


def test_an_english_question_is_answered_without_loading_kiwi(archive, model_dir):
    probe = textwrap.dedent(f"""
        import sys
        from wwt.cli import main
        try:
            main(["search", "--all", {QUESTION!r}])
        except SystemExit:
            pass
        print("kiwi loaded:", "kiwipiepy" in sys.modules)
    """)
    env = {**engine_env(archive, Path("/nonexistent"), model_dir), "WWT_ENGINE": "off"}
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert SPOTTER[:8] in proc.stdout
    assert proc.stdout.rstrip().endswith("kiwi loaded: False"), proc.stdout[-300:]


def test_a_cold_engine_answers_an_english_search_before_kiwi_has_loaded(archive, runtime, model_dir,  # noqa: F811
                                                                        tmp_path):
    """Kiwi made slow on purpose (its import sleeps, then leaves a mark): the first search's answer must come
    before the mark — neither the search nor the engine's warm-up may hold it until Kiwi is there."""
    slow = tmp_path / "slow-kiwi"
    (slow / "kiwipiepy").mkdir(parents=True)
    mark = tmp_path / "kiwi-loaded"
    real = next(p for p in sys.path if (Path(p) / "kiwipiepy" / "__init__.py").is_file())
    (slow / "kiwipiepy" / "__init__.py").write_text(textwrap.dedent(f"""
        import time, pathlib
        time.sleep(30)
        pathlib.Path({str(mark)!r}).touch()
        __path__.append({str(Path(real) / "kiwipiepy")!r})
        exec(compile(open({str(Path(real) / "kiwipiepy" / "__init__.py")!r}).read(), __file__, "exec"))
    """))
    env = engine_env(archive, runtime, model_dir, PYTHONPATH=str(slow))
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "wwt", "search", "--all", QUESTION], capture_output=True,
                          text=True, env=env, cwd="/", timeout=300)
    answered = time.monotonic() - started
    assert proc.returncode == 0 and SPOTTER[:8] in proc.stdout and proc.stderr == "", proc.stderr
    assert not mark.exists(), f"the answer ({answered:.1f} s) waited for Kiwi"


def test_the_client_knows_koreans_scripts_as_the_lexical_leg_does():
    """The thin client (stdlib only) decides whether a command needs Kiwi by the same scripts as wwt.lexical."""
    from wwt.engine.client import KIWI_RANGES, needs_kiwi
    from wwt.lexical import _HANGUL_OR_HAN

    assert _HANGUL_OR_HAN.pattern == "[" + "".join(f"\\u{ord(a):04x}-\\u{ord(b):04x}" for a, b in KIWI_RANGES) + "]"
    assert needs_kiwi(["search", "--all", "고랭 최신 버전"]) and needs_kiwi(["search", "漢字"])
    assert not needs_kiwi(["search", "--all", "phoenix server"]) and not needs_kiwi(["검색"])  # argv[0]: the command


@pytest.mark.parametrize(("question", "kiwi"), [("고랭 최신 버전 문서 업데이트", True), (QUESTION, False)])
def test_a_korean_first_search_starts_its_engine_loading_kiwi_from_the_first_moment(
        archive, runtime, model_dir, question, kiwi):  # noqa: F811
    """A cold Korean search waited for the engine's imports, then Kiwi's load (~1 s) after its command arrived:
    the client now tells the engine it starts that Kiwi is needed, and the engine loads it beside the model."""
    from engine_helpers import alive, engine_pids, kill_engines_in

    kill_engines_in(runtime)
    env = engine_env(archive, runtime, model_dir)
    proc = subprocess.run([sys.executable, "-m", "wwt", "search", "--all", question], capture_output=True,
                          text=True, env=env, cwd="/", timeout=300)
    assert proc.returncode == 0, proc.stderr
    [pid] = [p for p in engine_pids(runtime) if alive(p)]
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert (b"--kiwi" in argv) is kiwi, argv
    kill_engines_in(runtime)
