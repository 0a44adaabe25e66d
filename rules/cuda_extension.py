"""ROC60x: CUDA C++ extensions and CUDA source kept in Python strings (category
``cuda-extension``)."""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from migrator import guards
from migrator.context import PythonContext
from migrator.model import Severity
from migrator.rule import Invalid, PythonRule, Valid
from migrator.ruledata import load_table

from ._literals import docstring_nodes, is_literal
from ._rocm_guards import called_only_on_nvidia


def _data() -> dict[str, Any]:
    data: dict[str, Any] = load_table("cuda_extension")
    return data


def string_text(node: cst.CSTNode) -> str | None:
    """Source text of a string literal (plain, concatenated or f-string), else None."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 - odd escapes: fall back to nothing
            return None
        if isinstance(value, str):
            return value
        return None if isinstance(node, cst.ConcatenatedString) else node.value
    if isinstance(node, cst.FormattedString):
        return "".join(
            part.value if isinstance(part, cst.FormattedStringText) else "{}" for part in node.parts
        )
    return None


class _KernelSource(PythonRule):
    """Shared matcher: string literals that hold CUDA source, either because they are passed to
    a kernel-compiling API (``load_inline(cuda_sources=...)``, ``cupy.RawKernel``, …) or because
    they contain CUDA markers (``__global__``, ``threadIdx``, …). Docstrings never count."""

    abstract = True

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self._kernel_args: set[int] = set()
        self._parts: set[int] = set()  # pieces of an implicit concatenation, checked as a whole
        self._docstrings: frozenset[int] | None = None

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.call_name(node)
        if qualified is None:
            return
        spec = _data()["kernel_sources"].get(qualified)
        if spec is None:
            return
        positional = [a for a in node.args if a.keyword is None and not a.star]
        for key in spec:
            if isinstance(key, int):
                if key < len(positional):
                    self._mark(positional[key].value)
            else:
                for argument in node.args:
                    if argument.keyword is not None and argument.keyword.value == key:
                        self._mark(argument.value)

    def _mark(self, value: cst.BaseExpression) -> None:
        values = [value]
        if isinstance(value, (cst.List, cst.Tuple)):
            values = [element.value for element in value.elements]
        for item in values:
            self._kernel_args.add(id(item))

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self._string(node)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self._string(node)

    def visit_ConcatenatedString(self, node: cst.ConcatenatedString) -> None:
        if id(node) in self._parts:
            self._parts.update((id(node.left), id(node.right)))
            return
        if id(node) in self._kernel_args:
            self._kernel_args.update((id(node.left), id(node.right)))
        self._parts.update((id(node.left), id(node.right)))
        self._string(node)

    def _string(self, node: cst.BaseExpression) -> None:
        if id(node) in self._parts:
            return
        text = string_text(node)
        if text is None:
            return
        if self._docstrings is None:
            self._docstrings = docstring_nodes(self.ctx.module)
        if id(node) in self._docstrings:
            return
        markers = _data()["source_markers"]["cuda"]
        if id(node) in self._kernel_args or any(marker in text for marker in markers):
            self.check_source(node, text)

    def check_source(self, node: cst.BaseExpression, text: str) -> None:
        raise NotImplementedError


_ASM = re.compile(r"\b(?:asm|__asm__)\s*(?:volatile\s*|__volatile__\s*)?\(")


def _line_of(text: str, start: int) -> str:
    line = text[text.rfind("\n", 0, start) + 1 :]
    line = line.split("\n", 1)[0].split("\\n", 1)[0]
    return line.strip()[:80]


class InlinePtxAsm(_KernelSource):
    """
    ## What it does
    Flags inline assembly (`asm(...)`, `asm volatile(...)`) inside CUDA source kept in Python
    strings: `load_inline(cuda_sources=...)`, `cupy.RawKernel`/`RawModule`, `SourceModule`,
    or any string with CUDA markers (`__global__`, `threadIdx`, …).

    ## Why it breaks on ROCm
    Inline PTX is NVIDIA's virtual ISA; HIP-Clang accepts AMD GCN assembly only, and hipify has
    no mapping for PTX. The kernel fails to compile on ROCm.

    ## Example
    ```python
    kernel = cupy.RawKernel(r'''
    extern "C" __global__ void lane(int* out) {
        int id; asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
        out[threadIdx.x] = id;
    }''', "lane")
    ```

    ## Manual migration
    Replace each PTX block with a HIP/CUDA intrinsic that hipify maps (`__lane_id()`,
    `__shfl_sync`, `__ballot`, `__builtin_amdgcn_*`, …) or with plain C++; guard CUDA-only
    paths with `#if defined(__HIP_PLATFORM_AMD__)` / `USE_ROCM`. Mind the 64-lane wavefront on
    CDNA when the assembly read lane ids or warp masks.

    ## References
    - ROCm/HIP `docs/how-to/faq.md` (inline assembly), `docs/how-to/hip_porting_guide.md`
    """

    code = "ROC601"
    name = "inline-ptx-asm"
    category = "cuda-extension"
    severity = Severity.ERROR
    message = "inline PTX assembly does not compile on ROCm (HIP-Clang takes GCN asm only)"
    fact = "§7 inline PTX row, §10.11; [H1][P1]"
    triggers = ("asm(", "asm (", "asm volatile", "asm __volatile__", "__asm__")
    effort_hours = 4.0
    blocker = True
    valid = [
        Valid(
            'import cupy\nk = cupy.RawKernel(r"""extern "C" __global__ void f(float* x)'
            ' { x[threadIdx.x] = 1; }""", "f")\n'
        ),
        Valid('"""Kernels avoid asm("...") PTX; see __global__ docs."""\n'),
        Valid('CPP = "int f() { asm volatile(\\"nop\\"); return 0; }"\n'),
    ]
    invalid = [
        Invalid(
            "import cupy as cp\n"
            "kernel = cp.RawKernel(r'''\n"
            'extern "C" __global__ void lane(int* out) {\n'
            '    int id; asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));\n'
            "    out[threadIdx.x] = id;\n"
            "}''', 'lane')\n",
            line=2,
            column=23,
        ),
        Invalid(
            "from torch.utils.cpp_extension import load_inline\n"
            'SRC = ("__device__ int lane() { int id; "\n'
            '       "asm(\\"mov.u32 %0, %%laneid;\\" : \\"=r\\"(id)); return id; }")\n'
            'mod = load_inline("m", cpp_sources="", cuda_sources=SRC)\n',
            line=2,
        ),
        Invalid(
            "from torch.utils.cpp_extension import load_inline\n"
            "mod = load_inline(\n"
            "    'm', cpp_sources='', cuda_sources=['int f() { __asm__(\"trap;\"); }'])\n",
            line=3,
        ),
    ]

    def check_source(self, node: cst.BaseExpression, text: str) -> None:
        match = _ASM.search(text)
        if match is not None:
            line = _line_of(text, match.start())
            self.report(node, message=f"{self.message}: `{line}`")


