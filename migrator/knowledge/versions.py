"""The one version model (PEP 440 through ``packaging``) for the engine and the rules: version
ranges, specifiers, tolerant release numbers, Poetry constraints, and what a project declares
about the versions it supports, read once per root, so that a fix never emits an API newer than
the project's declared floor."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from migrator.files.sources import FailFile, SkipFile, TooLarge, read_regular

#: Files whose requirement lines declare what a project supports (relative globs).
_REQUIREMENT_GLOBS = (
    "requirements*.txt",
    "requirements/*.txt",
    "constraints*.txt",
    "*requirements*.txt",
)
_CONDA_FILES = ("environment.yml", "environment.yaml", "conda.yml", "conda.yaml")
_REQUIREMENT_STRING = re.compile(
    r"""["']([A-Za-z0-9_.\-\[\], ]+\s*(?:[<>=!~]=?|===)[^"'\n]*)["']"""
)


@dataclass(frozen=True, slots=True)
class VersionRange:
    """A closed-open interval of versions: ``low`` inclusive (None: unbounded), ``high`` exclusive."""

    low: Version | None = None
    high: Version | None = None

    def intersect(self, other: VersionRange) -> VersionRange:
        low = max((v for v in (self.low, other.low) if v is not None), default=None)
        high = min((v for v in (self.high, other.high) if v is not None), default=None)
        return VersionRange(low, high)

    def is_empty(self) -> bool:
        """Whether no version lies in the interval (a branch the declared range never takes)."""
        return self.low is not None and self.high is not None and self.low >= self.high

    def describe(self, package: str) -> str:
        parts = []
        if self.low is not None:
            parts.append(f">={self.low}")
        if self.high is not None:
            parts.append(f"<{self.high}")
        return f"{package}{','.join(parts) or ' (any version)'}"


def range_of(specifier: SpecifierSet) -> VersionRange:
    """The interval a specifier set allows (``!=`` exclusions are ignored: they never raise a floor)."""
    low: Version | None = None
    high: Version | None = None
    for spec in specifier:
        try:
            version = Version(spec.version.rstrip(".*").rstrip("."))
        except InvalidVersion:
            continue
        version = Version(version.base_version)
        if spec.operator in (">=", "==", "===", "~=", ">"):
            low = version if low is None else max(low, version)
        if spec.operator in ("<", "<="):
            bound = version if spec.operator == "<" else _next(version)
            high = bound if high is None else min(high, bound)
        if spec.operator in ("==", "==="):
            bound = _next(version)
            high = bound if high is None else min(high, bound)
        if spec.operator == "~=":
            release = list(version.release[:-1]) or [version.release[0]]
            release[-1] += 1
            bound = Version(".".join(map(str, release)))
            high = bound if high is None else min(high, bound)
    return VersionRange(low, high)


def _next(version: Version) -> Version:
    """The smallest release after ``version`` at its precision (2.4 → 2.4.1)."""
    release = list(version.release) + [0] * (3 - len(version.release))
    release[2] += 1
    return Version(".".join(map(str, release[:3])))


@dataclass(frozen=True, slots=True, order=True)
class Floor:
    """One place a project states a version it supports (a dependency file's lower bound, a
    ``setup.py`` assert, a CI matrix entry), kept to name as the evidence for a withheld fix."""

    version: Version
    #: where, and what it says: ``setup.py:12 assert torch>=1.8``, ``.github/workflows/ci.yml
    #: matrix torch 1.13``
    where: str


#: package -> the newest release whose APIs a fix may emit where the project states no floor
#: at all: torch 2.0 (March 2023). A fix that needs a newer one (``torch.amp.GradScaler``
#: 2.3, ``sdpa_kernel`` 2.3, ``custom_fwd(device_type=)`` 2.4, ``nn.RMSNorm`` 2.4, SDPA
#: ``enable_gqa`` 2.5) is withheld: an unknown floor is not a recent one.
UNKNOWN_FLOOR_ALLOWS = {"torch": Version("2.0")}


def _unknown_floor(
    facts: ProjectFacts, package: str, declared: VersionRange, minimum: Version
) -> str:
    """Why a fix needing ``minimum`` is withheld where nothing the project states gives
    ``package`` a floor (dependency files, setup.py, CI, tox, nox, README were read), or ""."""
    allowed = UNKNOWN_FLOOR_ALLOWS.get(canonicalize_name(package))
    if not facts.versions_read or declared.low is not None or allowed is None:
        return ""
    # a cap on the floor (the newest torch of the oldest Python the project supports)
    caps = facts.floors.get(canonicalize_name(package), ())
    if minimum <= min([allowed, *(cap.version for cap in caps)]):
        return ""
    evidence = facts.evidence(package, minimum)
    return (
        f"the project states no {package} floor (not in its dependency files, setup.py, CI "
        f"matrices, tox, nox, README or install guide), and an unknown floor withholds fixes that need "
        f"{package} newer than {allowed}{evidence}"
    )


@dataclass(frozen=True, slots=True)
class ProjectFacts:
    """Declared version ranges per canonical package name, and the configured line length."""

    ranges: Mapping[str, VersionRange] = field(default_factory=dict)
    line_length: int | None = None
    #: package -> every place the project states a lower version it supports, lowest first
    floors: Mapping[str, tuple[Floor, ...]] = field(default_factory=dict)
    #: From the project's build model (``migrator.kernels.builds``), sorted like the macros:
    #: (path, line, digest) of each call that builds a GPU extension, directly or through a
    #: project function that wraps ``cpp_extension``; (macro, build file, line) of each macro a build
    #: defines only where it finds CUDA; (path, line, kind, message, anchor) of each note on a
    #: build (``migrator.kernels.buildmodel.BuildNote``).
    builds_read: bool = False
    build_calls: tuple[tuple[str, int, str], ...] = ()
    cuda_build_macros: tuple[tuple[str, str, int], ...] = ()
    build_notes: tuple[tuple[str, int, str, str, str], ...] = ()
    #: (path from the root, reason) of each file declaring versions that was too large to
    #: read: the scan lists them as unread. Not part of the repr, which keys the cache.
    unread: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)
    #: Macros the project's own C/C++ headers define only in branches a HIP build skips
    #: (``PTX_AVAILABLE`` in the ``#else`` of ``#ifdef __HIP_PLATFORM_AMD__``): undefined on
    #: ROCm wherever they are tested (``migrator.kernels.macros``). Sorted: the facts' repr is
    #: part of every cache key, and a set's order changes from one process to the next.
    nvidia_macros: tuple[str, ...] = ()
    #: CUDA-named identifiers hipify does not map that the project's own C/C++ sources declare
    #: (its ``CUDA_CHECK`` macro, a ``cudaUnspecified`` enumerator), and its own files whose
    #: path from an include folder is named like a CUDA header (``cuda_utils.h``): neither is
    #: CUDA's (``migrator.kernels.cuda_names``). Sorted, like ``nvidia_macros``.
    cuda_names: tuple[str, ...] = ()
    cuda_headers: tuple[str, ...] = ()
    #: (name, value on HIP) of the project's macros defined once as a preprocessor expression
    #: with a known value there (``migrator.kernels.macro_values``). Sorted.
    macro_values: tuple[tuple[str, int], ...] = ()
    #: The ``__CUDA_ARCH__`` values the project's build files name (``migrator.kernels.archs``):
    #: each kernel is read as nvcc's device pass reads it for these; empty: sm_80 and sm_90.
    cuda_archs: tuple[int, ...] = ()
    #: Kernel files only CMake targets compile, and the project headers only they include
    #: (``migrator.kernels.unhipified``): no hipify step renames their ``__CUDACC__``, which
    #: hipcc does not define. Sorted.
    unhipified: tuple[str, ...] = ()
    #: Opt-in switches (``FLASHINFER_ENABLE_FP8``) the C/C++ sources test and nothing of the
    #: project defines (``migrator.kernels.switches``): no build of the project compiles what
    #: they guard. Sorted.
    unset_switches: tuple[str, ...] = ()
    #: Macros the project's C/C++ sources define, everywhere they define them, as the 32-lane
    #: full mask (``migrator.kernels.mask_macros``): a use in another file is that mask. Sorted.
    full_mask_macros: tuple[str, ...] = ()
    #: Warp intrinsics (``__shfl_xor_sync``) the project redefines as macros where a HIP build
    #: compiles them (``migrator.kernels.mask_macros.intrinsic_shims``). Sorted.
    intrinsic_shims: tuple[str, ...] = ()
    #: Sources that include, through the project's headers, one with ``using namespace
    #: nvcuda;`` (``migrator.kernels.namespaces``): unqualified WMMA calls there are NVIDIA's.
    #: Sorted.
    nvcuda_using: tuple[str, ...] = ()
    #: The project's files were read for the versions it supports (``project_facts`` of a
    #: folder): where they state no floor, the floor is unknown, not merely unread.
    versions_read: bool = False

    def range(self, package: str) -> VersionRange:
        return self.ranges.get(canonicalize_name(package), VersionRange())

    def unmet(
        self,
        requires: Mapping[str, str],
        branch: Mapping[str, VersionRange] | None = None,
        api: str = "",
    ) -> str | None:
        """Why a fix emitting APIs that need ``requires`` (package → minimum; ``api``: what it
        emits, named in the reason) cannot be offered, or None when the declared range (narrowed
        by ``branch``) starts at or above each minimum. The reason names where the project
        states the older versions it supports."""
        for package, minimum in requires.items():
            declared = self.range(package)
            needs = f"needs {package}>={minimum}" + (f" ({api})" if api else "")
            project_low = declared.low
            if branch and canonicalize_name(package) in branch:
                narrowed = branch[canonicalize_name(package)]
                if declared.intersect(narrowed).is_empty():
                    return (
                        f"{needs}; this code runs only on "
                        f"{narrowed.describe(package)}, which the project does not support "
                        f"({declared.describe(package)})"
                    )
                declared = declared.intersect(narrowed)
            if declared.high is not None and declared.high <= Version(minimum):
                return f"{needs}; this code runs on {declared.describe(package)}"
            unknown = _unknown_floor(self, package, declared, Version(minimum))
            if unknown:
                return f"{needs}; {unknown}"
            if declared.low is not None and declared.low < Version(minimum):
                evidence = (
                    self.evidence(package, Version(minimum)) if declared.low == project_low else ""
                )
                return f"{needs}; the project supports {declared.describe(package)}{evidence}"
        return None

    def evidence(self, package: str, minimum: Version) -> str:
        """`` (setup.py:12 assert torch>=1.8, ci.yml matrix torch 1.13)``: the places that state
        a supported version of ``package`` below ``minimum`` (at most four), or ""."""
        below = [
            floor.where
            for floor in self.floors.get(canonicalize_name(package), ())
            if floor.version < minimum
        ]
        if not below:
            return ""
        shown = ", ".join(below[:4]) + (f" and {len(below) - 4} more" if len(below) > 4 else "")
        return f" ({shown})"


def parse_requirement(line: str) -> tuple[str, VersionRange] | None:
    """Package name and range of one PEP 508 requirement (None for anything else)."""
    text = line.split(" #", 1)[0].strip()
    if not text or text.startswith(("#", "-", "git+", "http")):
        return None
    text = re.sub(r"\s*;.*$", "", text) if ";" in text and "@" not in text else text
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return None
    return canonicalize_name(requirement.name), range_of(requirement.specifier)


#: A requirement read from a dependency file: package, range, and the file it is in.
_Declared = tuple[str, VersionRange, str]


def _merge(ranges: dict[str, VersionRange], items: Iterable[_Declared]) -> None:
    for name, found, _ in items:
        # Several files may declare one package (a loose setup.py and pinned requirements): the
        # project supports the widest floor any of them allows, so keep the lowest declared low.
        old = ranges.get(name)
        if old is None:
            ranges[name] = found
            continue
        lows = [v for v in (old.low, found.low) if v is not None]
        low = min(lows) if len(lows) == 2 else None
        highs = [v for v in (old.high, found.high) if v is not None]
        high = max(highs) if len(highs) == 2 else None
        ranges[name] = VersionRange(low, high)


class _Reader:
    """Reads the files a project declares its versions in (for context: a file that is not a
    regular file, unreadable or a link out of the project is as good as absent), and keeps
    which of them were too large to read: what they declare is unknown, so the scan says so."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.unread: list[tuple[str, str]] = []

    def text(self, path: Path, strict: bool = False) -> str | None:
        try:
            if not path.resolve().is_relative_to(self.root.resolve()):
                return None  # a link out of the project is never read
            data = read_regular(str(path))
        except TooLarge as error:
            relative = path.relative_to(self.root).as_posix()
            self.unread.append((relative, f"{error}: its declared versions are unknown"))
            return None
        except (SkipFile, FailFile, OSError, RuntimeError):
            return None
        try:
            return data.decode("utf-8", errors="strict" if strict else "replace")
        except UnicodeDecodeError:
            return None

    def lines(self, path: Path) -> list[str]:
        return (self.text(path) or "").splitlines()


