"""A setup.py that builds its GPU extension only where a helper finds the CUDA toolkit and
otherwise builds a CPU stub (the shape of OpenFold's attention-softmax build, issue #47 fresh
round 3): the gate is found through the name the helper's result is bound to, and the gated
build, its nvcc-only flags and the gate are one finding, anchored at the test."""

from __future__ import annotations

from tests.conftest import write

SETUP = """\
import os
import subprocess

import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME

extra_cuda_flags = [
    "-maxrregcount=50",
    "--expt-relaxed-constexpr",
    "--expt-extended-lambda",
]


def get_cuda_bare_metal_version(cuda_dir):
    if cuda_dir is None or torch.version.cuda is None:
        return None, -1, 0
    raw = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)
    release = raw.split("release ")[1].split(",")[0].split(".")
    return raw, int(release[0]), int(release[1])


_, bare_metal_major, _ = get_cuda_bare_metal_version(CUDA_HOME)

if bare_metal_major != -1:
    modules = [
        CUDAExtension(
            name="attn_core_inplace_cuda",
            sources=["csrc/softmax_cuda.cpp", "csrc/softmax_cuda_kernel.cu"],
            extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", "--use_fast_math"] + extra_cuda_flags},
        )
    ]
else:
    modules = [
        CppExtension(
            name="attn_core_inplace_cuda",
            sources=["csrc/softmax_cuda.cpp", "csrc/softmax_cuda_stub.cpp"],
        )
    ]

setup(name="pkg", ext_modules=modules, cmdclass={"build_ext": BuildExtension})
"""

KERNEL = """\
#include <torch/extension.h>
__global__ void softmax(float* x, int n) { if (threadIdx.x < n) x[threadIdx.x] = 0.f; }
"""


def test_a_gate_through_a_helpers_result_anchors_the_build_problem(tmp_path, scan_json):
    write(tmp_path, "setup.py", SETUP)
    write(tmp_path, "csrc/softmax_cuda.cpp", "#include <torch/extension.h>\n")
    write(tmp_path, "csrc/softmax_cuda_kernel.cu", KERNEL)
    write(tmp_path, "csrc/softmax_cuda_stub.cpp", "#include <torch/extension.h>\n")
    report = scan_json(str(tmp_path))
    setup_findings = [f for f in report["findings"] if f["path"].endswith("setup.py")]
    build = [f for f in setup_findings if f["rule"] in {"ROC600", "ROC603", "ROC604", "ROC606"}]
    assert len(build) == 1, [(f["rule"], f["line"]) for f in build]
    (gate,) = build
    assert gate["rule"] == "ROC606"
    assert gate["line"] == SETUP.splitlines().index("if bare_metal_major != -1:") + 1
    assert "CPU-only" in gate["message"]
    related = {site["line"] for site in gate["related"]}
    # the gated CUDAExtension call and its nvcc-only flags are sites of the same problem
    assert SETUP.splitlines().index("        CUDAExtension(") + 1 in related
    assert SETUP.splitlines().index('    "--expt-relaxed-constexpr",') + 1 in related
