"""ROC501 (apex-fused-adam): flags `apex.optimizers.FusedAdam` and rewrites it to
`torch.optim.AdamW(..., fused=True)` (or `torch.optim.Adam(..., fused=True)` for
`adam_w_mode=False`)."""

from __future__ import annotations

from typing import Any

import libcst as cst

from migrator.api import Applicability, Fixing, Impact, Invalid, Parsing, Severity, Valid

from .._arguments import as_keyword, as_positional, bind_arguments, new_keyword, relayout
from .._imports import (
    torch_ref,
)
from .._literals import is_literal, literal_from_text
from ._shared import _ApexRewrite, _data


class ApexFusedAdam(_ApexRewrite):
    """
    ## What it does
    Flags `apex.optimizers.FusedAdam` and rewrites it to `torch.optim.AdamW(..., fused=True)`
    (or `torch.optim.Adam(..., fused=True)` for `adam_w_mode=False`).

    ## Why it breaks on ROCm
    apex has no ROCm wheel (source build of ROCm/apex or AMD's `rocm/pytorch` images). PyTorch's
    own fused Adam/AdamW kernels are compiled for ROCm (fused eligibility is by device type, and
    `"cuda"` covers ROCm).

    ## Example
    ```python
    from apex.optimizers import FusedAdam

    opt = FusedAdam(model.parameters(), lr=3e-4, betas=(0.9, 0.95))
    ```

    ## Fix
    ```python
    import torch

    opt = torch.optim.AdamW(
        model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.0, fused=True
    )
    ```
    apex's `adam_w_mode=True` (the default) is decoupled weight decay, i.e. AdamW;
    `adam_w_mode=False` is L2 regularisation, i.e. Adam. `weight_decay` is written out because
    apex defaults to 0 while `torch.optim.AdamW` defaults to 0.01; `lr` (1e-3), `betas`
    ((0.9, 0.999)) and `eps` (1e-8, added outside the square root in both) have the same
    defaults. Positional arguments after `lr` become keywords (apex's third parameter is
    `bias_correction`, torch's is `betas`).

    Left unfixed: `bias_correction=False`, `set_grad_none=False`, `master_weights=True`,
    `amsgrad=True`, a non-literal `adam_w_mode`, `*args`.

    ## Fix safety
    Unsafe: the update rule is the same, but optimizer state dicts differ (apex keeps one `step`
    per parameter group, torch a `step` tensor per parameter), so resuming from an apex
    optimizer checkpoint fails; the kernels round differently; `fused=True` requires all
    parameters on the GPU and floating point (apex required CUDA tensors too).

    ## References
    - NVIDIA/apex `apex/optimizers/fused_adam.py`
    - https://docs.pytorch.org/docs/stable/generated/torch.optim.AdamW.html
    """

    code = "ROC501"
    name = "apex-fused-adam"
    category = "apex"
    severity = Severity.WARNING
    impact = Impact(consequence="crash-path", effort_hours=0.3)
    message = "apex needs a ROCm/apex source build; torch.optim has fused Adam/AdamW on ROCm"
    fix = Fixing(
        title="Use `torch.optim.AdamW(..., fused=True)` (or Adam for adam_w_mode=False)",
        applicability=Applicability.UNSAFE,
    )
    fact = "§5 apex.optimizers.FusedAdam row; [AP1][O1][O2]"
    parsing = Parsing(triggers=("apex",), scope="statement")
    valid = [
        Valid("import torch\nopt = torch.optim.AdamW(params, lr=1e-4, fused=True)\n"),
        Valid("from deepspeed.ops.adam import FusedAdam\nopt = FusedAdam(params)\n"),
        Valid('"""Use apex.optimizers.FusedAdam(params) on CUDA."""\n'),
    ]
    invalid = [
        Invalid(
            "import torch\n"
            "from apex.optimizers import FusedAdam\n\n"
            "opt = FusedAdam(model.parameters(), lr=3e-4, betas=(0.9, 0.95))\n",
            fixed=(
                "import torch\n\n"
                "opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), "
                "weight_decay=0.0, fused=True)\n"
            ),
            line=4,
            column=7,
        ),
        Invalid(
            "import apex\n"
            "opt = apex.optimizers.FusedAdam(params, 1e-3, True, (0.9, 0.99), 1e-6, False, 0.1)\n",
            fixed=(
                "import torch\n\n"
                "opt = torch.optim.Adam(params, 1e-3, betas=(0.9, 0.99), eps=1e-6, "
                "weight_decay=0.1, fused=True)\n"
            ),
        ),
        Invalid(
            "from apex.optimizers import FusedAdam\n"
            "opt = FusedAdam(params, lr=1e-3, bias_correction=False)\n",
            fixed=None,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.call_name(node)
        data = _data()["fused_adam"]
        if qualified is None or qualified not in data["names"]:
            return
        result = self._rewrite(node, data)
        if isinstance(result, str):
            self._decline(node, "FusedAdam", result)
            return
        replacement, imports, torch_class = result
        self._report_fix(
            node,
            qualified,
            replacement,
            imports,
            f"`FusedAdam` needs a ROCm/apex build; `torch.optim.{torch_class}(fused=True)` "
            "implements the same update",
        )

    def _rewrite(
        self, node: cst.Call, data: dict[str, Any]
    ) -> tuple[cst.Call, list[tuple[str, str | None]], str] | str:
        bound = bind_arguments(node, data["positional"], data["keywords"])
        if isinstance(bound, str):
            return bound
        if "params" not in bound:
            return "it does not pass the parameters"
        for name, rule in data["required"].items():
            required = literal_from_text(rule["value"])
            if name in bound and not is_literal(bound[name].value, required):
                return str(rule["reason"])
        mode = bound.get("adam_w_mode")
        if mode is None or is_literal(mode.value, True):
            torch_class = "AdamW"
        elif is_literal(mode.value, False):
            torch_class = "Adam"
        else:
            return "`adam_w_mode` is not a literal, so AdamW vs Adam is unknown"
        arguments = [as_positional(bound["params"])]
        if "lr" in bound:
            lr = bound["lr"]
            arguments.append(lr if lr.keyword is None else as_keyword(lr, "lr"))
        for name in data["kept"]:
            if name != "lr" and name in bound:
                arguments.append(as_keyword(bound[name], name))
        if torch_class == "AdamW" and "weight_decay" not in bound:
            arguments.append(new_keyword("weight_decay", "0.0"))
        arguments.append(new_keyword("fused", "True"))
        torch_name, imports = torch_ref(self.ctx, "torch.optim")
        replacement = node.with_changes(
            func=cst.parse_expression(f"{torch_name}.{torch_class}"),
            args=relayout(node.args, arguments),
        )
        return replacement, list(imports), torch_class
