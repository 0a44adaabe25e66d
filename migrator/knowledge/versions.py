"""The one version model (PEP 440 through ``packaging``) for the engine and the rules: version
ranges, specifiers, tolerant release numbers, Poetry constraints, and what a project declares
about the versions it supports, read once per root, so that a fix never emits an API newer than
the project's declared floor."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
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


@dataclass(frozen=True, slots=True)
class ProjectFacts:
    """Declared version ranges per canonical package name, and the configured line length."""

    ranges: Mapping[str, VersionRange] = field(default_factory=dict)
    line_length: int | None = None
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
    #: (path from the root, reason) of each file declaring versions that was too large to
    #: read: the scan lists them as unread. Not part of the repr, which keys the cache.
    unread: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)

    def range(self, package: str) -> VersionRange:
        return self.ranges.get(canonicalize_name(package), VersionRange())

    def unmet(
        self, requires: Mapping[str, str], branch: Mapping[str, VersionRange] | None = None
    ) -> str | None:
        """Why a fix emitting APIs that need ``requires`` (package → minimum) cannot be offered,
        or None when the declared range (narrowed by ``branch``) starts at or above each minimum."""
        for package, minimum in requires.items():
            declared = self.range(package)
            if branch and canonicalize_name(package) in branch:
                narrowed = branch[canonicalize_name(package)]
                if declared.intersect(narrowed).is_empty():
                    return (
                        f"needs {package}>={minimum}; this code runs only on "
                        f"{narrowed.describe(package)}, which the project does not support "
                        f"({declared.describe(package)})"
                    )
                declared = declared.intersect(narrowed)
            if declared.high is not None and declared.high <= Version(minimum):
                return f"needs {package}>={minimum}; this code runs on {declared.describe(package)}"
            if declared.low is not None and declared.low < Version(minimum):
                return (
                    f"needs {package}>={minimum}; the project supports {declared.describe(package)}"
                )
        return None


#: The facts of the project being scanned or fixed (set by the runner for each run; rules read it
#: through ``migrator.api.knowledge.project_facts``). None outside a run.
current_facts: ContextVar[ProjectFacts | None] = ContextVar("current_facts", default=None)


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


def _merge(ranges: dict[str, VersionRange], items: Iterable[tuple[str, VersionRange]]) -> None:
    for name, found in items:
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


def _requirement_lines(read: _Reader) -> Iterator[tuple[str, VersionRange]]:
    seen: set[Path] = set()
    for pattern in _REQUIREMENT_GLOBS:
        for path in sorted(read.root.glob(pattern)):
            if path in seen or not path.is_file():
                continue
            seen.add(path)
            for line in read.lines(path):
                parsed = parse_requirement(line)
                if parsed:
                    yield parsed


def _pyproject(read: _Reader) -> tuple[list[tuple[str, VersionRange]], int | None]:
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
    found = [parsed for s in strings if (parsed := parse_requirement(s))]
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


def _setup_files(read: _Reader) -> Iterator[tuple[str, VersionRange]]:
    setup_py = read.root / "setup.py"
    if setup_py.is_file():
        try:
            tree = ast.parse(read.text(setup_py) or "")
        except (SyntaxError, ValueError):
            tree = None
        if tree is not None:
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    if _REQUIREMENT_STRING.fullmatch(repr(node.value)):
                        parsed = parse_requirement(node.value)
                        if parsed:
                            yield parsed
    for line in read.lines(read.root / "setup.cfg"):
        parsed = parse_requirement(line.strip())
        if parsed:
            yield parsed


def _conda(read: _Reader) -> Iterator[tuple[str, VersionRange]]:
    for name in _CONDA_FILES:
        for line in read.lines(read.root / name):
            entry = line.strip().lstrip("-").strip()
            entry = re.sub(r"^(\w[\w.\-]*)=(\d)", r"\1==\2", entry)  # conda's `torch=2.1`
            parsed = parse_requirement(entry)
            if parsed:
                yield parsed


def project_facts(root: Path) -> ProjectFacts:
    """Read the declared ranges and line length of the project at ``root`` (a folder); the
    files declaring them that were too large to read are in ``unread``."""
    if not root.is_dir():
        return ProjectFacts()
    ranges: dict[str, VersionRange] = {}
    read = _Reader(root)
    from_pyproject, line_length = _pyproject(read)
    for source in (from_pyproject, _setup_files(read), _requirement_lines(read), _conda(read)):
        _merge(ranges, source)
    torch = ranges.get("torch", VersionRange())
    if torch.low is None:  # no declared floor: the one the README states, if any
        from migrator.knowledge.readme_versions import stated_torch_floor

        floor = stated_torch_floor(root)
        if floor is not None:
            ranges["torch"] = torch.intersect(VersionRange(floor, None))
    return ProjectFacts(ranges, line_length, unread=tuple(read.unread))


def branch_range(test_source: str, negate: bool) -> dict[str, VersionRange]:
    """The range of the packages a version test constrains (``torch.__version__ < "2.3"``,
    ``is_torch_version(">=", "2.3")``, ``version.parse(torch.__version__) >= version.parse("2.3")``,
    ``is_torch_greater_or_equal("2.3")``), inside its body (or its ``else`` when ``negate``)."""
    found: dict[str, VersionRange] = {}
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
_GREATER = re.compile(rf"is_(\w+?)_greater_or_equal(?:_than)?(?:_(\d+)_(\d+))?\(\s*(?:{_VERSION})?")


def _version_tests(source: str) -> Iterator[tuple[str, str, str]]:
    compact = re.sub(r"\s+", " ", source)
    for pattern in _PATTERNS:
        for match in pattern.finditer(compact):
            yield canonicalize_name(match.group(1)), match.group(2), match.group(3)
    for match in _GREATER.finditer(compact):
        version = match.group(4) or (
            f"{match.group(2)}.{match.group(3)}" if match.group(2) else None
        )
        if version:
            yield canonicalize_name(match.group(1)), ">=", version
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
