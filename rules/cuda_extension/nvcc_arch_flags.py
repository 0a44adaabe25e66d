"""ROC603 (nvcc-arch-flags): flags nvcc-only architecture flags (`-gencode
arch=compute_80,code=sm_80`, `-arch=sm_90`, `--generate-code`, `--gpu-architecture`) and nvcc's
`--expt-relaxed-constexpr` / `--expt-extended-lambda` switches (and their `--relaxed-constexpr`
/ `--extended-lambda` spellings) and the nvcc driver options clang rejects (`-Xptxas`,
`--use_fast_math`, `--extra-device-vectorization`) in string literals of files that use
`torch.utils.cpp_extension` or build an extension through the project's own wrapper of it; one
finding per file."""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, Problem, PythonRule, Severity, Valid
from migrator.api.knowledge import build_calls_in

from .._literals import docstring_nodes
from .._rocm_guards import called_only_on_nvidia
from ._shared import EXTENSION_BUILD, _data, _rocm_aware

_SWITCH_MESSAGE = (
    "nvcc-only switch reaches hipcc on ROCm, which forwards it to clang (no such option there; "
    "clang treats constexpr functions as host-device by default)"
)
_DRIVER_MESSAGE = (
    "nvcc-only option reaches hipcc on ROCm, which forwards it to clang: the build stops with "
    "`unknown argument`"
)