def _requirement_lines(read: _Reader) -> Iterator[_Declared]:
    seen: set[Path] = set()
    for pattern in _REQUIREMENT_GLOBS:
        for path in sorted(read.root.glob(pattern)):
            if path in seen or not path.is_file():
                continue
            seen.add(path)
            for line in read.lines(path):
                parsed = parse_requirement(line)
                if parsed:
                    yield (*parsed, path.relative_to(read.root).as_posix())


def _pyproject(read: _Reader) -> tuple[list[_Declared], int | None]:
    from migrator.files.tomlcompat import parse_toml, tomllib

    text = read.text(read.root / "pyproject.toml", strict=True)
    try:
        data = parse_toml(text) if text is not None else None
    except tomllib.TOMLDecodeError:
        data = None
    if data is None:
        return [], None
    project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
    strings: list[str] = [s for s in project.get("dependencies", []) if isinstance(s, str)]
    optional = project.get("optional-dependencies", {})
    if isinstance(optional, dict):
        for group in optional.values():
            strings.extend(s for s in group if isinstance(s, str))
    found = [(*parsed, "pyproject.toml") for s in strings if (parsed := parse_requirement(s))]
    tool = data.get("tool", {}) if isinstance(data.get("tool"), dict) else {}
    length = None
    for section in ("ruff", "black"):
        value = (
            tool.get(section, {}).get("line-length")
            if isinstance(tool.get(section), dict)
            else None
        )
        if isinstance(value, int):
            length = value
            break
    return found, length


