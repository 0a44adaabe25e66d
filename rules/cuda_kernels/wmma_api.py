"""ROC320 (wmma-api): NVIDIA's warp matrix API (`nvcuda::wmma`, `<mma.h>`) in a source hipcc
compiles for AMD."""

from __future__ import annotations

from migrator.api import Invalid, KernelRule, Severity, Valid

from ._shared import lines_once

#: How the parse names NVIDIA's namespace: ``using namespace nvcuda;``, ``nvcuda::wmma``.
_NAMESPACE_TOKENS = frozenset({"namespace_identifier", "identifier"})


class WmmaApi(KernelRule):
    """
    ## What it does
    Flags `#include <mma.h>`, `using namespace nvcuda;` and uses of the `nvcuda::wmma`
    namespace (`wmma::fragment`, `wmma::mma_sync`, `wmma::load_matrix_sync`) in a source hipcc
    compiles for AMD: one finding per file, its other lines listed as sites of it.

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
    aggregate = "file"  # one problem per kernel file: its sites are listed with it
    name = "wmma-api"
    category = "tensor-core"
    severity = Severity.ERROR
    message = "NVIDIA's WMMA API (nvcuda::wmma, <mma.h>) has no HIP mapping; port to rocWMMA"
    fact = "§7 tensor-core PTX; [H1][RW1]"
    triggers = ("wmma", "mma.h")
    effort_hours = 24.0
    consequence = "crash-import"
    port = True
    blocker = True
    valid = [
        Valid(
            "#include <rocwmma/rocwmma.hpp>\nrocwmma::fragment<rocwmma::matrix_a, 16, 16, 16, half, rocwmma::row_major> a;\n",
            path="k.cu",
        ),
        Valid('// wmma::mma_sync is NVIDIA only\n#include "my_mma.h"\n', path="k.cu"),
        Valid("#ifndef USE_ROCM\n#include <mma.h>\n#endif\n", path="k.cu"),
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
    ]

    def check(self) -> None:
        view = self.view
        spans = [
            (include.start, include.end)
            for include in view.source.includes()
            if include.header == "mma.h"
        ]
        tokens = view.source.tokens()
        for index, token in enumerate(tokens):
            if token.text == "wmma" and index + 1 < len(tokens) and tokens[index + 1].text == "::":
                spans.append((token.start, token.end))
            elif token.text == "nvcuda" and token.type in _NAMESPACE_TOKENS:
                spans.append((token.start, token.end))  # ``using namespace nvcuda;``
        for start, end in lines_once(spans, view.source.line_of):
            self.report_bytes(start, end)
