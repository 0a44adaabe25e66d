"""ROC500 (apex-fused-norm): flags `apex.normalization.FusedLayerNorm` and `FusedRMSNorm` and
rewrites them to `torch.nn.LayerNorm` / `torch.nn.RMSNorm`."""

from __future__ import annotations

import libcst as cst

from migrator.api import Applicability, Fixing, Impact, Invalid, Parsing, Severity, Valid

from .._arguments import bind_arguments, new_keyword, relayout
from .._imports import (
    torch_ref,
)
from .._literals import is_literal
from ._shared import _ApexRewrite, _data


class ApexFusedNorm(_ApexRewrite):
    """
    ## What it does
    Flags `apex.normalization.FusedLayerNorm` and `FusedRMSNorm` and rewrites them to
    `torch.nn.LayerNorm` / `torch.nn.RMSNorm`.

    ## Why it breaks on ROCm
    apex has no ROCm wheel: it comes from a source build of ROCm/apex (or AMD's `rocm/pytorch`
    containers, which include it). PyPI's `apex` is an unrelated package. PyTorch's own
    normalization modules do the same computation on ROCm with no extra build.

    ## Example
    ```python
    from apex.normalization import FusedLayerNorm, FusedRMSNorm

    ln = FusedLayerNorm(hidden, eps=1e-5)
    rms = FusedRMSNorm(hidden)
    ```

    ## Fix
    ```python
    import torch

    ln = torch.nn.LayerNorm(hidden, eps=1e-5)
    rms = torch.nn.RMSNorm(hidden, eps=1e-5)
    ```
    The first three parameters (`normalized_shape`, `eps`, `elementwise_affine`) have the same
    order and meaning. `FusedRMSNorm` always gets an explicit `eps`: apex defaults to 1e-5 while
    `torch.nn.RMSNorm` defaults to `torch.finfo(dtype).eps`. apex's `memory_efficient=` (what is
    saved for the backward pass) is dropped. Parameter names (`weight`, `bias`) match, so
    checkpoints load unchanged. Needs torch ≥ 2.4 for `RMSNorm`.

    ## Fix safety
    Unsafe, though the formula is the same (LayerNorm: (x − mean)/sqrt(var + eps)·w + b;
    RMSNorm: x·rsqrt(mean(x²) + eps)·w; checked in `tests/test_apex_semantics.py`), the defaults
    match once eps is explicit and the state-dict keys are the same: under `torch.autocast`
    apex casts input and weight to the autocast dtype and returns that dtype, while PyTorch
    returns float32 from `LayerNorm` (its CUDA autocast runs `layer_norm` in float32) and from
    either norm given float32 input (measured on an H200, torch 2.11, bf16 autocast). Training
    code under autocast then carries float32 activations where it had fp16/bf16 ones (more
    memory, slightly different rounding). Outside autocast the output dtype is the input's in
    both libraries. No fix where the apex class is also used outside calls (`isinstance(m,
    FusedLayerNorm)` in a weight-decay filter): that check would stop matching the new module,
    on NVIDIA too.

    ## References
    - NVIDIA/apex `apex/normalization/fused_layer_norm.py`; ROCm/apex README
    - https://docs.pytorch.org/docs/stable/generated/torch.nn.RMSNorm.html
    """

    code = "ROC500"
    fix = Fixing(
        requires={"torch": "2.4"},
        title="Use `torch.nn.LayerNorm` / `torch.nn.RMSNorm` (explicit eps)",
        applicability=Applicability.UNSAFE,
    )
    name = "apex-fused-norm"
    category = "apex"
    severity = Severity.WARNING
    impact = Impact(consequence="crash-path", effort_hours=0.2)
    message = "apex needs a ROCm/apex source build; torch.nn has the same normalization"
    fact = "§5 apex.normalization rows; [AP1][AP2][N1]"
    parsing = Parsing(triggers=("apex",), scope="statement")
    valid = [
        Valid(  # where apex is missing the handler's own class runs: a portable fallback
            "import torch\n"
            "try:\n    from apex.normalization import FusedRMSNorm as RMSNorm\n"
            "except ImportError:\n"
            "    class RMSNorm(torch.nn.Module):\n"
            "        def __init__(self, dim, eps=1e-6):\n"
            "            super().__init__()\n"
            "norm = RMSNorm(64)\n"
        ),
        Valid("import torch\nnorm = torch.nn.RMSNorm(512, eps=1e-5)\n"),
        Valid("class FusedRMSNorm:\n    pass\n\nnorm = FusedRMSNorm(512)\n"),
        Valid("# from apex.normalization import FusedLayerNorm\nx = 'FusedLayerNorm(512)'\n"),
    ]
    invalid = [
        Invalid(
            "import torch\n"
            "from apex.normalization import FusedLayerNorm\n\n"
            "ln = FusedLayerNorm(hidden, eps=1e-6)\n",
            fixed="import torch\n\nln = torch.nn.LayerNorm(hidden, eps=1e-6)\n",
            line=4,
            column=6,
        ),
        Invalid(
            "import torch.nn as nn\n"
            "try:\n"
            "    from apex.normalization import FusedRMSNorm\n"
            "    HAS_APEX = True\n"
            "except ImportError:\n"
            "    HAS_APEX = False\n\n"
            "def make(dim, eps=1e-5):\n"
            "    return FusedRMSNorm(dim, eps=eps)\n\n"
            "norm = FusedRMSNorm(\n"
            "    4096,\n"
            ")\n",
            fixed=(  # the probe's import stays: removing it would make HAS_APEX always true
                "import torch.nn as nn\n"
                "try:\n"
                "    from apex.normalization import FusedRMSNorm\n"
                "    HAS_APEX = True\n"
                "except ImportError:\n"
                "    HAS_APEX = False\n\n"
                "def make(dim, eps=1e-5):\n"
                "    return nn.RMSNorm(dim, eps=eps)\n\n"
                "norm = nn.RMSNorm(\n"
                "    4096, eps=1e-5,\n"
                ")\n"
            ),
            count=2,
        ),
        Invalid(
            "import apex\n"
            "norm = apex.normalization.FusedRMSNorm(512, 1e-6, memory_efficient=True)\n",
            fixed="import torch\n\nnorm = torch.nn.RMSNorm(512, 1e-6)\n",
        ),
        Invalid(
            "from apex.normalization import FusedLayerNorm\n"
            "ln = FusedLayerNorm(512)\n"
            "decay = [m for m in mods if not isinstance(m, FusedLayerNorm)]\n",
            fixed=None,  # the isinstance filter would stop matching the new module
        ),
        Invalid(
            "from apex.normalization import MixedFusedLayerNorm\nln = MixedFusedLayerNorm(512)\n",
            fixed=None,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.call_name(node)
        if qualified is None:
            return
        data = _data()
        short = qualified.rsplit(".", 1)[-1]
        if qualified in data["mixed_norms"]:
            self._decline(
                node,
                short,
                "it keeps fp32 weights for fp16/bf16 input, which torch.nn norms do not",
            )
            return
        target = data["norms"].get(qualified)
        if target is None:
            return
        signature = data["norm_signature"]
        bound = bind_arguments(node, signature["positional"], signature["droppable"])
        if isinstance(bound, str):
            self._decline(node, short, bound)
            return
        for name in signature["droppable"]:
            if name in bound:
                value = bound[name].value
                if not (is_literal(value, True) or is_literal(value, False)):
                    self._decline(node, short, f"`{name}=` is not a literal")
                    return
        nn, imports = torch_ref(self.ctx, "torch.nn")
        kept = [
            argument
            for argument in node.args
            if argument.keyword is None or argument.keyword.value not in signature["droppable"]
        ]
        if target["explicit_eps"] and "eps" not in bound:
            kept.append(new_keyword("eps", signature["default_eps"]))
        torch_class = target["torch"].split(".", 1)[1]
        replacement = node.with_changes(
            func=cst.parse_expression(f"{nn}.{torch_class}"), args=relayout(node.args, kept)
        )
        self._report_fix(
            node,
            qualified,
            replacement,
            list(imports),
            f"`{short}` needs a ROCm/apex build; `torch.nn.{torch_class}` computes the same",
        )
