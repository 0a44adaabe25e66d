#!/usr/bin/env bash
# Create .venv and install migrate with its test and verification extras (idempotent).
# torch is pinned to the CPU build this machine's pip offers; scanning itself never needs torch.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test,verify]" 2>&1 \
  | grep -v -E "^WARNING: Location .* is ignored" || true
.venv/bin/python -c "import migrator, libcst, click, rich, jinja2" 
