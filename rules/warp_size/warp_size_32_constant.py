"""ROC304 (warp-size-32-constant): the warp size written as 32 in C/C++/CUDA sources that hipcc
compiles for AMD: `#define WARP_SIZE 32`, lane arithmetic on thread ids (`& 31`, `% 32`,
`/ 32`, `>> 5`), width-32 shuffles and shuffle reductions that start at offset 16."""

from __future__ import annotations

import re
from typing import Any

from migrator.api import Impact, Invalid, KernelRule, Parsing, Severity, Valid

from .lane_mask_32bit import full_32bit_mask

_WARP_NAME = re.compile(r"(?i)warp_?size|threads_?per_?warp|warp_?threads|kwarp|lanes?_?per_?warp")
_THREAD_OPERAND = re.compile(
    r"\bthreadIdx\b|\blane\w*|\btid\b|\bthread_?id\w*|\bthread_?idx\w*", re.IGNORECASE
)
_LANE_OPS = {("&", 31), ("%", 32), ("/", 32), (">>", 5)}
_SHFL_WIDTH = {
    "__shfl_sync": 3,
    "__shfl_up_sync": 3,
    "__shfl_down_sync": 3,
    "__shfl_xor_sync": 3,
    "__shfl": 2,
    "__shfl_up": 2,
    "__shfl_down": 2,
    "__shfl_xor": 2,
}
#: ``blockDim.x / 32`` (or ``32.f``, ``>> 5``): the number of warps in a block.
_BLOCK_DIM = re.compile(r"^\(?\s*blockDim\.[xyz]\s*\)?$")
_WARP_DIVISOR = re.compile(r"^32(?:\.0*)?[fFuU]?$")
_NUMBER = re.compile(r"^(0[xX][0-9a-fA-F]+|\d+)[uUlL]*$")


def _int(text: str) -> int | None:
    match = _NUMBER.match(text.strip())
    return int(match.group(1), 0) if match else None


#: Nodes that give a name a value, with the fields holding each: a warp-size name set to 32
#: (``constexpr int kWarpSize = 32``, ``enum { THREADS_PER_WARP = 32 }``, ``int WARP_SIZE = 32``
#: as a template parameter's default).
_NAMED_VALUES = {
    "init_declarator": ("declarator", "value"),
    "enumerator": ("name", "value"),
    "optional_parameter_declaration": ("declarator", "default_value"),
}
_LANE_OR_WARP = re.compile(r"(?i)lane|warp|^w_?id$|^wid\b")
#: What shows a file was written with AMD wavefronts in mind: the wavefront-size macro, AMD
#: builtins, or a branch only ROCm builds compile.
_WAVE_AWARE = re.compile(r"__AMDGCN_WAVEFRONT_SIZE|__builtin_amdgcn_|__gfx9|__GFX9__|__gfx1")


#: Warp matrix code (WMMA, ``mma.sync``, ``ldmatrix``): a file holding it gives each 32-lane warp
#: a tile, so a block shaped in rows of 32 threads is shaped in warps (on a 64-lane wavefront two
#: rows share one, and the tiles with them).
_WARP_MATRIX = re.compile(r"\bwmma::|\bnvcuda\b|mma\.sync|ldmatrix|\bmma_sync\b")
#: A warp index by its name (``warp_id``, ``wid``) or by the comment on its declaration
#: (``const uint32_t wi = threadIdx.y; // warp index``); a lane id or a warp tile size
#: (``WARP_N``) is not one.
_WARP_INDEX = re.compile(r"(?i)^(?:warp_?(?:id|idx|index)\w*|warp|w_?id)$")
_COMMENT_NAMES_INDEX = re.compile(r"(?i)//.*\bwarp[ _]?(?:index|idx|id)\b")
_THREAD_INDEX = re.compile(r"^\(?\s*(?:\(\s*\w+\s*\)\s*)?threadIdx\.[xyz]\s*\)?$")


