"""Shell and CI platform guards: findings in macOS/Windows-only branches of shell scripts and in
macOS/Windows CI jobs and steps are hidden by default, shown marked, and never fixed."""

from __future__ import annotations

from migrator.reach.ci_guards import NON_LINUX_JOB
from migrator.reach.guard_conditions import NON_LINUX, NVIDIA_ONLY
from migrator.reach.text_guards import regions
from migrator.reach.variant_extras import CUDA_EXTRA, cuda_extra_regions
from tests.conftest import write

SETUP = """\
#!/usr/bin/env bash
set -e
if [[ "$OSTYPE" == "darwin"* ]]; then
  pip install flash-attn
elif [ "$(uname -s)" = Linux ]; then
  pip install torch
else
  pip install xformers
fi
case "$(uname -s)" in
  MINGW*|MSYS*)
    export CUDA_VISIBLE_DEVICES=0
    ;;
  Linux) nvidia-smi ;;
esac
if [ "$(uname -m)" = arm64 ]; then
  pip install flash-attn
fi
"""

WORKFLOW = """\
name: tests
on: [push]
jobs:
  mac:
    runs-on: macos-14
    steps:
      - run: pip install flash-attn
  linux:
    runs-on: ubuntu-latest
    steps:
      - name: windows tools
        if: runner.os == 'Windows'
        run: pip install xformers
      - name: install
        run: pip install flash-attn
"""


def _sites(report: dict) -> list[tuple[int, str, str]]:
    """(line, rule, guard) of every finding and of every related site it carries."""
    out = []
    for finding in report["findings"]:
        guard = finding.get("guard", "")
        out.append((finding["line"], finding["rule"], guard))
        out.extend((site["line"], finding["rule"], guard) for site in finding["related"])
    return sorted(out)


def test_shell_platform_branches_are_guarded(tmp_path, scan_json):
    write(tmp_path, "setup.sh", SETUP)
    shown = _sites(scan_json("--show-guarded", "--select", "ROC867,ROC710", str(tmp_path)))
    assert shown == [
        (4, "ROC867", NON_LINUX),  # darwin branch
        (8, "ROC867", NON_LINUX),  # else after a Linux test
        (12, "ROC710", NON_LINUX),  # MINGW/MSYS case arm
        (17, "ROC867", ""),  # `uname -m` is the CPU, not the OS
    ]
    default = _sites(scan_json("--select", "ROC867,ROC710", str(tmp_path)))
    assert default == [(17, "ROC867", "")]


def test_ci_jobs_and_steps_on_macos_or_windows_are_guarded(tmp_path, scan_json):
    write(tmp_path, ".github/workflows/tests.yml", WORKFLOW)
    shown = _sites(scan_json("--show-guarded", "--select", "ROC867", str(tmp_path)))
    assert shown == [
        (7, "ROC867", NON_LINUX_JOB),  # macos-14 job
        (13, "ROC867", NON_LINUX_JOB),  # Windows-only step
        (15, "ROC867", ""),
    ]


def test_guarded_text_is_never_fixed(tmp_path, run_cli):
    write(tmp_path, "setup.sh", SETUP)
    before = (tmp_path / "setup.sh").read_text()
    run_cli("fix", "--unsafe-fixes", str(tmp_path))
    after = (tmp_path / "setup.sh").read_text()
    assert "export CUDA_VISIBLE_DEVICES=0\n" in after  # the Windows arm is left alone
    assert after.count("HIP_VISIBLE_DEVICES") == before.count("HIP_VISIBLE_DEVICES")


def test_region_shapes():
    text = (
        'if [[ "$OSTYPE" != darwin* ]]; then a; else b; fi\n'
        'if [[ "$OSTYPE" == msys || "$OSTYPE" == cygwin ]]; then c; fi\n'
        'if [[ "$OSTYPE" == msys || -f x ]]; then d; fi\n'
        "if [ -f x ]; then e; fi\n"
    )
    found = [text[start:end].strip(" ;") for start, end, _ in regions(text, "shell")]
    assert found == ["b", "c"]


