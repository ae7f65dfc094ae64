"""`wwt` end to end, as a user runs it: a fresh process per command, a temp WWT_HOME, the real ONNX model,
real tantivy/hnswlib/SQLite, and copies of real agent logs. Queries were chosen by reading the fixture files
(see ../shared/fixtures/real/SOURCES.md)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from _shared import (
    HOSTILE_ANSWER,
    HOSTILE_QUESTION,
    HOSTILE_SESSION,
    REAL_FIXTURES,
    TERMINAL_CONTROLS,
    write_hostile_transcript,
)

from wwt import __version__
from wwt.when import parse_when

REAL = REAL_FIXTURES
FIXTURE_FILES = [
    "claude-code/VibeCodingTracker__claude_code.jsonl",  # Traditional Chinese: go.mod toolchain, pydantic Field
    "claude-code/spotter__short.jsonl",  # "mix phx.server doesnt seem to start" (project spotter, master)
    "claude-code/agentlogs__crud.jsonl",  # create/read/edit/delete JOKE.md
    "claude-code/episodic-memory__tiny-conversation.jsonl",  # branch feature-branch, 2025-09-19
    "codex-cli/VibeCodingTracker__codex.jsonl",  # Codex, CJK: go.mod → 1.24, 版本需求 sections
    "gemini-cli/VibeCodingTracker__gemini.jsonl",
]
CLAUDE_GO_SESSION = "e9f146fa-3b20-48d0-9be4-d99ca901cae4"
CODEX_GO_SESSION = "01996135-afde-7911-97f0-d863511eca56"
SPOTTER_SERVER_SESSION = "55604662-cf2a-4331-851a-ec234028f8ca"
HEAVY_MODULES = ("onnxruntime", "tantivy", "kiwipiepy", "hnswlib")


def run_wwt(
    *args: str, home: Path, cwd: Path | None = None, model_dir: Path | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "WWT_DEBUG")}
    env.update(WWT_HOME=str(home), HOME=str(home.parent), COLUMNS="120", NO_COLOR="1")
    if model_dir is not None:
        env["WWT_MODEL_DIR"] = str(model_dir)
    return subprocess.run(
        [sys.executable, "-m", "wwt", *args],
        capture_output=True,
        text=True,
        cwd=str(cwd or home.parent),
        env=env,
        input=stdin if stdin is not None else "",
        timeout=600,
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0]


def search_json(*args: str, home: Path, model_dir: Path, cwd: Path | None = None) -> dict:
    result = run_wwt("search", *args, "--json", home=home, model_dir=model_dir, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory, model_dir: Path) -> Path:
    """A data dir holding the fixture logs, ingested once through `wwt ingest` (returns WWT_HOME)."""
    base = tmp_path_factory.mktemp("archive")
    logs = base / "logs"
    for name in FIXTURE_FILES:
        target = logs / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REAL / name, target)
    home = base / "wwt-home"
    result = run_wwt("ingest", str(logs), home=home, model_dir=model_dir)
    assert result.returncode == 0, result.stderr
    n = len(FIXTURE_FILES)
    assert f"files: {n} seen, {n} parsed, 0 unchanged" in result.stdout
    return home


# ---------------------------------------------------------------------------------------------- start-up


def test_help_and_version_are_light(tmp_path: Path) -> None:
    for args in (["--version"], ["--help"]):
        result = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "wwt", *args],
            capture_output=True, text=True, env={**os.environ, "WWT_HOME": str(tmp_path / "h")}, timeout=60,
        )
        assert result.returncode == 0
        imported = {line.split("|")[-1].strip().split(".")[0] for line in result.stderr.splitlines()}
        assert not imported & set(HEAVY_MODULES), imported & set(HEAVY_MODULES)
    version = run_wwt("--version", home=tmp_path / "h")
    assert version.stdout.strip() == f"wwt {__version__}"
    assert not (tmp_path / "h").exists()  # looking never creates the data dir


# ---------------------------------------------------------------------------------------------- user errors


def test_search_before_any_ingest_says_there_is_no_data(tmp_path: Path, model_dir: Path) -> None:
    result = run_wwt("search", "--all", "anything", home=tmp_path / "empty", model_dir=model_dir)
    assert_one_line_error(result, "no data yet", "wwt ingest")
    assert result.returncode == 1


def test_status_before_any_ingest_is_not_an_error(tmp_path: Path, model_dir: Path) -> None:
    result = run_wwt("status", home=tmp_path / "empty", model_dir=model_dir)
    assert result.returncode == 0, result.stderr
    assert "no data yet" in result.stdout


def test_bad_date_is_one_line(archive: Path, model_dir: Path) -> None:
    result = run_wwt("search", "--all", "--since", "last tuesdayish", "go", home=archive, model_dir=model_dir)
    assert_one_line_error(result, "bad date")
    assert result.returncode == 2


def test_unknown_project_suggests_close_names(archive: Path, model_dir: Path) -> None:
    result = run_wwt("search", "--project", "spoter", "server", home=archive, model_dir=model_dir)
    assert_one_line_error(result, "no sessions for project 'spoter'", "spotter")


def test_unknown_source_is_one_line(archive: Path, model_dir: Path) -> None:
    result = run_wwt("search", "--all", "--source", "windsurf", "x", home=archive, model_dir=model_dir)
    assert_one_line_error(result, "unknown --source", "claude-code")


def test_without_a_model_ingest_archives_by_words_and_says_vectors_wait(tmp_path: Path) -> None:
    # An empty WWT_MODEL_DIR: nothing is lost — the session is archived and searchable by words, and the
    # summary says the vectors wait for the model (they are back-filled once it is there).
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(REAL / "claude-code/spotter__short.jsonl", logs)
    empty = tmp_path / "no-model-here"
    empty.mkdir()
    result = run_wwt("ingest", str(logs), home=tmp_path / "h", model_dir=empty)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "files: 1 seen, 1 parsed" in result.stdout
    waiting = [line for line in result.stdout.splitlines() if "wait for vectors" in line]
    assert len(waiting) == 1 and "model is not available" in waiting[0] and "wwt model" in waiting[0]
    found = run_wwt("search", "--all", "--json", "mix phx.server doesnt seem to start", home=tmp_path / "h",
                    model_dir=empty)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["session_id"] == SPOTTER_SERVER_SESSION


@pytest.mark.parametrize("broken", ["empty folder", "corrupt model.onnx"])
def test_without_a_model_search_answers_by_words_with_a_one_line_notice(
    archive: Path, model_dir: Path, tmp_path: Path, broken: str
) -> None:
    # The archive was embedded with the model; now the model is gone or damaged. Search still answers from the
    # lexical leg and says so in one line on stderr (and in --json), instead of failing.
    folder = tmp_path / "model"
    folder.mkdir()
    if broken == "corrupt model.onnx":
        (folder / "model.onnx").write_bytes(b"this is not an ONNX protobuf\n" * 100)
        shutil.copy(model_dir / "tokenizer.json", folder / "tokenizer.json")
    result = run_wwt("search", "--all", "mix phx.server doesnt seem to start", home=archive, model_dir=folder)
    assert result.returncode == 0, result.stderr
    assert "spotter" in result.stdout and SPOTTER_SERVER_SESSION in result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("wwt: words only: the model is not available"), result.stderr
    assert "wwt model" in lines[0]
    shape = json.loads(run_wwt("search", "--all", "--json", "go.mod toolchain", home=archive, model_dir=folder).stdout)
    assert shape["words_only"].startswith("words only") and shape["results"]
    assert {r["session_id"] for r in shape["results"]} & {CLAUDE_GO_SESSION, CODEX_GO_SESSION}


def test_model_print_dir_names_the_folder_in_use(tmp_path: Path, model_dir: Path) -> None:
    result = run_wwt("model", "--print-dir", home=tmp_path / "h", model_dir=model_dir)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(model_dir)


def test_model_fetch_without_the_hub_is_one_line(tmp_path: Path) -> None:
    # No WWT_MODEL_DIR, an empty data dir and no hub: the one line says what to do.
    env = {k: v for k, v in os.environ.items() if k != "WWT_MODEL_DIR"}
    env.update(WWT_HOME=str(tmp_path / "h"), HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1")
    result = subprocess.run(
        [sys.executable, "-m", "wwt", "model", "--fetch"], capture_output=True, text=True, env=env, timeout=120
    )
    assert_one_line_error(result, "WWT_MODEL_DIR")


def test_model_without_a_usable_model_fails_in_one_line(tmp_path: Path) -> None:
    # `wwt model && …` must not go on when there is no model: exit 1 and one line saying what to do.
    (tmp_path / "empty").mkdir()
    given = run_wwt("model", home=tmp_path / "h", model_dir=tmp_path / "empty")
    assert_one_line_error(given, "WWT_MODEL_DIR", "model.onnx")
    assert given.returncode == 1 and given.stdout == ""
    env = {k: v for k, v in os.environ.items() if k != "WWT_MODEL_DIR"}  # nothing downloaded, no hub asked
    env.update(WWT_HOME=str(tmp_path / "h"), HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1")
    cached = subprocess.run([sys.executable, "-m", "wwt", "model"], capture_output=True, text=True, env=env,
                            timeout=120)
    assert_one_line_error(cached, "not downloaded yet")
    assert cached.returncode == 1


def test_ingest_of_a_missing_path_is_one_line(tmp_path: Path, model_dir: Path) -> None:
    result = run_wwt("ingest", str(tmp_path / "nope"), home=tmp_path / "h", model_dir=model_dir)
    assert_one_line_error(result, "no such file or folder")


# ---------------------------------------------------------------------------------------------- search


def test_a_second_ingest_skips_unchanged_files(archive: Path, model_dir: Path) -> None:
    result = run_wwt("ingest", str(archive.parent / "logs"), home=archive, model_dir=model_dir)
    assert result.returncode == 0, result.stderr
    n = len(FIXTURE_FILES)
    assert f"files: {n} seen, 0 parsed, {n} unchanged" in result.stdout
    assert "chunks: +0 -0   embedded: 0" in result.stdout


def test_traditional_chinese_question_finds_the_go_toolchain_session(archive: Path, model_dir: Path) -> None:
    out = search_json("--all", "--source", "claude-code", "為何 go版本 和 toolchain 不一樣", home=archive, model_dir=model_dir)
    assert out["results"][0]["session_id"] == CLAUDE_GO_SESSION
    assert out["results"][0]["resume"] == f"claude --resume {CLAUDE_GO_SESSION}"
    assert out["results"][0]["resume_line"] == f"cd /home/wei/repo/claude-code && claude --resume {CLAUDE_GO_SESSION}"


def test_korean_question_finds_the_english_server_session(archive: Path, model_dir: Path) -> None:
    out = search_json("--all", "phoenix 서버가 시작되지 않아요", home=archive, model_dir=model_dir)
    assert out["results"][0]["session_id"] == SPOTTER_SERVER_SESSION


def test_english_question_finds_the_joke_file_session(archive: Path, model_dir: Path) -> None:
    out = search_json("--all", "create a markdown file with a random joke and then delete it", home=archive,
                      model_dir=model_dir)
    top = out["results"][0]
    assert top["platform"] == "claude-code"
    assert any("JOKE.md" in chunk["text"] for chunk in top["chunks"])


def test_exact_identifier_finds_its_session_and_excerpt(archive: Path, model_dir: Path) -> None:
    out = search_json("--all", "phx.server", home=archive, model_dir=model_dir)
    assert out["results"][0]["session_id"] == SPOTTER_SERVER_SESSION
    assert "phx.server" in out["results"][0]["chunks"][0]["text"]
    assert out["weak"] is False


def test_codex_cjk_session_is_found_and_resumable(archive: Path, model_dir: Path) -> None:
    out = search_json("--all", "--source", "codex-cli", "go.mod 1.24 版本需求", home=archive, model_dir=model_dir)
    assert out["results"], "the Codex session was not found"
    top = out["results"][0]
    assert top["session_id"] == CODEX_GO_SESSION
    assert top["resume"] == f"codex resume {CODEX_GO_SESSION}"
    assert all(r["platform"] == "codex-cli" for r in out["results"])


def test_json_schema_is_stable(archive: Path, model_dir: Path) -> None:
    out = search_json("--all", "-n", "2", "toolchain", home=archive, model_dir=model_dir)
    assert set(out) >= {"version", "query", "scope", "filters", "weak", "results"}
    assert out["query"] == "toolchain" and out["scope"] == "all projects" and out["version"] == 1
    assert 1 <= len(out["results"]) <= 2
    for result in out["results"]:
        assert set(result) >= {"session_id", "platform", "project", "git_branch", "cwd", "started_at", "ended_at",
                               "title", "score", "chunks", "resume", "resume_line"}
        assert 1 <= len(result["chunks"]) <= 3
        for chunk in result["chunks"]:
            assert set(chunk) >= {"chunk_id", "text", "score", "start_ts", "end_ts", "first_seq", "last_seq"}
    scores = [r["score"] for r in out["results"]]
    assert scores == sorted(scores, reverse=True)


def test_filters_restrict_every_result(archive: Path, model_dir: Path) -> None:
    by_project = search_json("--project", "spotter", "server", home=archive, model_dir=model_dir)
    assert by_project["results"] and {r["project"] for r in by_project["results"]} == {"spotter"}

    by_branch = search_json("--all", "--branch", "feature-branch", "instructions", home=archive, model_dir=model_dir)
    assert by_branch["results"] and {r["git_branch"] for r in by_branch["results"]} == {"feature-branch"}

    since = search_json("--all", "--since", "2026-01-01", "server", home=archive, model_dir=model_dir)
    assert since["results"]
    assert all(c["end_ts"] >= "2026-01-01" for r in since["results"] for c in r["chunks"])

    until = search_json("--all", "--until", "2025-09-01", "version", home=archive, model_dir=model_dir)
    assert until["results"]
    assert all(c["start_ts"] <= "2025-09-02" for r in until["results"] for c in r["chunks"])


def test_default_scope_is_the_project_of_the_current_folder(archive: Path, model_dir: Path, tmp_path: Path) -> None:
    repo = tmp_path / "spotter"
    (repo / ".git").mkdir(parents=True)
    (repo / "lib" / "web").mkdir(parents=True)
    out = search_json("server", home=archive, model_dir=model_dir, cwd=repo / "lib" / "web")
    assert out["scope"] == "project spotter"
    assert out["results"] and {r["project"] for r in out["results"]} == {"spotter"}

    elsewhere = tmp_path / "unrelated-folder"
    elsewhere.mkdir()
    result = run_wwt("search", "server", home=archive, model_dir=model_dir, cwd=elsewhere)
    assert_one_line_error(result, "no sessions for project 'unrelated-folder'", "searched nothing", "--all")


def test_text_output_shows_where_and_how_to_resume(archive: Path, model_dir: Path) -> None:
    result = run_wwt("search", "--all", "-n", "1", "phx.server", home=archive, model_dir=model_dir)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("1. spotter @master  Claude Code  2026-02-1")
    assert "phx.server" in result.stdout
    assert f"resume: cd /home/marco/projects/spotter && claude --resume {SPOTTER_SERVER_SESSION}" in result.stdout
    assert max(len(line) for line in lines if "resume:" not in line) <= 120


# ---------------------------------------------------------------------------------------------- show / status


def test_show_pages_through_the_archived_conversation(archive: Path, model_dir: Path) -> None:
    result = run_wwt("show", SPOTTER_SERVER_SESSION[:8], home=archive, model_dir=model_dir)
    assert result.returncode == 0, result.stderr
    assert SPOTTER_SERVER_SESSION in result.stdout
    assert "mix phx.server doesnt seem to start" in result.stdout

    page = run_wwt("show", CLAUDE_GO_SESSION, "--limit", "3", home=archive, model_dir=model_dir)
    assert page.returncode == 0, page.stderr
    assert f"wwt show {CLAUDE_GO_SESSION} --start 3 --limit 3" in page.stdout


def test_show_around_a_chunk_from_search(archive: Path, model_dir: Path) -> None:
    hit = search_json("--all", "-n", "1", "pydantic Field markdown", home=archive, model_dir=model_dir)["results"][0]
    chunk = hit["chunks"][0]
    result = run_wwt("show", hit["session_id"], "--around", chunk["chunk_id"], "--limit", "8", home=archive,
                     model_dir=model_dir)
    assert result.returncode == 0, result.stderr
    assert f"[{chunk['first_seq']}]" in result.stdout


def test_show_unknown_session_is_one_line(archive: Path, model_dir: Path) -> None:
    assert_one_line_error(run_wwt("show", "zzzz9999", home=archive, model_dir=model_dir), "no archived session")


def test_status_counts_what_was_archived(archive: Path, model_dir: Path) -> None:
    result = run_wwt("status", home=archive, model_dir=model_dir)
    assert result.returncode == 0, result.stderr
    assert "sessions:" in result.stdout and "Claude Code" in result.stdout
    assert "last ingest:" in result.stdout and "model:" in result.stdout


# ---------------------------------------------------------------------------------------------- terminal safety


def test_show_and_search_never_send_archived_control_characters_to_the_terminal(
    tmp_path: Path, model_dir: Path
) -> None:
    """A transcript holding ESC sequences, NUL and bidi overrides is printed with visible escapes; the archive
    (seen through --json) keeps the text exactly as the agent wrote it."""
    write_hostile_transcript(tmp_path / "logs")
    home = tmp_path / "wwt-home"
    assert run_wwt("ingest", str(tmp_path / "logs"), home=home, model_dir=model_dir).returncode == 0
    shown = run_wwt("show", HOSTILE_SESSION[:8], home=home, model_dir=model_dir)
    found = run_wwt("search", "--all", "payments deploy invoice", home=home, model_dir=model_dir)
    for result in (shown, found):
        assert result.returncode == 0, result.stderr
        assert not [c for c in TERMINAL_CONTROLS if c in result.stdout], repr(result.stdout)
        assert "\\x1b]0;pwned\\x07" in result.stdout and "invoice\\u202etxt.exe" in result.stdout
    # tab (rich expands it), newline kept (each line of a message after the gutter `│ `)
    assert re.search(r"\\x1b\[31m exits\\x9b0m early\.\s+see\n│ below", shown.stdout)
    (hit,) = search_json("--all", "payments deploy invoice", home=home, model_dir=model_dir)["results"]
    stored = hit["chunks"][0]["text"]
    assert HOSTILE_QUESTION in stored and "\u202e" in stored and "\x1b[31m" in stored
    assert HOSTILE_ANSWER.split("\t")[0] in stored


def test_a_new_archive_is_not_a_repair_but_a_damaged_index_is_reported(tmp_path: Path, model_dir: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(REAL / "claude-code/agentlogs__crud.jsonl", logs)
    home = tmp_path / "wwt-home"
    first = run_wwt("ingest", str(logs), home=home, model_dir=model_dir)
    assert first.returncode == 0, first.stderr
    assert "files: 1 seen, 1 parsed" in first.stdout and "repair" not in first.stdout
    (home / "index" / "vectors" / "vectors.json").write_text("{garbage")
    again = run_wwt("ingest", str(logs), home=home, model_dir=model_dir)
    assert again.returncode == 0, again.stderr
    assert "indexes repaired from the archive: vector rebuilt, vector_added" in again.stdout
    assert search_json("--all", "JOKE.md", home=home, model_dir=model_dir)["results"]


# ---------------------------------------------------------------------------------------------- deleting


@pytest.fixture
def small_archive(tmp_path: Path, model_dir: Path) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(REAL / "claude-code/spotter__short.jsonl", logs)
    shutil.copy(REAL / "claude-code/agentlogs__crud.jsonl", logs)
    home = tmp_path / "wwt-home"
    assert run_wwt("ingest", str(logs), home=home, model_dir=model_dir).returncode == 0
    return home


def test_forget_asks_then_removes_the_session_for_good(small_archive: Path, model_dir: Path) -> None:
    refused = run_wwt("forget", SPOTTER_SERVER_SESSION, home=small_archive, model_dir=model_dir)
    assert_one_line_error(refused, "--yes")
    assert search_json("--all", "phx.server", home=small_archive, model_dir=model_dir)["results"]

    done = run_wwt("forget", SPOTTER_SERVER_SESSION[:8], "--yes", home=small_archive, model_dir=model_dir)
    assert done.returncode == 0, done.stderr
    assert "forgot 1" in done.stdout
    after = search_json("--all", "phx.server", home=small_archive, model_dir=model_dir)
    assert SPOTTER_SERVER_SESSION not in {r["session_id"] for r in after["results"]}
    assert run_wwt("show", SPOTTER_SERVER_SESSION, home=small_archive, model_dir=model_dir).returncode != 0


def test_reindex_then_reset_lists_what_it_deletes_and_deletes_it(small_archive: Path, model_dir: Path) -> None:
    shutil.rmtree(small_archive / "index" / "lexical")  # a damaged index: reindex rebuilds it from SQLite
    rebuilt = run_wwt("reindex", home=small_archive, model_dir=model_dir)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert any((small_archive / "index" / "lexical").iterdir())
    found = search_json("--all", "phx.server", home=small_archive, model_dir=model_dir)
    assert found["results"][0]["session_id"] == SPOTTER_SERVER_SESSION

    result = run_wwt("reset", "--yes", home=small_archive, model_dir=model_dir)
    assert result.returncode == 0, result.stderr
    assert "wwt.sqlite3" in result.stdout and "index" in result.stdout
    assert not (small_archive / "wwt.sqlite3").exists()
    assert_one_line_error(run_wwt("search", "--all", "x", home=small_archive, model_dir=model_dir), "no data yet")


# ---------------------------------------------------------------------------------------------- dates


NOW = datetime(2026, 3, 10, 15, 30, tzinfo=timezone.utc)


def test_relative_and_iso_dates_become_utc_timestamps() -> None:
    assert parse_when("7d", now=NOW) == "2026-03-03T15:30:00Z"
    assert parse_when("2w", now=NOW) == "2026-02-24T15:30:00Z"
    assert parse_when("12h", now=NOW) == "2026-03-10T03:30:00Z"
    assert parse_when("2026-01-31T10:00:00Z") == "2026-01-31T10:00:00Z"


def test_a_bare_date_as_upper_bound_covers_the_whole_day() -> None:
    start = parse_when("2026-01-31")
    end = parse_when("2026-01-31", end_of_day=True)
    assert end > start
    span = datetime.fromisoformat(end.replace("Z", "+00:00")) - datetime.fromisoformat(start.replace("Z", "+00:00"))
    assert span.total_seconds() == pytest.approx(86399, abs=1)


def test_yesterday_is_before_today() -> None:
    assert parse_when("yesterday", now=NOW) < parse_when("today", now=NOW) < parse_when("today", True, now=NOW)


# ---------------------------------------------------------------------------------------------- project


def test_the_project_is_the_git_root_folder_name(tmp_path: Path) -> None:
    from wwt.project import current_project, find_project_root

    repo = tmp_path / "my-repo"
    (repo / "src" / "deep").mkdir(parents=True)
    (repo / ".git").write_text("gitdir: /elsewhere/worktrees/x\n")  # a worktree's .git is a file
    assert find_project_root(repo / "src" / "deep") == repo
    assert current_project(repo / "src" / "deep") == "my-repo"


def test_without_git_the_project_is_the_folder_name(tmp_path: Path) -> None:
    from wwt.project import current_project

    plain = tmp_path / "notes"
    plain.mkdir()
    assert current_project(plain) == "notes"


def test_a_corrupt_store_is_one_line_not_a_traceback(tmp_path: Path, model_dir: Path) -> None:
    home = tmp_path / "h"
    home.mkdir()
    (home / "wwt.sqlite3").write_bytes(b"this is not a database at all" * 100)
    result = run_wwt("search", "--all", "anything", home=home, model_dir=model_dir)
    assert_one_line_error(result, "wwt.sqlite3")


def test_model_command_describes_the_model_in_use(tmp_path: Path, model_dir: Path) -> None:
    result = run_wwt("model", home=tmp_path / "h", model_dir=model_dir)
    assert result.returncode == 0, result.stderr
    assert str(model_dir) in result.stdout and "model.onnx" in result.stdout


def test_a_question_about_a_product_never_discussed_names_it_above_the_closest_matches(
    archive: Path, model_dir: Path
) -> None:
    out = search_json("--all", "setting up Traefik middlewares for the admin API", home=archive, model_dir=model_dir)
    assert out["weak"] is True and out["absent"][0] == "Traefik"  # names first, then topic words (middlewares)
    result = run_wwt("search", "--all", "setting up Traefik middlewares for the admin API", home=archive,
                     model_dir=model_dir)
    assert result.returncode == 0
    assert "nothing in memory mentions Traefik" in result.stdout


def test_a_question_about_a_technique_never_discussed_names_it(archive: Path, model_dir: Path) -> None:
    """No product name in it, only a topic term the archive never mentions in either language (failover /
    페일오버): nothing here answers it, and the warning says which word is missing."""
    for question, word in (("how did we test the database failover", "failover"),
                           ("데이터베이스 페일오버 테스트했던 거", "페일오버")):
        out = search_json("--all", question, home=archive, model_dir=model_dir)
        assert out["weak"] is True and word in out["absent"], (question, out["absent"])

