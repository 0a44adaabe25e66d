"""ROC402: unguarded imports of ``flash_attn`` and ``flash_attn_interface``."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, Problem, PythonRule, Severity, Valid

from .._imports import guarded_imports, imported_modules, matches_package
from ._table import _data
from ._unguarded import UNGUARDED_FLASH_ATTN


class FlashAttnHardImport(PythonRule):
    """
    ## What it does
    Flags imports of `flash_attn` (and FlashAttention-3's `flash_attn_interface`) that are not
    guarded by `try: ... except ImportError:` or an `if` (availability check).

    ## Why it breaks on ROCm
    PyPI's flash-attn wheels are built for CUDA; on ROCm the package exists only as a source
    build of ROCm/flash-attention (CK backend for MI200/MI300/MI350; Triton backend for others),
    and FlashAttention-3 not at all. An unguarded import makes the module fail with
    `ImportError` on a stock ROCm install.

    ## Example
    ```python
    from flash_attn import flash_attn_func
    ```

    ## Manual migration
    Either build ROCm/flash-attention for the target GPUs (`GPU_ARCHS="gfx90a;gfx942"`), or make
    the import optional and fall back to `torch.nn.functional.scaled_dot_product_attention`
    (ROC400 does both where every use of the import is a call with an SDPA form):
    ```python
    try:
        from flash_attn import flash_attn_func
    except ImportError:
        flash_attn_func = None
    ```

    ## References
    - ROCm/flash-attention README and setup.py
    """

    code = "ROC402"
    # its findings are import statements
    parsing = Parsing(scope="statement", triggers=("flash_attn",), statement_requires=("import",))
    impact = Impact(
        dependency="flash_attn",
        consequence="crash-import",
        aggregate="file",
        effort_hours=2.0,
        blocker=True,
    )
    name = "flash-attn-hard-import"
    category = "flash-attn"
    severity = Severity.ERROR
    message = "unguarded flash-attn import: no ROCm wheel on PyPI, so the module fails to import"
    fact = "§4a §9 flash-attn row; [F1][F2]"
    valid = [
        Valid("try:\n    import flash_attn\nexcept ImportError:\n    flash_attn = None\n"),
        Valid(
            "from transformers.utils import is_flash_attn_2_available\n"
            "if is_flash_attn_2_available():\n"
            "    from flash_attn import flash_attn_func\n"
        ),
        Valid("import flash_attention_utils\n# import flash_attn\n"),
    ]
    invalid = [
        Invalid("from flash_attn import flash_attn_func\n", line=1, column=1),
        Invalid("import flash_attn.layers.rotary as rotary\n"),
        Invalid("def f():\n    from flash_attn_interface import flash_attn_func\n", line=2),
        Invalid(
            "try:\n    import flash_attn\nexcept KeyError:\n    pass\n",
            line=2,
        ),
    ]

    def visit_Import(self, node: cst.Import) -> None:
        self._check(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._check(node)

    def _check(self, node: cst.Import | cst.ImportFrom) -> None:
        data = _data()["flash_attn"]
        for module in imported_modules(node):
            fa3 = matches_package(module, data["fa3_packages"])
            fa2 = matches_package(module, data["packages"])
            if not (fa2 or fa3) or id(node) in guarded_imports(self.ctx.module):
                continue
            if fa3:
                message = (
                    f"unguarded import of `{module}` (FlashAttention-3): built for Hopper (sm90) "
                    "only, it has no ROCm build"
                )
            else:
                message = (
                    f"unguarded import of `{module}`: PyPI flash-attn wheels are CUDA builds; "
                    "build ROCm/flash-attention or fall back to torch SDPA"
                )
            # the import and the file's uses that offer no rewrite are one problem
            self.report(node, message=message, problem=Problem(key=UNGUARDED_FLASH_ATTN))
            return
