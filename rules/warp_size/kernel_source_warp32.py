"""ROC302 (kernel-source-warp32): flags CUDA C++ kernel source held in Python strings (passed to
`torch.utils.cpp_extension.load_inline(cuda_sources=...)`, `cupy.RawKernel`/`RawModule`,
`pycuda.compiler.SourceModule`, NVRTC, or any string containing `__global__`/`__device__`) that
assumes 32-lane warps."""

from __future__ import annotations

import re

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid, load_table
from migrator.api.syntax import arg

from .._rocm_guards import unreachable_on_rocm
from .._tree import Tree, is_docstring, tree

_FULL_MASK = re.compile(r"\b0x[fF]{8}(?![0-9a-fA-F])[uU]?[lL]{0,2}\b")

_SYNC = re.compile(
    r"\b__(shfl(_up|_down|_xor)?|ballot|any|all|match_any|match_all|"
    r"reduce_(add|min|max|and|or|xor))_sync\s*\("
)

_WIDE_MASK = re.compile(r"\b0x[fF]{16}\b")

_DEFINE_32 = re.compile(
    r"(#\s*define\s+\w*WARP_?SIZE\w*\s+32\b|\b\w*warp_?size\w*\s*=\s*32\b|warpSize\s*==\s*32\b)",
    re.IGNORECASE,
)

_HIP_AWARE = re.compile(r"__HIP_PLATFORM_AMD__|__HIP__|USE_ROCM|__HIPCC__|__AMDGCN_WAVEFRONT_SIZE")

_KERNEL_MARK = re.compile(r"__global__|__device__")


def kernel_compilers() -> tuple[str, ...]:
    """The last names of the calls that compile kernel source (the ``kernel_source`` table):
    a file calling one names it, in the call or in its import."""
    return tuple(
        sorted(
            {
                entry["callee"].rsplit(".", 1)[-1]
                for entry in load_table("warp_size")["kernel_source"]
            }
        )
    )


def _kernel_problem(source: str) -> str | None:
    """What in a CUDA source string assumes 32-lane warps, or None."""
    if _HIP_AWARE.search(source):
        return None
    for pattern, what in (
        (_FULL_MASK, "a 32-bit full-warp mask"),
        (_DEFINE_32, "a warp size of 32"),
    ):
        match = pattern.search(source)
        if match:
            line = source.count("\n", 0, match.start()) + 1
            return f"{what} (`{match.group(0).strip()}`, kernel line {line})"
    match = _SYNC.search(source)
    if match and not _WIDE_MASK.search(source):
        line = source.count("\n", 0, match.start()) + 1
        return f"`{match.group(0).rstrip('( ')}` with a 32-bit lane mask (kernel line {line})"
    return None


