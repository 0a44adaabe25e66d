"""Shared helpers for the attention, apex, bitsandbytes and cuda-extension rule families
(ROC400–ROC519, ROC600–ROC699): data tables, guarded-import detection, argument binding and
argument-list rebuilding that keeps the original commas, whitespace and comments."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import libcst as cst

from migrator.astutil import fast_visit, literal_value

#: Exception names whose handler makes an import optional (``try: import x / except ImportError``).
IMPORT_GUARD_EXCEPTIONS = frozenset(
    {"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError", "RuntimeError"}
)


# --------------------------------------------------------------------------- imports


class _ImportCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[cst.Import | cst.ImportFrom] = []

    def visit_Import(self, node: cst.Import) -> None:
        self.found.append(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.found.append(node)


def _imports_in(nodes: Iterable[cst.CSTNode]) -> list[cst.Import | cst.ImportFrom]:
    collector = _ImportCollector()
    for node in nodes:
        fast_visit(node, collector, trivia=False)
    return collector.found


def _handler_catches_import_error(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    kind = handler.type
    if kind is None:
        return True
    names: list[cst.BaseExpression] = (
        [element.value for element in kind.elements] if isinstance(kind, cst.Tuple) else [kind]
    )
    for name in names:
        while isinstance(name, cst.Attribute):
            name = name.attr
        if isinstance(name, cst.Name) and name.value in IMPORT_GUARD_EXCEPTIONS:
            return True
    return False


class _GuardFinder(cst.CSTVisitor):
    """Collects imports that cannot crash the module: in a ``try`` whose handlers catch
    ImportError (or broader), or under an ``if`` (availability checks, TYPE_CHECKING)."""

    def __init__(self) -> None:
        super().__init__()
        self.guarded: set[int] = set()

    def visit_Try(self, node: cst.Try) -> None:
        if any(_handler_catches_import_error(handler) for handler in node.handlers):
            self.guarded.update(id(found) for found in _imports_in([node.body]))

    def visit_TryStar(self, node: cst.TryStar) -> None:
        if any(_handler_catches_import_error(handler) for handler in node.handlers):
            self.guarded.update(id(found) for found in _imports_in([node.body]))

    def visit_If(self, node: cst.If) -> None:
        parts: list[cst.CSTNode] = [node.body]
        if node.orelse is not None:
            parts.append(node.orelse)
        self.guarded.update(id(found) for found in _imports_in(parts))


_guard_cache: dict[int, tuple[cst.Module, frozenset[int]]] = {}


def guarded_imports(module: cst.Module) -> frozenset[int]:
    """``id()`` of every Import/ImportFrom node of ``module`` that is guarded (see _GuardFinder)."""
    cached = _guard_cache.get(id(module))
    if cached is not None and cached[0] is module:
        return cached[1]
    finder = _GuardFinder()
    fast_visit(module, finder, trivia=False)
    result = frozenset(finder.guarded)
    _guard_cache.clear()
    _guard_cache[id(module)] = (module, result)
    return result


def imported_modules(node: cst.Import | cst.ImportFrom) -> list[str]:
    """Dotted names of the modules an import statement loads (``from a.b import c`` → a.b)."""
    from migrator.imports import dotted_name

    if isinstance(node, cst.Import):
        names = [dotted_name(alias.name) for alias in node.names]
        return [name for name in names if name]
    if node.relative or node.module is None:
        return []
    module = dotted_name(node.module)
    return [module] if module else []


def matches_package(module: str, packages: Iterable[str]) -> str | None:
    """The package of ``packages`` that ``module`` is (or is inside), else None."""
    for package in packages:
        if module == package or module.startswith(package + "."):
            return package
    return None


# --------------------------------------------------------------------------- expressions


def is_simple(node: cst.BaseExpression) -> bool:
    """True for expressions that are cheap and side-effect free to evaluate twice: names,
    attribute chains and subscripts of those with literal/name indices."""
    if isinstance(node, cst.Name):
        return True
    if isinstance(node, cst.Attribute):
        return is_simple(node.value)
    if isinstance(node, cst.Subscript):
        if not is_simple(node.value):
            return False
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Index):
                if not _simple_index(index.value):
                    return False
            elif isinstance(index, cst.Slice):
                for part in (index.lower, index.upper, index.step):
                    if part is not None and not _simple_index(part):
                        return False
        return True
    return False


def _simple_index(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Integer, cst.Name)) or (
        isinstance(node, cst.UnaryOperation) and isinstance(node.expression, cst.Integer)
    )


def has_comment(node: cst.CSTNode) -> bool:
    """Whether a comment occurs anywhere inside ``node``."""

    class _Finder(cst.CSTVisitor):
        found = False

        def visit_Comment(self, _: cst.Comment) -> None:
            self.found = True

    finder = _Finder()
    fast_visit(node, finder)
    return finder.found


def is_literal(node: cst.BaseExpression | None, value: object) -> bool:
    """Whether ``node`` is a literal equal to ``value`` (True/False/None, numbers, tuples)."""
    found = literal_value(node)
    if found is ...:
        return False
    if isinstance(value, bool) or value is None or isinstance(found, bool) or found is None:
        return found is value
    return bool(found == value)


def literal_from_text(text: str) -> object:
    """Python value of a literal written as source text in a data table (``"(-1, -1)"``)."""
    return literal_value(cst.parse_expression(text))


def bind_arguments(
    call: cst.Call, positional: Sequence[str], keywords: Iterable[str] = ()
) -> dict[str, cst.Arg] | str:
    """Map ``call``'s arguments to parameter names: the first ``len(positional)`` positional
    arguments by order, keywords by name. Returns a reason string when the call cannot be bound
    (star arguments, more positional arguments than known, unknown or repeated keywords)."""
    allowed = set(positional) | set(keywords)
    bound: dict[str, cst.Arg] = {}
    index = 0
    for argument in call.args:
        if argument.star:
            return "it passes `*args`/`**kwargs`, so the arguments are unknown"
        if argument.keyword is None:
            if index >= len(positional):
                return (
                    f"it passes more than {len(positional)} positional arguments, whose meaning "
                    "depends on the library version"
                )
            bound[positional[index]] = argument
            index += 1
            continue
        name = argument.keyword.value
        if name not in allowed:
            return f"it passes `{name}=`, which has no equivalent here"
        if name in bound:
            return f"`{name}` is passed twice"
        bound[name] = argument
    return bound


# --------------------------------------------------------------------------- building calls


def parenthesize(node: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` wrapped in parentheses unless it is atomic enough to take ``.attr`` directly."""
    atomic = (
        cst.Name,
        cst.Attribute,
        cst.Call,
        cst.Subscript,
        cst.SimpleString,
        cst.Integer,
        cst.Float,
        cst.List,
        cst.Tuple,
        cst.Dict,
    )
    if isinstance(node, atomic) or node.lpar:
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def method_call(value: cst.BaseExpression, method: str, args: Sequence[str] = ()) -> cst.Call:
    """``value.method(args...)`` with ``args`` given as source text."""
    return cst.Call(
        func=cst.Attribute(value=parenthesize(value), attr=cst.Name(method)),
        args=[cst.Arg(value=cst.parse_expression(text)) for text in args],
    )


