"""ROC131 (cudnn-allow-tf32): flags `torch.backends.cudnn.allow_tf32 = True` and
`torch.backends.cudnn.conv.fp32_precision = "tf32"`."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid

from .._tree import tree
from ._shared import _assignments


class CudnnAllowTf32(PythonRule):
    """
    ## What it does
    Flags `torch.backends.cudnn.allow_tf32 = True` and `torch.backends.cudnn.conv.fp32_precision =
    "tf32"`.

    ## Why it breaks on ROCm
    The flag is accepted but has no effect on MIOpen convolutions (AMD's compatibility table marks
    it unsupported; MIOpen TF32 is still under development), so fp32 convolutions run at full
    FP32 precision and speed on AMD GPUs. Numerics match NVIDIA's TF32-off results, not its
    TF32-on results.

    ## Example
    ```python
    torch.backends.cudnn.allow_tf32 = True
    ```

    ## Manual migration
    Nothing to change for correctness. For convolution speed on MI300X use bf16/fp16 autocast;
    do not rely on TF32 convolutions when comparing accuracy with NVIDIA runs.

    ## References
    - ROCm PyTorch compatibility table (`cudnn.allow_tf32`)
    """

    code = "ROC131"
    parsing = Parsing(scope="statement", triggers=("allow_tf32", "fp32_precision"))
    name = "cudnn-allow-tf32"
    category = "cudnn"
    severity = Severity.INFO
    #: a project-wide fact: one finding with the other sites related, like ROC140
    impact = Impact(consequence="hygiene", aggregate="project", effort_hours=0.0)
    message = "`cudnn.allow_tf32` has no effect on MIOpen: fp32 convolutions stay full FP32 on ROCm"
    fact = "§2 cudnn.allow_tf32 row; [R1][P5]"
    valid = [
        Valid("import torch\ntorch.backends.cudnn.benchmark = True\n"),
        Valid("import torch\ntorch.backends.cudnn.allow_tf32 = False\n"),
        Valid("class cfg:\n    allow_tf32 = True\ncfg.allow_tf32 = True\n"),
    ]
    invalid = [
        Invalid("import torch\ntorch.backends.cudnn.allow_tf32 = True\n", line=2, column=1),
        Invalid("from torch.backends import cudnn\ncudnn.allow_tf32 = True\n"),
        Invalid("import torch\ntorch.backends.cudnn.conv.fp32_precision = 'tf32'\n"),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        targets: dict[str, object] = {
            "torch.backends.cudnn.allow_tf32": True,
            "torch.backends.cudnn.conv.fp32_precision": "tf32",
        }
        for statement, _, _ in _assignments(self.ctx, tree(self.ctx), targets):
            self.report(statement)