class NvccArchFlags(PythonRule):
    """
    ## What it does
    Flags nvcc-only architecture flags (`-gencode arch=compute_80,code=sm_80`, `-arch=sm_90`,
    `--generate-code`, `--gpu-architecture`) and nvcc's `--expt-relaxed-constexpr` /
    `--expt-extended-lambda` switches (and their `--relaxed-constexpr` / `--extended-lambda`
    spellings) and the nvcc driver options clang rejects (`-Xptxas`, `--use_fast_math`,
    `--extra-device-vectorization`) in string literals of files that use
    `torch.utils.cpp_extension`, or that build an extension through the project's own function
    wrapping it (`get_plugin(..., extra_cuda_cflags=[...])`, found by the build model); one
    finding per file.

    ## Why it breaks on ROCm
    On ROCm, `cpp_extension` hands `extra_compile_args["nvcc"]` / `extra_cuda_cflags` to hipcc
    unchanged (it only renames `-D...CUDA...` macros to HIP) and adds its own
    `--offload-arch` flags from `PYTORCH_ROCM_ARCH`. hipcc forwards every option it does not
    handle itself to clang unchanged. The NVIDIA architecture flags mean nothing to clang and
    break or confuse the build; clang has no relaxed-constexpr or extended-lambda switch at all
    (it already treats unannotated `constexpr` functions as `__host__ __device__`), so the build
    stops.

    ## Example
    ```python
    nvcc_flags = ["-O3", "-gencode", "arch=compute_80,code=sm_80"]
    CUDAExtension("ops", ["ops.cu"], extra_compile_args={"nvcc": nvcc_flags})
    ```

    ## Manual migration
    Add the NVIDIA arch flags only for CUDA builds, and let `PYTORCH_ROCM_ARCH` (or explicit
    `--offload-arch=gfx942`) choose the AMD targets:
    ```python
    from torch.utils.cpp_extension import IS_HIP_EXTENSION

    nvcc_flags = ["-O3"]
    if not IS_HIP_EXTENSION:
        nvcc_flags += ["-gencode", "arch=compute_80,code=sm_80"]
    ```

    ## Known problems
    Not reported inside a module-level helper that the file calls only from NVIDIA-only branches
    (`add_cuda_gencodes(...)` under `if not IS_ROCM:`), nor in a build function (or build
    script) that already tests for a ROCm build: its flags are then chosen per vendor. In a file
    that also builds the extension (ROC600), the flags are related sites of that one finding
    (build and check the extension on ROCm), not a finding of their own.

    ## References
    - pytorch `torch/utils/cpp_extension.py` (`_hipify_compile_flags`, `_get_rocm_arch_flags`)
    - ROCm/llvm-project `amd/hipcc/src/hipBin_amd.h` (`executeHipCCCmd`)
    """

    code = "ROC603"
    name = "nvcc-arch-flags"
    category = "cuda-extension"
    severity = Severity.WARNING
    impact = Impact(consequence="crash-path", aggregate="scope", effort_hours=0.5)
    message = "nvcc architecture flag reaches hipcc on ROCm (cpp_extension passes nvcc flags on)"
    fact = "§6 TORCH_CUDA_ARCH_LIST row, §7 CUDAExtension and nvcc-only flags rows; [P9][H5][H6]"
    parsing = Parsing(
        triggers=(
            "-gencode",
            "arch=compute_",
            "-arch=sm_",
            "--generate-code",
            "--gpu-architecture",
            "relaxed-constexpr",
            "extended-lambda",
            "-Xptxas",
            "-Xfatbin",
            "-Xnvlink",
            "-Xcudafe",
            "ptxas-options",
            "fatbin-options",
            "nvlink-options",
            "-compress-all",
            "--use_fast_math",
            "--extra-device-vectorization",
        )
    )
    valid = [
        Valid(  # a gencode helper that only the non-ROCm branch calls
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "def add_cuda_gencodes(cc_flag):\n"
            "    cc_flag += ['-gencode', 'arch=compute_80,code=sm_80']\n"
            "if not SKIP_CUDA_BUILD and not IS_ROCM:\n"
            "    add_cuda_gencodes(cc_flag)\n",
            path="setup.py",
        ),
        Valid(
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "ext = CUDAExtension('ops', ['ops.cu'], extra_compile_args={'nvcc': ['-O3']})\n"
        ),
        Valid("HELP = '-gencode arch=compute_80,code=sm_80 builds for A100'\n"),
        Valid(  # hipcc turns the single-dash spelling into -DHIP_FAST_MATH
            "from torch.utils.cpp_extension import load\n"
            "m = load('m', ['m.cu'], extra_cuda_cflags=['-use_fast_math'])\n"
        ),
        Valid(
            '"""Pass -gencode arch=compute_80,code=sm_80 on CUDA."""\n'
            "from torch.utils.cpp_extension import CUDAExtension\n"
        ),
    ]
    invalid = [
        Invalid(  # the same helper called on every build
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "def add_cuda_gencodes(cc_flag):\n"
            "    cc_flag += ['-gencode', 'arch=compute_80,code=sm_80']\n"
            "if not SKIP_CUDA_BUILD:\n"
            "    add_cuda_gencodes(cc_flag)\n",
            path="setup.py",
            line=3,
        ),
        Invalid(
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "ext = CUDAExtension('ops', ['ops.cu'],\n"
            "    extra_compile_args={'nvcc': ['-O3', '-gencode', 'arch=compute_80,code=sm_80']})\n",
            line=3,
            column=41,
            count=1,
        ),
        Invalid(
            "import torch.utils.cpp_extension as ext\n"
            "flags = ['-arch=sm_90a']\n"
            "mod = ext.load('ops', ['ops.cu'], extra_cuda_cflags=flags)\n",
            line=2,
        ),
        Invalid(  # one finding per flag list
            "from torch.utils.cpp_extension import load\n\n"
            "ops = load('ops', ['ops.cu'],\n"
            "           extra_cuda_cflags=['-O3', '--expt-relaxed-constexpr', '--expt-extended-lambda'])\n",
            line=4,
            column=38,
            count=1,
        ),
        Invalid(  # nvcc driver options clang does not know (one finding per flag list)
            "from torch.utils.cpp_extension import load\n"
            "wkv = load(name='wkv', sources=['wkv.cu'],\n"
            "           extra_cuda_cflags=['--use_fast_math', '-O3', '-Xptxas -O3',"
            " '--extra-device-vectorization'])\n",
            line=3,
            count=1,
        ),
        Invalid(  # a back-end tool's options (fatbinary's), however spelled
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "ext = CUDAExtension('ops', ['ops.cu'],\n"
            "                    extra_compile_args={'nvcc': ['-O3', '-Xfatbin', '-compress-all']})\n",
            line=3,
            count=1,
        ),
        Invalid(
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "NVCC = ['-O3', '--extended-lambda']\n"
            "ext = CUDAExtension('ops', ['ops.cu'], extra_compile_args={'nvcc': NVCC})\n",
            line=2,
        ),
    ]

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self._active: bool | None = None
        self._patterns = [re.compile(p) for p in _data()["nvcc_flags"]["patterns"]]
        self._switches = [re.compile(p) for p in _data()["nvcc_only_flags"]["patterns"]]
        self._drivers = [re.compile(p) for p in _data()["nvcc_driver_flags"]["patterns"]]
        self._docstrings: frozenset[int] | None = None
        self._found: list[tuple[cst.SimpleString, str]] = []

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        value = node.evaluated_value
        if not isinstance(value, str):
            return
        switch = any(p.search(value) for p in self._switches)
        driver = not switch and any(p.search(value) for p in self._drivers)
        if not switch and not driver and not any(p.search(value) for p in self._patterns):
            return
        if self._active is None:
            # only files that build extensions: the flags then reach cpp_extension, directly or
            # through a project function that wraps it (the build model's calls in this file)
            self._active = "cpp_extension" in self.ctx.module_code() or bool(
                build_calls_in(self.ctx.project, self.ctx.path)
            )
        if not self._active:
            return
        if self._docstrings is None:
            self._docstrings = docstring_nodes(self.ctx.module)
        if id(node) not in self._docstrings:
            message = _SWITCH_MESSAGE if switch else _DRIVER_MESSAGE if driver else self.message
            self._found.append((node, f"{message}: `{value[:60]}`"))

    def leave_Module(self, original_node: cst.Module) -> None:
        for node, message in self._found:
            if _rocm_aware(self.ctx, node) or called_only_on_nvidia(self.ctx, node):
                continue  # flags for the CUDA build only, or a build that dispatches on ROCm
            self.report(node, message=message, problem=Problem(key=EXTENSION_BUILD))
