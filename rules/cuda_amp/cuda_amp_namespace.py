"""ROC520 (cuda-amp-namespace): ``torch.cuda.amp`` (deprecated aliases) → ``torch.amp`` with
device ``"cuda"``."""

from __future__ import annotations

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
from migrator.api.syntax import keyword_arg, positional_arg, replace_call

from .._fallbacks import in_version_fallback

#: First torch release with the ``torch.amp`` form of each name (the ``torch.amp`` package, and
#: ``torch.amp.autocast`` in it, came with torch 1.12).
_SINCE = {"autocast": "1.12", "GradScaler": "2.3", "custom_fwd": "2.4", "custom_bwd": "2.4"}

#: ``torch.cuda.amp.autocast(enabled, dtype, cache_enabled)`` takes its arguments in another
#: order than ``torch.amp.autocast(device_type, dtype, enabled, cache_enabled)``: a positional
#: argument of the alias is passed by keyword in the rewrite (``autocast(False)`` would
#: otherwise become ``dtype=False``). GradScaler and custom_fwd/bwd keep their order.
_AUTOCAST_POSITIONS = ("enabled", "dtype", "cache_enabled")

_TARGETS = {
    "torch.cuda.amp.autocast": ("autocast", "positional"),
    "torch.cuda.amp.GradScaler": ("GradScaler", "positional"),
    "torch.cuda.amp.custom_fwd": ("custom_fwd", "keyword"),
    "torch.cuda.amp.custom_bwd": ("custom_bwd", "keyword"),
    "torch.cuda.amp.autocast_mode.autocast": ("autocast", "positional"),
    "torch.cuda.amp.grad_scaler.GradScaler": ("GradScaler", "positional"),
}


