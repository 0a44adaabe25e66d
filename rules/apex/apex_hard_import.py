"""ROC504 (apex-hard-import): flags imports of `apex` that are not guarded by `try: ... except
ImportError:` or an `if`."""

from __future__ import annotations

import libcst as cst

from migrator.model import Severity
from migrator.rule import Invalid, PythonRule, Valid

from .._imports import (
    guarded_imports,
    imported_modules,
    matches_package,
)
from ._shared import _data


class ApexHardImport(PythonRule):
    """
    ## What it does
    Flags imports of `apex` that are not guarded by `try: ... except ImportError:` or an `if`.

    ## Why it breaks on ROCm
    apex has no wheel for ROCm (nor, really, for CUDA): it must be built from ROCm/apex with its
    C++/HIP extensions, or taken from AMD's `rocm/pytorch` containers. `pip install apex`
    installs an unrelated package. A stock ROCm environment fails at this import.

    ## Example
    ```python
    from apex.normalization import FusedRMSNorm
    ```

    ## Manual migration
    Replace the apex pieces with PyTorch equivalents (ROC500 norms, ROC501 FusedAdam, ROC502
    amp, ROC503 SyncBatchNorm), after which the import goes away; or build ROCm/apex
    (`pip install -v --no-build-isolation --config-settings="--build-option=--cpp_ext"
    --config-settings="--build-option=--cuda_ext" .` in a ROCm/apex checkout) or use a
    `rocm/pytorch` image.

    ## References
    - ROCm/apex README
    """

    code = "ROC504"
    name = "apex-hard-import"
    category = "apex"
    severity = Severity.WARNING
    aggregate = "file"
    message = "unguarded apex import: apex must be built from ROCm/apex (PyPI `apex` is unrelated)"
    fact = "§5 apex rows; [AP2]"
    triggers = ("apex",)
    effort_hours = 1.0
    valid = [
        Valid("try:\n    import apex\nexcept ImportError:\n    apex = None\n"),
        Valid("import apexpy\nfrom my.apex import thing\n"),
    ]
    invalid = [
        Invalid("from apex.normalization import FusedRMSNorm\n", line=1, column=1),
        Invalid("import apex.amp as amp\n"),
    ]

    def visit_Import(self, node: cst.Import) -> None:
        self._check(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._check(node)

    def _check(self, node: cst.Import | cst.ImportFrom) -> None:
        for module in imported_modules(node):
            if matches_package(module, _data()["packages"]) and id(node) not in guarded_imports(
                self.ctx.module
            ):
                self.report(node)
                return
