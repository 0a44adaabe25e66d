"""What the reader of a project's Python builds (``migrator.kernels.pybuild``) knows before it
reads: the names of the build APIs (``cpp_extension``, setuptools), where a statement sits
(its branch and gate), the project's own builder functions found so far, one file's imports,
and the small ``ast`` helpers reading tests, parameters and arguments."""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from migrator.kernels.buildmodel import BOTH, CUDA, GPU_SUFFIXES, ROCM, anchor_key
from migrator.kernels.pyvalues import Val
from migrator.knowledge.vendor_tokens import names_rocm

#: A test that finds the CUDA toolkit (false on a ROCm machine; ``torch.cuda.is_available()``
#: is true there, so it is not one).
_FINDS_CUDA = re.compile(
    r"CUDA_HOME|CUDA_PATH|CUDA_ROOT|CUDACXX|\bnvcc\b|version\.cuda\b|cuda_home|find_cuda",
    re.IGNORECASE,
)


#: Libraries only a CUDA toolkit ships (``-lcublas_static``, ``libraries=['cudart']``).
CUDA_LIBRARY = re.compile(
    r"^(?:-l)?(cudart(?:_static)?|cuda|cublas(?:Lt)?(?:_static)?|culibos|nvrtc(?:-builtins)?"
    r"(?:_static)?|cufft(?:w)?(?:_static)?|curand(?:_static)?|cusparse(?:_static)?"
    r"|cusolver(?:_static)?|nvToolsExt|nvjitlink(?:_static)?|cudnn|nvjpeg|nppc|nvinfer|nccl"
    r"(?:_static)?)$"
)


_EXTENSION_CLASSES = frozenset({"CUDAExtension", "CppExtension", "SYCLExtension"})


_CPP_EXTENSION = "torch.utils.cpp_extension"


_SETUPTOOLS = frozenset(
    {"setuptools", "distutils.core", "distutils.extension", "setuptools.extension"}
)


#: Calls deeper than this (a wrapper calling a wrapper ...) are not followed.
_MAX_DEPTH = 6


@dataclass(frozen=True, slots=True)
class _Where:
    """The branch a statement runs in: vendor context and CUDA gate ("" when none)."""

    context: str = BOTH
    gate: str = ""


@dataclass(slots=True)
class _Builder:
    """A project function that builds an extension from its arguments."""

    path: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    tree: ast.Module

    @property
    def stem(self) -> str:
        parts = self.path[:-3].split("/")
        return parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]

    @property
    def key(self) -> tuple[str, int]:
        return (self.path, self.node.lineno)


@dataclass(slots=True)
class _Registry:
    """What the readers of one project's Python files share."""

    builders: dict[str, list[_Builder]] = field(default_factory=dict)
    envs: dict[str, dict[str, list[Val]]] = field(default_factory=dict)
    invoked: set[tuple[str, int]] = field(default_factory=set)
    #: (path, line) of every call that builds a GPU extension, directly or through a wrapper
    calls: set[tuple[str, int, str]] = field(default_factory=set)

    def add_builder(self, builder: _Builder) -> None:
        known = self.builders.setdefault(builder.node.name, [])
        if all(b.key != builder.key for b in known):
            known.append(builder)

    def keys(self) -> frozenset[tuple[str, int]]:
        return frozenset(b.key for known in self.builders.values() for b in known)


