"""Where a project states the torch versions it supports outside its dependency files: a
``setup.py`` (or its package's ``__init__``) that asserts or raises on ``torch.__version__``,
the torch versions its CI matrices and pinned CI installs test (GitHub Actions, GitLab), its
tox and nox environments, its README and its install guides. Each floor keeps where it was read,
so that a fix withheld for it names the evidence; nothing of the project is run."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from packaging.version import InvalidVersion, Version

from migrator.files.sources import read_project_text
from migrator.knowledge.versions import Floor, VersionRange, branch_range, parse_version

#: The package these sources are read for (the fixes that need a recent version need torch).
TORCH = "torch"
#: Python files whose top-level checks run when the project is installed or imported.
_CHECKED_MODULES = ("setup.py", "*/__init__.py", "src/*/__init__.py")
_CI_FILES = (".github/workflows/*.yml", ".github/workflows/*.yaml", ".gitlab-ci.yml")
#: A matrix axis or CI variable naming the torch version (``torch``, ``pytorch-version``,
#: ``TORCH_VERSION``, ``torch_versions``).
_AXIS = re.compile(r"(?:py)?torch(?:[-_]?versions?)?", re.IGNORECASE)
#: ``torch==1.13.1``, ``torch>=1.8``, ``torch~=2.0`` in a CI command, tox deps or a nox install.
_PIN = re.compile(r"(?<![\w.-])torch\s*(==|>=|~=|===)\s*v?(\d+\.\d+(?:\.\d+)?)")
#: Nodes of a CI file visited at most (a hostile file of aliases must not take the run).
_MAX_NODES = 50_000


def stated_floors(root: Path) -> dict[str, list[Floor]]:
    """package -> the floors ``root`` states outside its dependency files (only torch)."""
    from migrator.knowledge.readme_versions import stated_torch_floors

    found = [*_checked_floors(root), *_ci_floors(root), *_tox_floors(root), *_nox_floors(root)]
    found += stated_torch_floors(root)
    return {TORCH: found} if found else {}


def _version(text: str) -> Version | None:
    """The release a matrix value or pin names (``"1.13"``, ``2.2.1+cu121``, ``v2.0``), or None
    (``nightly``, ``latest``, ``${{ env.X }}``)."""
    release = parse_version(text.strip().strip("'\""))
    if release is None or len(release) < 2:
        return None
    try:
        return Version(".".join(map(str, release[:3])))
    except InvalidVersion:
        return None


def _files(root: Path, patterns: tuple[str, ...]) -> Iterator[Path]:
    """The regular files matching ``patterns`` that lie inside ``root`` (no link leads out)."""
    seen: set[Path] = set()
    inside = root.resolve()
    for pattern in patterns:
        for path in sorted(root.glob(pattern)):
            if path in seen or path.is_symlink() or not path.is_file():
                continue
            if not path.resolve().is_relative_to(inside):
                continue
            seen.add(path)
            yield path


def _read_inside(root: Path, name: str) -> str | None:
    """The text of ``root/name`` when it is a regular file inside ``root``, else None."""
    path = next(_files(root, (name,)), None)
    return read_project_text(path) if path is not None else None


# setup.py and package __init__ checks


def _checked_floors(root: Path) -> Iterator[Floor]:
    """``assert torch.__version__ >= "1.8"`` and ``if version.parse(torch.__version__) <
    version.parse("1.8"): raise ...`` in ``setup.py`` (anywhere) and at the top level of a
    package's ``__init__``: the install or import stops below that version."""
    for path in _files(root, _CHECKED_MODULES):
        text = read_project_text(path)
        if text is None or "version" not in text:
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        relative = path.relative_to(root).as_posix()
        nodes = ast.walk(tree) if path.name == "setup.py" else iter(tree.body)
        for node in nodes:
            low = _check_floor(node, text)
            if low is not None and isinstance(node, ast.stmt):
                kind = "assert" if isinstance(node, ast.Assert) else "raise"
                yield Floor(low, f"{relative}:{node.lineno} {kind} torch>={low}")


def _check_floor(node: ast.AST, text: str) -> Version | None:
    """The torch floor an ``assert`` or an ``if ...: raise`` enforces, or None."""
    if isinstance(node, ast.Assert):
        return _low(node.test, text, negate=False)
    if isinstance(node, ast.If) and any(
        isinstance(statement, ast.Raise) or _exits(statement) for statement in node.body
    ):
        return _low(node.test, text, negate=True)  # the code goes on where the test is false
    return None


def _exits(statement: ast.stmt) -> bool:
    """``sys.exit(...)`` / ``exit(...)`` as a statement."""
    if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
        return False
    function = statement.value.func
    name = function.attr if isinstance(function, ast.Attribute) else None
    name = function.id if isinstance(function, ast.Name) else name
    return name in {"exit", "_exit"}


def _low(test: ast.expr, text: str, negate: bool) -> Version | None:
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negate = test.operand, not negate
    if isinstance(test, ast.BoolOp):
        return None  # `a and b` negated is `not a or not b`: no single floor
    source = ast.get_source_segment(text, test)
    if source is None:
        return None
    bound: VersionRange | None = branch_range(source, negate).get(TORCH)
    return bound.low if bound is not None else None


# CI matrices and pinned installs


