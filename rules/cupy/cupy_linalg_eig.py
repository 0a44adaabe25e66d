"""ROC530 (cupy-linalg-eig): ``cupy.linalg.eig`` and ``cupy.linalg.eigvals`` (the general,
non-symmetric eigenvalue solver) raise on a ROCm build of CuPy."""

from __future__ import annotations

from migrator.api import Impact, Invalid, QualifiedCallRule, Severity, Valid


class CupyLinalgEig(QualifiedCallRule):
    """
    ## What it does
    Flags calls of `cupy.linalg.eig` and `cupy.linalg.eigvals` (the eigenvalue solver for a
    general, non-symmetric matrix), however `cupy` or the function is imported.

    ## Why it breaks on ROCm
    Both functions (new in CuPy 14) call cuSOLVER's `geev`, and CuPy's ROCm build has no
    counterpart: on a ROCm build the call raises (`RuntimeError: geev is not available`) before
    any work is done. CuPy's own test suite skips them there ("hip does not support eig"). The
    symmetric/Hermitian solvers `cupy.linalg.eigh` and `eigvalsh` do run on ROCm (rocSOLVER).

    ## Example
    ```python
    import cupy as cp

    w, v = cp.linalg.eig(a)
    ```

    ## Manual migration
    - If the matrix is symmetric (or Hermitian), call `cupy.linalg.eigh` / `eigvalsh`, which
      run on ROCm and are faster on NVIDIA too.
    - Otherwise compute on the host on ROCm builds (CuPy's own signal code does this):
      `w, v = numpy.linalg.eig(cupy.asnumpy(a))`, then `cupy.asarray(w)`, `cupy.asarray(v)`,
      behind `if cupy.cuda.runtime.is_hip:` so NVIDIA keeps the GPU solver.

    ## Fix safety
    No automatic fix: the host path moves data off the GPU, and `eigh` is correct only for
    symmetric or Hermitian input, which a scanner cannot know.

    ## References
    - CuPy `cupy/linalg/_eigenvalue.py` (`_geev`) and `cupyx/_cusolver.pyx`
      (`_available_hip_version["geev"]`)
    - CuPy `tests/cupy_tests/linalg_tests/test_eigenvalue.py`
    """

    code = "ROC530"
    name = "cupy-linalg-eig"
    category = "cupy"
    severity = Severity.ERROR
    #: inside CuPy itself these calls are its own API, not a migration problem
    impact = Impact(consequence="crash-path", effort_hours=1.0, dependency="cupy")
    message = "`cupy.linalg.eig` and `eigvals` raise on a ROCm build of CuPy (no `geev` solver)"
    fact = "§9 cupy.linalg.eig; [CP1]"
    #: The CuPy functions built on cuSOLVER's ``geev``, which CuPy's ROCm build does not provide.
    calls = {
        "cupy.linalg.eig": "`{name}` raises on a ROCm build of CuPy (no `geev` solver)",
        "cupy.linalg.eigvals": "`{name}` raises on a ROCm build of CuPy (no `geev` solver)",
    }
    valid = [
        Valid("import cupy as cp\nw, v = cp.linalg.eigh(a)\n"),
        Valid("import numpy as np\nw, v = np.linalg.eig(a)\n"),
        Valid("import cupy\nfrom numpy.linalg import eig\nw, v = eig(cupy.asnumpy(a))\n"),
        Valid("import cupy\n\ndef eig(a):\n    return a\n\nw = eig(cupy.ones(3))\n"),
        Valid(
            "import cupy as cp\n\nif cp.cuda.runtime.is_hip:\n    w = None\nelse:\n    w = cp.linalg.eigvals(a)\n"
        ),
    ]
    invalid = [
        Invalid("import cupy as cp\nw, v = cp.linalg.eig(a)\n", line=2, column=8),
        Invalid("from cupy.linalg import eigvals as ev\nw = ev(a)\n", line=2),
        Invalid("import cupy.linalg\nw = cupy.linalg.eigvals(a)\n"),
        Invalid("from cupy import linalg\nw, v = linalg.eig(a)\n"),
    ]
