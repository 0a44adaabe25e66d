"""ROC804: ``onnxruntime-gpu``, ONNX Runtime's CUDA build."""

from __future__ import annotations

from migrator.api import Applicability, Fixing, Impact, Invalid, Parsing, Severity, Valid

from .._requirement_rule import RequirementRule, Verdict
from .._requirements import Change, Req
from ._table import _cases, _table


class OnnxruntimeGpu(RequirementRule):
    """
    ## What it does
    Flags `onnxruntime-gpu`, ONNX Runtime's CUDA build.

    ## Why it breaks on ROCm
    `onnxruntime-gpu` offers the `CUDAExecutionProvider` only. On an AMD machine the session
    silently falls back to the CPU provider. ONNX Runtime's AMD GPU build is
    `onnxruntime-migraphx` (`MIGraphXExecutionProvider`); the ROCm execution provider was
    removed (absent from ORT ≥ 1.23; `onnxruntime-rocm` stopped at 1.22.x).

    ## Example
    ```python
    # requirements.txt
    onnxruntime-gpu>=1.17
    ```

    ## Fix
    ```python
    # requirements.txt
    onnxruntime-migraphx>=1.17
    ```

    ## Fix safety
    Unsafe: the code must also ask for `"MIGraphXExecutionProvider"` instead of
    `"CUDAExecutionProvider"`, and MIGraphX builds are published for fewer ORT versions, so the
    version pin may need to change.

    ## References
    - rocm-facts.md §9 (`onnxruntime-gpu` row)
    """

    code = "ROC804"
    fix = Fixing(
        replaces_vendor=True, title="Use `onnxruntime-migraphx`", applicability=Applicability.UNSAFE
    )
    name = "onnxruntime-gpu"
    category = "dependency"
    severity = Severity.ERROR
    impact = Impact(consequence="cpu-fallback", effort_hours=0.5)
    message = "`onnxruntime-gpu` has only the CUDA execution provider; on ROCm it runs on the CPU"
    fact = "§9 onnxruntime row; [K4][K3]"
    parsing = Parsing(triggers=_cases("onnxruntime", "OnnxRuntime"))
    valid = [
        Valid("onnxruntime-migraphx\n", path="requirements.txt"),
        Valid("onnxruntime>=1.17\n", path="requirements.txt"),
        Valid("onnxruntime-gpu; sys_platform == 'win32'\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid(
            "onnxruntime-gpu     # ONNX export\n",
            path="requirements.txt",
            fixed="onnxruntime-migraphx     # ONNX export\n",
        ),
        Invalid(
            "[options]\ninstall_requires =\n    numpy\n    onnxruntime_gpu>=1.17\n",
            path="setup.cfg",
            fixed="[options]\ninstall_requires =\n    numpy\n    onnxruntime-migraphx>=1.17\n",
            line=4,
            column=5,
        ),
    ]

    def examine(self, req: Req) -> Verdict | None:
        table = _table("onnxruntime")
        if req.name not in table["names"]:
            return None
        return Verdict(
            f"`{req.parsed.raw_name}` has only the CUDA execution provider and falls back to the "
            f"CPU on ROCm; use `{table['to']}` with `MIGraphXExecutionProvider`",
            Change(name=table["to"]),
        )
