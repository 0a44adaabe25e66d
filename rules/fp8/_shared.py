"""What ROC120 and ROC121 share: the OCP and FNUZ FP8 dtype names, and which uses of them stay on
the CPU, only store, or only test a dtype."""

from __future__ import annotations

import ast
import itertools
import re

import libcst as cst

from migrator.api import PythonContext
from migrator.api.knowledge import is_test_path
from migrator.api.syntax import string_value

from .._file_ast import (
    code_strings,
    file_nodes,
    file_text,
    parameter_names,
    resolves_anywhere,
    spelled_names,
)
from .._rocm_guards import unreachable_on_rocm
from .._tree import Tree, qualified_refs

OCP = {"torch.float8_e4m3fn", "torch.float8_e5m2"}

FNUZ = {"torch.float8_e4m3fnuz", "torch.float8_e5m2fnuz"}


def names_fnuz(ctx: PythonContext) -> bool:
    """Whether the file names an FNUZ dtype anywhere: it then chooses the FP8 dtype at run time.
    Read from the whole file (``rules._file_ast``): the rules parse only the statements of
    their triggers."""
    return resolves_anywhere(ctx, FNUZ)


def _inside_finfo(ctx: PythonContext, tree_: Tree, node: cst.CSTNode) -> bool:
    parent = tree_.parent(node)
    if isinstance(parent, cst.Arg):
        call = tree_.parent(parent)
        if isinstance(call, cst.Call):
            qualified = ctx.qualname(call.func)
            return qualified in {"torch.finfo", "torch.iinfo"}
    return False


def compute_refs(ctx: PythonContext, tree_: Tree) -> list[cst.CSTNode]:
    """The OCP FP8 dtype uses that may reach FP8 arithmetic on the GPU: not a finfo query, a
    storage dtype, a CPU tensor, a dtype test or table, a block-scaled format's own type, code
    that never runs on ROCm, or a test file that never puts anything on a GPU."""
    refs = qualified_refs(ctx, tree_, OCP)
    text = file_text(ctx)
    if refs and BLOCK_SCALED.search(text):
        return []  # a block-scaled format's own element/scale type (rocm-facts §8)
    if refs and is_test_path(ctx.path) and not _mentions_gpu(ctx, text):
        return []  # every tensor of such a test lives on the CPU: FP8 storage, no FP8 kernel
    if refs and not _FP8_KERNEL.search(_without_comments(text)):
        # no FP8 kernel here: the file casts, stores and loads FP8 tensors (weights kept in FP8
        # and upcast before compute); only what it hands out may reach a kernel elsewhere
        refs = [ref for ref in refs if _handed_out(tree_, ref)]
    return [
        ref
        for ref in refs
        if not (
            _inside_finfo(ctx, tree_, ref)
            or _storage_only(ctx, tree_, ref)
            or _cpu_only(ctx, tree_, ref)
            or _compared(tree_, ref)
            or _dtype_table(ctx, tree_, ref)
            or unreachable_on_rocm(ctx, tree_, ref)
        )
    ]


#: What does arithmetic on FP8 tensors, where the encoding matters: a scaled GEMM
#: (``torch._scaled_mm``, ``_scaled_grouped_mm``), a kernel library (torchao, Transformer Engine,
#: Triton, FlashAttention, DeepGEMM, FBGEMM, vLLM, CUTLASS, Quark, MS-AMP) or a custom op
#: (``torch.ops.*``, ``ops.fp8_gemm``, an extension module; any GEMM, matmul or kernel named in the
#: file counts). Casts, copies, storage and loading are conversions
#: that every GPU does right for the OCP dtypes.
_FP8_KERNEL = re.compile(
    r"scaled_\w*mm\s*\(|_mm\s*\(|gemm|matmul|kernel|torchao|transformer_engine|fp8_autocast"
    r"|triton|flash_attn|fbgemm|vllm|cutlass|quark|msamp|\bops\.|_C\b|cpp_extension"
)


def _without_comments(text: str) -> str:
    return re.sub(r"#[^\n]*", "", text)


def _viewed_as(tree_: Tree, ref: cst.CSTNode) -> bool:
    """``raw.view(torch.float8_e4m3fn)``: bytes read back as the dtype they were written in (a
    checkpoint's tensor), not a conversion into it."""
    argument = tree_.parent(ref)
    call = tree_.parent(argument) if isinstance(argument, cst.Arg) else None
    return (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and call.func.attr.value == "view"
    )


