"""ROC152 (sdpa-no-math-fallback): flags SDPA backend selections that allow only fused kernels
(flash and/or memory-efficient, possibly cuDNN) and disable the math fallback."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid

from .._tree import tree
from ._shared import _selections

_FUSED = {"FLASH_ATTENTION", "EFFICIENT_ATTENTION"}


class SdpaNoMathFallback(PythonRule):
    """
    ## What it does
    Flags SDPA backend selections that allow only fused kernels (flash and/or memory-efficient,
    possibly cuDNN) and disable the math fallback: `sdpa_kernel(SDPBackend.FLASH_ATTENTION)`,
    `sdp_kernel(enable_math=False, ...)`, `enable_math_sdp(False)`.

    ## Why it breaks on ROCm
    On ROCm the flash and memory-efficient backends are one AOTriton implementation, built for a
    list of GPUs: official for gfx90a, gfx942, gfx950 and gfx1201 (recent releases), experimental
    (off unless `TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1`) for other RDNA parts, absent for
    gfx908. Where it does not apply (those GPUs, head dims above its limit) PyTorch normally
    falls back to math; with math disabled `scaled_dot_product_attention` raises `No available
    kernel` instead. cuDNN attention, if listed, does not exist on ROCm.

    ## Example
    ```python
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        out = F.scaled_dot_product_attention(q, k, v)
    ```

    ## Severity
    Hygiene (shown with `--min-severity hygiene` or `--select ROC152`): on the AMD Instinct GPUs
    ROCm builds of PyTorch target (MI200 gfx90a, MI300 gfx942, MI350 gfx950) the AOTriton
    flash and memory-efficient kernels exist, so the restriction behaves as on NVIDIA, where a
    flash-only selection also raises for shapes the kernel rejects. It matters for MI100 and
    consumer (RDNA) GPUs only.

    ## Manual migration
    Keep `SDPBackend.MATH` in the list (the fused kernel is still preferred where it exists), or
    on experimental targets export `TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1`:
    ```python
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
        out = F.scaled_dot_product_attention(q, k, v)
    ```

    ## References
    - pytorch/pytorch `aten/src/ATen/native/transformers/cuda/sdp_utils.cpp`
    - AOTriton bumps: pytorch/pytorch PRs #140172, #148433, #156499
    """

    code = "ROC152"
    name = "sdpa-no-math-fallback"
    category = "sdpa"
    severity = Severity.HYGIENE
    impact = Impact(
        consequence="crash-path",
        aggregate="scope",
        targets=("gfx908", "gfx1100", "gfx1101", "gfx1150", "gfx1151", "gfx1200"),
        effort_hours=0.25,
    )
    message = (
        "SDPA restricted to fused kernels without the math fallback: works on MI200/MI300/MI350 "
        "(AOTriton); raises 'No available kernel' on AMD GPUs AOTriton does not cover"
    )
    fact = (
        "§2 SDPA flash/mem-efficient row; §6 TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL; §10.6; "
        "[P8][P10]"
    )
    parsing = Parsing(triggers=("sdp_kernel", "sdpa_kernel", "enable_math_sdp"))
    valid = [
        Valid(
            "from torch.nn.attention import SDPBackend, sdpa_kernel\n"
            "with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):\n    pass\n"
        ),
        Valid("import torch\nwith torch.backends.cuda.sdp_kernel(enable_flash=False):\n    pass\n"),
        Valid("import torch\ntorch.backends.cuda.enable_flash_sdp(False)\n"),
        Valid(
            "def sdpa_kernel(x):\n    pass\nclass SDPBackend:\n    FLASH_ATTENTION = 1\n"
            "sdpa_kernel(SDPBackend.FLASH_ATTENTION)\n"
        ),
    ]
    invalid = [
        Invalid(
            "from torch.nn.attention import SDPBackend, sdpa_kernel\n"
            "with sdpa_kernel(SDPBackend.FLASH_ATTENTION):\n    pass\n",
            line=2,
            column=6,
        ),
        Invalid(
            "import torch\n"
            "with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, "
            "enable_mem_efficient=False):\n    pass\n"
        ),
        Invalid(
            "import torch.backends.cuda as bc\ndef setup():\n    bc.enable_math_sdp(False)\n",
            line=3,
        ),
        Invalid(
            "import torch.nn.attention as A\n"
            "ctx = A.sdpa_kernel(\n"
            "    [A.SDPBackend.EFFICIENT_ATTENTION, A.SDPBackend.FLASH_ATTENTION]\n)\n"
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        for anchor, backends in _selections(self.ctx, tree(self.ctx)):
            if "MATH" in backends or not set(backends) & _FUSED:
                continue
            shown = ", ".join(backends)
            self.report(
                anchor,
                message=(
                    f"SDPA restricted to {shown} without the math fallback: works on "
                    "MI200/MI300/MI350 (AOTriton covers gfx90a, gfx942, gfx950), but raises 'No "
                    "available kernel' on AMD GPUs it does not cover (gfx908, experimental RDNA "
                    "targets)"
                ),
            )
