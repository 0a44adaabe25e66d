"""ROC350 (dynamic-smem-over-limit): dynamic shared memory raised above 64 KiB, more than an
AMD CDNA2/CDNA3 workgroup can have."""

from __future__ import annotations

import ast
import re

from migrator.api import Invalid, KernelRule, Severity, Valid

from ._shared import table

_SIZEOF = {
    "char": 1,
    "half": 2,
    "__half": 2,
    "short": 2,
    "int": 4,
    "float": 4,
    "unsigned": 4,
    "double": 8,
    "long": 8,
    "int8_t": 1,
    "uint8_t": 1,
    "int16_t": 2,
    "uint16_t": 2,
    "int32_t": 4,
    "uint32_t": 4,
    "int64_t": 8,
    "uint64_t": 8,
    "nv_bfloat16": 2,
    "__nv_bfloat16": 2,
    "float4": 16,
    "int4": 16,
    "uint4": 16,
    "float2": 8,
    "half2": 4,
}
_TOKEN = re.compile(
    r"\s*(0[xX][0-9a-fA-F]+|\d+|sizeof\s*\(\s*[\w:]+\s*\)|[A-Za-z_]\w*|<<|[-+*/()])"
)


def evaluate(text: str, defines: dict[str, tuple[str, int]], depth: int = 0) -> int | None:
    """An integer constant expression of literals, ``sizeof`` of basic types and object-like
    macros, with ``+ - * / <<`` and parentheses; None when anything else appears."""
    if depth > 8 or len(text) > 200:
        return None
    pieces: list[str] = []
    position = 0
    text = re.sub(r"(\d)[uUlL]+\b", r"\1", text)
    while position < len(text.rstrip()):
        match = _TOKEN.match(text, position)
        if match is None:
            return None
        piece = match.group(1)
        position = match.end()
        if piece.startswith("sizeof"):
            name = piece[piece.index("(") + 1 : -1].strip().split("::")[-1]
            size = _SIZEOF.get(name)
            if size is None:
                return None
            pieces.append(str(size))
        elif piece[0].isalpha() or piece[0] == "_":
            if piece not in defines:
                return None
            value = evaluate(defines[piece][0], defines, depth + 1)
            if value is None:
                return None
            pieces.append(str(value))
        elif piece[0].isdigit():
            pieces.append(str(int(piece, 0)))
        else:
            pieces.append("//" if piece == "/" else piece)
    expression = " ".join(pieces)
    if not expression:
        return None
    try:
        return _arithmetic(ast.parse(expression, mode="eval").body)
    except (SyntaxError, ZeroDivisionError, RecursionError):
        return None


#: Largest value an intermediate result may take: far above any shared-memory size, far below
#: what could exhaust memory (``1 << (1 << 40)`` from scanned code is refused, not computed).
_BOUND = 1 << 64


def _arithmetic(node: ast.expr) -> int | None:
    """The value of an expression of integers, ``+ - * // <<`` and unary minus, or None when
    anything else appears or a value leaves the bound."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        value: int | None = node.value
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _arithmetic(node.operand)
        value = None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    elif isinstance(node, ast.BinOp):
        left, right = _arithmetic(node.left), _arithmetic(node.right)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Add):
            value = left + right
        elif isinstance(node.op, ast.Sub):
            value = left - right
        elif isinstance(node.op, ast.Mult):
            value = left * right
        elif isinstance(node.op, ast.FloorDiv):
            value = left // right
        elif isinstance(node.op, ast.LShift) and 0 <= right <= 64:
            value = left << right
        else:
            return None
    else:
        return None
    return value if value is not None and abs(value) <= _BOUND else None


class DynamicSmemOverLimit(KernelRule):
    """
    ## What it does
    Flags `cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)`
    whose size, read from literals, `sizeof` of basic types and macros of the same file, is
    above 64 KiB.

    ## Why it breaks on ROCm
    hipify maps the call to `hipFuncSetAttribute`, so it compiles, but the local data share
    (LDS) of one workgroup is 64 KiB on CDNA2 and CDNA3 (MI200, MI300): a launch asking for more
    fails there. A tile configuration sized for an A100/H100's 164/227 KiB has to shrink (fewer
    pipeline stages or smaller tiles) on those GPUs.

    ## Example
    ```cpp
    cudaFuncSetAttribute(gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 96 * 1024);
    ```

    ## Manual migration
    Under `#if defined(USE_ROCM)` choose a configuration that fits 64 KiB (or query
    `hipDeviceAttributeMaxSharedMemoryPerBlock` and pick one at run time).

    ## References
    - `docs/rocm-facts.md` §7; AMD GPU hardware specifications (LDS per CU)
    """

    code = "ROC350"
    name = "dynamic-smem-over-limit"
    category = "shared-memory"
    severity = Severity.WARNING
    message = "dynamic shared memory above 64 KiB does not fit an MI200/MI300 workgroup's LDS"
    fact = "§7 shared memory above 64 KiB; [AG1]"
    triggers = ("MaxDynamicSharedMemorySize",)
    effort_hours = 4.0
    consequence = "crash-path"
    valid = [
        Valid(
            "cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 48 * 1024);\n",
            path="k.cu",
        ),
        Valid(
            "cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_size);\n",
            path="k.cu",
        ),
        Valid(
            "#ifdef USE_ROCM\nconstexpr int S = 64 * 1024;\n#else\n"
            "void f() { cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024); }\n#endif\n",
            path="k.cu",
        ),
    ]
    invalid = [
        Invalid(
            "void f() {\n  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 96 * 1024);\n}\n",
            path="k.cu",
            line=2,
        ),
        Invalid(
            "#define STAGES 4\n#define TILE (128 * 128 * sizeof(half))\n"
            "void f() { cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, STAGES * TILE); }\n",
            path="k.cu",
            line=3,
        ),
    ]

    def check(self) -> None:
        limit = int(table()["shared_memory"]["limit_bytes"])
        view = self.view
        defines = view.source.defines()
        for call in view.source.calls():
            if not call.callee.endswith("FuncSetAttribute") or len(call.arguments) != 3:
                continue
            if not call.arguments[1].endswith("MaxDynamicSharedMemorySize"):
                continue
            size = evaluate(call.arguments[2], defines)
            if size is not None and size > limit:
                self.report_bytes(
                    call.start,
                    call.end,
                    message=f"{size // 1024} KiB of dynamic shared memory: more than the 64 KiB LDS of an MI200/MI300 workgroup",
                )
