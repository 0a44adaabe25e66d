"""ROC151 (sdpa-cudnn-only): flags SDPA backend selections that leave only cuDNN attention enabled."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid

from .._tree import tree
from ._shared import _selections


class SdpaCudnnOnly(PythonRule):
    """
    ## What it does
    Flags SDPA backend selections that leave only cuDNN attention enabled:
    `sdpa_kernel(SDPBackend.CUDNN_ATTENTION)`, `sdp_kernel(enable_flash=False, enable_math=False,
    enable_mem_efficient=False)` (cuDNN stays on by default), or `enable_cudnn_sdp(True)` with the
    flash, memory-efficient and math backends switched off in the same function.

    ## Why it breaks on ROCm
    ROCm builds of PyTorch have no cuDNN attention backend. With every other backend disabled,
    `F.scaled_dot_product_attention` finds no kernel and raises `RuntimeError: No available
    kernel` on every AMD GPU.

    ## Example
    ```python
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        out = F.scaled_dot_product_attention(q, k, v)
    ```

    ## Manual migration
    Allow a backend ROCm has; it picks the fused AOTriton kernel where it can:
    ```python
    backends = [SDPBackend.CUDNN_ATTENTION] if torch.version.cuda else [
        SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]
    with sdpa_kernel(backends):
        out = F.scaled_dot_product_attention(q, k, v)
    ```

    ## References
    - ROCm/TheRock issue #1364 (cuDNN attention not built on ROCm)
    """

    code = "ROC151"
    name = "sdpa-cudnn-only"
    category = "sdpa"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", aggregate="scope", effort_hours=0.25)
    message = (
        "only cuDNN attention is allowed: ROCm has no cuDNN attention backend, so "
        "scaled_dot_product_attention raises 'No available kernel'"
    )
    fact = "§2 SDPBackend.CUDNN_ATTENTION row; §10.6; [G3]"
    parsing = Parsing(triggers=("CUDNN_ATTENTION", "sdp_kernel", "enable_cudnn_sdp"))
    valid = [
        Valid(
            "from torch.nn.attention import SDPBackend, sdpa_kernel\n"
            "with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH]):\n    pass\n"
        ),
        Valid(
            "import torch\nfrom torch.nn.attention import SDPBackend, sdpa_kernel\n"
            "if torch.version.cuda:\n"
            "    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):\n        pass\n"
        ),
        Valid("import torch\ntorch.backends.cuda.enable_cudnn_sdp(True)\n"),
    ]
    invalid = [
        Invalid(
            "import torch\n"
            "with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.CUDNN_ATTENTION):\n"
            "    pass\n",
            line=2,
            column=6,
        ),
        Invalid(
            "import torch\n"
            "with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=False,\n"
            "                                    enable_mem_efficient=False):\n    pass\n"
        ),
        Invalid(
            "from torch.backends import cuda\n"
            "cuda.enable_flash_sdp(False)\ncuda.enable_mem_efficient_sdp(False)\n"
            "cuda.enable_math_sdp(False)\ncuda.enable_cudnn_sdp(True)\n",
            line=5,
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        for anchor, backends in _selections(self.ctx, tree(self.ctx)):
            if backends == ["CUDNN_ATTENTION"]:
                self.report(anchor)