def _index_variables(source: Any) -> set[str]:
    """Variables that hold a warp index: initialised from ``threadIdx`` and named so
    (``warp_id``) or said so by the comment on their line (``const uint32_t wi = threadIdx.y;
    // warp index``)."""
    names: set[str] = set()
    for node in source.nodes("init_declarator"):
        target = node.child_by_field_name("declarator")
        value = node.child_by_field_name("value")
        if target is None or value is None or target.type != "identifier":
            continue
        if not _THREAD_INDEX.match(source.text(value.start_byte, value.end_byte).strip()):
            continue
        name = source.text(target.start_byte, target.end_byte)
        line_end = source.data.find(b"\n", node.end_byte)
        rest = source.text(node.end_byte, len(source.data) if line_end < 0 else line_end)
        if _WARP_INDEX.match(name) or _COMMENT_NAMES_INDEX.search(rest):
            names.add(name)
    return names


def _factors(source: Any, node: Any) -> list[str]:
    """The operand texts of a chain of ``*`` (through parentheses)."""
    if node.type == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) == 1 and inner[0].type == "binary_expression":
            return _factors(source, inner[0])
    if node.type == "binary_expression":
        operator = node.child_by_field_name("operator")
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        if operator is not None and operator.type == "*" and left is not None and right is not None:
            return _factors(source, left) + _factors(source, right)
    return [source.text(node.start_byte, node.end_byte).strip()]


def _warp_multiplier(source: Any, node: Any, index_names: set[str]) -> bool:
    """``wi * 8 * 32``, ``warp_id * 32``: a warp index times 32 lanes (the topmost ``*`` of a
    chain only)."""
    operator = node.child_by_field_name("operator")
    if operator is None or operator.type != "*":
        return False
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is not None and parent.type == "binary_expression":
        above = parent.child_by_field_name("operator")
        if above is not None and above.type == "*":
            return False
    factors = _factors(source, node)
    if not any(_WARP_DIVISOR.match(factor) for factor in factors):
        return False
    return any(factor in index_names or _WARP_INDEX.match(factor) for factor in factors)


def _dim3_arguments(source: Any, node: Any) -> list[Any]:
    """The dimensions of a ``dim3`` built by ``node``: a declaration's initialiser
    (``dim3 threads(32, 4)``, ``dim3 threads = {32u, 4}``) or a ``dim3(32, 4)`` call."""
    if node.type == "call_expression":
        function = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        if function is None or arguments is None:
            return []
        if source.text(function.start_byte, function.end_byte).strip() != "dim3":
            return []
        holder = arguments
    else:
        declaration = node.parent
        kind = None if declaration is None else declaration.child_by_field_name("type")
        holder = node.child_by_field_name("value")
        if kind is None or holder is None or source.text(kind.start_byte, kind.end_byte) != "dim3":
            return []
        if holder.type not in {"argument_list", "initializer_list"}:
            return []
    return [child for child in holder.named_children if child.type != "comment"]


def _wave_aware(text: str, source: object) -> bool:
    """Whether the file already chooses per vendor: its 32s are then deliberate (32-lane groups
    on both vendors, or the NVIDIA side of a per-vendor choice)."""
    from migrator.api.reach import has_rocm_branch

    return bool(_WAVE_AWARE.search(text)) or has_rocm_branch(source)  # type: ignore[arg-type]


def _names_lane_or_warp(source: object, node: object) -> bool:
    """Whether the value of ``node`` is named a lane or warp id: the declarator or the
    assignment target it initialises (``int lane = threadIdx.x & 31``); arithmetic that tiles
    a table by 32 (``row = threadIdx.x / 32``) is not about the warp."""
    parent = getattr(node, "parent", None)
    while parent is not None and parent.type in {"parenthesized_expression", "cast_expression"}:
        parent = parent.parent
    if parent is None:
        return False
    target = None
    if parent.type == "init_declarator":
        target = parent.child_by_field_name("declarator")
    elif parent.type == "assignment_expression":
        target = parent.child_by_field_name("left")
    if target is None:
        return False
    return bool(_LANE_OR_WARP.search(target.text.decode("utf-8", "replace")))


