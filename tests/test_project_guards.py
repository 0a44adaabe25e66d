"""Project-level guards on small projects shaped like real ones: a dependency the project itself
is, a dependency the project already declares at a ROCm-capable version, and CI jobs and
workflows that only run on NVIDIA runners. Hidden by default, shown marked."""

from __future__ import annotations

from migrator.knowledge.versions import ProjectFacts, VersionRange
from migrator.reach.ci_guards import CPU_JOB, NON_LINUX_JOB, NVIDIA_JOB, NVIDIA_STEP, ci_line_guards
from migrator.reach.project import dependency_guard, nvidia_ci_file, own_packages
from tests.conftest import write

MHA = """\
import torch
from flash_attn import flash_attn_func


def attention(q, k, v):
    return flash_attn_func(q, k, v, causal=True)
"""

BNB_USE = "import bitsandbytes as bnb\n\nopt = bnb.optim.AdamW8bit(params, lr=1e-4)\n"


def _sites(report: dict) -> list[tuple[str, int, str, str]]:
    """Every site (a finding's own and its related ones: a call joins its import's finding)."""
    sites = []
    for f in report["findings"]:
        guard = f.get("guard", "")
        sites.append((f["path"], f["line"], f["rule"], guard))
        for r in f.get("related", []):
            sites.append((r["path"], r["line"], r.get("rule") or f["rule"], guard))
    return sites


def test_own_packages_come_from_the_layout():
    paths = [
        "setup.py",
        "flash_attn/__init__.py",
        "flash_attn/modules/__init__.py",
        "flash_attn/modules/mha.py",
        "hopper/setup.py",
        "hopper/flash_attn_interface.py",
        "src/otherpkg/__init__.py",
        "third_party/xformers/setup.py",
        "third_party/xformers/xformers/__init__.py",
        "examples/apex/__init__.py",
        "check_install.py",
    ]
    own = own_packages(paths)
    assert {"flash_attn", "flash_attn_interface", "otherpkg", "check_install"} <= own
    assert "modules" not in own and "xformers" not in own and "apex" not in own


def test_a_project_using_its_own_package_is_not_told_to_install_it(tmp_path, scan_json, run_cli):
    write(tmp_path, "setup.py", "from setuptools import setup\nsetup(name='flash_attn')\n")
    write(tmp_path, "flash_attn/__init__.py", "from flash_attn.interface import flash_attn_func\n")
    write(
        tmp_path,
        "flash_attn/interface.py",
        "def flash_attn_func(q, k, v, causal=False):\n    ...\n",
    )
    write(tmp_path, "flash_attn/modules/mha.py", MHA)
    select = ("--select", "flash-attn")
    assert scan_json(*select, str(tmp_path))["findings"] == []
    shown = _sites(scan_json(*select, "--show-guarded", str(tmp_path)))
    own = "the project is `flash_attn` itself: its own build provides it"
    assert ("flash_attn/modules/mha.py", 2, "ROC402", own) in shown
    assert ("flash_attn/modules/mha.py", 6, "ROC400", own) in shown
    # nor rewritten by fix (the project's own API is what it ships)
    run_cli("fix", "--unsafe-fixes", *select, str(tmp_path))
    assert (tmp_path / "flash_attn/modules/mha.py").read_text() == MHA


def test_a_project_using_someone_elses_flash_attn_is_still_told(tmp_path, scan_json):
    write(tmp_path, "mymodel/__init__.py", "")
    write(tmp_path, "mymodel/mha.py", MHA)
    sites = _sites(scan_json("--select", "flash-attn", str(tmp_path)))
    assert ("mymodel/mha.py", 2, "ROC402", "") in sites
    assert ("mymodel/mha.py", 6, "ROC400", "") in sites


