"""ROC40x: flash-attn and transformers' FlashAttention switches (category ``flash-attn``)."""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from migrator.astutil import fast_visit
from migrator.model import Applicability, Severity
from migrator.rule import Invalid, PythonRule, Valid
from migrator.ruledata import load_table

from ._attention_util import (
    as_keyword,
    bind_arguments,
    causal_mask,
    guarded_imports,
    imported_modules,
    is_literal,
    is_simple,
    literal_from_text,
    matches_package,
    new_keyword,
    replace_string,
    sdpa_call,
    string_nodes_with_value,
    torch_ref,
    transposed,
    unpacked,
)
from ._dispatch import dispatch, is_dispatched, optional_edits, plan


def _data() -> dict[str, Any]:
    data: dict[str, Any] = load_table("attention")
    return data


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
    and imports guarded by a `try:` whose handler does not set the name to `None`.

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
    dependency = "flash_attn"
    name = "flash-attn-func-call"
    category = "flash-attn"
    severity = Severity.WARNING
    aggregate = "scope"
    message = (
        "flash-attn needs a ROCm/flash-attention source build on ROCm; "
        "torch SDPA computes the same attention"
    )
    fix_title = "Call `torch.nn.functional.scaled_dot_product_attention` (transposed to B,H,S,D)"
    applicability = Applicability.UNSAFE
    fact = "§4a §4b; [F1][S1][V]"
    triggers = ("flash_attn",)
    effort_hours = 0.5
    valid = [
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
            replacement=dispatch(node, route.name, portable, unit),
            imports=imports,
            requires={"torch": minimum},
            extra_edits=optional_edits(route),
            together=route.together,
            together_size=route.size,
        )

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

    ## References
    - ROCm/flash-attention README
    - https://docs.pytorch.org/docs/stable/nn.attention.html
    """

    code = "ROC401"
    dependency = "flash_attn"
    name = "flash-attn-no-sdpa-equivalent"
    category = "flash-attn"
    severity = Severity.WARNING
    aggregate = "scope"
    message = "this flash-attn function has no SDPA equivalent and needs ROCm/flash-attention"
    fact = "§4a §4b; [F1][F2]"
    triggers = ("flash_attn",)
    effort_hours = 4.0
    valid = [
        Valid("from flash_attn import flash_attn_func\nout = flash_attn_func(q, k, v)\n"),
        Valid("def flash_attn_varlen_func(*a):\n    pass\nflash_attn_varlen_func(q, k, v)\n"),
        Valid("# flash_attn_with_kvcache(q, k_cache, v_cache)\nx = 'flash_attn_with_kvcache'\n"),
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
    ]

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.call_name(node)
        if qualified is None:
            return
        data = _data()["flash_attn"]
        package = qualified.split(".", 1)[0]
        short = qualified.rsplit(".", 1)[-1]
        if package in data["fa3_packages"]:
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


class FlashAttnHardImport(PythonRule):
    """
    ## What it does
    Flags imports of `flash_attn` (and FlashAttention-3's `flash_attn_interface`) that are not
    guarded by `try: ... except ImportError:` or an `if` (availability check).

    ## Why it breaks on ROCm
    PyPI's flash-attn wheels are built for CUDA; on ROCm the package exists only as a source
    build of ROCm/flash-attention (CK backend for MI200/MI300/MI350; Triton backend for others),
    and FlashAttention-3 not at all. An unguarded import makes the module fail with
    `ImportError` on a stock ROCm install.

    ## Example
    ```python
    from flash_attn import flash_attn_func
    ```

    ## Manual migration
    Either build ROCm/flash-attention for the target GPUs (`GPU_ARCHS="gfx90a;gfx942"`), or make
    the import optional and fall back to `torch.nn.functional.scaled_dot_product_attention`
    (ROC400 does both where every use of the import is a call with an SDPA form):
    ```python
    try:
        from flash_attn import flash_attn_func
    except ImportError:
        flash_attn_func = None
    ```

    ## References
    - ROCm/flash-attention README and setup.py
    """

    code = "ROC402"
    dependency = "flash_attn"
    name = "flash-attn-hard-import"
    category = "flash-attn"
    severity = Severity.ERROR
    aggregate = "file"
    message = "unguarded flash-attn import: no ROCm wheel on PyPI, so the module fails to import"
    fact = "§4a §9 flash-attn row; [F1][F2]"
    triggers = ("flash_attn",)
    effort_hours = 2.0
    blocker = True
    valid = [
        Valid("try:\n    import flash_attn\nexcept ImportError:\n    flash_attn = None\n"),
        Valid(
            "from transformers.utils import is_flash_attn_2_available\n"
            "if is_flash_attn_2_available():\n"
            "    from flash_attn import flash_attn_func\n"
        ),
        Valid("import flash_attention_utils\n# import flash_attn\n"),
    ]
    invalid = [
        Invalid("from flash_attn import flash_attn_func\n", line=1, column=1),
        Invalid("import flash_attn.layers.rotary as rotary\n"),
        Invalid("def f():\n    from flash_attn_interface import flash_attn_func\n", line=2),
        Invalid(
            "try:\n    import flash_attn\nexcept KeyError:\n    pass\n",
            line=2,
        ),
    ]

    def visit_Import(self, node: cst.Import) -> None:
        self._check(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._check(node)

    def _check(self, node: cst.Import | cst.ImportFrom) -> None:
        data = _data()["flash_attn"]
        for module in imported_modules(node):
            fa3 = matches_package(module, data["fa3_packages"])
            fa2 = matches_package(module, data["packages"])
            if not (fa2 or fa3) or id(node) in guarded_imports(self.ctx.module):
                continue
            if fa3:
                message = (
                    f"unguarded import of `{module}` (FlashAttention-3): built for Hopper (sm90) "
                    "only, it has no ROCm build"
                )
            else:
                message = (
                    f"unguarded import of `{module}`: PyPI flash-attn wheels are CUDA builds; "
                    "build ROCm/flash-attention or fall back to torch SDPA"
                )
            self.report(node, message=message)
            return


#: An ``if`` test naming a flash-attention switch, and availability probes (which are not).
_FLASH_SWITCH = re.compile(r"flash", re.IGNORECASE)
_PROBE = re.compile(r"avail|\bhas_|HAS_|import", re.IGNORECASE)
#: Code that packs several sequences into one row (padding-free batches, multipack).
_PACKING = re.compile(r"packing|flatten|padding_free|multipack|cu_seqlens", re.IGNORECASE)


class _HfAttnImplementation(PythonRule):
    """Shared matcher of transformers ``attn_implementation`` values (ROC403, ROC404)."""

    abstract = True
    values_key = "fa2"

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self._dispatch: bool | None = None
        #: The node being visited when a value is checked (its ancestors are known).
        self._anchor: cst.CSTNode | None = None

    # -- where the literal can be

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name) and func.value == "setattr" and len(node.args) >= 3:
            target = node.args[1].value
            if isinstance(target, cst.SimpleString) and "attn_impl" in str(target.evaluated_value):
                self._anchor = node
                self._check(node.args[2].value)
        names_option = any(
            isinstance(a.value, cst.SimpleString)
            and a.keyword is None
            and str(a.value.evaluated_value).replace("-", "_").find("attn_impl") >= 0
            for a in node.args
        )
        for argument in node.args:
            if argument.keyword is None:
                continue
            keyword = argument.keyword.value
            if keyword == "attn_implementation" or (names_option and keyword == "default"):
                self._anchor = node
                self._check(argument.value)
            elif keyword == "use_flash_attention_2" and self.values_key == "fa2":
                self._use_flash_attention_2(node, argument)

    def visit_DictElement(self, node: cst.DictElement) -> None:
        key = node.key
        if not isinstance(key, cst.SimpleString):
            return
        if str(key.evaluated_value).lstrip("_") == "attn_implementation":
            self._anchor = node
            self._check(node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(self._names_attn(target.target) for target in node.targets):
            self._anchor = node
            self._check(node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and self._names_attn(node.target):
            self._anchor = node
            self._check(node.value)

    def visit_Param(self, node: cst.Param) -> None:
        if node.default is not None and "attn_impl" in node.name.value:
            self._anchor = node
            self._check(node.default)

    @staticmethod
    def _names_attn(target: cst.BaseExpression) -> bool:
        if isinstance(target, cst.Name):
            return "attn_impl" in target.value.lower()
        if isinstance(target, cst.Attribute):
            return "attn_impl" in target.attr.value
        if isinstance(target, cst.Subscript) and len(target.slice) == 1:
            index = target.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
                return "attn_impl" in str(index.value.evaluated_value)
        return False

    # -- reporting

    def _values(self) -> list[str]:
        values: list[str] = _data()["transformers"][self.values_key]
        return values

    def _check(self, value: cst.BaseExpression) -> None:
        replacement_value: str = _data()["transformers"]["replacement"]
        probed = _probed_bodies(value, self.ctx.code)
        for string in string_nodes_with_value(value, self._values()):
            if id(string) in probed:
                continue  # already dispatched on an availability probe: portable
            if self._is_dispatch_code():
                self.report(
                    string,
                    message=(
                        f"{self.message}; not rewritten: this file also compares "
                        "attn_implementation against flash-attention names, so change both sides "
                        "by hand"
                    ),
                )
                continue
            self._report_dispatch(string, replacement_value, value)

    def _report_dispatch(
        self, string: cst.SimpleString, fallback: str, value: cst.BaseExpression
    ) -> None:
        """Keep FlashAttention-2 where it is installed, fall back to ``fallback`` elsewhere; leave
        explicit user requests and packed-sequence code alone (they need FA2's varlen path)."""
        requested = self._explicit_request(value)
        if requested:
            self.report(
                string,
                message=(
                    f"{self.message}; not rewritten: `{requested}` asks for FlashAttention "
                    "explicitly (on ROCm install ROCm/flash-attention or pass sdpa)"
                ),
            )
            return
        if _PACKING.search(self.ctx.module.code):
            self.report(
                string,
                message=(
                    f"{self.message}; not rewritten: this file packs sequences, which relies on "
                    "FlashAttention's variable-length path (sdpa would attend across them)"
                ),
            )
            return
        if self._probe_guarded(value, string):
            self.report(
                string,
                message=(
                    f"{self.message}; not rewritten: an availability check already guards it "
                    "(on ROCm without flash_attn the other branch runs)"
                ),
            )
            return
        probe = f"is_flash_attn_{self.values_key[-1]}_available"
        imports: list[tuple[str, str | None]] = [("transformers.utils", probe)]
        test: cst.BaseExpression = cst.Call(func=cst.Name(probe))
        if not _imports_transformers_at_top(self.ctx.module):
            # keep transformers a lazy import here: ask importlib whether flash_attn is installed
            package = "flash_attn" if self.values_key == "fa2" else "flash_attn_3"
            test = cst.parse_expression(f'importlib.util.find_spec("{package}") is not None')
            imports = [("importlib.util", None)]
        expression = cst.IfExp(test=test, body=string, orelse=replace_string(string, fallback))
        if string is not value:  # inside `a if c else b` or `a or b`: keep the precedence
            expression = expression.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        self.report(
            string,
            replacement=expression,
            imports=imports,
            requires={"transformers": "4.36" if self.values_key == "fa2" else "4.53"},
        )

    @staticmethod
    def _probe_guarded(value: cst.BaseExpression, string: cst.SimpleString) -> bool:
        """Whether ``string`` is the body of ``x if HAS_FLASH_ATTN else y`` (a portable fallback)."""
        return (
            isinstance(value, cst.IfExp)
            and value.body is string
            and bool(_PROBE.search(cst.Module([]).code_for_node(value.test)))
        )

    def _explicit_request(self, value: cst.BaseExpression) -> str | None:
        """The test of an enclosing ``if`` that names a flash-attention switch
        (``if args.use_flash_attn:``, ``if backend == "flash":``), when there is one."""
        anchor = self._anchor
        enclosing: list[cst.CSTNode] = [value] if isinstance(value, cst.IfExp) else []
        if anchor is not None:
            enclosing += self.ctx.ancestors(anchor)
        for ancestor in enclosing:
            if isinstance(ancestor, cst.If | cst.IfExp):
                test = self.ctx.code(ancestor.test)
                if _FLASH_SWITCH.search(test) and not _PROBE.search(test):
                    return test.strip()
        return None

    def _use_flash_attention_2(self, call: cst.Call, argument: cst.Arg) -> None:
        if is_literal(argument.value, False) or not self._is_hf_call(call):
            return
        base = (
            "`use_flash_attention_2=True` selects FlashAttention-2, which needs "
            "ROCm/flash-attention (and the flag is gone from transformers 5)"
        )
        if not is_literal(argument.value, True):
            self.report(argument, message=f"{base}; not rewritten: the value is not a literal")
            return
        keywords = {a.keyword.value for a in call.args if a.keyword is not None}
        if "attn_implementation" in keywords:
            self.report(
                argument,
                message=f"{base}; not rewritten: the call also passes attn_implementation",
            )
            return
        self.report(
            argument,
            message=base,
            replacement=argument.with_changes(
                keyword=cst.Name("attn_implementation"),
                value=cst.parse_expression(
                    '"flash_attention_2" if is_flash_attn_2_available() else "sdpa"'
                ),
            ),
            imports=[("transformers.utils", "is_flash_attn_2_available")],
            requires={"transformers": "4.36"},
        )

    def _is_hf_call(self, call: cst.Call) -> bool:
        data = _data()["transformers"]
        qualified = self.ctx.call_name(call) or ""
        if any(qualified.startswith(prefix) for prefix in data["hf_prefixes"]):
            return True
        return isinstance(call.func, cst.Attribute) and call.func.attr.value in data["hf_methods"]

    def _is_dispatch_code(self) -> bool:
        """Whether the file compares some value against a flash-attention implementation name
        (``== "flash_attention_2"``, ``in (...)``): then it dispatches on the name and rewriting
        only the assignment side would silently change which branch runs."""
        if self._dispatch is None:
            names = set(_data()["transformers"]["fa2"]) | set(_data()["transformers"]["fa3"])
            self._dispatch = _compares_against(self.ctx.module, names)
        return self._dispatch


def _imports_transformers_at_top(module: cst.Module) -> bool:
    """Whether the module imports transformers at module level (so a probe import costs nothing)."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.ImportFrom) and small.module is not None:
                    name = cst.Module([]).code_for_node(small.module)
                    if name == "transformers" or name.startswith("transformers."):
                        return True
                if isinstance(small, cst.Import) and any(
                    cst.Module([]).code_for_node(alias.name).split(".")[0] == "transformers"
                    for alias in small.names
                ):
                    return True
    return False


def _probed_bodies(value: cst.BaseExpression, code: Any) -> set[int]:
    """``id()`` of the bodies of ``x if is_..._available() else y`` expressions inside ``value``."""
    found: set[int] = set()

    class _Finder(cst.CSTVisitor):
        def visit_IfExp(self, node: cst.IfExp) -> None:
            if "_available(" in code(node.test) or "find_spec(" in code(node.test):
                found.add(id(node.body))

    value.visit(_Finder())
    return found


def _compares_against(module: cst.Module, names: set[str]) -> bool:
    class _Finder(cst.CSTVisitor):
        found = False

        def visit_Comparison(self, node: cst.Comparison) -> None:
            parts: list[cst.BaseExpression] = [node.left] + [c.comparator for c in node.comparisons]
            for part in parts:
                elements: list[cst.BaseExpression] = [part]
                if isinstance(part, (cst.Tuple, cst.List, cst.Set)):
                    elements = [element.value for element in part.elements]
                for element in elements:
                    if isinstance(element, cst.SimpleString) and element.evaluated_value in names:
                        self.found = True

    finder = _Finder()
    fast_visit(module, finder, trivia=False)
    return finder.found


class HfFlashAttention2(_HfAttnImplementation):
    """
    ## What it does
    Flags transformers' `attn_implementation="flash_attention_2"` (as a call keyword, in a config
    dict, in an assignment to an `attn_implementation` variable/attribute/key, as a parameter
    default, in either branch of `"flash_attention_2" if cond else "eager"`) and
    `use_flash_attention_2=True` on `from_pretrained`/`from_config`.

    ## Why it breaks on ROCm
    transformers loads FlashAttention-2 from the `flash_attn` package, which on ROCm exists only
    as a source build of ROCm/flash-attention; without it model loading raises `ImportError`.
    `"sdpa"` uses PyTorch's scaled_dot_product_attention, which runs the AOTriton flash kernels
    on ROCm with no extra package.

    ## Example
    ```python
    model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="flash_attention_2")
    ```

    ## Fix
    ```python
    from transformers.utils import is_flash_attn_2_available

    model = AutoModelForCausalLM.from_pretrained(
        name,
        attn_implementation="flash_attention_2" if is_flash_attn_2_available() else "sdpa",
    )
    ```
    `use_flash_attention_2=True` becomes the same `attn_implementation=` dispatch (the old flag
    was deprecated in transformers 4.x and is gone in 5.x).

    ## Fix safety
    Safe: where `flash_attn` is installed (every NVIDIA setup that ran this code before)
    `is_flash_attn_2_available()` is true and the model keeps FlashAttention-2; elsewhere
    transformers uses `"sdpa"`, which computes the same attention and runs AOTriton kernels on
    ROCm. Only the literal string is replaced, so quotes and comments stay. No fix where the
    choice is the user's (the literal sits under `if args.use_flash_attn:` or another test naming
    flash), where the file packs sequences (padding-free batches, multipack: they rely on
    FlashAttention's variable-length path, and SDPA would attend across the packed sequences), or
    where the file compares a value against `"flash_attention_2"` (rewriting one side would
    change which branch runs). Needs transformers ≥ 4.36 (`attn_implementation`).

    ## Known problems
    Older transformers releases handled padding-free packed batches (`position_ids` restarting
    inside a row, `DataCollatorWithFlattening`) only in the FlashAttention-2 path; check such
    training setups after switching.

    ## References
    - https://huggingface.co/docs/transformers/perf_infer_gpu_one
    - https://huggingface.co/docs/optimum/amd/amdgpu/overview
    """

    code = "ROC403"
    name = "hf-flash-attention-2"
    category = "flash-attn"
    severity = Severity.ERROR
    aggregate = "file"
    message = "`flash_attention_2` needs ROCm/flash-attention; transformers raises without it"
    fix_title = 'Keep FlashAttention-2 where installed, else attn_implementation="sdpa"'
    applicability = Applicability.SAFE
    fact = "§4c; [X1][X2][V]"
    triggers = ("flash_attention_2",)
    effort_hours = 0.1
    values_key = "fa2"
    valid = [
        Valid('model = AutoModel.from_pretrained(name, attn_implementation="sdpa")\n'),
        Valid(
            "from transformers.utils import is_flash_attn_2_available\n"
            'impl = "flash_attention_2" if is_flash_attn_2_available() else "sdpa"\n'
        ),
        Valid('if model.config._attn_implementation == "flash_attention_2":\n    pass\n'),
        Valid(
            '"""Pass attn_implementation="flash_attention_2" for speed."""\n'
            'CHOICES = ["eager", "flash_attention_2"]\n'
        ),
        Valid(
            "from llmfoundry import ComposerHFCausalLM\n"
            "m = ComposerHFCausalLM(use_flash_attention_2=True)\n"
        ),
    ]
    invalid = [
        Invalid(
            "from transformers import AutoModelForCausalLM\n"
            "m = AutoModelForCausalLM.from_pretrained(\n"
            "    name, attn_implementation='flash_attention_2')\n",
            fixed=(
                "from transformers import AutoModelForCausalLM\n"
                "from transformers.utils import is_flash_attn_2_available\n\n"
                "m = AutoModelForCausalLM.from_pretrained(\n"
                "    name, attn_implementation='flash_attention_2' if is_flash_attn_2_available() "
                "else 'sdpa')\n"
            ),
            line=3,
            column=31,
        ),
        Invalid(  # an availability probe already guards it: no fix
            'attn_impl = "flash_attention_2" if HAS_FLASH_ATTN and on_gpu else "eager"  # fast\n'
            "model = AutoModelForCausalLM.from_config(config, attn_implementation=attn_impl)\n",
            fixed=None,
        ),
        Invalid(  # transformers is not imported at module level: importlib asks instead
            'model_kwargs = {"attn_implementation": "flash_attention_2"}\n'
            'model_kwargs["attn_implementation"] = "flash_attention_2"\n',
            fixed=(
                "import importlib.util\n\n"
                'model_kwargs = {"attn_implementation": "flash_attention_2" if '
                'importlib.util.find_spec("flash_attn") is not None else "sdpa"}\n'
                'model_kwargs["attn_implementation"] = "flash_attention_2" if '
                'importlib.util.find_spec("flash_attn") is not None else "sdpa"\n'
            ),
            count=1,
        ),
        Invalid(
            "import transformers as tf\n"
            "m = tf.AutoModel.from_pretrained(\n"
            "    name,\n"
            "    use_flash_attention_2=True,  # speed\n"
            ")\n",
            fixed=(
                "import transformers as tf\n"
                "from transformers.utils import is_flash_attn_2_available\n\n"
                "m = tf.AutoModel.from_pretrained(\n"
                "    name,\n"
                '    attn_implementation="flash_attention_2" if is_flash_attn_2_available() '
                'else "sdpa",  # speed\n'
                ")\n"
            ),
        ),
        Invalid(
            'impl = "flash_attention_2"\n'
            'cfg.attn_implementation = "flash_attention_2"\n'
            'if cfg.attn_implementation == "flash_attention_2":\n'
            "    pass\n",
            fixed=None,
            line=2,
        ),
        Invalid(  # the user asked for FlashAttention: left alone, reported
            "if args.use_flash_attn:\n"
            '    model_kwargs["attn_implementation"] = "flash_attention_2"\n',
            fixed=None,
            line=2,
        ),
        Invalid(  # packed sequences need FlashAttention's varlen path
            "from transformers import DataCollatorWithFlattening\n"
            'model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="flash_attention_2")\n',
            fixed=None,
            line=2,
        ),
    ]


class HfFlashAttention3(_HfAttnImplementation):
    """
    ## What it does
    Flags transformers' `attn_implementation="flash_attention_3"` wherever ROC403 looks for
    `"flash_attention_2"`.

    ## Why it breaks on ROCm
    FlashAttention-3 targets Hopper GPUs (H100/H800, CUDA ≥ 12.3); there is no ROCm build, so
    model loading fails on AMD GPUs.

    ## Example
    ```python
    model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="flash_attention_3")
    ```

    ## Fix
    ```python
    from transformers.utils import is_flash_attn_3_available

    model = AutoModelForCausalLM.from_pretrained(
        name,
        attn_implementation="flash_attention_3" if is_flash_attn_3_available() else "sdpa",
    )
    ```

    ## Fix safety
    Unsafe: Hopper machines with FlashAttention-3 installed keep it, but the probe
    `is_flash_attn_3_available` is only in recent transformers (assumed ≥ 4.53, the release
    that added FlashAttention-3; not verified), so check the project's transformers floor. Not
    offered for user-selected backends or packed sequences (see ROC403).

    ## References
    - Dao-AILab/flash-attention README (FlashAttention-3 requirements)
    """

    code = "ROC404"
    name = "hf-flash-attention-3"
    category = "flash-attn"
    severity = Severity.ERROR
    aggregate = "file"
    message = "`flash_attention_3` is Hopper-only (no ROCm build); transformers raises on AMD GPUs"
    fix_title = 'Keep FlashAttention-3 where installed, else attn_implementation="sdpa"'
    applicability = Applicability.UNSAFE
    fact = "§4c; [F2]"
    triggers = ("flash_attention_3",)
    effort_hours = 0.1
    values_key = "fa3"
    valid = [
        Valid('model = AutoModel.from_pretrained(name, attn_implementation="flash_attention_2")\n'),
        Valid('assert config._attn_implementation != "flash_attention_3"\n'),
        Valid('# attn_implementation="flash_attention_3"\nx = 1\n'),
    ]
    invalid = [
        Invalid(
            "from transformers import AutoModel\n"
            'model = AutoModel.from_pretrained(name, attn_implementation="flash_attention_3")\n',
            fixed=(
                "from transformers import AutoModel\n"
                "from transformers.utils import is_flash_attn_3_available\n\n"
                'model = AutoModel.from_pretrained(name, attn_implementation="flash_attention_3" '
                'if is_flash_attn_3_available() else "sdpa")\n'
            ),
        ),
        Invalid(
            "def load(name, attn_implementation='flash_attention_3'):\n    pass\n",
            fixed=(
                "import importlib.util\n\n"
                "def load(name, attn_implementation='flash_attention_3' if "
                "importlib.util.find_spec(\"flash_attn_3\") is not None else 'sdpa'):\n    pass\n"
            ),
        ),
    ]
