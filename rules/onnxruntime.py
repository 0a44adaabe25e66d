"""ROC85x: ONNX Runtime execution providers that exist only for NVIDIA GPUs."""

from __future__ import annotations

import libcst as cst

from migrator.astutil import arg, string_value
from migrator.context import PythonContext
from migrator.model import Applicability, Severity
from migrator.rule import Invalid, PythonRule, Valid

_NVIDIA_EPS = frozenset({"CUDAExecutionProvider", "TensorrtExecutionProvider"})
_AMD_EPS = frozenset({"MIGraphXExecutionProvider", "ROCMExecutionProvider"})
_MIGRAPHX = "MIGraphXExecutionProvider"
_FACT = "§9 onnxruntime-gpu row; [K4][K3]"
_SESSIONS = frozenset(
    {
        "onnxruntime.InferenceSession",
        "onnxruntime.capi.onnxruntime_inference_collection.InferenceSession",
    }
)


def _imports_ort(ctx: PythonContext) -> bool:
    return any(
        module.split(".", 1)[0] in {"onnxruntime", "optimum"} for module in ctx.imports.modules
    )


def _provider_name(element: cst.BaseElement) -> str | None:
    """The provider named by a list element: ``"X"`` or ``("X", {options})``."""
    value = element.value
    if isinstance(value, cst.Tuple) and value.elements:
        value = value.elements[0].value
    return string_value(value)


