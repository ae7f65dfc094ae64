"""Where the embedding model comes from, and proof that it is the file we meant.

Resolution order (first hit wins):

1. ``WWT_MODEL_DIR`` — a folder with ``model.onnx`` + ``tokenizer.json``, used as given (no pinned
   checksum: it may be a local export such as the offline build), but checked for presence.
2. The cached copy under the data dir (``$WWT_HOME/models/<name>/``), verified against the manifest.
   Verification hashes a file once and then records its size and mtime in ``.verified.json``; a file whose
   size or mtime changed since is hashed again, and a partial or corrupt file is deleted and fetched anew.
3. A download with ``huggingface-hub`` at the manifest's pinned commit (its own progress bar, resumable
   ``.incomplete`` files, proxies from ``HTTPS_PROXY``), re-hashed before it is installed into the cache.
4. Otherwise one clear line (:class:`wwt.errors.ModelUnavailable`) that says what to do.

The manifest ships in the package (``wwt/manifest/multilingual-e5-small.json``); ``WWT_MODEL_MANIFEST``
points at another one (a mirror, or tests that pin the checksums of locally built files).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wwt import paths
from wwt.errors import ModelUnavailable, WwtError
from wwt.fileio import atomic_write

MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
STAMP_FILE = ".verified.json"
DEFAULT_MANIFEST = Path(__file__).parent / "manifest" / "multilingual-e5-small.json"
HASH_BLOCK = 1 << 20
WHAT_TO_DO = (
    "check the network or proxy (HTTPS_PROXY) and retry, "
    "or set WWT_MODEL_DIR to a folder with model.onnx and tokenizer.json"
)


@dataclass(frozen=True)
class ModelFile:
    role: str
    repo_path: str
    local_name: str
    size: int | None
    sha256: str | None


@dataclass(frozen=True)
class Manifest:
    name: str
    repo_id: str
    revision: str
    files: tuple[ModelFile, ...]
    dims: int
    max_tokens: int
    query_prefix: str
    passage_prefix: str
    choice: str = ""
    path: Path | None = None

    @property
    def label(self) -> str:
        return f"{self.repo_id}@{self.revision[:12]}"


@dataclass(frozen=True)
class ModelInfo:
    """A resolved model folder. ``source`` is ``env``, ``cache`` or ``download``."""

    model_dir: Path
    source: str
    manifest: Manifest
    pinned: bool

    @property
    def model_path(self) -> Path:
        return self.model_dir / MODEL_FILE

    @property
    def tokenizer_path(self) -> Path:
        return self.model_dir / TOKENIZER_FILE


def load_manifest(path: Path | None = None) -> Manifest:
    """Read a manifest (``WWT_MODEL_MANIFEST`` or the packaged one)."""
    if path is None:
        raw_env = os.environ.get("WWT_MODEL_MANIFEST")
        path = Path(raw_env).expanduser() if raw_env else DEFAULT_MANIFEST
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        files = tuple(
            ModelFile(
                role=f["role"],
                repo_path=f["repo_path"],
                local_name=f["local_name"],
                size=f.get("size"),
                sha256=(f.get("sha256") or None),
            )
            for f in data["files"]
        )
        manifest = Manifest(
            name=data["name"],
            repo_id=data["repo_id"],
            revision=data["revision"],
            files=files,
            dims=int(data["dims"]),
            max_tokens=int(data["max_tokens"]),
            query_prefix=data["query_prefix"],
            passage_prefix=data["passage_prefix"],
            choice=data.get("choice", ""),
            path=Path(path),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelUnavailable(f"model manifest {path} is unreadable ({type(exc).__name__}: {exc})") from None
    local_names = {f.local_name for f in files}
    if not {MODEL_FILE, TOKENIZER_FILE} <= local_names:
        raise ModelUnavailable(f"model manifest {path} must list {MODEL_FILE} and {TOKENIZER_FILE}")
    return manifest


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def cache_dir(manifest: Manifest) -> Path:
    """The model's folder under the data dir (``$WWT_HOME/models/<name>``)."""
    return paths.models_dir() / manifest.name


def file_matches(path: Path, spec: ModelFile, stamp: dict[str, Any] | None = None) -> bool:
    """True when ``path`` is the pinned file. Size first (catches partial files for free); the sha256 is
    trusted from ``stamp`` only while the file's size and mtime are the ones recorded when it was hashed."""
    try:
        st = path.stat()
    except OSError:
        return False
    if spec.size is not None and st.st_size != spec.size:
        return False
    if spec.sha256 is None:
        return True
    seen = (stamp or {}).get(spec.local_name)
    if seen and seen == [st.st_size, st.st_mtime_ns, spec.sha256]:
        return True
    if sha256_of(path) != spec.sha256:
        return False
    if stamp is not None:
        stamp[spec.local_name] = [st.st_size, st.st_mtime_ns, spec.sha256]
    return True