def test_bitsandbytes_uses_are_no_problem_when_the_declared_range_admits_rocm(tmp_path, scan_json):
    write(
        tmp_path, "pyproject.toml", '[project]\nname = "x"\ndependencies = ["bitsandbytes>=0.43"]\n'
    )
    write(tmp_path, "train.py", BNB_USE)
    assert scan_json("--select", "bitsandbytes,ROC810", str(tmp_path))["findings"] == []
    [shown] = scan_json("--select", "bitsandbytes", "--show-guarded", str(tmp_path))["findings"]
    assert (shown["path"], shown["line"], shown["rule"]) == ("train.py", 3, "ROC510")
    assert shown["guard"] == (
        "the project's bitsandbytes>=0.43 admits bitsandbytes 0.49+, which has ROCm support"
    )


def test_bitsandbytes_uses_without_a_declaration_are_no_problem(tmp_path, scan_json):
    write(tmp_path, "train.py", BNB_USE)
    assert scan_json("--select", "bitsandbytes", str(tmp_path))["findings"] == []


def _failing_bitsandbytes_rule(monkeypatch):
    """Make ROC510 fail wherever it runs: a file it analyses is then reported as failed."""
    from migrator.rules.bnb.bitsandbytes_dependency import BitsandbytesDependency

    def fail(self, original_node):
        raise RuntimeError("ROC510 ran")

    monkeypatch.setattr(BitsandbytesDependency, "leave_Module", fail)


def _failed(report: dict) -> list[str]:
    return [failure["path"] for failure in report["files"]["failed"]]


def test_rules_the_project_facts_silence_are_not_run(tmp_path, scan_json, monkeypatch):
    write(tmp_path, "train.py", BNB_USE)
    _failing_bitsandbytes_rule(monkeypatch)
    for options in ((), ("--no-cache",)):
        report = scan_json(*options, str(tmp_path))
        assert report["findings"] == [] and _failed(report) == []
    # --show-guarded runs it (the failure proves the patch is in force), also after a
    # cached default scan: the cache keys name the rules left out
    shown = scan_json("--show-guarded", str(tmp_path))
    assert _failed(shown) == ["train.py"]


def test_a_silenced_rule_still_runs_where_a_suppression_may_name_it(tmp_path, run_cli):
    write(tmp_path, "train.py", BNB_USE.replace("lr=1e-4)", "lr=1e-4)  # migrate: ignore[ROC510]"))
    result = run_cli("scan", "--show-unused-suppressions", str(tmp_path))
    assert result.exit_code == 0 and "unused suppression" not in result.stderr
    write(tmp_path, "train.py", BNB_USE.replace("lr=1e-4)", "lr=1e-4)  # migrate: ignore[ROC101]"))
    result = run_cli("scan", "--show-unused-suppressions", str(tmp_path))
    assert "train.py:3: unused suppression `# migrate: ignore[ROC101]`" in result.stderr


def test_a_cached_default_scan_does_not_serve_a_show_guarded_scan(tmp_path, scan_json):
    write(tmp_path, "train.py", BNB_USE)
    assert scan_json(str(tmp_path))["findings"] == []
    [shown] = scan_json("--show-guarded", str(tmp_path))["findings"]
    assert (shown["rule"], shown["line"]) == ("ROC510", 3)
    assert (
        shown["guard"]
        == "bitsandbytes is not pinned by the project: pip installs the latest, with ROCm support"
    )
    assert scan_json(str(tmp_path))["findings"] == []


def test_bitsandbytes_capped_below_rocm_is_one_finding_at_the_requirement(tmp_path, scan_json):
    write(tmp_path, "requirements.txt", "bitsandbytes>=0.40,<0.45\n")
    write(tmp_path, "train.py", BNB_USE)
    [finding] = scan_json("--select", "bitsandbytes,ROC810", str(tmp_path))["findings"]
    assert (finding["path"], finding["line"], finding["rule"]) == ("requirements.txt", 1, "ROC810")
    assert [(site["path"], site["line"]) for site in finding["related"]] == [("train.py", 3)]


