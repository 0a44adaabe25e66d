"""ROC851 (ort-cuda-provider-check): flags GPU checks that can only succeed with NVIDIA builds of
ONNX Runtime."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonContext, PythonRule, Severity, Valid
from migrator.api.syntax import string_value, syntax_children

from ._shared import _AMD_EPS, _FACT, _MIGRAPHX, _NVIDIA_EPS


class OrtCudaProviderCheck(PythonRule):
    """
    ## What it does
    Flags GPU checks that can only succeed with NVIDIA builds of ONNX Runtime:
    `"CUDAExecutionProvider" in ort.get_available_providers()` and
    `ort.get_device() == "GPU"`.

    ## Why it breaks on ROCm
    `onnxruntime-migraphx` lists `MIGraphXExecutionProvider`, never the CUDA provider, and
    `get_device()` reports `"GPU"` only for CUDA (and the removed ROCm EP) builds; a MIGraphX
    build reports `"CPU-MIGRAPHX"`. Both checks are false on AMD GPUs and the code takes its
    CPU path.

    ## Example
    ```python
    import onnxruntime as ort

    use_gpu = "CUDAExecutionProvider" in ort.get_available_providers()
    ```

    ## Manual migration
    ```python
    import onnxruntime as ort

    available = ort.get_available_providers()
    use_gpu = "CUDAExecutionProvider" in available or "MIGraphXExecutionProvider" in available
    ```
    and pick the matching provider for the session.

    ## References
    - microsoft/onnxruntime `onnxruntime/python/onnxruntime_pybind_state.cc` (`BACKEND_PROC`)
    """

    code = "ROC851"
    parsing = Parsing(scope="names", triggers=("onnxruntime",))
    name = "ort-cuda-provider-check"
    category = "onnxruntime"
    severity = Severity.ERROR
    impact = Impact(consequence="cpu-fallback", aggregate="scope", effort_hours=0.5)
    message = "This ONNX Runtime GPU check is false on AMD GPUs; the CPU path runs"
    fact = _FACT
    valid = [
        Valid(
            "import onnxruntime as ort\n\nok = 'MIGraphXExecutionProvider' in "
            "ort.get_available_providers()\n"
        ),
        Valid("import torch\n\nok = torch.cuda.get_device() == 'GPU'\n"),
        Valid('"""Check ort.get_device() == "GPU"."""\n'),
        Valid(
            "import onnxruntime as ort\n\navailable = ort.get_available_providers()\n"
            "ok = ('CUDAExecutionProvider' in available\n"
            "      or 'MIGraphXExecutionProvider' in available)\n"
        ),
    ]
    invalid = [
        Invalid(
            "import onnxruntime as ort\n\n"
            "if 'CUDAExecutionProvider' in ort.get_available_providers():\n"
            "    pass\n",
            line=3,
            column=4,
        ),
        Invalid("from onnxruntime import get_device\n\ngpu = get_device() == 'GPU'\n"),
        Invalid(
            "import onnxruntime\n\navailable = onnxruntime.get_available_providers()\n"
            "gpu = 'CUDAExecutionProvider' in available\n",
            line=4,
        ),
    ]

    def __init__(self, ctx: PythonContext) -> None:
        super().__init__(ctx)
        self._provider_vars: set[str] = set()
        self._handled: set[int] = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call) and self.ctx.call_name(node.value) == (
            "onnxruntime.get_available_providers"
        ):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    self._provider_vars.add(target.target.value)

    def _is_providers(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.Call):
            return self.ctx.call_name(node) == "onnxruntime.get_available_providers"
        return isinstance(node, cst.Name) and node.value in self._provider_vars

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        # `cuda in providers or migraphx in providers` is already portable
        if _AMD_EPS & set(self._strings(node)):
            self._mark(node)

    def _strings(self, node: cst.CSTNode) -> list[str]:
        found: list[str] = []
        if isinstance(node, cst.SimpleString):
            value = string_value(node)
            if value is not None:
                found.append(value)
        for child in syntax_children(node):
            found.extend(self._strings(child))
        return found

    def _mark(self, node: cst.CSTNode) -> None:
        self._handled.add(id(node))
        for child in syntax_children(node):
            self._mark(child)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if id(node) in self._handled:
            return
        left = node.left
        for target in node.comparisons:
            right = target.comparator
            if isinstance(target.operator, (cst.In, cst.NotIn)):
                if string_value(left) in _NVIDIA_EPS and self._is_providers(right):
                    self.report(
                        node,
                        message=(
                            f"`{string_value(left)}` is never available on AMD GPUs "
                            f"(onnxruntime-migraphx offers `{_MIGRAPHX}`); this check takes "
                            "the CPU path"
                        ),
                    )
                    return
            elif isinstance(target.operator, (cst.Equal, cst.NotEqual)):
                for side, other in ((left, right), (right, left)):
                    if (
                        isinstance(side, cst.Call)
                        and self.ctx.call_name(side) == "onnxruntime.get_device"
                        and string_value(other) == "GPU"
                    ):
                        self.report(
                            node,
                            message=(
                                '`onnxruntime.get_device()` is "GPU" only for CUDA builds; '
                                'onnxruntime-migraphx reports "CPU-MIGRAPHX"; check '
                                f'`"{_MIGRAPHX}" in get_available_providers()` too'
                            ),
                        )
                        return
            left = right