def as_positional(argument: cst.Arg, value: cst.BaseExpression | None = None) -> cst.Arg:
    """``argument`` (maybe a keyword argument) as a positional one, optionally with a new value."""
    return argument.with_changes(
        keyword=None,
        equal=cst.MaybeSentinel.DEFAULT,
        value=value if value is not None else argument.value,
    )


def as_keyword(argument: cst.Arg, name: str, value: cst.BaseExpression | None = None) -> cst.Arg:
    """``argument`` passed as ``name=`` (keeps its value, comma and surrounding whitespace)."""
    equal = argument.equal
    if not isinstance(equal, cst.AssignEqual):
        equal = cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        )
    return argument.with_changes(
        keyword=cst.Name(name),
        equal=equal,
        value=value if value is not None else argument.value,
    )


def new_keyword(name: str, value: str | cst.BaseExpression) -> cst.Arg:
    return cst.Arg(
        keyword=cst.Name(name),
        value=cst.parse_expression(value) if isinstance(value, str) else value,
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        ),
    )


def relayout(original: Sequence[cst.Arg], new: Sequence[cst.Arg]) -> list[cst.Arg]:
    """Give ``new`` arguments the comma/whitespace layout of ``original`` slot by slot, so a
    rebuilt multi-line call keeps its line breaks; extra arguments get ``, `` and the last one
    keeps the original last argument's trailing layout."""
    default_comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    out: list[cst.Arg] = []
    count = len(new)
    for index, argument in enumerate(new):
        if index == count - 1:
            source = original[-1] if original else None
        elif index < len(original) - 1:
            source = original[index]
        else:
            source = None
        if source is None:
            comma: cst.Comma | cst.MaybeSentinel = (
                default_comma if index < count - 1 else cst.MaybeSentinel.DEFAULT
            )
            whitespace: cst.BaseParenthesizableWhitespace = cst.SimpleWhitespace("")
        else:
            comma = source.comma
            whitespace = source.whitespace_after_arg
            if index < count - 1 and not isinstance(comma, cst.Comma):
                comma = default_comma
        out.append(argument.with_changes(comma=comma, whitespace_after_arg=whitespace))
    return out


