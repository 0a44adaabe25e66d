"""ROC331 (cutlass-use): code written on CUTLASS or CuTe (``cutlass::gemm::device::Gemm``,
``cute::Tensor``, ``using namespace cute;``) in a source hipcc compiles for AMD, past the
``#include`` line ROC330 reports."""

from __future__ import annotations

import functools
import re

from migrator.api import Impact, Invalid, KernelRule, Parsing, Severity, Valid

from ._shared import lines_once, table


@functools.cache
def _named() -> re.Pattern[bytes]:
    """Where the libraries may be named: ``cutlass::``, ``cute ::``, ``namespace cute``."""
    names = b"|".join(re.escape(name.encode()) for name in table()["libraries"]["namespaces"])
    return re.compile(rb"\b(?:" + names + rb")\s*::|\bnamespace\s+(?:" + names + rb")\b")


#: CuTe's architecture atoms, named unqualified after ``using namespace cute;``: tensor-core MMA
#: (``SM80_16x8x16_F16F16F16F16_TN``), copies (``SM80_CP_ASYNC_CACHEGLOBAL``, ``SM75_U32x4_LDSM_N``,
#: ``SM90_TMA_LOAD``).
_CUTE_ATOM = re.compile(r"^SM[1-9]\d{1,2}_[A-Za-z0-9_]+$")
_USING_CUTE = re.compile(rb"\busing\s+namespace\s+cute\s*;")


class CutlassUse(KernelRule):
    """
    ## What it does
    Flags the lines of a C/C++/CUDA source that hipcc compiles for AMD which use CUTLASS or
    CuTe by name: a name qualified with `cutlass::` or `cute::` (a device GEMM type, an arch
    tag, a layout, a CuTe tensor or enum), `using namespace cute;` and, after it, CuTe's
    architecture atoms named unqualified (`SM80_16x8x16_F16F16F16F16_TN`,
    `SM80_CP_ASYNC_CACHEGLOBAL`). One finding per file,
    its other lines listed as sites of it; in a file that includes CUTLASS itself the lines
    are sites of the CUTLASS finding (ROC330).

    ## Why it breaks on ROCm
    CUTLASS and CuTe have no ROCm port and hipify does not translate them. Every line that
    names them is part of the port: the GEMM built from a CUTLASS template, the arch tag
    that picks its tensor-core path, a CuTe enum used as a host-side flag. A file can use
    them through a project header without including CUTLASS itself.

    ## Example
    ```cpp
    #include "gemm_config.h"
    using Gemm = cutlass::gemm::device::Gemm<int8_t, cutlass::layout::RowMajor, int8_t,
                                             cutlass::layout::ColumnMajor, int32_t>;
    ```

    ## Manual migration
    Keep the CUTLASS code for NVIDIA under `#if !defined(USE_ROCM)` and give AMD a hipBLASLt,
    Composable Kernel or Triton path; replace a CuTe enum used only as a flag by a local one.

    ## References
    - `docs/rocm-facts.md` §7; NVIDIA CUTLASS; ROCm Composable Kernel
    """

    code = "ROC331"
    # the port is weighed at the library's include (ROC330); each further line is reading
    impact = Impact(
        aggregate="file", effort_hours=0.25, consequence="crash-import", port=True, blocker=True
    )
    name = "cutlass-use"
    category = "cutlass"
    severity = Severity.ERROR
    message = "CUTLASS/CuTe used here (no ROCm port): this code is part of the port to a CK, hipBLASLt or Triton path"
    fact = "§7 CUTLASS and CuTe; [CU1][CK1]"
    parsing = Parsing(triggers=("cutlass", "cute"), requires=("::", "namespace"))
    valid = [
        Valid("int execute(int compute) { return compute; }\n", path="k.cu"),
        Valid('// cutlass::gemm::device::Gemm\nconst char* s = "cute::Tensor";\n', path="k.cu"),
        Valid(
            "#if !defined(USE_ROCM)\nusing Gemm = cutlass::gemm::device::Gemm<float, float>;\n"
            "#endif\n",
            path="k.cu",
        ),
        Valid("namespace mylib { struct cute { int v; }; }\n", path="k.h"),
        # an SM80_-named identifier without CuTe is the project's own
        Valid("enum Arch { SM80_AMPERE, SM90_HOPPER };\nint a = SM80_AMPERE;\n", path="k.h"),
    ]
    invalid = [
        Invalid(
            '#include "config.h"\nusing Gemm = cutlass::gemm::device::Gemm<\n'
            "    int8_t, cutlass::layout::RowMajor, int8_t, cutlass::layout::ColumnMajor>;\n",
            path="linear.cu",
            line=2,
            count=1,
            sites=2,
        ),
        Invalid(
            "void f(cute::UMMA::Major major) {\n  bool k = major == cute::UMMA::Major::K;\n}\n",
            path="gemm.hpp",
            line=1,
            count=1,
            sites=2,
        ),
        Invalid(
            "using namespace cute;\n__device__ void f() {}\n",
            path="k.cuh",
            line=1,
        ),
        # CuTe's SM80 atoms named unqualified: each line a site of the one finding
        Invalid(
            "using namespace cute;\nusing Mma = SM80_16x8x16_F16F16F16F16_TN;\n"
            "using Copy = SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>;\n",
            path="config.hpp",
            line=1,
            count=1,
            sites=3,
        ),
    ]

    def check(self) -> None:
        names = frozenset(table()["libraries"]["namespaces"])
        source = self.view.source
        if not _named().search(source.data):
            return  # ``compute``, ``execute``: the trigger words, not the library
        tokens = source.tokens()
        spans: list[tuple[int, int]] = []
        for index, token in enumerate(tokens):
            if token.text not in names:
                continue
            after = tokens[index + 1].text if index + 1 < len(tokens) else ""
            before = tokens[index - 1].text if index else ""
            if (token.type == "namespace_identifier" and after == "::") or before == "namespace":
                if before == "namespace" and index > 1 and tokens[index - 2].text != "using":
                    continue  # ``namespace cute {``: a definition, its contents are the uses
                spans.append((token.start, token.end))
        if _USING_CUTE.search(source.data):  # CuTe's atoms, unqualified
            spans.extend(
                (token.start, token.end)
                for token in tokens
                if token.type in {"identifier", "type_identifier"} and _CUTE_ATOM.match(token.text)
            )
        for start, end in lines_once(spans, source.line_of):
            self.report_bytes((start, end))
