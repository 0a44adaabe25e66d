"""Rule-level precision classes of issue #8 on small real-shaped projects: what is now quiet
(with why) and what must still be reported, at exact locations."""

from __future__ import annotations

import libcst as cst

from migrator.reach.guard_conditions import NVIDIA_ONLY
from migrator.reach.guards import Guards
from tests.conftest import write


def _sites(report: dict) -> list[tuple[str, int, str]]:
    return sorted((f["path"], f["line"], f["rule"]) for f in report["findings"])


DISPATCH = """\
import torch

from .utils import is_flash_attn_available, is_xformers_available

if is_flash_attn_available():
    from flash_attn import flash_attn_func, flash_attn_varlen_func
else:
    flash_attn_func = None
    flash_attn_varlen_func = None

if is_xformers_available():
    import xformers.ops
else:
    xformers = None


@registry.register("flash")
def _flash_attention(query, key, value):
    return flash_attn_func(q=query, k=key, v=value)


def _flash_varlen_attention(query, key, value, cu, m):
    return flash_attn_varlen_func(q=query, k=key, v=value, cu_seqlens_q=cu, cu_seqlens_k=cu,
                                  max_seqlen_q=m, max_seqlen_k=m)


class XFormersAttnProcessor:
    def __call__(self, attn, query, key, value, mask=None):
        return xformers.ops.memory_efficient_attention(query, key, value, attn_bias=mask)


def packed_forward(query, key, value, cu, m):
    return flash_attn_varlen_func(query, key, value, cu, cu, m, m)
"""


def test_optional_backends_are_quiet_and_other_callers_are_not(tmp_path, scan_json):
    write(tmp_path, "pkg/__init__.py", "")
    write(tmp_path, "pkg/attention_dispatch.py", DISPATCH)
    report = scan_json("--select", "ROC400,ROC401,ROC410", str(tmp_path))
    # only the caller that is no flash-attn backend of its own is reported
    assert _sites(report) == [("pkg/attention_dispatch.py", 33, "ROC401")]


def test_flash_attention_strings_in_tests_are_quiet(tmp_path, scan_json):
    model = (
        "from transformers import AutoModelForCausalLM\n"
        "def load(name):\n"
        '    return AutoModelForCausalLM.from_pretrained(name, attn_implementation="flash_attention_2")\n'
    )
    test = (
        "def test_mask(cfg):\n"
        '    cfg._attn_implementation = "flash_attention_2"\n'
        '    cfg.attn_implementation = "flash_attention_3"\n'
    )
    write(tmp_path, "app/model.py", model)
    write(tmp_path, "tests/monkeypatch/test_mask.py", test)
    write(tmp_path, "app/test_model.py", test)
    report = scan_json("--select", "ROC403,ROC404", str(tmp_path))
    assert _sites(report) == [("app/model.py", 3, "ROC403")]


FP8 = """\
import torch


def recognise(w, layer):
    if w.dtype == torch.float8_e4m3fn:
        return layer.weight_scale_inv
    return None


def quantize(w):
    return (w / w.abs().max() * 448.0).to(torch.float8_e4m3fn)
"""

NVFP4 = """\
import torch

E4M3_MAX = 448.0  # NVFP4 block scales are FP8 E4M3


def nvfp4_scales(x):
    amax = x.abs().amax(dim=-1)
    return (amax / 6.0).clamp(max=E4M3_MAX).to(torch.float8_e4m3fn)
"""


def test_fp8_dtype_tests_and_block_scaled_constants(tmp_path, scan_json):
    write(tmp_path, "fp8.py", FP8)
    write(tmp_path, "nvfp4_quant.py", NVFP4)
    report = scan_json("--select", "ROC120,ROC121", str(tmp_path))
    assert _sites(report) == [
        ("fp8.py", 11, "ROC120"),  # the cast, not the dtype test
        ("fp8.py", 11, "ROC121"),
    ]  # nvfp4_quant.py: E4M3 and its 448 are the NVFP4 format's own scale type and maximum


SETUP = """\
import torch
from torch.utils.cpp_extension import CUDAExtension

IS_ROCM = torch.version.hip is not None


def add_cuda_gencodes(cc_flag):
    cc_flag += ["-gencode", "arch=compute_80,code=sm_80"]


ext_modules = []
if not IS_ROCM:
    cc_flag = []
    add_cuda_gencodes(cc_flag)
    ext_modules.append(CUDAExtension("fa_cuda", ["fa.cu"], extra_compile_args={"nvcc": cc_flag}))
else:
    ext_modules.append(CUDAExtension("fa_hip", ["fa_hip.cpp"]))
"""

