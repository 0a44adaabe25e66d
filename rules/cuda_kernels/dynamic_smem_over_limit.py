"""ROC350 (dynamic-smem-over-limit): dynamic shared memory raised above 64 KiB, more than an
AMD CDNA2/CDNA3 workgroup can have."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from migrator.api import Impact, Invalid, KernelRule, Parsing, Severity, Valid
from migrator.api.knowledge import smem_requests

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


def evaluate(text: str, lookup: Callable[[str], str | None], depth: int = 0) -> int | None:
    """An integer constant expression of literals, ``sizeof`` of basic types and names
    (``lookup(name)``: the text it stands for, a macro or a constant), with ``+ - * / <<`` and
    parentheses; None when anything else appears."""
    if depth > 8 or len(text) > 400:
        return None
    choice = _ternary(text)
    if choice is not None:  # ``condition ? a : b``: the branch the condition picks
        condition, when_true, when_false = choice
        decided = _condition(condition, lookup, depth + 1)
        if decided is None:
            return None
        return evaluate(when_true if decided else when_false, lookup, depth + 1)
    pieces: list[str] = []
    position = 0
    text = re.sub(r"(\d)[uUlL]+\b", r"\1", text)
    while position < len(text.rstrip()):
        match = _TOKEN.match(text, position)
        if match is None:
            return None
        piece = match.group(1)
        position = match.end()
        if piece == "sizeof":
            return None  # ``sizeof(typename T::Storage)``: a type only the compiler sizes
        if piece.startswith("sizeof"):
            name = piece[piece.index("(") + 1 : -1].strip().split("::")[-1]
            size = _SIZEOF.get(name)
            if size is None:
                return None
            pieces.append(str(size))
        elif piece[0].isalpha() or piece[0] == "_":
            meaning = lookup(piece)
            if meaning is None:
                return None
            value = evaluate(meaning, lookup, depth + 1)
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


def _top_level(text: str, wanted: str) -> list[int]:
    """Offsets of ``wanted`` characters outside parentheses."""
    depth, found = 0, []
    for index, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif depth == 0 and char in wanted:
            found.append(index)
    return found


def _ternary(text: str) -> tuple[str, str, str] | None:
    """``(condition, a, b)`` of a top-level ``condition ? a : b`` (outer parentheses dropped)."""
    stripped = text.strip()
    while stripped.startswith("(") and stripped.endswith(")") and _balanced(stripped[1:-1]):
        stripped = stripped[1:-1].strip()
    marks = _top_level(stripped, "?:")
    if not marks or stripped[marks[0]] != "?":
        return None
    depth = 0
    for index in marks:  # the ':' matching the first '?'
        depth += 1 if stripped[index] == "?" else -1
        if depth == 0:
            return stripped[: marks[0]], stripped[marks[0] + 1 : index], stripped[index + 1 :]
    return None


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += 1 if char == "(" else -1 if char == ")" else 0
        if depth < 0:
            return False
    return depth == 0


_COMPARISON = re.compile(r"^(.*?)(>=|<=|==|!=|>(?!>)|<(?!<))(.*)$", re.S)


def _condition(text: str, lookup: Callable[[str], str | None], depth: int) -> bool | None:
    """The truth of ``a OP b`` (one comparison) or of a plain value."""
    stripped = text.strip()
    while stripped.startswith("(") and stripped.endswith(")") and _balanced(stripped[1:-1]):
        stripped = stripped[1:-1].strip()
    match = _COMPARISON.match(stripped)
    if match is None:
        value = evaluate(stripped, lookup, depth)
        return None if value is None else value != 0
    left, right = evaluate(match.group(1), lookup, depth), evaluate(match.group(3), lookup, depth)
    if left is None or right is None:
        return None
    return {
        ">=": left >= right,
        "<=": left <= right,
        "==": left == right,
        "!=": left != right,
        ">": left > right,
        "<": left < right,
    }[match.group(2)]


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
    whose size, read from literals, `sizeof` of basic types, macros and constants of the same
    file (a local `int shared = ...;`, a file-level `const int SHARED_MEM = ...;`, the
    `constexpr` values a launch macro is expanded with), is above 64 KiB. A size chosen by a
    constant of its own is reported at that constant, where it is changed.

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
    parsing = Parsing(triggers=("MaxDynamicSharedMemorySize",))
    impact = Impact(effort_hours=4.0, consequence="crash-path")
    valid = [
        Valid(
            "cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 48 * 1024);\n",
            path="k.cu",
        ),
        # a size only the compiler knows (the file was left unscanned by an internal error)
        Valid(
            "template <typename Kernel_traits> void run(void* kernel) {\n"
            "  int smem_size = sizeof(typename Kernel_traits::SharedStorage);\n"
            "  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_size);\n}\n",
            path="launch.h",
        ),
        Valid(
            "cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_size);\n",
            path="k.cu",
        ),
        # a template parameter: not known, not reported
        Valid(
            "template <int SMEM> void f() {\n"
            "  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM);\n}\n",
            path="k.cu",
        ),
        # the expansion site's constants keep the request under 64 KiB
        Valid(
            "#define LAUNCH \\\n  constexpr int kSmem = CTA_M * CTA_K * sizeof(half); \\\n"
            "  cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);\n"
            "void g() {\n  constexpr int CTA_M = 64;\n  constexpr int CTA_K = 64;\n  LAUNCH\n}\n",
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
        # a local size variable: reported where the size is chosen
        Invalid(
            "void f() {\n  int shared = 16 * (2 * 256 * 8 + 32 * 9);\n"
            "  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, shared);\n}\n",
            path="k.cu",
            line=2,
        ),
        # a launch macro whose size comes from the constants each expansion site defines
        Invalid(
            "#define LAUNCH \\\n  constexpr int kSmem = CTA_M * CTA_K * STAGES * sizeof(half); \\\n"
            "  cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);\n"
            "void g() {\n  constexpr int CTA_M = 128;\n  constexpr int CTA_K = 128;\n"
            "  constexpr int STAGES = 4;\n  LAUNCH\n}\n",
            path="k.cu",
            line=3,
        ),
        # a size chosen by a condition on the configuration's constants
        Invalid(
            "constexpr int G = 128;\nconstexpr int kSmem = (G >= 64) ? 96 * 1024 : 32 * 1024;\n"
            "void f() { cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem); }\n",
            path="k.cu",
            line=2,
        ),
    ]

    def check(self) -> None:
        limit = int(table()["shared_memory"]["limit_bytes"])
        reported: set[int] = set()
        for request in smem_requests(self.view.source.data, evaluate):
            if request.size is None or request.size <= limit:
                continue
            if request.anchor_start in reported:
                continue  # one size constant serving several kernels: one problem
            reported.add(request.anchor_start)
            self.report_bytes(
                (request.anchor_start, request.anchor_end),
                message=f"{request.size // 1024} KiB of dynamic shared memory: more than the 64 KiB LDS of an MI200/MI300 workgroup",
            )
