"""ROC140 (tf32-matmul-expected): flags code that turns on TF32 matmuls."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid
from migrator.api.syntax import arg, literal_value

from .._rocm_guards import unreachable_on_rocm
from .._tree import tree
from ._shared import _assignments

_TF32_SETTINGS: dict[str, object] = {
    "torch.backends.cuda.matmul.allow_tf32": True,
    "torch.backends.cuda.matmul.fp32_precision": "tf32",
    "torch.backends.fp32_precision": "tf32",
}


class Tf32Matmul(PythonRule):
    """
    ## What it does
    Flags code that turns on TF32 matmuls: `torch.backends.cuda.matmul.allow_tf32 = True`,
    `torch.set_float32_matmul_precision("high")` or `("medium")`,
    `torch.backends.cuda.matmul.fp32_precision = "tf32"`.

    ## Why it breaks on ROCm
    TF32 exists only on MI300-class GPUs (gfx942), and ROCm builds of PyTorch use it there only
    when the process also sets `HIPBLASLT_ALLOW_TF32=1`; elsewhere the flags are accepted and
    fp32 GEMMs run in full FP32 (slower than the NVIDIA run this code was tuned on). Where TF32 is
    on, its numerics are documented to differ from NVIDIA's. Nothing fails and results stay
    FP32-exact, so the finding is informational (severity info).

    ## Example
    ```python
    torch.backends.cuda.matmul.allow_tf32 = True
    ```

    ## Manual migration
    Keep the flag. On MI300X also export `HIPBLASLT_ALLOW_TF32=1` before starting Python, and
    re-check accuracy-sensitive code; or move the model to bf16 autocast, which is fast on every
    AMD GPU. No rewrite is offered: `set_float32_matmul_precision("high")` is *not* a drop-in
    equivalent of `allow_tf32 = True` in torch ≥ 2.9 (it also switches oneDNN CPU matmuls to TF32,
    and mixing the two APIs makes `get_float32_matmul_precision()` raise), and it changes nothing
    on ROCm.

    ## References
    - PyTorch HIP semantics (TF32): https://docs.pytorch.org/docs/stable/notes/hip.html
    - pytorch/pytorch PR #139869 (hipBLASLt TF32, `HIPBLASLT_ALLOW_TF32`)
    """

    code = "ROC140"
    parsing = Parsing(
        scope="statement", triggers=("allow_tf32", "float32_matmul_precision", "fp32_precision")
    )
    name = "tf32-matmul-expected"
    category = "tf32"
    severity = Severity.INFO
    impact = Impact(
        consequence="performance", aggregate="project", targets=("gfx942",), effort_hours=0.25
    )
    message = (
        "TF32 matmul is off on ROCm unless the GPU is gfx942 and HIPBLASLT_ALLOW_TF32=1 is set; "
        "numerics differ from NVIDIA TF32"
    )
    fact = "§2 allow_tf32 row; §6 HIPBLASLT_ALLOW_TF32; §10.5; [P1][P6]"
    valid = [
        Valid("import torch\ntorch.backends.cuda.matmul.allow_tf32 = False\n"),
        Valid("import torch\ntorch.set_float32_matmul_precision('highest')\n"),
        Valid(
            "import torch\ndef set_float32_matmul_precision(p):\n    pass\n"
            "set_float32_matmul_precision('high')\n"
        ),
        Valid("import torch\nold = torch.backends.cuda.matmul.allow_tf32\n"),
    ]
    invalid = [
        Invalid("import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n", line=2, column=1),
        Invalid("import torch as tt\ntt.set_float32_matmul_precision('high')\n"),
        Invalid("from torch.backends import cuda\ncuda.matmul.allow_tf32 = True\n"),
        Invalid("from torch import set_float32_matmul_precision as p\np(precision='medium')\n"),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        tree_ = tree(self.ctx)
        for statement, _, _ in _assignments(self.ctx, tree_, _TF32_SETTINGS):
            self.report(statement)
        for call in tree_.nodes:
            if not isinstance(call, cst.Call):
                continue
            if self.ctx.call_name(call) != "torch.set_float32_matmul_precision":
                continue
            found = arg(call, keyword="precision", position=0)
            if found is None or literal_value(found.value) not in {"high", "medium"}:
                continue
            if unreachable_on_rocm(self.ctx, tree_, call):
                continue
            self.report(call)
