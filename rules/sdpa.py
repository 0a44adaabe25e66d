"""ROC15x: SDPA backend selection (deprecated ``sdp_kernel``, cuDNN-only and fused-only choices
that leave ROCm with no kernel)."""

from __future__ import annotations

from typing import cast

import libcst as cst

from migrator.astutil import arg, has_star_args, literal_value, unused_import_candidates
from migrator.context import PythonContext
from migrator.model import Applicability, Severity
from migrator.rule import Invalid, PythonRule, Valid

from ._rocm_guards import unreachable_on_rocm
from ._tree import Tree, bound_at_module_level, is_load_name, tree

SDP_KERNEL = "torch.backends.cuda.sdp_kernel"
SDPA_KERNEL = "torch.nn.attention.sdpa_kernel"
SDP_BACKEND = "torch.nn.attention.SDPBackend"
_BACKEND_PREFIXES = (SDP_BACKEND, "torch.backends.cuda.SDPBackend", "torch._C._SDPBackend")

#: sdp_kernel's parameters in positional order, and the backend each one enables; the backend
#: list is built in the order torch's own sdp_kernel builds it.
_SDP_KERNEL_PARAMS = (
    ("enable_flash", "FLASH_ATTENTION"),
    ("enable_math", "MATH"),
    ("enable_mem_efficient", "EFFICIENT_ATTENTION"),
    ("enable_cudnn", "CUDNN_ATTENTION"),
)
_ORDER = ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "MATH", "CUDNN_ATTENTION")
_FUSED = {"FLASH_ATTENTION", "EFFICIENT_ATTENTION"}

_FLAG_FUNCTIONS = {
    "torch.backends.cuda.enable_flash_sdp": "FLASH_ATTENTION",
    "torch.backends.cuda.enable_mem_efficient_sdp": "EFFICIENT_ATTENTION",
    "torch.backends.cuda.enable_math_sdp": "MATH",
    "torch.backends.cuda.enable_cudnn_sdp": "CUDNN_ATTENTION",
}


def sdp_kernel_backends(call: cst.Call) -> list[str] | None:
    """Backends a ``torch.backends.cuda.sdp_kernel(...)`` call enables, in torch's order; None
    when an argument is not a literal True/False."""
    if has_star_args(call):
        return None
    enabled: dict[str, bool] = {}
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) > len(_SDP_KERNEL_PARAMS):
        return None
    names = {name for name, _ in _SDP_KERNEL_PARAMS}
    for (_, backend), argument in zip(_SDP_KERNEL_PARAMS, positional, strict=False):
        value = literal_value(argument.value)
        if not isinstance(value, bool):
            return None
        enabled[backend] = value
    for argument in call.args:
        if argument.keyword is None:
            continue
        if argument.keyword.value not in names:
            return None
        backend = dict(_SDP_KERNEL_PARAMS)[argument.keyword.value]
        value = literal_value(argument.value)
        if not isinstance(value, bool) or backend in enabled:
            return None
        enabled[backend] = value
    return [backend for backend in _ORDER if enabled.get(backend, True)]


def _backend_name(ctx: PythonContext, node: cst.BaseExpression) -> str | None:
    qualified = ctx.qualname(node) if isinstance(node, (cst.Attribute, cst.Name)) else None
    if qualified is None:
        return None
    for prefix in _BACKEND_PREFIXES:
        if qualified.startswith(prefix + "."):
            return qualified[len(prefix) + 1 :]
    return None


def sdpa_kernel_backends(ctx: PythonContext, call: cst.Call) -> list[str] | None:
    """Backends a ``torch.nn.attention.sdpa_kernel(...)`` call allows; None when not literal."""
    found = arg(call, keyword="backends", position=0)
    if found is None:
        return None
    value = found.value
    items = value.elements if isinstance(value, (cst.List, cst.Tuple)) else None
    nodes = [element.value for element in items] if items is not None else [value]
    names = [_backend_name(ctx, node) for node in nodes]
    if any(name is None for name in names):
        return None
    return [name for name in names if name is not None]


