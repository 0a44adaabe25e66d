"""ROC150 (deprecated-sdp-kernel): flags `torch.backends.cuda.sdp_kernel(enable_flash=...,
enable_math=..., enable_mem_efficient=..., enable_cudnn=...)`, the deprecated backend selector."""

from __future__ import annotations

from typing import cast

import libcst as cst

from migrator.api import (
    Applicability,
    Fixing,
    Impact,
    Invalid,
    Parsing,
    PythonContext,
    PythonRule,
    Rewrite,
    Severity,
    Valid,
)

from .._tree import Tree, bound_at_module_level, is_load_name, tree
from ._shared import _BACKEND_PREFIXES, SDP_BACKEND, SDP_KERNEL, SDPA_KERNEL, sdp_kernel_backends


def _conflicts(ctx: PythonContext, tree_: Tree, names: dict[str, str]) -> bool:
    """Whether a local name the fix would import is already used for something else."""
    for local, qualified in names.items():
        bound = ctx.imports.bindings.get(local)
        if bound is not None and bound != qualified:
            return True
    for node in tree_.nodes:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node.name.value in names:
            return True
        if isinstance(node, cst.Name) and node.value in names:
            parent = tree_.parent(node)
            if isinstance(parent, (cst.ImportAlias, cst.FunctionDef, cst.ClassDef)):
                continue
            if isinstance(parent, cst.Attribute) and parent.attr is node:
                continue
            if is_load_name(tree_, node) and ctx.qualname(node) == names[node.value]:
                continue
            return True
    return False


