"""The third-party packages a project imports on a GPU path, each known (the knowledge tables),
shown by the files of an environment (``--python``: a CUDA build, a ROCm build, CPU-only or pure
Python) or listed as an unknown native dependency: what migrate cannot see is said, never taken
as fine. One record per package, with its import sites."""

from __future__ import annotations

import ast
import functools
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from migrator.environment.distributions import Distribution, by_import
from migrator.environment.evidence import Reading, read_distribution
from migrator.environment.locate import Environment
from migrator.files.paths import is_benchmark_path, is_test_path, vendored
from migrator.files.sources import read_project_text
from migrator.model import ImportedPackage, ScanResult, Status

#: Import sites kept per package.
MAX_SITES = 20
#: Python files larger than this are not read for their imports.
MAX_SOURCE_CHARS = 2_000_000
_AVAILABILITY = re.compile(r"available\b|find_spec\b|find_loader\b", re.IGNORECASE)
_GUARD_EXCEPTIONS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
_EXTENSION_NAME = re.compile(
    r"\b(?:Extension|CUDAExtension|CppExtension|load|load_inline|Pybind11Extension)\s*\(\s*"
    r"(?:name\s*=\s*)?[\"']([\w.]+)[\"']"
)
_CMAKE_MODULE = re.compile(
    r"\b(?:pybind11_add_module|nanobind_add_module|[Pp]ython3?_add_library)\s*\(\s*([\w.]+)"
)
_CODE_SUFFIXES = (".py", ".pyx", ".pyi", ".so", ".pyd", ".c", ".cc", ".cpp", ".cu", ".rs")
UNKNOWN_CHECK = (
    "not in migrate's tables and no environment was read: scan with `--python PATH` (the "
    "project's interpreter or virtual environment) to read its installed files, or check whether "
    "its wheels carry CUDA binaries (libcudart, .nv_fatbin) and whether a ROCm build exists"
)


@functools.cache
def _tables() -> tuple[frozenset[str], tuple[str, ...]]:
    """Known import names (canonicalised), and the modules that make a module GPU code."""
    from migrator.knowledge.tables import load_table

    known: set[str] = set()

    def walk(value: Any, key: str = "") -> None:
        if isinstance(value, dict):
            if key in ("no_equivalent", "deprecated_quant", "plugins"):
                known.update(str(name) for name in value)
            for child_key, child in value.items():
                walk(child, child_key)
        elif isinstance(value, list):
            if key in ("names", "packages", "modules"):
                known.update(str(name).split(".")[0] for name in value)
            for child in value:
                if isinstance(child, dict):
                    walk(child)

    walk(load_table("packages"))
    native = load_table("native")
    gpu = tuple(native["gpu_paths"]["modules"])
    for names in native["known"].values():
        known.update(names)
    known.update(module.split(".")[0] for module in gpu)
    return frozenset(canonicalize_name(name) for name in known), gpu


