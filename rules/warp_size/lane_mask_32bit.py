"""ROC303 (lane-mask-32bit): 32-bit lane masks and ballot results in C/C++/CUDA sources that
hipcc compiles for AMD, where a wavefront has 64 lanes."""

from __future__ import annotations

import re

from migrator.api import (
    Applicability,
    Fixing,
    Impact,
    Invalid,
    KernelRule,
    Parsing,
    Rewrite,
    Severity,
    Valid,
)
from migrator.api.knowledge import ProjectFacts

#: Warp-synchronous intrinsics that take a lane mask first.
SYNC_INTRINSICS = frozenset(
    {
        "__shfl_sync",
        "__shfl_up_sync",
        "__shfl_down_sync",
        "__shfl_xor_sync",
        "__ballot_sync",
        "__any_sync",
        "__all_sync",
        "__match_any_sync",
        "__match_all_sync",
        "__syncwarp",
        "__reduce_add_sync",
        "__reduce_min_sync",
        "__reduce_max_sync",
        "__reduce_and_sync",
        "__reduce_or_sync",
        "__reduce_xor_sync",
    }
)
_FULL_32 = re.compile(
    r"^\(?\s*(?:0[xX][fF]{8}[uU]?[lL]{0,2}|~0[uU]?|4294967295[uU]?|\(unsigned\)\s*-1|0xffffffffu?)\s*\)?$"
)
_MASK_NAME = re.compile(r"^[A-Za-z_]\w*$")
#: Mask macros conventionally set to the 32-lane full mask, when their definition lives in
#: another header (``FINAL_MASK``, ``FULL_MASK``, ``kFullWarpMask``).
_FULL_MASK_NAME = re.compile(r"(?i)^k?(?:full|final)_?(?:warp_?)?mask$")
_CAST_32 = re.compile(
    r"^(?:uint32_t|unsigned(?:\s+int)?)\s*\(\s*-1\s*\)$|^\(\s*(?:uint32_t|unsigned(?:\s+int)?)\s*\)\s*-1$|^static_cast<\s*(?:uint32_t|unsigned(?:\s+int)?)\s*>\s*\(\s*-1\s*\)$"
)
_NARROW_BALLOT = re.compile(
    r"\b(?:unsigned(?:\s+int)?|uint32_t|int|int32_t)\s+\w+\s*=\s*(?:__ballot_sync|__ballot|__activemask)\s*\("
)


def full_32bit_mask(
    argument: str, defines: dict[str, tuple[str, int]], facts: ProjectFacts | None
) -> bool:
    """Whether a mask argument is the 32-lane full mask, literally or through a macro (of the
    file's ``defines``, or of the project's, from its ``facts``)."""
    text = argument.strip()
    for _ in range(4):
        if _FULL_32.match(text) or _CAST_32.match(text):
            return True
        if _MASK_NAME.match(text) and text in defines:
            text = defines[text][0].strip()
            continue
        if _MASK_NAME.match(text) and text in _project_masks(facts):
            return True  # defined as the full mask in another of the project's headers
        return bool(_MASK_NAME.match(text) and _FULL_MASK_NAME.match(text))
    return False


def _project_masks(facts: ProjectFacts | None) -> frozenset[str]:
    """The project's macros defined, in whichever header, as the 32-lane full mask."""
    return frozenset(facts.full_mask_macros) if facts is not None else frozenset()


_DEFINITION_MESSAGE = (
    "32-bit full lane mask: on a 64-lane wavefront it leaves lanes 32-63 out; define it as "
    "64-bit on ROCm"
)


def _line_span(data: bytes, offset: int) -> tuple[int, int]:
    """The byte span of the whole line holding ``offset``, without its newline."""
    start = data.rfind(b"\n", 0, offset) + 1
    end = data.find(b"\n", offset)
    return start, len(data) if end < 0 else end


def _guarded(original: str, rocm: str) -> str:
    """The line kept for NVIDIA, with a ROCm twin: the preprocessed NVIDIA source is unchanged."""
    return f"#if defined(USE_ROCM)\n{rocm}\n#else\n{original}\n#endif"


def _one_declaration_line(source: object, declaration: object) -> bool:
    """Whether a declaration of one name fills its line alone (so the line can be guarded)."""
    node = declaration
    if getattr(node, "type", "") != "declaration":
        return False
    declarators = [c for c in node.named_children if c.type == "init_declarator"]  # type: ignore[attr-defined]
    if len(declarators) != 1:
        return False
    data: bytes = source.data  # type: ignore[attr-defined]
    start, end = _line_span(data, node.start_byte)  # type: ignore[attr-defined]
    return data[start:end].strip() == data[node.start_byte : node.end_byte].strip()  # type: ignore[attr-defined]


