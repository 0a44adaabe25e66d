#!/usr/bin/env bash
# Set up, then run every check CI runs: generated docs current, lint, types, the test suite.
# pytest exit code 5 (no tests collected) counts as a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1
# System tools the tests drive for real: Chromium renders the HTML report; Debian's rocminfo and
# rocm-smi give doctor their real no-GPU output; Debian's hipcc (HIP 5.2 on clang 15, with the
# HIP runtime headers and AMD device libraries) runs the kernel compile check for AMD targets;
# Neovim is the real editor the language server is tested in.
missing=()
for tool in chromium rocminfo rocm-smi; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
command -v hipcc >/dev/null 2>&1 || missing+=(hipcc libamdhip64-dev rocm-device-libs)
# gcc builds the stub CUDA and HIP libraries and the wheels the --python tests read.
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
# Neovim's built-in LSP client drives `migrate server` as an editor would.
command -v nvim >/dev/null 2>&1 || missing+=(neovim)
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null) \
    || echo "warning: could not install ${missing[*]}; the tests that drive them will be skipped"
fi
# The suite starts Python some hundreds of times (the CLI, pre-commit, the language server,
# verify's runs): the project's modules are byte-compiled once, into __pycache__ (ignored by git),
# even where PYTHONDONTWRITEBYTECODE is set (about a tenth of those tests' CPU time). Not with
# PYTHONPYCACHEPREFIX: Python would then ignore the installed packages' compiled modules and
# compile torch's again.
unset PYTHONDONTWRITEBYTECODE
status=0
.venv/bin/python scripts/gen_rule_docs.py --check || { echo "docs/rules is stale: run python scripts/gen_rule_docs.py"; status=1; }
.venv/bin/python scripts/gen_hipify_map.py --check || { echo "migrator/data/hipify_map.json is stale: run python scripts/gen_hipify_map.py"; status=1; }
.venv/bin/ruff check migrator rules tests scripts || status=1
.venv/bin/ruff format --check -q migrator rules tests scripts || { echo "run: ruff format migrator rules tests scripts"; status=1; }
.venv/bin/mypy migrator rules scripts || status=1
.venv/bin/python -m pytest -q -p no:cacheprovider -n "$(bash scripts/workers.sh)" "$@"
rc=$?
if [ "$rc" = 5 ]; then echo "pytest collected no tests: failing"; rc=1; fi
[ "$rc" = 0 ] || status=$rc
exit $status
