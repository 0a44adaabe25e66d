"""Whether a file imports flash-attn without a guard: such an import and every use in the file
that offers no rewrite are one problem (the dependency), reported once at the import."""

from __future__ import annotations

import libcst as cst

from .._imports import guarded_imports, imported_modules, matches_package
from ._table import _data

#: The cross-rule problem key of an unguarded flash-attn dependency in one file.
UNGUARDED_FLASH_ATTN = "flash-attn-unguarded-import"


def unguarded_flash_attn(module: cst.Module) -> bool:
    """Whether ``module`` imports flash-attn (FA2 or FA3) somewhere with no guard around it."""
    data = _data()["flash_attn"]
    guarded = guarded_imports(module)
    for node in _imports(module):
        if id(node) in guarded:
            continue
        for name in imported_modules(node):
            if matches_package(name, data["packages"]) or matches_package(
                name, data["fa3_packages"]
            ):
                return True
    return False


def _imports(module: cst.Module) -> list[cst.Import | cst.ImportFrom]:
    found: list[cst.Import | cst.ImportFrom] = []

    class Collect(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> None:
            found.append(node)

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            found.append(node)

    module.visit(Collect())
    return found
