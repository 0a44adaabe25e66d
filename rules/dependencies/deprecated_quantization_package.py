"""ROC813: AutoGPTQ and AutoAWQ, deprecated quantization packages."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Parsing, Severity, Valid

from .._requirement_rule import RequirementRule, Verdict
from .._requirements import Req, packages
from ._table import _cases


class DeprecatedQuantPackage(RequirementRule):
    """
    ## What it does
    Flags AutoGPTQ (`auto-gptq`) and AutoAWQ (`autoawq`).

    ## Why it breaks on ROCm
    Both projects are deprecated. Their ROCm support (AutoGPTQ wheels from an old index,
    AutoAWQ's ROCm kernels) is frozen at old PyTorch and ROCm releases, so a current ROCm
    stack will not get working kernels from them.

    ## Example
    ```python
    # requirements.txt
    auto-gptq==0.7.1
    ```

    ## Severity
    Info: nothing in the dependency line itself changes on a ROCm build (the package is as
    deprecated on NVIDIA); the advice is to plan the move to a maintained package.

    ## Manual migration
    GPTQ → `gptqmodel` (what transformers uses now); AWQ → llm-compressor; or AMD Quark
    (`amd-quark`) for FP8/INT8/INT4 on AMD GPUs.

    ## References
    - rocm-facts.md §5 (quantization alternatives) and §9 (`auto-gptq` row)
    """

    code = "ROC813"
    name = "deprecated-quantization-package"
    category = "dependency"
    severity = Severity.INFO
    impact = Impact(consequence="crash-path", effort_hours=2.0)
    message = "deprecated quantization package with no maintained ROCm kernels"
    fact = "§5 quantization alternatives, §9 auto-gptq row; [Q1][Q2][Q3]"
    parsing = Parsing(triggers=_cases("gptq", "awq", "AutoGPTQ", "AutoAWQ"))
    valid = [
        Valid("gptqmodel>=2.0\n", path="requirements.txt"),
        Valid("llmcompressor\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid("auto-gptq==0.7.1\n", path="requirements.txt"),
        Invalid("AutoAWQ>=0.2\n", path="requirements.txt"),
    ]

    def examine(self, req: Req) -> Verdict | None:
        table = packages()["deprecated_quant"]
        if req.name not in table:
            return None
        return Verdict(f"`{req.parsed.raw_name}` is {table[req.name]}")
