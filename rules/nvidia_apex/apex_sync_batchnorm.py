"""ROC503 (apex-sync-batchnorm): flags `apex.parallel.SyncBatchNorm` and
`apex.parallel.convert_syncbn_model`, rewriting them to `torch.nn.SyncBatchNorm` /
`torch.nn.SyncBatchNorm.convert_sync_batchnorm`."""

from __future__ import annotations

import libcst as cst

from migrator.api import (
    Applicability,
    Fixing,
    Impact,
    Invalid,
    Parsing,
    PythonRule,
    Rewrite,
    Severity,
    Valid,
)

from .._arguments import bind_arguments, relayout
from .._imports import (
    torch_ref,
)
from .._literals import is_literal, literal_from_text
from ._shared import _data


class ApexSyncBatchNorm(PythonRule):
    """
    ## What it does
    Flags `apex.parallel.SyncBatchNorm` and `apex.parallel.convert_syncbn_model`, rewriting them
    to `torch.nn.SyncBatchNorm` / `torch.nn.SyncBatchNorm.convert_sync_batchnorm`.

    ## Why it breaks on ROCm
    AMD's PyTorch compatibility table lists APEX batch norm as unsupported on ROCm. PyTorch's
    `SyncBatchNorm` works over RCCL (the `nccl` backend on ROCm).

    ## Example
    ```python
    from apex.parallel import convert_syncbn_model

    model = convert_syncbn_model(model)
    ```

    ## Fix
    ```python
    import torch

    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    ```
    `SyncBatchNorm(num_features, eps, momentum, affine, track_running_stats, process_group)`
    keep their order; `channel_last=True` and `fuse_relu=True` have no torch argument and leave
    the call unfixed.

    ## Fix safety
    Unsafe: the statistics are the same, but torch's SyncBatchNorm only runs inside an
    initialized process group on GPU tensors and reduces with its own kernels; checkpoints keep
    the BatchNorm keys (`weight`, `bias`, `running_mean`, `running_var`, `num_batches_tracked`).

    ## References
    - ROCm PyTorch compatibility table (APEX batch norm); NVIDIA/apex `apex/parallel`
    - https://docs.pytorch.org/docs/stable/generated/torch.nn.SyncBatchNorm.html
    """

    code = "ROC503"
    name = "apex-sync-batchnorm"
    category = "apex"
    severity = Severity.WARNING
    impact = Impact(consequence="crash-path", aggregate="scope", effort_hours=0.3)
    message = "apex SyncBatchNorm is listed unsupported on ROCm; torch.nn.SyncBatchNorm works"
    fix = Fixing(title="Use `torch.nn.SyncBatchNorm`", applicability=Applicability.UNSAFE)
    fact = "§5 APEX batch norm row; [R1]"
    parsing = Parsing(triggers=("apex",), scope="statement")
    valid = [
        Valid("import torch\nmodel = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)\n"),
        Valid(
            "def convert_syncbn_model(m):\n    return m\n\nmodel = convert_syncbn_model(model)\n"
        ),
    ]
    invalid = [
        Invalid(
            "from apex.parallel import convert_syncbn_model\nmodel = convert_syncbn_model(model)\n",
            fixed="import torch\n\nmodel = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)\n",
            line=2,
            column=9,
        ),
        Invalid(
            "import torch.nn as nn\n"
            "import apex\n"
            "bn = apex.parallel.SyncBatchNorm(64, 1e-5, momentum=0.01)\n",
            fixed="import torch.nn as nn\nbn = nn.SyncBatchNorm(64, 1e-5, momentum=0.01)\n",
        ),
        Invalid(
            "from apex.parallel import SyncBatchNorm\nbn = SyncBatchNorm(64, channel_last=True)\n",
            fixed=None,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.call_name(node)
        if qualified is None:
            return
        data = _data()["syncbn"]
        if qualified in data["classes"]:
            positional, target = data["class_positional"], "SyncBatchNorm"
        elif qualified in data["converters"]:
            positional = data["converter_positional"]
            target = "SyncBatchNorm.convert_sync_batchnorm"
        else:
            return
        bound = bind_arguments(node, positional, ())
        reason = bound if isinstance(bound, str) else None
        if isinstance(bound, dict):
            for name, value in data["required"].items():
                if name in bound and not is_literal(bound[name].value, literal_from_text(value)):
                    reason = f"`{name}=` has no torch.nn.SyncBatchNorm argument"
        if reason is not None:
            self.report(node, message=f"{self.message}; not rewritten: {reason}")
            return
        assert isinstance(bound, dict)
        nn, imports = torch_ref(self.ctx, "torch.nn")
        dropped = [bound[name] for name in data["required"] if name in bound]
        kept = [argument for argument in node.args if not any(argument is d for d in dropped)]
        replacement = node.with_changes(
            func=cst.parse_expression(f"{nn}.{target}"), args=relayout(node.args, kept)
        )
        self.report(
            node,
            fix=Rewrite(
                replacement,
                imports=list(imports),
                remove_imports=self.ctx.unused_imports(node.func, "apex"),
            ),
        )