def test_dependency_guard_reasons():
    facts = ProjectFacts({"bitsandbytes": VersionRange()})
    assert dependency_guard("bitsandbytes", "0.49", frozenset(), facts).startswith(
        "the project's bitsandbytes (any version) admits"
    )
    pinned = ProjectFacts({"bitsandbytes": VersionRange(None, None)})
    assert dependency_guard("flash_attn", None, frozenset(), pinned) == ""
    from packaging.version import Version

    capped = ProjectFacts({"bitsandbytes": VersionRange(Version("0.41.1"), Version("0.41.2"))})
    assert dependency_guard("bitsandbytes", "0.49", frozenset(), capped) == ""
    litgpt_like = ProjectFacts({"bitsandbytes": VersionRange(Version("0.45.2"), Version("0.50"))})
    assert dependency_guard("bitsandbytes", "0.49", frozenset(), litgpt_like) != ""


WORKFLOW = """\
name: tests
on: [push]
jobs:
  test-unit:
    runs-on: ubuntu-latest
    steps:
      - run: pip install --index-url https://download.pytorch.org/whl/cu121 torch
  test-cuda:
    runs-on: [self-hosted, gpu]
    steps:
      - run: nvidia-smi
  test:
    runs-on: ${{ inputs.runner }}
    steps:
      - name: Show GPU information
        if: inputs.backend == 'cuda'
        run: nvidia-smi

      - name: Run tests
        run: |
          nvidia-smi
          pytest
"""


def test_ci_jobs_and_steps_for_nvidia_runners():
    guards = ci_line_guards(WORKFLOW)
    assert guards[11] == NVIDIA_JOB and guards[8] == NVIDIA_JOB
    assert guards[15] == guards[17] == NVIDIA_STEP
    assert 7 not in guards and 19 not in guards and 21 not in guards
    assert (
        ci_line_guards(
            "jobs:\n  t:\n    if: matrix.backend == 'cuda' || matrix.backend == 'rocm'\n"
        )
        == {}
    )


MATRIX_WORKFLOW = """\
jobs:
  build:
    strategy:
      matrix:
        include:
          - { pyver: '3.11', cuda: '12.1.0', rocm: '' }
          - { pyver: '3.11', cuda: '', rocm: '6.2' }
    steps:
      - name: Build for ROCm
        if: matrix.rocm != ''
        run: pip install torch --index-url https://download.pytorch.org/whl/rocm6.2
      - name: Build for CUDA
        if: matrix.cuda != ''
        run: mamba install -y -c nvidia/label/cuda-12.1.0 cuda-toolkit
      - name: Build sdist
        if: matrix.cuda == '' && matrix.rocm == ''
        run: python -m build --sdist
      - name: Upload
        if: ${{ matrix.cuda-version }}
        run: ls dist
"""


def test_ci_steps_only_for_the_cuda_entries_of_a_build_matrix():
    guards = ci_line_guards(MATRIX_WORKFLOW)
    assert guards[12] == guards[14] == NVIDIA_STEP
    assert guards[18] == NVIDIA_STEP
    assert 9 not in guards and 11 not in guards and 15 not in guards and 17 not in guards


def test_nvidia_ci_findings_are_hidden(tmp_path, scan_json):
    write(tmp_path, ".github/workflows/tests.yml", WORKFLOW)
    write(
        tmp_path,
        ".github/workflows/nv-h100.yml",
        "jobs:\n  t:\n    steps:\n      - run: nvidia-smi\n",
    )
    sites = [site[:3] for site in _sites(scan_json("--select", "ROC211,ROC865", str(tmp_path)))]
    assert sites == [
        (".github/workflows/tests.yml", 7, "ROC865"),
        (".github/workflows/tests.yml", 21, "ROC211"),
    ]
    shown = _sites(scan_json("--select", "ROC211", "--show-guarded", str(tmp_path)))
    assert (".github/workflows/nv-h100.yml", 4, "ROC211", "CI workflow for NVIDIA runners") in shown
    assert (".github/workflows/tests.yml", 11, "ROC211", NVIDIA_JOB) in shown


def test_nvidia_ci_file_names():
    assert nvidia_ci_file(".github/workflows/nv-torch110-p40.yml")
    assert nvidia_ci_file(".github/workflows/tests_cuda.yml")
    # named for an NVIDIA GPU model: no AMD runner carries one
    assert nvidia_ci_file(".github/workflows/integration_test_8gpu_h100.yaml")
    assert not nvidia_ci_file(".github/workflows/integration_test_8gpu.yaml")
    assert not nvidia_ci_file(".github/workflows/amd-mi200.yml")
    assert not nvidia_ci_file(".github/workflows/nightly.yml")
    assert not nvidia_ci_file("scripts/nv-setup.yml")