def is_known(name: str) -> bool:
    """Whether migrate's knowledge tables cover the import name ``name``."""
    return canonicalize_name(name) in _tables()[0]


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    kind = handler.type
    if kind is None:
        return True
    names = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    return any(
        (node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")) in _GUARD_EXCEPTIONS
        for node in names
    )


def _is_type_checking(test: ast.expr) -> bool:
    text = ast.unparse(test)
    return text in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def _is_availability_check(test: ast.expr) -> bool:
    """``if is_aim_available():``, ``if _HAS_X:``-style probes through ``find_spec``: the body
    runs only where the package is installed."""
    return _AVAILABILITY.search(ast.unparse(test)) is not None


def _imports(tree: ast.AST) -> Iterator[tuple[str, int, bool, bool]]:
    """``(dotted module, line, guarded, eager)`` of every absolute import: guarded when a ``try``
    whose handler catches ``ImportError`` (or wider) holds it, an ``if TYPE_CHECKING`` block or
    an availability check; eager when it runs as its module loads (not inside a function)."""
    stack: list[tuple[ast.AST, bool, bool]] = [(tree, False, True)]
    while stack:
        node, guarded, eager = stack.pop()
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, guarded, eager
            continue
        if isinstance(node, ast.ImportFrom):
            if not node.level and node.module:
                yield node.module, node.lineno, guarded, eager
                for alias in node.names:  # for the GPU-path test only
                    yield f"{node.module}.{alias.name}", node.lineno, True, eager
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for child in ast.iter_child_nodes(node):
                stack.append((child, guarded, False))
            continue
        if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            body_guarded = guarded or any(
                _catches_import_error(handler) for handler in getattr(node, "handlers", [])
            )
            for child in getattr(node, "body", []):
                stack.append((child, body_guarded, eager))
            for field_name in ("handlers", "orelse", "finalbody"):
                for child in getattr(node, field_name, []):
                    stack.append((child, guarded, eager))
            continue
        if isinstance(node, ast.If) and (
            _is_type_checking(node.test) or _is_availability_check(node.test)
        ):
            for child in node.body:
                stack.append((child, True, eager))
            for child in node.orelse:
                stack.append((child, guarded, eager))
            continue
        for child in ast.iter_child_nodes(node):
            stack.append((child, guarded, eager))


def _own_names(paths: Sequence[str], texts: Iterable[str]) -> set[str]:
    """Import names the project may provide itself: every folder and code file stem in it, and
    the extensions its build scripts name (``CUDAExtension("pkg._C", ...)``)."""
    own: set[str] = set()
    for path in paths:
        parts = path.split("/")
        own.update(parts[:-1])
        leaf = parts[-1]
        if leaf.endswith(_CODE_SUFFIXES):
            own.add(leaf.split(".")[0])
    for text in texts:
        for match in _EXTENSION_NAME.finditer(text):
            own.update(match.group(1).split("."))
        for match in _CMAKE_MODULE.finditer(text):
            own.add(match.group(1))
    return own


def gpu_imports(root: Path, paths: Sequence[str]) -> dict[str, list[tuple[str, int, bool]]]:
    """Top-level third-party import names of the project's GPU modules (those that import a
    module of ``[gpu_paths]``), unguarded, with their sites; stdlib, known packages and the
    project's own names left out."""
    gpu_modules = _tables()[1]
    texts: dict[str, str] = {}
    for path in paths:
        if path.endswith(".py"):
            texts[path] = read_project_text(root / path, limit=MAX_SOURCE_CHARS) or ""
    builds = [
        read_project_text(root / path, limit=MAX_SOURCE_CHARS) or ""
        for path in paths
        if path.endswith(("CMakeLists.txt", ".cmake"))
    ]
    own = _own_names(paths, [*texts.values(), *builds])
    found: dict[str, list[tuple[str, int, bool]]] = {}
    for path, text in texts.items():
        # a test suite, a benchmark or a vendored copy of another project is not a GPU path of
        # the project's own (the vendored project's imports are its dependencies, not these)
        if is_test_path(path) or is_benchmark_path(path) or vendored(path):
            continue
        if not any(module.split(".")[0] in text for module in gpu_modules):
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue  # the scan lists a file it could not parse
        imports = list(_imports(tree))
        if not any(
            module == gpu or module.startswith(gpu + ".")
            for module, _, _, _ in imports
            for gpu in gpu_modules
        ):
            continue
        for module, line, guarded, eager in imports:
            top = module.split(".")[0]
            if guarded or top in sys.stdlib_module_names or top == "__future__":
                continue
            if top in own or is_known(top):
                continue
            found.setdefault(top, []).append((path, line, eager))
    return found


def _check(status: str, dist: Distribution | None, env: Environment | None) -> str:
    if status == "unknown" and dist is not None:
        return (
            f"its shared objects could not be read in {env.named if env else 'the environment'}: "
            "check whether they link CUDA libraries (libcudart, libcublas) and whether a ROCm "
            "build exists"
        )
    if status == "unknown":
        if env is None:
            return UNKNOWN_CHECK
        return (
            f"not installed in the environment read ({env.named}): install the project's "
            "dependencies there and scan again, or check whether its wheels carry CUDA binaries "
            "and whether a ROCm build exists"
        )
    name = f"{dist.name} {dist.version}".strip() if dist else "it"
    return {
        "cuda-only": f"the installed build ({name}) is CUDA-only and fails to load on ROCm: "
        f"install a ROCm build of {dist.name if dist else 'it'}, build it from source for ROCm, "
        "or replace it",
        "rocm": f"the installed build ({name}) is a ROCm build",
        "cuda-and-rocm": f"the installed build ({name}) carries CUDA and ROCm code",
        "native-cpu": f"the installed build ({name}) has native code for the CPU only",
        "pure-python": f"the installed build ({name}) is pure Python",
    }.get(status, "")


def imported_packages(scan: ScanResult, env: Environment | None = None) -> list[ImportedPackage]:
    """One record per third-party package the GPU code of ``scan``'s project imports: its
    status from ``env``'s files when one is given, else unknown."""
    root = Path(scan.root)
    if not root.is_dir():
        return []
    paths = [file.path for file in scan.files if file.status is Status.SCANNED]
    found = gpu_imports(root, paths)
    if not found:
        return []
    installed = by_import(env.site_dirs) if env is not None else {}
    readings: dict[str, Reading] = {}
    out: list[ImportedPackage] = []
    for name in sorted(found, key=str.lower):
        sites = tuple(sorted({(path, line) for path, line, _ in found[name]}))[:MAX_SITES]
        eager = any(site_eager for _, _, site_eager in found[name])
        dist = installed.get(name)
        if dist is None:
            out.append(
                ImportedPackage(
                    name, "unknown", check=_check("unknown", None, env), sites=sites, eager=eager
                )
            )
            continue
        reading = readings.get(dist.name)
        if reading is None:
            reading = readings[dist.name] = read_distribution(dist, env)  # type: ignore[arg-type]
        out.append(
            ImportedPackage(
                name,
                reading.status,
                distribution=dist.name,
                version=dist.version,
                evidence=reading.evidence,
                check=_check(reading.status, dist, env),
                sites=sites,
                eager=eager,
            )
        )
    return out


def attach(scan: ScanResult, env: Environment | None) -> ScanResult:
    """``scan`` with its imported packages read (from ``env``'s files, or none)."""
    scan.packages = imported_packages(scan, env)
    scan.environment = ", ".join(str(site) for site in env.site_dirs) if env else ""
    return scan
