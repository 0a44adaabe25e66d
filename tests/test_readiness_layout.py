"""Where code sits (entry points, reachability, tests and examples, AMD paths) and what that does
to the readiness verdict, on small real projects scanned with the real rule catalog."""

from __future__ import annotations

from pathlib import Path

from migrator.engine.runner import scan
from migrator.files.discovery import discover
from migrator.model import Finding, Severity
from migrator.reporting import readiness as r
from migrator.reporting.readiness.layout import analyze
from tests.conftest import write


def layout_of(root: Path) -> r.ProjectLayout:
    paths = [entry.relative for entry in discover(root) if hasattr(entry, "relative")]
    return analyze(root, paths)


def report_of(root: Path) -> r.ProjectReport:
    return r.build_project(scan(root, use_cache=False).scan, name=root.name)


def make_package(root: Path) -> None:
    write(
        root, "pyproject.toml", '[project]\nname = "app"\n[project.scripts]\napp = "app.cli:main"\n'
    )
    write(root, "app/__init__.py", "")
    write(
        root,
        "app/cli.py",
        "import torch\nfrom app import engine\n\ndef main():\n    engine.run()\n",
    )
    write(
        root,
        "app/engine.py",
        "def run():\n    from app.plugins import fast\n    fast.go()\n",
    )
    write(root, "app/plugins/__init__.py", "")
    write(root, "app/plugins/fast.py", "def go():\n    pass\n")
    write(root, "app/extra.py", "X = 1\n")
    write(root, "app/_private.py", "Y = 1\n")
    write(root, "tests/test_engine.py", "from app import engine\n")
    write(root, "examples/demo.py", "import app\n")
    write(root, "benchmarks/bench_engine.py", "import app\n")
    write(root, "scripts/train.py", "import app.engine\n")
    write(root, "scripts/release.py", "print('x')\n")
    write(root, "README.md", "Train with:\n\n    python scripts/train.py --epochs 1\n")


def test_roles_follow_entry_points_and_imports(tmp_path):
    make_package(tmp_path)
    layout = layout_of(tmp_path)
    assert layout.roles["app/cli.py"] == r.CORE  # console script
    assert layout.roles["app/engine.py"] == r.CORE  # imported at import time by the entry point
    # imported inside a function, from a plugins folder: a user turns it on
    assert layout.roles["app/plugins/fast.py"] == r.OPT_IN
    assert layout.roles["app/extra.py"] == r.PUBLIC  # public module nothing imports
    assert layout.roles["app/_private.py"] == "unreachable"
    assert layout.roles["scripts/train.py"] == r.CORE  # the README tells users to run it
    assert layout.roles["scripts/release.py"] == "tooling"
    assert layout.roles["tests/test_engine.py"] == "test"
    assert layout.roles["examples/demo.py"] == "example"
    assert layout.roles["benchmarks/bench_engine.py"] == "benchmark"
    assert layout.roles["pyproject.toml"] == r.CORE
    assert layout.computes is True
    assert [layout.tier_of(path) for path in ("app/extra.py", "tests/test_engine.py")] == [
        r.CORE,
        r.PERIPHERAL,
    ]


def test_amd_path_evidence(tmp_path):
    make_package(tmp_path)
    write(tmp_path, "requirements_amd.txt", "torch\n")
    write(tmp_path, "docker/Dockerfile.rocm", "FROM rocm/pytorch:latest\n")
    write(tmp_path, "app/device.py", "import torch\nIS_HIP = torch.version.hip is not None\n")
    write(tmp_path, "tests/test_rocm.py", "import torch\nassert torch.version.hip\n")
    evidence = {(item.kind, item.path) for item in layout_of(tmp_path).amd_path}
    assert evidence == {
        ("requirements", "requirements_amd.txt"),
        ("container", "docker/Dockerfile.rocm"),
        ("dispatch", "app/device.py"),
    }


def test_no_amd_path_in_a_plain_project(tmp_path):
    make_package(tmp_path)
    write(tmp_path, "Dockerfile", "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\n")
    assert layout_of(tmp_path).amd_path == []


def test_a_project_that_runs_unchanged_is_ready(tmp_path):
    make_package(tmp_path)
    write(
        tmp_path,
        "app/engine.py",
        "import torch\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n"
        "torch.backends.cudnn.allow_tf32 = True\n\n"
        "def run():\n    return torch.ones(2, device='cuda')\n",
    )
    report = report_of(tmp_path)
    assert report.items, "the TF32 flags are reported"
    assert report.verdict is r.Verdict.READY
    assert report.score >= 85


def test_a_file_nothing_imports_does_not_decide(tmp_path):
    make_package(tmp_path)
    write(tmp_path, "app/_old_monitor.py", "import pynvml\npynvml.nvmlInit()\n")
    report = report_of(tmp_path)
    assert report.items
    assert all(item.tier == r.PERIPHERAL for item in report.work if item.breaks)
    assert report.verdict is r.Verdict.READY