def test_ci_job_on_an_nvidia_runner_label():
    workflow = (
        "jobs:\n"
        "  gpu_test:\n"
        "    runs-on: linux.g5.12xlarge.nvidia.gpu\n"
        "    steps:\n"
        "      - run: pip install torch --index-url https://download.pytorch.org/whl/cu118\n"
        "  any_runner:\n"
        "    runs-on: ${{ inputs.runner }}\n"
        "    steps:\n"
        "      - run: nvidia-smi\n"
    )
    guards = ci_line_guards(workflow)
    assert guards[5] == NVIDIA_JOB and 9 not in guards


def test_ci_jobs_named_by_machine_group_image_name_or_cuda_matrix():
    """A job on an EC2 NVIDIA instance group, named for CUDA or over a CUDA-only build matrix runs
    only on NVIDIA; the AMD instance family, an AMD matrix entry and a CUDA container image alone
    (what ROC860 reports) do not."""
    workflow = (
        "name: nightly\n"  # 1
        "jobs:\n"
        "  run_nightly_tests:\n"
        "    name: Nightly Torch Pipelines CUDA Tests\n"
        "    runs-on: ubuntu-22.04\n"  # 5
        "    steps:\n"
        "      - run: nvidia-smi\n"
        "  examples:\n"
        "    runs-on:\n"
        "      group: aws-g4dn-2xlarge\n"  # 10
        "    steps:\n"
        "      - run: nvidia-smi\n"
        "  in_image:\n"
        "    runs-on: ${{ inputs.runner }}\n"
        "    container:\n"  # 15
        "      image: diffusers/diffusers-pytorch-cuda\n"
        "    steps:\n"
        "      - run: nvidia-smi\n"
        "  build-base:\n"
        "    runs-on: ubuntu-latest-m\n"  # 20
        "    strategy:\n"
        "      matrix:\n"
        "        include:\n"
        "          - cuda: '128'\n"
        "            platforms: linux/amd64,linux/arm64\n"  # 25
        "            torch_index_url: https://download.pytorch.org/whl/cu128\n"
        "    steps:\n"
        "      - run: echo ${{ matrix.torch_index_url }}\n"
        "  amd-radeon:\n"
        "    runs-on: aws-g4ad-xlarge\n"  # 30
        "    steps:\n"
        "      - run: nvidia-smi\n"
        "  both:\n"
        "    strategy:\n"
        "      matrix:\n"  # 35
        "        cuda_version: ['12.8']\n"
        "        include:\n"
        "          - rocm: '6.4'\n"
        "    steps:\n"
        "      - run: pip install torch --index-url https://download.pytorch.org/whl/cu128\n"  # 40
    )
    guards = ci_line_guards(workflow)
    assert guards[7] == guards[12] == guards[26] == NVIDIA_JOB
    assert 18 not in guards and 32 not in guards and 40 not in guards


def test_cpu_ci_jobs_and_workflows_are_guarded():
    """A job or workflow named for the CPU runs where no GPU is: a CUDA wheel index there does
    not concern ROCm; a job that names the CPU and a GPU is not one."""
    jobs = (
        "jobs:\n"
        "  test-cpu:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "      - run: pip install torch --index-url https://download.pytorch.org/whl/cu121\n"
        "  cpu-and-gpu:\n"
        "    steps:\n"
        "      - run: pip install torch --index-url https://download.pytorch.org/whl/cu121\n"
    )
    guards = ci_line_guards(jobs)
    assert guards[5] == CPU_JOB and 8 not in guards
    workflow = (
        'name: "[GHA][CPU] Pytest tests on CPU GitHub hosted runner."\n'
        "env:\n"
        "  PYTORCH_WHEEL_URL: https://download.pytorch.org/whl/test/cu118\n"
        "jobs:\n"
        "  execute_workflow:\n"
        "    runs-on: ubuntu-20.04\n"
    )
    assert ci_line_guards(workflow)[3] == CPU_JOB


