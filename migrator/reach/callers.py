"""Functions that never run on a ROCm build because of where they are called: every call of a
module-level function sits in an NVIDIA-only branch (``if not is_rocm(): check_cuda()``, the
call after ``if IS_ROCM: return rocm_variant()``), or in another such function; and, in files
no user imports (a build script ``setup.py``, a test suite's modules), the functions nothing
calls, or only such functions call (in a test suite's support modules: tests, fixtures and
runner hooks excepted).

Decided per file after the engine's walk, from the guard regions it marked: the function's body
becomes a guard region, so its findings are guarded (hidden, ``--show-guarded`` shows the
reason). Only a function whose every mention in the file's text is its definition or a call
found in the parsed tree counts (a mention in a string, a comment or a part the partial parse
left out keeps it unknown). Other files may call it too: at settle time
``unguard_if_called_elsewhere`` drops the guard when another project file mentions a function
the guard relies on."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from migrator.model import Finding

if TYPE_CHECKING:  # a warm scan settles findings without loading libcst
    import libcst as cst

    from migrator.reach.guards import Guards


class PythonContext(Protocol):
    """What this module reads of the engine's per-file context after its walk."""

    @property
    def module(self) -> cst.Module: ...
    @property
    def parents(self) -> dict[int, cst.CSTNode]: ...
    @property
    def nodes(self) -> list[cst.CSTNode]: ...
    @property
    def guards(self) -> Guards: ...


#: The guard texts this module writes; the back-quoted words are the functions they rely on.
_ONLY_CALLED = "NVIDIA-only: every call of `{name}` is in an NVIDIA-only branch (line {lines})"
_ONLY_FROM = "NVIDIA-only: every call of `{name}` is in an NVIDIA-only branch or in {owners}"
_NEVER_CALLED = "never runs: nothing in the project calls `{name}`"
_ONLY_DEAD = "never runs: only {owners}, which never run, call `{name}`"
_OURS = re.compile(r"^(?:NVIDIA-only: every call of `|never runs: (?:nothing in the|only `))")
_NAMES = re.compile(r"`(\w+)`")
#: Build scripts: run by the packaging tool, never imported, so an uncalled function is dead.
_BUILD_SCRIPTS = frozenset({"setup.py"})
#: Module-level functions of a test file that the test runner calls by name or decorator.
_RUNNER_HOOKS = re.compile(r"^(test|pytest_|setup|teardown|load_tests$|main$)")


#: ``if __name__ == "__main__":`` at the top level of a module.
_MAIN_BLOCK = re.compile(r"""^if\s+__name__\s*==\s*["']__main__["']\s*:""", re.MULTILINE)


def _dead_code_file(path: str, text: str = "") -> bool:
    """Files no user imports, so a function nothing in the project calls never runs: a build
    script, a test suite's support module (``tests/utils.py``; not a test module, whose
    functions the test runner may collect), a script at the top of the repository (it has a
    ``__main__`` block; outside any package, users run it and only its sibling scripts import
    it, which ``unguard_if_called_elsewhere`` sees)."""
    from migrator.files.paths import is_test_file, is_test_path

    name = path.rsplit("/", 1)[-1]
    return (
        name in _BUILD_SCRIPTS
        or (is_test_path(path) and not is_test_file(name))
        or ("/" not in path and name != "__init__.py" and bool(_MAIN_BLOCK.search(text)))
    )


