"""Guards (code that never runs on ROCm), one finding per problem, and the recalibrated
severities, through the command line on small projects shaped like real ones."""

from __future__ import annotations

import json

import libcst as cst

from migrator.engine.context import PythonContext
from migrator.reach.guard_conditions import (
    AVAILABILITY,
    IMPORT_FALLBACK,
    NON_LINUX,
    NVIDIA_ONLY,
    OTHER_DEVICE,
    ROCM_ONLY,
)
from migrator.reach.project import amd_twins, file_guards
from migrator.syntax.imports import ImportTable
from tests.conftest import write

GPU = """\
import subprocess
import sys

import torch


def gpu_names():
    if torch.version.hip is None:
        return subprocess.check_output(["nvidia-smi", "-L"], text=True)
    return subprocess.check_output(["amd-smi", "list"], text=True)


def memory():
    if is_rocm_pytorch():
        return torch.cuda.mem_get_info()
    else:
        return subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv"])


def windows_only():
    if sys.platform == "win32":
        subprocess.run(["nvidia-smi"])


def early_exit():
    if torch.version.hip:
        return None
    return subprocess.run(["nvidia-smi"])


def unguarded():
    return subprocess.run(["nvidia-smi"], capture_output=True)
"""


def _sites(report: dict) -> list[tuple[str, int, str, str]]:
    return [(f["path"], f["line"], f["rule"], f.get("guard", "")) for f in report["findings"]]


def test_guarded_code_is_hidden_by_default_and_shown_marked(tmp_path, scan_json, run_cli):
    write(tmp_path, "pkg/gpu.py", GPU)
    assert _sites(scan_json("--select", "ROC210", str(tmp_path))) == [
        ("pkg/gpu.py", 32, "ROC210", "")
    ]
    shown = scan_json("--select", "ROC210", "--show-guarded", str(tmp_path))
    assert _sites(shown) == [
        ("pkg/gpu.py", 9, "ROC210", NVIDIA_ONLY),
        ("pkg/gpu.py", 17, "ROC210", NVIDIA_ONLY),
        ("pkg/gpu.py", 22, "ROC210", NON_LINUX),
        ("pkg/gpu.py", 28, "ROC210", NVIDIA_ONLY),
        ("pkg/gpu.py", 32, "ROC210", ""),
    ]
    text = run_cli("scan", "--select", "ROC210", "--show-guarded", str(tmp_path)).output
    assert "[guarded: NVIDIA-only branch]" in text


def test_only_guarded_findings_exit_zero(tmp_path, run_cli):
    write(tmp_path, "a.py", GPU.split("def unguarded")[0])
    assert run_cli("scan", "--select", "ROC210", str(tmp_path)).exit_code == 0
    assert run_cli("scan", "--select", "ROC210", "--show-guarded", str(tmp_path)).exit_code == 0


def test_import_fallback_and_availability_probe(tmp_path, scan_json):
    write(
        tmp_path,
        "probe.py",
        "import pynvml\n"
        "def is_nvml_available():\n"
        "    pynvml.nvmlInit()\n"
        "    return True\n"
        "try:\n"
        "    import pynvml as nv\n"
        "    nv.nvmlInit()\n"
        "    HANDLE = nv.nvmlDeviceGetHandleByIndex(0)\n"
        "except Exception:\n"
        "    HANDLE = None\n"
        "try:\n"
        "    import pynvml as strict\n"
        "    strict.nvmlInit()\n"
        "except ImportError:\n"
        "    strict = None\n",
    )
    report = scan_json("--select", "ROC201,ROC202", "--show-guarded", str(tmp_path))
    assert _sites(report) == [
        ("probe.py", 3, "ROC201", AVAILABILITY),
        # lines 7-8: any failure falls back (the NVML rules see that themselves)
        # only ImportError is caught: with pynvml installed, nvmlInit raises on ROCm
        ("probe.py", 13, "ROC201", ""),
    ]


def test_a_fallback_that_raises_is_not_portable(tmp_path, scan_json):
    write(
        tmp_path,
        "a.py",
        "try:\n    import pynvml\n    pynvml.nvmlInit()\nexcept Exception:\n"
        "    raise RuntimeError('NVML is required')\n",
    )
    assert [site[:3] for site in _sites(scan_json("--select", "ROC201", str(tmp_path)))] == [
        ("a.py", 3, "ROC201")
    ]


