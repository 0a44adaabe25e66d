"""Paths of scanned files: what a path is by its name (a test, a benchmark), explicit file
arguments grouped under their project root, and findings re-expressed relative to the current
directory or to the repository root."""

from __future__ import annotations

import fnmatch
import functools
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from migrator.files.config import ConfigChoice, find_pyproject
from migrator.files.gitignore import GitIgnore
from migrator.model import FileResult, ImportedPackage, ScanResult

#: Folder names that hold a test suite.
TEST_FOLDERS = frozenset(
    {"tests", "test", "testing", "unit_tests", "integration_tests", "unittests"}
)
#: Folder names that hold benchmarks.
BENCHMARK_FOLDERS = frozenset({"benchmarks", "benchmark", "benchmarking", "bench", "perf"})


#: Folders named for copies of other projects' code (a submodule of CUTLASS, googletest under
#: ``dependencies/``): the library's own code is not the project's to port, only the uses of it.
VENDORED_FOLDERS = frozenset(
    {
        "third_party",
        "thirdparty",
        "3rdparty",
        "third-party",
        "vendor",
        "vendored",
        "external",
        "externals",
        "extern",
        "deps",
        "dependencies",
        "submodules",
    }
)
#: Files that say a folder is a project of its own: its licence, and a C/C++ build of its own.
_LICENCE = ("license", "licence", "copying")
_NATIVE_BUILD = frozenset(
    {"cmakelists.txt", "makefile", "configure", "meson.build", "build.bazel", "workspace"}
)


def vendored(relative: str, submodules: frozenset[str] = frozenset()) -> bool:
    """Whether the file or folder at ``relative`` lies in vendored code: under a folder named
    for it, or in one of the project's git submodules (``submodules``: their paths)."""
    parts = relative.split("/")
    if VENDORED_FOLDERS.intersection(part.lower() for part in parts[:-1]):
        return True
    return any(relative == sub or relative.startswith(f"{sub}/") for sub in submodules)


def vendored_folder(relative: str, names: Iterable[str], submodules: frozenset[str]) -> bool:
    """Whether the folder at ``relative`` (below the root) holding the entries ``names`` is
    another project's code by what it is: a folder named for vendored code, a git submodule
    (listed in ``.gitmodules`` or checked out with its own ``.git``), or a project of its own
    (its licence beside a C/C++ build of its own)."""
    if not relative:
        return False
    if relative.rsplit("/", 1)[-1].lower() in VENDORED_FOLDERS or relative in submodules:
        return True
    lowered = {name.lower() for name in names}
    if ".git" in lowered:
        return True
    licensed = any(name.startswith(_LICENCE) for name in lowered)
    return licensed and bool(lowered & _NATIVE_BUILD) and "__init__.py" not in lowered


def submodule_paths(root: Path) -> frozenset[str]:
    """The folders ``.gitmodules`` at ``root`` names as submodules (``path = ...``)."""
    from migrator.files.sources import read_project_text

    text = read_project_text(root / ".gitmodules", limit=256 * 1024)
    if not text:
        return frozenset()
    out = set()
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "path" and value.strip():
            path = value.strip().strip("/").replace("\\", "/")
            if ".." not in path.split("/"):
                out.add(path)
    return frozenset(out)


def is_test_folder(name: str) -> bool:
    """Whether a folder of this name holds a test suite (``tests``, ``unit_tests`` …)."""
    return name.lower() in TEST_FOLDERS


def is_test_file(name: str) -> bool:
    """Whether a file of this name is a test module (``test_*.py``, ``*_test.py``, ``conftest.py``,
    the pytest and unittest discovery conventions)."""
    lowered = name.lower()
    return lowered.startswith("test_") or lowered.endswith("_test.py") or lowered == "conftest.py"


def is_test_path(path: str) -> bool:
    """Whether a project-relative path is part of the project's test suite: code that exercises
    the project rather than code the project ships (a test folder anywhere above it, or a test
    module's name)."""
    parts = path.replace("\\", "/").split("/")
    return any(is_test_folder(part) for part in parts[:-1]) or is_test_file(parts[-1])