def test_ci_job_on_a_runner_input_whose_every_choice_is_an_nvidia_runner():
    def workflow(options: str) -> str:
        return (
            "name: SSH into GPU runners\n"
            "on:\n"
            "  workflow_dispatch:\n"
            "    inputs:\n"
            "      runner_type:\n"
            "        type: choice\n"
            "        options:\n"
            f"{options}"
            "jobs:\n"
            "  ssh_runner:\n"
            "    runs-on:\n"
            '      group: "${{ github.event.inputs.runner_type }}"\n'
            "    steps:\n"
            "      - run: nvidia-smi\n"
        )

    nvidia = "          - aws-g6-4xlarge-plus\n          - aws-g4dn-2xlarge\n"
    guards = ci_line_guards(workflow(nvidia))
    assert guards[11] == NVIDIA_JOB and guards[15] == NVIDIA_JOB and 9 not in guards
    # one choice is an AMD runner (or not known to be NVIDIA's): the job may run on ROCm
    assert 16 not in ci_line_guards(workflow(nvidia + "          - linux-mi300-gpu-1\n"))


def test_ci_job_on_a_matrix_runner_whose_every_value_is_an_nvidia_runner():
    """``runs-on: group: ${{ matrix.runner }}`` where each ``include`` entry names an EC2 NVIDIA
    instance (g6 = L4): the job, its env and container options never run on an AMD GPU."""

    def workflow(second: str) -> str:
        return (
            "name: Self-hosted runner with slow tests\n"
            "jobs:\n"
            "  run_tests:\n"
            "    strategy:\n"
            "      matrix:\n"
            "        include:\n"
            "          - test_type: single_gpu\n"
            "            runner: aws-g6-4xlarge-plus\n"
            "          - test_type: multi_gpu\n"
            f"            runner: {second}\n"
            "    runs-on:\n"
            "      group: ${{ matrix.runner }}\n"
            "    env:\n"
            "      CUDA_VISIBLE_DEVICES: '0'\n"
            "    container:\n"
            "      options: --gpus all\n"
        )

    guards = ci_line_guards(workflow("aws-g6-12xlarge-plus"))
    assert guards[14] == NVIDIA_JOB and guards[16] == NVIDIA_JOB
    # one entry is an AMD runner: the job may run on ROCm
    assert 16 not in ci_line_guards(workflow("linux-mi300-gpu-1"))


def test_ci_jobs_installing_cpu_torch_or_on_a_non_linux_matrix():
    """A job that installs torch's CPU build runs without GPUs; a job whose runner is a matrix
    axis of Windows/macOS runners only never runs on Linux; a mixed axis or a CUDA install may."""
    workflow = (
        "jobs:\n"
        "  consolidated:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "      - run: |\n"
        "          pip install --index-url https://download.pytorch.org/whl/cpu torch\n"
        "          pip install triton\n"
        "  export:\n"
        "    strategy:\n"
        "      matrix:\n"
        "        os: [windows-latest]\n"
        "    runs-on: ${{ matrix.os }}\n"
        "    env:\n"
        "      CUDA_VISIBLE_DEVICES: ''\n"
        "  both:\n"
        "    strategy:\n"
        "      matrix:\n"
        "        os:\n"
        "          - windows-latest\n"
        "          - ubuntu-latest\n"
        "    runs-on: ${{ matrix.os }}\n"
        "    steps:\n"
        "      - run: pip install triton  # not the whl/cpu index\n"
    )
    guards = ci_line_guards(workflow)
    assert guards[7] == CPU_JOB
    assert guards[14] == NON_LINUX_JOB
    assert 23 not in guards


SMI = """\
import subprocess


def gpu_name():
    return subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv"], text=True)
"""