NVML_TOOL_SETUP = '[project]\nname = "gpumon"\ndependencies = ["nvidia-ml-py>=12"]\n'
NVML_TOOL_SETUP += '[project.scripts]\ngpumon = "gpumon.cli:main"\n'


def make_nvml_tool(root: Path) -> None:
    write(root, "pyproject.toml", NVML_TOOL_SETUP)
    write(root, "gpumon/__init__.py", "from gpumon import nvml\n")
    write(
        root,
        "gpumon/nvml.py",
        "import pynvml\npynvml.nvmlInit()\n\ndef count():\n"
        "    return pynvml.nvmlDeviceGetCount()\n",
    )
    write(
        root, "gpumon/cli.py", "from gpumon import nvml\n\ndef main():\n    print(nvml.count())\n"
    )


def test_a_gpu_monitor_built_on_nvml_is_blocked(tmp_path):
    make_nvml_tool(tmp_path)
    report = report_of(tmp_path)
    assert report.verdict is r.Verdict.BLOCKED
    assert report.deciding and report.deciding[0].basis == "port"
    assert "nvml" in report.deciding[0].key
    assert report.score <= 30


def test_the_same_monitor_with_an_amd_backend_is_not_blocked(tmp_path):
    make_nvml_tool(tmp_path)
    blocked = report_of(tmp_path)
    write(
        tmp_path,
        "gpumon/amd.py",
        "import amdsmi\n\ndef count():\n    return len(amdsmi.amdsmi_get_processor_handles())\n",
    )
    write(tmp_path, "gpumon/__init__.py", "from gpumon import amd, nvml\n")
    report = report_of(tmp_path)
    assert report.amd_path and report.amd_path[0].kind == "dispatch"
    assert blocked.verdict is r.Verdict.BLOCKED
    assert report.verdict is not r.Verdict.BLOCKED
    assert report.score > blocked.score


def test_nvml_telemetry_in_a_training_project_is_a_documented_pattern(tmp_path):
    make_package(tmp_path)
    write(tmp_path, "requirements.txt", "torch\nnvidia-ml-py\n")
    write(tmp_path, "app/engine.py", "import pynvml\npynvml.nvmlInit()\n\ndef run():\n    pass\n")
    report = report_of(tmp_path)
    assert report.verdict is r.Verdict.NEEDS_WORK
    nvml = next(item for item in report.work if "nvml" in item.key)
    assert nvml.basis == "pattern"


def test_a_break_on_a_minority_of_targets_shows_per_target(tmp_path):
    make_package(tmp_path)
    write(
        tmp_path,
        "app/engine.py",
        "import torch\n\ndef run(x):\n    return x.to(torch.float8_e4m3fn)\n",
    )
    report = report_of(tmp_path)
    fp8 = [item for item in report.work if item.breaks or item.share < 0.5]
    assert fp8 and all(item.share == 0.25 for item in fp8)  # gfx942 of the four defaults
    assert report.verdict is r.Verdict.READY
    per_target = {summary.gfx: summary.verdict for summary in report.targets.targets}
    assert per_target["gfx942"] is r.Verdict.NEEDS_WORK
    assert per_target["gfx1100"] is r.Verdict.READY


def test_an_amd_install_guide_covers_the_packages_it_names(tmp_path):
    make_package(tmp_path)
    write(
        tmp_path,
        "app/engine.py",
        "from flash_attn import flash_attn_func\n\ndef run():\n    pass\n",
    )
    plain = report_of(tmp_path)
    write(
        tmp_path,
        "README.md",
        "# app\n\n## Install\n\npip install app\n\n### AMD GPUs (ROCm)\n\n"
        "Install the ROCm build of flash-attention first.\n\n## Usage\n\nRun it.\n",
    )
    guided = report_of(tmp_path)
    item = next(item for item in guided.work if item.key == "core:flash-attn")
    assert guided.amd_path[0].covers == ("flash-attn",)
    assert item.covered_by.startswith("README has an AMD/ROCm install section")
    assert plain.verdict is r.Verdict.NEEDS_WORK
    assert guided.verdict is r.Verdict.READY


def test_an_optional_extra_is_shown_apart(tmp_path):
    make_package(tmp_path)
    write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "app"\ndependencies = ["torch"]\n\n'
        '[project.optional-dependencies]\nfast = ["flash-attn==2.5.8"]\n\n'
        '[project.scripts]\napp = "app.cli:main"\n',
    )
    assert r.optional_tables((tmp_path / "pyproject.toml").read_text()) == [(5, 7)]
    report = report_of(tmp_path)
    extra = [item for item in report.work if "flash" in item.key]
    assert extra and all(item.tier == r.PERIPHERAL for item in extra)
    assert {site.role for item in extra for site in item.sites} == {r.OPTIONAL}


