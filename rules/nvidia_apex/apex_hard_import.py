"""ROC504 (apex-hard-import): flags imports of `apex` that are not guarded by `try: ... except
ImportError:` or an `if`."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Parsing, Severity, Valid

from .._imports import UnguardedPackageImport
from ._shared import _data


class ApexHardImport(UnguardedPackageImport):
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
    #: the file's uses of the package that offer no fix are sites of this import (one problem)
    impact = Impact(
        consequence="crash-import",
        aggregate="file",
        problem="apex-unguarded-import",
        effort_hours=1.0,
    )
    message = "unguarded apex import: apex must be built from ROCm/apex (PyPI `apex` is unrelated)"
    fact = "§5 apex rows; [AP2]"
    parsing = Parsing(triggers=("apex",), scope="statement")
    valid = [
        Valid("try:\n    import apex\nexcept ImportError:\n    apex = None\n"),
        Valid("import apexpy\nfrom my.apex import thing\n"),
    ]
    invalid = [
        Invalid("from apex.normalization import FusedRMSNorm\n", line=1, column=1),
        Invalid("import apex.amp as amp\n"),
    ]

    def packages(self) -> list[str]:
        packages: list[str] = _data()["packages"]
        return packages
