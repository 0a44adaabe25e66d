"""A project's extensions as the readiness report and ``migrate kernels`` see them: each
extension's sources (with the project headers they include), whether its build has a ROCm
branch, and its Python import sites."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from migrator.files.sources import read_project_text
from migrator.kernels.builds import (
    KERNEL_SUFFIXES,
    BuildModel,
    Extension,
    include_graph,
    read_builds,
)
from migrator.kernels.importers import GUARDED, LAZY, MODULE_LEVEL, ImportSite, import_sites

_MAX_PY_BYTES = 2 * 1024 * 1024


@dataclass(slots=True)
class ExtensionView:
    """One extension: its declaration, the kernel files it compiles (sources and the project
    headers they include), its ROCm branch and its import sites."""

    extension: Extension
    files: list[str] = field(default_factory=list)
    rocm_branch: bool = False
    imports: list[ImportSite] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.extension.name

    @property
    def imported_at_module_level(self) -> list[ImportSite]:
        return [site for site in self.imports if site.how == MODULE_LEVEL]


def _reader(root: Path) -> object:
    def read(relative: str) -> str | None:
        path = root / relative
        if path.is_symlink():
            return None
        return read_project_text(path, limit=_MAX_PY_BYTES)

    return read


#: The last project's views: the readiness layout and the report's extension table both ask
#: for them, and reading the builds and the include graph twice would repeat their I/O.
_LAST_VIEWS: list[tuple[tuple[str, tuple[str, ...], int], list[ExtensionView]]] = []


def _state(root: Path, paths: Sequence[str]) -> int:
    """A digest of the size and modification time of every file the views read (the build
    files, the kernel sources, the Python importers): a long-lived process (the language
    server) sees an edit."""
    out = []
    for relative in paths:
        try:
            info = (root / relative).stat()
        except OSError:
            continue
        out.append((relative, info.st_size, info.st_mtime_ns))
    return hash(tuple(out))


def extension_views(
    root: Path,
    paths: Sequence[str],
    python_texts: Mapping[str, str] | None = None,
    kernel_texts: Mapping[str, bytes] | None = None,
) -> list[ExtensionView]:
    """Every extension of the project with a source that exists, with its files and imports
    (computed once for the same root and files; ``python_texts`` and ``kernel_texts`` only save
    reads)."""
    key = (str(root.resolve()), tuple(sorted(paths)), _state(root, paths))
    if _LAST_VIEWS and _LAST_VIEWS[0][0] == key:
        return _LAST_VIEWS[0][1]
    views = _extension_views(root, paths, python_texts, kernel_texts)
    _LAST_VIEWS[:] = [(key, views)]
    return views


def _extension_views(
    root: Path,
    paths: Sequence[str],
    python_texts: Mapping[str, str] | None,
    kernel_texts: Mapping[str, bytes] | None,
) -> list[ExtensionView]:
    model: BuildModel = read_builds(root, paths)
    kernel_files = [p for p in paths if p.lower().endswith(KERNEL_SUFFIXES)]
    if not model.extensions or not kernel_files:
        return []
    includes = include_graph(root, kernel_files, kernel_texts)
    included: dict[str, set[str]] = {}
    for header, includers in includes.items():
        for includer in includers:
            included.setdefault(includer, set()).add(header)
    read = _reader(root)
    views: list[ExtensionView] = []
    python_paths = [p for p in paths if p.endswith(".py")]
    for extension in model.extensions:
        sources = sorted({f for f in kernel_files for p in extension.patterns if p.matches(f)})
        if not sources:
            continue
        files = set(sources)
        frontier = list(sources)
        while frontier:
            current = frontier.pop()
            for header in included.get(current, ()):
                if header not in files:
                    files.add(header)
                    frontier.append(header)
        extension.sources = sources
        views.append(
            ExtensionView(
                extension,
                sorted(files),
                extension.build in model.rocm_branch,
                # a CMake target is a library loaded by file name (ctypes), not an import
                []
                if extension.build.endswith("CMakeLists.txt")
                else import_sites(extension.name, python_texts, read, python_paths),  # type: ignore[arg-type]
            )
        )
    return views


def kernel_file_roles(
    views: Sequence[ExtensionView], roles: Mapping[str, str], core: str, lazy: str, unreachable: str
) -> dict[str, str]:
    """The readiness role of each kernel file an extension compiles: ``core`` when a module
    every run loads imports the extension at module level (a blocker there blocks the
    project), ``lazy`` when it is imported behind a guard, inside a function, by a module
    loaded later, or by nothing the import graph sees (loaded through ``ctypes`` or
    ``torch.ops``); the best role over the extensions compiling a file wins."""
    order = {core: 0, lazy: 1, unreachable: 2}
    out: dict[str, str] = {}
    for view in views:
        role = lazy
        for site in view.imports:
            importer_role = roles.get(site.path)
            if site.how == MODULE_LEVEL and importer_role == core:
                role = core
                break
        for relative in view.files:
            if order[role] < order.get(out.get(relative, unreachable), 2) or relative not in out:
                out[relative] = (
                    role
                    if relative not in out or order[role] < order[out[relative]]
                    else out[relative]
                )
    return out


#: The kernel rules and the class of construct each reports (the kernel-site classes of tests/eval/kernels/README.md).
KERNEL_RULES = {
    "ROC303": "warp32-mask",
    "ROC304": "warp-size-constant",
    "ROC310": "inline-ptx",
    "ROC311": "mma",
    "ROC312": "ampere-only",
    "ROC313": "hopper-only",
    "ROC320": "mma",
    "ROC330": "cutlass-cute",
    "ROC340": "cuda-only-header",
    "ROC350": "smem-limit",
    "ROC360": "compiles-out",
    "ROC361": "compiles-to-nothing",
}


@dataclass(slots=True)
class ExtensionRow:
    """One extension as the readiness report shows it."""

    name: str
    build: str
    files: int
    rocm_branch: bool
    built_on_rocm: bool
    imports: list[str]
    blockers: dict[str, int]
    edits: dict[str, int]

    @property
    def label(self) -> str:
        if not self.built_on_rocm:
            return "not built on ROCm"
        if self.blockers:
            return "blocked"
        return "needs small edits" if self.edits else "ports mechanically"

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "build": self.build,
            "label": self.label,
            "files": self.files,
            "rocm_branch": self.rocm_branch,
            "imports": list(self.imports),
            "blockers": dict(self.blockers),
            "edits": dict(self.edits),
        }


def extension_rows(
    root: Path, paths: Sequence[str], findings: Sequence[object], is_port: Callable[[str], bool]
) -> list[ExtensionRow]:
    """Each extension with its kernel findings by class (ports, by ``is_port`` of the rule
    code, apart from edits) and its Python import sites, for the report. Guarded findings (code
    hipcc never compiles) are left out, as the scan leaves them out."""
    rows: list[ExtensionRow] = []
    for view in extension_views(root, paths):
        files = set(view.files)
        blockers: dict[str, int] = {}
        edits: dict[str, int] = {}
        seen: set[tuple[str, str]] = set()
        for finding in findings:
            if getattr(finding, "guard", ""):
                continue
            # a finding's own site, and the kernel sites folded into it (``Related.rule``)
            own = (str(getattr(finding, "rule", "")), str(getattr(finding, "path", "")))
            folded = [
                (str(getattr(site, "rule", "")), str(getattr(site, "path", "")))
                for site in getattr(finding, "related", ())
                if getattr(site, "rule", "")
            ]
            for code, path in (own, *folded):
                if code not in KERNEL_RULES or path not in files or (code, path) in seen:
                    continue
                seen.add((code, path))
                bucket = blockers if is_port(code) else edits
                bucket[KERNEL_RULES[code]] = bucket.get(KERNEL_RULES[code], 0) + 1
        rows.append(
            ExtensionRow(
                view.name,
                f"{view.extension.build}:{view.extension.line}",
                len(view.files),
                view.rocm_branch,
                view.extension.context != "cuda",
                [f"{site.path}:{site.line} ({site.how})" for site in view.imports[:8]],
                blockers,
                edits,
            )
        )
    return rows


__all__ = [
    "ExtensionRow",
    "ExtensionView",
    "KERNEL_RULES",
    "extension_rows",
    "extension_views",
    "kernel_file_roles",
    "GUARDED",
    "LAZY",
    "MODULE_LEVEL",
]