def test_scripts_for_an_nvidia_only_hosted_service_are_guarded(tmp_path, scan_json, run_cli):
    # Google Colab and Kaggle offer NVIDIA GPUs (and TPUs) only: a harness for them never runs
    # on an AMD GPU; the same code elsewhere in the project is reported.
    write(tmp_path, "tests/kaggle/studio_gpu/run_studio_gpu.py", SMI)
    write(tmp_path, "notebooks/colab_quickstart.py", SMI)
    write(tmp_path, "tools/gpu.py", SMI)
    report = scan_json("--select", "ROC210", "--show-guarded", str(tmp_path))
    guards = {f["path"]: f.get("guard", "") for f in report["findings"]}
    hosted = "file for an NVIDIA GPU model or NVIDIA-only service (its path names it)"
    assert guards == {
        "tests/kaggle/studio_gpu/run_studio_gpu.py": hosted,
        "notebooks/colab_quickstart.py": hosted,
        "tools/gpu.py": "",
    }
    run_cli("fix", "--unsafe-fixes", str(tmp_path))
    assert (tmp_path / "tests/kaggle/studio_gpu/run_studio_gpu.py").read_text() == SMI


def test_ci_job_calling_a_reusable_workflow_names_its_runner_in_the_inputs():
    """``uses: .../linux_job_v2.yml`` with ``with: runner: ...nvidia.gpu`` runs on NVIDIA; a runner
    taken from the matrix (which may hold a ROCm entry) or a ``runner`` key elsewhere does not
    decide; torch's nightly/test CPU channels are CPU indexes too."""
    workflow = (
        "jobs:\n"
        "  build-test:\n"
        "    uses: pytorch/test-infra/.github/workflows/linux_job_v2.yml@main\n"
        "    with:\n"
        "      runner: linux.g5.48xlarge.nvidia.gpu\n"  # 5
        "      script: |\n"
        "        pip install torch --index-url https://download.pytorch.org/whl/nightly/cu130\n"
        "  matrix-test:\n"
        "    uses: pytorch/test-infra/.github/workflows/linux_job_v2.yml@main\n"
        "    with:\n"  # 10
        "      runner: ${{ matrix.runner }}\n"
        "      script: pip install torch --index-url https://download.pytorch.org/whl/nightly/cu130\n"
        "  plain:\n"
        "    runs-on: ubuntu-latest\n"
        "    env:\n"  # 15
        "      runner: linux.g5.48xlarge.nvidia.gpu\n"
        "    steps:\n"
        "      - run: pip install torch --index-url https://download.pytorch.org/whl/cu130\n"
        "  rc:\n"
        "    runs-on: ubuntu-latest\n"  # 20
        "    steps:\n"
        "      - run: pip install --index-url https://download.pytorch.org/whl/test/cpu torch triton\n"
    )
    guards = ci_line_guards(workflow)
    assert guards[7] == NVIDIA_JOB
    assert 12 not in guards and 18 not in guards
    assert guards[22] == CPU_JOB


def test_files_that_never_run_on_rocm_are_not_analysed(tmp_path, scan_json, monkeypatch):
    """Every finding of a file for an NVIDIA GPU model (its path names it) is guarded: a default
    scan, which hides them, runs no rule there; ``--show-guarded`` does."""
    import migrator.engine.engine

    write(tmp_path, "hopper/bench.py", "import torch\ntorch.backends.cudnn.allow_tf32 = True\n")
    write(tmp_path, "train.py", "import torch\ntorch.backends.cudnn.allow_tf32 = True\n")
    expected = scan_json("--no-cache", str(tmp_path))
    assert [(f["path"], f["rule"]) for f in expected["findings"]] == [("train.py", "ROC131")]
    analyze = migrator.engine.engine.analyze

    def analyze_but_hopper(text, path, kind, rules, **options):
        if path.startswith("hopper/") and rules:
            raise RuntimeError("analysed")
        return analyze(text, path, kind, rules, **options)

    monkeypatch.setattr(migrator.engine.engine, "analyze", analyze_but_hopper)
    for options in (("--no-cache",), (), ()):
        report = scan_json(*options, str(tmp_path))
        assert report["findings"] == expected["findings"] and report["files"] == expected["files"]
    assert _failed(scan_json("--show-guarded", str(tmp_path))) == ["hopper/bench.py"]