def _setup_files(read: _Reader) -> Iterator[_Declared]:
    setup_py = read.root / "setup.py"
    if setup_py.is_file():
        try:
            tree = ast.parse(read.text(setup_py) or "")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        if tree is not None:
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    if _REQUIREMENT_STRING.fullmatch(repr(node.value)):
                        parsed = parse_requirement(node.value)
                        if parsed:
                            yield (*parsed, "setup.py")
    for line in read.lines(read.root / "setup.cfg"):
        parsed = parse_requirement(line.strip())
        if parsed:
            yield (*parsed, "setup.cfg")


def _conda(read: _Reader) -> Iterator[_Declared]:
    for name in _CONDA_FILES:
        for line in read.lines(read.root / name):
            entry = line.strip().lstrip("-").strip()
            entry = re.sub(r"^(\w[\w.\-]*)=(\d)", r"\1==\2", entry)  # conda's `torch=2.1`
            parsed = parse_requirement(entry)
            if parsed:
                yield (*parsed, name)


def declared_facts(root: Path) -> ProjectFacts:
    """The ranges the dependency files of the project at ``root`` (a folder) declare, with
    the floor each states, and its line length (``migrator.knowledge.supported_versions`` adds
    the floors it states elsewhere)."""
    if not root.is_dir():
        return ProjectFacts()
    ranges: dict[str, VersionRange] = {}
    read = _Reader(root)
    from_pyproject, line_length = _pyproject(read)
    declared = [
        *from_pyproject,
        *_setup_files(read),
        *_requirement_lines(read),
        *_conda(read),
    ]
    _merge(ranges, declared)
    floors: dict[str, set[Floor]] = {}
    for name, found, where in declared:
        if found.low is not None and ranges[name].low is not None:
            floors.setdefault(name, set()).add(Floor(found.low, f"{where} {name}>={found.low}"))
    return ProjectFacts(
        ranges,
        line_length,
        {name: tuple(sorted(found)) for name, found in sorted(floors.items())},
        unread=tuple(read.unread),
    )