def _line_break(indent: str) -> cst.ParenthesizedWhitespace:
    return cst.ParenthesizedWhitespace(
        first_line=cst.TrailingWhitespace(newline=cst.Newline()),
        empty_lines=[],
        indent=True,
        last_line=cst.SimpleWhitespace(indent),
    )


def exploded(call: cst.Call, args: Sequence[cst.Arg], unit: str) -> cst.Call:
    """``call`` with ``args`` one per line (hanging indent ``unit`` below the statement's
    indentation, magic trailing comma), the layout black gives a long call."""
    laid = [
        argument.with_changes(
            comma=cst.Comma(whitespace_after=_line_break("" if index == len(args) - 1 else unit)),
            whitespace_after_arg=cst.SimpleWhitespace(""),
        )
        for index, argument in enumerate(args)
    ]
    return call.with_changes(args=laid, whitespace_before_args=_line_break(unit))


def string_nodes_with_value(
    node: cst.BaseExpression, values: Iterable[str]
) -> list[cst.SimpleString]:
    """Plain string literals equal to one of ``values`` that ``node`` evaluates to: the node
    itself, either branch of ``a if c else b``, either side of ``a or b`` / ``a and b``, and the
    ``default=`` of a call such as ``field(default=...)``. Comparisons are never entered."""
    wanted = set(values)
    found: list[cst.SimpleString] = []

    def walk(current: cst.BaseExpression) -> None:
        if isinstance(current, cst.SimpleString):
            value = current.evaluated_value
            if isinstance(value, str) and value in wanted and "f" not in current.prefix.lower():
                found.append(current)
        elif isinstance(current, cst.IfExp):
            walk(current.body)
            walk(current.orelse)
        elif isinstance(current, cst.BooleanOperation):
            walk(current.left)
            walk(current.right)
        elif isinstance(current, cst.Call):
            for argument in current.args:
                if argument.keyword is not None and argument.keyword.value == "default":
                    walk(argument.value)

    walk(node)
    return found


def replace_string(node: cst.SimpleString, new_value: str) -> cst.SimpleString:
    """The same literal (prefix and quote style kept) holding ``new_value``."""
    quote = node.quote
    return node.with_changes(value=f"{node.prefix}{quote}{new_value}{quote}")


def docstring_nodes(module: cst.Module) -> frozenset[int]:
    """``id()`` of the string nodes that are module, class or function docstrings."""
    found: set[int] = set()

    def first_string(body: Sequence[cst.CSTNode]) -> None:
        if not body:
            return
        statement = body[0]
        if isinstance(statement, cst.SimpleStatementLine) and statement.body:
            small = statement.body[0]
            if isinstance(small, cst.Expr) and isinstance(
                small.value, (cst.SimpleString, cst.ConcatenatedString)
            ):
                found.add(id(small.value))

    class _Visitor(cst.CSTVisitor):
        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            if isinstance(node.body, cst.IndentedBlock):
                first_string(node.body.body)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            if isinstance(node.body, cst.IndentedBlock):
                first_string(node.body.body)

    first_string(module.body)
    fast_visit(module, _Visitor(), trivia=False)
    return frozenset(found)


# --------------------------------------------------------------------------- SDPA rewrites