def _string_nodes(tree_: Tree, value: cst.BaseExpression, depth: int = 0) -> list[cst.CSTNode]:
    """String literals that make up ``value`` (through names assigned in this file, lists,
    concatenation and ``.encode()``)."""
    if depth > 4:
        return []
    if isinstance(value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return [value]
    if isinstance(value, (cst.List, cst.Tuple)):
        return [n for e in value.elements for n in _string_nodes(tree_, e.value, depth + 1)]
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
        return _string_nodes(tree_, value.left, depth + 1) + _string_nodes(
            tree_, value.right, depth + 1
        )
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
        if value.func.attr.value in {"encode", "strip", "format"}:
            return _string_nodes(tree_, value.func.value, depth + 1)
    if isinstance(value, cst.Name):
        found: list[cst.CSTNode] = []
        for node in tree_.nodes:
            if isinstance(node, cst.Assign) and any(
                isinstance(t.target, cst.Name) and t.target.value == value.value
                for t in node.targets
            ):
                found.extend(_string_nodes(tree_, node.value, depth + 1))
        return found
    return []


def _text(node: cst.CSTNode) -> str:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else ""
    if isinstance(node, cst.FormattedString):
        return "".join(
            part.value for part in node.parts if isinstance(part, cst.FormattedStringText)
        )
    return ""


class KernelSourceWarp32(PythonRule):
    """
    ## What it does
    Flags CUDA C++ kernel source held in Python strings (passed to
    `torch.utils.cpp_extension.load_inline(cuda_sources=...)`, `cupy.RawKernel`/`RawModule`,
    `pycuda.compiler.SourceModule`, NVRTC, or any string containing `__global__`/`__device__`)
    that assumes 32-lane warps: `0xffffffff` masks, `__shfl_*_sync`/`__ballot_sync` with 32-bit
    masks, `#define WARP_SIZE 32`.

    ## Why it breaks on ROCm
    These sources are hipified and compiled with hipcc on ROCm. HIP's `__*_sync` functions
    `static_assert` that the mask is a 64-bit integer, so a 32-bit mask is a compile error
    (ROCm ≥ 6.2); where the mask is ignored (CuPy's HIP shim) or warp size is hard-coded, shuffles
    and ballots cover half of the 64-lane CDNA wavefront and reductions return wrong results.

    ## Example
    ```python
    src = r'''
    __device__ float warp_sum(float v) {
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
        return v;
    }'''
    ```

    ## Manual migration
    Use 64-bit masks and the runtime `warpSize`, or keep a HIP branch:
    ```c++
    #ifdef __HIP_PLATFORM_AMD__
      const unsigned long long mask = ~0ull;   // 64 lanes on CDNA
    #else
      const unsigned mask = 0xffffffffu;
    #endif
    for (int o = warpSize / 2; o > 0; o >>= 1) v += __shfl_xor_sync(mask, v, o);
    ```

    ## Known problems
    Kernel files loaded from disk (`.cu`) are not read. Sources that mention
    `__HIP_PLATFORM_AMD__`, `USE_ROCM` or `__AMDGCN_WAVEFRONT_SIZE` are taken as already ported.

    ## References
    - ROCm/HIP `docs/reference/kernel_language.rst` (warp cross-lane functions, masks)
    - ROCm/HIP `include/hip/amd_detail/amd_warp_sync_functions.h`
    """

    code = "ROC302"
    name = "kernel-source-warp32"
    category = "warp-size"
    severity = Severity.ERROR
    impact = Impact(
        consequence="crash-path", targets=("gfx90a", "gfx942", "gfx950"), effort_hours=2.0
    )
    message = "CUDA kernel source assumes 32-lane warps: AMD CDNA wavefronts have 64 lanes"
    fact = "§7 warp code row; §10.3; §10.11; [H3][P1]"
    # every finding is a string marked as kernel source, or one handed to a kernel compiler
    parsing = Parsing(
        triggers=(
            "0xffffffff",
            "0xFFFFFFFF",
            "__shfl",
            "__ballot",
            "_sync(",
            "WARP_SIZE",
            "warpSize",
            "warp_size",
        ),
        requires=("__global__", "__device__", *kernel_compilers()),
    )
    valid = [
        Valid(
            "import cupy as cp\nk = cp.RawKernel(r'''extern \"C\" __global__ void f(float* x) {\n"
            "  x[threadIdx.x] = 0; }''', 'f')\n"
        ),
        Valid('MASK = "0xffffffff"\nprint(MASK)\n'),
        Valid(
            "from torch.utils.cpp_extension import load_inline\n"
            "src = '''#ifdef __HIP_PLATFORM_AMD__\n#define FULL ~0ull\n#else\n"
            "#define FULL 0xffffffff\n#endif\n__global__ void k() {}'''\n"
            "m = load_inline('m', cpp_sources='', cuda_sources=src)\n"
        ),
        Valid('"""Kernels use __shfl_xor_sync(0xffffffff, v, o) on NVIDIA."""\n'),
    ]
    invalid = [
        Invalid(
            "import cupy as cp\nk = cp.RawKernel(r'''\nextern \"C\" __global__ void f(float* x) {\n"
            "  float v = __shfl_xor_sync(0xffffffff, x[0], 1); }''', 'f')\n",
            line=2,
            column=18,
        ),
        Invalid(
            "from torch.utils.cpp_extension import load_inline\n"
            "cuda_src = '#define WARP_SIZE 32\\n' + '__global__ void k() {}'\n"
            "mod = load_inline('m', cpp_sources='', cuda_sources=[cuda_src])\n",
            line=2,
        ),
        Invalid(
            "KERNEL = '''\n__device__ unsigned vote(bool p) {\n"
            "  return __ballot_sync(FULL, p);\n}\n'''\n",
            line=1,
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        tree_ = tree(self.ctx)
        candidates: list[cst.CSTNode] = []
        for call in tree_.nodes:
            if not isinstance(call, cst.Call):
                continue
            callee = self.ctx.call_name(call)
            for entry in load_table("warp_size")["kernel_source"]:
                if callee != entry["callee"]:
                    continue
                found = arg(call, keyword=entry["keyword"], position=entry["position"])
                if found is not None:
                    candidates.extend(_string_nodes(tree_, found.value))
        for string in tree_.nodes:
            if isinstance(string, (cst.SimpleString, cst.FormattedString)) and not isinstance(
                tree_.parent(string), cst.ConcatenatedString
            ):
                if _KERNEL_MARK.search(_text(string)) and not is_docstring(tree_, string):
                    candidates.append(string)
            elif isinstance(string, cst.ConcatenatedString) and not isinstance(
                tree_.parent(string), cst.ConcatenatedString
            ):
                if _KERNEL_MARK.search(_text(string)) and not is_docstring(tree_, string):
                    candidates.append(string)
        seen: set[int] = set()
        for string in candidates:
            if is_docstring(tree_, string):
                continue
            root = _plus_root(tree_, string)
            if id(root) in seen:
                continue
            seen.add(id(root))
            source = "".join(_text(part) for part in _plus_parts(root))
            problem = _kernel_problem(source)
            if problem is None or unreachable_on_rocm(self.ctx, tree_, root):
                continue
            self.report(
                root,
                message=(
                    f"CUDA kernel source assumes 32-lane warps: {problem}; AMD CDNA wavefronts "
                    "have 64 lanes and HIP's __*_sync functions require 64-bit masks"
                ),
            )


def _plus_root(tree_: Tree, string: cst.CSTNode) -> cst.CSTNode:
    """The whole ``a + b + c`` expression a string literal is part of (or the literal)."""
    node = string
    parent = tree_.parent(node)
    while isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Add):
        node, parent = parent, tree_.parent(parent)
    return node


def _plus_parts(node: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _plus_parts(node.left) + _plus_parts(node.right)
    return [node]
