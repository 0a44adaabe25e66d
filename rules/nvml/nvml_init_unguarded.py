"""ROC201 (nvml-init-unguarded): flags `nvmlInit()` / `nvmlInitWithFlags()` calls that no enclosing
`try` protects (no handler for `NVMLError`, `Exception` or a bare `except`)."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, Problem, PythonContext, Severity, Valid

from .._gpu_tools_util import ScopeTracking
from ._shared import (
    _IMPORT_FAILS,
    _nvml_error_handler,
    _NvmlResolver,
    _table,
    init_fails_in,
    init_problem,
)

_NVML_GUARDS = frozenset({"Exception", "BaseException", "*", "OSError", "RuntimeError"})


class NvmlInitUnguarded(ScopeTracking, _NvmlResolver):
    """
    ## What it does
    Flags `nvmlInit()` / `nvmlInitWithFlags()` calls that no enclosing `try` protects (no
    handler for `NVMLError`, `Exception` or a bare `except`).

    ## Why it breaks on ROCm
    There is no NVML library on ROCm, so `nvmlInit()` raises `NVMLError_LibraryNotFound`.
    At module level that makes the module fail to import; inside a function the call path
    crashes (for example a `/health` endpoint or a logging hook).

    ## Example
    ```python
    import pynvml

    pynvml.nvmlInit()  # NVMLError_LibraryNotFound on ROCm
    ```

    ## Manual migration
    Use the portable `torch.cuda` telemetry, or initialise amdsmi on ROCm builds:
    ```python
    import torch

    if torch.version.hip:
        import amdsmi
        amdsmi.amdsmi_init()
    else:
        import pynvml
        pynvml.nvmlInit()
    ```
    At the very least guard the call (`except pynvml.NVMLError:`) and fall back.

    ## References
    - ROCm/amdsmi `py-interface/README.md` (`amdsmi_init`, `amdsmi_shut_down`)
    """

    code = "ROC201"
    name = "nvml-init-unguarded"
    category = "nvml"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", effort_hours=1.0)
    message = "`nvmlInit()` raises NVMLError_LibraryNotFound on ROCm (no NVML library)"
    fact = "§3a nvmlInit row, §10 item 2; [A1][P2]"
    parsing = Parsing(triggers=("nvmlInit",))
    valid = [
        Valid(
            "import pynvml\n\ntry:\n    pynvml.nvmlInit()\nexcept pynvml.NVMLError:\n"
            "    pynvml = None\n"
        ),
        Valid("def nvmlInit():\n    pass\n\nnvmlInit()\n"),
        Valid('import pynvml\n"""pynvml.nvmlInit() in a docstring"""\n'),
        Valid("from pynvml import *\n\ndef nvmlInit():\n    pass\n\nnvmlInit()\n"),
        Valid("import amdsmi\nimport pynvml\n\npynvml.nvmlInit()\n"),
    ]
    invalid = [
        Invalid("import pynvml\n\npynvml.nvmlInit()\n", line=3, column=1),
        Invalid("import pynvml as nv\n\ndef stats():\n    nv.nvmlInit()\n"),
        Invalid("from pynvml import nvmlInit\n\nnvmlInit()\n"),
        Invalid("from pynvml import *\n\nnvmlInit()\n"),
        Invalid("from py3nvml.py3nvml import nvmlInitWithFlags\n\nnvmlInitWithFlags(0)\n"),
        Invalid(
            "import pynvml\n\ntry:\n    pynvml.nvmlInit()\nexcept pynvml.NVMLError:\n"
            "    log('no NVML')\n    raise\n"
        ),
        Invalid(
            "try:\n    import pynvml\nexcept ImportError:\n    pynvml = None\n\n"
            "def stats():\n    pynvml.nvmlInit()\n"
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        function = self.nvml_function(node.func)
        if function not in _table()["init"]:
            return
        if self.guarded_by(_NVML_GUARDS, prefix="NVMLError"):
            return
        if _reraised_here(self.ctx, node):
            message = (
                f"`{function}()` raises NVMLError_LibraryNotFound on ROCm (no NVML library); the "
                "handler here only reports it and re-raises, so the run stops; use torch.cuda "
                "telemetry or `amdsmi.amdsmi_init()`"
            )
        elif self.in_function:
            message = (
                f"`{function}()` raises NVMLError_LibraryNotFound on ROCm (no NVML library) "
                "and nothing catches it; use torch.cuda telemetry or `amdsmi.amdsmi_init()`"
            )
            # the queries after it in this function never run on ROCm: one problem with it
            scope = self.ctx.scope_path(node)
            # the walk's position (nodes visited so far): a query visited later comes after it
            init_fails_in(self.ctx).setdefault(scope, len(self.ctx.nodes))
            self.report(node, message=message, problem=Problem(key=init_problem(scope)))
            return
        else:
            message = (
                f"`{function}()` at module level raises NVMLError_LibraryNotFound on ROCm, so "
                "importing or running this file fails; use torch.cuda telemetry or "
                "`amdsmi.amdsmi_init()`"
            )
            self.report(node, message=message, problem=Problem(key=_IMPORT_FAILS))
            return
        self.report(node, message=message)


def _reraised_here(ctx: PythonContext, node: cst.CSTNode) -> bool:
    """Whether a ``try`` around ``node`` catches an NVML error (its handler re-raises, or the
    call would count as guarded): the message then says the handler only reports it."""
    child: cst.CSTNode = node
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.Try) and ancestor.body is child:
            if any(_nvml_error_handler(handler) for handler in ancestor.handlers):
                return True
        child = ancestor
    return False
