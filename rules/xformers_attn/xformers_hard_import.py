"""ROC411 (xformers-hard-import): flags imports of `xformers` that are not guarded by `try: ...
except ImportError:` or an `if` (availability check)."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Parsing, Severity, Valid

from .._imports import UnguardedPackageImport
from ._table import _data


class XformersHardImport(UnguardedPackageImport):
    """
    ## What it does
    Flags imports of `xformers` that are not guarded by `try: ... except ImportError:` or an
    `if` (availability check).

    ## Why it breaks on ROCm
    PyPI's xformers wheels are CUDA builds. ROCm wheels exist only on xformers' own index
    (`whl/rocm6.1` since 0.0.28; the current README lists an experimental `rocm7.1` index), built
    on the composable-kernel (CK) operators, and they are labelled experimental.

    ## Example
    ```python
    import xformers.ops as xops
    ```

    ## Manual migration
    Install the ROCm wheel from xformers' index matching the ROCm version of the torch build, or
    make the import optional and fall back to `torch.nn.functional.scaled_dot_product_attention`
    (ROC410 does both where every use of the import is a `memory_efficient_attention` call with
    4-D inputs).

    ## References
    - facebookresearch/xformers README (installation, ROCm)
    """

    code = "ROC411"
    parsing = Parsing(scope="statement", triggers=("import xformers", "from xformers"))
    name = "xformers-hard-import"
    category = "xformers"
    severity = Severity.WARNING
    #: the file's uses of the package that offer no fix are sites of this import (one problem)
    impact = Impact(
        consequence="crash-import",
        aggregate="file",
        problem="xformers-unguarded-import",
        effort_hours=1.0,
    )
    message = "unguarded xformers import: ROCm wheels are experimental and only on xformers' index"
    fact = "§4d §9 xformers row; [X3]"
    valid = [
        Valid("try:\n    import xformers.ops as xops\nexcept ImportError:\n    xops = None\n"),
        Valid("if is_xformers_available():\n    import xformers\n"),
        Valid("import xformers_utils\n# import xformers\n"),
    ]
    invalid = [
        Invalid("import xformers.ops as xops\n", line=1, column=1),
        Invalid("from xformers.ops import memory_efficient_attention\n"),
        Invalid("def enable():\n    import xformers\n    return xformers.__version__\n", line=2),
    ]

    def packages(self) -> list[str]:
        packages: list[str] = _data()["packages"]
        return packages