class CudaVersionMacroInSource(_KernelSource):
    """
    ## What it does
    Flags `__CUDA_ARCH__`, `CUDA_VERSION`, `CUDART_VERSION` and `__CUDACC_VER_*__` tests inside
    CUDA source kept in Python strings.

    ## Why it breaks on ROCm
    When the source is hipified and compiled with hipcc, `__CUDA_ARCH__` is undefined (device
    code is selected with `__HIP_DEVICE_COMPILE__`), and `CUDA_VERSION`-style numbers are
    missing or hold HIP values, so `#if __CUDA_ARCH__ >= 800` / `#if CUDA_VERSION >= 11000`
    silently drops the fast path (or picks the wrong one).

    ## Example
    ```python
    SRC = r'''
    __global__ void k(half* x) {
    #if __CUDA_ARCH__ >= 800
        x[threadIdx.x] = __hmax(x[threadIdx.x], 0);
    #endif
    }'''
    ```

    ## Manual migration
    Add the HIP side explicitly: `#if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__)` for
    ROCm paths, `__HIP_DEVICE_COMPILE__` for device-code detection, `__gfx942__`-style macros
    (or `__HIP_ARCH_*` feature macros) for architecture features, and
    `&& !defined(USE_ROCM)` on CUDA-version gates.

    ## References
    - ROCm/HIP `docs/how-to/hip_porting_guide.md`; pytorch `docs/source/notes/hip.rst`
    """

    code = "ROC602"
    name = "cuda-version-macro-in-source"
    category = "cuda-extension"
    severity = Severity.WARNING
    message = "CUDA arch/version macros in kernel source are undefined or differ under HIP"
    fact = "§7 CUDA_VERSION/__CUDA_ARCH__ row; [P1][H2]"
    triggers = ("__CUDA_ARCH__", "CUDA_VERSION", "CUDART_VERSION", "__CUDACC_VER")
    effort_hours = 1.0
    valid = [
        Valid('SRC = r"""__global__ void k(float* x) { x[threadIdx.x] = 0; }"""\n'),
        Valid('"""Checks __CUDA_ARCH__ >= 800 in the kernels."""\nimport os\n'),
        Valid('v = os.environ.get("CUDA_VERSION")\n'),
    ]
    invalid = [
        Invalid(
            "SRC = r'''\n"
            "__global__ void k(float* x) {\n"
            "#if __CUDA_ARCH__ >= 800\n"
            "    x[threadIdx.x] = 1;\n"
            "#endif\n"
            "}'''\n",
            line=1,
            column=7,
        ),
        Invalid(
            "import cupy\n"
            "k = cupy.RawModule(\n"
            "    code='#if CUDA_VERSION >= 11000\\nextern \"C\" void f() {}\\n#endif')\n"
        ),
    ]

    def check_source(self, node: cst.BaseExpression, text: str) -> None:
        names = _data()["macros"]["names"]
        found = [name for name in names if re.search(rf"\b{re.escape(name)}\b", text)]
        if found:
            listed = ", ".join(f"`{name}`" for name in found)
            self.report(
                node,
                message=(
                    f"{listed} in kernel source: undefined or different under HIP; add "
                    "`__HIP_PLATFORM_AMD__`/`USE_ROCM` branches"
                ),
            )


