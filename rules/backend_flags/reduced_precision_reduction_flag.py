"""ROC141 (reduced-precision-reduction-flag): flags assignments to
`torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction` and
`allow_bf16_reduced_precision_reduction`."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid

from .._tree import tree
from ._shared import _assignments


class ReducedPrecisionReductionFlag(PythonRule):
    """
    ## What it does
    Flags assignments to `torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction` and
    `allow_bf16_reduced_precision_reduction`.

    ## Why it breaks on ROCm
    AMD lists both flags as unsupported: they are accepted and do nothing, so fp16/bf16 GEMM
    reductions behave the same whichever value is set.

    ## Example
    ```python
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    ```

    ## Manual migration
    Nothing to change; do not rely on the flag for accuracy (or speed) on AMD GPUs.

    ## References
    - ROCm PyTorch compatibility table (`allow_fp16_reduced_precision_reduction`)
    """

    code = "ROC141"
    parsing = Parsing(scope="statement", triggers=("reduced_precision_reduction",))
    name = "reduced-precision-reduction-flag"
    category = "tf32"
    severity = Severity.INFO
    impact = Impact(consequence="hygiene", aggregate="file", effort_hours=0.0)
    message = "reduced-precision-reduction flags have no effect on ROCm (unsupported by AMD)"
    fact = "§2 allow_fp16/bf16_reduced_precision_reduction row; [R1]"
    valid = [
        Valid(
            "import torch\nv = torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction\n"
        ),
        Valid(
            "class m:\n    allow_fp16_reduced_precision_reduction = 1\n"
            "m.allow_fp16_reduced_precision_reduction = 0\n"
        ),
    ]
    invalid = [
        Invalid(
            "import torch\n"
            "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = True\n",
            line=2,
        ),
        Invalid(
            "from torch.backends import cuda as c\n"
            "c.matmul.allow_fp16_reduced_precision_reduction = False\n"
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        targets: dict[str, object] = {
            "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction": ...,
            "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction": ...,
        }
        for statement, _, _ in _assignments(self.ctx, tree(self.ctx), targets):
            self.report(statement)
