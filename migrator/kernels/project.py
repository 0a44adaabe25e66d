"""A project's extensions as the readiness report and ``migrate kernels`` see them: each
extension's sources (with the project headers they include), whether its build has a ROCm
branch, and its Python import sites."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from migrator.files.sources import read_project_text
from migrator.kernels.buildmodel import (
    CMAKE,
    CUDA_REQUIRED,
    GATE,
    JIT,
    LINK,
    SETUP,
    UNREAD,
    BuildNote,
)
from migrator.kernels.builds import (
    KERNEL_SUFFIXES,
    BuildModel,
    Extension,
    include_graph,
    read_builds,
)
from migrator.kernels.generated_includes import missing_includes
from migrator.kernels.importers import (
    GUARDED,
    LAZY,
    MODULE_LEVEL,
    ImportSite,
    import_sites,
    module_importers,
)

_MAX_PY_BYTES = 2 * 1024 * 1024


@dataclass(slots=True)
class ExtensionView:
    """One extension: its declaration, the kernel files it compiles (sources and the project
    headers they include), its ROCm branch and its import sites."""

    extension: Extension
    files: list[str] = field(default_factory=list)
    rocm_branch: bool = False
    imports: list[ImportSite] = field(default_factory=list)
    #: what the build does that a ROCm build must change, or that the reading could not see
    notes: list[BuildNote] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.extension.name

    @property
    def imported_at_module_level(self) -> list[ImportSite]:
        return [site for site in self.imports if site.how == MODULE_LEVEL]


def _reader(root: Path) -> Callable[[str], str | None]:
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
    model: BuildModel = read_builds(root, paths, python_texts)
    kernel_files = [p for p in paths if p.lower().endswith(KERNEL_SUFFIXES)]
    if not model.extensions or not kernel_files:
        return []
    includes = include_graph(root, kernel_files, kernel_texts)
    included: dict[str, set[str]] = {}
    for header, includers in includes.items():
        for includer in includers:
            included.setdefault(includer, set()).add(header)
    read = _reader(root)
    python_paths = [p for p in paths if p.endswith(".py")]
    known = frozenset(paths)
    declared: list[Extension] = []
    for extension in model.extensions:
        extension.sources = sorted(
            {f for f in kernel_files for p in extension.patterns if p.matches(f)}
        )
        declared.append(extension)
    chosen = _one_per_module(declared)
    by_name = {e.name: e for e in chosen if e.kind == CMAKE}
    views: list[ExtensionView] = []
    for extension in chosen:
        if not extension.sources:
            continue
        files = set(extension.sources)
        # a CMake library linked into a module target: its sources are the module's too
        for linked in extension.links:
            other = by_name.get(linked)
            if other is not None:
                files.update(other.sources)
        frontier = list(files)
        while frontier:
            current = frontier.pop()
            for header in included.get(current, ()):
                if header not in files:
                    files.add(header)
                    frontier.append(header)
        notes = [n for n in model.notes if _note_of(n, extension)]
        # kernel files the sources include that the project does not hold (generated ones)
        notes += missing_includes(files, known, read, python_paths, extension.name)
        views.append(
            ExtensionView(
                extension,
                sorted(files),
                extension.build in model.rocm_branch,
                _imports(extension, model, python_texts, read, python_paths),
                notes,
            )
        )
    # a CMake library that module targets link is imported where they are
    for view in views:
        if view.extension.kind == CMAKE and not view.extension.python_module and not view.imports:
            for linker in views:
                if view.name in linker.extension.links:
                    view.imports.extend(linker.imports)
    return views


def _one_per_module(extensions: Sequence[Extension]) -> list[Extension]:
    """One record per compiled module: a JIT ``load`` and a ``setup.py`` beside it that build
    the same sources, or a ``setup.py`` extension that CMake builds (``cmake_extension('_m')``
    with the target ``_m``), are one module declared twice; the other declarations are kept in
    ``also``."""
    out: list[Extension] = []
    for extension in extensions:
        twin = next(
            (
                known
                for known in out
                if (
                    extension.sources
                    and set(extension.sources) == set(known.sources)
                    and {extension.kind, known.kind} == {JIT, SETUP}
                    and _near(extension.build, known.build)
                )
                or (
                    known.name == extension.name
                    and CMAKE in (known.kind, extension.kind)
                    and (not known.sources or not extension.sources)
                )
            ),
            None,
        )
        if twin is None:
            out.append(extension)
            continue
        keep, drop = (twin, extension)
        if not twin.sources and extension.sources:
            keep, drop = extension, twin
            out[out.index(twin)] = keep
        keep.also.append(f"{drop.build}:{drop.line} (`{drop.name}`)")
        keep.also_builds.append(drop.build)
        keep.also_kinds.append(drop.kind)
        keep.also_names.append(drop.name)
    return out


def _near(one: str, other: str) -> bool:
    """Whether two build files sit in one folder tree (one's folder holds the other)."""
    first = one.rsplit("/", 1)[0] if "/" in one else ""
    second = other.rsplit("/", 1)[0] if "/" in other else ""
    return (
        not first
        or not second
        or first == second
        or second.startswith(f"{first}/")
        or first.startswith(f"{second}/")
    )


def _imports(
    extension: Extension,
    model: BuildModel,
    python_texts: Mapping[str, str] | None,
    read: Callable[[str], str | None],
    python_paths: list[str],
) -> list[ImportSite]:
    """Where the Python side loads the module: imports of its name (a setuptools or CMake
    Python module), imports of the module that builds it at run time (a JIT ``load``)."""
    sites: list[ImportSite] = []
    # a JIT build hands its module to the code that calls ``load``: where that module is
    # imported; a setuptools or CMake Python module is imported by its name
    declarations = [
        (extension.kind, extension.build, extension.name),
        *zip(extension.also_kinds, extension.also_builds, extension.also_names, strict=False),
    ]
    loaders = {build for kind, build, _ in declarations if kind == JIT and build.endswith(".py")}
    names = {
        name
        for kind, _, name in declarations
        if kind == SETUP or (kind == CMAKE and extension.python_module)
    }
    for build in sorted(loaders):
        sites.extend(module_importers(build, python_texts, read, python_paths))
    for name in sorted(names - {"", "?"}):
        sites.extend(import_sites(name, python_texts, read, python_paths))
    unique: dict[tuple[str, int], ImportSite] = {}
    for site in sites:
        unique.setdefault((site.path, site.line), site)
    return sorted(unique.values(), key=lambda site: (site.path, site.line))


def _note_of(note: BuildNote, extension: Extension) -> bool:
    """Whether a build note is about this extension (its own, or its build file's)."""
    if note.extension:
        return note.extension == extension.name and note.path == extension.build
    return note.path == extension.build or (
        extension.kind == CMAKE and note.path.endswith((".txt", ".cmake"))
    )


def kernel_file_roles(
    views: Sequence[ExtensionView],
    roles: Mapping[str, str],
    core: str,
    lazy: str,
    unreachable: str,
    public: str | None = None,
) -> dict[str, str]:
    """The readiness role of each kernel file an extension compiles: ``core`` when a module
    every run loads imports the extension at module level (a blocker there blocks the
    project), ``public`` when a public module of the project's own package does (importing that
    module builds on the extension: it is on the package's path), ``lazy`` when it is imported
    behind a guard, inside a function, by a module loaded later, or by nothing the import graph
    sees (loaded through ``ctypes`` or ``torch.ops``); the best role over the extensions
    compiling a file wins."""
    ranked = [core, *([public] if public else []), lazy, unreachable]
    order = {role: rank for rank, role in enumerate(ranked)}
    out: dict[str, str] = {}
    for view in views:
        role = lazy
        for site in view.imports:
            importer_role = roles.get(site.path)
            if site.how != MODULE_LEVEL or importer_role is None:
                continue
            if importer_role == core or (importer_role == public and order[role] > order[public]):
                role = importer_role
            if role == core:
                break
        for relative in view.files:
            if relative not in out or order[role] < order[out[relative]]:
                out[relative] = role
    return out


def extension_label(built: bool, blocked: bool, edits: bool, notes: Sequence[str]) -> str:
    """The one-phrase state of an extension, from whether any ROCm build builds it, its kernel
    findings and the kinds of the notes on its build."""
    if not built:
        return "not built on ROCm"
    if blocked:
        return "blocked"
    if GATE in notes or CUDA_REQUIRED in notes:
        return "GPU code built only with CUDA"
    if edits or LINK in notes:
        return "needs small edits"
    if UNREAD in notes:
        return "build not fully read"
    return "ports mechanically"


#: Labels that say an extension needs work before it runs on ROCm.
FAILING_LABELS = frozenset(
    {"blocked", "needs small edits", "GPU code built only with CUDA", "build not fully read"}
)


#: The kernel rules and the class of construct each reports (the kernel-site classes of tests/eval/kernels/README.md).
KERNEL_RULES = {
    "ROC303": "warp32-mask",
    "ROC304": "warp-size-constant",
    "ROC310": "inline-ptx",
    "ROC311": "mma",
    "ROC312": "ampere-only",
    "ROC313": "hopper-only",
    "ROC315": "hopper-only",
    "ROC320": "mma",
    "ROC330": "cutlass-cute",
    "ROC331": "cutlass-cute",
    "ROC340": "cuda-only-header",
    "ROC350": "smem-limit",
    "ROC360": "compiles-out",
    "ROC370": "unmapped-name",
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
    #: the kinds of the build notes on it (``migrator.kernels.buildmodel``)
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return extension_label(
            self.built_on_rocm, bool(self.blockers), bool(self.edits), self.notes
        )

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
            "build_notes": list(self.notes),
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
                [note.kind for note in view.notes],
            )
        )
    return rows


__all__ = [
    "FAILING_LABELS",
    "ExtensionRow",
    "ExtensionView",
    "KERNEL_RULES",
    "extension_label",
    "extension_rows",
    "extension_views",
    "kernel_file_roles",
    "GUARDED",
    "LAZY",
    "MODULE_LEVEL",
]
