"""ROC130 (cudnn-version-compare): flags `torch.backends.cudnn.version()` compared with numbers or
used in arithmetic (`cudnn.version() >= 8900`, `cudnn.version() // 1000`)."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid
from migrator.api.syntax import literal_value

from .._aliases import alias_kind, assigned_value_aliases
from .._rocm_guards import unreachable_on_rocm
from .._tree import tree

CUDNN_VERSION = "torch.backends.cudnn.version"


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
    parsing = Parsing(scope="names", triggers=("cudnn.version", "cudnn import version", "cudnn as"))
    name = "cudnn-version-compare"
    category = "cudnn"
    severity = Severity.WARNING
    impact = Impact(consequence="performance", aggregate="scope", effort_hours=0.25)
    message = (
        "`cudnn.version()` returns the MIOpen version on ROCm: cuDNN version numbers do not apply"
    )
    fact = "§2 cudnn.version row; [P3]"
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
