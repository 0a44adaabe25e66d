"""ROC600 (cuda-extension-build): flags `torch.utils.cpp_extension.CUDAExtension(...)`, `load(...)`
with `.cu` sources (or `with_cuda=True`) and `load_inline(..., cuda_sources=...)`."""

from __future__ import annotations

from typing import Any

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, Problem, PythonRule, Severity, Valid
from migrator.api.knowledge import build_calls_in, call_digest
from migrator.api.reach import caught_with_fallback

from .._literals import is_literal
from ._shared import EXTENSION_BUILD, _data, _rocm_aware

#: What a failed JIT extension build raises (besides ``Exception``): a compiler or ninja error.
_BUILD_ERRORS = frozenset({"RuntimeError", "OSError", "CalledProcessError", "ImportError"})


class CudaExtensionBuild(PythonRule):
    """
    ## What it does
    Flags `torch.utils.cpp_extension.CUDAExtension(...)`, `load(...)` with `.cu` sources (or
    `with_cuda=True`) and `load_inline(..., cuda_sources=...)`. A source counts when its
    literal end is `.cu`: a string, an f-string (`f"{d}/k.cu"`), `os.path.join(d, "k.cu")` or
    `base / "k.cu"`; in a project scan also when the build model evaluated the source list to
    `.cu` files (`[os.path.join(src, f) for f in ["k.cu", "k.cpp"]]`, a wrapper's arguments).

    ## Why it breaks on ROCm
    On a ROCm build of PyTorch these run `hipify_python` over the CUDA sources and compile them
    with hipcc for the archs in `PYTORCH_ROCM_ARCH` (default: the visible GPUs'; the CUDA-side
    `TORCH_CUDA_ARCH_LIST` is ignored), linking `amdhip64`, `c10_hip` and `torch_hip`. Plain
    CUDA C++ usually builds unchanged, but hipify has no mapping for inline PTX, CUTLASS/CuTe,
    cuDNN-frontend code or 32-bit warp masks, and `CUDA_VERSION`/`__CUDA_ARCH__` gates change
    meaning, so each extension needs a build and a numerical check on ROCm.

    ## Example
    ```python
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension

    setup(
        ext_modules=[CUDAExtension("fused_ops", ["ops.cpp", "ops_kernel.cu"])],
        cmdclass={"build_ext": BuildExtension},
    )
    ```

    ## Manual migration
    Build on ROCm with `PYTORCH_ROCM_ARCH="gfx90a;gfx942"` (not `TORCH_CUDA_ARCH_LIST`), read the
    hipified copies (`*_hip.cpp`, `*.hip`) for warnings, fix what hipify cannot map (ROC601
    inline PTX, ROC602 version macros, warp-size assumptions), keep nvcc-only flags out of the
    ROCm build (ROC603), and compare the extension's outputs with a PyTorch reference on the AMD
    GPU.

    ## Known problems
    Not reported in a branch that runs only on ROCm (the ROCm build itself), nor in a build
    function (or the top level of a build script) that already tests for a ROCm build
    (`if self.is_rocm_pytorch():`, `if IS_ROCM:`): that build has its ROCm path. The builds of
    one file and the nvcc-only flags it passes them (ROC603) are one finding, at the first build,
    with the others as related sites.

    ## References
    - pytorch `torch/utils/cpp_extension.py`; pytorch `docs/source/notes/hip.rst`
    """

    code = "ROC600"
    name = "cuda-extension-build"
    category = "cuda-extension"
    severity = Severity.WARNING
    impact = Impact(consequence="crash-path", effort_hours=2.0)
    message = (
        "CUDA extension: hipified and built with hipcc on ROCm for PYTORCH_ROCM_ARCH "
        "(TORCH_CUDA_ARCH_LIST is ignored); build and check it on ROCm"
    )
    fact = "§7 CUDAExtension row, §6 TORCH_CUDA_ARCH_LIST row; [P9][P1]"
    parsing = Parsing(triggers=("cpp_extension",))
    valid = [
        Valid(  # a JIT build whose failure falls back to Python code: optional on every GPU
            "from torch.utils.cpp_extension import load\n"
            "def kernels():\n"
            "    try:\n"
            "        return load(name='fbd', sources=['fbd.cpp', 'fbd_kernel.cu'])\n"
            "    except Exception as error:\n"
            "        warnings.warn(f'no CUDA extension: {error}')\n"
            "        return None\n"
        ),
        Valid(  # the ROCm branch of a setup.py is the ROCm build itself
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "IS_ROCM = torch.version.hip is not None\n"
            "if IS_ROCM:\n"
            "    ext = CUDAExtension('fa_2', ['fa_hip.cpp'], extra_compile_args=ROCM_ARGS)\n",
            path="setup.py",
        ),
        Valid(  # a builder that already dispatches on ROCm (hipify, PYTORCH_ROCM_ARCH)
            "import os\n"
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "class OpBuilder:\n"
            "    def builder(self):\n"
            "        if self.is_rocm_pytorch():\n"
            "            os.environ['PYTORCH_ROCM_ARCH'] = self.get_rocm_gpu_arch()\n"
            "        return CUDAExtension(self.name, self.sources())\n"
        ),
        Valid(
            "from torch.utils.cpp_extension import CppExtension\n"
            "ext = CppExtension('ops', ['ops.cpp'])\n"
        ),
        Valid(
            "from torch.utils.cpp_extension import load\nmod = load('ops', sources=['ops.cpp'])\n"
        ),
        Valid("def CUDAExtension(*a):\n    pass\n# torch.utils.cpp_extension.CUDAExtension\n"),
        Valid(
            "import os\nfrom torch.utils.cpp_extension import load\n"
            "mod = load('ops', sources=[os.path.join(HERE, 'ops.cpp'), f'{HERE}/cu.cpp'])\n"
        ),
    ]
    invalid = [
        Invalid(
            "from setuptools import setup\n"
            "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
            "setup(\n"
            "    ext_modules=[CUDAExtension('ops', ['ops.cpp', 'kernel.cu'])],\n"
            "    cmdclass={'build_ext': BuildExtension},\n"
            ")\n",
            path="setup.py",
            line=4,
            column=18,
        ),
        Invalid(
            "import torch.utils.cpp_extension as ext\n"
            "mod = ext.load(name='ops', sources=['ops.cpp', 'ops_kernel.cu'])\n"
        ),
        Invalid(
            "from torch.utils import cpp_extension\n"
            "mod = cpp_extension.load_inline('m', cpp_sources=CPP, cuda_sources=CUDA)\n"
        ),
        Invalid(
            "import os\nfrom torch.utils.cpp_extension import load\n"
            "def build(d):\n"
            "    return load(name='k', sources=[os.path.join(d, 'k.cpp'), f'{d}/k.cu'])\n",
            line=4,
        ),
        Invalid(
            "import os\nfrom torch.utils.cpp_extension import load\n"
            "ext = load('k', [os.path.join(HERE, 'csrc', 'kernel.cu')])\n"
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.call_name(node)
        if qualified is None:
            return
        data = _data()
        if _rocm_aware(self.ctx, node):
            return  # the ROCm build itself, or a build that already dispatches on ROCm
        if qualified in data["cuda_extension"]:
            self.report(node, problem=Problem(key=EXTENSION_BUILD))
        elif qualified in data["inline_loaders"]:
            if any(a.keyword is not None and a.keyword.value == "cuda_sources" for a in node.args):
                self._report_jit(node)
        elif qualified in data["loaders"] and (
            self._gpu_load(node, data) or self._model_gpu_build(node)
        ):
            self._report_jit(node)

    def _report_jit(self, node: cst.Call) -> None:
        if not self._optional_build(node):
            # (an optional one: a failed build, hipify or hipcc, takes the project's fallback)
            self.report(node, problem=Problem(key=EXTENSION_BUILD))

    def _optional_build(self, node: cst.Call) -> bool:
        """Whether the JIT build sits in the body of a ``try`` (in the same function) whose
        handler catches the build's failure and does not raise: the extension is optional."""
        return caught_with_fallback(node, self.ctx.ancestors(node), _BUILD_ERRORS)

    def _model_gpu_build(self, node: cst.Call) -> bool:
        """Whether the project's build model read this call as building GPU sources (a source
        list it evaluated: a comprehension over names, a join from ``__file__``)."""
        calls = build_calls_in(self.ctx.project, self.ctx.path)
        return bool(calls) and call_digest(self.ctx.code(node)) in (calls or ())

    @staticmethod
    def _gpu_load(node: cst.Call, data: dict[str, Any]) -> bool:
        for argument in node.args:
            keyword = argument.keyword.value if argument.keyword is not None else None
            if keyword == "with_cuda" and not is_literal(argument.value, False):
                if not is_literal(argument.value, None):
                    return True
            if keyword in (None, "sources"):
                values = [argument.value]
                if isinstance(argument.value, (cst.List, cst.Tuple)):
                    values = [element.value for element in argument.value.elements]
                for value in values:
                    text = _path_tail(value)
                    if text is not None and text.endswith(tuple(data["cuda_suffixes"])):
                        return True
        return False


def _path_tail(node: cst.BaseExpression) -> str | None:
    """The literal end of a source path: a string, an f-string's last text part, the last part of
    ``os.path.join(...)`` or the right side of ``base / "k.cu"`` (None when not literal)."""
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        return text if isinstance(text, str) else None
    if isinstance(node, cst.FormattedString) and node.parts:
        last = node.parts[-1]
        return last.value if isinstance(last, cst.FormattedStringText) else None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
        return _path_tail(node.right)
    if isinstance(node, cst.Call) and node.args:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "join":
            return _path_tail(node.args[-1].value)
    return None
