#!/usr/bin/env bash
# Install wwt with its test extra into ./.venv, make sure a model is available, lint, and run the whole suite.
# Model: $WWT_MODEL_DIR if set; else the offline builder beside the checkout (../shared/tools/e5model/build,
# used on machines without Hugging Face access); else `wwt model --fetch` downloads the pinned model.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'
if [ -z "${WWT_MODEL_DIR:-}" ]; then
  if [ -x ../shared/tools/e5model/build ]; then
    WWT_MODEL_DIR="$(../shared/tools/e5model/build | tail -1)"
  else
    WWT_MODEL_DIR="$(.venv/bin/wwt model --fetch --print-dir | tail -1)"
  fi
  export WWT_MODEL_DIR
fi
echo "model: $WWT_MODEL_DIR"
.venv/bin/ruff check wwt tests benchmarks scripts
.venv/bin/python -m pytest -q "$@"