def test_branch_behind_an_nvidia_smi_probe_is_guarded(tmp_path, run_cli):
    """`if command -v nvidia-smi; then nvidia-smi; ...` only runs where the NVIDIA tool exists:
    nothing inside is reported or rewritten; its `else` branch (the AMD path) is not guarded."""
    text = (
        "if command -v nvidia-smi; then\n"
        "  nvidia-smi\n"
        "else\n"
        "  rocm-smi\n"
        "fi\n"
        "if which nvidia-smi >/dev/null; then nvidia-smi -L; fi\n"
        "if ! command -v nvidia-smi; then echo none; fi\n"
    )

    found = [(text[s:e].strip(" ;\n"), label) for s, e, label in regions(text, "shell")]
    assert found == [("nvidia-smi", NVIDIA_ONLY), ("nvidia-smi -L", NVIDIA_ONLY)]
    write(tmp_path, "gpu.sh", text)
    run_cli("fix", "--unsafe-fixes", str(tmp_path))
    assert (tmp_path / "gpu.sh").read_text() == text


EXTRAS = """[project]
name = "x"
dependencies = ["torch"]

[project.optional-dependencies]
cu121onlytorch240 = [
    "flash-attn @ https://github.com/x/flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp311-cp311-linux_x86_64.whl",
]
amd = [
    "flash-attn @ https://github.com/x/flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp311-cp311-linux_x86_64.whl",
]
"""


def test_an_array_of_tables_ends_the_cuda_extra_before_it():
    amd_first = EXTRAS.replace("amd = [", "cu121onlytorch240 = [", 1).replace(
        "cu121onlytorch240 = [", "amd = [", 1
    )
    text = amd_first + '[[tool.uv.index]]\nname = "cu121"\nurl = "https://x/whl/cu121"\n'
    [(start, end, label)] = cuda_extra_regions(text)
    assert label == CUDA_EXTRA
    assert text[start:end].startswith("cu121onlytorch240 = [")
    assert text[end:].startswith("[[tool.uv.index]]")


def test_cuda_extras_are_guarded_only_when_a_rocm_extra_exists(tmp_path, scan_json):
    write(tmp_path, "pyproject.toml", EXTRAS)
    report = scan_json(tmp_path, "--show-guarded")
    sites = sorted({(f["line"], f.get("guard", "")) for f in report["findings"]})
    assert sites == [(7, CUDA_EXTRA), (10, "")]
    write(tmp_path, "pyproject.toml", EXTRAS.replace("amd = [", "extra = ["))
    report = scan_json(tmp_path, "--show-guarded")
    assert sorted({(f["line"], f.get("guard", "")) for f in report["findings"]}) == [
        (7, ""),
        (10, ""),
    ]


def test_an_extra_that_installs_a_cuda_extra_of_the_project_is_a_cuda_variant():
    from migrator.reach.variant_extras import cuda_extra_regions

    text = (
        '[project]\nname = "pkg"\n\n[project.optional-dependencies]\n'
        'cu121onlytorch211 = ["xformers==0.0.23"]\n'
        'colab-torch211 = ["pkg[huggingface]", "bitsandbytes==0.45.5", "pkg[cu121onlytorch211]"]\n'
        'colab-ampere = ["pkg[colab-torch211]", "ninja"]\n'
        'huggingface = ["transformers", "pkg[triton]"]\n'
        'amd = ["pkg[huggingface]", "bitsandbytes>=0.49"]\n'
        'mixed = ["pkg[cu121onlytorch211]", "pkg[amd]"]\n'
    )
    names = sorted(
        text[start:end].split("=", 1)[0].strip() for start, end, _ in cuda_extra_regions(text)
    )
    # transitively through colab-torch211; an extra that also installs the ROCm one is not
    assert names == ["colab-ampere", "colab-torch211", "cu121onlytorch211"]


def test_an_extra_for_an_nvidia_only_hosted_service_is_a_cuda_variant():
    text = (
        '[project]\nname = "x"\n\n[project.optional-dependencies]\n'
        'colab-no-deps = [\n    "xformers",\n]\namd = [\n    "torch",\n]\n'
        'train = [\n    "xformers",\n]\n'
    )
    regions = cuda_extra_regions(text)
    assert [text[start:end].split(" =")[0] for start, end, _ in regions] == ["colab-no-deps"]