def _read_stamp(folder: Path) -> dict[str, Any]:
    try:
        data = json.loads((folder / STAMP_FILE).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_stamp(folder: Path, stamp: dict[str, Any]) -> None:
    atomic_write(folder / STAMP_FILE, json.dumps(stamp, sort_keys=True))


def check_cache(manifest: Manifest) -> list[ModelFile]:
    """Verify the cached copy; delete what does not match. Returns the files still missing."""
    folder = cache_dir(manifest)
    if not folder.is_dir():
        return list(manifest.files)
    stamp = _read_stamp(folder)
    before = dict(stamp)
    missing = []
    for spec in manifest.files:
        target = folder / spec.local_name
        if file_matches(target, spec, stamp):
            continue
        if target.exists():
            target.unlink()  # partial or corrupt: never load it, fetch it again
        stamp.pop(spec.local_name, None)
        missing.append(spec)
    if stamp != before:
        _write_stamp(folder, stamp)
    return missing


def env_model_dir() -> Path | None:
    raw = os.environ.get("WWT_MODEL_DIR")
    return Path(raw).expanduser() if raw else None


def check_model_dir(folder: Path, origin: str = "WWT_MODEL_DIR") -> None:
    """A user-given folder must hold the two files the embedder opens."""
    if not folder.is_dir():
        raise ModelUnavailable(
            f"{origin}={folder} is not a folder; point it at a folder with {MODEL_FILE} and "
            f"{TOKENIZER_FILE}, or unset it to use the downloaded model"
        )
    for name in (MODEL_FILE, TOKENIZER_FILE):
        candidate = folder / name
        if not candidate.is_file() or candidate.stat().st_size == 0:
            raise ModelUnavailable(
                f"{origin}={folder} has no {name}; point it at a folder with {MODEL_FILE} and "
                f"{TOKENIZER_FILE}, or unset it to use the downloaded model"
            )


def _install(src: Path, dest: Path) -> None:
    """Put a verified file in place atomically (hard link when possible: no second copy on disk)."""
    tmp = dest.with_name(dest.name + ".part")
    if tmp.exists():
        tmp.unlink()
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dest)


def _download_error(manifest: Manifest, exc: BaseException) -> ModelUnavailable:
    name = type(exc).__name__
    if name in ("LocalEntryNotFoundError", "OfflineModeIsEnabled"):
        reason = (
            "the hub is unreachable or HF_HUB_OFFLINE is set, and the Hugging Face cache does not have it"
        )
    else:
        reason = (str(exc).strip().splitlines() or [name])[0]
        reason = f"{name}: {reason[:117] + '...' if len(reason) > 120 else reason}"
    return ModelUnavailable(
        f"could not download the embedding model {manifest.label} ({reason}); {WHAT_TO_DO}"
    )


HUB_PROBE_S = 3.0  # one connection attempt to the hub (or the proxy) before the download's own retries


def _proxy_for(scheme: str) -> str:
    for name in (f"{scheme}_proxy", f"{scheme.upper()}_PROXY", "all_proxy", "ALL_PROXY"):
        if os.environ.get(name):
            return os.environ[name]
    return ""