def test_kernel_sources_in_core_locations(tmp_path):
    make_package(tmp_path)
    write(tmp_path, "csrc/gemm.cu", "__global__ void k() {}\n")
    write(tmp_path, "csrc/common.cuh", "#pragma once\n")
    write(tmp_path, "tests/kernels/probe.cu", "__global__ void t() {}\n")
    write(tmp_path, "app/plugins/fused/kernel.cu", "__global__ void p() {}\n")
    write(tmp_path, "fa3/setup.py", "from setuptools import setup\nsetup()\n")
    write(tmp_path, "fa3/fwd.cu", "__global__ void f() {}\n")
    write(tmp_path, "build/gen.cu", "__global__ void g() {}\n")
    assert layout_of(tmp_path).kernel_sources == ("csrc/common.cuh", "csrc/gemm.cu")


def test_own_kernels_with_a_hip_build_are_credited_not_erased(tmp_path):
    make_package(tmp_path)
    write(tmp_path, "csrc/gemm.cu", "__global__ void k() {}\n")
    unported = report_of(tmp_path)
    # Without vendor dispatch the rules decide (nothing here): the kernels are not an item.
    assert [item.key for item in unported.work] == []
    assert unported.score == 100
    write(tmp_path, "app/native.py", "import torch\nHIP = torch.version.hip is not None\n")
    write(tmp_path, "app/__init__.py", "from app import native\n")
    ported = report_of(tmp_path)
    kernels = next(item for item in ported.work if item.key == "core:kernels")
    assert kernels.covered_by and kernels.basis == "port" and kernels.files == ["csrc/gemm.cu"]
    assert kernels.findings == 0  # no rule raised it: the report does not count findings for it
    assert ported.verdict is r.Verdict.READY
    assert 70 <= ported.score < unported.score


def test_an_amd_requirements_file_and_container_keep_an_nvml_tool_out_of_blocked(tmp_path):
    make_nvml_tool(tmp_path)
    assert report_of(tmp_path).verdict is r.Verdict.BLOCKED
    write(
        tmp_path,
        "requirements_amd.txt",
        "--extra-index-url https://download.pytorch.org/whl/rocm6.2\ntorch\n",
    )
    write(tmp_path, "Dockerfile.rocm", "FROM rocm/pytorch:latest\n")
    write(tmp_path, "README.md", "Run with docker: `Dockerfile.rocm`\n")
    report = report_of(tmp_path)
    assert {item.kind for item in report.amd_path} == {"requirements", "container"}
    assert report.verdict is r.Verdict.NEEDS_WORK
    assert report.deciding[0].key == "core:nvml"


def test_alternatives_selected_by_name_from_a_table_are_opt_in(tmp_path):
    make_package(tmp_path)
    write(
        tmp_path,
        "app/engine.py",
        "def run(kind):\n    from app.quant.auto import QUANTIZERS\n    return QUANTIZERS[kind]\n",
    )
    write(tmp_path, "app/quant/__init__.py", "")
    write(
        tmp_path,
        "app/quant/auto.py",
        "from app.quant.gguf.q import GGUF\nfrom app.quant.nf4.q import NF4\n"
        "from app.quant.fp8.q import FP8\n\n"
        'QUANTIZERS = {\n    "gguf": GGUF,\n    "nf4": NF4,  # bitsandbytes\n    "fp8": FP8,\n}\n',
    )
    for name, cls in (("gguf", "GGUF"), ("nf4", "NF4"), ("fp8", "FP8")):
        write(tmp_path, f"app/quant/{name}/__init__.py", "")
        write(
            tmp_path,
            f"app/quant/{name}/q.py",
            f"class {cls}:\n    def load(self):\n        from app.quant.{name} import kernels\n",
        )
        write(tmp_path, f"app/quant/{name}/kernels.py", "import torch\n")
    layout = layout_of(tmp_path)
    why = "one of 3 alternatives selected by name from `QUANTIZERS`"
    assert layout.roles["app/quant/fp8/q.py"] == r.OPT_IN
    assert layout.roles["app/quant/fp8/kernels.py"] == r.OPT_IN  # its own sub-package
    assert layout.opt_in_modules["app/quant/fp8/kernels.py"] == why
    assert layout.roles["app/quant/auto.py"] == r.LAZY  # the table itself is not an alternative
    sites, _ = r.sites_of(
        [
            Finding(
                "ROC120", "", "fp8", Severity.WARNING, "app/quant/fp8/kernels.py", 1, 1, 1, 1, ""
            )
        ],
        layout,
    )
    assert sites[0].tier == r.PERIPHERAL and sites[0].opt_in == why


def test_a_table_of_two_is_not_a_choice_of_alternatives(tmp_path):
    make_package(tmp_path)
    write(tmp_path, "app/engine.py", "def run():\n    from app import kinds\n")
    write(
        tmp_path,
        "app/kinds.py",
        'from app.a import A\nfrom app.b import B\nKINDS = {\n    "a": A,\n    "b": B,\n}\n',
    )
    write(tmp_path, "app/a.py", "class A:\n    pass\n")
    write(tmp_path, "app/b.py", "class B:\n    pass\n")
    layout = layout_of(tmp_path)
    assert layout.roles["app/a.py"] == r.LAZY and layout.opt_in_modules == {}
