"""ROC540 (openmm-cuda-platform): OpenMM's ``"CUDA"`` platform asked for by name, which a ROCm
machine does not have."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid
from migrator.api.syntax import arg, string_value

#: The modules OpenMM's Python API is imported from (``simtk.openmm`` before OpenMM 7.6).
_MODULES = ("openmm.", "simtk.openmm.")
_METHOD = "Platform.getPlatformByName"


def _cuda_literal(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """The ``"CUDA"`` literal the expression evaluates to: the literal itself, or a branch of a
    conditional expression (``"CUDA" if use_gpu else "CPU"``)."""
    if string_value(node) == "CUDA":
        return node
    if isinstance(node, cst.IfExp):
        return _cuda_literal(node.body) or _cuda_literal(node.orelse)
    return None


class OpenmmCudaPlatform(PythonRule):
    """
    ## What it does
    Flags `Platform.getPlatformByName("CUDA")` in OpenMM (`openmm` or `simtk.openmm`), also when
    the name is one branch of a conditional expression (`"CUDA" if use_gpu else "CPU"`).

    ## Why it breaks on ROCm
    OpenMM's CUDA platform is a plugin linked against the CUDA driver: on an AMD machine it does
    not load, so no platform is registered under that name and `getPlatformByName("CUDA")`
    raises `OpenMMException` ("There is no registered Platform called CUDA"). OpenMM runs on AMD
    GPUs through its HIP platform (in OpenMM since 8.2; packaged as `openmm-hip` on conda-forge,
    `openmm-hip-6` on PyPI) or its OpenCL platform.

    ## Example
    ```python
    import openmm

    platform = openmm.Platform.getPlatformByName("CUDA" if use_gpu else "CPU")
    ```

    ## Manual migration
    Choose among the platforms that are registered: `"HIP"` (with the HIP plugin installed) or
    `"OpenCL"` on AMD GPUs, `"CUDA"` on NVIDIA, for example
    `names = [Platform.getPlatform(i).getName() for i in range(Platform.getNumPlatforms())]`;
    CUDA-only platform properties (`CudaPrecision`, `CudaDeviceIndex`) have `Hip*` / `OpenCL*`
    counterparts.

    ## Fix safety
    No automatic fix: which platform to prefer, and whether the HIP plugin is installed, is the
    project's choice.

    ## Known problems
    A platform name kept in a variable or read from a configuration is not followed.

    ## References
    - rocm-facts.md §9 (`openmm` row)
    """

    code = "ROC540"
    name = "openmm-cuda-platform"
    category = "openmm"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", effort_hours=1.0)
    message = 'OpenMM has no CUDA platform on AMD GPUs: `getPlatformByName("CUDA")` raises'
    fact = "§9 openmm row; [K9]"
    parsing = Parsing(triggers=("getPlatformByName",))
    valid = [
        Valid('import openmm\n\nplatform = openmm.Platform.getPlatformByName("HIP")\n'),
        Valid('import openmm\n\nplatform = openmm.Platform.getPlatformByName("CPU")\n'),
        Valid('"""Use Platform.getPlatformByName("CUDA") on NVIDIA."""\n'),
        # not OpenMM's Platform
        Valid('from mylib import Platform\n\nPlatform.getPlatformByName("CUDA")\n'),
    ]
    invalid = [
        Invalid(
            "import openmm\n\n"
            'platform = openmm.Platform.getPlatformByName("CUDA" if use_gpu else "CPU")\n',
            line=3,
            column=46,
        ),
        Invalid(
            "from simtk.openmm import Platform\n\nplatform = Platform.getPlatformByName('CUDA')\n",
            line=3,
        ),
        Invalid(
            "import openmm as mm\n\n"
            'sim = Simulation(top, system, integ, mm.Platform.getPlatformByName("CUDA"), props)\n'
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.call_name(node)
        if qualified is None or not qualified.endswith(_METHOD):
            return
        if not any(qualified.startswith(module) for module in _MODULES):
            return
        name = arg(node, "name", 0)
        if name is None:
            return
        literal = _cuda_literal(name.value)
        if literal is None:
            return
        self.report(
            literal,
            message=(
                'OpenMM has no "CUDA" platform on AMD GPUs: `getPlatformByName("CUDA")` raises; '
                'ask for "HIP" (OpenMM >= 8.2 with `openmm-hip`) or "OpenCL" there, choosing among '
                "the registered platforms"
            ),
        )
