"""ROC806: ``tensorflow[and-cuda]`` and ``tensorflow-gpu``."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Parsing, Severity, Valid

from .._requirement_rule import RequirementRule, Verdict
from .._requirements import Req
from ._table import _cases, _table


class TensorflowCuda(RequirementRule):
    """
    ## What it does
    Flags `tensorflow[and-cuda]` and the old `tensorflow-gpu` package.

    ## Why it breaks on ROCm
    Both pull NVIDIA's CUDA libraries; on an AMD machine TensorFlow finds no GPU and runs on
    the CPU. The ROCm build is `tensorflow-rocm`, whose newest PyPI release is 2.14.0.600
    (January 2024); newer builds come from AMD's own repositories or containers.

    ## Example
    ```python
    # requirements.txt
    tensorflow[and-cuda]==2.16.1
    ```

    ## Manual migration
    Choose a TensorFlow release that AMD builds for your ROCm version (`tensorflow-rocm` on PyPI
    stops at 2.14) or use AMD's TensorFlow container, and pin that instead.

    ## References
    - rocm-facts.md §9 (`tensorflow[and-cuda]` row)
    """

    code = "ROC806"
    name = "tensorflow-cuda-build"
    category = "dependency"
    severity = Severity.ERROR
    impact = Impact(consequence="cpu-fallback", effort_hours=2.0)
    message = "CUDA build of TensorFlow: on ROCm it finds no GPU and runs on the CPU"
    fact = "§9 tensorflow row; [K3]"
    parsing = Parsing(triggers=_cases("tensorflow", "TensorFlow"))
    valid = [
        Valid("tensorflow-rocm==2.14.0.600\n", path="requirements.txt"),
        Valid("tensorflow==2.16.1\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid("tensorflow[and-cuda]==2.16.1\n", path="requirements.txt", fixed=None),
        Invalid("tensorflow-gpu==2.10\n", path="requirements.txt", fixed=None),
    ]

    def examine(self, req: Req) -> Verdict | None:
        table = _table("tensorflow")
        if req.name == "tensorflow" and set(req.parsed.extras) & set(table["extras"]):
            what = "`tensorflow[and-cuda]`"
        elif req.name in table["names"]:
            what = f"`{req.parsed.raw_name}`"
        else:
            return None
        return Verdict(
            f"{what} is TensorFlow's CUDA build and runs on the CPU on ROCm; use an AMD build "
            f"(`{table['rocm']}`, PyPI releases stop at 2.14) or AMD's TensorFlow container"
        )
