"""ROC702: ``CUDA_HOME`` / ``CUDA_PATH`` read in Python."""

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
    Rewrite,
    Severity,
    Valid,
)
from migrator.api.syntax import string_value

from ._access import _GETTERS, EnvAccess, _EnvAccessRule, _quote


class CudaHomeLookup(_EnvAccessRule):
    """
    ## What it does
    Flags reads (and writes) of `CUDA_HOME` / `CUDA_PATH` through `os.environ` or
    `os.getenv`.

    ## Why it breaks on ROCm
    ROCm installs are not found through `CUDA_HOME`/`CUDA_PATH`: PyTorch's extension builder
    looks for `ROCM_HOME`, then `ROCM_PATH`, then the location of `hipcc`, then `/opt/rocm`.
    Code that locates the toolkit through the CUDA names finds nothing on ROCm and skips (or
    fails) JIT kernel builds.

    ## Example
    ```python
    import os

    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    ```

    ## Fix
    ```python
    import os

    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or os.environ.get(
        "ROCM_HOME"
    ) or os.environ.get("ROCM_PATH")
    ```

    ## Fix safety
    Unsafe. On an NVIDIA machine where `CUDA_HOME` is unset (or empty) but `ROCM_HOME`/
    `ROCM_PATH` is set, the result changes; an empty `CUDA_HOME` now falls through. What the
    code does with the path next (`bin/nvcc`, `lib64/libcudart.so`) does not exist under a
    ROCm root and must be reviewed. Reads with a default, subscript reads and writes are
    reported without a fix.

    ## References
    - pytorch/pytorch `torch/utils/cpp_extension.py` (`_find_rocm_home`)
    """

    code = "ROC702"
    name = "cuda-home-lookup"
    category = "env-var"
    severity = Severity.WARNING
    impact = Impact(consequence="crash-path", aggregate="file", effort_hours=0.5)
    message = "`CUDA_HOME`/`CUDA_PATH` do not locate ROCm; ROCm uses `ROCM_HOME`/`ROCM_PATH`"
    fix = Fixing(
        title="Fall back to `ROCM_HOME` and `ROCM_PATH`", applicability=Applicability.UNSAFE
    )
    fact = "§6 CUDA_HOME / CUDA_PATH; [P9]"
    parsing = Parsing(triggers=("CUDA_HOME", "CUDA_PATH"))
    variables = frozenset({"CUDA_HOME", "CUDA_PATH", "ROCM_HOME", "ROCM_PATH"})
    valid = [
        Valid('import os\n\nhome = os.environ.get("ROCM_HOME") or os.environ.get("CUDA_HOME")\n'),
        Valid("from torch.utils.cpp_extension import CUDA_HOME\n\nprint(CUDA_HOME)\n"),
        Valid('"""Reads os.environ.get("CUDA_HOME")."""\n'),
        Valid('def getenv(name):\n    return name\n\ngetenv("CUDA_HOME")\n'),
    ]
    invalid = [
        Invalid(
            'import os\n\nhome = os.environ.get("CUDA_HOME")\n',
            fixed='import os\n\nhome = os.environ.get("CUDA_HOME") or os.environ.get("ROCM_HOME") '
            'or os.environ.get("ROCM_PATH")\n',
            line=3,
            column=8,
        ),
        Invalid(
            'import os\n\nh = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")\n',
            fixed='import os\n\nh = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") '
            'or os.environ.get("ROCM_HOME") or os.environ.get("ROCM_PATH")\n',
            count=1,
        ),
        Invalid(
            "from os import getenv\n\nnvcc = getenv('CUDA_HOME') + '/bin/nvcc'\n",
            fixed="from os import getenv\n\nnvcc = (getenv('CUDA_HOME') or getenv('ROCM_HOME') "
            "or getenv('ROCM_PATH')) + '/bin/nvcc'\n",
        ),
        Invalid(
            'import os\n\nhome = os.environ.get("CUDA_HOME") or "/usr/local/cuda"\n',
            fixed='import os\n\nhome = os.environ.get("CUDA_HOME") or os.environ.get("ROCM_HOME") '
            'or os.environ.get("ROCM_PATH") or "/usr/local/cuda"\n',
        ),
        Invalid('import os\n\nhome = os.environ.get("CUDA_HOME", "/usr/local/cuda")\n'),
        Invalid('import os\n\nhome = os.environ["CUDA_HOME"]\n'),
        Invalid('import os\n\nif "CUDA_HOME" in os.environ:\n    pass\n'),
        Invalid('import os\n\nos.environ["CUDA_HOME"] = "/usr/local/cuda"\n'),
    ]

    _ROCM = frozenset({"ROCM_HOME", "ROCM_PATH"})
    _CUDA = frozenset({"CUDA_HOME", "CUDA_PATH"})

    def __init__(self, ctx: PythonContext) -> None:
        super().__init__(ctx)
        self._bare: set[int] = set()
        self._chained: set[int] = set()

    # contexts where ``a or b or c`` needs no parentheses
    def visit_Assign(self, node: cst.Assign) -> None:
        self._bare.add(id(node.value))
        super().visit_Assign(node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bare.add(id(node.value))

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self._bare.add(id(node.value))

    def visit_Arg(self, node: cst.Arg) -> None:
        self._bare.add(id(node.value))
        super().visit_Arg(node)

    def _read(self, node: cst.BaseExpression) -> tuple[str, cst.Call] | None:
        """(name, call) when ``node`` is ``os.environ.get("X")`` / ``os.getenv("X")`` with no
        default."""
        if not isinstance(node, cst.Call) or len(node.args) != 1 or node.args[0].keyword:
            return None
        if _GETTERS.get(self.ctx.call_name(node) or "") != "get":
            return None
        name = string_value(node.args[0].value)
        return (name, node) if name is not None else None

    def _operands(self, node: cst.BaseExpression) -> list[cst.BaseExpression]:
        if (
            isinstance(node, cst.BooleanOperation)
            and isinstance(node.operator, cst.Or)
            and not node.lpar
        ):
            return [*self._operands(node.left), *self._operands(node.right)]
        return [node]

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        if id(node) in self._chained or not isinstance(node.operator, cst.Or):
            return
        operands = [*self._operands(node.left), *self._operands(node.right)]
        self._mark_chain(node)
        reads = [(index, self._read(operand)) for index, operand in enumerate(operands)]
        names = {found[0] for _, found in reads if found is not None}
        for operand in operands:
            self._chained.add(id(operand))
        if names & self._ROCM or not names & self._CUDA:
            return
        last = max(index for index, found in reads if found and found[0] in self._CUDA)
        found = reads[last][1]
        assert found is not None
        call = found[1]
        extra = [self._rocm_read(call, name) for name in ("ROCM_HOME", "ROCM_PATH")]
        new_operands = [*operands[: last + 1], *extra, *operands[last + 1 :]]
        replacement = self._chain(new_operands).with_changes(lpar=node.lpar, rpar=node.rpar)
        self.report(node, message=self._message(), fix=Rewrite(replacement))

    def _mark_chain(self, node: cst.BaseExpression) -> None:
        if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
            self._chained.add(id(node))
            if not node.lpar:
                self._mark_chain(node.left)
                self._mark_chain(node.right)

    def _rocm_read(self, call: cst.Call, name: str) -> cst.Call:
        quote = _quote(call.args[0].value)
        return cast(
            cst.Call, cst.parse_expression(f"{self.ctx.code(call.func)}({quote}{name}{quote})")
        )

    def _chain(self, operands: list[cst.BaseExpression]) -> cst.BooleanOperation:
        result = operands[0]
        for operand in operands[1:]:
            result = cst.BooleanOperation(
                left=result,
                operator=cst.Or(
                    whitespace_before=cst.SimpleWhitespace(" "),
                    whitespace_after=cst.SimpleWhitespace(" "),
                ),
                right=operand,
            )
        return cast(cst.BooleanOperation, result)

    def _message(self, detail: str = "") -> str:
        text = (
            "`CUDA_HOME`/`CUDA_PATH` do not locate ROCm (torch looks at `ROCM_HOME`, "
            "`ROCM_PATH`, hipcc, /opt/rocm)"
        )
        return text + (
            f"; {detail}" if detail else "; review what the path is used for (nvcc, lib64)"
        )

    def on_access(self, access: EnvAccess) -> None:
        if access.name not in self._CUDA or id(access.node) in self._chained:
            return
        if access.kind in {"pop", "del"}:
            return
        if access.kind == "get" and not access.has_default and access.call is not None:
            call = access.call
            chain = self._chain(
                [call, *(self._rocm_read(call, name) for name in ("ROCM_HOME", "ROCM_PATH"))]
            )
            if id(call) not in self._bare:
                chain = chain.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            self.report(call, message=self._message(), fix=Rewrite(chain))
            return
        if access.kind in {"assign", "assign-other", "setdefault", "putenv", "dict-key"}:
            detail = "set `ROCM_PATH` (usually /opt/rocm) for ROCm builds"
        elif access.kind == "subscript":
            detail = "`os.environ[...]` raises KeyError where only `ROCM_PATH` is set"
        else:
            detail = "also look at `ROCM_HOME`/`ROCM_PATH`"
        self.report(access.node, message=self._message(detail))
