"""What ROC900 and ROC901 share: ``_NoEquivalentImport``, the import matcher of both."""

from __future__ import annotations

from typing import Any, ClassVar

import libcst as cst

from migrator.api import Impact, Parsing, Problem, PythonContext
from migrator.api.syntax import dotted_name

from .._gpu_tools_util import IMPORT_GUARDS, ScopeTracking
from .._requirements import packages


def _package_for(module: str) -> dict[str, Any] | None:
    """The table entry whose module list covers ``module`` (itself or a parent)."""
    for entry in packages()["imports"].values():
        for name in entry["modules"]:
            if module == name or module.startswith(name + "."):
                return dict(entry)
    return None


def _is_type_checking(test: cst.BaseExpression) -> bool:
    return dotted_name(test) in {"TYPE_CHECKING", "typing.TYPE_CHECKING"}


def _is_main_check(test: cst.BaseExpression) -> bool:
    return (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and test.left.value == "__name__"
    )


class _NoEquivalentImport(ScopeTracking, abstract=True):
    """Finds imports (and ``numba.cuda`` attribute uses) of packages without a ROCm build and
    reports those whose import is unconditional (``unconditional = True``) or optional."""

    unconditional: ClassVar[bool]
    #: one package imported several ways in one file is one problem (grouped by package)
    impact = Impact(aggregate="file")
    # its findings are import statements, and the first `numba.cuda` use through `import numba`
    # (that trigger is read with the uses of the names its import binds)
    parsing = Parsing(
        scope="statement",
        triggers=(
            "tensorrt",
            "pycuda",
            "import cuda",
            "from cuda",
            "numba",
            "nvidia.dali",
            "import dali",
        ),
        statement_requires=("import",),
        unpaired_triggers=("numba",),
    )
    category = "no-rocm-equivalent"
    fact = "§9 tensorrt, pycuda/cuda-python, numba.cuda, nvidia-dali rows; [R1][K3]"

    def __init__(self, ctx: PythonContext) -> None:
        super().__init__(ctx)
        self._type_checking = 0
        self._main_blocks = 0
        self._attribute_reported = False

    def visit_If(self, node: cst.If) -> None:
        super().visit_If(node)
        if _is_type_checking(node.test):
            self._type_checking += 1
        if _is_main_check(node.test):
            self._main_blocks += 1

    def leave_If(self, original_node: cst.If) -> None:
        super().leave_If(original_node)
        if _is_type_checking(original_node.test):
            self._type_checking -= 1
        if _is_main_check(original_node.test):
            self._main_blocks -= 1

    def _is_unconditional(self) -> bool:
        if self.in_function or self.guarded_by(IMPORT_GUARDS):
            return False
        # an `if __name__ == "__main__":` block runs whenever the script does
        return self._if_depth <= self._main_blocks

    def _check(self, node: cst.CSTNode, module: str) -> None:
        if self._type_checking:
            return
        entry = _package_for(module)
        if entry is None:
            return
        unconditional = self._is_unconditional()
        if unconditional != self.unconditional:
            return
        if unconditional:
            message = (
                f"`{module}` ({entry['label']}) has no ROCm build: this import fails on ROCm "
                f"and nothing falls back; port to {entry['alternative']}"
            )
        else:
            message = (
                f"`{module}` ({entry['label']}) has no ROCm build: on ROCm this optional path "
                f"is unavailable; port it to {entry['alternative']}"
            )
        self.report(node, message=message, problem=Problem(group=str(entry["label"])))

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            module = dotted_name(alias.name)
            if module is not None and _package_for(module) is not None:
                self._check(node, module)
                return

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None:
            return
        module = dotted_name(node.module)
        if module is None:
            return
        if _package_for(module) is not None:
            self._check(node, module)
            return
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            if isinstance(alias.name, cst.Name):
                full = f"{module}.{alias.name.value}"
                if self._from_binding(module, alias.name.value):
                    self._check(node, full)
                    return

    def _from_binding(self, module: str, name: str) -> bool:
        """``from numba import cuda``, ``from nvidia import dali``, ``from cuda import cudart``."""
        if module == "cuda":
            table = packages()["imports"]["cuda-python"]
            return name in table["from_cuda"]
        return _package_for(f"{module}.{name}") is not None

    def visit_Attribute(self, node: cst.Attribute) -> None:
        # ``import numba`` then ``@numba.cuda.jit``: report the first use of the package
        if self._attribute_reported:
            return
        qualified = self.ctx.qualname(node)
        if qualified == "numba.cuda":
            head = node.value
            if isinstance(head, cst.Name) and self.ctx.imports.bindings.get(head.value) == "numba":
                self._attribute_reported = True
                self._check(node, qualified)