def _guards(source: str) -> tuple[PythonContext, dict[str, str]]:
    """Run the engine's walk over ``source`` and label each ``mark()`` call by its argument."""
    from migrator.engine.python_reports import python_reports
    from migrator.engine.registry import all_rules

    module, context = python_reports(source, "x.py", all_rules(), prefilter=False)
    assert module is not None and context is not None
    labels: dict[str, str] = {}
    for node in context.nodes:
        if isinstance(node, cst.Call) and getattr(node.func, "value", None) == "mark":
            argument = node.args[0].value
            assert isinstance(argument, cst.SimpleString)
            labels[str(argument.evaluated_value)] = context.guards.label_of(node)
    return context, labels


def test_guard_facility_answers_for_each_kind_of_branch():
    _, labels = _guards(
        "import os, sys, platform, torch\n"
        "if torch.version.cuda:\n    mark('cuda')\n"
        "if not torch.version.hip:\n    mark('not-hip')\nelse:\n    mark('hip')\n"
        "if IS_ROCM or torch.version.hip:\n    mark('rocm-or')\n"
        "if torch.cuda.is_available() and torch.version.hip is None:\n    mark('and')\n"
        "x = mark('cond') if torch.version.cuda is not None else 0\n"
        "if platform.system() == 'Darwin':\n    mark('darwin')\n"
        "if os.name == 'nt':\n    mark('nt')\n"
        "if sys.platform != 'linux':\n    mark('not-linux')\n"
        "if sys.platform.startswith('linux'):\n    mark('linux')\n"
        "if torch.cuda.is_available():\n    mark('available')\n"
        "if is_flash_attn_2_available():\n    mark('fa2')\n"
        "if is_torch_bf16_gpu_available():\n    mark('bf16')\n"
        "def has_apex_installed():\n    mark('probe')\n"
        "def f():\n    if not is_hip():\n        return 1\n    mark('after-exit')\n"
        "y = torch.version.cuda and mark('bool-and')\n"
        "try:\n    import tensorrt\n    mark('try-import')\nexcept ImportError:\n    tensorrt = None\n"
        "try:\n    import pycuda\n    mark('broad')\nexcept Exception:\n    pycuda = None\n"
        "try:\n    import cupy\n    mark('raises')\nexcept ImportError:\n    raise\n"
    )
    assert labels == {
        "cuda": NVIDIA_ONLY,
        "not-hip": NVIDIA_ONLY,
        "hip": ROCM_ONLY,
        "rocm-or": ROCM_ONLY,
        "and": NVIDIA_ONLY,
        "cond": NVIDIA_ONLY,
        "darwin": NON_LINUX,
        "nt": NON_LINUX,
        "not-linux": NON_LINUX,
        "linux": "",
        "available": "",
        "fa2": AVAILABILITY,
        "bf16": "",  # a capability check, true on MI300X: not a package probe
        "probe": AVAILABILITY,
        "after-exit": ROCM_ONLY,
        "bool-and": NVIDIA_ONLY,
        "try-import": "",  # runs when the import succeeds; only the import is the fallback
        "broad": IMPORT_FALLBACK,
        "raises": "",
    }


def test_vendor_tests_spelled_with_getattr_membership_or_a_vendor_variable():
    """``getattr(torch.version, "hip", None)``, ``kind in ("xpu", "hip")`` and a variable that
    the file compares with "hip" (so comparing it with "cuda" is an NVIDIA-only test)."""
    _, labels = _guards(
        "import torch\n"
        "def f():\n    if getattr(torch.version, 'hip', None):\n        return True\n"
        "    mark('after-getattr')\n"
        "if bool(getattr(getattr(torch, 'version', None), 'hip', None)):\n    mark('nested')\n"
        "def g():\n    if DEVICE_TYPE in ('xpu', 'hip'):\n        return False\n"
        "    mark('after-in')\n"
        "if DEVICE_TYPE == 'cuda':\n    mark('vendor-cuda')\n"
        "if accel == 'cuda' and x:\n    mark('first-arm')\nelif accel == 'hip':\n    mark('hip-arm')\n"
        "if platform_kind not in ('hip', 'rocm'):\n    mark('not-in')\n"
        "if device.type == 'cuda':\n    mark('device-type')\n"
        "if mode in ('a', 'cuda'):\n    mark('plain-in')\n"
        "if xpu_ok:\n    mark('xpu-flag')\n"
        "if torch.xpu.is_available():\n    mark('xpu-call')\n"
        "if DEVICE_TYPE == 'xpu':\n    mark('xpu-type')\n"
        "if _is_xpu_or_cuda_capability_atleast_8_9():\n    mark('xpu-or-cuda')\n"
    )
    assert labels == {
        "after-getattr": NVIDIA_ONLY,
        "nested": ROCM_ONLY,
        "after-in": NVIDIA_ONLY,
        "vendor-cuda": NVIDIA_ONLY,  # DEVICE_TYPE was compared with "hip" above
        "first-arm": NVIDIA_ONLY,  # a later arm names the ROCm vendor
        "hip-arm": ROCM_ONLY,
        "not-in": NVIDIA_ONLY,
        "device-type": "",  # torch's device type is "cuda" on ROCm too
        "plain-in": "",
        "xpu-flag": OTHER_DEVICE,
        "xpu-call": OTHER_DEVICE,
        "xpu-type": OTHER_DEVICE,
        "xpu-or-cuda": "",
    }


