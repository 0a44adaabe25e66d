"""ROC812: NVML bindings (``pynvml``, ``nvidia-ml-py``) listed as dependencies."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Parsing, Severity, Valid
from migrator.api.knowledge import NVML_BINDINGS

from .._requirement_rule import RequirementRule, Verdict
from .._requirements import Req
from ._table import _cases, _table


class NvmlBindings(RequirementRule):
    """
    ## What it does
    Flags NVML bindings (`pynvml`, `nvidia-ml-py`) listed as dependencies, when some NVML call
    of the project runs on a ROCm build unguarded (the bindings themselves are pure Python and
    install anywhere: a project whose every NVML call is guarded or falls back loses nothing).

    ## Why it breaks on ROCm
    NVML ships with the NVIDIA driver; on an AMD machine `nvmlInit()` raises. AMD's equivalent
    is `amdsmi` (shipped with ROCm; the PyPI `amdsmi` must match the installed ROCm), with
    different function names and units. ROCm builds of PyTorch use `amdsmi` themselves for
    `torch.cuda.utilization()` and friends.

    ## Example
    ```python
    # requirements.txt
    pynvml>=11.5
    ```

    ## Manual migration
    Port the NVML calls (§3a of the facts lists each pair) to `amdsmi`, or to `torch.cuda`
    telemetry (`mem_get_info`, `utilization`), then depend on `amdsmi` where needed.

    ## References
    - rocm-facts.md §3a and §9 (`pynvml` row)
    """

    code = "ROC812"
    name = "nvml-bindings"
    category = "dependency"
    severity = Severity.WARNING
    impact = Impact(consequence="performance", effort_hours=1.0)
    message = "NVML bindings: NVML needs the NVIDIA driver; on ROCm use `amdsmi`"
    fact = "§3a, §9 pynvml row; [A1]"
    parsing = Parsing(triggers=_cases("nvml", "pyNVML", "nvidia-ml", "nvidia_ml"))
    valid = [
        Valid("amdsmi\n", path="requirements.txt"),
        Valid("torch  # needs pynvml for telemetry\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid("pynvml              # GPU memory logging\n", path="requirements.txt"),
        Invalid(
            "[options]\ninstall_requires = nvidia-ml-py >= 11.450.51, < 13.596.0a0\n",
            path="setup.cfg",
        ),
    ]

    def examine(self, req: Req) -> Verdict | None:
        table = _table("nvml")
        if req.name not in table["names"]:
            return None
        return Verdict(
            f"`{req.parsed.raw_name}` binds NVML, which needs the NVIDIA driver; port the calls "
            f"to `{table['rocm']}` (or torch.cuda telemetry)",
            group=NVML_BINDINGS,
        )
