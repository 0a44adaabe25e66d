"""ROC200 (nvml-import): flags imports of the NVML bindings."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, Problem, PythonContext, Severity, Valid
from migrator.api.syntax import dotted_name

from .._gpu_tools_util import ScopeTracking
from ._shared import _IMPORT_FAILS, _imports_amdsmi, _init_at_import, _is_binding


class NvmlImport(ScopeTracking):
    """
    ## What it does
    Flags imports of the NVML bindings: `pynvml` (PyPI `nvidia-ml-py` / `pynvml`), `py3nvml`
    and the `nvidia_smi` module of `nvidia-ml-py3`.

    ## Why it breaks on ROCm
    NVML is the NVIDIA driver's management library. On ROCm there is no `libnvidia-ml.so`: the
    package may still import, but `nvmlInit()` raises `NVMLError_LibraryNotFound` and every
    query after it fails, so GPU telemetry built on it is gone. The ROCm counterpart is the
    `amdsmi` Python library shipped with ROCm; PyTorch on ROCm itself imports `amdsmi`
    instead of `pynvml` for `torch.cuda.utilization()` and friends.

    ## Example
    ```python
    import pynvml

    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    used = pynvml.nvmlDeviceGetMemoryInfo(handle).used
    ```

    ## Manual migration
    Prefer the portable `torch.cuda` telemetry (`mem_get_info`, `device_memory_used`,
    `utilization`, `memory_usage`, `temperature`, `power_draw`), which uses NVML on CUDA
    builds and amdsmi on ROCm builds. For data torch does not expose, add an `amdsmi` branch
    (`amdsmi_init()`, `amdsmi_get_processor_handles()`, ...; see ROC202 for each call).

    ## Known problems
    Reported once per file (the first NVML import). A file that also imports `amdsmi` is
    treated as already ported and is not reported. Where the module calls `nvmlInit()`
    unguarded at import, it cannot be imported on ROCm: the import, that call (ROC201) and every
    query in the file (ROC202) are one finding, at the import, with the others as related sites.

    ## References
    - ROCm/amdsmi `py-interface/README.md`
    - pytorch/pytorch `torch/cuda/__init__.py` (amdsmi on ROCm builds)
    """

    code = "ROC200"
    name = "nvml-import"
    category = "nvml"
    severity = Severity.WARNING
    impact = Impact(consequence="crash-path", aggregate="file", effort_hours=2.0)
    message = "NVML bindings talk only to the NVIDIA driver; on ROCm every NVML call fails"
    fact = "§3a, §3b dependency row, §9 pynvml row; [A1][P2]"
    # the imports, and the module-level `nvmlInit()` calls (through `from pynvml import *` too,
    # with a module-level definition of that name) that make importing the module fail
    parsing = Parsing(
        triggers=("pynvml", "py3nvml", "nvidia_smi"),
        scope="statement",
        scope_triggers=("nvmlInit",),
    )
    valid = [
        Valid("import amdsmi\n\namdsmi.amdsmi_init()\n"),
        Valid('"""Uses pynvml when present."""\nimport torch\n'),
        Valid("# import pynvml\nimport torch\n"),
        Valid("from .pynvml import helpers\n"),
        Valid("try:\n    import pynvml\nexcept ImportError:\n    pynvml = None\nimport amdsmi\n"),
        # a portable fallback: the calls, if any, are reported where they run
        Valid("try:\n    import pynvml\nexcept ImportError:\n    pynvml = None\n"),
    ]
    invalid = [
        Invalid("import pynvml\n", line=1, column=1),
        Invalid("import pynvml as nv\n\nnv.nvmlInit()\n"),
        Invalid("from pynvml import nvmlInit, nvmlDeviceGetCount\n"),
        Invalid("from py3nvml import py3nvml\n"),
        Invalid("import nvidia_smi\n"),
        Invalid("import os, pynvml\n", count=1),
        Invalid("import pynvml\nfrom pynvml import nvmlInit\n", count=1),
        Invalid(  # nvmlInit() at import: the module cannot be imported on ROCm
            "import pynvml\n\npynvml.nvmlInit()\n",
            line=1,
            count=1,
        ),
    ]

    def __init__(self, ctx: PythonContext) -> None:
        super().__init__(ctx)
        self._reported = False
        self._pending: tuple[cst.CSTNode, str, bool] | None = None

    def _report_import(self, node: cst.CSTNode, module: str) -> None:
        # one finding per file: the file depends on NVML (ROC201/ROC202 point at the calls)
        if self._reported or _imports_amdsmi(self.ctx):
            return
        self._reported = True
        optional = self.guarded_by(
            {"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "*"}
        )
        self._pending = (node, module, optional)

    def leave_Module(self, original_node: cst.Module) -> None:
        if self._pending is None:
            return
        node, module, optional = self._pending
        if _init_at_import(self.ctx):
            self.report(
                node,
                message=(
                    f"`{module}` (NVML) is initialised when this code is imported or run: on "
                    "ROCm nvmlInit raises NVMLError_LibraryNotFound there, so importing or "
                    "running it fails, and every NVML call in it with it; use torch.cuda "
                    "telemetry or amdsmi"
                ),
                problem=Problem(key=_IMPORT_FAILS),
            )
        elif optional:
            self.report(
                node,
                message=(
                    f"`{module}` (NVML) is optional here, but on ROCm it finds no NVIDIA driver: "
                    "the NVML path fails at nvmlInit; use torch.cuda telemetry or amdsmi"
                ),
            )
        else:
            self.report(
                node,
                message=(
                    f"`{module}` (NVML) talks only to the NVIDIA driver; on ROCm nvmlInit raises "
                    "NVMLError_LibraryNotFound; use torch.cuda telemetry or amdsmi"
                ),
            )

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            module = dotted_name(alias.name)
            if module is not None and _is_binding(module):
                self._report_import(node, module)
                return

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None:
            return
        module = dotted_name(node.module)
        if module is not None and _is_binding(module):
            self._report_import(node, module)