LAYER_NORM = """\
from torch.utils.cpp_extension import CUDAExtension

ext = CUDAExtension("ln", ["ln.cu"], extra_compile_args={"nvcc": ["-gencode", "arch=compute_80,code=sm_80"]})
"""


def test_extension_builds_that_dispatch_on_rocm(tmp_path, scan_json):
    write(tmp_path, "setup.py", SETUP)
    write(tmp_path, "csrc/layer_norm/setup.py", LAYER_NORM)
    shown = scan_json("--select", "ROC600,ROC603", "--show-guarded", str(tmp_path))
    assert _sites(shown) == [
        ("csrc/layer_norm/setup.py", 3, "ROC600"),
    ]  # setup.py dispatches on ROCm: its CUDA branch, helper and ROCm branch are all quiet
    # the nvcc flags passed to the build are part of that one problem (ROC603 as related sites)
    [finding] = shown["findings"]
    assert [(site["line"], site["column"]) for site in finding["related"]] == [(3, 67), (3, 79)]


NVCC_VERSION_SETUP = """\
import subprocess
from torch.utils import cpp_extension
from torch.utils.cpp_extension import CUDAExtension


def cuda_version(cuda_dir):
    return subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"])


raw = cuda_version(cpp_extension.CUDA_HOME)
ext = CUDAExtension("ops", ["ops.cu"])
"""


def test_nvcc_probe_through_cuda_home_is_part_of_the_extension_build(tmp_path, scan_json):
    """``cpp_extension.CUDA_HOME`` is None on ROCm builds of torch: the setup's nvcc probe
    raises before the build, one problem with the build it precedes (ROC604 a related site of
    ROC600, at error severity)."""
    write(tmp_path, "setup.py", NVCC_VERSION_SETUP)
    shown = scan_json("--select", "ROC600,ROC604", str(tmp_path))
    [finding] = shown["findings"]
    assert (finding["rule"], finding["line"], finding["severity"]) == ("ROC600", 11, "error")
    assert [site["line"] for site in finding["related"]] == [10]


GATES = """\
import torch

try:
    from flash_attn_interface import flash_attn_func as fa3
except ImportError:
    fa3 = None
if torch.cuda.get_device_capability()[0] != 9:
    fa3 = None


def check_fp6(shape):
    major, _ = torch.cuda.get_device_capability()
    if major != 8:
        return
    run_fp6(shape)


def check_wgmma(shape):
    if torch.cuda.get_device_capability()[0] < 9:
        return
    run_wgmma(shape)


def check_fp8(shape):
    if not (torch.cuda.get_device_capability() >= (8, 9)):
        pytest.skip("FP8 needs compute capability >= 8.9")
    run_fp8(shape)


def tile(dev):
    return 32 if torch.cuda.get_device_capability(dev)[0] >= 10 else 128


def require_hopper():
    cc = torch.cuda.get_device_capability()
    if cc < (9, 0):
        raise RuntimeError(f"needs Hopper, detected sm_{cc[0]}{cc[1]}")
    return f"sm_{cc[0]}{cc[1]}"
"""


def test_capability_gates_that_cannot_pick_unrunnable_code(tmp_path, scan_json):
    write(tmp_path, "gates.py", GATES)
    report = scan_json("--select", "ROC110,ROC112", str(tmp_path))
    assert _sites(report) == [
        ("gates.py", 19, "ROC110"),  # MI300X (9, 4) runs the Hopper-only kernel
        ("gates.py", 25, "ROC110"),  # `not (>= (8, 9))`: MI300X does not skip the FP8 test
        ("gates.py", 36, "ROC110"),  # a Hopper requirement that MI300X passes
        ("gates.py", 38, "ROC112"),  # a returned sm_XY name selects something; the raise not
    ]


NVML = """\
import torch
from pynvml import NVMLError_LibraryNotFound, nvmlInit

pynvml = None


def init():
    global pynvml
    try:
        import pynvml
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        pynvml = None


def free_memory(i):
    if pynvml:
        handle = pynvml.nvmlDeviceGetHandleByIndex(i)
        return pynvml.nvmlDeviceGetMemoryInfo(handle).free
    return torch.cuda.mem_get_info(i)[0]


def start():
    try:
        nvmlInit()
    except NVMLError_LibraryNotFound:
        print("FATAL ERROR: NVML not found")
        raise
"""


