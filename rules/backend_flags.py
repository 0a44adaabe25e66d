"""ROC13x cuDNN flags that mean something else on MIOpen; ROC14x TF32 and reduced-precision
matmul flags that ROCm ignores or gates differently."""

from __future__ import annotations

import libcst as cst

from migrator.astutil import arg, literal_value
from migrator.context import PythonContext
from migrator.model import Severity
from migrator.rule import Invalid, PythonRule, Valid

from ._aliases import alias_kind, assigned_value_aliases
from ._rocm_guards import unreachable_on_rocm
from ._tree import Tree, tree

CUDNN_VERSION = "torch.backends.cudnn.version"


def _assignments(
    ctx: PythonContext, tree_: Tree, targets: dict[str, object]
) -> list[tuple[cst.CSTNode, str, object]]:
    """``(statement, qualified target, literal value)`` for assignments to the given settings
    whose value matches ``targets[name]`` (``...`` matches any value)."""
    found: list[tuple[cst.CSTNode, str, object]] = []
    for node in tree_.nodes:
        if not isinstance(node, cst.Assign):
            continue
        for target in node.targets:
            if not isinstance(target.target, cst.Attribute):
                continue
            qualified = ctx.qualname(target.target)
            if qualified not in targets:
                continue
            value = literal_value(node.value)
            wanted = targets[qualified]
            if wanted is ... or value == wanted:
                if not unreachable_on_rocm(ctx, tree_, node):
                    found.append((node, qualified, value))
    return found


class CudnnVersionCompare(PythonRule):
    """
    ## What it does
    Flags `torch.backends.cudnn.version()` compared with numbers or used in arithmetic
    (`cudnn.version() >= 8900`, `cudnn.version() // 1000`).

    ## Why it breaks on ROCm
    On ROCm `torch.backends.cudnn` drives MIOpen, and `version()` returns the **MIOpen** version,
    whose numbering has nothing to do with cuDNN's 8xxx/9xxxx. Feature checks written against
    cuDNN numbers pass or fail arbitrarily on AMD GPUs.

    ## Example
    ```python
    if torch.backends.cudnn.version() >= 8900:
        use_cudnn_attention = True
    ```

    ## Manual migration
    Branch on the build first; on ROCm test the feature (or the MIOpen version) explicitly:
    ```python
    if torch.version.hip is None and torch.backends.cudnn.version() >= 8900:
        use_cudnn_attention = True
    ```

    ## References
    - pytorch/pytorch `torch/backends/cudnn/__init__.py`
    """

    code = "ROC130"
    parse_scope = "names"
    name = "cudnn-version-compare"
    category = "cudnn"
    severity = Severity.WARNING
    aggregate = "scope"
    message = (
        "`cudnn.version()` returns the MIOpen version on ROCm: cuDNN version numbers do not apply"
    )
    fact = "§2 cudnn.version row; [P3]"
    triggers = ("cudnn.version", "cudnn import version", "cudnn as")
    effort_hours = 0.25
    valid = [
        Valid("import torch\nprint('cudnn', torch.backends.cudnn.version())\n"),
        Valid("import torch\nok = torch.backends.cudnn.version() is not None\n"),
        Valid(
            "import torch\nif not torch.version.hip:\n"
            "    new = torch.backends.cudnn.version() >= 8900\n"
        ),
        Valid("def version():\n    return 9\nok = version() >= 8\n"),
    ]
    invalid = [
        Invalid(
            "import torch\nif torch.backends.cudnn.version() >= 8900:\n    pass\n",
            line=2,
            column=4,
        ),
        Invalid("from torch.backends import cudnn\nmajor = cudnn.version() // 1000\n"),
        Invalid(
            "import torch.backends.cudnn as cudnn\ndef f():\n    v = cudnn.version()\n"
            "    return v < 8000\n",
            line=4,
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        tree_ = tree(self.ctx)

        def is_version(value: cst.CSTNode) -> bool:
            return isinstance(value, cst.Call) and self.ctx.call_name(value) == CUDNN_VERSION

        aliases = assigned_value_aliases(
            tree_, lambda value, _: "cudnn-version" if is_version(value) else None
        )
        for candidate in tree_.nodes:
            operands: list[cst.BaseExpression] = []
            if isinstance(candidate, cst.Comparison):
                if any(isinstance(c.operator, (cst.Is, cst.IsNot)) for c in candidate.comparisons):
                    continue
                if any(literal_value(c.comparator) is None for c in candidate.comparisons):
                    continue
                operands = [candidate.left, *[c.comparator for c in candidate.comparisons]]
            elif isinstance(candidate, cst.BinaryOperation):
                operands = [candidate.left, candidate.right]
            else:
                continue
            if not any(
                is_version(operand) or alias_kind(tree_, aliases, operand) == "cudnn-version"
                for operand in operands
            ):
                continue
            if unreachable_on_rocm(self.ctx, tree_, candidate):
                continue
            self.report(candidate)


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
    parse_scope = "statement"
    name = "cudnn-allow-tf32"
    category = "cudnn"
    severity = Severity.INFO
    aggregate = "file"
    message = "`cudnn.allow_tf32` has no effect on MIOpen: fp32 convolutions stay full FP32 on ROCm"
    fact = "§2 cudnn.allow_tf32 row; [R1][P5]"
    triggers = ("allow_tf32", "fp32_precision")
    effort_hours = 0.0
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
    parse_scope = "statement"
    name = "tf32-matmul-expected"
    category = "tf32"
    severity = Severity.INFO
    aggregate = "project"
    message = (
        "TF32 matmul is off on ROCm unless the GPU is gfx942 and HIPBLASLT_ALLOW_TF32=1 is set; "
        "numerics differ from NVIDIA TF32"
    )
    fact = "§2 allow_tf32 row; §6 HIPBLASLT_ALLOW_TF32; §10.5; [P1][P6]"
    triggers = ("allow_tf32", "float32_matmul_precision", "fp32_precision")
    targets = ("gfx942",)
    effort_hours = 0.25
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
    parse_scope = "statement"
    name = "reduced-precision-reduction-flag"
    category = "tf32"
    severity = Severity.INFO
    aggregate = "file"
    message = "reduced-precision-reduction flags have no effect on ROCm (unsupported by AMD)"
    fact = "§2 allow_fp16/bf16_reduced_precision_reduction row; [R1]"
    triggers = ("reduced_precision_reduction",)
    effort_hours = 0.0
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
