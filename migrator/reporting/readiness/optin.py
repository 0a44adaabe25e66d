"""Opt-in and fallback code inside reachable modules, read from one file's syntax tree.

A module the entry points reach can still hold code that runs on ROCm only when a user asks for
it, or that falls back when a CUDA-only piece is missing. The scorer weighs such code less:

- a fallback: the body of a ``try`` whose handler catches what a missing package, binary, library
  or kernel raises (``ImportError``, ``OSError``, ``RuntimeError``, ``Exception``, an NVML error)
  and goes on without raising: a crash there degrades the feature instead;
- an optional package: a package this file imports inside such a ``try`` or under an
  availability check (``if is_xformers_available():``): its uses only run where it is installed;
- a feature switch: a function named ``enable_<feature>``, which runs when a user calls it;
- a registered alternative: one of several functions or classes registered under a name by the
  same decorator (an attention backend, a quantizer), chosen by configuration, with the
  decorator's arguments;
- a default-off branch: ``if flag:`` where ``flag`` is a parameter of the enclosing function
  that defaults to ``False`` or ``None``;
- an optional extra in ``setup.py``: an ``extras_require`` value, or an assignment to a name
  that says ``extra``.

Files are parsed with :mod:`ast` and never run; a file that does not parse has no facts.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

#: Exceptions that a missing CUDA-only package, binary, library or kernel raises on ROCm.
FALLBACK_ERRORS = frozenset(
    {
        "ImportError",
        "ModuleNotFoundError",
        "OSError",
        "FileNotFoundError",
        "RuntimeError",
        "CalledProcessError",
        "Exception",
        "BaseException",
    }
)
#: Exceptions that a failed import raises: packages imported under them are optional.
IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})

Range = tuple[int, int]


@dataclass(frozen=True, slots=True)
class FileFacts:
    """Line ranges of fallback and opt-in code in one file, and the packages it imports
    optionally."""

    fallbacks: tuple[Range, ...] = ()
    optional_imports: frozenset[str] = frozenset()
    #: (first, last, why) of code that runs only when a user asks for it.
    opt_in: tuple[tuple[int, int, str], ...] = field(default_factory=tuple)
    #: (first, last, name) of every function definition.
    functions: tuple[tuple[int, int, str], ...] = ()

    def falls_back(self, line: int) -> bool:
        """Whether ``line`` is inside a fallback ``try`` body."""
        return any(first <= line <= last for first, last in self.fallbacks)

    def opt_in_at(self, line: int) -> str:
        """Why ``line`` runs only when a user asks for it, or ``""``."""
        return next((why for first, last, why in self.opt_in if first <= line <= last), "")

    def functions_at(self, line: int) -> list[str]:
        """The names of the functions around ``line``, innermost first."""
        around = sorted(
            (last - first, name) for first, last, name in self.functions if first <= line <= last
        )
        return [name for _, name in around]


NO_FACTS = FileFacts()


def _name(node: ast.expr | None) -> str:
    """The last identifier of a Name/Attribute (``subprocess.CalledProcessError`` -> its tail)."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _caught(handler: ast.ExceptHandler) -> set[str]:
    if handler.type is None:
        return {"BaseException"}
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return {_name(kind) for kind in kinds} - {""}


def _goes_on(handler: ast.ExceptHandler) -> bool:
    """Whether a handler ends without raising (the code after the ``try`` still runs)."""
    return not (handler.body and isinstance(handler.body[-1], ast.Raise))


def _portable(caught: set[str]) -> bool:
    return bool(caught & FALLBACK_ERRORS) or any("nvml" in name.lower() for name in caught)


def _span(body: list[ast.stmt]) -> Range:
    return body[0].lineno, max(getattr(node, "end_lineno", None) or node.lineno for node in body)


def _try_facts(nodes: Sequence[ast.AST]) -> tuple[list[Range], set[str]]:
    fallbacks: list[Range] = []
    optional: set[str] = set()
    for node in nodes:
        if not isinstance(node, ast.Try) or not node.body:
            continue
        going = [handler for handler in node.handlers if _goes_on(handler)]
        caught = set().union(*(_caught(handler) for handler in going)) if going else set()
        if not _portable(caught):
            continue
        fallbacks.append(_span(node.body))
        if caught & IMPORT_ERRORS:
            optional.update(_imported(node.body))
    for node in nodes:
        if isinstance(node, ast.If) and _availability_check(node.test):
            optional.update(_imported(node.body))
    return fallbacks, optional