def hub_unreachable(timeout: float = HUB_PROBE_S) -> str | None:
    """Why the hub cannot be reached at all (its name does not resolve, nothing answers), or None.
    huggingface_hub retries a failed connection five times with backoff — 24 s before `wwt setup` could say the
    model is unavailable on a machine without the network; one connection to the endpoint (or to the proxy the
    environment names, which then resolves the hub itself) says it in at most ``timeout``."""
    import socket
    from urllib.parse import urlsplit

    endpoint = urlsplit(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    proxy = _proxy_for(endpoint.scheme or "https")
    target = urlsplit(proxy if "://" in proxy else f"http://{proxy}") if proxy else endpoint
    host = target.hostname
    if not host:
        return None  # an endpoint we cannot read: let the download say what is wrong
    try:
        port = target.port or (443 if target.scheme == "https" else 80)
    except ValueError:
        return None
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except socket.gaierror:
        return f"{host} does not resolve"
    except TimeoutError:
        return f"{host}:{port} did not answer in {timeout:g} s"
    except OSError as exc:
        return f"{host}:{port}: {exc.strerror or exc}"


def download(manifest: Manifest, files: list[ModelFile]) -> None:
    """Fetch ``files`` at the pinned revision through the hub cache, verify, install into the data dir."""
    try:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.utils import logging as hf_logging
    except ImportError as exc:  # pragma: no cover - a broken install
        raise _download_error(manifest, exc) from None
    hf_logging.set_verbosity_error()  # its retry warnings would bury the one line we print on failure
    folder = cache_dir(manifest)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = _read_stamp(folder)
    offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
    unreachable = None if offline else hub_unreachable()
    for spec in files:
        try:  # hub unreachable: only the Hugging Face cache, at once (no retries against a dead network)
            fetched = Path(hf_hub_download(manifest.repo_id, spec.repo_path, revision=manifest.revision,
                                           local_files_only=unreachable is not None))
        except Exception as exc:  # network, proxy, offline, 404: all end in the same advice
            if unreachable is not None:
                raise ModelUnavailable(
                    f"could not download the embedding model {manifest.label} (the hub is unreachable: "
                    f"{unreachable}; the Hugging Face cache does not have it); {WHAT_TO_DO}") from None
            raise _download_error(manifest, exc) from None
        if not file_matches(fetched, spec):
            raise ModelUnavailable(
                f"downloaded {spec.repo_path} of {manifest.label} does not match the pinned checksum "
                f"(got {sha256_of(fetched)[:16]}…, want {(spec.sha256 or '')[:16]}…); delete it from the "
                f"Hugging Face cache and retry, or set WWT_MODEL_DIR"
            )
        target = folder / spec.local_name
        try:
            _install(fetched.resolve(), target)
        except OSError as exc:
            raise ModelUnavailable(
                f"cannot write {target} ({exc.strerror or exc}); free disk space or fix "
                f"permissions of {folder}, or set WWT_MODEL_DIR"
            ) from None
        st = target.stat()
        if spec.sha256:
            stamp[spec.local_name] = [st.st_size, st.st_mtime_ns, spec.sha256]
    _write_stamp(folder, stamp)


def resolve_model(manifest: Manifest | None = None, allow_download: bool = True) -> ModelInfo:
    """Find a usable model folder (see the module docstring for the order) or raise ModelUnavailable."""
    manifest = manifest or load_manifest()
    given = env_model_dir()
    if given is not None:
        check_model_dir(given)
        return ModelInfo(model_dir=given, source="env", manifest=manifest, pinned=False)
    folder = cache_dir(manifest)
    try:
        with _lock(manifest):
            missing = check_cache(manifest)
            if not missing:
                return ModelInfo(model_dir=folder, source="cache", manifest=manifest, pinned=True)
            if not allow_download:
                names = ", ".join(f.local_name for f in missing)
                raise ModelUnavailable(
                    f"the embedding model is not downloaded yet ({names} missing in {folder}); run wwt once "
                    f"with network access to fetch it, or set WWT_MODEL_DIR"
                )
            download(manifest, missing)
    except OSError as exc:
        raise ModelUnavailable(
            f"cannot use the model cache {folder} ({exc.strerror or exc}); fix its permissions or set WWT_MODEL_DIR"
        ) from None
    return ModelInfo(model_dir=folder, source="download", manifest=manifest, pinned=True)


def _lock(manifest: Manifest):
    """One downloader at a time per data dir (a second process waits, then finds the verified cache)."""
    from filelock import FileLock

    paths.models_dir().mkdir(parents=True, exist_ok=True)
    return FileLock(str(paths.models_dir() / f".{manifest.name}.lock"), mode=0o600)


def describe_model(allow_download: bool = False, info: ModelInfo | None = None) -> dict[str, Any]:
    """What ``wwt model`` shows: which model, from where, how big, and whether its checksums hold.
    Never downloads unless asked; a missing model is reported (``available: False``), not raised."""
    manifest = info.manifest if info else None
    try:
        manifest = manifest or load_manifest()
        info = info or resolve_model(manifest, allow_download=allow_download)
    except WwtError as exc:
        out: dict[str, Any] = {"available": False, "error": str(exc)}
        if manifest is not None:
            out.update(_manifest_summary(manifest))
            out["model_dir"] = str(cache_dir(manifest))
        return out
    files = []
    specs = {f.local_name: f for f in manifest.files}
    for path in sorted(p for p in info.model_dir.iterdir() if p.is_file() and not p.name.startswith(".")):
        spec = specs.get(path.name)
        if not info.pinned or spec is None or spec.sha256 is None:
            status = "unpinned"
        else:
            status = "ok" if sha256_of(path) == spec.sha256 else "mismatch"
        files.append({"name": path.name, "bytes": path.stat().st_size, "checksum": status})
    model_files = [f for f in files if f["name"] in specs or not info.pinned]
    return {
        "available": True,
        **_manifest_summary(manifest),
        "source": info.source,
        "model_dir": str(info.model_dir),
        "pinned": info.pinned,
        "files": model_files,
        "total_bytes": sum(f["bytes"] for f in model_files),
        "checksums_ok": all(f["checksum"] == "ok" for f in model_files) if info.pinned else None,
    }


def _manifest_summary(manifest: Manifest) -> dict[str, Any]:
    return {
        "name": manifest.name,
        "repo_id": manifest.repo_id,
        "revision": manifest.revision,
        "dims": manifest.dims,
        "max_tokens": manifest.max_tokens,
        "manifest": str(manifest.path),
    }
