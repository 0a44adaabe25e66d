"""ROC104 (triton-2-0-api): Triton APIs that only Triton 2.0 has, which no ROCm torch pairs with."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, QualifiedCallRule, Severity, Valid

_LIBDEVICE = (
    "`{name}`: `triton.language.libdevice` exists only up to Triton 2.0 (it became `tl.math`, "
    "later `tl.extra.libdevice`); on the Triton every ROCm torch from 2.1 ships it raises "
    "AttributeError: port the call to `tl.math.{short}` / `tl.extra.libdevice.{short}`"
)
_DO_BENCH = (
    "`triton.testing.do_bench(..., percentiles=...)`: the keyword is Triton 2.0's; from 2.1 it "
    "is `quantiles`, so on the Triton every ROCm torch from 2.1 ships this call raises "
    "TypeError: rename it to `quantiles=`"
)


class Triton20Api(QualifiedCallRule):
    """
    ## What it does
    Flags calls of Triton APIs that exist only in Triton 2.0 and earlier: the
    `triton.language.libdevice` functions (`tl.libdevice.exp`, `tl.libdevice.pow`, ...) and
    `triton.testing.do_bench` called with `percentiles=`.

    ## Why it breaks on ROCm
    Triton replaced `tl.libdevice` by `tl.math` (March 2023) and renamed `do_bench`'s
    `percentiles` to `quantiles` (April 2023), both after 2.0. Code written for them runs only
    with `triton==2.0.0`, which only NVIDIA builds of torch pair with: every ROCm torch from 2.1
    ships a newer `pytorch-triton-rocm`, where the kernel fails to compile (AttributeError) and
    the autotuner's benchmark raises TypeError. Removing the `triton==2.0.0` pin (ROC807) is
    therefore not enough: these call sites are the rest of the port.

    ## Example
    ```python
    import triton.language as tl

    @triton.jit
    def kernel(x_ptr):
        x = tl.load(x_ptr)
        tl.store(x_ptr, tl.libdevice.exp(x))
    ```

    ## Manual migration
    Use `tl.math.exp` / `tl.exp` (or `tl.extra.libdevice.exp` on Triton 3) and
    `do_bench(..., quantiles=...)`; then the project works with the Triton its torch ships,
    on NVIDIA and on ROCm.

    ## References
    - rocm-facts.md §7 (Triton 2.0-only API)
    """

    code = "ROC104"
    name = "triton-2-0-api"
    category = "cuda-version"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", effort_hours=1.0)
    message = "Triton 2.0-only API: fails on the Triton every ROCm torch ships"
    fact = "§7 Triton 2.0-only API; [T4]"
    calls = {
        "triton.language.libdevice.*": _LIBDEVICE,
        "triton.testing.do_bench": _DO_BENCH,
    }
    parsing = Parsing(triggers=("libdevice", "percentiles"))
    valid = [
        Valid(
            "import triton.language as tl\n\ndef k(x):\n    return tl.math.exp(x)\n",
        ),
        Valid(
            "import triton\n\ndef bench(f):\n"
            "    return triton.testing.do_bench(f, quantiles=[0.5, 0.2, 0.8])\n",
        ),
        Valid(
            "from triton.language.extra import libdevice\n\ndef k(x):\n"
            "    return libdevice.exp(x)\n",
        ),
        Valid("import numpy as np\n\ndef f(a, percentiles):\n    return np.percentile(a, 5)\n"),
    ]
    invalid = [
        Invalid(
            "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(p):\n"
            "    x = tl.load(p)\n    tl.store(p, tl.libdevice.exp(x))\n",
            line=8,
        ),
        Invalid(
            "import triton\n\ndef bench(f):\n"
            "    return triton.testing.do_bench(f, percentiles=(0.5, 0.2, 0.8), rep=40)\n",
            line=4,
        ),
        Invalid(
            "from triton.language import libdevice\n\ndef k(x):\n    return libdevice.pow(x, 2.0)\n",
            line=4,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        name = self.ctx.call_name(node)
        if name == "triton.testing.do_bench" and not any(
            arg.keyword is not None and arg.keyword.value == "percentiles" for arg in node.args
        ):
            return
        super().visit_Call(node)
