"""ROC401: flash-attn functions with no SDPA equivalent."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid

from .._optional_backend import in_optional_backend
from .._rocm_guards import only_where_imported
from ._table import _data

#: A module's own FlashAttention class over a guarded import (the examples build it two ways).
_OWN_ATTENTION_CLASS = (
    "try:\n"
    "    from flash_attn.flash_attn_interface import flash_attn_varlen_qkvpacked_func\n"
    "    has_flash_attn = True\n"
    "except ImportError:\n"
    "    has_flash_attn = False\n"
    "class FlashAttention(nn.Module):\n"
    "    def forward(self, qkv, cu_seqlens, max_s):\n"
    "        return flash_attn_varlen_qkvpacked_func(qkv, cu_seqlens, max_s, 0.0)\n"
    "class Attention(nn.Module):\n"
    "    def __init__(self, config):\n"
)


class FlashAttnNoSdpaEquivalent(PythonRule):
    """
    ## What it does
    Flags flash-attn functions with no SDPA equivalent: the variable-length (`*_varlen_*`)
    functions, `flash_attn_with_kvcache`, and FlashAttention-3's `flash_attn_interface`.

    ## Why it breaks on ROCm
    They exist on ROCm only through a source build of ROCm/flash-attention (FlashAttention-3 not
    at all: it targets Hopper, sm90), and PyTorch has no drop-in replacement: packed
    variable-length batches (`cu_seqlens`) and the in-place KV-cache append have no SDPA argument.

    ## Example
    ```python
    from flash_attn import flash_attn_varlen_func

    out = flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_len, max_len, causal=True)
    ```

    ## Manual migration
    Build ROCm/flash-attention for the target GPUs (`GPU_ARCHS=gfx942`, CK backend; or the Triton
    backend with `FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE`) and keep the call, or restructure:
    pad the batch and pass a key-padding mask to SDPA, use a block-diagonal mask, or use
    nested/jagged tensors; for KV caches, append to the cache tensors yourself and call SDPA with
    a bottom-right causal mask (`torch.nn.attention.bias.causal_lower_right`).

    ## Known problems
    Not reported inside flash-attn's own backend of a multi-backend module: a function or class
    named for it (`_flash_attention`, `FlashAttnProcessor`) calling through a name that the module
    binds to `None` when flash-attn is missing (`if _CAN_USE_FLASH_ATTN: from flash_attn import
    f ... else: f = None`). That code runs only where flash-attn imported (ROCm/flash-attention
    included), and whether the backend may be chosen is decided where it is selected (a backend
    registry, a config switch), not at the call.

    ## References
    - ROCm/flash-attention README
    - https://docs.pytorch.org/docs/stable/nn.attention.html
    """

    code = "ROC401"
    parsing = Parsing(scope="statement", triggers=("flash_attn",))
    impact = Impact(
        dependency="flash_attn", consequence="performance", aggregate="scope", effort_hours=4.0
    )
    name = "flash-attn-no-sdpa-equivalent"
    category = "flash-attn"
    severity = Severity.WARNING
    message = "this flash-attn function has no SDPA equivalent and needs ROCm/flash-attention"
    fact = "§4a §4b; [F1][F2]"
    valid = [
        Valid(  # defined only where FlashAttention-3 imported: never on ROCm
            "try:\n    from flash_attn_interface import flash_attn_func as fa3\n\n"
            "    def attention(q, k, v):\n        return fa3(q, k, v, causal=True)\n"
            "except ImportError:\n    attention = None\n"
        ),
        Valid("from flash_attn import flash_attn_func\nout = flash_attn_func(q, k, v)\n"),
        Valid("def flash_attn_varlen_func(*a):\n    pass\nflash_attn_varlen_func(q, k, v)\n"),
        Valid("# flash_attn_with_kvcache(q, k_cache, v_cache)\nx = 'flash_attn_with_kvcache'\n"),
        Valid(
            "if _CAN_USE_FLASH_ATTN:\n"
            "    from flash_attn import flash_attn_varlen_func\n"
            "else:\n"
            "    flash_attn_varlen_func = None\n\n"
            "@registry.register(AttentionBackendName.FLASH_VARLEN)\n"
            "def _flash_varlen_attention(q, k, v, cu, m):\n"
            "    return flash_attn_varlen_func(q, k, v, cu, cu, m, m)\n"
        ),
        Valid(  # the arm of a backend dispatch chosen only where the optional import worked
            "flash_attn_varlen_func = None\n"
            "if HAS_FLASH_ATTENTION:\n"
            "    from flash_attn import flash_attn_varlen_func\n\n"
            "def run_attention(backend, q, k, v, cu, m):\n"
            "    if backend == FLASH_VARLEN:\n"
            "        return flash_attn_varlen_func(q, k, v, cu, cu, m, m)\n"
            "    return sdpa(q, k, v)\n"
        ),
        Valid(  # the package's own module, built only under a switch that is off without it
            _OWN_ATTENTION_CLASS
            + "        self.use_flash_attn = config.use_flash_attn and has_flash_attn\n"
            "        if self.use_flash_attn:\n"
            "            self.inner_attn = FlashAttention()\n"
        ),
    ]
    invalid = [
        Invalid(
            "from flash_attn import flash_attn_varlen_func\n"
            "out = flash_attn_varlen_func(q, k, v, cu, cu, m, m, causal=True)\n",
            line=2,
            column=7,
        ),
        Invalid(
            "import flash_attn as fa\n"
            "out = fa.flash_attn_with_kvcache(q, k_cache, v_cache, k, v, cache_seqlens=lens)\n"
        ),
        Invalid(
            "try:\n"
            "    from flash_attn_interface import flash_attn_func as fa3\n"
            "except ImportError:\n"
            "    fa3 = None\n"
            "out = fa3(q, k, v, causal=True)\n",
            line=5,
        ),
        Invalid(  # the package's own module, but built on every setup
            _OWN_ATTENTION_CLASS + "        self.inner_attn = FlashAttention()\n",
            line=8,
        ),
        Invalid(  # optional import, but the caller is no flash backend: it runs on every setup
            "try:\n"
            "    from flash_attn import flash_attn_varlen_func\n"
            "except ImportError:\n"
            "    flash_attn_varlen_func = None\n\n"
            "def packed_forward(q, k, v, cu, m):\n"
            "    return flash_attn_varlen_func(q, k, v, cu, cu, m, m)\n",
            line=7,
        ),
        Invalid(  # a user's switch asking for flash-attn, not a backend chosen by availability
            "try:\n"
            "    from flash_attn import flash_attn_varlen_func\n"
            "except ImportError:\n"
            "    flash_attn_varlen_func = None\n\n"
            "def packed_forward(q, k, v, cu, m, use_flash_attn):\n"
            "    if use_flash_attn:\n"
            "        return flash_attn_varlen_func(q, k, v, cu, cu, m, m)\n"
            "    return sdpa(q, k, v)\n",
            line=8,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.call_name(node)
        if qualified is None:
            return
        data = _data()["flash_attn"]
        package = qualified.split(".", 1)[0]
        if package in data["packages"] or package in data["fa3_packages"]:
            if in_optional_backend(self.ctx, node, "flash"):
                return  # a flash-attn backend: chosen elsewhere, only where it imported
        short = qualified.rsplit(".", 1)[-1]
        if package in data["fa3_packages"]:
            if only_where_imported(self.ctx.ancestors(node), node, data["fa3_packages"]):
                return  # defined under an optional FA3 import: never on ROCm, which has no FA3
            self.report(
                node,
                message=(
                    f"`{short}` is FlashAttention-3, built for Hopper (sm90) only: no ROCm build; "
                    "use flash-attn 2 (ROCm/flash-attention) or torch SDPA"
                ),
            )
            return
        if package in data["packages"] and short in data["manual"]:
            self.report(node, message=f"`{short}`: {data['manual'][short]}")