def _names_32bit_type(source: object, declarator: object) -> bool:
    """Whether the declaration holding ``declarator`` has a 32-bit integer type."""
    parent = getattr(declarator, "parent", None)
    if parent is None:
        return False
    type_node = parent.child_by_field_name("type")
    if type_node is None:
        return False
    text = type_node.text.decode("utf-8", "replace")
    return text in {"unsigned", "unsigned int", "uint32_t", "int", "uint", "unsigned int32_t"}


class LaneMask32bit(KernelRule):
    """
    ## What it does
    Flags warp-synchronous intrinsics (`__shfl_*_sync`, `__ballot_sync`, `__any_sync`,
    `__all_sync`, `__syncwarp`, ...) called with the 32-lane full mask `0xffffffff` (literally or
    through a macro), and ballot or `__activemask()` results stored in a 32-bit integer, in a
    C/C++/CUDA source that hipcc compiles for AMD.

    ## Why it breaks on ROCm
    A CDNA wavefront has 64 lanes and HIP's lane masks are 64-bit. HIP's `__*_sync` builtins
    (ROCm 6.2, opt-in through `HIP_ENABLE_WARP_SYNC_BUILTINS`; on by default from 6.3) take a
    64-bit mask and reject a 32-bit one at compile time; older ROCm has no `_sync` builtins. A
    ballot kept in 32 bits silently drops lanes 32-63.

    ## Example
    ```cpp
    for (int offset = 16; offset > 0; offset /= 2)
        val += __shfl_xor_sync(0xffffffff, val, offset);
    unsigned votes = __ballot_sync(0xffffffff, pred);
    ```

    ## Manual migration
    Use a 64-bit mask on ROCm (`#if defined(USE_ROCM)` ... `0xffffffffffffffffull` ... `#else`
    ... `0xffffffff`), or PyTorch's `WARP_SHFL_XOR`/`WARP_BALLOT` helpers from
    `ATen/cuda/DeviceUtils.cuh`, which choose per platform; store ballots in `uint64_t`.

    ## Fix
    Where the mask is a macro or a one-line constant of its own (`#define FINAL_MASK
    0xffffffff`, `constexpr unsigned FULL_MASK = 0xffffffff;`), the fix keeps that line for
    NVIDIA and adds a 64-bit twin for ROCm builds:

    ```cpp
    #if defined(USE_ROCM)
    #define FINAL_MASK 0xffffffffffffffffull
    #else
    #define FINAL_MASK 0xffffffff
    #endif
    ```

    Literal masks at call sites and 32-bit ballots are left to be changed by hand.

    ## Fix safety
    Safe: `USE_ROCM` is defined only by ROCm builds (PyTorch's `cpp_extension` on ROCm), so the
    NVIDIA build preprocesses to the same tokens as before (a test compares the host
    preprocessor's output); on ROCm the mask names all 64 lanes, which HIP's `_sync` builtins
    require. Whether the code around the mask assumes 32 lanes is ROC304's question.

    ## References
    - `docs/rocm-facts.md` §7 warp code; HIP kernel language (warp cross-lane functions)
    """

    fix = Fixing(
        title="Define the mask as 64-bit on ROCm, unchanged for NVIDIA",
        applicability=Applicability.SAFE,
    )
    code = "ROC303"
    impact = Impact(aggregate="file", effort_hours=0.5, consequence="crash-import")
    name = "lane-mask-32bit"
    category = "warp-size"
    severity = Severity.WARNING
    message = "32-bit lane mask: HIP masks are 64-bit (64-lane wavefronts on CDNA); use a 64-bit mask on ROCm"
    fact = "§7 warp code; [H3][H7]"
    parsing = Parsing(triggers=("_sync", "__activemask", "__ballot", "0xffffffff", "0xFFFFFFFF"))
    valid = [
        Valid("v += __shfl_xor_sync(0xffffffffffffffffull, v, 1);\n", path="k.cu"),
        Valid(
            "#if defined(USE_ROCM)\n#define FULL_MASK 0xffffffffffffffffull\n#else\n#define FULL_MASK 0xffffffff\n#endif\n"
            "__device__ float f(float v) { return v + __shfl_xor_sync(FULL_MASK, v, 1); }\n",
            path="k.cu",
        ),
        Valid("// __shfl_xor_sync(0xffffffff, v, 1)\nuint64_t b = __ballot(p);\n", path="k.cuh"),
        Valid("v += __shfl_xor_sync(mask, v, 1);\n", path="k.cu"),
    ]
    invalid = [
        Invalid(
            "__device__ float sum(float v) {\n  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);\n  return v;\n}\n",
            path="k.cu",
            line=2,
        ),
        Invalid(
            "#define FINAL_MASK 0xffffffff\n__device__ int any(int p) { return __any_sync(FINAL_MASK, p); }\n",
            path="reduce.cuh",
            line=1,
            count=1,
            sites=2,
            fixed="#if defined(USE_ROCM)\n#define FINAL_MASK 0xffffffffffffffffull\n#else\n"
            "#define FINAL_MASK 0xffffffff\n#endif\n"
            "__device__ int any(int p) { return __any_sync(FINAL_MASK, p); }\n",
        ),
        Invalid(
            "constexpr unsigned FINAL_MASK = 0xffffffff;\n__device__ void f();\n",
            path="k.cuh",
            line=1,
            fixed="#if defined(USE_ROCM)\nconstexpr unsigned long long FINAL_MASK = 0xffffffffffffffffull;\n"
            "#else\nconstexpr unsigned FINAL_MASK = 0xffffffff;\n#endif\n__device__ void f();\n",
        ),
        Invalid(
            "__device__ void f(int p) {\n  unsigned votes = __ballot_sync(0xFFFFFFFFu, p);\n}\n",
            path="k.cu",
            line=2,
        ),
        Invalid(
            "template <typename T> __device__ T x(T v, int i) { return __shfl_xor_sync(uint32_t(-1), v, i); }\n",
            path="k.cuh",
            line=1,
        ),
        Invalid(
            '#include "common.h"\n__device__ float s(float v) { return __shfl_down_sync(FINAL_MASK, v, 1); }\n',
            path="k.cu",
            line=2,
        ),
    ]

    def check(self) -> None:
        view = self.view
        source = view.source
        defines = source.defines()
        lines: set[int] = set()
        facts = self.ctx.project
        shimmed = frozenset(facts.intrinsic_shims) if facts is not None else frozenset()
        for call in source.calls():
            if call.callee not in SYNC_INTRINSICS or not call.arguments:
                continue
            if call.callee in shimmed:
                continue  # the project's ROCm definition of the intrinsic decides the mask
            if full_32bit_mask(call.arguments[0], defines, facts):
                lines.add(source.line_of(call.start))
                self.report_bytes((call.start, call.end))
        for node in source.nodes("init_declarator"):
            declarator = node.child_by_field_name("declarator")
            value = node.child_by_field_name("value")
            if declarator is None or value is None:
                continue
            name = source.text(declarator.start_byte, declarator.end_byte)
            if "mask" in name.lower() and _FULL_32.match(
                source.text(value.start_byte, value.end_byte)
            ):
                line = source.line_of(node.start_byte)
                if line not in lines and _names_32bit_type(source, node):
                    lines.add(line)
                    declaration = node.parent
                    replacement = None
                    if declaration is not None and _one_declaration_line(source, declaration):
                        start, end = _line_span(source.data, declaration.start_byte)
                        original = source.text(start, end)
                        prefix = (
                            "constexpr "
                            if "constexpr" in original
                            else "const "
                            if "const " in original
                            else ""
                        )
                        static = "static " if original.lstrip().startswith("static") else ""
                        indent = original[: len(original) - len(original.lstrip())]
                        replacement = _guarded(
                            original,
                            f"{indent}{static}{prefix}unsigned long long {name} = 0xffffffffffffffffull;",
                        )
                        self.report_bytes(
                            (start, end), message=_DEFINITION_MESSAGE, fix=Rewrite(replacement)
                        )
                    else:
                        self.report_bytes(
                            (node.start_byte, node.end_byte), message=_DEFINITION_MESSAGE
                        )
        for name, (value, offset) in source.defines().items():
            if "mask" in name.lower() and _FULL_32.match(value):
                line = source.line_of(offset)
                if line not in lines:
                    lines.add(line)
                    start, end = _line_span(source.data, offset)
                    original = source.text(start, end)
                    self.report_bytes(
                        (start, end),
                        message=_DEFINITION_MESSAGE,
                        fix=Rewrite(
                            None
                            if original.rstrip().endswith("\\")
                            else _guarded(original, f"#define {name} 0xffffffffffffffffull")
                        ),
                    )
        text = view.text
        if "__ballot" in text or "__activemask" in text:
            for token in source.tokens():
                if token.text not in {"__ballot_sync", "__ballot", "__activemask"}:
                    continue
                line = source.line_of(token.start)
                if line in lines:
                    continue
                if _NARROW_BALLOT.search(view.line_text(token.start)):
                    lines.add(line)
                    self.report_bytes(
                        (token.start, token.end),
                        message="ballot kept in a 32-bit integer drops lanes 32-63 of a 64-lane wavefront; store it in uint64_t",
                    )
