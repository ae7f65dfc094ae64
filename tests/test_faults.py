"""Faults a laptop really sees: the ingest killed with SIGKILL at random points, damaged index files, a
corrupted SQLite file, a full disk, agents deleting their own logs. Real model, real tantivy/hnswlib/SQLite,
real agent logs (copied with fresh ids); the only thing small is the amount of data."""

from __future__ import annotations

import gc
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from _shared import REAL_FIXTURES, claimed_queue_rows

from wwt.errors import out_of_space
from wwt.parsers import parse_file

REAL = REAL_FIXTURES
# one small real log per platform; grown turn by turn by the kill harness
GROWING = [
    ("claude-code/agentlogs__crud.jsonl", "{sid}.jsonl"),
    ("codex-cli/agentlogs__crud.jsonl", "rollout-2026-01-25T10-32-00-{sid}.jsonl"),
    ("gemini-cli/VibeCodingTracker__gemini.jsonl", "session-2026-04-23T12-52-{short}.jsonl"),
]
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
KILLS = 20
SEED = 20260806


def fresh_copy(src: str, pattern: str, dest: Path) -> tuple[Path, str]:
    """A real log with every UUID replaced by a fresh one (a new session the store has never seen)."""
    mapping: dict[str, str] = {}
    text = UUID.sub(lambda m: mapping.setdefault(m.group(0), str(uuid.uuid4())), (REAL / src).read_text())
    first = next(iter(mapping.values()))
    path = dest / pattern.format(sid=first, short=first[:8])
    path.write_text(text)
    return path, first


def fresh_ids(text: str) -> str:
    """Every UUID in ``text`` replaced by a fresh one, consistently."""
    mapping: dict[str, str] = {}
    return UUID.sub(lambda m: mapping.setdefault(m.group(0), str(uuid.uuid4())), text)


def wwt_env(home: Path, model_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("WWT_DEBUG", "CLAUDE_CONFIG_DIR", "CODEX_HOME")}
    env.update(WWT_HOME=str(home), WWT_MODEL_DIR=str(model_dir), HOME=str(home.parent), NO_COLOR="1",
               COLUMNS="120", **extra)
    return env