def sdpa_call(
    call: cst.Call,
    sdpa: str,
    tensors: list[cst.Arg],
    keywords: list[cst.Arg],
    unit: str,
) -> cst.BaseExpression:
    """``sdpa(tensors..., keywords...).transpose(1, 2).contiguous()`` replacing ``call``.

    The output goes back from (B, H, S, D) to flash-attn's/xformers' (B, S, H, D); ``contiguous``
    keeps their contract of a contiguous output (callers often ``.view`` it), and is free when
    SDPA's kernel already wrote (B, S, H, D) memory (the flash and efficient backends do).
    Arguments go one per line; a call with comments inside keeps its own layout instead, so the
    comments stay where they were."""
    inner = cst.Call(
        func=cst.parse_expression(sdpa),
        whitespace_after_func=call.whitespace_after_func,
        whitespace_before_args=call.whitespace_before_args,
    )
    arguments = [*tensors, *keywords]
    if has_comment(call):
        inner = inner.with_changes(args=relayout(call.args, arguments))
    else:
        inner = exploded(inner, arguments, unit)
    outer = method_call(method_call(inner, "transpose", ["1", "2"]), "contiguous")
    return outer.with_changes(lpar=call.lpar, rpar=call.rpar)


def transposed(argument: cst.Arg) -> cst.Arg:
    """The tensor argument as ``<value>.transpose(1, 2)`` (B,S,H,D ↔ B,H,S,D), positional."""
    return as_positional(argument, method_call(argument.value, "transpose", ["1", "2"]))


def unpacked(argument: cst.Arg) -> cst.Arg:
    """A packed (B, S, n, H, D) tensor as ``*<value>.transpose(1, 3).unbind(2)``: n tensors of
    shape (B, H, S, D), each evaluated once."""
    value = method_call(method_call(argument.value, "transpose", ["1", "3"]), "unbind", ["2"])
    return as_positional(argument, value).with_changes(star="*")


def causal_mask(
    causal: cst.BaseExpression, query: cst.BaseExpression, key: cst.BaseExpression
) -> cst.BaseExpression:
    """``causal_lower_right(q.size(1), k.size(1))`` (bottom-right aligned, as flash-attn ≥ 2.1),
    made conditional when ``causal`` is not the literal True."""
    mask = cst.parse_expression(
        f"causal_lower_right({code_of(query)}.size(1), {code_of(key)}.size(1))"
    )
    if is_literal(causal, True):
        return mask
    return cst.IfExp(test=parenthesize(causal), body=mask, orelse=cst.Name("None"))


def code_of(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


# --------------------------------------------------------------------------- tensor rank evidence

_RANK_PRESERVING = frozenset(
    {
        "contiguous",
        "transpose",
        "to",
        "float",
        "half",
        "bfloat16",
        "type_as",
        "clone",
        "detach",
        "cuda",
        "requires_grad_",
    }
)
_FACTORIES = frozenset({"randn", "rand", "zeros", "ones", "empty", "full"})


def _positional(call: cst.Call) -> list[cst.BaseExpression] | None:
    if any(argument.star for argument in call.args):
        return None
    values = [argument.value for argument in call.args if argument.keyword is None]
    if len(values) == 1 and isinstance(values[0], (cst.Tuple, cst.List)):
        return [element.value for element in values[0].elements]
    return values


def _einops_rank(pattern: str) -> int | None:
    if "->" not in pattern:
        return None
    right = pattern.split("->", 1)[1]
    depth = 0
    count = 0
    for token in right.replace("(", " ( ").replace(")", " ) ").split():
        if token == "(":
            if depth == 0:
                count += 1
            depth += 1
        elif token == ")":
            depth -= 1
        elif depth == 0:
            count += 1
    return count


def is_4d(node: cst.BaseExpression) -> bool:
    """Whether ``node`` evidently builds a 4-D tensor: ``x.view(a, b, c, d)`` / ``reshape`` with
    four sizes, ``x.view(a, b, 3, c, d).unbind(2)``, ``torch.randn(a, b, c, d)``, an einops
    ``rearrange`` to four axes, or a rank-preserving method (``transpose``, ``to``, …) of one."""
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Attribute):
        method = func.attr.value
        if method in {"view", "reshape"}:
            sizes = _positional(node)
            return sizes is not None and len(sizes) == 4
        if method == "unbind" and isinstance(func.value, cst.Call):
            inner = func.value
            inner_method = inner.func.attr.value if isinstance(inner.func, cst.Attribute) else ""
            if inner_method in {"view", "reshape"}:
                sizes = _positional(inner)
                return sizes is not None and len(sizes) == 5
            return False
        if method in _RANK_PRESERVING:
            return is_4d(func.value)
        if method in _FACTORIES:
            sizes = _positional(node)
            return sizes is not None and len(sizes) == 4
    name = (
        func.attr.value
        if isinstance(func, cst.Attribute)
        else (func.value if isinstance(func, cst.Name) else "")
    )
    if name == "rearrange" and len(node.args) >= 2:
        pattern = node.args[1].value
        if isinstance(pattern, cst.SimpleString):
            return _einops_rank(str(pattern.evaluated_value)) == 4
    return False


