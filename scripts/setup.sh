#!/usr/bin/env bash
# Create .venv (or $VENV with $PYTHON) and install migrate with its extras (idempotent).
# $EXTRAS defaults to "test,verify"; torch (in verify) is pinned to the CPU build this machine's pip
# offers for the default Python. Scanning itself never needs torch.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
EXTRAS=${EXTRAS:-test,verify}
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[$EXTRAS]" 2>&1 \
  | grep -v -E "^WARNING: Location .* is ignored" || true
"$VENV/bin/python" -c "import migrator, libcst, click, rich, jinja2" 