def _ci_floors(root: Path) -> Iterator[Floor]:
    """The lowest torch version each CI file tests: a matrix axis named for torch (GitHub
    Actions ``matrix: torch: [...]``, ``include:`` entries, GitLab ``parallel: matrix:``) and
    ``torch==X`` installs in its commands."""
    import yaml

    for path in _files(root, _CI_FILES):
        text = read_project_text(path, limit=1_000_000)
        if text is None or "torch" not in text.lower():
            continue
        relative = path.relative_to(root).as_posix()
        # every scalar a string (`1.10` stays 1.10, a float would read 1.1); builds no object
        loader = getattr(yaml, "CBaseLoader", yaml.BaseLoader)  # libyaml's, where PyYAML has it
        try:
            document = list(yaml.load_all(text, Loader=loader))  # noqa: S506
        except (yaml.YAMLError, RecursionError, MemoryError):
            document = None
        versions = [v for value in _matrix_values(document) if (v := _version(value)) is not None]
        if versions:
            yield Floor(min(versions), f"{relative} matrix torch {min(versions)}")
        pins = [_pin_floor(match) for match in _PIN.finditer(text)]
        if pins:
            yield Floor(min(pins), f"{relative} installs torch {min(pins)}")


def _matrix_values(document: object) -> Iterator[str]:
    """Every value of a torch axis under a ``matrix`` key of the parsed CI file."""
    stack: list[tuple[object, bool]] = [(document, False)]
    seen: set[int] = set()
    while stack and len(seen) < _MAX_NODES:
        node, in_matrix = stack.pop()
        if id(node) in seen:
            continue  # an alias visited already
        seen.add(id(node))
        if isinstance(node, dict):
            for key, value in node.items():
                if in_matrix and isinstance(key, str) and _AXIS.fullmatch(key):
                    values = value if isinstance(value, list) else [value]
                    yield from (item for item in values if isinstance(item, str))
                stack.append((value, in_matrix or key == "matrix"))
        elif isinstance(node, list):
            stack.extend((item, in_matrix) for item in node)


def _pin_floor(match: re.Match[str]) -> Version:
    return Version(match.group(2))


# tox and nox


def _tox_floors(root: Path) -> Iterator[Floor]:
    """The lowest ``torch==X`` / ``torch>=X`` of ``tox.ini``'s environments."""
    text = _read_inside(root, "tox.ini")
    if text is None:
        return
    found = [
        (Version(match.group(2)), text.count("\n", 0, match.start()) + 1)
        for match in _PIN.finditer(text)
    ]
    if found:
        version, line = min(found)
        yield Floor(version, f"tox.ini:{line} torch {version}")


def _nox_floors(root: Path) -> Iterator[Floor]:
    """The lowest torch version of ``noxfile.py``: a ``@nox.parametrize("torch", [...])``
    axis, or a ``torch==X`` string it installs (read, never run)."""
    text = _read_inside(root, "noxfile.py")
    if text is None or "torch" not in text:
        return
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    found: list[tuple[Version, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _parametrizes_torch(node) and len(node.args) > 1:
            values = node.args[1]
            items = values.elts if isinstance(values, ast.List | ast.Tuple) else []
            for item in items:
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    version = _version(item.value)
                    if version is not None:
                        found.append((version, node.lineno))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [(_pin_floor(match), node.lineno) for match in _PIN.finditer(node.value)]
    if found:
        version, line = min(found)
        yield Floor(version, f"noxfile.py:{line} torch {version}")


def _parametrizes_torch(call: ast.Call) -> bool:
    function = call.func
    name = function.attr if isinstance(function, ast.Attribute) else None
    if name != "parametrize" or not call.args:
        return False
    first = call.args[0]
    return (
        isinstance(first, ast.Constant)
        and isinstance(first.value, str)
        and any(_AXIS.fullmatch(part.strip()) for part in first.value.split(","))
    )


# the Python floor: the newest torch a project's oldest Python can install

#: Python minor -> the newest torch release with wheels for it, from the release compatibility
#: matrix of pytorch/pytorch RELEASE.md (1.13: Python >=3.7; 2.0-2.4: >=3.8; 2.5-2.8: >=3.9;
#: 2.9 on: >=3.10). A project that supports Python 3.7 runs, there, torch 1.13 at most.
NEWEST_TORCH_FOR_PYTHON = {7: "1.13", 8: "2.4", 9: "2.8"}
_REQUIRES_PYTHON = re.compile(r"""python_requires\s*=\s*["']?([^"'\n#]+)""")


def python_torch_floor(root: Path) -> Floor | None:
    """Where a project states no torch floor but a Python floor (``requires-python``,
    ``python_requires``) old enough that the newest torch for it is old: that torch is
    supported, so its version bounds the floor (``pyproject.toml requires-python >=3.7: torch
    1.13 at most on Python 3.7``); None otherwise."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from migrator.files.tomlcompat import parse_toml, tomllib

    found: list[tuple[str, str]] = []
    pyproject = _read_inside(root, "pyproject.toml")
    if pyproject:
        try:
            project = parse_toml(pyproject).get("project")
        except tomllib.TOMLDecodeError:
            project = None
        if isinstance(project, dict) and isinstance(project.get("requires-python"), str):
            found.append(("pyproject.toml requires-python", project["requires-python"]))
    for name in ("setup.py", "setup.cfg"):
        text = _read_inside(root, name)
        match = _REQUIRES_PYTHON.search(text or "")
        if match:
            found.append((f"{name} python_requires", match.group(1).strip()))
    for where, spec in found:
        try:
            allowed = SpecifierSet(spec)
        except InvalidSpecifier:
            continue
        for minor in sorted(NEWEST_TORCH_FOR_PYTHON):
            if any(allowed.contains(f"3.{minor}.{patch}") for patch in (0, 99)):
                newest = NEWEST_TORCH_FOR_PYTHON[minor]
                return Floor(
                    Version(newest),
                    f"{where} {spec} (Python 3.{minor}: torch {newest} at most)",
                )
    return None