class WarpSize32Constant(KernelRule):
    """
    ## What it does
    Flags the warp size written as the number 32 in code hipcc compiles for AMD: a macro or
    constant named for the warp size set to 32 (`#define WARP_SIZE 32`,
    `constexpr int kWarpSize = 32`), lane and warp ids computed from thread ids with `& 31`,
    `% 32`, `/ 32` or `>> 5` (named so, or `threadIdx.x % 32` anywhere in a file with warp
    matrix code: WMMA, `mma.sync`, `ldmatrix`, where it is the lane of a fragment layout),
    shuffles with an explicit width of 32, shuffle reductions whose
    offsets start at 16, a lane or warp index multiplied by 32 (`wi * 8 * 32`, where `wi` is
    named or commented as the warp index), and, in a file with warp matrix code (WMMA,
    `mma.sync`, `ldmatrix`), a block shaped in rows of 32 threads
    (`dim3 threads = {32u, N_WARPS}`: one warp, and one tile, per `threadIdx.y`).

    ## Why it breaks on ROCm
    CDNA GPUs (MI200, MI300) run 64-lane wavefronts; `warpSize` is 64 there and, in HIP, not a
    compile-time constant. Code that assumes 32 lanes computes the wrong lane and warp ids,
    reduces only half of a wavefront, and sizes shared buffers per warp wrongly. It compiles
    and gives wrong results, so no compiler catches it.

    ## Example
    ```cpp
    #define WARP_SIZE 32
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x / 32;
    ```

    ## Manual migration
    Use `warpSize` at run time, or a constant chosen per platform at compile time
    (`#if defined(USE_ROCM)` with `__AMDGCN_WAVEFRONT_SIZE`/64 on CDNA, else 32), and check
    that buffers sized per warp and reductions over a warp follow it. Code that deliberately
    works on groups of 32 lanes on both vendors can stay, with a comment.

    ## References
    - `docs/rocm-facts.md` §7 warp code; HIP kernel language (`warpSize`)
    """

    code = "ROC304"
    impact = Impact(aggregate="file", effort_hours=1.0, consequence="crash-path")
    name = "warp-size-32-constant"
    category = "warp-size"
    severity = Severity.WARNING
    message = "warp size hard-coded as 32: AMD CDNA wavefronts have 64 lanes; use warpSize or a per-platform constant"
    fact = "§7 warp code; [H3]"
    parsing = Parsing(
        triggers=("32", "31", ">> 5", ">>5", "16"),
        requires=("__global__", "__device__", "WARP", "warp", "Warp"),
    )
    valid = [
        Valid(
            "__global__ void gn(float* s, float v) {\n"
            "  v += __shfl_xor_sync(m, v, 1);\n"
            "  if (threadIdx.x % 32 == 0) s[threadIdx.x / 32] = v;\n}\n",
            path="group_norm.cu",
        ),
        Valid(
            "__global__ void bins(int* x, int* out) {\n  int b = threadIdx.x % 32;\n"
            "  atomicAdd(&out[b], x[threadIdx.x] % 32);\n}\n",
            path="hist.cu",
        ),
        Valid(
            "#if defined(USE_ROCM)\n#define WARP_SIZE 64\n#else\n#define WARP_SIZE 32\n#endif\n",
            path="k.cuh",
        ),
        Valid(
            "__global__ void k(float* x) { int lane = threadIdx.x % warpSize; x[lane] = 0; }\n",
            path="k.cu",
        ),
        Valid(
            "__global__ void k(float* x) { int row = blockIdx.x * 32 + threadIdx.y; x[row] = 0; }\n",
            path="k.cu",
        ),
        Valid("// #define WARP_SIZE 32\n__device__ int f(int n) { return n & 31; }\n", path="k.cu"),
        Valid(
            "__global__ void copy(float* x) {\n  int i = (threadIdx.y * 32 + threadIdx.x) * 8;\n"
            "  x[i] = 0.f;\n}\nvoid run(float* x) { dim3 block(32, 4); copy<<<1, block>>>(x); }\n",
            path="copy.cu",
        ),
        Valid(
            "__global__ void k(float* x) { int row = blockIdx.x * 32 + threadIdx.y; x[row] = 0; }\n"
            "__device__ int bits(int rows) { return rows * 32; }\n",
            path="tile.cu",
        ),
        Valid(
            "__global__ void r(float* smem, float v) {\n  int lane = threadIdx.x % warpSize;\n"
            "  v += smem[lane * 32];\n  float tile[WARP_N * 32];\n  v = __shfl_xor_sync(m, v, 1);\n}\n"
            "void run() { dim3 threads(32, 4); }\n",
            path="reduce.cu",
        ),
        Valid(
            "#if defined(USE_ROCM)\n#define HALF_WAVE_SHFL(v, o) __shfl_xor(v, o, 32)\n#endif\n"
            "__device__ float h(float v) { return __shfl_xor_sync(m, v, 1, 32); }\n",
            path="k.cu",
        ),
    ]
    invalid = [
        Invalid(
            "__device__ void mma(const int* a, float* c) {\n"
            '  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 ..." : : );\n}\n'
            "__global__ void gemm(int* a, float* c, int stride) {\n"
            "  int a_sh_rd = stride * ((threadIdx.x % 32) % 16) + (threadIdx.x % 32) / 16;\n"
            "  a_sh_rd += 2 * (threadIdx.x / 32);\n  mma(a + a_sh_rd, c);\n}\n",
            path="marlin.cu",
            line=5,
            count=1,
            sites=2,
        ),
        Invalid(
            "__device__ void tile(half* act) {\n"
            "  const uint32_t li = threadIdx.x; // index in warp (lane index)\n"
            "  const uint32_t wi = threadIdx.y; // index in block (warp index)\n"
            "  const uint32_t row = (8 * li + wi * 8 * 32) / 128;\n"
            "  const uint32_t idx = (li + wi * 32) * 8;\n"
            "  wmma::load_matrix_sync(frag, act + row + idx, 16);\n}\n"
            "void run() {\n  const dim3 threads = { 32u, 8, 1 }; // one warp per row\n}\n",
            path="mlp.cu",
            line=4,
            count=1,
            sites=3,
        ),
        Invalid(
            "#define WARP_SIZE 32\n__device__ int lanes() { return WARP_SIZE; }\n",
            path="k.cuh",
            line=1,
        ),
        Invalid(
            "template <int N> struct Traits {\n  enum { THREADS_PER_WARP = 32 };\n};\n__device__ void f();\n",
            path="traits.h",
            line=2,
        ),
        Invalid(
            "__global__ void k(float* x) {\n  const int lane = threadIdx.x & 31;\n  const int warp = threadIdx.x / 32;\n  x[warp] = lane;\n}\n",
            path="k.cu",
            line=2,
            count=1,
            sites=2,
        ),
        Invalid(
            "__device__ float sum(float v) {\n  for (int offset = 16; offset > 0; offset /= 2)\n    v += __shfl_down(v, offset);\n  return v;\n}\n",
            path="k.cu",
            line=2,
        ),
        Invalid(
            "__device__ float b(float v) { return __shfl_xor_sync(m, v, 1, 32); }\n",
            path="k.cu",
            line=1,
        ),
        Invalid(
            "__device__ float f(float* s) {\n  return threadIdx.x < (blockDim.x / 32.f) ? s[0] : 0.f;\n}\n",
            path="reduce.cuh",
            line=2,
        ),
        Invalid(
            "template <int WARPS, int WARP_SIZE = 32>\n__device__ float block_sum(float s) { return s; }\n",
            path="reduce.hpp",
            line=1,
        ),
        Invalid(
            "__device__ void f(float* s) {\n  int lane = threadIdx.x & 0x1f;\n  int wid = threadIdx.x >> 5;\n"
            "  s[wid] = lane;\n}\n",
            path="k.cuh",
            line=2,
            count=1,
            sites=2,
        ),
    ]

    def check(self) -> None:
        view = self.view
        source = view.source
        if _wave_aware(view.text, source):
            return
        spans: dict[int, tuple[int, int]] = {}
        # warp matrix code gives each 32-lane warp a fragment: there ``threadIdx.x % 32`` is the
        # lane of its layout (Marlin's ``(threadIdx.x % 32) / 4``), whatever the expression is
        # called; beside shuffles alone it may index 32-lane groups that stay right on wave64
        warp_matrix = bool(_WARP_MATRIX.search(view.text))

        def add(start: int, end: int) -> None:
            spans.setdefault(source.line_of(start), (start, end))

        for name, (value, offset) in source.defines().items():
            if _WARP_NAME.search(name) and _int(value) == 32:
                add(offset, offset + len(name) + 8)
        for node in source.nodes(
            "init_declarator",
            "enumerator",
            "binary_expression",
            "call_expression",
            "for_statement",
            "optional_parameter_declaration",
        ):
            kind = node.type
            fields = _NAMED_VALUES.get(kind)
            if fields is not None:
                name = node.child_by_field_name(fields[0])
                value = node.child_by_field_name(fields[1])
                if (
                    name is not None
                    and value is not None
                    and _WARP_NAME.search(source.text(name.start_byte, name.end_byte))
                    and _int(source.text(value.start_byte, value.end_byte)) == 32
                ):
                    add(node.start_byte, node.end_byte)
            elif kind == "binary_expression":
                operator = node.child_by_field_name("operator")
                left = node.child_by_field_name("left")
                right = node.child_by_field_name("right")
                if operator is None or left is None or right is None:
                    continue
                right_text = source.text(right.start_byte, right.end_byte).strip()
                left_text = source.text(left.start_byte, left.end_byte).strip()
                number = _int(right_text)
                if (
                    (operator.type, number) in _LANE_OPS
                    and _THREAD_OPERAND.search(left_text)
                    and (
                        _names_lane_or_warp(source, node)
                        or (warp_matrix and _THREAD_INDEX.match(left_text) is not None)
                    )
                ):
                    add(node.start_byte, node.end_byte)
                elif _BLOCK_DIM.match(left_text) and (
                    (operator.type == "/" and _WARP_DIVISOR.match(right_text))
                    or (operator.type == ">>" and number == 5)
                ):
                    add(node.start_byte, node.end_byte)  # warps per block
            elif kind == "call_expression":
                function = node.child_by_field_name("function")
                arguments = node.child_by_field_name("arguments")
                if function is None or arguments is None:
                    continue
                callee = source.text(function.start_byte, function.end_byte)
                index = _SHFL_WIDTH.get(callee)
                args = [a for a in arguments.named_children if a.type != "comment"]
                if (
                    callee.endswith("_sync")
                    and args
                    and full_32bit_mask(
                        source.text(args[0].start_byte, args[0].end_byte),
                        source.defines(),
                        self.ctx.project,
                    )
                ):
                    continue  # ROC303 reports the 32-bit mask of this call
                if index is not None and len(args) > index:
                    if _int(source.text(args[index].start_byte, args[index].end_byte)) == 32:
                        add(node.start_byte, node.end_byte)
            else:
                initializer = node.child_by_field_name("initializer")
                body = node.child_by_field_name("body")
                if initializer is None or body is None:
                    continue
                init = source.text(initializer.start_byte, initializer.end_byte)
                if re.search(r"=\s*16\b", init) and "__shfl" in source.text(
                    body.start_byte, body.end_byte
                ):
                    add(node.start_byte, initializer.end_byte)
        index_names = _index_variables(source)
        for node in source.nodes("binary_expression"):
            if _warp_multiplier(source, node, index_names):
                add(node.start_byte, node.end_byte)  # a lane/warp index times 32 lanes
        if _WARP_MATRIX.search(view.text):
            for node in source.nodes("init_declarator", "call_expression"):
                dimensions = _dim3_arguments(source, node)
                if len(dimensions) >= 2 and _WARP_DIVISOR.match(
                    source.text(dimensions[0].start_byte, dimensions[0].end_byte).strip()
                ):
                    add(node.start_byte, node.end_byte)  # rows of 32 threads: one warp per row
        for start, end in sorted(spans.values()):
            self.report_bytes((start, end))
