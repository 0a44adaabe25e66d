"""ROC400: flash-attn 2 function calls, rewritten to SDPA when every argument has an equivalent."""

from __future__ import annotations

import functools

import libcst as cst

from migrator.api import (
    Applicability,
    Fixing,
    Impact,
    Invalid,
    Parsing,
    Problem,
    PythonRule,
    Rewrite,
    Severity,
    Valid,
)

from .._arguments import as_keyword, bind_arguments, new_keyword
from .._dispatch import dispatch, is_dispatched, optional_edits, plan
from .._imports import torch_ref
from .._literals import is_literal, is_simple, literal_from_text
from .._optional_backend import in_optional_backend
from .._sdpa_call import causal_mask, sdpa_call, transposed, unpacked
from ._table import _data
from ._unguarded import UNGUARDED_FLASH_ATTN, unguarded_flash_attn


class FlashAttnFunc(PythonRule):
    """
    ## What it does
    Flags calls of `flash_attn_func`, `flash_attn_qkvpacked_func` and
    `flash_attn_kvpacked_func` from flash-attn 2, and makes them dispatch: flash-attn where it
    imports, `torch.nn.functional.scaled_dot_product_attention` (SDPA) where it does not, when
    every argument has an SDPA equivalent.

    ## Why it breaks on ROCm
    PyPI's flash-attn wheels are CUDA builds. On ROCm the same API comes only from a source build
    of ROCm/flash-attention (CK backend: MI200/MI300/MI350, fp16/bf16; Triton backend for other
    GPUs), so a stock ROCm environment takes the import's fallback path or crashes. PyTorch's own
    SDPA runs the AOTriton flash/efficient kernels on ROCm with no extra package.

    ## Example
    ```python
    from flash_attn import flash_attn_func

    out = flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=scale, causal=True)
    ```

    ## Fix
    ```python
    import torch.nn.functional as F
    from torch.nn.attention.bias import causal_lower_right

    try:
        from flash_attn import flash_attn_func
    except ImportError:
        flash_attn_func = None

    out = (
        flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=scale, causal=True)
        if flash_attn_func is not None
        else F.scaled_dot_product_attention(
            q.transpose(1, 2),
            k.transpose(1, 2),
            v.transpose(1, 2),
            attn_mask=causal_lower_right(q.size(1), k.size(1)),
            dropout_p=0.0,
            scale=scale,
            enable_gqa=True,
        ).transpose(1, 2).contiguous()
    )
    ```
    The call is kept as written where flash-attn imports (every NVIDIA setup that ran it before)
    and the import becomes optional, so the module imports without flash-attn. The dispatch is
    offered only when the import binds the name once and every use of it in the file is a call
    with an SDPA form (all of them are rewritten together), or when the import is already in a
    `try:` whose `except ImportError:` sets the name to `None`. In the portable branch,
    flash-attn takes (B, S, H, D) tensors and SDPA (B, H, S, D): the inputs and the output are
    transposed. `softmax_scale` becomes `scale` (both default to 1/sqrt(D)), `dropout_p` is
    kept. `causal=True` becomes a `causal_lower_right(Sq, Sk)` mask: flash-attn ≥ 2.1 aligns the
    causal mask to the bottom-right corner when the query is shorter than the key (decoding,
    chunked prefill), while SDPA's `is_causal=True` is top-left; with equal lengths the mask
    dispatches to `is_causal=True` itself. `enable_gqa=True` keeps flash-attn's support for
    fewer key/value heads (MQA/GQA); with equal head counts it changes nothing and every SDPA
    backend still accepts the call. The packed variants unpack with
    `*qkv.transpose(1, 3).unbind(2)` (each tensor evaluated once); `qkvpacked` has equal lengths
    by construction, so it uses `is_causal`.

    Left unfixed, with the reason in the message: `window_size` other than (-1, -1), `softcap`,
    `alibi_slopes`, `deterministic=True`, `return_attn_probs=True`, positional arguments past
    `causal` (their order changed between flash-attn versions), `*args`, causal calls whose
    `q`/`k` are expressions the rewrite would have to evaluate twice (bind them to names first),
    files where the imported name has another use (a varlen call, an attribute, a reassignment),
    and imports guarded by a `try:` whose handler does not set the name to `None`. A call left
    unfixed (for one of these reasons, or because the project supports a torch older than the
    rewrite needs) in a file that imports flash-attn unguarded is one problem with that import:
    it is reported at the import (ROC402) as a related site, its reason in the message.

    ## Fix safety
    Unsafe: where flash-attn is installed nothing changes (the same call runs), but where it is
    not, the SDPA branch runs with another kernel and its rounding (the math is the same:
    checked against a reference of flash-attn's documented semantics in
    `tests/test_attention_semantics.py` on CPU, and on an H200 with torch 2.11 for every SDPA
    backend, fp16/bf16/fp32, forward and backward); dropout draws a different random mask (both
    apply `dropout_p` unconditionally, so callers' `p if self.training else 0.0` logic is kept as
    written); the SDPA branch needs torch ≥ 2.5 (`enable_gqa`; `causal_lower_right` is a
    prototype API), so the fix is withheld where the project supports older torch; and SDPA
    also accepts fp32 where flash-attn raised.

    ## Known problems
    Not reported inside flash-attn's own backend of a multi-backend module: a function or class
    named for it (`_flash_attention`) calling through a name the module binds to `None` when
    flash-attn is missing; it runs only where flash-attn imported, and choosing it is decided
    where the backend is selected.
    With `causal=True` and more queries than keys, flash-attn returns zeros for the query rows
    that see no key. SDPA's flash and math kernels do too, but its memory-efficient kernel (what
    CUDA picks for fp32) returned other values for those rows on an H200 (torch 2.11), and
    `causal_lower_right` warns about NaNs; decoding and chunked prefill (Sq ≤ Sk) are unaffected.
    On ROCm the memory-efficient kernel does not take GQA, so calls with fewer key/value heads run
    on the flash kernel (fp16/bf16) or the math fallback.
    On NVIDIA Hopper GPUs PyTorch prefers the cuDNN attention backend, which builds an execution
    plan for every new shape: a decode loop whose sequence length grows every step (no KV cache,
    or a growing cache) became ten times slower after this rewrite on an H200 (torch 2.11; 153 →
    19 tokens/s), and 1.4–1.9× faster than the original once cuDNN attention was excluded
    (`with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
    SDPBackend.MATH]):` or `torch.backends.cuda.enable_cudnn_sdp(False)`). ROCm has no cuDNN
    attention backend, so this is an NVIDIA-side regression only (docs/verification.md).

    ## References
    - ROCm/flash-attention README (backends, GPUs)
    - https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html
    - https://docs.pytorch.org/docs/stable/nn.attention.bias.html
    """

    code = "ROC400"
    # reads the call, the uses of the names flash-attn imports bind (``plan``) and the imports
    parsing = Parsing(scope="statement", triggers=("flash_attn",))
    impact = Impact(
        dependency="flash_attn", consequence="performance", aggregate="scope", effort_hours=0.5
    )
    name = "flash-attn-func-call"
    category = "flash-attn"
    severity = Severity.WARNING
    message = (
        "flash-attn needs a ROCm/flash-attention source build on ROCm; "
        "torch SDPA computes the same attention"
    )
    fix = Fixing(
        title="Call `torch.nn.functional.scaled_dot_product_attention` (transposed to B,H,S,D)",
        applicability=Applicability.UNSAFE,
    )
    fact = "§4a §4b; [F1][S1][V]"
    valid = [
        Valid(
            "if _CAN_USE_FLASH_ATTN:\n"
            "    from flash_attn import flash_attn_func\n"
            "else:\n"
            "    flash_attn_func = None\n\n"
            "def _flash_attention(query, key, value, dropout_p=0.0):\n"
            "    return flash_attn_func(q=query, k=key, v=value, dropout_p=dropout_p)\n"
        ),
        Valid(
            "import torch.nn.functional as F\n"
            "out = F.scaled_dot_product_attention(q, k, v, is_causal=True)\n"
        ),
        Valid(
            "def flash_attn_func(q, k, v, causal=False):\n    return q\n\n"
            "out = flash_attn_func(q, k, v)\n"
        ),
        Valid('"""Calls flash_attn_func(q, k, v) when available."""\n# flash_attn_func(q, k, v)\n'),
        Valid(
            "from flash_attn import flash_attn_varlen_func\n"
            "out = flash_attn_varlen_func(q, k, v, cu, cu, m, m)\n"
        ),
        Valid(  # a switch derived from an `is_*_available()` helper's answer, kept on `self`
            "import torch.nn.functional as F\n"
            "from transformers.utils import is_flash_attn_2_available\n"
            "if is_flash_attn_2_available():\n"
            "    from flash_attn import flash_attn_func\n"
            "HAS_FLASH = is_flash_attn_2_available()\n\n"
            "class Block:\n"
            "    def __init__(self, config):\n"
            "        self.use_flash = HAS_FLASH and config.use_flash\n\n"
            "    def attend(self, q, k, v):\n"
            "        if self.use_flash:\n"
            "            return flash_attn_func(q, k, v, causal=True)\n"
            "        return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n"
        ),
        Valid(  # already dispatched: NVIDIA keeps flash-attn, ROCm takes SDPA
            "import torch.nn.functional as F\n"
            "try:\n"
            "    from flash_attn import flash_attn_func\n"
            "except ImportError:\n"
            "    flash_attn_func = None\n"
            "out = (\n"
            "    flash_attn_func(q, k, v)\n"
            "    if flash_attn_func is not None\n"
            "    else F.scaled_dot_product_attention(q, k, v)\n"
            ")\n"
        ),
    ]
    invalid = [
        Invalid(
            "import torch.nn.functional as F\n"
            "from flash_attn import flash_attn_func\n\n"
            "out = flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=scale, causal=True)\n",
            fixed=(
                "import torch.nn.functional as F\n"
                "from torch.nn.attention.bias import causal_lower_right\n\n"
                "try:\n"
                "    from flash_attn import flash_attn_func\n"
                "except ImportError:\n"
                "    flash_attn_func = None\n\n"
                "out = (\n"
                "    flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=scale, causal=True)\n"
                "    if flash_attn_func is not None\n"
                "    else F.scaled_dot_product_attention(\n"
                "        q.transpose(1, 2),\n"
                "        k.transpose(1, 2),\n"
                "        v.transpose(1, 2),\n"
                "        attn_mask=causal_lower_right(q.size(1), k.size(1)),\n"
                "        dropout_p=0.0,\n"
                "        scale=scale,\n"
                "        enable_gqa=True,\n"
                "    ).transpose(1, 2).contiguous()\n"
                ")\n"
            ),
            line=4,
            column=7,
        ),
        Invalid(
            "import torch\n"
            "import flash_attn as fa\n\n"
            "def attend(q, k, v, p, training):\n"
            "    return fa.flash_attn_func(q, k, v, p if training else 0.0)\n",
            fixed=(
                "import torch\n"
                "try:\n"
                "    import flash_attn as fa\n"
                "except ImportError:\n"
                "    fa = None\n\n"
                "def attend(q, k, v, p, training):\n"
                "    return (\n"
                "        fa.flash_attn_func(q, k, v, p if training else 0.0)\n"
                "        if fa is not None\n"
                "        else torch.nn.functional.scaled_dot_product_attention(\n"
                "            q.transpose(1, 2),\n"
                "            k.transpose(1, 2),\n"
                "            v.transpose(1, 2),\n"
                "            dropout_p=p if training else 0.0,\n"
                "            enable_gqa=True,\n"
                "        ).transpose(1, 2).contiguous()\n"
                "    )\n"
            ),
        ),
        Invalid(  # the handler does not bind the name: a dispatch would raise NameError
            "import torch\n"
            "try:\n"
            "    from flash_attn.flash_attn_interface import flash_attn_qkvpacked_func\n"
            "    HAS_FLASH = True\n"
            "except ImportError:\n"
            "    HAS_FLASH = False\n\n"
            "out = flash_attn_qkvpacked_func(qkv, causal=self.causal)\n",
            fixed=None,
        ),
        Invalid(  # already optional: only the call dispatches; comments stay on both sides
            "import torch\n"
            "try:\n"
            "    from flash_attn.flash_attn_interface import flash_attn_qkvpacked_func\n"
            "except ImportError:\n"
            "    flash_attn_qkvpacked_func = None\n\n"
            "out = flash_attn_qkvpacked_func(\n"
            "    qkv,  # (B, S, 3, H, D)\n"
            "    causal=self.causal,\n"
            ")\n",
            fixed=(
                "import torch\n"
                "try:\n"
                "    from flash_attn.flash_attn_interface import flash_attn_qkvpacked_func\n"
                "except ImportError:\n"
                "    flash_attn_qkvpacked_func = None\n\n"
                "out = (\n"
                "    flash_attn_qkvpacked_func(\n"
                "        qkv,  # (B, S, 3, H, D)\n"
                "        causal=self.causal,\n"
                "    )\n"
                "    if flash_attn_qkvpacked_func is not None\n"
                "    else torch.nn.functional.scaled_dot_product_attention(\n"
                "        *qkv.transpose(1, 3).unbind(2),  # (B, S, 3, H, D)\n"
                "        is_causal=self.causal,\n"
                "    ).transpose(1, 2).contiguous()\n"
                ")\n"
            ),
        ),
        Invalid(  # another use of the import has no SDPA form: the module still needs flash_attn
            "from flash_attn import flash_attn_func, flash_attn_varlen_func\n"
            "a = flash_attn_func(q, k, v)\n"
            "b = flash_attn_varlen_func(q, k, v, cu, cu, m, m)\n",
            fixed=None,
            line=2,
        ),
        Invalid(
            "import torch\n"
            "from flash_attn import flash_attn_kvpacked_func\n\n"
            "def decode(q, kv, causal):\n"
            "    return flash_attn_kvpacked_func(q, kv, 0.0, None, causal)\n",
            fixed=(
                "import torch\n"
                "from torch.nn.attention.bias import causal_lower_right\n\n"
                "try:\n"
                "    from flash_attn import flash_attn_kvpacked_func\n"
                "except ImportError:\n"
                "    flash_attn_kvpacked_func = None\n\n"
                "def decode(q, kv, causal):\n"
                "    return (\n"
                "        flash_attn_kvpacked_func(q, kv, 0.0, None, causal)\n"
                "        if flash_attn_kvpacked_func is not None\n"
                "        else torch.nn.functional.scaled_dot_product_attention(\n"
                "            q.transpose(1, 2),\n"
                "            *kv.transpose(1, 3).unbind(2),\n"
                "            attn_mask=causal_lower_right(q.size(1), kv.size(1)) if causal else None,\n"
                "            dropout_p=0.0,\n"
                "            scale=None,\n"
                "            enable_gqa=True,\n"
                "        ).transpose(1, 2).contiguous()\n"
                "    )\n"
            ),
        ),
        Invalid(
            "from flash_attn import flash_attn_func\n"
            "out = flash_attn_func(q, k, v, causal=True, window_size=(256, 0))\n",
            fixed=None,
        ),
        Invalid(
            "from flash_attn import flash_attn_func\n"
            "out = flash_attn_func(proj(x), k, v, causal=True)\n",
            fixed=None,
        ),
        Invalid(
            "from flash_attn import flash_attn_func\n"
            "out, lse, _ = flash_attn_func(q, k, v, return_attn_probs=True)\n",
            fixed=None,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.call_name(node)
        if qualified is None:
            return
        kind = _data()["flash_attn"]["rewritable"].get(qualified)
        if kind is None or is_dispatched(self.ctx, node):
            return
        if in_optional_backend(self.ctx, node, "flash"):
            return  # flash-attn's own backend here: chosen elsewhere, only where it imported
        short = qualified.rsplit(".", 1)[-1]
        result = self._rewrite(node, kind)
        route = plan(self.ctx, node, "flash_attn", self._rewritable)
        if isinstance(result, str) or isinstance(route, str):
            reason = result if isinstance(result, str) else route
            self.report(
                node,
                message=(
                    f"`{short}` needs a ROCm/flash-attention build; not rewritten to dispatch "
                    f"to SDPA: {reason}"
                ),
                problem=Problem(key=self._unguarded_problem),
            )
            return
        portable, imports = result
        emitted = self.ctx.module.code_for_node(portable)
        # SDPA's `scale` (2.1), torch.nn.attention.bias (2.3), `enable_gqa` (2.5)
        bias = any(module == "torch.nn.attention.bias" for module, _ in imports)
        minimum = "2.5" if "enable_gqa" in emitted else "2.3" if bias else "2.1"
        unit = self.ctx.module.default_indent
        self.report(
            node,
            message=(
                f"`{short}` needs a ROCm/flash-attention build on ROCm; "
                "torch SDPA computes the same attention"
            ),
            fix=Rewrite(
                dispatch(node, route.name, portable, unit),
                imports=imports,
                requires={"torch": minimum},
                extra_edits=optional_edits(route),
                together=route.together,
                together_size=route.size,
            ),
            problem=Problem(without_fix=self._unguarded_problem),
        )

    @functools.cached_property
    def _unguarded_problem(self) -> str:
        """The file's unguarded-import problem key when it imports flash-attn without a guard
        (read once per file: one rule instance reads one file)."""
        return UNGUARDED_FLASH_ATTN if unguarded_flash_attn(self.ctx.module) else ""

    def _rewritable(self, call: cst.Call, scope: cst.FunctionDef | None) -> str | None:
        """None when ``call`` (of a flash-attn function) has an exact SDPA rewrite, else why not."""
        qualified = self.ctx.call_name(call) or ""
        kind = _data()["flash_attn"]["rewritable"].get(qualified)
        if kind is None:
            return f"`{qualified.rsplit('.', 1)[-1]}` has no SDPA equivalent"
        result = self._rewrite(call, kind)
        return result if isinstance(result, str) else None

    def _rewrite(
        self, node: cst.Call, kind: str
    ) -> tuple[cst.BaseExpression, list[tuple[str, str | None]]] | str:
        data = _data()["flash_attn"]
        optional: dict[str, dict[str, str]] = data["optional"]
        bound = bind_arguments(node, data["positional"][kind], optional)
        if isinstance(bound, str):
            return bound
        for name, spec in optional.items():
            default = literal_from_text(spec["default"])
            if name in bound and not is_literal(bound[name].value, default):
                return spec["reason"]
        tensors = {"plain": ("q", "k", "v"), "qkvpacked": ("qkv",), "kvpacked": ("q", "kv")}[kind]
        missing = [name for name in tensors if name not in bound]
        if missing:
            return f"it does not pass {', '.join(missing)}"

        sdpa, imports = torch_ref(self.ctx, "torch.nn.functional")
        imports = list(imports)
        keywords: list[cst.Arg] = []
        causal = bound.get("causal")
        if causal is not None and not is_literal(causal.value, False):
            if kind == "qkvpacked":
                keywords.append(as_keyword(causal, "is_causal"))
            else:
                query, key = bound["q"].value, bound["k" if kind == "plain" else "kv"].value
                if not (is_simple(query) and is_simple(key)):
                    return (
                        "the causal mask needs the query and key lengths, and `q`/`k` are "
                        "expressions the rewrite would evaluate twice; bind them to names first"
                    )
                mask = causal_mask(causal.value, query, key)
                keywords.append(as_keyword(causal, "attn_mask", mask))
                imports.append(("torch.nn.attention.bias", "causal_lower_right"))
        if "dropout_p" in bound:
            keywords.append(as_keyword(bound["dropout_p"], "dropout_p"))
        if "softmax_scale" in bound:
            keywords.append(as_keyword(bound["softmax_scale"], "scale"))
        if kind == "plain":
            arguments = [transposed(bound["q"]), transposed(bound["k"]), transposed(bound["v"])]
        elif kind == "kvpacked":
            arguments = [transposed(bound["q"]), unpacked(bound["kv"])]
        else:
            arguments = [unpacked(bound["qkv"])]
        if kind != "qkvpacked":
            keywords.append(new_keyword("enable_gqa", "True"))
        replacement = sdpa_call(
            node,
            f"{sdpa}.scaled_dot_product_attention",
            arguments,
            keywords,
            self.ctx.module.default_indent,
        )
        return replacement, imports
