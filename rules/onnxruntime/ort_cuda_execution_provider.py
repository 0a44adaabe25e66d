"""ROC850 (ort-cuda-execution-provider): flags `"CUDAExecutionProvider"` /
`"TensorrtExecutionProvider"` in the provider lists of `onnxruntime.InferenceSession(...)`,
`session.set_providers(...)` and in provider lists kept in variables, plus
`provider="CUDAExecutionProvider"` given to optimum's `ORTModel*.from_pretrained`."""

from __future__ import annotations

import libcst as cst

from migrator.api import (
    Applicability,
    Fixing,
    Impact,
    Invalid,
    Parsing,
    PythonContext,
    PythonRule,
    Rewrite,
    Severity,
    Valid,
)
from migrator.api.syntax import arg, string_value

from ._shared import _AMD_EPS, _FACT, _MIGRAPHX, _NVIDIA_EPS

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

    ## Known problems
    A list chosen only when its provider is available (`["CUDAExecutionProvider"] if
    "CUDAExecutionProvider" in ort.get_available_providers() else ...`) is not reported: it is
    never used on AMD GPUs, and the availability check is what decides (ROC851 reports it).

    ## References
    - microsoft/onnxruntime PR #25181 (ROCm EP removed)
    - onnxruntime.ai "AMD - MIGraphX" execution provider docs
    """

    code = "ROC850"
    parsing = Parsing(
        scope="definition", triggers=("CUDAExecutionProvider", "TensorrtExecutionProvider")
    )
    name = "ort-cuda-execution-provider"
    category = "onnxruntime"
    severity = Severity.ERROR
    impact = Impact(consequence="cpu-fallback", aggregate="scope", effort_hours=1.0)
    message = "ONNX Runtime has no CUDA/TensorRT provider on AMD GPUs; the model runs on CPU"
    fix = Fixing(
        title="Put `MIGraphXExecutionProvider` first in the provider list",
        applicability=Applicability.UNSAFE,
    )
    fact = _FACT
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
        Valid(  # chosen only where the CUDA provider exists; ROC851 reports the check
            "import onnxruntime as ort\n\nproviders = (\n"
            '    ["CUDAExecutionProvider"]\n'
            '    if "CUDAExecutionProvider" in ort.get_available_providers()\n'
            '    else ["CPUExecutionProvider"]\n)\n'
            'sess = ort.InferenceSession("m.onnx", providers=providers)\n'
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
        self.report(listing, message=self._message(listing), fix=Rewrite(replacement))

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
        if not self._active or id(node) in self._handled or self._chosen_if_available(node):
            return
        # a provider list kept in a variable: at least one element names an execution provider
        if self._nvidia(node) is None:
            return
        names = [_provider_name(element) for element in node.elements]
        if not all(name is not None and name.endswith("ExecutionProvider") for name in names):
            return
        self.report(node, message=self._message(node))

    def _chosen_if_available(self, node: cst.List | cst.Tuple) -> bool:
        """``[EP] if "EP" in <available providers> else ...``: the list is used only where its
        NVIDIA provider exists; the availability test decides (ROC851)."""
        branch = self.ctx.parent(node)
        if not isinstance(branch, cst.IfExp) or branch.body is not node:
            return False
        test = branch.test
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            return False
        named = string_value(test.left)
        return (
            isinstance(test.comparisons[0].operator, cst.In)
            and named in _NVIDIA_EPS
            and named in [_provider_name(element) for element in node.elements]
        )

    def visit_List(self, node: cst.List) -> None:
        self._visit_listing(node)

    def visit_Tuple(self, node: cst.Tuple) -> None:
        self._visit_listing(node)