def rank4_evidence(scope: cst.CSTNode, names: set[str]) -> bool:
    """Whether an assignment in ``scope`` gives one of ``names`` an evidently 4-D value."""

    class _Finder(cst.CSTVisitor):
        found = False

        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                self._target(target.target, node.value)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if node.value is not None:
                self._target(node.target, node.value)

        def _target(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
            if isinstance(target, cst.Name):
                if target.value in names and is_4d(value):
                    self.found = True
            elif isinstance(target, (cst.Tuple, cst.List)):
                elements = [element.value for element in target.elements]
                if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(
                    elements
                ):
                    for element, part in zip(elements, value.elements, strict=True):
                        self._target(element, part.value)
                elif any(isinstance(e, cst.Name) and e.value in names for e in elements) and is_4d(
                    value
                ):
                    self.found = True

    finder = _Finder()
    fast_visit(scope, finder, trivia=False)
    return finder.found


def mentions_package(
    ctx_resolve: Callable[[cst.CSTNode], str | None], node: cst.CSTNode, package: str
) -> bool:
    """Whether a Name/Attribute chain inside ``node`` resolves (through the file's imports)
    to ``package`` or something in it."""

    class _Finder(cst.CSTVisitor):
        found = False

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            qualified = ctx_resolve(node)
            if qualified and matches_package(qualified, [package]):
                self.found = True
                return False
            return True

        def visit_Name(self, node: cst.Name) -> None:
            qualified = ctx_resolve(node)
            if qualified and matches_package(qualified, [package]):
                self.found = True

    finder = _Finder()
    fast_visit(node, finder, trivia=False)
    return finder.found


def assigned_values(scope: cst.CSTNode, name: str) -> list[cst.BaseExpression]:
    """Values assigned to the plain name ``name`` anywhere in ``scope``."""
    values: list[cst.BaseExpression] = []

    class _Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                if isinstance(target.target, cst.Name) and target.target.value == name:
                    values.append(node.value)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if isinstance(node.target, cst.Name) and node.target.value == name and node.value:
                values.append(node.value)

    fast_visit(scope, _Finder(), trivia=False)
    return values


def non_call_references(
    resolve: Callable[[cst.CSTNode], str | None], module: cst.Module, qualified: str
) -> int:
    """How often ``qualified`` is referenced other than as the callee of a call (``isinstance``
    checks, ``type(m) is X``, aliases): a rewrite of the calls leaves those pointing at the old
    class, so the fix is not behaviour-preserving there."""

    class _Counter(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.callees: set[int] = set()
            self.count = 0

        def visit_Import(self, node: cst.Import) -> bool:
            return False

        def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
            return False

        def visit_Call(self, node: cst.Call) -> None:
            self.callees.add(id(node.func))

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            if resolve(node) == qualified:
                if id(node) not in self.callees:
                    self.count += 1
            else:
                fast_visit(
                    node.value, self, trivia=False
                )  # not ``attr``: ``x.FusedRMSNorm`` is another object
            return False

        def visit_Name(self, node: cst.Name) -> None:
            if resolve(node) == qualified and id(node) not in self.callees:
                self.count += 1

    counter = _Counter()
    fast_visit(module, counter, trivia=False)
    return counter.count


def torch_ref(ctx: Any, module: str) -> tuple[str, list[tuple[str, str | None]]]:
    """How to spell ``module`` (a submodule that ``import torch`` loads: torch.nn,
    torch.nn.functional, torch.optim) here, importing plain ``torch`` when nothing binds it."""
    from migrator.astutil import module_ref

    name, imports = module_ref(ctx, module)
    if imports:
        return module, [("torch", None)]
    return name, []