class OrtCudaExecutionProvider(PythonRule):
    """
    ## What it does
    Flags `"CUDAExecutionProvider"` / `"TensorrtExecutionProvider"` in the provider lists of
    `onnxruntime.InferenceSession(...)`, `session.set_providers(...)` and in provider lists
    kept in variables, plus `provider="CUDAExecutionProvider"` given to optimum's
    `ORTModel*.from_pretrained`.

    ## Why it breaks on ROCm
    ONNX Runtime for AMD GPUs (`onnxruntime-migraphx`) offers `MIGraphXExecutionProvider`;
    the ROCm execution provider was deleted and is absent from ORT ≥ 1.23
    (`onnxruntime-rocm` stopped at 1.22). Asking only for the CUDA or TensorRT provider makes
    ORT warn "Specified provider ... is not in available provider names" and run the model on
    the CPU: the GPU is silently skipped.

    ## Example
    ```python
    import onnxruntime as ort

    sess = ort.InferenceSession(
        "model.onnx", providers=["CUDAExecutionProvider", "CPUExecutionProvider"]
    )
    ```

    ## Fix
    ```python
    import onnxruntime as ort

    sess = ort.InferenceSession(
        "model.onnx",
        providers=["MIGraphXExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"],
    )
    ```

    ## Fix safety
    Unsafe. ORT uses the first available provider of the list, so NVIDIA machines keep the
    CUDA provider, but they now log a `UserWarning` about the missing MIGraphX provider
    (fatal under `-W error`). On AMD, MIGraphX compiles the graph on first run (slow start)
    and its numerics and supported operators differ from CUDA's; provider options of the CUDA
    entry are not carried over. Calls that also pass `provider_options` (a list aligned with
    the providers) and lists outside a session call are reported without a fix.

    ## References
    - microsoft/onnxruntime PR #25181 (ROCm EP removed)
    - onnxruntime.ai "AMD - MIGraphX" execution provider docs
    """

    code = "ROC850"
    parse_scope = "definition"
    name = "ort-cuda-execution-provider"
    category = "onnxruntime"
    severity = Severity.ERROR
    aggregate = "scope"
    message = "ONNX Runtime has no CUDA/TensorRT provider on AMD GPUs; the model runs on CPU"
    fix_title = "Put `MIGraphXExecutionProvider` first in the provider list"
    applicability = Applicability.UNSAFE
    fact = _FACT
    triggers = ("CUDAExecutionProvider", "TensorrtExecutionProvider")
    effort_hours = 1.0
    valid = [
        Valid(
            'import onnxruntime as ort\n\nsess = ort.InferenceSession("m.onnx", '
            'providers=["MIGraphXExecutionProvider", "CUDAExecutionProvider"])\n'
        ),
        Valid('"""Pass providers=["CUDAExecutionProvider"] to InferenceSession."""\n'),
        Valid('PROVIDERS = ["CUDAExecutionProvider"]\n'),  # no onnxruntime import
        Valid(
            'import onnxruntime as ort\n\nsess = ort.InferenceSession("m.onnx", '
            'providers=["CPUExecutionProvider"])\n'
        ),
    ]
    invalid = [
        Invalid(
            'import onnxruntime as ort\n\nsess = ort.InferenceSession("m.onnx", '
            'providers=["CUDAExecutionProvider", "CPUExecutionProvider"])\n',
            fixed='import onnxruntime as ort\n\nsess = ort.InferenceSession("m.onnx", '
            'providers=["MIGraphXExecutionProvider", "CUDAExecutionProvider", '
            '"CPUExecutionProvider"])\n',
            line=3,
            column=49,
        ),
        Invalid(
            "from onnxruntime import InferenceSession\n\n"
            "s = InferenceSession(path, None, [('CUDAExecutionProvider', {'device_id': 0})])\n",
            fixed="from onnxruntime import InferenceSession\n\n"
            "s = InferenceSession(path, None, ['MIGraphXExecutionProvider', "
            "('CUDAExecutionProvider', {'device_id': 0})])\n",
        ),
        Invalid(
            "import onnxruntime\n\nsess.set_providers(\n"
            '    [\n        "TensorrtExecutionProvider",\n'
            '        "CUDAExecutionProvider",\n    ]\n)\n',
            fixed="import onnxruntime\n\nsess.set_providers(\n"
            '    [\n        "MIGraphXExecutionProvider",\n'
            '        "TensorrtExecutionProvider",\n        "CUDAExecutionProvider",\n    ]\n)\n',
        ),
        Invalid(
            'import onnxruntime as ort\n\nsess = ort.InferenceSession("m.onnx", '
            'providers=["CUDAExecutionProvider"], provider_options=[{"device_id": 0}])\n',
        ),
        Invalid(
            "import onnxruntime as ort\n\n"
            'PROVIDERS = ["CUDAExecutionProvider", "CPUExecutionProvider"]\n',
            line=3,
        ),
        Invalid(
            "from optimum.onnxruntime import ORTModelForCausalLM\n\n"
            'm = ORTModelForCausalLM.from_pretrained(p, provider="CUDAExecutionProvider")\n',
        ),
    ]

    def __init__(self, ctx: PythonContext) -> None:
        super().__init__(ctx)
        self._active = _imports_ort(ctx)
        self._handled: set[int] = set()

    def _nvidia(self, node: cst.List | cst.Tuple) -> int | None:
        """Index of the first NVIDIA provider in a provider list (None when there is none or
        the list already names an AMD provider)."""
        names = [_provider_name(element) for element in node.elements]
        if any(name in _AMD_EPS for name in names):
            return None
        for index, name in enumerate(names):
            if name in _NVIDIA_EPS:
                return index
        return None

    def visit_Call(self, node: cst.Call) -> None:
        if not self._active:
            return
        qualified = self.ctx.call_name(node)
        providers: cst.Arg | None = None
        options: cst.Arg | None = None
        if qualified in _SESSIONS:
            providers = arg(node, "providers", 2)
            options = arg(node, "provider_options", 3)
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value == "set_providers":
            providers = arg(node, "providers", 0)
            options = arg(node, "provider_options", 1)
        elif (
            qualified is not None
            and qualified.startswith("optimum.onnxruntime.")
            and qualified.endswith(".from_pretrained")
        ):
            provider = arg(node, "provider")
            if provider is not None and string_value(provider.value) in _NVIDIA_EPS:
                self.report(
                    provider,
                    message=(
                        f"`{string_value(provider.value)}` is not available on AMD GPUs; the "
                        f'model runs on CPU; use provider="{_MIGRAPHX}" with onnxruntime-migraphx'
                    ),
                )
            return
        if providers is None or not isinstance(providers.value, (cst.List, cst.Tuple)):
            return
        listing = providers.value
        index = self._nvidia(listing)
        self._handled.add(id(listing))
        if index is None:
            return
        replacement = None
        if options is None:
            replacement = self._insert(listing, index)
        self.report(listing, message=self._message(listing), replacement=replacement)

    def _message(self, listing: cst.List | cst.Tuple) -> str:
        names = [_provider_name(element) for element in listing.elements]
        nvidia = ", ".join(f"`{name}`" for name in names if name in _NVIDIA_EPS)
        return (
            f"{nvidia} is not available on AMD GPUs, so ONNX Runtime warns and runs on CPU; "
            f"add `{_MIGRAPHX}` (onnxruntime-migraphx; the ROCm EP is gone from ORT ≥ 1.23)"
        )

    def _insert(self, listing: cst.List | cst.Tuple, index: int) -> cst.List | cst.Tuple:
        before = listing.elements[index]
        value = before.value
        if isinstance(value, cst.Tuple):
            value = value.elements[0].value
        quote = value.quote if isinstance(value, cst.SimpleString) else '"'
        comma = before.comma
        if not isinstance(comma, cst.Comma):
            comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        new = cst.Element(value=cst.SimpleString(f"{quote}{_MIGRAPHX}{quote}"), comma=comma)
        elements = [*listing.elements[:index], new, *listing.elements[index:]]
        return listing.with_changes(elements=elements)

    def _visit_listing(self, node: cst.List | cst.Tuple) -> None:
        if not self._active or id(node) in self._handled:
            return
        # a provider list kept in a variable: at least one element names an execution provider
        if self._nvidia(node) is None:
            return
        names = [_provider_name(element) for element in node.elements]
        if not all(name is not None and name.endswith("ExecutionProvider") for name in names):
            return
        self.report(node, message=self._message(node))

    def visit_List(self, node: cst.List) -> None:
        self._visit_listing(node)

    def visit_Tuple(self, node: cst.Tuple) -> None:
        self._visit_listing(node)


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
    parse_scope = "names"
    name = "ort-cuda-provider-check"
    category = "onnxruntime"
    severity = Severity.ERROR
    aggregate = "scope"
    message = "This ONNX Runtime GPU check is false on AMD GPUs; the CPU path runs"
    fact = _FACT
    triggers = ("onnxruntime",)
    effort_hours = 0.5
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
        for child in node.children:
            found.extend(self._strings(child))
        return found

    def _mark(self, node: cst.CSTNode) -> None:
        self._handled.add(id(node))
        for child in node.children:
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