def is_benchmark_folder(name: str) -> bool:
    """Whether a folder of this name holds benchmarks."""
    return name.lower() in BENCHMARK_FOLDERS


def is_benchmark_file(name: str) -> bool:
    """Whether a file of this name is a benchmark script (``bench*``, ``benchmark_*``)."""
    return name.lower().startswith("bench")


def is_benchmark_path(path: str) -> bool:
    """Whether a project-relative path is a benchmark (a benchmark folder above it, or its name)."""
    parts = path.replace("\\", "/").split("/")
    return any(is_benchmark_folder(part) for part in parts[:-1]) or is_benchmark_file(parts[-1])


@dataclass(frozen=True)
class Target:
    """One scan to run: a root, and the explicit files under it (``None``: the whole root)."""

    root: Path
    files: tuple[Path, ...] | None = None
    #: A folder below ``root`` to scan instead of all of it (findings are shown from it).
    within: Path | None = None


def targets(paths: list[Path], choice: ConfigChoice | None = None) -> list[Target]:
    """Directories scan whole (from their project root when they lie below it, so its config
    sees project-relative paths); files group under their nearest ``[tool.migrate]`` project root
    (else the current directory when they lie under it, else their own folder), so the project's
    ``exclude`` and ``per-file-ignores`` see the same relative paths as a scan of that root.
    ``choice``: the configuration the command line chose (none: each project's own)."""
    out: list[Target] = []
    grouped: dict[Path, list[Path]] = {}
    cwd = Path.cwd().resolve()
    for path in paths:
        if path.is_dir():
            config = find_pyproject(path, choice)
            folder = path.resolve()
            if config is not None and config.parent.resolve() != folder:
                out.append(Target(config.parent.resolve(), within=path))
            else:
                out.append(Target(path))
            continue
        absolute = path.resolve()
        config = find_pyproject(absolute, choice)
        if config is not None:
            root = config.parent
        elif absolute.is_relative_to(cwd):
            root = cwd
        else:
            root = absolute.parent
        grouped.setdefault(root, []).append(absolute)
    out.extend(Target(root, tuple(files)) for root, files in grouped.items())
    return out


def repository_root(start: Path) -> Path:
    """The enclosing git work tree of ``start``, else ``start`` itself (its folder for a file)."""
    here = start.resolve()
    if here.is_file():
        here = here.parent
    for candidate in [here, *here.parents]:
        if (candidate / ".git").exists():
            return candidate
    return here


def result_base(root: str | Path) -> Path:
    """The folder a result's paths are relative to: its root, resolved (a file root's folder)."""
    base = Path(root).resolve()
    return base.parent if base.is_file() else base


def shown_path(base: Path, relative: str, cwd: Path) -> str:
    """The file ``relative`` under the folder ``base`` as a terminal or an editor opened in
    ``cwd`` finds it, as ruff prints it: relative to ``cwd`` (with ``/``) when the file lies
    under it, else absolute (a ``../`` path would change meaning with every folder)."""
    absolute = Path(os.path.normpath(base / relative))
    if absolute.is_relative_to(cwd):
        return absolute.relative_to(cwd).as_posix()
    return absolute.as_posix()


def to_cwd(
    results: list[ScanResult], cwd: Path | None = None, names: Mapping[Path, str] | None = None
) -> list[ScanResult]:
    """Every result merged into one whose paths are as the user's shell sees them from ``cwd``
    (``shown_path``), for the outputs people and their editors open; ``names`` maps a file (an
    absolute, resolved path) to the name to print instead, as the user gave it
    (``--stdin-filename``). Findings carry root-relative paths inside migrate: this is the one
    conversion at the output's edge."""
    here = (cwd or Path.cwd()).resolve()
    given = names or {}
    files: list[FileResult] = []
    packages: list[ImportedPackage] = []
    for result in results:
        base = result_base(result.root)

        def show(relative: str, base: Path = base) -> str:
            """The printed path of a file of this result: its given name, else from ``here``."""
            return given.get(Path(os.path.normpath(base / relative))) or shown_path(
                base, relative, here
            )

        for file in result.files:
            findings = tuple(
                replace(
                    finding,
                    path=show(finding.path),
                    related=tuple(replace(site, path=show(site.path)) for site in finding.related),
                )
                for finding in file.findings
            )
            files.append(replace(file, path=show(file.path), findings=findings))
        packages.extend(
            replace(package, sites=tuple((show(path), line) for path, line in package.sites))
            for package in result.packages
        )
    return [ScanResult(str(here), files, packages, _environments(results))]