def test_a_try_that_imports_only_torch_guards_a_probe_not_an_optional_package():
    _, labels = _guards(
        "def supported(mode):\n    try:\n        import torch\n        import os\n"
        "        mark('probe-body')\n    except Exception:\n        return False\n"
        "try:\n    import torch, flash_attn\n    mark('optional')\nexcept Exception:\n    pass\n"
        "try:\n    from torch.utils import cpp_extension\n    mark('narrow')\n"
        "except ImportError:\n    cpp_extension = None\n"
    )
    assert labels == {"probe-body": "", "optional": IMPORT_FALLBACK, "narrow": ""}


def test_a_name_the_import_probe_set_for_an_optional_package_is_an_availability_probe():
    """``X is None`` on a name holding an optional CUDA-build package (set to None by the
    file's import fallback) is an availability probe; a user's request (``use_flash_attn``), a
    value that only mentions the package and a name of another package are not."""
    _, labels = _guards(
        "import pytest, torch\n"
        "try:\n    from flash_attn import flash_attn_func\nexcept ImportError:\n"
        "    flash_attn_func = None\n"
        "@pytest.mark.skipif(torch.cuda.device_count() < 2 or utils._XFormersBlockMask is None,"
        " reason='x')\ndef test_real():\n    mark('skipif-none')\n"
        "if flash_attn_func is not None:\n    mark('not-none')\n"
        "if use_flash_attn:\n    mark('request')\n"
        "if tokenizer is None:\n    mark('other')\n"
        "def attn(flash_attn_padding_info):\n"
        "    if flash_attn_padding_info is None:\n        raise ValueError('x')\n"
        "    mark('argument')\n"
    )
    assert labels == {
        "skipif-none": AVAILABILITY,
        "not-none": AVAILABILITY,
        "request": "",
        "other": "",
        "argument": "",  # a value that only mentions the package: not its import
    }


def test_guard_questions_for_rules():
    context, _ = _guards(
        "import torch\nif torch.version.hip:\n    mark('a')\nelse:\n    mark('b')\n"
    )
    calls = [node for node in context.nodes if isinstance(node, cst.Call)]
    rocm, nvidia = calls
    assert context.guards.only_on_rocm(rocm) and not context.guards.never_on_rocm(rocm)
    assert context.guards.never_on_rocm(nvidia) and context.guard_of(nvidia) == NVIDIA_ONLY
    assert context.guard_of(rocm) == ""  # ROCm-only code runs on ROCm: reported as usual
    assert isinstance(ImportTable(), ImportTable)


