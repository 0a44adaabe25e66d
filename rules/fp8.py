"""ROC12x: OCP FP8 dtypes and their 448 maximum on MI300 (gfx942 implements FNUZ FP8 only)."""

from __future__ import annotations

import itertools
import re

import libcst as cst

from migrator.astutil import string_value
from migrator.context import PythonContext
from migrator.model import Severity
from migrator.paths import is_test_path
from migrator.rule import Invalid, PythonRule, Valid

from ._rocm_guards import unreachable_on_rocm
from ._tree import Tree, identifier, qualified_refs, tree

OCP = {"torch.float8_e4m3fn", "torch.float8_e5m2"}
FNUZ = {"torch.float8_e4m3fnuz", "torch.float8_e5m2fnuz"}
E4M3FN = "torch.float8_e4m3fn"


def _inside_finfo(ctx: PythonContext, tree_: Tree, node: cst.CSTNode) -> bool:
    parent = tree_.parent(node)
    if isinstance(parent, cst.Arg):
        call = tree_.parent(parent)
        if isinstance(call, cst.Call):
            qualified = ctx.qualname(call.func)
            return qualified in {"torch.finfo", "torch.iinfo"}
    return False


class OcpFp8Dtype(PythonRule):
    """
    ## What it does
    Flags uses of the OCP FP8 dtypes `torch.float8_e4m3fn` and `torch.float8_e5m2` (casts,
    `dtype=` arguments, dtype checks) in files that never mention the FNUZ variants.

    ## Why it breaks on ROCm
    MI300X/MI325X (gfx942) implement FP8 in the FNUZ encoding only (`float8_e4m3fnuz`,
    `float8_e5m2fnuz`: no infinities, no negative zero, NaN = 0x80). OCP tensors cast and store
    fine, but FP8 GEMMs (`torch._scaled_mm`, hipBLASLt, FP8 kernels) expect FNUZ on gfx942, and
    the same bits mean half the value in e4m3fnuz. gfx950 (MI350X) and RDNA4 use OCP, so the dtype
    has to be chosen at run time.

    ## Example
    ```python
    q = (w / scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    ```

    ## Manual migration
    Pick the dtype from the device, as vLLM does, and derive the range from it:
    ```python
    def fp8_dtype(device=0):
        if torch.version.hip and "gfx94" in torch.cuda.get_device_properties(device).gcnArchName:
            return torch.float8_e4m3fnuz
        return torch.float8_e4m3fn

    FP8 = fp8_dtype()
    q = (w / scale).clamp(-torch.finfo(FP8).max, torch.finfo(FP8).max).to(FP8)
    ```
    Checkpoints stored as e4m3fn need converting for gfx942 (reinterpret as e4m3fnuz, zero the
    0x80 byte, double the scales).

    ## Known problems
    One finding per function (the first use; the message counts the others).
    `torch.finfo(torch.float8_e4m3fn)`, `storage_dtype` and `torch_dtype` values (arguments,
    also positional ones of a function of the same file whose parameter has that name, parameter
    defaults, variables, class attributes, config keys and what a getter of that name returns:
    FP8 used only to store or load
    weights that are upcast before compute, which works on every GPU), members of a dtype table
    (a literal tuple/list/set bound to a name the file only tests membership in, with `in` or
    `isinstance`, or prints), test files
    that never put anything on a GPU (no `cuda`, `device`, `gpu`, ...: every tensor is a CPU
    tensor) and FP8 tensors made on
    the CPU (`torch.ones(...).to(torch.float8_e4m3fn)` without `device=`: storage, no FP8
    arithmetic on the GPU) and dtype tests (`w.dtype == torch.float8_e4m3fn`,
    `w.dtype in (torch.float8_e4m3fn, torch.int8)`: they recognise tensors made elsewhere, such as
    an FP8 checkpoint's weights, and make none) are not reported; files
    that also name an FNUZ dtype are taken as already choosing at run time. Files that implement
    a block-scaled format (they name NVFP4, MXFP4/6/8, MXINT8, E8M0 or `float4_e2m1`) are not
    checked: there `float8_e4m3fn` is the format's own element or scale type (OCP by
    definition), and only gfx950 has MX hardware (see ROC121).

    ## References
    - ROCm HIP FP8 numbers: https://rocm.docs.amd.com/projects/HIP/en/latest/reference/fp8_numbers.html
    - vLLM `vllm/platforms/rocm.py` (`fp8_dtype`), `normalize_e4m3fn_to_e4m3fnuz`
    """

    code = "ROC120"
    name = "ocp-fp8-dtype"
    category = "fp8"
    severity = Severity.WARNING
    aggregate = "file"
    message = "OCP FP8 dtype: MI300X (gfx942) supports only FNUZ FP8 (`float8_e4m3fnuz`)"
    fact = "§8 dtypes, hardware, rewrite rule, block-scaled formats; §10.4; [H4][L4][L5][MX2]"
    triggers = ("float8_e4m3fn", "float8_e5m2")
    targets = ("gfx942",)
    effort_hours = 1.0
    valid = [
        Valid(
            "import torch\n"
            "def nvfp4_scales(w, group):\n"
            "    return torch.empty(w.shape[0], w.shape[1] // group, dtype=torch.float8_e4m3fn,\n"
            "                       device=w.device)\n"
        ),
        Valid("import torch\nx = torch.zeros(4).to(torch.bfloat16)\n"),
        Valid(
            "import torch\nfp8 = torch.float8_e4m3fnuz if torch.version.hip "
            "else torch.float8_e4m3fn\n"
        ),
        Valid("import torch\nFP8_MAX = torch.finfo(torch.float8_e4m3fn).max\n"),
        Valid("class torch:\n    float8_e4m3fn = 1\nx = torch.float8_e4m3fn\n"),
        Valid('import torch\n"""Quantize to torch.float8_e4m3fn."""\n# torch.float8_e5m2\n'),
        Valid("import torch\nmodel.enable_layerwise_casting(storage_dtype=torch.float8_e4m3fn)\n"),
        Valid(
            "import torch\n\ndef enable_layerwise_casting(\n"
            "    self, storage_dtype: torch.dtype = torch.float8_e4m3fn, compute_dtype=None\n"
            "):\n    return storage_dtype\n"
        ),
        Valid("import torch\nstorage_dtype = torch.float8_e4m3fn\n"),
        Valid(
            "import torch\n"
            "def get_memory_usage(storage_dtype, compute_dtype):\n"
            "    model.enable_layerwise_casting(storage_dtype=storage_dtype)\n"
            "fp8 = get_memory_usage(torch.float8_e4m3fn, torch.bfloat16)\n"
        ),
        Valid(
            "import torch\n"
            "class TestSingleFile:\n"
            "    torch_dtype = torch.float8_e4m3fn\n"
            "    @property\n"
            "    def torch_dtype(self):\n"
            "        return torch.float8_e5m2\n"
        ),
        Valid(
            "import torch\n"
            "SUPPORTED = (torch.int8, torch.float8_e4m3fn, torch.uint4)\n"
            "def check(dtype):\n"
            "    if dtype not in SUPPORTED:\n"
            "        raise ValueError(f'{dtype} is not one of {SUPPORTED}')\n"
        ),
        Valid(
            "import torch\n"
            "def make_blockwise(w, s):\n"
            '    """Pure CPU logic: no GPU needed."""\n'
            "    return (w.float() / s).to(torch.float8_e4m3fn)\n"
            "def test_roundtrip():\n"
            "    w = torch.randn(8, 8)\n"
            "    assert make_blockwise(w, 448.0).shape == w.shape\n",
            path="tests/test_fp8_blockwise.py",
        ),
        Valid('import torch\nconfig = {"storage_dtype": torch.float8_e4m3fn}\n'),
        Valid(
            "import torch\n"
            "w = torch.ones(128, 200, dtype=torch.bfloat16).to(torch.float8_e4m3fn)\n"
            "s = torch.randn(8, 4).to(torch.float8_e4m3fn)\n"
            "r = torch.randint(0, 256, (4,), dtype=torch.uint8).view(torch.float8_e4m3fn)\n"
            "t = (torch.rand(4, 4) * 0.5 + 0.5).to(torch.float8_e4m3fn)\n"
            "e = torch.empty(8, dtype=torch.float8_e5m2, device='cpu')\n"
        ),
        Valid(
            "import torch\n"
            "def scales(w, layer):\n"
            "    if w.dtype == torch.float8_e4m3fn:\n"
            "        return layer.weight_scale_inv\n"
            "    if w.dtype not in (torch.float8_e4m3fn, torch.int8):\n"
            "        return None\n"
            "    assert torch.float8_e5m2 != w.dtype\n"
        ),
    ]
    invalid = [
        Invalid(
            "import torch\nq = weight.to(torch.float8_e4m3fn)\n",
            line=2,
            column=15,
        ),
        Invalid("import torch as tt\ngrad = tt.empty(8, dtype=tt.float8_e5m2, device='cuda')\n"),
        Invalid("import torch\nq = torch.ones(4).cuda().to(torch.float8_e4m3fn)\n"),
        Invalid("from torch import float8_e4m3fn\nDTYPE = float8_e4m3fn\n"),
        Invalid(
            "import torch\n"
            "def make_blockwise(w, s):\n"
            "    return (w.float() / s).to(torch.float8_e4m3fn)\n"
            "def test_roundtrip():\n"
            "    w = torch.randn(8, 8, device='cuda')\n"
            "    assert make_blockwise(w, 448.0).shape == w.shape\n",
            path="tests/test_fp8_blockwise.py",
            line=3,
        ),
        Invalid(
            "import torch\n"
            "DTYPES = (torch.bfloat16, torch.float8_e4m3fn)\n"
            "for dtype in DTYPES:\n"
            "    run(torch.ones(4, device='cuda').to(dtype))\n"
        ),
        Invalid(
            "import torch\ndef is_fp8(t):\n"
            "    return t.dtype in (torch.float8_e4m3fn, torch.float8_e5m2)\n"
            "def to_fp8(t):\n    return t.to(torch.float8_e5m2)\n",
            count=1,
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        tree_ = tree(self.ctx)
        if qualified_refs(self.ctx, tree_, FNUZ):
            return
        by_scope: dict[int, list[cst.CSTNode]] = {}
        for ref in compute_refs(self.ctx, tree_):
            by_scope.setdefault(id(tree_.scope(ref)), []).append(ref)
        for refs in by_scope.values():
            first = refs[0]
            dtype = self.ctx.qualname(first) or ""
            more = f" ({len(refs) - 1} more use(s) in this scope)" if len(refs) > 1 else ""
            self.report(
                first,
                message=(
                    f"`{dtype}` is OCP FP8: MI300X (gfx942) supports only FNUZ FP8 "
                    f"(`{_FNUZ_OF[dtype]}`); choose the dtype at run time{more}"
                ),
            )


def compute_refs(ctx: PythonContext, tree_: Tree) -> list[cst.CSTNode]:
    """The OCP FP8 dtype uses that may reach FP8 arithmetic on the GPU: not a finfo query, a
    storage dtype, a CPU tensor, a dtype test or table, a block-scaled format's own type, code
    that never runs on ROCm, or a test file that never puts anything on a GPU."""
    refs = qualified_refs(ctx, tree_, OCP)
    if refs and _BLOCK_SCALED.search(ctx.module_code()):
        return []  # a block-scaled format's own element/scale type (rocm-facts §8)
    if refs and is_test_path(ctx.path) and not _mentions_gpu(tree_):
        return []  # every tensor of such a test lives on the CPU: FP8 storage, no FP8 kernel
    return [
        ref
        for ref in refs
        if not (
            _inside_finfo(ctx, tree_, ref)
            or _storage_only(ctx, tree_, ref)
            or _cpu_only(ctx, tree_, ref)
            or _compared(tree_, ref)
            or _dtype_table(tree_, ref)
            or unreachable_on_rocm(ctx, tree_, ref)
        )
    ]


#: Words that put a tensor on a GPU (``.cuda()``, ``device=``, ``torch_device``, accelerators).
_GPU_WORDS = re.compile(r"cuda|device|gpu|accelerator|xpu|npu|mps", re.IGNORECASE)


def _mentions_gpu(tree_: Tree) -> bool:
    """Whether code (a name, an attribute, a string that is not a docstring) mentions a GPU;
    comments and docstrings saying "no GPU needed" do not count."""
    for node in tree_.nodes:
        if isinstance(node, cst.Name) and _GPU_WORDS.search(node.value):
            return True
        if isinstance(node, cst.SimpleString) and _GPU_WORDS.search(node.value):
            if not isinstance(tree_.parent(node), cst.Expr):
                return True
    return False


_FNUZ_OF = {
    "torch.float8_e4m3fn": "torch.float8_e4m3fnuz",
    "torch.float8_e5m2": "torch.float8_e5m2fnuz",
}


#: torch factories that make a tensor on the CPU unless given ``device=``.
_FACTORIES = frozenset(
    {"ones", "zeros", "empty", "full", "rand", "randn", "randint", "arange", "tensor", "ones_like"}
)


def _cpu_factory(ctx: PythonContext, node: cst.CSTNode) -> bool:
    """``torch.ones(...)`` (a chain of ``.to``/``.float()`` on it included) with no ``device=``
    or ``device="cpu"``: a tensor that lives on the CPU."""
    while isinstance(node, (cst.Call, cst.BinaryOperation)):
        if isinstance(node, cst.BinaryOperation):
            # ``torch.rand(n) * 0.5 + 0.5``: arithmetic with a CPU tensor stays on the CPU
            return all(
                _cpu_factory(ctx, side) or isinstance(side, (cst.Integer, cst.Float))
                for side in (node.left, node.right)
            )
        qualified = ctx.qualname(node.func) or ""
        if qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1] in _FACTORIES:
            for argument in node.args:
                if argument.keyword is not None and argument.keyword.value == "device":
                    value = argument.value
                    return isinstance(value, cst.SimpleString) and value.raw_value == "cpu"
            return True
        if not isinstance(node.func, cst.Attribute) or node.func.attr.value == "cuda":
            return False
        for argument in node.args:
            if argument.keyword is not None and argument.keyword.value == "device":
                return False
            if argument.keyword is None and not _is_dtype(ctx, argument.value):
                return False  # ``.to("cuda")``, ``.to(device)``, ``.to(other)``
        node = node.func.value
    return False


def _is_dtype(ctx: PythonContext, node: cst.BaseExpression) -> bool:
    qualified = ctx.qualname(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
    return bool(qualified and qualified.startswith("torch.") and qualified != "torch.device")


def _cpu_only(ctx: PythonContext, tree_: Tree, ref: cst.CSTNode) -> bool:
    """The dtype casts or creates a CPU tensor (``torch.ones(4).to(fp8)``,
    ``torch.empty(8, dtype=fp8)``): FP8 storage on the CPU works on every build."""
    argument = tree_.parent(ref)
    call = tree_.parent(argument) if isinstance(argument, cst.Arg) else None
    if not isinstance(call, cst.Call) or not isinstance(argument, cst.Arg):
        return False
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("to", "view"):
        if any(a.keyword is not None and a.keyword.value == "device" for a in call.args):
            return False
        if len(call.args) != 1:
            return False
        return _cpu_factory(ctx, call.func.value)
    keyword = argument.keyword.value if argument.keyword is not None else ""
    return keyword == "dtype" and _cpu_factory(ctx, call)


def _compared(tree_: Tree, ref: cst.CSTNode) -> bool:
    """``t.dtype == torch.float8_e4m3fn``, ``w.dtype in (torch.float8_e4m3fn, torch.int8)``: a
    dtype test recognises tensors made elsewhere (an FP8 checkpoint's weights) and makes none."""
    node: cst.CSTNode = ref
    parent = tree_.parent(node)
    if isinstance(parent, cst.Element):  # one member of a literal tuple, list or set
        node = tree_.parent(parent) or parent
        parent = tree_.parent(node)
    if isinstance(parent, cst.ComparisonTarget):
        return True
    return isinstance(parent, cst.Comparison) and parent.left is node


def _bound_name(tree_: Tree, ref: cst.CSTNode) -> str | None:
    """The name a value is bound to where it is written: a keyword argument, a parameter's
    default, a plain or annotated assignment to one name, or a string key of a dict literal."""
    parent = tree_.parent(ref)
    if isinstance(parent, cst.Arg) and parent.keyword is not None:
        return parent.keyword.value
    if isinstance(parent, cst.Param) and parent.default is ref:
        return parent.name.value
    if isinstance(parent, cst.Assign) and parent.value is ref and len(parent.targets) == 1:
        target = parent.targets[0].target
        return target.value if isinstance(target, cst.Name) else None
    if isinstance(parent, cst.AnnAssign) and parent.value is ref:
        return parent.target.value if isinstance(parent.target, cst.Name) else None
    if isinstance(parent, cst.DictElement) and parent.value is ref:
        key = string_value(parent.key)
        return key if isinstance(key, str) else None
    return None


#: Names of a dtype that weights are stored or loaded in (upcast before any arithmetic).
_STORAGE_NAMES = frozenset({"storage_dtype", "torch_dtype"})


def _storage_only(ctx: PythonContext, tree_: Tree, ref: cst.CSTNode) -> bool:
    """``storage_dtype=torch.float8_e4m3fn`` or ``torch_dtype=...`` (an argument, also a
    positional one of a function of this file whose parameter has that name, a parameter's
    default, a variable, a class attribute, a config key, or what a getter of that name returns):
    FP8 used only to store or load weights that are upcast before compute."""
    name = _bound_name(tree_, ref) or _positional_parameter(tree_, ref)
    if name is None:
        parent = tree_.parent(ref)
        if isinstance(parent, cst.Return):
            function = next(
                (a for a in tree_.ancestors(parent) if isinstance(a, cst.FunctionDef)), None
            )
            name = function.name.value if function is not None else None
    return name in _STORAGE_NAMES


def _positional_parameter(tree_: Tree, ref: cst.CSTNode) -> str | None:
    """The parameter a positional argument binds when the call names a function defined in
    this file (``get_memory_usage(torch.float8_e4m3fn, ...)`` for ``def get_memory_usage(
    storage_dtype, compute_dtype)``)."""
    argument = tree_.parent(ref)
    call = tree_.parent(argument) if isinstance(argument, cst.Arg) else None
    if not isinstance(call, cst.Call) or not isinstance(argument, cst.Arg):
        return None
    if argument.keyword is not None or argument.star or not isinstance(call.func, cst.Name):
        return None
    before = list(itertools.takewhile(lambda a: a is not argument, call.args))
    if any(a.star or a.keyword is not None for a in before):
        return None
    index = len(before)
    names: set[str | None] = set()
    for node in tree_.nodes:
        if isinstance(node, cst.FunctionDef) and node.name.value == call.func.value:
            params = [*node.params.posonly_params, *node.params.params]
            names.add(params[index].name.value if index < len(params) else None)
    return names.pop() if len(names) == 1 else None


def _dtype_table(tree_: Tree, ref: cst.CSTNode) -> bool:
    """A member of a literal tuple, list or set bound to a name that the file only tests
    membership in (``SUPPORTED = (torch.int8, torch.float8_e4m3fn)`` ... ``if d in SUPPORTED``):
    a table of accepted dtypes, which makes no tensor."""
    element = tree_.parent(ref)
    collection = tree_.parent(element) if isinstance(element, cst.Element) else None
    if not isinstance(collection, (cst.Tuple, cst.List, cst.Set)):
        return False
    assign = tree_.parent(collection)
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return False
    target = assign.targets[0].target
    if not isinstance(target, cst.Name):
        return False
    uses = [
        node
        for node in tree_.nodes
        if isinstance(node, cst.Name) and node.value == target.value and node is not target
    ]
    return bool(uses) and all(_membership_tested(tree_, use) for use in uses)


def _membership_tested(tree_: Tree, use: cst.CSTNode) -> bool:
    """``d in TABLE``, ``isinstance(d, TABLE)``, ``f"... {TABLE}"`` (a message listing it) or
    another assignment of the table (one per torch version)."""
    parent = tree_.parent(use)
    if isinstance(parent, cst.ComparisonTarget):
        return isinstance(parent.operator, (cst.In, cst.NotIn))
    if isinstance(parent, cst.FormattedStringExpression):
        return True
    if isinstance(parent, cst.AssignTarget):
        return parent.target is use
    if isinstance(parent, cst.Arg) and parent.keyword is None:
        call = tree_.parent(parent)
        return (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Name)
            and call.func.value in ("isinstance", "issubclass")
            and len(call.args) == 2
            and call.args[1] is parent
        )
    return False


#: Names of block-scaled formats whose elements or scales are OCP E4M3 by definition.
_BLOCK_SCALED = re.compile(r"nvfp4|mxfp[468]|mxint8|e8m0|float4_e2m1", re.IGNORECASE)

_SIZE_WORDS = ("size", "width", "height", "res", "dim", "shape", "len", "pixels")


def _is_448(node: cst.CSTNode) -> bool:
    if isinstance(node, (cst.Integer, cst.Float)):
        try:
            return float(node.evaluated_value) == 448.0
        except (ValueError, OverflowError):
            return False
    return False


def _looks_like_size(tree_: Tree, literal: cst.CSTNode) -> bool:
    node: cst.CSTNode = literal
    parent = tree_.parent(node)
    if isinstance(parent, cst.UnaryOperation):
        node, parent = parent, tree_.parent(parent)
    if isinstance(parent, cst.Element):
        return True  # (448, 448) image sizes, lists of resolutions
    if isinstance(parent, cst.Arg) and parent.keyword is not None:
        return any(word in parent.keyword.value.lower() for word in _SIZE_WORDS)
    if isinstance(parent, (cst.Assign, cst.AnnAssign)):
        targets = (
            [t.target for t in parent.targets]
            if isinstance(parent, cst.Assign)
            else [parent.target]
        )
        names = [identifier(target) or "" for target in targets]
        return any(word in name.lower() for name in names for word in _SIZE_WORDS)
    return False


class Fp8E4m3MaxLiteral(PythonRule):
    """
    ## What it does
    Flags the literal `448` (the largest `float8_e4m3fn` value) in files that use
    `torch.float8_e4m3fn`: scale computations, clamps and `FP8_MAX = 448.0` constants.

    ## Why it breaks on ROCm
    On MI300X (gfx942) FP8 is `float8_e4m3fnuz`, whose largest value is **240**. Scales computed
    against 448 push values past the FNUZ range: they saturate or turn into NaN (FNUZ has no
    infinity), silently corrupting quantized weights and activations.

    ## Example
    ```python
    FP8_MAX = 448.0
    scale = w.abs().max() / FP8_MAX
    ```

    ## Manual migration
    Derive the maximum from the dtype chosen at run time (see ROC120):
    ```python
    FP8_MAX = torch.finfo(fp8_dtype()).max   # 448.0 for e4m3fn, 240.0 for e4m3fnuz
    ```

    ## Known problems
    Only files with a use of `torch.float8_e4m3fn` that ROC120 reports are checked (next to FP8
    storage, CPU tensors, dtype tests or tables only, 448 matches the dtype it serves); `448` as
    an element of a tuple
    or list, or passed as a size/width/height/resolution, is taken to be an image size. Files
    that implement a block-scaled format (they name NVFP4, MXFP4/6/8, MXINT8, E8M0 or
    `float4_e2m1`) are not checked: there 448 is the format's own constant (OCP MX elements and
    NVFP4 block scales are OCP E4M3 by definition, whatever the GPU), and gfx942 has no MX
    hardware to compute them in FNUZ.

    ## References
    - ROCm HIP FP8 numbers: https://rocm.docs.amd.com/projects/HIP/en/latest/reference/fp8_numbers.html
    """

    code = "ROC121"
    name = "fp8-e4m3fn-max-literal"
    category = "fp8"
    severity = Severity.WARNING
    aggregate = "file"
    message = "448 is the e4m3fn maximum; MI300X's float8_e4m3fnuz tops out at 240"
    fact = "§8 maxima, rewrite rule, block-scaled formats; §10.4; [V][H4][L4][MX1][MX2][MX3]"
    triggers = ("float8_e4m3fn",)
    targets = ("gfx942",)
    effort_hours = 0.25
    valid = [
        Valid("import torch\nFP8_MAX = torch.finfo(torch.float8_e4m3fn).max\n"),
        Valid("import torch\nFP8_MAX = 448.0\nx = torch.zeros(2).to(torch.bfloat16)\n"),
        Valid("import torch\nq = torch.ones(2).to(torch.float8_e4m3fn)\nimage_size = 448\n"),
        Valid(
            "import torch\nFP8 = torch.float8_e4m3fnuz if torch.version.hip "
            "else torch.float8_e4m3fn\nMAX = 240.0 if torch.version.hip else 448.0\n"
        ),
        Valid("import torch\nq = torch.ones(2).to(torch.float8_e4m3fn)\n# clamp at 448\n"),
        Valid(
            "import torch\n"
            "def test_scale():\n"
            "    w = torch.randn(8, 8)\n"
            "    s = w.abs().amax() / 448.0\n"
            "    q = (w / s).to(torch.float8_e4m3fn)\n",
            path="tests/test_scale.py",
        ),
        Valid(
            "import torch\n"
            "E4M3_MAX = 448.0  # NVFP4 block scales are E4M3\n"
            "def quantize_nvfp4(x, amax):\n"
            "    scale = (amax / 6.0).clamp(max=E4M3_MAX).to(torch.float8_e4m3fn)\n"
            "    return scale\n"
        ),
    ]
    invalid = [
        Invalid(
            "import torch\nFP8_MAX = 448.0\n"
            "def q(w):\n    return (w / (w.abs().max() / FP8_MAX)).to(torch.float8_e4m3fn)\n",
            line=2,
            column=11,
        ),
        Invalid(
            "from torch import float8_e4m3fn\n"
            "def q(x):\n    return x.clamp(-448, 448).to(float8_e4m3fn)\n",
            count=1,
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        tree_ = tree(self.ctx)
        if qualified_refs(self.ctx, tree_, FNUZ):
            return
        if not any(self.ctx.qualname(ref) == E4M3FN for ref in compute_refs(self.ctx, tree_)):
            return  # 448 matches the e4m3fn it serves where that use is no ROCm problem
        block_scaled: bool | None = None
        for candidate in tree_.nodes:
            if not _is_448(candidate) or _looks_like_size(tree_, candidate):
                continue
            if block_scaled is None:
                block_scaled = bool(_BLOCK_SCALED.search(self.ctx.module_code()))
            if block_scaled:
                return  # 448 is the block-scaled format's own constant there
            if unreachable_on_rocm(self.ctx, tree_, candidate):
                continue
            self.report(candidate)