class _Imports:
    """What a module's import statements bind: names to dotted targets (``load`` ->
    ``torch.utils.cpp_extension.load``), relative imports with their leading dots."""

    def __init__(self, tree: ast.Module) -> None:
        self.names: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.names[alias.asname] = alias.name
                    else:
                        self.names.setdefault(alias.name.split(".")[0], alias.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                for alias in node.names:
                    target = (
                        f"{module}.{alias.name}"
                        if module and module[-1] != "."
                        else module + alias.name
                    )
                    self.names[alias.asname or alias.name] = target

    def dotted(self, node: ast.expr) -> str:
        """``a.b.c`` of a name or attribute chain, its first part resolved through the imports."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return ""
        first = self.names.get(node.id, node.id)
        return ".".join([first, *reversed(parts)])


def _module_matches(target: str, builder: _Builder) -> bool:
    """Whether an import target (``pkg.custom_ops.get_plugin``, ``.custom_ops``) names the
    builder's module."""
    parts = [part for part in target.split(".") if part]
    return builder.stem in parts


def _branch_context(test: ast.expr) -> str:
    """``rocm`` for a test true on ROCm builds, ``cuda`` for its negation, else ``both``."""
    text = ast.unparse(test)
    if not names_rocm(text):
        return BOTH
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        # ``CUDA_HOME is not None or is_rocm_pytorch``: true on either vendor
        parts = {_branch_context(value) for value in test.values}
        return parts.pop() if len(parts) == 1 and ROCM not in parts else BOTH
    negated = _negated(test)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        rocm_parts = [v for v in test.values if names_rocm(ast.unparse(v))]
        negated = all(_negated(v) for v in rocm_parts)
    return CUDA if negated else ROCM


def _negated(test: ast.expr) -> bool:
    """``not X``, ``X is None``, ``X == ''``/``False``: the test is true when X is absent."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return True
    return (
        isinstance(test, ast.Compare)
        and any(isinstance(op, (ast.Is, ast.Eq)) for op in test.ops)
        and any(
            isinstance(c, ast.Constant) and c.value in (None, False, "") for c in test.comparators
        )
    )


def _chain_has_rocm(orelse: Sequence[ast.stmt]) -> bool:
    while len(orelse) == 1 and isinstance(orelse[0], ast.If):
        branch = orelse[0]
        if _branch_context(branch.test) == ROCM:
            return True
        orelse = branch.orelse
    return False


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = node.args
    names = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
    if args.vararg is not None:
        names.append(args.vararg.arg)
    return [name for name in names if name not in {"self", "cls"}]


def _arguments(
    call: ast.Call, positional: Sequence[str], kwargs: dict[str, list[Val]]
) -> dict[str, ast.expr]:
    """A call's arguments by name: the first positional ones named by ``positional``, then its
    keywords; keywords passed through ``**kwargs`` of a wrapper appear as constants."""
    out: dict[str, ast.expr] = {}
    for index, argument in enumerate(call.args[: len(positional)]):
        if isinstance(argument, ast.Starred):
            break
        out[positional[index]] = argument
    for keyword in call.keywords:
        if keyword.arg is not None:
            out[keyword.arg] = keyword.value
        else:
            for name, values in kwargs.items():
                out.setdefault(
                    name,
                    ast.copy_location(
                        ast.List([ast.Constant(v.text) for v in values], ast.Load()), call
                    ),
                )
    return out


def _is_list(node: ast.expr, lists: set[str]) -> bool:
    if isinstance(node, (ast.List, ast.ListComp, ast.Tuple, ast.Set, ast.SetComp)):
        return True
    if isinstance(node, ast.Name):
        return node.id in lists
    if isinstance(node, ast.Call):
        func = node.func
        name = (
            func.id
            if isinstance(func, ast.Name)
            else func.attr
            if isinstance(func, ast.Attribute)
            else ""
        )
        return name in {"glob", "iglob", "sorted", "list", "listdir", "rglob"}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _is_list(node.left, lists) or _is_list(node.right, lists)
    return False


def _list_parameters(
    call: ast.Call, node: ast.FunctionDef | ast.AsyncFunctionDef, lists: set[str]
) -> set[str]:
    names = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
    if names and names[0] in {"self", "cls"} and isinstance(call.func, ast.Attribute):
        names = names[1:]
    out = {names[i] for i, a in enumerate(call.args[: len(names)]) if _is_list(a, lists)}
    out.update(k.arg for k in call.keywords if k.arg and _is_list(k.value, lists))
    return out


def _one_string(values: list[Val] | None) -> str | None:
    if values and len(values) == 1 and not values[0].from_param and not values[0].anchored:
        text = values[0].text
        if "*" not in text:
            return text
    return None


def _gate_of(patterns: Iterable[object]) -> str:
    """The gate of an extension whose every GPU source is compiled only with CUDA."""
    gpu = [p for p in patterns if getattr(p, "glob", "").endswith(GPU_SUFFIXES)]
    if gpu and all(getattr(p, "gate", "") for p in gpu):
        return str(getattr(gpu[0], "gate", ""))
    return ""


def call_anchor(call: ast.Call) -> str:
    """A short digest of a call's code as ``anchor_key`` writes it: a rule finds the call by it."""
    return hashlib.sha1(anchor_key(ast.unparse(call)).encode()).hexdigest()[:16]


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