def test_project_files_that_never_run_on_rocm():
    paths = [
        "docker/nvidia/Dockerfile",
        "docker/amd/Dockerfile",
        "docker/docker-cuda/docker-compose.yml",
        "docker/docker-rocm/docker-compose.yml",
        "requirements.txt",
        "requirements-rocm.txt",
        "Dockerfile.cuda",
        "Dockerfile.rocm6.2",
        "scripts/install_macos.sh",
        "scripts/build-windows.sh",
        "scripts/machine_setup.sh",
        "setup.py",
        "cuda/kernels.py",
        # the tests of one ROCm backend (Triton) of the subject of ``test_flash_attn.py``
        "tests/test_flash_attn.py",
        "tests/test_flash_attn_triton_amd.py",
        # not tests: a backend word between the stem and the AMD word makes no twin
        "ops/attention.py",
        "ops/attention_triton_amd.py",
        "tests/test.py",
        "tests/test_triton_amd.py",
    ]
    assert amd_twins(paths) == {
        "docker/nvidia/Dockerfile": "docker/amd",
        "docker/docker-cuda/docker-compose.yml": "docker/docker-rocm",
        "requirements.txt": "requirements-rocm.txt",
        "Dockerfile.cuda": "Dockerfile.rocm6.2",
        "tests/test_flash_attn.py": "tests/test_flash_attn_triton_amd.py",
    }
    guards = file_guards(paths)
    assert guards["scripts/install_macos.sh"] == "macOS-only file"
    assert guards["scripts/build-windows.sh"] == "Windows-only file"
    assert "scripts/machine_setup.sh" not in guards and "cuda/kernels.py" not in guards
    assert "docker/amd/Dockerfile" not in guards and "requirements-rocm.txt" not in guards
    # a Python file for one NVIDIA GPU model or architecture, unless its path also names AMD
    gpu_files = file_guards(
        ["tests/kaggle/t4_smoke/run_grpo_t4.py", "hopper/setup.py", "hopper/test_x_amd.py"]
        + ["tests/test_a100_like.py", "examples/photohopper.py", "bench/h100_sweep.sh"]
    )
    assert sorted(gpu_files) == [  # a shell script or Dockerfile keeps its ROCm-variant finding
        "hopper/setup.py",
        "tests/kaggle/t4_smoke/run_grpo_t4.py",
        "tests/test_a100_like.py",
    ]
    # any file for another vendor's accelerator, unless its path also names AMD, ROCm or CUDA
    other = file_guards(
        ["backends/gaudi/server/models/__init__.py", "server/requirements_intel.txt"]
        + ["Dockerfile_gaudi", "examples/xpu/bench.py", "ops/xpu_or_cuda.py", "ops/npu_rocm.py"]
        + ["models/neuron_attribution.py", "docs/intelligence.py"]
    )
    assert sorted(other) == [
        "Dockerfile_gaudi",
        "backends/gaudi/server/models/__init__.py",
        "examples/xpu/bench.py",
        "server/requirements_intel.txt",
    ]
    assert set(other.values()) == {"file for another vendor's accelerator (its path names it)"}


def test_dockerfiles_named_for_one_image_of_several_are_dockerfiles():
    from migrator.files.discovery import file_kind

    names = ["Dockerfile_amd", "Dockerfile-rocm", "Dockerfile.cuda", "docker/Dockerfile_trtllm"]
    assert {file_kind(name) for name in names} == {"dockerfile"}
    assert file_kind("dockerfiles.md") != "dockerfile"
    # ``Dockerfile`` beside ``Dockerfile_amd`` is the NVIDIA variant
    assert amd_twins(["Dockerfile", "Dockerfile_amd"]) == {"Dockerfile": "Dockerfile_amd"}


def test_a_folder_named_for_a_cuda_build_beside_a_rocm_folder_holds_nvidia_variants():
    paths = [
        "docker/rocm/Dockerfile.rocm",
        "docker/verl0.4-cu124-torch2.6/Dockerfile.base",
        "docker/verl0.4-cu124-torch2.6/Dockerfile.app.vllm",
        "docker/Dockerfile.stable",  # not in a CUDA-named folder: stays reported
        "tools/cu121-notes/install.sh",  # no ROCm folder beside it
    ]
    assert amd_twins(paths) == {
        "docker/verl0.4-cu124-torch2.6/Dockerfile.base": "docker/rocm",
        "docker/verl0.4-cu124-torch2.6/Dockerfile.app.vllm": "docker/rocm",
    }


def test_nvidia_variant_file_is_neither_reported_nor_fixed(tmp_path, scan_json, run_cli):
    launch = "export CUDA_VISIBLE_DEVICES=0\npython train.py\n"
    nvidia = write(tmp_path, "docker/nvidia/run.sh", launch)
    write(tmp_path, "docker/amd/run.sh", "export HIP_VISIBLE_DEVICES=0\npython train.py\n")
    other = write(tmp_path, "docker/other/run.sh", launch)
    assert [site[:3] for site in _sites(scan_json("--select", "ROC710", str(tmp_path)))] == [
        ("docker/other/run.sh", 1, "ROC710")
    ]
    run_cli("fix", "--select", "ROC710", str(tmp_path))
    assert nvidia.read_text() == launch
    assert "HIP_VISIBLE_DEVICES" in other.read_text()


BNB_USE = "import bitsandbytes as bnb\n\nopt = bnb.optim.AdamW8bit(params, lr=1e-4)\n"
BNB_CONFIG = (
    "from transformers import BitsAndBytesConfig\nconfig = BitsAndBytesConfig(load_in_4bit=True)\n"
)


