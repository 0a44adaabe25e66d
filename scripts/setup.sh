#!/usr/bin/env bash
# Create .venv (or $VENV with $PYTHON) and install migrate with its extras (idempotent).
# $EXTRAS defaults to "test,verify"; torch (in verify) is pinned to the CPU build this machine's pip
# offers for the default Python. Scanning itself never needs torch.
# The install goes through uv when it can be had (downloads and byte-compiles in parallel: from
# nothing about half of pip's time; a re-run, as scripts/test.sh makes, 4 s instead of 14), with
# the sources pip is configured with and pip's choice among them (the best version over every
# index); else through pip. $INSTALLER=pip forces pip.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
EXTRAS=${EXTRAS:-test,verify}
INSTALLER=${INSTALLER:-uv}
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
quiet_pip() {
  "$VENV/bin/python" -m pip --quiet --disable-pip-version-check "$@" 2>&1 \
    | grep -v -E "^WARNING: Location .* is ignored" || true
}
uv=""
if [ "$INSTALLER" = uv ]; then
  if [ -x "$VENV/bin/uv" ]; then
    uv="$VENV/bin/uv"
  elif command -v uv >/dev/null 2>&1; then
    uv=$(command -v uv)
  else
    quiet_pip install uv
    [ -x "$VENV/bin/uv" ] && uv="$VENV/bin/uv"
  fi
fi
installed=0
if [ -n "$uv" ]; then
  mapfile -t sources < <("$VENV/bin/python" scripts/pip_sources.py)
  if [ -z "${SSL_CERT_FILE:-}" ] && [ -n "${PIP_CERT:-}" ]; then export SSL_CERT_FILE="$PIP_CERT"; fi
  # Byte-compiled as pip does: where PYTHONDONTWRITEBYTECODE is set, nothing else would be.
  "$uv" pip install --quiet --python "$VENV/bin/python" --compile-bytecode \
    --index-strategy unsafe-best-match "${sources[@]}" -e ".[$EXTRAS]" && installed=1
fi
if [ "$installed" = 0 ]; then
  quiet_pip install -e ".[$EXTRAS]"
fi
"$VENV/bin/python" -c "import migrator, libcst, click, rich, jinja2, elftools"