class CudaAmpNamespace(PythonRule):
    """
    ## What it does
    Flags `torch.cuda.amp.autocast`, `GradScaler`, `custom_fwd` and `custom_bwd`, however they
    are imported.

    ## Why it breaks on ROCm
    ROCm builds of PyTorch keep the `torch.cuda` namespace, so these still run, but they are
    deprecated aliases (a `FutureWarning` on every call since torch 2.4) of the device-generic
    `torch.amp` API. Migrating to `torch.amp` with device `"cuda"` (which on ROCm means the AMD
    GPU) removes the warning and the last `torch.cuda.amp` dependency.

    ## Example
    ```python
    with torch.cuda.amp.autocast(dtype=torch.bfloat16):
        out = model(x)
    ```

    ## Fix
    ```python
    with torch.amp.autocast("cuda", dtype=torch.bfloat16):
        out = model(x)
    ```

    ## Fix safety
    Safe: `torch.cuda.amp.autocast(...)` is defined as `torch.amp.autocast("cuda", ...)`, and the
    same holds for the other three names. The `torch.amp` forms are newer than the aliases
    (`autocast` torch ≥ 1.12, `GradScaler` ≥ 2.3, `custom_fwd`/`custom_bwd` ≥ 2.4): where the
    project supports an older torch (its dependency files, a `setup.py` assert, its CI matrix,
    tox or nox, its README), or the call sits in a branch for older torch
    (`if torch.__version__ < "2.3": ... else: ...`), no fix is offered and the finding says why.
    The rewrite changes nothing on ROCm (hygiene): `fix` applies it only when the rule is
    selected by name (`--select ROC520`, `--extend-select cuda-amp`).
    """

    code = "ROC520"
    parsing = Parsing(scope="definition", triggers=("cuda.amp", "cuda import amp"))
    name = "cuda-amp-namespace"
    category = "cuda-amp"
    severity = Severity.HYGIENE
    impact = Impact(consequence="hygiene", aggregate="none", effort_hours=0.1)
    message = "`torch.cuda.amp` is a deprecated alias of `torch.amp` with device 'cuda'"
    fix = Fixing(
        title="Use the `torch.amp` form with device 'cuda'", applicability=Applicability.SAFE
    )
    fact = "§5 torch.cuda.amp rows; [V][M1]"
    valid = [
        Valid(
            'import torch\n\ntry:\n    scaler = torch.amp.GradScaler("cuda")\n'
            "except (AttributeError, TypeError):\n    scaler = torch.cuda.amp.GradScaler()\n"
        ),
        Valid('with torch.amp.autocast("cuda"):\n    pass\n'),
        Valid("def autocast():\n    pass\nwith autocast():\n    pass\n"),
        Valid('import torch\n"""torch.cuda.amp.autocast() in a docstring"""\n'),
    ]
    invalid = [
        Invalid(
            "import torch\nwith torch.cuda.amp.autocast(dtype=torch.bfloat16):\n    pass\n",
            fixed='import torch\nwith torch.amp.autocast("cuda", dtype=torch.bfloat16):\n    pass\n',
            line=2,
            column=6,
        ),
        Invalid(
            "import torch\nwith torch.cuda.amp.autocast(scaler is not None):\n    pass\n",
            fixed='import torch\nwith torch.amp.autocast("cuda", enabled=scaler is not None):\n    pass\n',
        ),
        Invalid(  # arguments aligned under the bracket stay aligned under it
            "import torch\n\nwith torch.cuda.amp.autocast(enabled=True,\n"
            "                             dtype=torch.float16):\n    pass\n",
            fixed='import torch\n\nwith torch.amp.autocast("cuda", enabled=True,\n'
            "                        dtype=torch.float16):\n    pass\n",
        ),
        Invalid(
            "import torch\nwith torch.cuda.amp.autocast(*options):\n    pass\n",
            fixed=None,
        ),
        Invalid(
            "import torch as tt\nscaler = tt.cuda.amp.GradScaler()\n",
            fixed='import torch as tt\nscaler = tt.amp.GradScaler("cuda")\n',
        ),
        Invalid(
            "from torch.cuda.amp import autocast\nwith autocast():\n    pass\n",
            fixed='import torch\n\nwith torch.amp.autocast("cuda"):\n    pass\n',
        ),
        Invalid(
            "import torch.cuda.amp as amp\nscaler = amp.GradScaler(init_scale=2.0**16)\n",
            fixed='import torch\n\nscaler = torch.amp.GradScaler("cuda", init_scale=2.0**16)\n',
        ),
        Invalid(
            "import torch\n\n@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)\ndef f(ctx, x):\n    return x\n",
            fixed='import torch\n\n@torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)\ndef f(ctx, x):\n    return x\n',
        ),
        Invalid(
            "import torch\n\n@torch.cuda.amp.custom_bwd\ndef b(ctx, g):\n    return g\n",
            fixed='import torch\n\n@torch.amp.custom_bwd(device_type="cuda")\ndef b(ctx, g):\n    return g\n',
        ),
    ]

    def _target(self, node: cst.BaseExpression) -> tuple[str, str, str] | None:
        qualified = self.ctx.qualname(node)
        if qualified not in _TARGETS:
            return None
        name, style = _TARGETS[qualified]
        return qualified, name, style

    def visit_Call(self, node: cst.Call) -> None:
        target = self._target(node.func)
        if target is None or in_version_fallback(self.ctx, node, "torch.amp"):
            return
        qualified, name, style = target
        torch_name, imports = self.ctx.module_ref("torch")
        prepend = (
            [positional_arg('"cuda"')]
            if style == "positional"
            else [keyword_arg("device_type", '"cuda"')]
        )
        call = _autocast_keywords(node) if name == "autocast" else node
        if call is None:  # `autocast(*args)`: which parameter each value fills is unknown
            self.report(node)
            return
        replacement = replace_call(call, f"{torch_name}.amp.{name}", prepend=prepend)
        self.report(
            node,
            fix=Rewrite(
                replacement,
                imports=imports,
                remove_imports=self._removals(node.func, qualified),
                requires={"torch": _SINCE[name]} if name in _SINCE else {},
            ),
        )

    def visit_Decorator(self, node: cst.Decorator) -> None:
        if isinstance(node.decorator, cst.Call):
            return  # handled as a call
        target = self._target(node.decorator)
        if target is None or in_version_fallback(self.ctx, node, "torch.amp"):
            return
        qualified, name, _ = target
        torch_name, imports = self.ctx.module_ref("torch")
        replacement = node.with_changes(
            decorator=cst.parse_expression(f'{torch_name}.amp.{name}(device_type="cuda")')
        )
        self.report(
            node,
            fix=Rewrite(
                replacement,
                imports=imports,
                remove_imports=self._removals(node.decorator, qualified),
                requires={"torch": _SINCE[name]} if name in _SINCE else {},
            ),
        )

    def _removals(self, func: cst.BaseExpression, qualified: str) -> list[tuple[str | None, ...]]:
        return self.ctx.unused_imports(func, "torch.cuda")


def _autocast_keywords(call: cst.Call) -> cst.Call | None:
    """``call`` with its positional arguments passed by the keywords of
    ``torch.cuda.amp.autocast`` (the ``torch.amp`` form orders them differently); None when an
    argument is ``*args`` or there are more positional arguments than parameters."""
    args: list[cst.Arg] = []
    position = 0
    for argument in call.args:
        if argument.star == "*":
            return None
        if argument.keyword is None and argument.star == "":
            if position >= len(_AUTOCAST_POSITIONS):
                return None
            argument = argument.with_changes(
                keyword=cst.Name(_AUTOCAST_POSITIONS[position]),
                equal=cst.AssignEqual(
                    whitespace_before=cst.SimpleWhitespace(""),
                    whitespace_after=cst.SimpleWhitespace(""),
                ),
            )
            position += 1
        args.append(argument)
    return call.with_changes(args=args)