def to_repositories(results: list[ScanResult]) -> list[tuple[Path, ScanResult]]:
    """Each result re-expressed from its repository's root, merged per repository."""
    groups: dict[Path, list[ScanResult]] = {}
    for result in results:
        groups.setdefault(repository_root(Path(result.root)), []).append(result)
    return [(root, rebase(group, root)[0]) for root, group in groups.items()]


def rebase(results: list[ScanResult], base: Path) -> list[ScanResult]:
    """One result whose paths are relative to ``base`` (with ``/``), merged from every root."""
    base = base.resolve()
    files: list[FileResult] = []
    packages: list[ImportedPackage] = []
    for result in results:
        root = result_base(result.root)
        for file in result.files:
            path = _relative(root / file.path, base)
            findings = tuple(
                replace(
                    finding,
                    path=path,
                    related=tuple(
                        replace(site, path=_relative(root / site.path, base))
                        for site in finding.related
                    ),
                )
                for finding in file.findings
            )
            files.append(replace(file, path=path, findings=findings))
        packages.extend(
            replace(
                package,
                sites=tuple((_relative(root / site, base), line) for site, line in package.sites),
            )
            for package in result.packages
        )
    return [ScanResult(str(base), files, packages, _environments(results))]


def _environments(results: list[ScanResult]) -> str:
    """The environments the merged results' packages were read from, once each."""
    return "; ".join(dict.fromkeys(result.environment for result in results if result.environment))


def _relative(path: Path, base: Path) -> str:
    return Path(os.path.relpath(path, base)).as_posix()


@functools.lru_cache(maxsize=512)
def _glob_spec(pattern: str) -> GitIgnore:
    return GitIgnore.from_lines([pattern])


def rebase_glob(pattern: str, prefix: str) -> str | None:
    """``pattern``, written relative to a folder, rewritten for paths relative to its sub-folder
    ``prefix`` (``a/b``): what covers ``prefix/x`` covers ``x`` after. A pattern without ``/``
    (or one starting with ``**``) matches at any depth and is kept; an anchored one loses the
    leading segments that match ``prefix`` and stays anchored; None when it can cover nothing
    under ``prefix``."""
    if not prefix:
        return pattern
    negated = pattern.startswith("!")
    body = pattern[1:] if negated else pattern
    core = body.rstrip("/")
    if "/" not in core or core.startswith("**"):
        return pattern
    segments = core.lstrip("/").split("/")
    for part in prefix.split("/"):
        if not segments:  # it names a folder the sub-folder is in: it covers all of it
            break
        head = segments[0]
        if head == "**":
            break
        if not fnmatch.fnmatchcase(part, head):
            return None
        segments.pop(0)
    if not segments:  # the pattern names the sub-folder itself (or a folder above it): all of it
        rest = "**"
    else:
        rest = "/".join(segments)
    trailing = "/" if body.endswith("/") and segments else ""
    return ("!" if negated else "") + "/" + rest + trailing


def glob_matches(relative: str, pattern: str) -> bool:
    """Whether an ``exclude`` / ``per-file-ignores`` glob covers ``relative`` (``/``-separated,
    from the scanned root), as gitignore and ruff read globs: ``*`` never crosses ``/``
    (``a/*.py`` leaves ``a/b/x.py`` alone), ``**`` does, a pattern without ``/`` matches a name
    at any depth, a folder's pattern covers what is inside it."""
    return _glob_spec(pattern).match_file(relative)
