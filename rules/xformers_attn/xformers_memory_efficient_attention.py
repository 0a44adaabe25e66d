"""ROC410 (xformers-memory-efficient-attention): flags `xformers.ops.memory_efficient_attention`
(and `..._forward`) and makes it dispatch."""

from __future__ import annotations

from typing import Any

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

from .._arguments import as_keyword, bind_arguments
from .._dispatch import dispatch, is_dispatched, optional_edits, plan
from .._imports import (
    guarded_imports,
    imported_modules,
    matches_package,
    mentions_package,
    torch_ref,
)
from .._literals import assigned_values, code_of, is_literal, is_simple
from .._optional_backend import in_optional_backend
from .._sdpa_call import sdpa_call, transposed
from .._tensor_rank import rank4_evidence
from ._table import _data


class XformersMemoryEfficientAttention(PythonRule):
    """
    ## What it does
    Flags `xformers.ops.memory_efficient_attention` (and `..._forward`) and makes it dispatch:
    xformers where it imports, `torch.nn.functional.scaled_dot_product_attention` (SDPA) where
    it does not, when the inputs are evidently 4-D and the `attn_bias` has an SDPA equivalent.

    ## Why it breaks on ROCm
    xformers publishes ROCm wheels only on its own experimental index (since 0.0.28, built on the
    CK kernels); the PyPI wheels are CUDA builds. PyTorch's SDPA covers the common cases on
    ROCm with no extra package (AOTriton flash/efficient kernels).

    ## Example
    ```python
    import xformers.ops as xops

    q = q.view(b, s, h, d)
    out = xops.memory_efficient_attention(
        q, k, v, attn_bias=xops.LowerTriangularMask(), p=0.0, scale=scale
    )
    ```

    ## Fix
    ```python
    import torch.nn.functional as F

    try:
        import xformers.ops as xops
    except ImportError:
        xops = None

    q = q.view(b, s, h, d)
    out = (
        xops.memory_efficient_attention(
            q, k, v, attn_bias=xops.LowerTriangularMask(), p=0.0, scale=scale
        )
        if xops is not None
        else F.scaled_dot_product_attention(
            q.transpose(1, 2),
            k.transpose(1, 2),
            v.transpose(1, 2),
            is_causal=True,
            dropout_p=0.0,
            scale=scale,
        ).transpose(1, 2).contiguous()
    )
    ```
    The call is kept where xformers imports and the import becomes optional (offered only when
    every use of the imported names is such a call, or the import is already in a `try:` whose
    `except ImportError:` sets the name to `None`). In the portable branch, xformers takes (B, M, H, K) tensors and SDPA (B, H, M, K): inputs and output are transposed.
    `attn_bias`: None → no mask; `LowerTriangularMask()` → `is_causal=True` (both align the
    causal mask top-left); `LowerTriangularFromBottomRightMask()` →
    `attn_mask=causal_lower_right(Mq, Mk)`; any other expression is passed as `attn_mask`
    (an additive tensor bias in both); `p` → `dropout_p`; `scale` → `scale` (both default to
    1/sqrt(K)).

    Left unfixed, with the reason in the message: inputs with no visible 4-D construction in the
    same function (xformers also accepts 3-D (B, M, K) tensors, which diffusers passes, and
    those must not be transposed), `BlockDiagonalMask` and the other xformers `AttentionBias`
    classes (packed variable-length batches, local attention), `op=` and `output_dtype=`.

    ## Fix safety
    Unsafe: where xformers is installed nothing changes, but elsewhere the SDPA branch runs
    with another kernel, rounding and dropout random mask; a non-xformers
    `attn_bias` expression is assumed to be a tensor (an `AttentionBias` object held in a
    variable makes SDPA raise `TypeError`); the 4-D check looks for a `view`/`reshape` with four
    sizes (or similar) assigned to the query in the same function, not at the call itself.

    ## Known problems
    Not reported inside xformers' own backend of a multi-backend module: a function or class named
    for it (`XFormersAttnProcessor`, `_xformers_attention`) calling through a name the module
    binds to `None` when xformers is missing (`if is_xformers_available(): import xformers.ops
    else: xformers = None`), or leaves unbound (`try: import xformers` whose `except` sets a flag
    such as `xformers_available = False`) when the module calls that function only under `if
    xformers_available:` with an `else` fallback. It runs only where xformers imported; the user opts in where the
    backend is chosen (`enable_xformers_memory_efficient_attention()`, ROC412).
    A call that cannot be rewritten is not reported in a function that imports xformers itself
    without a guard (`def forward_xformers(...): import xformers.ops`), or inside one that does
    (a closure it installs): ROC411 reports that import, the same need for xformers.

    ## References
    - facebookresearch/xformers README (ROCm wheels) and `xformers/ops/fmha/attn_bias.py`
    - https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html
    """

    code = "ROC410"
    # the dispatch fix reads every use of the imported names in the file (``plan``) and the
    # function around each call of xformers (4-D evidence; a call at module level reads the
    # whole module)
    parsing = Parsing(
        scope="statement",
        function_words=tuple(
            sorted({name.rsplit(".", 1)[-1] for name in _data()["rewritable"] + _data()["manual"]})
        ),
        triggers=("import xformers", "from xformers"),
    )
    name = "xformers-memory-efficient-attention"
    category = "xformers"
    severity = Severity.WARNING
    impact = Impact(consequence="performance", aggregate="scope", effort_hours=0.5)
    message = (
        "xformers has only experimental ROCm wheels (own index); "
        "torch SDPA computes the same attention"
    )
    fix = Fixing(
        title="Call `torch.nn.functional.scaled_dot_product_attention` (transposed to B,H,M,K)",
        applicability=Applicability.UNSAFE,
    )
    fact = "§4d; [X3][S1]"
    valid = [
        Valid(
            "if is_xformers_available():\n"
            "    import xformers\n"
            "    import xformers.ops\n"
            "else:\n"
            "    xformers = None\n\n"
            "class XFormersAttnProcessor:\n"
            "    def __call__(self, attn, query, key, value, attention_mask=None):\n"
            "        return xformers.ops.memory_efficient_attention(\n"
            "            query, key, value, attn_bias=attention_mask\n"
            "        )\n"
        ),
        Valid(  # unbound when the import failed: the backend runs only where xformers imported
            "try:\n"
            "    import xformers\n"
            "    import xformers.ops\n"
            "    xformers_available = True\n"
            "except Exception:\n"
            "    xformers_available = False\n\n"
            "class IPAttnProcessor:\n"
            "    def __call__(self, attn, query, key, value):\n"
            "        if xformers_available:\n"
            "            out = self._memory_efficient_attention_xformers(query, key, value)\n"
            "        else:\n"
            "            out = attn.scores(query, key) @ value\n"
            "        return out\n\n"
            "    def _memory_efficient_attention_xformers(self, query, key, value):\n"
            "        return xformers.ops.memory_efficient_attention(query, key, value)\n"
        ),
        Valid("import torch.nn.functional as F\nout = F.scaled_dot_product_attention(q, k, v)\n"),
        Valid(
            "def memory_efficient_attention(q, k, v):\n    return q\n\n"
            "out = memory_efficient_attention(q, k, v)\n"
        ),
        Valid('"""Uses xformers.ops.memory_efficient_attention(q, k, v)."""\n'),
        Valid(  # the function's own unguarded import is the finding (ROC411): one problem
            "def forward_xformers(self, x):\n"
            "    import xformers.ops\n\n"
            "    q, k, v = self.to_q(x), self.to_k(x), self.to_v(x)\n"
            "    return xformers.ops.memory_efficient_attention(q, k, v, attn_bias=None)\n"
        ),
        Valid(  # a closure of the function that imports xformers unguarded
            "def replace_vae_attn_to_xformers():\n"
            "    import xformers.ops\n\n"
            "    def forward_xformers(self, x):\n"
            "        q, k, v = self.to_q(x), self.to_k(x), self.to_v(x)\n"
            "        return xformers.ops.memory_efficient_attention(q, k, v, attn_bias=None)\n\n"
            "    Attention.forward = forward_xformers\n"
        ),
        Valid(  # the flag is the import's probe: without xformers the check is not needed
            "try:\n"
            "    import xformers.ops\n"
            "    validate = True\n"
            "except ImportError:\n"
            "    validate = False\n\n"
            "def check_xformers(q, k, v, out):\n"
            "    if validate:\n"
            "        assert out.allclose(xformers.ops.memory_efficient_attention(q, k, v))\n"
        ),
        Valid(  # a class attribute copies the probe's flag; the method tests it on `self`
            "import torch.nn.functional as F\n"
            "try:\n"
            "    import xformers.ops\n"
            "    XFORMERS = True\n"
            "except ImportError:\n"
            "    XFORMERS = False\n\n"
            "class Attention:\n"
            "    use_xformers = XFORMERS\n\n"
            "    def forward(self, q, k, v):\n"
            "        if self.use_xformers:\n"
            "            return xformers.ops.memory_efficient_attention(q, k, v)\n"
            "        return F.scaled_dot_product_attention(q, k, v)\n"
        ),
    ]
    invalid = [
        Invalid(  # the flag is also set on where the import failed: not a probe of it
            "try:\n"
            "    import xformers.ops\n"
            "    validate = True\n"
            "except ImportError:\n"
            "    validate = False\n"
            "validate = validate or FORCE\n\n"
            "def check_xformers(q, k, v, out):\n"
            "    if validate:\n"
            "        assert out.allclose(xformers.ops.memory_efficient_attention(q, k, v))\n",
            line=10,
        ),
        Invalid(
            "import torch.nn.functional as F\n"
            "import xformers.ops as xops\n\n"
            "def attend(x, b, s, h, d, scale):\n"
            "    q = k = v = x.view(b, s, h, d)\n"
            "    return xops.memory_efficient_attention(\n"
            "        q, k, v, attn_bias=xops.LowerTriangularMask(), p=0.0, scale=scale\n"
            "    )\n",
            fixed=(
                "import torch.nn.functional as F\n"
                "try:\n"
                "    import xformers.ops as xops\n"
                "except ImportError:\n"
                "    xops = None\n\n"
                "def attend(x, b, s, h, d, scale):\n"
                "    q = k = v = x.view(b, s, h, d)\n"
                "    return (\n"
                "        xops.memory_efficient_attention(\n"
                "            q, k, v, attn_bias=xops.LowerTriangularMask(), p=0.0, scale=scale\n"
                "        )\n"
                "        if xops is not None\n"
                "        else F.scaled_dot_product_attention(\n"
                "            q.transpose(1, 2),\n"
                "            k.transpose(1, 2),\n"
                "            v.transpose(1, 2),\n"
                "            is_causal=True,\n"
                "            dropout_p=0.0,\n"
                "            scale=scale,\n"
                "        ).transpose(1, 2).contiguous()\n"
                "    )\n"
            ),
            line=6,
            column=12,
        ),
        Invalid(
            "import torch\n"
            "from xformers.ops import memory_efficient_attention, fmha\n\n"
            "def decode(q, k, v, bias):\n"
            "    q = q.reshape(1, -1, 8, 64)\n"
            "    a = memory_efficient_attention(\n"
            "        q, k, v, fmha.attn_bias.LowerTriangularFromBottomRightMask()\n"
            "    )\n"
            "    return a + memory_efficient_attention(q, k, v, bias, 0.1)\n",
            fixed=(
                "import torch\n"
                "from torch.nn.attention.bias import causal_lower_right\n\n"
                "try:\n"
                "    from xformers.ops import memory_efficient_attention, fmha\n"
                "except ImportError:\n"
                "    memory_efficient_attention = fmha = None\n\n"
                "def decode(q, k, v, bias):\n"
                "    q = q.reshape(1, -1, 8, 64)\n"
                "    a = (\n"
                "        memory_efficient_attention(\n"
                "            q, k, v, fmha.attn_bias.LowerTriangularFromBottomRightMask()\n"
                "        )\n"
                "        if memory_efficient_attention is not None\n"
                "        else torch.nn.functional.scaled_dot_product_attention(\n"
                "            q.transpose(1, 2),\n"
                "            k.transpose(1, 2),\n"
                "            v.transpose(1, 2),\n"
                "            attn_mask=causal_lower_right(q.size(1), k.size(1)),\n"
                "        ).transpose(1, 2).contiguous()\n"
                "    )\n"
                "    return a + (\n"
                "        memory_efficient_attention(q, k, v, bias, 0.1)\n"
                "        if memory_efficient_attention is not None\n"
                "        else torch.nn.functional.scaled_dot_product_attention(\n"
                "            q.transpose(1, 2),\n"
                "            k.transpose(1, 2),\n"
                "            v.transpose(1, 2),\n"
                "            attn_mask=bias,\n"
                "            dropout_p=0.1,\n"
                "        ).transpose(1, 2).contiguous()\n"
                "    )\n"
            ),
            count=1,
        ),
        Invalid(
            # 3-D (B*H, M, K) inputs, as diffusers' processors pass them: not rewritten
            "import xformers\n"
            "import xformers.ops\n\n"
            "def proc(attn, query, key, value, attention_mask):\n"
            "    query = attn.head_to_batch_dim(query).contiguous()\n"
            "    return xformers.ops.memory_efficient_attention(\n"
            "        query, key, value, attn_bias=attention_mask\n"
            "    )\n",
            fixed=None,
        ),
        Invalid(
            "import xformers.ops as xops\n\n"
            "def packed(x, seqlens):\n"
            "    q = k = v = x.view(1, -1, 8, 64)\n"
            "    bias = xops.fmha.BlockDiagonalMask.from_seqlens(seqlens)\n"
            "    return xops.memory_efficient_attention(q, k, v, attn_bias=bias)\n",
            fixed=None,
        ),
    ]

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self._scopes: list[cst.CSTNode] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scopes.pop()

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.call_name(node)
        if qualified is None:
            return
        data = _data()
        short = qualified.rsplit(".", 1)[-1]
        if qualified.startswith("xformers.") and in_optional_backend(self.ctx, node, "xformers"):
            return  # an xformers backend: chosen by enable_xformers_*() (ROC412), only where it imported
        if qualified in data["manual"]:
            self.report(
                node,
                message=(
                    f"`{short}` needs xformers (experimental ROCm wheels only) and has no SDPA "
                    "equivalent"
                ),
            )
            return
        if qualified not in data["rewritable"] or is_dispatched(self.ctx, node):
            return
        scope = self._scopes[-1] if self._scopes else self.ctx.module
        result = self._rewrite(node, scope)
        route = plan(self.ctx, node, "xformers", self._rewritable)
        if isinstance(result, str) or isinstance(route, str):
            if any(
                _imports_xformers_unguarded(self.ctx.module, function) for function in self._scopes
            ):
                return  # ROC411 reports this function's own unguarded import: one problem
            reason = result if isinstance(result, str) else route
            self.report(
                node,
                message=(
                    f"`{short}` needs xformers (experimental ROCm wheels only); "
                    f"not rewritten to dispatch to SDPA: {reason}"
                ),
            )
            return
        portable, imports = result
        self.report(
            node,
            message=(
                f"`{short}` needs xformers, which has only experimental ROCm wheels; "
                "torch SDPA computes the same attention"
            ),
            fix=Rewrite(
                dispatch(node, route.name, portable, self.ctx.module.default_indent),
                imports=imports,
                extra_edits=optional_edits(route),
                together=route.together,
                together_size=route.size,
            ),
        )

    def _rewritable(self, call: cst.Call, scope: cst.FunctionDef | None) -> str | None:
        """None when ``call`` (of an xformers function) has an exact SDPA rewrite, else why not."""
        qualified = self.ctx.call_name(call) or ""
        if qualified not in _data()["rewritable"]:
            return f"`{qualified.rsplit('.', 1)[-1]}` has no SDPA equivalent"
        result = self._rewrite(call, scope if scope is not None else self.ctx.module)
        return result if isinstance(result, str) else None

    def _rewrite(
        self, node: cst.Call, scope: cst.CSTNode
    ) -> tuple[cst.BaseExpression, list[tuple[str, str | None]]] | str:
        data = _data()
        bound = bind_arguments(node, data["positional"], data["keywords"])
        if isinstance(bound, str):
            return bound
        for name in data["keywords"]:
            if name in bound and not is_literal(bound[name].value, None):
                return f"`{name}=` has no SDPA equivalent"
        missing = [name for name in ("query", "key", "value") if name not in bound]
        if missing:
            return f"it does not pass {', '.join(missing)}"
        names = {
            value.value
            for value in (bound[name].value for name in ("query", "key", "value"))
            if isinstance(value, cst.Name)
        }
        if not rank4_evidence(scope, names):
            return (
                "no 4-D (B, M, H, K) construction of the inputs is visible in this function; "
                "xformers also takes 3-D (B, M, K) tensors, which must not be transposed"
            )
        sdpa, imports = torch_ref(self.ctx, "torch.nn.functional")
        imports = list(imports)
        keywords: list[cst.Arg] = []
        bias = bound.get("attn_bias")
        if bias is not None and not is_literal(bias.value, None):
            mask = self._mask(bias.value, bound["query"].value, bound["key"].value, scope)
            if isinstance(mask, str):
                return mask
            kind, expression = mask
            if kind == "is_causal":
                keywords.append(as_keyword(bias, "is_causal", cst.Name("True")))
            else:
                keywords.append(as_keyword(bias, "attn_mask", expression))
                if kind == "lower_right":
                    imports.append(("torch.nn.attention.bias", "causal_lower_right"))
        if "p" in bound:
            keywords.append(as_keyword(bound["p"], "dropout_p"))
        if "scale" in bound:
            keywords.append(as_keyword(bound["scale"], "scale"))
        tensors = [transposed(bound[name]) for name in ("query", "key", "value")]
        replacement = sdpa_call(
            node,
            f"{sdpa}.scaled_dot_product_attention",
            tensors,
            keywords,
            self.ctx.module.default_indent,
        )
        return replacement, imports

    def _mask(
        self,
        bias: cst.BaseExpression,
        query: cst.BaseExpression,
        key: cst.BaseExpression,
        scope: cst.CSTNode,
    ) -> tuple[str, cst.BaseExpression] | str:
        data = _data()
        if isinstance(bias, cst.Call) and not bias.args:
            qualified = self.ctx.call_name(bias) or ""
            if matches_package(qualified, data["packages"]):
                last = qualified.rsplit(".", 1)[-1]
                if last in data["causal_top_left"]:
                    return "is_causal", cst.Name("True")
                if last in data["causal_bottom_right"]:
                    if not (is_simple(query) and is_simple(key)):
                        return (
                            "the bottom-right causal mask needs the query and key lengths, and "
                            "they are expressions the rewrite would evaluate twice"
                        )
                    mask = cst.parse_expression(
                        f"causal_lower_right({code_of(query)}.size(1), {code_of(key)}.size(1))"
                    )
                    return "lower_right", mask
        resolve = self.ctx.qualname
        sources = [bias]
        if isinstance(bias, cst.Name):
            sources += assigned_values(scope, bias.value)
        for source in sources:
            if mentions_package(resolve, source, "xformers"):
                return (
                    "`attn_bias` is an xformers AttentionBias (block-diagonal / packed "
                    "variable-length or local attention) with no SDPA argument"
                )
        return "mask", bias


def _imports_xformers_unguarded(module: cst.Module, scope: cst.CSTNode) -> bool:
    """Whether the function ``scope`` itself (not a function nested in it) imports xformers with
    no ``try``/``if`` around the import."""
    if not isinstance(scope, cst.FunctionDef):
        return False
    guarded = guarded_imports(module)
    found = False

    class _Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is scope

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_Import(self, node: cst.Import) -> None:
            self._check(node)

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            self._check(node)

        def _check(self, node: cst.Import | cst.ImportFrom) -> None:
            nonlocal found
            if id(node) not in guarded and any(
                module_name.split(".", 1)[0] == "xformers" for module_name in imported_modules(node)
            ):
                found = True

    scope.visit(_Finder())
    return found