class DeprecatedSdpKernel(PythonRule):
    """
    ## What it does
    Flags `torch.backends.cuda.sdp_kernel(enable_flash=..., enable_math=...,
    enable_mem_efficient=..., enable_cudnn=...)`, the deprecated backend selector.

    ## Why it breaks on ROCm
    It still works on ROCm builds, but it is a deprecated wrapper (a `FutureWarning` on every
    use) around `torch.nn.attention.sdpa_kernel`; keeping to the supported API avoids breaking on
    the newer PyTorch releases that ROCm wheels track, and makes the backend choice explicit
    (see ROC151/ROC152 for choices that fail on ROCm).

    ## Example
    ```python
    with torch.backends.cuda.sdp_kernel(
        enable_flash=True, enable_math=False, enable_mem_efficient=False
    ):
        out = F.scaled_dot_product_attention(q, k, v)
    ```

    ## Fix
    ```python
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION]):
        out = F.scaled_dot_product_attention(q, k, v)
    ```
    Parameters left out of `sdp_kernel` default to `True`, so `enable_cudnn` (not passed above)
    keeps `CUDNN_ATTENTION` in the list.

    ## Fix safety
    Safe: `sdp_kernel` is implemented as `sdpa_kernel(backends)` with exactly this list (built in
    the same order, with `set_priority=False`), and both yield the same empty context value
    (checked against torch 2.13; `torch.nn.attention` needs torch ≥ 2.3: where the project declares an
    older torch, or the call sits in a branch for older torch, no fix is offered).
    Only literal `True`/`False` arguments are mapped; other calls are reported without a fix. The
    fix is unsafe (applied only with `--unsafe-fixes`) when the call holds comments, which the
    rewrite would drop, and is not offered when `sdpa_kernel` or `SDPBackend` already names
    something else in the file, or when torch is imported only inside a function (the added
    module-level import would import torch earlier than the file intends). The rewrite changes
    nothing on ROCm (hygiene): `fix` applies it only when the rule is selected by name
    (`--select ROC150`).

    ## References
    - https://docs.pytorch.org/docs/stable/nn.attention.html
    """

    code = "ROC150"
    name = "deprecated-sdp-kernel"
    category = "sdpa"
    severity = Severity.HYGIENE
    impact = Impact(consequence="hygiene", aggregate="file", effort_hours=0.1)
    message = "`torch.backends.cuda.sdp_kernel` is deprecated: use `torch.nn.attention.sdpa_kernel`"
    fix = Fixing(
        title="Use `sdpa_kernel([...])` with the same backends",
        applicability=Applicability.SAFE,
        requires={"torch": "2.3"},
    )
    fact = "§2 sdp_kernel row; [V][P7]"
    parsing = Parsing(triggers=("sdp_kernel",))
    valid = [
        Valid(
            "from torch.nn.attention import SDPBackend, sdpa_kernel\n"
            "with sdpa_kernel([SDPBackend.MATH]):\n    pass\n"
        ),
        Valid("def sdp_kernel(**kw):\n    pass\nwith sdp_kernel(enable_flash=False):\n    pass\n"),
        Valid('"""torch.backends.cuda.sdp_kernel(enable_math=False)"""\n'),
    ]
    invalid = [
        Invalid(
            "import torch\nwith torch.backends.cuda.sdp_kernel(enable_flash=False):\n    pass\n",
            fixed=(
                "import torch\nfrom torch.nn.attention import SDPBackend, sdpa_kernel\n\n"
                "with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH, "
                "SDPBackend.CUDNN_ATTENTION]):\n    pass\n"
            ),
            line=2,
            column=6,
        ),
        Invalid(
            "from torch.backends.cuda import sdp_kernel\n"
            "ctx = sdp_kernel(True, False, False, False)\n",
            fixed=(
                "from torch.nn.attention import SDPBackend, sdpa_kernel\n\n"
                "ctx = sdpa_kernel([SDPBackend.FLASH_ATTENTION])\n"
            ),
        ),
        Invalid(
            "import torch as tt\nfrom torch.nn.attention import SDPBackend as B, sdpa_kernel\n"
            "with tt.backends.cuda.sdp_kernel(\n    enable_math=True,  # keep the fallback\n"
            "    enable_flash=False, enable_mem_efficient=False, enable_cudnn=False,\n):\n"
            "    pass\n",
            fixed=(
                "import torch as tt\nfrom torch.nn.attention import SDPBackend as B, sdpa_kernel\n"
                "with sdpa_kernel([B.MATH]):\n    pass\n"
            ),
        ),
        Invalid(
            "import torch\nfrom torch.backends.cuda import SDPBackend\n"
            "with torch.backends.cuda.sdp_kernel(enable_math=False, enable_cudnn=False):\n"
            "    pass\n",
            fixed=(
                "import torch\nfrom torch.backends.cuda import SDPBackend\n"
                "from torch.nn.attention import sdpa_kernel\n\n"
                "with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):\n"
                "    pass\n"
            ),
        ),
        Invalid("import torch\ncfg = {}\nwith torch.backends.cuda.sdp_kernel(**cfg):\n    pass\n"),
        # the fallback for torch before 2.3 keeps the old API (its try already uses the new one;
        # `sdpa_kernel` is not even bound where the import failed)
        Invalid(
            "import torch\ndef context():\n    try:\n"
            "        from torch.nn.attention import SDPBackend, sdpa_kernel\n"
            "        return sdpa_kernel([SDPBackend.MATH])\n"
            "    except (AttributeError, ImportError):\n"
            "        return torch.backends.cuda.sdp_kernel(enable_flash=False, "
            "enable_mem_efficient=False)\n",
            fixed=None,
        ),
        Invalid(
            "import os\ndef main():\n    os.environ['CUDA_VISIBLE_DEVICES'] = '1'\n"
            "    import torch\n"
            "    with torch.backends.cuda.sdp_kernel(enable_math=False):\n        pass\n",
            line=5,
        ),
        Invalid(
            "import torch\ndef sdpa_kernel():\n    pass\n"
            "with torch.backends.cuda.sdp_kernel(enable_math=False):\n    pass\n"
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.call_name(node) != SDP_KERNEL:
            return
        backends = sdp_kernel_backends(node)
        if backends is None:
            self.report(
                node,
                message=(
                    "`torch.backends.cuda.sdp_kernel` is deprecated: use "
                    "`torch.nn.attention.sdpa_kernel` (no fix: arguments are not literal "
                    "True/False)"
                ),
            )
            return
        tree_ = tree(self.ctx)
        head = node.func
        while isinstance(head, cst.Attribute):
            head = head.value
        if isinstance(head, cst.Name) and not bound_at_module_level(self.ctx.module, head.value):
            self.report(
                node,
                message=(
                    "`torch.backends.cuda.sdp_kernel` is deprecated: use "
                    "`torch.nn.attention.sdpa_kernel` (no fix: torch is imported lazily inside a "
                    "function here, and the fix would import it at module level)"
                ),
            )
            return
        kernel_names = self.ctx.imports.local_names_for(SDPA_KERNEL)
        backend_names = [
            local
            for prefix in _BACKEND_PREFIXES
            for local in self.ctx.imports.local_names_for(prefix)
        ]
        needed: dict[str, str] = {}
        if not kernel_names:
            needed["sdpa_kernel"] = SDPA_KERNEL
        if not backend_names:
            needed["SDPBackend"] = SDP_BACKEND
        imports = [("torch.nn.attention", local) for local in needed]
        if needed and _conflicts(self.ctx, tree_, needed):
            self.report(
                node,
                message=(
                    "`torch.backends.cuda.sdp_kernel` is deprecated: use "
                    "`torch.nn.attention.sdpa_kernel` (no fix: `sdpa_kernel` or `SDPBackend` "
                    "already names something else here)"
                ),
            )
            return
        kernel = kernel_names[0] if kernel_names else "sdpa_kernel"
        backend = backend_names[0] if backend_names else "SDPBackend"
        listed = ", ".join(f"{backend}.{name}" for name in backends)
        replacement = cst.parse_expression(f"{kernel}([{listed}])")
        replacement = replacement.with_changes(lpar=node.lpar, rpar=node.rpar)
        has_comment = "#" in self.ctx.code(node)
        self.report(
            node,
            fix=Rewrite(
                replacement,
                imports=imports,
                remove_imports=cast(
                    "list[tuple[str, str | None]]",
                    self.ctx.unused_imports(node.func, "torch.backends.cuda"),
                ),
                applicability=Applicability.UNSAFE if has_comment else Applicability.SAFE,
                description=(
                    "Use `sdpa_kernel([...])` with the same backends (drops the comments in the call)"
                    if has_comment
                    else None
                ),
            ),
        )
