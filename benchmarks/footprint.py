"""Installed footprint: a fresh venv with wwt (+ its model files) vs the original stack (torch + sentence-transformers).

    python benchmarks/footprint.py            # builds benchmarks/.work/footprint-venv, appends to RESULTS.md
    python benchmarks/footprint.py --reuse    # measure existing venvs without reinstalling

The original stack is measured from the torch venv that ``benchmarks/embed.py`` creates
(``benchmarks/.work/torch-venv``: ``pip install torch==2.13.0 sentence-transformers``, CPU wheel) plus the
fp32 safetensors weights it loads.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / ".work"
RESULTS = HERE / "RESULTS.md"
DEFAULT_HF_DIR = Path.home() / ".cache" / "wwt-e5model-full" / "hf"


def tree_bytes(path: Path) -> int:
    """Bytes on disk of every regular file under ``path`` (symlinks not followed, hard links counted once)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if not os.path.isfile(os.path.join(dirpath, name)) or os.path.islink(os.path.join(dirpath, name)):
                continue
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            total += st.st_size
    return total


def site_packages(venv: Path) -> Path:
    return next(venv.glob("lib/python*/site-packages"))


def top_packages(site: Path, n: int = 6) -> list[tuple[str, int]]:
    sizes = []
    for entry in site.iterdir():
        if entry.name.endswith((".dist-info", ".pth")) or entry.name == "__pycache__":
            continue
        sizes.append((entry.name, tree_bytes(entry) if entry.is_dir() else entry.stat().st_size))
    return sorted(sizes, key=lambda x: -x[1])[:n]


def build_wwt_venv(venv: Path) -> None:
    if venv.exists():
        subprocess.run(["rm", "-rf", str(venv)], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(ROOT)], check=True)


def tooling_bytes(site: Path) -> int:
    """pip/setuptools that every venv carries: not part of what wwt needs at run time."""
    names = ("pip", "setuptools", "pkg_resources", "_distutils_hack")
    total = 0
    for entry in site.iterdir():
        if entry.name.split("-")[0] in names:
            total += tree_bytes(entry) if entry.is_dir() else entry.stat().st_size
    return total


def mb(n: int) -> str:
    return f"{n / 1e6:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reuse", action="store_true", help="do not rebuild the wwt venv if it exists")
    parser.add_argument("--hf-dir", type=Path, default=DEFAULT_HF_DIR)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    wwt_venv = WORK / "footprint-venv"
    if not (args.reuse and (wwt_venv / "bin" / "python").exists()):
        build_wwt_venv(wwt_venv)
    torch_venv = WORK / "torch-venv"
    if not (torch_venv / "bin" / "python").exists():
        raise SystemExit(
            "no torch venv yet: run benchmarks/embed.py once (it creates benchmarks/.work/torch-venv)"
        )

    sys.path.insert(0, str(ROOT))
    from wwt.errors import WwtError
    from wwt.model_source import resolve_model

    try:
        info = resolve_model(allow_download=False)
    except WwtError as exc:
        raise SystemExit(f"footprint: {exc}") from None
    model_bytes = info.model_path.stat().st_size
    tokenizer_bytes = info.tokenizer_path.stat().st_size
    weights = args.hf_dir / "model.safetensors"
    torch_weights = weights.stat().st_size if weights.exists() else 0

    wwt_total = tree_bytes(wwt_venv)
    torch_total = tree_bytes(torch_venv)
    wwt_site = site_packages(wwt_venv)
    torch_site = site_packages(torch_venv)
    pyc = sum(tree_bytes(p) for p in wwt_site.rglob("__pycache__"))
    lines = [
        f"## Footprint: wwt venv vs the original torch stack ({datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC)",
        "",
        f"Command: `python benchmarks/footprint.py {' '.join(sys.argv[1:])}`".rstrip() + "  ",
        f"Model folder measured: `{info.model_dir.name}` ({info.source}); the pinned hub download is "
        f"{mb(sum(f.size or 0 for f in info.manifest.files))} MB ({info.manifest.label}).",
        "",
        "| | wwt (onnxruntime + sentencepiece + …) | original (torch CPU + sentence-transformers) | target |",
        "|---|---|---|---|",
        f"| venv on disk (MB) | {mb(wwt_total)} | {mb(torch_total)} | wwt ≤ 450 |",
        f"| … without pip/setuptools (MB) | {mb(wwt_total - tooling_bytes(wwt_site))} | "
        f"{mb(torch_total - tooling_bytes(torch_site))} | |",
        f"| model weights (MB) | {mb(model_bytes)} int8 ONNX | {mb(torch_weights)} fp32 safetensors | ≤ 140 |",
        f"| tokenizer.json (MB) | {mb(tokenizer_bytes)} | {mb(tokenizer_bytes)} | |",
        f"| total (MB) | {mb(wwt_total + model_bytes + tokenizer_bytes)} | "
        f"{mb(torch_total + torch_weights + tokenizer_bytes)} | |",
        "",
        f"The wwt venv includes {mb(pyc)} MB of `__pycache__` bytecode written by pip at install time.",
        "Largest packages — wwt: "
        + ", ".join(f"{n} {mb(b)}" for n, b in top_packages(wwt_site))
        + "; original: "
        + ", ".join(f"{n} {mb(b)}" for n, b in top_packages(torch_site))
        + " (MB).",
        "",
    ]
    section = "\n".join(lines)
    print(section)
    if not args.no_write:
        from _shared import replace_section

        replace_section("footprint", section)


if __name__ == "__main__":
    main()
