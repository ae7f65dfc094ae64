"""Model provisioning: manifest, resolution order, checksum verification, clear one-line failures.

The hub cannot be reached here, so the download path runs against a Hugging Face hub-cache layout built in
``tmp_path`` from the real offline model files (``HF_HOME=... HF_HUB_OFFLINE=1``), with a manifest that pins
those files' own checksums. Download runs go through ``python -m wwt.model_source`` in a subprocess because
huggingface_hub reads ``HF_HOME``/``HF_HUB_OFFLINE`` once at import.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wwt.errors import ModelUnavailable
from wwt.model_source import (
    DEFAULT_MANIFEST,
    STAMP_FILE,
    ModelFile,
    check_model_dir,
    describe_model,
    file_matches,
    load_manifest,
    resolve_model,
)

REAL_MODEL_DIR = os.environ.get("WWT_MODEL_DIR")
# The real model is required (conftest.model_dir fails, never skips, when WWT_MODEL_DIR is unset).
needs_model = pytest.mark.usefixtures("model_dir")
FAKE_COMMIT = "0123456789abcdef0123456789abcdef01e5e5e5"
REPO = "Xenova/multilingual-e5-small"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def real_checksums() -> dict[str, str]:
    folder = Path(REAL_MODEL_DIR)
    return {name: sha256(folder / name) for name in ("model.onnx", "tokenizer.json")}


def write_manifest(path: Path, checksums: dict[str, str], revision: str = FAKE_COMMIT) -> Path:
    folder = Path(REAL_MODEL_DIR)
    data = json.loads(DEFAULT_MANIFEST.read_text(encoding="utf-8"))
    data["revision"] = revision
    data["files"] = [
        {
            "role": "model",
            "repo_path": "onnx/model_quantized.onnx",
            "local_name": "model.onnx",
            "size": (folder / "model.onnx").stat().st_size,
            "sha256": checksums["model.onnx"],
        },
        {
            "role": "tokenizer",
            "repo_path": "tokenizer.json",
            "local_name": "tokenizer.json",
            "size": (folder / "tokenizer.json").stat().st_size,
            "sha256": checksums["tokenizer.json"],
        },
    ]
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def hub_cache(root: Path, tamper_tokenizer: bool = False) -> Path:
    """A hub-cache layout of REPO at FAKE_COMMIT holding the real offline model files."""
    repo = root / "hub" / f"models--{REPO.replace('/', '--')}"
    snap = repo / "snapshots" / FAKE_COMMIT
    (snap / "onnx").mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(FAKE_COMMIT)
    (snap / "onnx" / "model_quantized.onnx").symlink_to(Path(REAL_MODEL_DIR) / "model.onnx")
    tokenizer = snap / "tokenizer.json"
    if tamper_tokenizer:
        data = bytearray((Path(REAL_MODEL_DIR) / "tokenizer.json").read_bytes())
        data[len(data) // 2] ^= 0x01  # one bit, same size: only the checksum can tell
        tokenizer.write_bytes(bytes(data))
    else:
        tokenizer.symlink_to(Path(REAL_MODEL_DIR) / "tokenizer.json")
    return root


def run_entry(env_over: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("WWT_MODEL_DIR", "HF_HOME", "HF_HUB_OFFLINE")}
    env.update(env_over)
    env["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "wwt.model_check", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0]
    return lines[0]


# --- the packaged manifest -------------------------------------------------------------------------------


def test_packaged_manifest_pins_a_commit_and_every_file():
    manifest = load_manifest(DEFAULT_MANIFEST)
    assert manifest.repo_id == REPO
    assert re.fullmatch(r"[0-9a-f]{40}", manifest.revision)
    assert (manifest.dims, manifest.max_tokens) == (384, 512)
    assert (manifest.query_prefix, manifest.passage_prefix) == ("query: ", "passage: ")
    names = {f.local_name: f for f in manifest.files}
    assert {"model.onnx", "tokenizer.json"} <= set(names)
    for spec in manifest.files:
        assert spec.sha256 is None or re.fullmatch(r"[0-9a-f]{64}", spec.sha256)
        assert spec.size and spec.size > 0
    assert names["model.onnx"].repo_path == "onnx/model_quantized.onnx"
    assert manifest.choice  # the one-line reason for the source


def test_unreadable_manifest_is_a_one_line_model_error(tmp_path, monkeypatch):
    bad = tmp_path / "m.json"
    bad.write_text("{not json")
    monkeypatch.setenv("WWT_MODEL_MANIFEST", str(bad))
    with pytest.raises(ModelUnavailable) as err:
        load_manifest()
    assert "\n" not in str(err.value) and "m.json" in str(err.value)


# --- verification rules (small files) --------------------------------------------------------------------


def test_file_matches_checks_size_then_checksum_and_trusts_the_stamp_only_while_unchanged(tmp_path):
    f = tmp_path / "w.bin"
    f.write_bytes(b"weights" * 100)
    spec = ModelFile("model", "w.bin", "w.bin", size=700, sha256=sha256(f))
    stamp: dict = {}
    assert file_matches(f, spec, stamp)
    assert stamp["w.bin"][2] == spec.sha256  # hashed once, recorded with size + mtime

    f.write_bytes(b"weightz" * 100)  # same size, different bytes, new mtime
    assert not file_matches(f, spec, stamp)
    f.write_bytes(b"weights" * 50)  # partial
    assert not file_matches(f, spec, {})
    assert not file_matches(tmp_path / "absent.bin", spec, {})


def test_unpinned_file_needs_only_to_exist_at_its_size(tmp_path):
    f = tmp_path / "c.json"
    f.write_text("{}")
    assert file_matches(f, ModelFile("config", "c.json", "c.json", size=2, sha256=None))
    assert not file_matches(f, ModelFile("config", "c.json", "c.json", size=3, sha256=None))


# --- WWT_MODEL_DIR ---------------------------------------------------------------------------------------


def test_model_dir_without_model_files_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("WWT_MODEL_DIR", str(tmp_path))
    with pytest.raises(ModelUnavailable) as err:
        resolve_model()
    message = str(err.value)
    assert "\n" not in message
    assert "WWT_MODEL_DIR" in message and "model.onnx" in message


def test_missing_model_dir_is_a_clear_error(tmp_path):
    with pytest.raises(ModelUnavailable, match="not a folder"):
        check_model_dir(tmp_path / "nowhere")


@needs_model
def test_model_dir_is_used_as_given_and_described_as_unpinned(monkeypatch, tmp_path):
    monkeypatch.setenv("WWT_HOME", str(tmp_path / "home"))
    info = resolve_model()
    assert info.source == "env" and not info.pinned
    assert info.model_path == Path(REAL_MODEL_DIR) / "model.onnx"
    described = describe_model()
    assert described["available"] and described["source"] == "env"
    assert described["checksums_ok"] is None
    assert described["total_bytes"] >= (Path(REAL_MODEL_DIR) / "model.onnx").stat().st_size


def test_nothing_cached_and_no_download_allowed_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.delenv("WWT_MODEL_DIR", raising=False)
    monkeypatch.setenv("WWT_HOME", str(tmp_path / "home"))
    with pytest.raises(ModelUnavailable, match="WWT_MODEL_DIR"):
        resolve_model(allow_download=False)
    described = describe_model()
    assert described["available"] is False and "WWT_MODEL_DIR" in described["error"]


# --- the download path, offline against a hub-cache layout ------------------------------------------------


@needs_model
def test_download_verifies_installs_then_serves_from_cache(tmp_path, real_checksums):
    hf_home = hub_cache(tmp_path / "hf-home")
    manifest = write_manifest(tmp_path / "manifest.json", real_checksums)
    env = {
        "HF_HOME": str(hf_home),
        "HF_HUB_OFFLINE": "1",
        "WWT_HOME": str(tmp_path / "home"),
        "WWT_MODEL_MANIFEST": str(manifest),
    }

    first = run_entry(env, "--json")
    assert first.returncode == 0, first.stderr
    info = json.loads(first.stdout)
    assert info["source"] == "download" and info["checksums_ok"] is True
    cached = tmp_path / "home" / "models" / "multilingual-e5-small"
    assert Path(info["model_dir"]) == cached
    assert sha256(cached / "tokenizer.json") == real_checksums["tokenizer.json"]
    assert (cached / STAMP_FILE).is_file()

    # second run: no hub needed at all (an empty HF_HOME proves it)
    second = run_entry({**env, "HF_HOME": str(tmp_path / "empty")}, "--json", "--load")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["source"] == "cache"


def test_an_unreachable_hub_is_said_in_seconds_not_after_the_hubs_retries(tmp_path, real_checksums):
    """No network (the name does not resolve): huggingface_hub retried five times with backoff, 24 s before
    `wwt setup` said anything (issue 25). One connection attempt says it at once."""
    manifest = write_manifest(tmp_path / "manifest.json", real_checksums)
    env = {
        "HF_HOME": str(tmp_path / "empty-hf"),
        "HF_ENDPOINT": "https://hub.wwt-test.invalid",  # .invalid never resolves (RFC 2606)
        "WWT_HOME": str(tmp_path / "home"),
        "WWT_MODEL_MANIFEST": str(manifest),
    }
    env = {**env, **{k: "" for k in ("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")}}
    began = time.monotonic()
    proc = run_entry(env)
    took = time.monotonic() - began
    assert_one_line_error(proc, "hub is unreachable", "hub.wwt-test.invalid does not resolve", "WWT_MODEL_DIR")
    assert took < 10, f"{took:.1f} s"  # the interpreter's start included; the hub's own retries took 24 s


@needs_model
def test_an_unreachable_hub_still_serves_the_hugging_face_cache(tmp_path, real_checksums):
    hf_home = hub_cache(tmp_path / "hf-home")
    manifest = write_manifest(tmp_path / "manifest.json", real_checksums)
    env = {
        "HF_HOME": str(hf_home),
        "HF_ENDPOINT": "https://hub.wwt-test.invalid",
        "WWT_HOME": str(tmp_path / "home"),
        "WWT_MODEL_MANIFEST": str(manifest),
        **{k: "" for k in ("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")},
    }
    proc = run_entry(env, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["source"] == "download"


@needs_model
def test_tampered_download_is_rejected_and_not_installed(tmp_path, real_checksums):
    hf_home = hub_cache(tmp_path / "hf-home", tamper_tokenizer=True)
    manifest = write_manifest(tmp_path / "manifest.json", real_checksums)
    env = {
        "HF_HOME": str(hf_home),
        "HF_HUB_OFFLINE": "1",
        "WWT_HOME": str(tmp_path / "home"),
        "WWT_MODEL_MANIFEST": str(manifest),
    }
    proc = run_entry(env)
    assert_one_line_error(proc, "tokenizer.json", "pinned checksum")
    assert not (tmp_path / "home" / "models" / "multilingual-e5-small" / "tokenizer.json").exists()


@needs_model
@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_corrupt_or_partial_cached_file_is_replaced_not_loaded(tmp_path, real_checksums, damage, monkeypatch):
    hf_home = hub_cache(tmp_path / "hf-home")
    manifest = write_manifest(tmp_path / "manifest.json", real_checksums)
    env = {
        "HF_HOME": str(hf_home),
        "HF_HUB_OFFLINE": "1",
        "WWT_HOME": str(tmp_path / "home"),
        "WWT_MODEL_MANIFEST": str(manifest),
    }
    assert run_entry(env).returncode == 0
    cached = tmp_path / "home" / "models" / "multilingual-e5-small" / "tokenizer.json"
    data = bytearray(cached.read_bytes())
    cached.unlink()  # it may be a hard link to the hub cache: never damage that
    if damage == "truncate":
        cached.write_bytes(bytes(data[: len(data) // 3]))
    else:
        data[100] ^= 0xFF
        cached.write_bytes(bytes(data))

    # without a hub the damage is detected and the file removed, never loaded
    monkeypatch.delenv("WWT_MODEL_DIR", raising=False)
    monkeypatch.setenv("WWT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("WWT_MODEL_MANIFEST", str(manifest))
    with pytest.raises(ModelUnavailable, match="tokenizer.json missing"):
        resolve_model(allow_download=False)
    assert not cached.exists()

    # with the hub it is fetched again and verified
    proc = run_entry(env, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["source"] == "download"
    assert sha256(cached) == real_checksums["tokenizer.json"]


def test_no_network_and_no_cache_is_one_line_with_advice_and_no_traceback(tmp_path):
    env = {"HF_HOME": str(tmp_path / "empty-hf"), "HF_HUB_OFFLINE": "1", "WWT_HOME": str(tmp_path / "home")}
    line = assert_one_line_error(run_entry(env, "--load"), "could not download", "WWT_MODEL_DIR", "proxy")
    assert line.startswith("wwt: ")


def test_bad_model_dir_through_the_entry_point_is_one_line(tmp_path):
    proc = run_entry({"WWT_MODEL_DIR": str(tmp_path / "nope"), "WWT_HOME": str(tmp_path / "home")}, "--load")
    assert_one_line_error(proc, "WWT_MODEL_DIR")


def test_unloadable_model_file_through_the_entry_point_is_one_line(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"this is not an onnx graph")
    (folder / "tokenizer.json").write_text('{"not": "a tokenizer"}')
    proc = run_entry({"WWT_MODEL_DIR": str(folder), "WWT_HOME": str(tmp_path / "home")}, "--load")
    assert_one_line_error(proc, "cannot load", "WWT_MODEL_DIR")
