"""What ROC150-ROC152 share: which SDPA backends a ``sdp_kernel``/``sdpa_kernel`` call (or a
``torch.backends.cuda.enable_*_sdp`` flag) selects."""

from __future__ import annotations

import libcst as cst

from migrator.api import PythonContext
from migrator.api.syntax import arg, has_star_args, literal_value

from .._rocm_guards import unreachable_on_rocm
from .._tree import Tree

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
