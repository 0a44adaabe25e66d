"""ROC601 (inline-ptx-asm): flags inline assembly (`asm(...)`, `asm volatile(...)`) inside CUDA
source kept in Python strings."""

from __future__ import annotations

import re

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, Severity, Valid

from ._shared import _KernelSource

_ASM = re.compile(r"\b(?:asm|__asm__)\s*(?:volatile\s*|__volatile__\s*)?\(")


def _line_of(text: str, start: int) -> str:
    line = text[text.rfind("\n", 0, start) + 1 :]
    line = line.split("\n", 1)[0].split("\\n", 1)[0]
    return line.strip()[:80]


class InlinePtxAsm(_KernelSource):
    """
    ## What it does
    Flags inline assembly (`asm(...)`, `asm volatile(...)`) inside CUDA source kept in Python
    strings: `load_inline(cuda_sources=...)`, `cupy.RawKernel`/`RawModule`, `SourceModule`,
    or any string with CUDA markers (`__global__`, `threadIdx`, …).

    ## Why it breaks on ROCm
    Inline PTX is NVIDIA's virtual ISA; HIP-Clang accepts AMD GCN assembly only, and hipify has
    no mapping for PTX. The kernel fails to compile on ROCm.

    ## Example
    ```python
    kernel = cupy.RawKernel(r'''
    extern "C" __global__ void lane(int* out) {
        int id; asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
        out[threadIdx.x] = id;
    }''', "lane")
    ```

    ## Manual migration
    Replace each PTX block with a HIP/CUDA intrinsic that hipify maps (`__lane_id()`,
    `__shfl_sync`, `__ballot`, `__builtin_amdgcn_*`, …) or with plain C++; guard CUDA-only
    paths with `#if defined(__HIP_PLATFORM_AMD__)` / `USE_ROCM`. Mind the 64-lane wavefront on
    CDNA when the assembly read lane ids or warp masks.

    ## References
    - ROCm/HIP `docs/how-to/faq.md` (inline assembly), `docs/how-to/hip_porting_guide.md`
    """

    code = "ROC601"
    name = "inline-ptx-asm"
    category = "cuda-extension"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", port=True, effort_hours=4.0, blocker=True)
    message = "inline PTX assembly does not compile on ROCm (HIP-Clang takes GCN asm only)"
    fact = "§7 inline PTX row, §10.11; [H1][P1]"
    # a finding is a string holding its trigger: inside a kernel-compiling call's arguments in
    # the same statement, or a string with CUDA markers of its own
    parsing = Parsing(
        triggers=("asm(", "asm (", "asm volatile", "asm __volatile__", "__asm__"), scope="statement"
    )
    valid = [
        Valid(
            'import cupy\nk = cupy.RawKernel(r"""extern "C" __global__ void f(float* x)'
            ' { x[threadIdx.x] = 1; }""", "f")\n'
        ),
        Valid('"""Kernels avoid asm("...") PTX; see __global__ docs."""\n'),
        Valid('CPP = "int f() { asm volatile(\\"nop\\"); return 0; }"\n'),
    ]
    invalid = [
        Invalid(
            "import cupy as cp\n"
            "kernel = cp.RawKernel(r'''\n"
            'extern "C" __global__ void lane(int* out) {\n'
            '    int id; asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));\n'
            "    out[threadIdx.x] = id;\n"
            "}''', 'lane')\n",
            line=2,
            column=23,
        ),
        Invalid(
            "from torch.utils.cpp_extension import load_inline\n"
            'SRC = ("__device__ int lane() { int id; "\n'
            '       "asm(\\"mov.u32 %0, %%laneid;\\" : \\"=r\\"(id)); return id; }")\n'
            'mod = load_inline("m", cpp_sources="", cuda_sources=SRC)\n',
            line=2,
        ),
        Invalid(
            "from torch.utils.cpp_extension import load_inline\n"
            "mod = load_inline(\n"
            "    'm', cpp_sources='', cuda_sources=['int f() { __asm__(\"trap;\"); }'])\n",
            line=3,
        ),
    ]

    def check_source(self, node: cst.BaseExpression, text: str) -> None:
        match = _ASM.search(text)
        if match is not None:
            line = _line_of(text, match.start())
            self.report(node, message=f"{self.message}: `{line}`")
