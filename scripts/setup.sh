#!/usr/bin/env bash
# Create .venv (or $VENV with $PYTHON) and install migrate with its test and verification extras (idempotent).
# torch is pinned to the CPU build this machine's pip offers; scanning itself never needs torch.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[test,verify]" 2>&1 \
  | grep -v -E "^WARNING: Location .* is ignored" || true
"$VENV/bin/python" -c "import migrator, libcst, click, rich, jinja2" 
