#!/usr/bin/env bash
# Run the test suite on the lowest and the highest supported Python (3.10 and 3.13), each in its
# own venv (.venv-3.10, .venv-3.13). An interpreter that is not installed is reported, not hidden.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
for version in 3.10 3.13; do
  python=$(command -v "python$version" 2>/dev/null || true)
  if [ -z "$python" ] || ! "$python" -c "" 2>/dev/null; then
    python=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$version".*/bin/python 2>/dev/null | tail -1)
  fi
  if [ -z "$python" ] || [ ! -x "$python" ]; then
    echo "python$version: not installed here; not tested"
    continue
  fi
  echo "== Python $version ($python)"
  PYTHON="$python" VENV=".venv-$version" bash scripts/setup.sh || { status=1; continue; }
  ".venv-$version/bin/python" -m pytest -q -p no:cacheprovider "$@" || status=1
done
exit $status