def _selections(ctx: PythonContext, tree_: Tree) -> list[tuple[cst.CSTNode, list[str]]]:
    """Every place that restricts SDPA backends, with the backends it leaves enabled."""
    cached = tree_.memo.get("sdpa")
    if cached is not None:
        return list(cached)
    found: list[tuple[cst.CSTNode, list[str]]] = []
    flag_calls: dict[int, list[tuple[cst.Call, str, bool]]] = {}
    for node in tree_.nodes:
        if not isinstance(node, cst.Call):
            continue
        name = ctx.call_name(node)
        backends: list[str] | None = None
        if name == SDP_KERNEL:
            backends = sdp_kernel_backends(node)
        elif name == SDPA_KERNEL:
            backends = sdpa_kernel_backends(ctx, node)
        elif name in _FLAG_FUNCTIONS:
            flag = arg(node, keyword="enabled", position=0)
            value = literal_value(flag.value) if flag is not None else ...
            if isinstance(value, bool):
                scope = id(tree_.scope(node))
                flag_calls.setdefault(scope, []).append((node, _FLAG_FUNCTIONS[name], value))
            continue
        if backends is not None:
            found.append((node, backends))
    for calls in flag_calls.values():
        state = dict.fromkeys(_ORDER, True)
        for _, backend, value in calls:
            state[backend] = value
        if state["MATH"]:
            continue
        enabled = [backend for backend in _ORDER if state[backend]]
        if enabled == ["CUDNN_ATTENTION"]:
            anchor = next(
                (c for c, b, v in calls if b == "CUDNN_ATTENTION" and v),
                next(c for c, b, v in reversed(calls) if not v),
            )
        else:
            anchor = next(c for c, b, v in reversed(calls) if b == "MATH" and not v)
        found.append((anchor, enabled))
    result = [
        (node, backends) for node, backends in found if not unreachable_on_rocm(ctx, tree_, node)
    ]
    tree_.memo["sdpa"] = result
    return list(result)


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
    module-level import would import torch earlier than the file intends).

    ## References
    - https://docs.pytorch.org/docs/stable/nn.attention.html
    """

    code = "ROC150"
    name = "deprecated-sdp-kernel"
    category = "sdpa"
    severity = Severity.HYGIENE
    aggregate = "file"
    message = "`torch.backends.cuda.sdp_kernel` is deprecated: use `torch.nn.attention.sdpa_kernel`"
    fix_title = "Use `sdpa_kernel([...])` with the same backends"
    applicability = Applicability.SAFE
    fact = "§2 sdp_kernel row; [V][P7]"
    fix_requires = {"torch": "2.3"}
    triggers = ("sdp_kernel",)
    effort_hours = 0.1
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
            replacement=replacement,
            imports=imports,
            remove_imports=cast(
                "list[tuple[str, str | None]]",
                unused_import_candidates(self.ctx, node.func, "torch.backends.cuda"),
            ),
            applicability=Applicability.UNSAFE if has_comment else Applicability.SAFE,
            fix_description=(
                "Use `sdpa_kernel([...])` with the same backends (drops the comments in the call)"
                if has_comment
                else None
            ),
        )


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
    aggregate = "scope"
    message = (
        "only cuDNN attention is allowed: ROCm has no cuDNN attention backend, so "
        "scaled_dot_product_attention raises 'No available kernel'"
    )
    fact = "§2 SDPBackend.CUDNN_ATTENTION row; §10.6; [G3]"
    triggers = ("CUDNN_ATTENTION", "sdp_kernel", "enable_cudnn_sdp")
    effort_hours = 0.25
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
    aggregate = "scope"
    message = (
        "SDPA restricted to fused kernels without the math fallback: works on MI200/MI300/MI350 "
        "(AOTriton); raises 'No available kernel' on AMD GPUs AOTriton does not cover"
    )
    fact = (
        "§2 SDPA flash/mem-efficient row; §6 TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL; §10.6; "
        "[P8][P10]"
    )
    triggers = ("sdp_kernel", "sdpa_kernel", "enable_math_sdp")
    targets = ("gfx908", "gfx1100", "gfx1101", "gfx1150", "gfx1151", "gfx1200")
    effort_hours = 0.25
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
