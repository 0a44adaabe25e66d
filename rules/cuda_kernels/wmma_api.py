"""ROC320 (wmma-api): NVIDIA's warp matrix API (`nvcuda::wmma`, `<mma.h>`) in a source hipcc
compiles for AMD."""

from __future__ import annotations

from typing import Any

from migrator.api import Impact, Invalid, KernelRule, Parsing, Severity, Valid

from ._shared import lines_once

#: How the parse names NVIDIA's namespace: ``using namespace nvcuda;``, ``nvcuda::wmma``.
_NAMESPACE_TOKENS = frozenset({"namespace_identifier", "identifier"})
#: The WMMA names a file may write unqualified once ``using namespace nvcuda[::wmma];`` brings
#: them in (the calls also resolve through argument-dependent lookup on the fragments).
_WMMA_NAMES = frozenset(
    {"fill_fragment", "load_matrix_sync", "store_matrix_sync", "mma_sync", "fragment"}
)
#: A token before a name that makes it a declaration or a member, not a use of NVIDIA's API.
_NOT_A_USE = frozenset(
    {"primitive_type", "type_identifier", "::", ".", "->", "sized_type_specifier"}
)


class WmmaApi(KernelRule):
    """
    ## What it does
    Flags `#include <mma.h>`, `using namespace nvcuda;` and uses of the `nvcuda::wmma`
    namespace (`wmma::fragment`, `wmma::mma_sync`, `wmma::load_matrix_sync`) in a source hipcc
    compiles for AMD: one finding per file, its other lines listed as sites of it. After a
    using-directive for `nvcuda` (in the file, or in a project header it includes) the calls
    written without `wmma::` (`mma_sync(c, a, b, c)`) are sites too.

    ## Why it breaks on ROCm
    hipify has no mapping for `mma.h` or `nvcuda::wmma`: HIP has no such header. AMD's
    counterpart, rocWMMA, has a similar API in another namespace with its own fragment shapes
    and layouts per architecture, so the kernel has to be ported, not renamed.

    ## Example
    ```cpp
    #include <mma.h>
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::mma_sync(acc, a, b, acc);
    ```

    ## Manual migration
    Port the tile code to rocWMMA (`#include <rocwmma/rocwmma.hpp>`, `rocwmma::fragment`,
    `rocwmma::mma_sync`) under `#if defined(USE_ROCM)`, checking the fragment sizes rocWMMA
    supports on the target (wave64 on CDNA), or use Composable Kernel.

    ## References
    - `docs/rocm-facts.md` §7; rocWMMA
    """

    code = "ROC320"
    impact = Impact(
        aggregate="file", effort_hours=24.0, consequence="crash-import", port=True, blocker=True
    )
    name = "wmma-api"
    category = "tensor-core"
    severity = Severity.ERROR
    message = "NVIDIA's WMMA API (nvcuda::wmma, <mma.h>) has no HIP mapping; port to rocWMMA"
    fact = "§7 tensor-core PTX; [H1][RW1]"
    # the unqualified calls: a header of the project may hold the using-directive
    parsing = Parsing(
        triggers=("wmma", "mma.h", "nvcuda", "mma_sync", "matrix_sync", "fill_fragment")
    )
    valid = [
        Valid(
            "#include <rocwmma/rocwmma.hpp>\nrocwmma::fragment<rocwmma::matrix_a, 16, 16, 16, half, rocwmma::row_major> a;\n",
            path="k.cu",
        ),
        Valid('// wmma::mma_sync is NVIDIA only\n#include "my_mma.h"\n', path="k.cu"),
        Valid("#ifndef USE_ROCM\n#include <mma.h>\n#endif\n", path="k.cu"),
        Valid(
            "__device__ void mma_sync(float* c, const float* a);\n"
            "__global__ void k(float* c, float* a) { mma_sync(c, a); }\n",
            path="k.cu",
        ),
    ]
    invalid = [
        Invalid(
            "#include <mma.h>\nusing namespace nvcuda;\n", path="k.cu", line=1, count=1, sites=2
        ),
        Invalid(
            '#include "tiles.h"\n__global__ void k() {\n  using namespace nvcuda;\n'
            "  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;\n}\n",
            path="k.cu",
            line=3,
            count=1,
            sites=2,
        ),
        Invalid(
            "__global__ void k() {\n  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> c;\n"
            "  nvcuda::wmma::fill_fragment(c, 0.0f);\n}\n",
            path="k.cu",
            line=2,
            count=1,
            sites=2,
        ),
        Invalid(
            "#include <mma.h>\nusing namespace nvcuda;\n__global__ void k() {\n"
            "  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;\n"
            "  fill_fragment(c, 0.0f);\n  mma_sync(c, a, b, c);\n}\n",
            path="k.cu",
            line=1,
            count=1,
            sites=5,
        ),
        Invalid(
            "using namespace nvcuda::wmma;\n__global__ void k() {\n"
            "  fragment<accumulator, 16, 16, 16, float> c;\n  store_matrix_sync(p, c, 16, mem_row_major);\n}\n",
            path="k.cu",
            line=1,
            count=1,
            sites=3,
        ),
    ]

    def check(self) -> None:
        view = self.view
        spans = [
            (include.start, include.end)
            for include in view.source.includes()
            if include.header == "mma.h"
        ]
        tokens = view.source.tokens()
        facts = self.ctx.project
        through_header = facts is not None and self.ctx.path in facts.nvcuda_using
        spans.extend(_unqualified_uses(tokens, through_header))
        for index, token in enumerate(tokens):
            if token.text == "wmma" and index + 1 < len(tokens) and tokens[index + 1].text == "::":
                spans.append((token.start, token.end))
            elif token.text == "nvcuda" and token.type in _NAMESPACE_TOKENS:
                spans.append((token.start, token.end))  # ``using namespace nvcuda;``
        for start, end in lines_once(spans, view.source.line_of):
            self.report_bytes((start, end))


def _unqualified_uses(tokens: list[Any], through_header: bool = False) -> list[tuple[int, int]]:
    """Uses of WMMA names written without ``wmma::`` (``mma_sync(c, a, b, c)``), only where the
    file brings NVIDIA's namespace in with a using-directive, its own or (``through_header``) one
    in a project header it includes (a project's own ``mma_sync`` elsewhere is not NVIDIA's
    API)."""
    using = through_header or any(
        tokens[i].text == "using"
        and tokens[i + 1].text == "namespace"
        and tokens[i + 2].text == "nvcuda"
        for i in range(len(tokens) - 2)
    )
    if not using:
        return []
    spans: list[tuple[int, int]] = []
    for index, token in enumerate(tokens):
        if token.text not in _WMMA_NAMES or index + 1 >= len(tokens):
            continue
        if tokens[index + 1].text not in ("(", "<"):
            continue
        before = tokens[index - 1] if index else None
        if before is not None and (before.type in _NOT_A_USE or before.text in _NOT_A_USE):
            continue
        spans.append((token.start, token.end))
    return spans
