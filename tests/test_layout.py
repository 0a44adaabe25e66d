"""The layout holds: ``migrator/`` in packages by concern with a small top level, no import
cycles (type-only and function-level imports included), rule modules that import only the rule
API, the API used by rules alone, context-free syntax helpers, and packages that say what
belongs in them. Read from the source text with ``ast``; nothing is imported."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

from tests.conftest import ROOT

RULE_API = frozenset(
    {"migrator.api", "migrator.api.syntax", "migrator.api.knowledge", "migrator.api.reach"}
)


@cache
def modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the installed package, by dotted name: (file, is a package)."""
    found: dict[str, tuple[Path, bool]] = {}
    for path in [*(ROOT / "migrator").rglob("*.py"), *(ROOT / "rules").rglob("*.py")]:
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[0] == "rules":
            parts = ["migrator", *parts]
        package = parts[-1] == "__init__"
        if package:
            parts.pop()
        found[".".join(parts)] = (path, package)
    return found


def _resolve(name: str) -> str:
    known = modules()
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name


@cache
def imports() -> dict[str, frozenset[str]]:
    """Module -> the package modules it imports anywhere in its text: at the top, in functions
    and under ``TYPE_CHECKING``. ``from pkg import name`` counts as an import of ``pkg.name``
    when that is a module, else of ``pkg``."""
    graph: dict[str, frozenset[str]] = {}
    for name, (path, package) in modules().items():
        base = name if package else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    owner = base
                    for _ in range(node.level - 1):
                        owner = owner.rpartition(".")[0]
                    module = f"{owner}.{node.module}" if node.module else owner
                else:
                    module = node.module or ""
                for alias in node.names:
                    full = f"{module}.{alias.name}"
                    targets.add(full if full in modules() else module)
        graph[name] = frozenset(
            resolved
            for target in targets
            if target.startswith("migrator") and (resolved := _resolve(target)) != name
        )
    return graph


def _cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph.get(successor, ())))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_top_of_migrator_is_small() -> None:
    top = sorted(path.name for path in (ROOT / "migrator").glob("*.py"))
    assert len(top) <= 12, top


def test_no_import_cycles_type_only_and_function_level_included() -> None:
    assert _cycles(dict(imports())) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset()}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_packages_form_layers() -> None:
    """Packages of ``migrator`` import each other without a circle (the top-level modules,
    which mix the shared vocabulary with the command line, are left out)."""
    graph: dict[str, set[str]] = {}
    for name, targets in imports().items():
        parts = name.split(".")
        if len(parts) < 3:
            continue
        for target in targets:
            other = target.split(".")
            if len(other) >= 3 and other[1] != parts[1]:
                graph.setdefault(parts[1], set()).add(other[1])
    assert _cycles({key: frozenset(value) for key, value in graph.items()}) == []


def test_rule_modules_import_only_the_rule_api() -> None:
    outside = {
        name: sorted(
            target
            for target in targets
            if target not in RULE_API and not target.startswith("migrator.rules")
        )
        for name, targets in imports().items()
        if name.startswith("migrator.rules")
    }
    assert {name: found for name, found in outside.items() if found} == {}


def test_only_rules_import_the_rule_api() -> None:
    users = {
        name
        for name, targets in imports().items()
        if targets & RULE_API and not name.startswith(("migrator.rules", "migrator.api"))
    }
    assert users == set()


@pytest.mark.parametrize(
    ("package", "allowed"),
    [
        ("migrator.files", ("migrator.files", "migrator.model", "migrator.errors")),
        ("migrator.syntax", ("migrator.syntax",)),
        ("migrator.knowledge", ("migrator.knowledge", "migrator.files", "migrator.model")),
    ],
)
def test_lower_layers_import_nothing_above_them(package: str, allowed: tuple[str, ...]) -> None:
    above = {
        name: sorted(
            target
            for target in targets
            if target != "migrator" and not any(target.startswith(prefix) for prefix in allowed)
        )
        for name, targets in imports().items()
        if name.startswith(package)
    }
    assert {name: found for name, found in above.items() if found} == {}


def test_nothing_but_the_registry_imports_the_rules() -> None:
    """The engine finds rules by walking the catalog; no engine, command or report module
    names a rule module."""
    users = {
        name
        for name, targets in imports().items()
        if not name.startswith("migrator.rules")
        and any(target.startswith("migrator.rules") for target in targets)
    }
    assert users == set()


def test_every_package_says_what_belongs_in_it() -> None:
    missing = [
        name
        for name, (path, package) in modules().items()
        if package and not ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert missing == []


def test_a_report_takes_where_what_its_fix_and_its_problem() -> None:
    """Every ``report``/``report_bytes`` a rule calls, in the rule classes and in the rules'
    own bases, takes at most four parameters besides ``self``: where, the message, the fix and
    the problem (``migrator.engine.report_values``), never a list of keyword options."""
    wide = []
    for name, (path, _) in modules().items():
        if not (name.startswith("migrator.rules") or name == "migrator.engine.rule"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name in ("report", "report_bytes"):
                arguments = node.args
                count = len(arguments.posonlyargs + arguments.args + arguments.kwonlyargs) - 1
                if count > 4 or arguments.vararg or arguments.kwarg:
                    wide.append(f"{name}.{node.name}")
    assert wide == []


#: The one module that may hold a ``ContextVar``: the engine's entry point. Every analysis input
#: (the project's facts, its export slices, formatter, kernel macros, the run's fix choice and
#: configuration) is passed explicitly, on the rule's context or as a parameter.
CONTEXT_VARIABLE_HOME = "migrator.engine.runner"


def _creates_a_context_variable(tree: ast.Module) -> bool:
    """Whether the module calls ``ContextVar(...)`` (by any import of it) anywhere."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            function = node.func
            name = function.attr if isinstance(function, ast.Attribute) else None
            if isinstance(function, ast.Name):
                name = function.id
            if name == "ContextVar":
                return True
    return False


def test_no_context_variable_outside_the_entry_point() -> None:
    holders = sorted(
        name
        for name, (path, _) in modules().items()
        if name != CONTEXT_VARIABLE_HOME
        and _creates_a_context_variable(ast.parse(path.read_text(encoding="utf-8")))
    )
    assert holders == []


def test_the_context_variable_finder_finds_one() -> None:
    text = "import contextvars\nfrom contextvars import ContextVar\n"
    assert _creates_a_context_variable(ast.parse(text + "x = contextvars.ContextVar('x')\n"))
    assert _creates_a_context_variable(ast.parse(text + "y: ContextVar[int] = ContextVar('y')\n"))
    assert not _creates_a_context_variable(ast.parse(text + "z: ContextVar[int] | None = None\n"))


def test_a_rule_declares_at_most_twelve_public_attributes() -> None:
    """What most rules leave at their defaults sits in ``Parsing``, ``Impact`` and ``Fixing``
    (``migrator.engine.rule_parts``): the ``Rule`` class itself declares at most twelve public
    attributes, read from its source."""
    path, _ = modules()["migrator.engine.rule"]
    (rule,) = (
        node
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.ClassDef) and node.name == "Rule"
    )
    public = [
        statement.target.id
        for statement in rule.body
        if isinstance(statement, ast.AnnAssign)
        and isinstance(statement.target, ast.Name)
        and not statement.target.id.startswith("_")
    ]
    assert len(public) <= 12, public


#: No module longer than this: a module that outgrows it holds more than one job.
MODULE_LINE_LIMIT = 800


def test_no_module_over_the_line_limit() -> None:
    long = {
        name: lines
        for name, (path, _) in modules().items()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MODULE_LINE_LIMIT
    }
    assert long == {}