def run_wwt(*args: str, env: dict[str, str], cwd: Path | None = None, preexec=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wwt", *args], capture_output=True, text=True, env=env,
                          cwd=str(cwd) if cwd else None, stdin=subprocess.DEVNULL, timeout=600, preexec_fn=preexec)


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def db_facts(db: Path) -> dict:
    """Chunk keys, duplicates and message counts straight from the SQLite file."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        keys = [r[0] for r in conn.execute("SELECT chunk_key FROM chunks")]
        messages = dict(conn.execute("SELECT session_id, COUNT(*) FROM messages GROUP BY session_id").fetchall())
        embeddings = conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
    finally:
        conn.close()
    return {"keys": set(keys), "duplicates": len(keys) - len(set(keys)), "messages": messages,
            "embeddings": embeddings}


def indexes_agree(home: Path) -> bool:
    from wwt.indexes import Indexes
    from wwt.store import Store

    with Store.open(home / "wwt.sqlite3", readonly=True) as store:
        indexes = Indexes.open(home / "index")
        try:
            return not indexes.broken and indexes.verify_against(store)
        finally:
            indexes.close()


# ------------------------------------------------------------------------------------------ kill -9

# A zygote process loads the model once (1 ONNX thread: fork-safe) and forks one ingest child per round; the
# child is SIGKILLed after a seeded random delay within the duration of the latest complete runs (every fifth
# child runs to the end to measure it), so that on a slow or busy machine the kills do not all land in a
# child's start (opening the store and indexes, loading Kiwi). Kiwi is loaded by each child itself (its thread
# pool does not survive fork). Between rounds the transcripts grow by a few real lines, so every child has work.
HARNESS = textwrap.dedent(
    """
    import json, os, random, signal, sqlite3, sys, time
    from pathlib import Path

    home, logs, seed, kills = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    pending = {Path(p): lines for p, lines in json.loads(Path(sys.argv[5]).read_text()).items()}
    from wwt.embedder import load_embedder
    from wwt.indexes import Indexes
    from wwt.ingest import ingest
    from wwt.store import Store

    emb = load_embedder(threads=1)
    emb.embed_passages(["warm up"])
    rng = random.Random(seed)

    def grow():
        for path, lines in pending.items():
            take = rng.randint(1, 4)
            with open(path, "a", encoding="utf-8") as fh:
                fh.writelines(lines[:take])
            del lines[:take]

    def state():
        db = home / "wwt.sqlite3"
        if not db.exists():
            return "no store yet"
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
        try:
            dirty = conn.execute("SELECT COUNT(*) FROM dirty_sessions").fetchone()[0]
        except sqlite3.Error:
            dirty = 0
        finally:
            conn.close()
        synced = (home / "index" / "synced.json").exists()
        return f"dirty={dirty > 0} synced_marker={synced}"

    killed, completed, rounds, durations, states = 0, 0, 0, [], []
    while killed < kills and rounds < kills * 6:
        rounds += 1
        grow()
        # every fifth child runs to the end, so the kill delays follow how long an ingest takes on this
        # machine right now (a busy CI box is several times slower than an idle one)
        estimate = max(durations[-3:]) if durations else 4.0
        delay = 600.0 if rounds % 5 == 1 else rng.uniform(0, estimate * 1.1)
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            try:
                store = Store.open(home / "wwt.sqlite3")
                indexes = Indexes.open(home / "index")
                ingest([logs], store, indexes, lambda: emb)
                os._exit(0)
            except BaseException:
                import traceback
                (home / "child-error.txt").write_text(traceback.format_exc())
                os._exit(3)
        deadline = started + delay
        status = None
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.01)
        else:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            killed += 1
            states.append(state())
        else:
            assert os.WEXITSTATUS(status) == 0, "an ingest child failed: " + (home / "child-error.txt").read_text()
            completed += 1
            durations.append(time.monotonic() - started)
    while any(pending.values()):
        grow()
    # the next ordinary run
    store = Store.open(home / "wwt.sqlite3")
    indexes = Indexes.open(home / "index")
    needed_repair = indexes.needs_repair(store)
    summary = ingest([logs], store, indexes, lambda: emb)
    ok = indexes.verify_against(store)
    indexes.close(); store.close()
    print(json.dumps({"killed": killed, "completed": completed, "states": states, "needed_repair": needed_repair,
                      "verified": ok, "final_embedded": summary.chunks_embedded}))
    """
)


def test_kill_9_at_20_random_points_then_the_next_run_converges_to_a_clean_ingest(tmp_path: Path, model_dir: Path) -> None:
    logs, home = tmp_path / "logs", tmp_path / "data"
    logs.mkdir()
    pending: dict[str, list[str]] = {}
    for src, pattern in GROWING:
        path, _ = fresh_copy(src, pattern, logs)
        lines = path.read_text().splitlines(keepends=True)
        path.write_text("".join(lines[:3]))  # a conversation that is just starting
        pending[str(path)] = lines[3:]
    plan = tmp_path / "pending.json"
    plan.write_text(json.dumps(pending))
    env = wwt_env(home, model_dir, WWT_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", HARNESS, str(home), str(logs), str(SEED), str(KILLS), str(plan)],
                          capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["killed"] >= KILLS
    assert result["verified"], "indexes disagree with SQLite after the recovery run"
    assert len(set(result["states"])) >= 2, result["states"]  # the kills landed in different phases

    # a clean, uninterrupted ingest of the same final logs in a fresh data dir
    clean_logs, clean_home = tmp_path / "clean-logs", tmp_path / "clean"
    shutil.copytree(logs, clean_logs)
    subprocess.run([sys.executable, "-m", "wwt", "ingest", str(clean_logs)], env=wwt_env(clean_home, model_dir),
                   check=True, capture_output=True, timeout=600)
    crashed, clean = db_facts(home / "wwt.sqlite3"), db_facts(clean_home / "wwt.sqlite3")
    assert crashed["keys"] == clean["keys"] and crashed["duplicates"] == 0
    assert crashed["messages"] == clean["messages"]
    assert len(crashed["messages"]) == len(GROWING)
    assert indexes_agree(home)


# A zygote archives the whole real fixture tree (phase 1, no model), then forks back-fill children and
# SIGKILLs each after a seeded random delay within the time the remaining work should take. Each child logs the
# hashes of every batch it sends to the model (before sending it: the kernel keeps the line through a SIGKILL).
BACKFILL_HARNESS = textwrap.dedent(
    """
    import hashlib, json, os, random, signal, sys, time
    from pathlib import Path

    home, logs, seed, kills, sent_log = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    from wwt.embedder import load_embedder
    from wwt.indexes import Indexes
    from wwt.ingest import backfill_vectors, ingest
    from wwt.store import Store

    def no_model():
        raise AssertionError("phase 1 loaded the model")

    store = Store.open(home / "wwt.sqlite3")
    indexes = Indexes.open(home / "index")
    ingest([logs], store, indexes, no_model, backfill=False)
    indexes.close(); store.close()
    emb = load_embedder(threads=1)
    t0 = time.monotonic()
    emb.embed_passages(["warm up, a passage about sqlite and the ingest lock"] * 2)
    per_text = (time.monotonic() - t0) / 2

    class Logging:
        info = emb.info
        def embed_passages(self, texts):
            line = json.dumps([os.getpid(), [hashlib.sha256(t.encode()).hexdigest()[:16] for t in texts]])
            fd = os.open(sent_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            os.write(fd, (line + "\\n").encode()); os.close(fd)
            return emb.embed_passages(texts)

        def embed_requests(self, texts):
            return emb.embed_requests(texts)

    def pending():
        with Store.open(home / "wwt.sqlite3") as s:
            done, total = s.vector_progress()
        return total - done

    rng = random.Random(seed)
    children = []
    while len([c for c in children if c[1] == "killed"]) < kills and pending():
        estimate = max(1.0, pending() * per_text * 3)
        delay = rng.uniform(0, estimate)
        pid = os.fork()
        if pid == 0:
            try:
                store = Store.open(home / "wwt.sqlite3")
                indexes = Indexes.open(home / "index")
                backfill_vectors(store, indexes, Logging, lock_timeout=-1)
                os._exit(0)
            except BaseException:
                import traceback
                (home / "child-error.txt").write_text(traceback.format_exc())
                os._exit(3)
        deadline = time.monotonic() + delay
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.01)
        else:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            synced = (home / "index" / "synced.json").exists()
            children.append([pid, "killed", synced])
        else:
            assert os.WEXITSTATUS(status) == 0, "a back-fill child failed: " + (home / "child-error.txt").read_text()
            children.append([pid, "done", True])
    left = pending()
    store = Store.open(home / "wwt.sqlite3")
    indexes = Indexes.open(home / "index")
    final = backfill_vectors(store, indexes, Logging, lock_timeout=-1)
    ok = indexes.verify_against(store)
    distinct = store.conn.execute("SELECT COUNT(DISTINCT embed_hash) FROM chunks").fetchone()[0]
    stored = store.conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
    indexes.close(); store.close()
    print(json.dumps({"children": children, "left": left, "final_embedded": final.embedded,
                      "final_pending": final.pending, "verified": ok, "distinct": distinct, "stored": stored,
                      "final_pid": os.getpid()}))
    """
)


def test_kill_9_during_the_vector_backfill_resumes_without_embedding_anything_twice(
    tmp_path: Path, model_dir: Path
) -> None:
    logs, home = tmp_path / "logs", tmp_path / "data"
    for src in sorted(REAL.rglob("*.json*")):
        dest = logs / src.relative_to(REAL)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(fresh_ids(src.read_text()))
    home.mkdir()
    sent = tmp_path / "sent.jsonl"
    proc = subprocess.run([sys.executable, "-c", BACKFILL_HARNESS, str(home), str(logs), str(SEED), "8", str(sent)],
                          capture_output=True, text=True, env=wwt_env(home, model_dir, WWT_THREADS="1"), timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    killed = [c for c in result["children"] if c[1] == "killed"]
    assert len(killed) >= 3, result["children"]
    assert result["verified"], "indexes disagree with SQLite after the resumed back-fill"
    assert result["final_pending"] == 0 and result["stored"] == result["distinct"]
    assert result["final_embedded"] <= result["left"]  # the resumed run only did what was still pending

    # nothing embedded twice: a text sent again was in flight (the last batch) of a child that was killed
    batches = [json.loads(line) for line in sent.read_text().splitlines()]
    last_batch = {}
    for pid, hashes in batches:
        last_batch[pid] = set(hashes)
    fate = {pid: how for pid, how, _ in result["children"]}
    first_sender: dict[str, int] = {}
    for pid, hashes in batches:
        for h in hashes:
            earlier = first_sender.setdefault(h, pid)
            if earlier != pid:
                assert fate.get(earlier) == "killed" and h in last_batch[earlier], (h, earlier, pid)
    assert indexes_agree(home)


# ------------------------------------------------------------------------------------------ shared archive


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory, model_dir: Path) -> dict:
    """Three real logs (one per platform, fresh ids) ingested through `wwt ingest`; tests copy it."""
    root = tmp_path_factory.mktemp("archive")
    logs = root / "logs with spaces ✓"
    logs.mkdir()
    sessions = {}
    for src, pattern in GROWING:
        path, sid = fresh_copy(src, pattern, logs)
        sessions[src.split("/")[0]] = (path, sid)
    home = root / "data"
    proc = run_wwt("ingest", str(logs), env=wwt_env(home, model_dir))
    assert proc.returncode == 0, proc.stderr
    return {"root": root, "logs": logs, "home": home, "sessions": sessions}


def clone(archive: dict, dest: Path) -> Path:
    home = dest / "data"
    shutil.copytree(archive["home"], home)
    return home


def test_deleted_or_corrupted_index_files_are_rebuilt_from_sqlite_without_embedding(
    archive: dict, tmp_path: Path, model_dir: Path
) -> None:
    from wwt.indexes import LEXICAL_DIR, VECTOR_DIR
    from wwt.service import Memory

    home = clone(archive, tmp_path)
    before = db_facts(home / "wwt.sqlite3")
    query = "create a file JOKE.md with a random joke"  # the Claude and the Codex session both say this
    memory = Memory(home)
    try:
        intact = memory.search(query, limit=3)[0].session_id  # what the undamaged archive answers
    finally:
        memory.close()
    damages = {
        "hnswlib graph overwritten": lambda: [p.write_bytes(os.urandom(p.stat().st_size))
                                              for p in (home / "index" / VECTOR_DIR).glob("*.hnsw")],
        "vector folder deleted": lambda: shutil.rmtree(home / "index" / VECTOR_DIR),
        "tantivy meta.json garbage": lambda: (home / "index" / LEXICAL_DIR / "meta.json").write_text("{garbage"),
        "tantivy segment files truncated": lambda: [p.write_bytes(b"") for p in (home / "index" / LEXICAL_DIR).iterdir()
                                                    if p.suffix in (".term", ".idx", ".store")],
        "tantivy folder deleted": lambda: shutil.rmtree(home / "index" / LEXICAL_DIR),
        "whole index folder deleted": lambda: shutil.rmtree(home / "index"),
    }
    for name, damage in damages.items():
        # the previous Memory's index files must be unmapped before they are damaged: truncating a file a live
        # mmap still covers is a SIGBUS at the next touch (that is the test's doing, not a damaged-disk case)
        gc.collect()
        damage()
        memory = Memory(home)
        try:
            hits = memory.search(query, limit=3)
        finally:
            memory.close()
            del memory
        assert hits and hits[0].session_id == intact, name
        assert indexes_agree(home), name
        after = db_facts(home / "wwt.sqlite3")
        assert after["embeddings"] == before["embeddings"] and after["keys"] == before["keys"], name


CORRUPTIONS = {
    "random pages overwritten": lambda b: b[:4096] + bytes((x ^ 0x5A) for x in b[4096:]),
    "header destroyed": lambda b: b"this is not sqlite" + b[18:],
    "truncated to one page": lambda b: b[:4096],
}


def test_a_corrupted_store_is_a_clear_one_line_error_with_a_recovery_path(
    archive: dict, tmp_path: Path, model_dir: Path
) -> None:
    home = clone(archive, tmp_path)
    db = home / "wwt.sqlite3"
    pristine = db.read_bytes()
    env = wwt_env(home, model_dir)
    _, claude_sid = archive["sessions"]["claude-code"]
    every_command = (["search", "--all", "JOKE.md"], ["show", claude_sid[:8]], ["status"],
                     ["forget", claude_sid, "--yes"], ["ingest", str(archive["logs"])])
    for n, (name, corrupt) in enumerate(CORRUPTIONS.items()):
        db.write_bytes(corrupt(pristine))
        for args in every_command if n == 0 else every_command[:1]:
            line = assert_one_line_error(run_wwt(*args, env=env), str(db))
            assert "mv " in line and "wwt ingest" in line, (name, line)  # the documented recovery, in the error
    # follow it: move the file away, re-ingest from the agents' logs
    shutil.move(db, tmp_path / "wwt.sqlite3.bad")
    assert run_wwt("ingest", str(archive["logs"]), env=env).returncode == 0
    found = run_wwt("search", "--all", "--json", "JOKE.md", env=env)
    assert found.returncode == 0 and claude_sid in found.stdout
    assert indexes_agree(home)


def _mount_tmpfs(where: Path, size_kb: int) -> bool:
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k,mode=0700", "tmpfs", str(where)],
                          capture_output=True).returncode == 0


def _limit_file_size(limit: int):
    def apply() -> None:
        import resource
        import signal

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.parametrize("how", ["tmpfs", "rlimit"])
def test_a_full_disk_is_a_clear_error_and_the_next_run_completes_without_loss(
    archive: dict, tmp_path: Path, model_dir: Path, how: str
) -> None:
    mount = tmp_path / "disk"
    big_logs = tmp_path / "big"
    big_logs.mkdir()
    big, big_sid = fresh_copy("claude-code/spotter__subagent.jsonl", "{sid}.jsonl", big_logs)
    fresh_copy("codex-cli/agentlogs__images.jsonl", "rollout-2026-01-25T10-32-00-{sid}.jsonl", big_logs)
    used = sum(p.stat().st_size for p in archive["home"].rglob("*") if p.is_file())
    preexec = None
    if how == "tmpfs":
        if not _mount_tmpfs(mount, (used + 120_000) // 1024):
            pytest.skip("cannot mount a tmpfs here (not root); the rlimit case covers the code path")
    else:
        mount.mkdir()
        preexec = _limit_file_size(os.path.getsize(archive["home"] / "wwt.sqlite3") + 40_000)
    try:
        home = mount / "data"
        shutil.copytree(archive["home"], home)
        env = wwt_env(home, model_dir)
        before = db_facts(home / "wwt.sqlite3")
        full = run_wwt("ingest", str(big_logs), env=env, preexec=preexec)
        line = assert_one_line_error(full)
        assert "space" in line or "full" in line, line
        # what was archived before is intact and searchable, and nothing half-written shows
        assert run_wwt("status", env=env).returncode == 0
        after = db_facts(home / "wwt.sqlite3")
        assert before["keys"] <= after["keys"] and after["duplicates"] == 0
        if how == "tmpfs":
            subprocess.run(["mount", "-o", "remount,size=64m", str(mount)], check=True)
        ok = run_wwt("ingest", str(big_logs), env=env)
        assert ok.returncode == 0, ok.stderr
        facts = db_facts(home / "wwt.sqlite3")
        assert facts["duplicates"] == 0 and before["keys"] <= facts["keys"]
        expected, _ = parse_file(big)
        assert facts["messages"][big_sid] == len(expected[0].messages)
        assert indexes_agree(home)
    finally:
        if how == "tmpfs":
            subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_log_deleted_by_its_agent_stays_searchable_and_showable(archive: dict, tmp_path: Path, model_dir: Path) -> None:
    home = clone(archive, tmp_path)
    logs = tmp_path / "logs"
    shutil.copytree(archive["logs"], logs)
    env = wwt_env(home, model_dir)
    path, sid = archive["sessions"]["codex-cli"]
    copy = logs / path.name
    assert run_wwt("ingest", str(logs), env=env).returncode == 0
    copy.unlink()  # Codex/Claude clean up old sessions by themselves
    again = run_wwt("ingest", str(logs), env=env)
    assert again.returncode == 0, again.stderr
    found = run_wwt("search", "--all", "--json", "--source", "codex-cli", "JOKE.md", env=env)
    assert found.returncode == 0 and sid in found.stdout
    shown = run_wwt("show", sid, "--limit", "100", env=env)
    assert shown.returncode == 0 and "JOKE.md" in shown.stdout
    with sqlite3.connect(home / "wwt.sqlite3") as conn:
        assert conn.execute("SELECT COUNT(*) FROM messages WHERE session_id=?", (sid,)).fetchone()[0] > 5


def test_out_of_space_is_recognised_from_sqlite_the_os_and_the_index_libraries() -> None:
    import errno

    full = sqlite3.OperationalError("database or disk is full")
    full.sqlite_errorname = "SQLITE_FULL"
    assert out_of_space(full)
    assert out_of_space(OSError(errno.ENOSPC, "No space left on device"))
    assert out_of_space(ValueError("Failed to write: File too large (os error 27)"))  # tantivy's wording
    assert not out_of_space(sqlite3.OperationalError("no such table: chunks"))
    assert not out_of_space(OSError(errno.EACCES, "Permission denied"))


def _archived(db: Path, session_id: str) -> bool:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute("SELECT COUNT(*) FROM chunks WHERE session_id=?", (session_id,)).fetchone()[0] > 0
        finally:
            conn.close()
    except sqlite3.Error:
        return False


def _wait(predicate, timeout: float) -> bool:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_a_worker_killed_mid_ingest_does_not_strand_its_claimed_files(tmp_path: Path, model_dir: Path) -> None:
    from wwt.hook import worker_running

    logs, home = tmp_path / "logs", tmp_path / "data"
    logs.mkdir()
    first, first_sid = fresh_copy(*GROWING[0], logs)
    second, second_sid = fresh_copy(*GROWING[2], logs)
    env = wwt_env(home, model_dir, WWT_WORKER_DEBOUNCE_S="0.2", WWT_WORKER_IDLE_S="3")

    def hook(path: Path, platform: str, sid: str) -> None:
        payload = json.dumps({"session_id": sid, "transcript_path": str(path), "hook_event_name": "Stop"})
        subprocess.run([sys.executable, "-m", "wwt", "hook", platform], input=payload, text=True, env=env,
                       capture_output=True, timeout=60, check=True)

    hook(first, "claude-code", first_sid)
    db = home / "wwt.sqlite3"
    assert _wait(lambda: claimed_queue_rows(db) > 0, 60), "the worker never claimed the queued file"
    pid = int((home / "worker.spawn").read_text().split()[0])
    os.kill(pid, 9)  # mid-ingest: the model is still loading or the file is being embedded
    assert _wait(lambda: not worker_running(home), 10)
    hook(second, "gemini-cli", second_sid)  # the next turn anywhere starts a new worker
    assert _wait(lambda: _archived(db, first_sid) and _archived(db, second_sid), 120), (
        (home / "ingest.log").read_text()[-2000:])
    assert _wait(lambda: not worker_running(home), 30), "worker did not exit when idle"
    assert "re-queued 1 item(s)" in (home / "ingest.log").read_text()
    assert indexes_agree(home)


def test_a_steady_stream_of_hooks_does_not_starve_the_worker(tmp_path: Path, model_dir: Path) -> None:
    """Many busy sessions are never quiet for the debounce time: the worker must ingest anyway."""
    import time

    from wwt.hook import TOUCH_FILE, worker_running

    logs, home = tmp_path / "logs", tmp_path / "data"
    logs.mkdir()
    path, sid = fresh_copy(*GROWING[0], logs)
    env = wwt_env(home, model_dir, WWT_WORKER_DEBOUNCE_S="1", WWT_WORKER_MAX_WAIT_S="3", WWT_WORKER_IDLE_S="2")
    payload = json.dumps({"session_id": sid, "transcript_path": str(path), "hook_event_name": "Stop"})
    subprocess.run([sys.executable, "-m", "wwt", "hook", "claude-code"], input=payload, text=True, env=env,
                   capture_output=True, timeout=60, check=True)
    db = home / "wwt.sqlite3"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not _archived(db, sid):
        os.utime(home / TOUCH_FILE)  # what a hook call every 0.2 s does to the debounce clock
        time.sleep(0.2)
    assert _archived(db, sid), "the worker waited for a quiet moment that never came"
    assert _wait(lambda: not worker_running(home), 30)