def _availability_check(test: ast.expr) -> bool:
    """Whether a test asks if a package is installed (``is_xformers_available()``,
    ``importlib.util.find_spec("x")``), alone or in an ``and``."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_availability_check(value) for value in test.values)
    if not isinstance(test, ast.Call):
        return False
    name = _name(test.func)
    return (name.startswith(("is_", "_is_")) and name.endswith("_available")) or name == "find_spec"


def _imported(body: list[ast.stmt]) -> set[str]:
    """Top-level packages imported (absolutely) anywhere in ``body``."""
    found: set[str] = set()
    for inner in (child for statement in body for child in ast.walk(statement)):
        if isinstance(inner, ast.Import):
            found.update(alias.name.split(".")[0] for alias in inner.names)
        elif isinstance(inner, ast.ImportFrom) and inner.module and not inner.level:
            found.add(inner.module.split(".")[0])
    return found


def _registrar(decorator: ast.expr) -> str:
    """The registry a decorator registers into (``Registry.register(...)`` -> ``Registry``), or
    ``""`` when it is not a registering call."""
    if not isinstance(decorator, ast.Call):
        return ""
    func = decorator.func
    name = _name(func)
    if name == "register" or name.startswith("register_"):
        return ast.unparse(func)
    return ""


def _registered(nodes: Sequence[ast.AST]) -> list[tuple[int, int, str]]:
    groups: dict[str, list[Range]] = defaultdict(list)
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for decorator in node.decorator_list:
                registry = _registrar(decorator)
                if registry:
                    # The decorator's arguments (constraints, checks) belong to the alternative.
                    first = min(item.lineno for item in node.decorator_list)
                    groups[registry].append((first, node.end_lineno or node.lineno))
    return [
        (first, last, f"one of {len(ranges)} implementations registered with `{registry}`")
        for registry, ranges in groups.items()
        if len(ranges) >= 2
        for first, last in ranges
    ]


def _off_by_default(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Parameters of a function whose default is ``False`` or ``None``."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    pairs = list(
        zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
    )
    pairs += [
        (arg, default)
        for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True)
        if default is not None
    ]
    return {
        arg.arg
        for arg, default in pairs
        if isinstance(default, ast.Constant) and default.value in (False, None)
    }


def _default_off(nodes: Sequence[ast.AST]) -> list[tuple[int, int, str]]:
    found = []
    for function in nodes:
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        flags = _off_by_default(function)
        if not flags:
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.If) and node.body:
                flag = _flag_tested(node.test, flags)
                if flag:
                    first, last = _span(node.body)
                    found.append((first, last, f"a branch taken only when `{flag}` is turned on"))
    return found


def _flag_tested(test: ast.expr, flags: set[str]) -> str:
    """The flag a test requires to be on (``flag``, ``flag is not None``, ``flag != False``, or
    one operand of an ``and``), or ``""``."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return next((flag for value in test.values if (flag := _flag_tested(value, flags))), "")
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        off = isinstance(right, ast.Constant) and right.value in (False, None)
        if isinstance(op, (ast.NotEq, ast.IsNot)) and off:
            test = left
        elif isinstance(op, (ast.Eq, ast.Is)) and isinstance(right, ast.Constant):
            test = left if right.value is True else test
    if isinstance(test, ast.Name) and test.id in flags:
        return test.id
    return ""


def _enablers(nodes: Sequence[ast.AST]) -> list[tuple[int, int, str]]:
    """Functions named ``enable_<feature>`` (``enable_layerwise_casting``,
    ``enable_xformers_memory_efficient_attention``): a feature a user turns on by calling them;
    their signature (defaults) and body run only then."""
    return [
        (
            min([node.lineno, *(item.lineno for item in node.decorator_list)]),
            node.end_lineno or node.lineno,
            f"runs when a user calls `{node.name}`",
        )
        for node in nodes
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name.startswith("enable_")
    ]


def _extras(nodes: Sequence[ast.AST]) -> list[tuple[int, int, str]]:
    """Optional extras of a ``setup.py``."""
    found: list[Range] = []
    for node in nodes:
        if isinstance(node, ast.keyword) and node.arg == "extras_require":
            found.append((node.value.lineno, node.value.end_lineno or node.value.lineno))
            continue
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        else:
            continue
        for target in targets:
            root = target
            while isinstance(root, (ast.Subscript, ast.Attribute)):
                root = root.value
            if isinstance(root, ast.Name) and "extra" in root.id.lower():
                found.append((node.lineno, node.end_lineno or node.lineno))
    return [(first, last, "an optional extra") for first, last in found]


def file_facts(text: str, name: str) -> FileFacts:
    """The fallback and opt-in facts of one Python file (``name`` is its file name)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return NO_FACTS
    nodes = list(ast.walk(tree))  # one walk, shared by every reading below
    fallbacks, optional = _try_facts(nodes)
    opt_in = [*_registered(nodes), *_default_off(nodes), *_enablers(nodes)]
    if name == "setup.py":
        opt_in += _extras(nodes)
    functions = tuple(
        (node.lineno, node.end_lineno or node.lineno, node.name)
        for node in nodes
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    )
    return FileFacts(tuple(fallbacks), frozenset(optional), tuple(opt_in), functions)
