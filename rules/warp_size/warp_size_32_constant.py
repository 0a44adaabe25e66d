"""ROC304 (warp-size-32-constant): the warp size written as 32 in C/C++/CUDA sources that hipcc
compiles for AMD: `#define WARP_SIZE 32`, lane arithmetic on thread ids (`& 31`, `% 32`,
`/ 32`, `>> 5`), width-32 shuffles and shuffle reductions that start at offset 16."""

from __future__ import annotations

import re

from migrator.api import Invalid, KernelRule, Severity, Valid

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
    `% 32`, `/ 32` or `>> 5`, shuffles with an explicit width of 32, and shuffle reductions whose
    offsets start at 16.

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
    aggregate = "file"  # one problem per kernel file: its sites are listed with it
    name = "warp-size-32-constant"
    category = "warp-size"
    severity = Severity.WARNING
    message = "warp size hard-coded as 32: AMD CDNA wavefronts have 64 lanes; use warpSize or a per-platform constant"
    fact = "§7 warp code; [H3]"
    triggers = ("32", "31", ">> 5", ">>5", "16")
    requires = ("__global__", "__device__", "WARP", "warp", "Warp")
    effort_hours = 1.0
    consequence = "crash-path"
    valid = [
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
            "#if defined(USE_ROCM)\n#define HALF_WAVE_SHFL(v, o) __shfl_xor(v, o, 32)\n#endif\n"
            "__device__ float h(float v) { return __shfl_xor_sync(m, v, 1, 32); }\n",
            path="k.cu",
        ),
    ]
    invalid = [
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
                    and _names_lane_or_warp(source, node)
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
                        source.text(args[0].start_byte, args[0].end_byte), source.defines()
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
        for start, end in sorted(spans.values()):
            self.report_bytes(start, end)