def test_nvml_queries_behind_a_cleared_binding_and_a_reraising_handler(tmp_path, scan_json):
    write(tmp_path, "accel.py", NVML)
    report = scan_json("--select", "ROC201,ROC202", str(tmp_path))
    assert _sites(report) == [("accel.py", 25, "ROC201")]
    message = report["findings"][0]["message"]
    assert "re-raises" in message and "nothing catches it" not in message


SMI = """\
import subprocess

import torch


def _check_nvidia_links(report):
    out = subprocess.run(["nvidia-smi", "topo", "-m"], stdout=subprocess.PIPE, text=True)
    report(out.stdout)


def _query():
    return subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE, text=True).stdout


def check_links(report):
    name = torch.cuda.get_device_properties(0).name.lower()
    if "nvidia" in name:
        _check_nvidia_links(report)
    report(_query())
"""


def test_program_helpers_called_only_for_nvidia_names(tmp_path, scan_json):
    write(tmp_path, "links.py", SMI)
    report = scan_json("--select", "ROC210", str(tmp_path))
    assert _sites(report) == [("links.py", 12, "ROC210")]


def test_a_vendor_name_test_is_an_nvidia_branch():
    module = cst.parse_module('if "nvidia" in name:\n    a()\nif "NVIDIA" not in name:\n    b()\n')
    guards = Guards(lambda node: None, {})
    first, second = (statement.test for statement in module.body)
    assert guards.classify(first) == (NVIDIA_ONLY, None)
    assert guards.classify(second) == (None, NVIDIA_ONLY)


ARCH = """\
import os

os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0;9.0"
"""

ARCH_HANDLED = """\
import os

saved = os.environ.get("TORCH_CUDA_ARCH_LIST")
if is_rocm_pytorch():
    os.environ["PYTORCH_ROCM_ARCH"] = "gfx942"
"""


def test_torch_cuda_arch_list_is_advice(tmp_path, scan_json):
    write(tmp_path, "build.py", ARCH)
    write(tmp_path, "builder.py", ARCH_HANDLED)
    write(tmp_path, "Dockerfile", 'FROM x\nENV TORCH_CUDA_ARCH_LIST="8.0;9.0"\n')
    report = scan_json("--select", "ROC703,ROC713", str(tmp_path))
    found = sorted((f["path"], f["line"], f["rule"], f["severity"]) for f in report["findings"])
    assert found == [
        ("Dockerfile", 2, "ROC713", "info"),
        ("build.py", 3, "ROC703", "info"),
    ]


ATTENTION = """\
from transformers.utils import is_flash_attn_2_available, is_torch_npu_available


def configure(config, model_args):
    if model_args.flash_attn == "fa2":
        if not (is_flash_attn_2_available() or is_torch_npu_available()):
            return
        config._attn_implementation = "flash_attention_2"
    if model_args.flash_attn == "auto":
        if not (is_flash_attn_2_available() or model_args.force):
            return
        config._attn_implementation = "flash_attention_2"
"""


def test_a_package_probe_or_another_vendors_device_keeps_the_request_off_rocm(tmp_path, scan_json):
    """``if not (is_flash_attn_2_available() or is_torch_npu_available()): return``: what follows
    runs where flash-attn is installed or on an Ascend NPU, never on a bare ROCm build; an ``or``
    with an arbitrary switch proves nothing."""
    write(tmp_path, "attention.py", ATTENTION)
    report = scan_json("--select", "ROC403", str(tmp_path))
    assert _sites(report) == [("attention.py", 12, "ROC403")]


def test_a_gpu_model_name_test_is_an_nvidia_branch():
    module = cst.parse_module(
        'if gpu_type == "h100_80gb" and fp8:\n    a()\n'
        'if device_name != "a100-40g":\n    b()\n'
        'if model == "t4":\n    c()\n'
    )
    guards = Guards(lambda node: None, {})
    first, second, third = (statement.test for statement in module.body)
    assert guards.classify(first) == (NVIDIA_ONLY, None)
    assert guards.classify(second) == (None, NVIDIA_ONLY)
    assert guards.classify(third) == (None, None)  # "model" need not name a GPU