def mark_dispatched(
    context: PythonContext,
    text: str,
    path: str,
    first_lines: Callable[[Sequence[cst.CSTNode]], list[int]],
) -> None:
    """Mark as guarded the bodies of the module-level functions of the file that only NVIDIA-
    only branches call (or, in a build script or a test support module, that nothing calls).
    ``first_lines`` gives the calls' lines for the guard's text (the engine's anchored
    positions of the nodes asked for, not a position pass over the whole module)."""
    import libcst as cst

    from migrator.reach.guard_conditions import NON_LINUX, NVIDIA_ONLY

    guards = context.guards
    dead_code = _dead_code_file(path, text)
    labels = set(guards.regions.values())
    if not dead_code and NVIDIA_ONLY not in labels and NON_LINUX not in labels:
        return
    functions = {
        statement.name.value: statement
        for statement in context.module.body
        if isinstance(statement, cst.FunctionDef)
    }
    if not functions:
        return
    owners = {id(function): name for name, function in functions.items()}
    calls: dict[str, list[str]] = {}  # function -> the function (or "") each call sits in
    sites: dict[str, list[cst.Call]] = {}
    for node in context.nodes:
        # by type identity (a failing ``isinstance`` against libcst's ABCs is slow)
        if type(node) is cst.Call and type(node.func) is cst.Name:
            assert isinstance(node, cst.Call) and isinstance(node.func, cst.Name)
            name = node.func.value
            if name in functions:
                sites.setdefault(name, []).append(node)
                calls.setdefault(name, []).append(_owner(node, context, owners))
    mentions = _mentions(text, functions)
    found: dict[str, str] = {}
    dead: set[str] = set()
    # each call site outside the function it calls, read once
    outsides = {
        name: [
            (site, owner)
            for site, owner in zip(sites.get(name, ()), calls.get(name, ()), strict=True)
            if owner != name
        ]
        for name in functions
    }
    # whether a site's own branch never runs on ROCm: the regions added below are bodies of
    # functions already found, and a site in one is settled by its owner, so the answer for any
    # other site never changes and is asked once
    answers: dict[int, bool] = {}

    def never_on_rocm(site: cst.Call) -> bool:
        answer = answers.get(id(site))
        if answer is None:
            answer = answers[id(site)] = guards.never_on_rocm(site)
        return answer

    changed = True
    while changed:
        changed = False
        for name, function in functions.items():
            if name in found or mentions.get(name, 0) != 1 + len(sites.get(name, ())):
                continue
            outside = outsides[name]
            callers = sorted({owner for _, owner in outside if owner in found})
            named = ", ".join(f"`{owner}`" for owner in callers)
            if not outside:
                if not dead_code or function.decorators or _RUNNER_HOOKS.match(name):
                    continue
                reason = _NEVER_CALLED.format(name=name)
                dead.add(name)
            elif dead_code and all(owner in dead for _, owner in outside):
                reason = _ONLY_DEAD.format(name=name, owners=named)
                dead.add(name)
            elif all(owner in found or never_on_rocm(site) for site, owner in outside):
                if callers:
                    reason = _ONLY_FROM.format(name=name, owners=named)
                else:
                    lines = ", ".join(map(str, first_lines([site for site, _ in outside])))
                    reason = _ONLY_CALLED.format(name=name, lines=lines)
            else:
                continue
            found[name] = reason
            guards.regions.setdefault(id(function.body), reason)
            changed = True


def _owner(node: cst.CSTNode, context: PythonContext, owners: Mapping[int, str]) -> str:
    """The module-level function ``node`` sits in ("" at module level or in a class)."""
    current = context.parents.get(id(node))
    while current is not None:
        name = owners.get(id(current))
        if name is not None:
            return name
        current = context.parents.get(id(current))
    return ""


def _mentions(text: str, names: Iterable[str]) -> dict[str, int]:
    """How many times each name occurs as a word of the text, comments left out (a commented-
    out call ``# helper()`` calls nothing); a mention in a string counts."""
    wanted = sorted(name for name in names if name in text)
    if not wanted:
        return {}
    pattern = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, wanted)) + r")(?!\w)")
    counts: dict[str, int] = {}
    for match in pattern.finditer(text):
        start = match.start()
        if text.rfind("#", text.rfind("\n", 0, start) + 1, start) >= 0:
            break  # a "#" before it on its line: it may sit in a comment, so tokenize
        counts[match.group(1)] = counts.get(match.group(1), 0) + 1
    else:
        return counts  # no "#" before any mention on its line: none is in a comment
    counts = {}
    for match in pattern.finditer(_without_comments(text)):
        counts[match.group(1)] = counts.get(match.group(1), 0) + 1
    return counts


def _without_comments(text: str) -> str:
    """The text with its comments blanked (strings kept); the text itself if it does not
    tokenize."""
    import io
    import tokenize

    if "#" not in text:
        return text
    lines = text.splitlines(keepends=True)
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                row, column = token.start
                line = lines[row - 1]
                lines[row - 1] = (
                    line[:column] + " " * (token.end[1] - column) + line[token.end[1] :]
                )
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return text
    return "".join(lines)


def dispatched_names(guard: str) -> list[str]:
    """The functions a guard of this module relies on (none for any other guard)."""
    return _NAMES.findall(guard) if _OURS.match(guard) else []


def called_elsewhere(name: str, path: str, sources: Mapping[str, str]) -> bool:
    """Whether a project file other than ``path`` mentions ``name`` (it may call it); for a
    module at the top of the repository (outside any package), one that also mentions the
    module's name: only an import of it (``from gen_img import f``, ``import gen_img``) reaches
    its functions, and sibling scripts often define functions of the same name."""
    pattern = re.compile(r"(?<!\w)" + re.escape(name) + r"(?!\w)")
    module = None
    if "/" not in path and path.endswith(".py"):
        module = re.compile(r"(?<![\w.])" + re.escape(path[:-3]) + r"(?!\w)")
    return any(
        relative != path
        and name in text
        and pattern.search(text) is not None
        and (module is None or module.search(text) is not None)
        for relative, text in sources.items()
    )


def unguard_if_called_elsewhere(finding: Finding, sources: Mapping[str, str]) -> Finding:
    """The finding without its guard when the guard is this module's and another project file
    mentions one of the functions it relies on (it may call it from code that runs on ROCm)."""
    names = dispatched_names(finding.guard)
    if any(called_elsewhere(name, finding.path, sources) for name in names):
        return replace(finding, guard="")
    return finding