def test_project_fact_is_one_finding_anchored_at_the_requirement(tmp_path, scan_json, run_cli):
    write(tmp_path, "requirements.txt", "torch\nbitsandbytes==0.41.1\n")
    write(tmp_path, "train.py", BNB_USE)
    write(tmp_path, "tests/test_a.py", BNB_USE)
    write(tmp_path, "tests/test_b.py", BNB_CONFIG)
    report = scan_json("--select", "bitsandbytes,ROC810", str(tmp_path))
    [finding] = report["findings"]
    assert (finding["path"], finding["line"], finding["rule"]) == ("requirements.txt", 2, "ROC810")
    assert finding["severity"] == "error"
    assert finding["message"].endswith("(+3 more sites)")
    assert [(site["path"], site["line"]) for site in finding["related"]] == [
        ("tests/test_a.py", 3),
        ("tests/test_b.py", 2),
        ("train.py", 3),
    ]
    sarif = json.loads(
        run_cli(
            "scan", "--format", "sarif", "--select", "bitsandbytes,ROC810", str(tmp_path)
        ).output
    )
    # each site is a result of its own (an alert per site in code scanning); the first lists
    # the others as related locations
    result, *further = sarif["runs"][0]["results"]
    assert [
        location["physicalLocation"]["artifactLocation"]["uri"]
        for location in result["relatedLocations"]
    ] == ["tests/test_a.py", "tests/test_b.py", "train.py"]
    assert [
        entry["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for entry in further
    ] == ["tests/test_a.py", "tests/test_b.py", "train.py"]


def test_project_fact_without_its_declaration_rule_is_anchored_at_the_first_use(
    tmp_path, scan_json
):
    write(tmp_path, "setup.py", 'setup(install_requires=["bitsandbytes>=0.40,<0.44"])\n')
    write(tmp_path, "b.py", BNB_USE)
    write(tmp_path, "a.py", BNB_CONFIG)
    [finding] = scan_json("--select", "bitsandbytes", str(tmp_path))["findings"]
    assert (finding["path"], finding["line"], finding["rule"]) == ("a.py", 2, "ROC511")
    assert [(site["path"], site["line"]) for site in finding["related"]] == [("b.py", 3)]


def test_one_compose_service_is_one_finding(tmp_path, scan_json):
    write(
        tmp_path,
        "docker-compose.yml",
        "services:\n"
        "  train:\n"
        "    image: x\n"
        "    runtime: nvidia\n"
        "    deploy:\n"
        "      resources:\n"
        "        reservations:\n"
        "          devices:\n"
        "            - driver: nvidia\n"
        "              count: all\n"
        "              capabilities: [gpu]\n"
        "  serve:\n"
        "    image: y\n"
        "    runtime: nvidia\n",
    )
    findings = scan_json("--select", "ROC863", str(tmp_path))["findings"]
    assert [(f["line"], len(f["related"])) for f in findings] == [(4, 1), (14, 0)]


def test_one_package_imported_several_ways_in_one_file(tmp_path, scan_json):
    write(
        tmp_path,
        "m.py",
        "import flash_attn\nfrom flash_attn import flash_attn_func\n"
        "from flash_attn.bert_padding import pad_input\n",
    )
    findings = scan_json("--select", "ROC402", str(tmp_path))["findings"]
    assert [(f["line"], len(f["related"])) for f in findings] == [(1, 2)]


def test_capability_gate_that_only_warns_is_info(tmp_path, scan_json):
    write(
        tmp_path,
        "a.py",
        "import torch, warnings\n"
        "if torch.cuda.get_device_capability() < (9, 0):\n"
        "    warnings.warn('FP8 needs Hopper')\n"
        "def pick():\n"
        "    if torch.cuda.get_device_capability() >= (9, 0):\n"
        "        return 'hopper'\n"
        "    if torch.cuda.get_device_capability() >= (8, 0):\n"
        "        return 'bf16'\n",
    )
    findings = scan_json("--select", "ROC110", str(tmp_path))["findings"]
    # the (8, 0) gate answers every AMD GPU like A100 and H100: not reported
    assert [(f["line"], f["severity"]) for f in findings] == [(2, "info"), (5, "warning")]


def test_hygiene_is_off_by_default_and_never_counts(tmp_path, scan_json, run_cli):
    write(tmp_path, "a.py", "import torch\nscaler = torch.cuda.amp.GradScaler()\n")
    assert scan_json(str(tmp_path))["findings"] == []
    assert run_cli("scan", str(tmp_path)).exit_code == 0
    [finding] = scan_json("--min-severity", "hygiene", str(tmp_path))["findings"]
    assert (finding["rule"], finding["severity"]) == ("ROC520", "hygiene")
    from migrator.model import Finding, Severity
    from migrator.reporting.readiness.assembly import counted

    hygiene = Finding(
        "ROC520", "cuda-amp-namespace", "cuda-amp", Severity.HYGIENE, "a.py", 2, 9, 2, 25, "m"
    )
    guarded = Finding(
        "ROC210",
        "nvidia-smi-subprocess",
        "nvidia-smi",
        Severity.ERROR,
        "a.py",
        4,
        1,
        4,
        9,
        "m",
        guard="NVIDIA-only branch",
    )
    assert counted([hygiene, guarded]) == []


SKIPPED_TESTS = """\
import unittest

import pytest
import torch
from diffusers.utils import is_xformers_available


class PipelineTests(unittest.TestCase):
    @unittest.skipIf(
        torch_device != "cuda" or not is_xformers_available(),
        reason="XFormers attention is only available with CUDA and `xformers` installed",
    )
    def test_xformers_attention(self):
        pipe.enable_xformers_memory_efficient_attention()

    @pytest.mark.skipif(torch.version.hip is not None, reason="NVIDIA only")
    def test_nvidia_smi(self):
        subprocess.run(["nvidia-smi"])

    @pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
    def test_on_any_gpu(self):
        pipe.enable_xformers_memory_efficient_attention()
"""


def test_tests_skipped_by_a_decorator_condition_are_guarded(tmp_path, scan_json):
    write(tmp_path, "tests/test_pipe.py", SKIPPED_TESTS)
    assert _sites(scan_json("--select", "ROC412,ROC210", str(tmp_path))) == [
        ("tests/test_pipe.py", 22, "ROC412", "")
    ]
    shown = _sites(scan_json("--select", "ROC412,ROC210", "--show-guarded", str(tmp_path)))
    assert ("tests/test_pipe.py", 14, "ROC412", AVAILABILITY) in shown
    assert ("tests/test_pipe.py", 18, "ROC210", NVIDIA_ONLY) in shown


NVML_AT_IMPORT = """\
import pynvml

pynvml.nvmlInit()


def driver():
    return pynvml.nvmlSystemGetDriverVersion()


class Device:
    def __init__(self, i):
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(i)

    def name(self):
        return pynvml.nvmlDeviceGetName(self.handle)
"""

NVML_IN_A_FUNCTION = """\
import pynvml


def used(i):
    pynvml.nvmlInit()
    return pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(i)).used
"""


def test_a_module_that_cannot_be_imported_is_one_nvml_problem(tmp_path, scan_json):
    write(tmp_path, "affinity.py", NVML_AT_IMPORT)
    write(tmp_path, "telemetry.py", NVML_IN_A_FUNCTION)
    findings = scan_json("--select", "nvml", str(tmp_path))["findings"]
    at_import = [f for f in findings if f["path"] == "affinity.py"]
    [finding] = at_import
    assert (finding["line"], finding["rule"], finding["severity"]) == (1, "ROC200", "error")
    assert "importing or running it fails" in finding["message"]
    assert [site["line"] for site in finding["related"]] == [3, 7, 15]
    # nvmlInit() inside a function: the import and the init are two problems; the query after
    # the init never runs on ROCm, so it is a related site of the init's finding
    in_function = {f["rule"]: f for f in findings if f["path"] == "telemetry.py"}
    assert sorted(in_function) == ["ROC200", "ROC201"]
    assert [site["line"] for site in in_function["ROC201"]["related"]] == [6]


EXTENSION_SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

cc_flag = ["-gencode", "arch=compute_80,code=sm_80"]


def nvcc_flags():
    return ["-O3", "--expt-relaxed-constexpr"] + cc_flag


setup(
    ext_modules=[
        CUDAExtension("ops", ["ops.cu"], extra_compile_args={"nvcc": nvcc_flags()}),
    ],
    cmdclass={"build_ext": BuildExtension},
)
"""


def test_an_extension_build_and_its_nvcc_flags_are_one_problem_at_the_build(tmp_path, scan_json):
    write(tmp_path, "setup.py", EXTENSION_SETUP)
    write(tmp_path, "flags.py", 'import torch.utils.cpp_extension\nF = ["-arch=sm_90"]\n')
    findings = scan_json("--select", "ROC600,ROC603", str(tmp_path))["findings"]
    assert [(f["path"], f["line"], f["rule"]) for f in findings] == [
        ("flags.py", 2, "ROC603"),
        ("setup.py", 13, "ROC600"),
    ]
    assert [site["line"] for site in findings[1]["related"]] == [4, 4, 8]


FLASH_OPT_IN = """\
from transformers import AutoModelForCausalLM


def build(name, use_flash_attention_2=False, attn_implementation="eager"):
    if use_flash_attention_2 and attn_implementation != "flash_attention_2":
        attn_implementation = "flash_attention_2"
    return AutoModelForCausalLM.from_pretrained(name, attn_implementation=attn_implementation)
"""

FLASH_FORCED = """\
def configure(config):
    if config._attn_implementation != "flash_attention_2":
        config._attn_implementation = "flash_attention_2"
"""


def test_an_explicit_flash_attention_request_is_the_flash_attn_dependency(tmp_path, scan_json):
    write(
        tmp_path,
        "setup.py",
        "from setuptools import setup\n"
        "setup(name='x', extras_require={'gpu': ['flash-attn==2.7.4.post1']})\n",
    )
    write(tmp_path, "pkg/model.py", FLASH_OPT_IN)
    write(tmp_path, "pkg/forced.py", FLASH_FORCED)
    findings = scan_json("--select", "ROC403,ROC808", str(tmp_path))["findings"]
    # the user's switch joins the dependency at its declaration; a forced choice stays its own
    assert [(f["path"], f["line"], f["rule"]) for f in findings] == [
        ("pkg/forced.py", 3, "ROC403"),
        ("setup.py", 2, "ROC808"),
    ]
    assert [(s["path"], s["line"]) for s in findings[1]["related"]] == [("pkg/model.py", 6)]


FLASH_PACKED_DEFAULT = """\
from transformers import AutoModelForCausalLM


class Actor:
    def __init__(self, name, attn_implementation="flash_attention_2", packing_samples=False):
        self.model = AutoModelForCausalLM.from_pretrained(
            name, attn_implementation=attn_implementation
        )
        self.packing_samples = packing_samples
"""


def test_flash_attention_the_code_needs_is_the_flash_attn_dependency(tmp_path, scan_json):
    # a default that packed sequences rely on gets no rewrite: like the user's own request, the
    # problem is the project's need for ROCm/flash-attention, reported once at the declaration
    write(tmp_path, "requirements.txt", "torch\nflash-attn\ntransformers\n")
    write(tmp_path, "pkg/actor.py", FLASH_PACKED_DEFAULT)
    write(tmp_path, "pkg/critic.py", FLASH_PACKED_DEFAULT.replace("Actor", "Critic"))
    findings = scan_json("--select", "ROC403,ROC808", str(tmp_path))["findings"]
    assert [(f["path"], f["line"], f["rule"]) for f in findings] == [
        ("requirements.txt", 2, "ROC808")
    ]
    assert [(s["path"], s["line"]) for s in findings[0]["related"]] == [
        ("pkg/actor.py", 5),
        ("pkg/critic.py", 5),
    ]


GUARDED_NVML = (
    "import torch\n"
    "try:\n    import pynvml\nexcept ImportError:\n    pynvml = None\n"
    "def names():\n"
    "    if torch.version.hip is None and pynvml is not None:\n"
    "        pynvml.nvmlInit()\n"
    "        return [pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(0))]\n"
    "    return [torch.cuda.get_device_name(0)]\n"
)


def test_nvml_bindings_are_a_problem_only_through_an_unguarded_use(tmp_path, scan_json):
    """NVML bindings install anywhere (pure Python); listing or installing them is reported
    only when some NVML call of the project would fail on ROCm."""
    write(tmp_path, "requirements.txt", "torch\nnvidia-ml-py>=12\n")
    write(tmp_path, "Dockerfile", "FROM python:3.11\nRUN pip install nvidia-ml-py3 einops\n")
    write(tmp_path, "telemetry.py", GUARDED_NVML)
    report = scan_json(str(tmp_path))
    assert [f["rule"] for f in report["findings"] if "nvml" in f["message"].lower()] == []
    shown = scan_json("--show-guarded", str(tmp_path))
    guards = {f["rule"]: f["guard"] for f in shown["findings"] if f["rule"] in ("ROC812", "ROC867")}
    assert set(guards) == {"ROC812", "ROC867"}
    assert all("every NVML use in the project is guarded" in why for why in guards.values())
    write(tmp_path, "probe.py", "import pynvml\npynvml.nvmlInit()\n")
    report = scan_json(str(tmp_path))
    rules = {(f["rule"], f["path"]) for f in report["findings"]}
    assert {("ROC812", "requirements.txt"), ("ROC867", "Dockerfile")} <= rules


def test_an_install_of_a_deprecated_package_stays_an_advisory(tmp_path, scan_json):
    """ROC867/ROC868 relay the package rule's verdict at its severity when that is lower: a
    deprecated quantisation package (ROC813, info) installed in a Dockerfile or from Python is
    an advisory there too, while a CUDA-only package stays a warning."""
    write(
        tmp_path,
        "Dockerfile",
        "FROM python:3.11\nRUN pip install auto-gptq\nRUN pip install tensorrt\n",
    )
    write(
        tmp_path,
        "setup_env.py",
        "import subprocess\nsubprocess.run(['pip', 'install', 'auto-gptq'], check=True)\n",
    )
    report = scan_json(str(tmp_path))
    severities = {(f["rule"], f["line"]): f["severity"] for f in report["findings"]}
    assert severities == {("ROC867", 2): "info", ("ROC867", 3): "warning", ("ROC868", 2): "info"}


def test_queries_after_an_unguarded_nvml_init_of_their_function_are_its_problem(
    tmp_path, scan_json
):
    """On ROCm ``nvmlInit()`` raises, so the queries after it in the same function never run:
    one finding at the init (ROC201) with the queries related; a query in another function
    stays its own finding."""
    write(
        tmp_path,
        "stats.py",
        "import pynvml\n\n"
        "def report():\n"
        "    pynvml.nvmlInit()\n"
        "    count = pynvml.nvmlDeviceGetCount()\n"
        "    handle = pynvml.nvmlDeviceGetHandleByIndex(0)\n"
        "    return count, pynvml.nvmlDeviceGetMemoryInfo(handle).used\n\n"
        "def name():\n"
        "    return pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(0))\n",
    )
    report = scan_json("--select", "ROC201,ROC202", str(tmp_path))
    found = {(f["rule"], f["line"]): [r["line"] for r in f["related"]] for f in report["findings"]}
    assert found == {("ROC201", 4): [5, 7], ("ROC202", 10): []}


def test_an_unguarded_flash_attn_import_and_its_unrewritable_calls_are_one_problem(
    tmp_path, scan_json
):
    write(
        tmp_path,
        "attn.py",
        "from flash_attn import flash_attn_func\n\n\n"
        "def local(q, k, v):\n"
        "    return flash_attn_func(q, k, v, causal=True, window_size=(256, 0))\n\n\n"
        "def probs(q, k, v):\n"
        "    return flash_attn_func(q, k, v, return_attn_probs=True)\n",
    )
    report = scan_json("--no-cache", str(tmp_path))
    flash = [f for f in report["findings"] if f["category"] == "flash-attn"]
    # one dependency problem, anchored at the import where the user acts, the calls its sites
    assert [(f["rule"], f["line"]) for f in flash] == [("ROC402", 1)]
    assert [site["line"] for site in flash[0]["related"]] == [5, 9]


def test_a_call_whose_rewrite_the_projects_torch_rules_out_joins_the_unguarded_import(
    tmp_path, scan_json
):
    """The SDPA rewrite needs torch 2.5; on a project pinned to torch 2.3 the fix is withheld,
    and the call is then one more use of the file's unguarded import. Where the import is
    guarded, the call stays a finding of its own, saying why it has no fix."""
    call = "def attend(q, k, v):\n    return flash_attn_func(q, k, v, causal=True)\n"
    write(tmp_path, "requirements.txt", "torch>=2.3,<2.4\n")
    write(tmp_path, "plain.py", "from flash_attn import flash_attn_func\n\n\n" + call)
    write(
        tmp_path,
        "guarded.py",
        "try:\n    from flash_attn import flash_attn_func\nexcept ImportError:\n"
        "    flash_attn_func = None\n\n\n" + call,
    )
    report = scan_json("--no-cache", str(tmp_path))
    flash = {
        (f["path"].rsplit("/", 1)[-1], f["rule"], f["line"]): [r["line"] for r in f["related"]]
        for f in report["findings"]
        if f["category"] == "flash-attn"
    }
    assert flash == {("plain.py", "ROC402", 1): [5], ("guarded.py", "ROC400", 8): []}
    (guarded,) = [f for f in report["findings"] if f["path"].endswith("guarded.py")]
    assert "no automatic fix: needs torch>=2.5" in guarded["message"]
    # the joined call's reason is kept in the finding it joined
    (plain,) = [f for f in report["findings"] if f["path"].endswith("plain.py")]
    assert plain["message"].endswith(
        "(+1 more site); no automatic fix at line 5: needs torch>=2.5; this code runs on torch>=2.3,<2.4"
    )