def _scope_of(ctx: PythonContext, node: cst.CSTNode) -> cst.CSTNode:
    """The innermost function around ``node``, else the module."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.FunctionDef):
            return ancestor
    return ctx.module


def _dispatches_on_rocm(ctx: PythonContext, scope: cst.CSTNode) -> bool:
    """Whether ``scope`` (a function, or the module's own statements) has an ``if`` that tests
    for a ROCm build (``if self.is_rocm_pytorch():``, ``if IS_ROCM:``, ``torch.version.hip``):
    an extension build there already has its ROCm path."""
    key = f"rocm-dispatch-{id(scope)}"
    cached = ctx.memo.get(key)
    if isinstance(cached, bool):
        return cached
    found = False
    stack: list[cst.CSTNode] = [scope]
    while stack and not found:
        current = stack.pop()
        if isinstance(current, (cst.If, cst.IfExp)):
            found = guards.ROCM_ONLY in ctx.guards.classify(current.test)
        for child in current.children:
            if isinstance(child, (cst.FunctionDef, cst.ClassDef)) and current is not scope:
                continue
            if isinstance(child, cst.FunctionDef) and scope is ctx.module:
                continue  # the module's own statements only
            stack.append(child)
    ctx.memo[key] = found
    return found


def _rocm_aware(ctx: PythonContext, node: cst.CSTNode) -> bool:
    """The build at ``node`` runs only on ROCm or sits in code that dispatches on ROCm."""
    return ctx.guards.only_on_rocm(node) or _dispatches_on_rocm(ctx, _scope_of(ctx, node))


#: Problem key of a file's CUDA extension builds: the builds (ROC600) and the nvcc flags they
#: pass (ROC603) are one problem, "build and check this extension on ROCm", at the build.
EXTENSION_BUILD = "cuda-extension-build"


class CudaExtensionBuild(PythonRule):
    """
    ## What it does
    Flags `torch.utils.cpp_extension.CUDAExtension(...)`, `load(...)` with `.cu` sources (or
    `with_cuda=True`) and `load_inline(..., cuda_sources=...)`. A source counts when its
    literal end is `.cu`: a string, an f-string (`f"{d}/k.cu"`), `os.path.join(d, "k.cu")` or
    `base / "k.cu"`.

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
    message = (
        "CUDA extension: hipified and built with hipcc on ROCm for PYTORCH_ROCM_ARCH "
        "(TORCH_CUDA_ARCH_LIST is ignored); build and check it on ROCm"
    )
    fact = "§7 CUDAExtension row, §6 TORCH_CUDA_ARCH_LIST row; [P9][P1]"
    triggers = ("cpp_extension",)
    effort_hours = 2.0
    valid = [
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
            self.report(node, problem=EXTENSION_BUILD)
        elif qualified in data["inline_loaders"]:
            if any(a.keyword is not None and a.keyword.value == "cuda_sources" for a in node.args):
                self.report(node, problem=EXTENSION_BUILD)
        elif qualified in data["loaders"] and self._gpu_load(node, data):
            self.report(node, problem=EXTENSION_BUILD)

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


_SWITCH_MESSAGE = (
    "nvcc-only switch reaches hipcc on ROCm, which forwards it to clang (no such option there; "
    "clang treats constexpr functions as host-device by default)"
)


class NvccArchFlags(PythonRule):
    """
    ## What it does
    Flags nvcc-only architecture flags (`-gencode arch=compute_80,code=sm_80`, `-arch=sm_90`,
    `--generate-code`, `--gpu-architecture`) and nvcc's `--expt-relaxed-constexpr` /
    `--expt-extended-lambda` switches (and their `--relaxed-constexpr` / `--extended-lambda`
    spellings) in string literals of files that use `torch.utils.cpp_extension`; one finding
    per file.

    ## Why it breaks on ROCm
    On ROCm, `cpp_extension` hands `extra_compile_args["nvcc"]` / `extra_cuda_cflags` to hipcc
    unchanged (it only renames `-D...CUDA...` macros to HIP) and adds its own
    `--offload-arch` flags from `PYTORCH_ROCM_ARCH`. hipcc forwards every option it does not
    handle itself to clang unchanged. The NVIDIA architecture flags mean nothing to clang and
    break or confuse the build; clang has no relaxed-constexpr or extended-lambda switch at all
    (it already treats unannotated `constexpr` functions as `__host__ __device__`), so the build
    stops.

    ## Example
    ```python
    nvcc_flags = ["-O3", "-gencode", "arch=compute_80,code=sm_80"]
    CUDAExtension("ops", ["ops.cu"], extra_compile_args={"nvcc": nvcc_flags})
    ```

    ## Manual migration
    Add the NVIDIA arch flags only for CUDA builds, and let `PYTORCH_ROCM_ARCH` (or explicit
    `--offload-arch=gfx942`) choose the AMD targets:
    ```python
    from torch.utils.cpp_extension import IS_HIP_EXTENSION

    nvcc_flags = ["-O3"]
    if not IS_HIP_EXTENSION:
        nvcc_flags += ["-gencode", "arch=compute_80,code=sm_80"]
    ```

    ## Known problems
    Not reported inside a module-level helper that the file calls only from NVIDIA-only branches
    (`add_cuda_gencodes(...)` under `if not IS_ROCM:`), nor in a build function (or build
    script) that already tests for a ROCm build: its flags are then chosen per vendor. In a file
    that also builds the extension (ROC600), the flags are related sites of that one finding
    (build and check the extension on ROCm), not a finding of their own.

    ## References
    - pytorch `torch/utils/cpp_extension.py` (`_hipify_compile_flags`, `_get_rocm_arch_flags`)
    - ROCm/llvm-project `amd/hipcc/src/hipBin_amd.h` (`executeHipCCCmd`)
    """

    code = "ROC603"
    name = "nvcc-arch-flags"
    category = "cuda-extension"
    severity = Severity.WARNING
    aggregate = "scope"
    message = "nvcc architecture flag reaches hipcc on ROCm (cpp_extension passes nvcc flags on)"
    fact = "§6 TORCH_CUDA_ARCH_LIST row, §7 CUDAExtension and nvcc-only flags rows; [P9][H5][H6]"
    triggers = (
        "-gencode",
        "arch=compute_",
        "-arch=sm_",
        "--generate-code",
        "--gpu-architecture",
        "relaxed-constexpr",
        "extended-lambda",
    )
    effort_hours = 0.5
    valid = [
        Valid(  # a gencode helper that only the non-ROCm branch calls
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "def add_cuda_gencodes(cc_flag):\n"
            "    cc_flag += ['-gencode', 'arch=compute_80,code=sm_80']\n"
            "if not SKIP_CUDA_BUILD and not IS_ROCM:\n"
            "    add_cuda_gencodes(cc_flag)\n",
            path="setup.py",
        ),
        Valid(
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "ext = CUDAExtension('ops', ['ops.cu'], extra_compile_args={'nvcc': ['-O3']})\n"
        ),
        Valid("HELP = '-gencode arch=compute_80,code=sm_80 builds for A100'\n"),
        Valid(
            '"""Pass -gencode arch=compute_80,code=sm_80 on CUDA."""\n'
            "from torch.utils.cpp_extension import CUDAExtension\n"
        ),
    ]
    invalid = [
        Invalid(  # the same helper called on every build
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "def add_cuda_gencodes(cc_flag):\n"
            "    cc_flag += ['-gencode', 'arch=compute_80,code=sm_80']\n"
            "if not SKIP_CUDA_BUILD:\n"
            "    add_cuda_gencodes(cc_flag)\n",
            path="setup.py",
            line=3,
        ),
        Invalid(
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "ext = CUDAExtension('ops', ['ops.cu'],\n"
            "    extra_compile_args={'nvcc': ['-O3', '-gencode', 'arch=compute_80,code=sm_80']})\n",
            line=3,
            column=41,
            count=1,
        ),
        Invalid(
            "import torch.utils.cpp_extension as ext\n"
            "flags = ['-arch=sm_90a']\n"
            "mod = ext.load('ops', ['ops.cu'], extra_cuda_cflags=flags)\n",
            line=2,
        ),
        Invalid(  # one finding per flag list
            "from torch.utils.cpp_extension import load\n\n"
            "ops = load('ops', ['ops.cu'],\n"
            "           extra_cuda_cflags=['-O3', '--expt-relaxed-constexpr', '--expt-extended-lambda'])\n",
            line=4,
            column=38,
            count=1,
        ),
        Invalid(
            "from torch.utils.cpp_extension import CUDAExtension\n"
            "NVCC = ['-O3', '--extended-lambda']\n"
            "ext = CUDAExtension('ops', ['ops.cu'], extra_compile_args={'nvcc': NVCC})\n",
            line=2,
        ),
    ]

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self._active: bool | None = None
        self._patterns = [re.compile(p) for p in _data()["nvcc_flags"]["patterns"]]
        self._switches = [re.compile(p) for p in _data()["nvcc_only_flags"]["patterns"]]
        self._docstrings: frozenset[int] | None = None
        self._found: list[tuple[cst.SimpleString, str]] = []

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        value = node.evaluated_value
        if not isinstance(value, str):
            return
        switch = any(p.search(value) for p in self._switches)
        if not switch and not any(p.search(value) for p in self._patterns):
            return
        if self._active is None:
            # only files that build extensions: the flags then reach cpp_extension
            self._active = "cpp_extension" in self.ctx.module_code()
        if not self._active:
            return
        if self._docstrings is None:
            self._docstrings = docstring_nodes(self.ctx.module)
        if id(node) not in self._docstrings:
            message = _SWITCH_MESSAGE if switch else self.message
            self._found.append((node, f"{message}: `{value[:60]}`"))

    def leave_Module(self, original_node: cst.Module) -> None:
        for node, message in self._found:
            if _rocm_aware(self.ctx, node) or called_only_on_nvidia(self.ctx, node):
                continue  # flags for the CUDA build only, or a build that dispatches on ROCm
            self.report(node, message=message, problem=EXTENSION_BUILD)