def _handed_out(tree_: Tree, ref: cst.CSTNode) -> bool:
    """The dtype bound to a name at module level (``FP8 = torch.float8_e4m3fn``, which other
    files import), or used in a ``return`` (``return (w / s).to(torch.float8_e4m3fn)``: a
    quantizer whose FP8 tensors its callers may hand to a kernel), unless it only reads bytes
    back (``.view``)."""
    if any(isinstance(ancestor, cst.Return) for ancestor in tree_.ancestors(ref)):
        return not _viewed_as(tree_, ref)
    parent = tree_.parent(ref)
    if isinstance(parent, cst.IfExp):
        parent = tree_.parent(parent)
    return (
        isinstance(parent, (cst.Assign, cst.AnnAssign))
        and tree_.scope(ref) is tree_.module
        and not any(isinstance(ancestor, cst.ClassDef) for ancestor in tree_.ancestors(ref))
    )


#: Words that put a tensor on a GPU (``.cuda()``, ``device=``, ``torch_device``, accelerators).
_GPU_WORDS = re.compile(r"cuda|device|gpu|accelerator|xpu|npu|mps", re.IGNORECASE)


def _mentions_gpu(ctx: PythonContext, text: str) -> bool:
    """Whether the file's code (an identifier, a string that is not a docstring or an
    f-string's literal text) mentions a GPU anywhere; comments and docstrings saying "no GPU
    needed" do not count (a file ``ast`` rejects counts as mentioning one)."""
    if not _GPU_WORDS.search(text):
        return False
    nodes = file_nodes(ctx)
    if nodes is None:
        return True
    for node in nodes:
        if any(_GPU_WORDS.search(name) for name in spelled_names(node)):
            return True
    return any(_GPU_WORDS.search(string) for string in code_strings(nodes))


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
    name = _bound_name(tree_, ref) or _positional_parameter(ctx, tree_, ref)
    if name is None:
        parent = tree_.parent(ref)
        if isinstance(parent, cst.Return):
            function = next(
                (a for a in tree_.ancestors(parent) if isinstance(a, cst.FunctionDef)), None
            )
            name = function.name.value if function is not None else None
    return name in _STORAGE_NAMES


def _positional_parameter(ctx: PythonContext, tree_: Tree, ref: cst.CSTNode) -> str | None:
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
    # the file's functions of that name, wherever they are (read from the whole file)
    names = parameter_names(ctx, call.func.value, len(before))
    return names.pop() if len(names) == 1 else None


def _dtype_table(ctx: PythonContext, tree_: Tree, ref: cst.CSTNode) -> bool:
    """A member of a literal tuple, list or set bound to a name that the file only tests
    membership in (``SUPPORTED = (torch.int8, torch.float8_e4m3fn)`` ... ``if d in SUPPORTED``):
    a table of accepted dtypes, which makes no tensor; or the key of a dict literal that maps
    the dtype to a string (its name in a file format or a message)."""
    element = tree_.parent(ref)
    if (
        isinstance(element, cst.DictElement)
        and element.key is ref
        and isinstance(element.value, (cst.SimpleString, cst.ConcatenatedString))
    ):
        return True  # ``{torch.float8_e4m3fn: "F8_E4M3"}``: the dtype's name in a format
    collection = tree_.parent(element) if isinstance(element, cst.Element) else None
    if not isinstance(collection, (cst.Tuple, cst.List, cst.Set)):
        return False
    assign = tree_.parent(collection)
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return False
    target = assign.targets[0].target
    return isinstance(target, cst.Name) and _only_membership_tested(ctx, target.value)


def _only_membership_tested(ctx: PythonContext, name: str) -> bool:
    """Whether every identifier ``name`` in the file, besides one assignment of it, is a
    ``d in TABLE``, an ``isinstance(d, TABLE)``, an ``f"... {TABLE}"`` (a message listing it) or
    another assignment of the table (one per torch version). Read from the whole file: the uses
    may lie anywhere."""
    key = "fp8-table:" + name
    if key not in ctx.memo:
        ctx.memo[key] = _count_membership_tests(file_nodes(ctx), name)
    return bool(ctx.memo[key])


def _count_membership_tests(nodes: list[ast.AST] | None, name: str) -> bool:
    uses = tested = 0
    for node in nodes or ():
        if isinstance(node, ast.Name):
            uses += node.id == name
        elif any(spelled == name for spelled in spelled_names(node)):
            return False  # an attribute, keyword, parameter, definition or import of that name
        if isinstance(node, ast.Compare):
            tested += sum(
                isinstance(op, (ast.In, ast.NotIn)) and _is_name(comparator, name)
                for op, comparator in zip(node.ops, node.comparators, strict=True)
            )
        elif isinstance(node, ast.FormattedValue):
            tested += _is_name(node.value, name)
        elif isinstance(node, ast.Assign):
            tested += sum(_is_name(target, name) for target in node.targets)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("isinstance", "issubclass")
            and len(node.args) == 2
            and not node.keywords
        ):
            tested += _is_name(node.args[1], name)
    return uses >= 2 and tested == uses


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


#: Names of block-scaled formats whose elements or scales are OCP E4M3 by definition.
BLOCK_SCALED = re.compile(r"nvfp4|mxfp[468]|mxint8|e8m0|float4_e2m1", re.IGNORECASE)