def branch_range(
    test_source: str, negate: bool, constants: Mapping[str, str] | None = None
) -> dict[str, VersionRange]:
    """The range of the packages a version test constrains (``torch.__version__ < "2.3"``,
    ``is_torch_version(">=", "2.3")``, ``version.parse(torch.__version__) >= version.parse("2.3")``,
    ``is_torch_greater_or_equal("2.3")``, transformers' ``is_torch_greater_or_equal_than_1_10``,
    ``hasattr(torch, "amp")``), inside its body (or its ``else`` when ``negate``), read as the
    interpreter reads it: ``not`` flips it, ``and`` narrows, ``or`` widens (to the smallest
    range holding both sides; a side that does not constrain a package frees it).
    ``constants``: the file's module-level names bound to a test (``TORCH_GE_2 =
    version.parse(torch.__version__) >= version.parse("2.0")``), read through."""
    try:
        tree = ast.parse(f"(\n{test_source}\n)", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _flat_range(test_source, negate)
    try:
        return _evaluate(tree, negate, constants or {}, 0)
    except RecursionError:
        return {}


#: How many constants deep a test is read through (``A = B``, ``B = torch >= 2``).
_CONSTANT_DEPTH = 4
_Ranges = dict[str, VersionRange]


def _evaluate(node: ast.expr, negate: bool, constants: Mapping[str, str], depth: int) -> _Ranges:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _evaluate(node.operand, not negate, constants, depth)
    if isinstance(node, ast.BoolOp):
        parts = [_evaluate(value, negate, constants, depth) for value in node.values]
        both = isinstance(node.op, ast.And) != negate  # not (a or b) == not a and not b
        return _meet(parts) if both else _join(parts)
    if isinstance(node, ast.Name) and node.id in constants and depth < _CONSTANT_DEPTH:
        try:
            bound = ast.parse(f"(\n{constants[node.id]}\n)", mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return {}
        return _evaluate(bound, negate, constants, depth + 1)
    positive = _flat_range(ast.unparse(node), negate=False)
    positive.update(_attribute_ranges(node))
    if not negate:
        return positive
    return {
        package: complement
        for package, bound in positive.items()
        if (complement := _complement(bound)) is not None
    }


def _meet(parts: list[_Ranges]) -> _Ranges:
    found: _Ranges = {}
    for part in parts:
        for package, bound in part.items():
            found[package] = found.get(package, VersionRange()).intersect(bound)
    return found


def _join(parts: list[_Ranges]) -> _Ranges:
    """The smallest range per package holding every part (a part silent on it frees it)."""
    if not parts:
        return {}
    common = set(parts[0]).intersection(*parts[1:])
    found: _Ranges = {}
    for package in common:
        bounds = [part[package] for part in parts]
        lows = [bound.low for bound in bounds]
        highs = [bound.high for bound in bounds]
        low = None if None in lows else min(v for v in lows if v is not None)
        high = None if None in highs else max(v for v in highs if v is not None)
        if low is not None or high is not None:
            found[package] = VersionRange(low, high)
    return found


def _complement(bound: VersionRange) -> VersionRange | None:
    """The versions outside ``bound`` as one range, or None when they are not one."""
    if bound.low is not None and bound.high is None:
        return VersionRange(None, bound.low)
    if bound.high is not None and bound.low is None:
        return VersionRange(bound.high, None)
    return None


#: Attributes whose presence tells torch releases apart (``hasattr(torch, "amp")``): the release
#: that added each (the APIs the fixes write).
_ADDED_IN = {
    "torch.autocast": "1.10",
    "torch.amp": "1.12",
    "torch.amp.autocast": "1.12",
    "torch.amp.GradScaler": "2.3",
    "torch.amp.custom_fwd": "2.4",
    "torch.amp.custom_bwd": "2.4",
    "torch.compile": "2.0",
    "torch.nn.attention.sdpa_kernel": "2.3",
    "torch.nn.RMSNorm": "2.4",
}


def _attribute_ranges(node: ast.expr) -> _Ranges:
    """``hasattr(torch.amp, "GradScaler")``: true exactly from the release that added it."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "hasattr"
        and len(node.args) == 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return {}
    added = _ADDED_IN.get(f"{ast.unparse(node.args[0])}.{node.args[1].value}")
    return {"torch": VersionRange(Version(added), None)} if added else {}


def _flat_range(test_source: str, negate: bool) -> _Ranges:
    """Every version comparison in ``test_source`` narrowing the range together (a single test,
    or a text ``ast`` cannot read)."""
    found: _Ranges = {}
    for package, operator, version_text in _version_tests(test_source):
        try:
            version = Version(version_text)
        except InvalidVersion:
            continue
        if negate:
            operator = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}[
                operator
            ]
        if operator in (">=", ">"):
            bound = VersionRange(version if operator == ">=" else _next(version), None)
        elif operator in ("<", "<="):
            bound = VersionRange(None, version if operator == "<" else _next(version))
        else:
            continue
        found[package] = found.get(package, VersionRange()).intersect(bound)
    return found


_OPS = r"(<=|>=|==|!=|<|>)"
_VERSION = r"""["']([0-9][0-9a-zA-Z.+]*)["']"""
_PATTERNS = (
    # torch.__version__ < "2.3" / version.parse(torch.__version__) >= version.parse("2.3")
    re.compile(
        rf"(\w+)\.__version__\)?(?:\.release)?\s*{_OPS}\s*(?:[\w.]*(?:parse|Version)\()?{_VERSION}"
    ),
    # is_torch_version(">=", "2.3") (transformers, accelerate, diffusers)
    re.compile(rf"is_(\w+?)_version\(\s*[\"']{_OPS}[\"']\s*,\s*{_VERSION}"),
)
#: ``is_torch_greater_or_equal("2.3")`` and transformers' constants
#: ``is_torch_greater_or_equal_than_1_10`` (called or not)
_GREATER = re.compile(
    rf"is_([a-z]\w*?)_greater_or_equal(?:_than)?(?:_(\d+)_(\d+)(?:_(\d+))?\b|\(\s*{_VERSION})"
)
#: transformers' ``is_torch_less_than_1_11``
_LESS = re.compile(r"is_([a-z]\w*?)_less_than_(\d+)_(\d+)(?:_(\d+))?\b")


def _underscored(*parts: str | None) -> str:
    return ".".join(part for part in parts if part is not None)


def _version_tests(source: str) -> Iterator[tuple[str, str, str]]:
    compact = re.sub(r"\s+", " ", source)
    for pattern in _PATTERNS:
        for match in pattern.finditer(compact):
            yield canonicalize_name(match.group(1)), match.group(2), match.group(3)
    for match in _GREATER.finditer(compact):
        version = match.group(5) or _underscored(match.group(2), match.group(3), match.group(4))
        if version:
            yield canonicalize_name(match.group(1)), ">=", version
    for match in _LESS.finditer(compact):
        version = _underscored(match.group(2), match.group(3), match.group(4))
        yield canonicalize_name(match.group(1)), "<", version
    # reversed comparisons: "2.3" <= torch.__version__
    for match in re.finditer(rf"{_VERSION}\s*{_OPS}\s*(?:[\w.]*\()?(\w+)\.__version__", compact):
        flipped = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
        yield canonicalize_name(match.group(3)), flipped[match.group(2)], match.group(1)


# Release numbers, specifiers and Poetry constraints as the rules read requirements.

_VERSION_RE = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")


def parse_version(text: str) -> tuple[int, ...] | None:
    """The release numbers a version-like text starts with (``2.3.1+cu121`` → ``(2, 3, 1)``,
    ``v2.3rc1`` → ``(2, 3)``), else None; tolerant of what follows, unlike ``packaging``."""
    match = _VERSION_RE.match(text)
    if match is None:
        return None
    return tuple(int(part) for part in match.group(1).split("."))


_LOCAL_LABEL = re.compile(r"\+[A-Za-z0-9.]+")


def spec_admits(spec: str, version: str) -> bool | None:
    """Whether a PEP 440 specifier admits the release of ``version``; None when the specifier
    is not understood (a ``$VARIABLE``, a Poetry constraint). Local labels (``+cu121``) and
    pre-release markers of ``version`` are ignored, as are local labels in the specifier."""
    spec = spec.strip().strip("()").strip()
    release = parse_version(version)
    if release is None:
        return None
    if not spec:
        return True
    if "$" in spec or "{" in spec:
        return None
    specifiers = _specifier_set(spec)
    if specifiers is None:
        return None
    return specifiers.contains(_release_version(release), prereleases=True)


@functools.lru_cache(maxsize=4096)
def _specifier_set(spec: str) -> SpecifierSet | None:
    try:
        return SpecifierSet(_LOCAL_LABEL.sub("", spec))
    except InvalidSpecifier:
        return None


@functools.lru_cache(maxsize=4096)
def _release_version(release: tuple[int, ...]) -> Version:
    return Version(".".join(map(str, release)))


def poetry_to_pep440(spec: str) -> str:
    """Poetry's ``^1.2``, ``~1.2``, bare ``1.2.3`` and ``*`` as a PEP 440 specifier."""
    out = []
    for clause in spec.split(","):
        clause = clause.strip()
        if not clause or clause == "*":
            continue
        if clause[0] in "^~" and not clause.startswith("~="):
            release = parse_version(clause[1:])
            if release is None:
                return clause
            if clause[0] == "^":
                index = next((i for i, part in enumerate(release) if part != 0), len(release) - 1)
            else:
                index = min(1, len(release) - 1) if len(release) > 1 else 0
            upper = list(release[: index + 1])
            upper[-1] += 1
            out.append(f">={'.'.join(map(str, release))},<{'.'.join(map(str, upper))}")
        elif clause[0].isdigit():
            out.append(f"=={clause}")
        else:
            out.append(clause)
    return ",".join(out)
