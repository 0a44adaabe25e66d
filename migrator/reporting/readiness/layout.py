"""A project's layout (every file's role, its entry points, AMD-path evidence), assembled by
``analyze`` so the readiness score can weigh a problem by where it is.

Code reachable from the project's entry points (console scripts, ``__main__`` modules, commands
its README documents, root scripts and the public modules of its packages) weighs fully;
container and CI files are a deployment path; tests, examples, benchmarks, docs, developer
tooling and modules that nothing imports weigh less and are shown apart. The pieces live beside
this module: roles by path (``roles``), entry points (``entry_points``), reachability
(``import_graph``), opt-in alternatives (``alternatives``), optional dependency tables
(``optional_tables``), kernel sources (``kernels``) and AMD evidence (``amd_evidence``).

Everything here reads files as text (a regex pass over import lines); nothing is imported or run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from migrator.reporting.readiness.alternatives import mapped_alternatives
from migrator.reporting.readiness.amd_evidence import (
    Evidence,
    amd_evidence,
    dispatch_in,
    vendor_pairs,
)
from migrator.reporting.readiness.entry_points import (
    console_targets,
    doc_files,
    documented_commands,
    is_deployed,
    is_public_package_module,
)
from migrator.reporting.readiness.import_graph import import_closure, module_names
from migrator.reporting.readiness.kernels import find_kernel_sources
from migrator.reporting.readiness.optin import NO_FACTS, FileFacts, file_facts
from migrator.reporting.readiness.optional_tables import optional_tables
from migrator.reporting.readiness.project_text import read_text
from migrator.reporting.readiness.roles import (
    CORE,
    DEPLOY,
    LAZY,
    OPT_IN,
    OPTIONAL,
    PERIPHERAL_ROLES,
    PUBLIC,
    SUBPROJECT,
    path_role,
    plugin_module,
    tier,
)

if TYPE_CHECKING:
    from migrator.kernels.project import ExtensionView

#: A call by name (``name(``, ``obj.name(``), not a definition.
_CALL = re.compile(r"(?<!def )(?<![\w])(?:\w+\.)*?(\w+)\s*\(")
_COMPUTE_IMPORT = re.compile(
    r"^[ \t]*(?:import|from)[ \t]+(?:torch|tensorflow|jax|cupy|numba|triton|paddle|mxnet|tinygrad)\b",
    re.MULTILINE,
)


@dataclass(slots=True)
class ProjectLayout:
    """File roles, entry points and AMD-path evidence of one project."""

    roles: dict[str, str] = field(default_factory=dict)
    entry_points: list[str] = field(default_factory=list)
    amd_path: list[Evidence] = field(default_factory=list)
    known: bool = True
    dispatch_files: frozenset[str] = frozenset()
    #: Line ranges (first, last) of optional dependency tables in build files
    #: (``[project.optional-dependencies]``, extras): a finding there is an optional extra.
    optional_lines: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    #: Whether reachable code imports a GPU compute framework (torch, jax, cupy, ...). A project
    #: that does not is a tool around the GPU (a monitor, a launcher), not a user of it.
    computes: bool = True
    #: The project's root, to read fallback and opt-in facts of files on demand (None: none).
    root: Path | None = None
    #: Facts read so far, by path (stored data gives them directly).
    known_facts: dict[str, FileFacts] = field(default_factory=dict, repr=False)
    #: Source of the modules the entry points and public modules reach (read once by the import
    #: analysis), and (built from it on first use) where each name is called.
    texts: dict[str, str] = field(default_factory=dict, repr=False)
    #: Why a module is opt-in, where the role alone does not say it (one alternative of a table).
    opt_in_modules: dict[str, str] = field(default_factory=dict)
    #: CUDA kernel sources (``.cu``, ``.cuh``) in core locations: GPU code the project builds
    #: itself, which runs on ROCm only through a HIP build of it.
    kernel_sources: tuple[str, ...] = ()
    call_index: dict[str, list[tuple[str, int]]] | None = field(default=None, repr=False)

    def callers(self, name: str) -> list[tuple[str, int]]:
        """(path, line) of every ``name(`` call in reachable code (core, lazy and public modules),
        from the text the import analysis already read: no file is read again."""
        if self.call_index is None:
            self.call_index = {}
            for relative, text in self.texts.items():
                if tier(self.role_of(relative)) != CORE:
                    continue
                line, seen = 1, 0
                for match in _CALL.finditer(text):
                    line += text.count("\n", seen, match.start())
                    seen = match.start()
                    self.call_index.setdefault(match.group(1), []).append((relative, line))
        return self.call_index.get(name, [])

    def facts(self, path: str) -> FileFacts:
        """Fallback and opt-in facts of one Python file (none without a root)."""
        if path in self.known_facts:
            return self.known_facts[path]
        if self.root is None or not path.endswith(".py"):
            return NO_FACTS
        if path not in self.known_facts:
            text = self.texts.get(path)
            if text is None:
                text = read_text(self.root / path)
            self.known_facts[path] = file_facts(text, path.rsplit("/", 1)[-1])
        return self.known_facts[path]

    def falls_back(self, path: str, line: int) -> bool:
        """Whether a line sits in a ``try`` body whose handler goes on without the failing part."""
        return self.facts(path).falls_back(line)

    def role_of(self, path: str) -> str:
        """The role of a file: ``core``, ``deploy`` or one of ``PERIPHERAL_ROLES``."""
        role = self.roles.get(path)
        if role is not None:
            return role
        return path_role(path) or CORE

    def role_at(self, path: str, line: int) -> str:
        """The role of one line of a file: an optional extra inside an optional dependency
        table of a core build file, else the file's role."""
        role = self.role_of(path)
        if role == CORE and any(
            first <= line <= last for first, last in self.optional_lines.get(path, ())
        ):
            return OPTIONAL
        return role

    def tier_of(self, path: str) -> str:
        """``core`` (reachable code, public modules), ``deploy`` or ``peripheral``."""
        return tier(self.role_of(path))


def kernel_roles(
    root: Path, paths: Sequence[str], roles: dict[str, str], texts: dict[str, str]
) -> None:
    """Roles of C/C++/CUDA sources, from the extensions that compile them: core where a module
    every run loads imports the extension at module level, lazy where it is imported behind a
    guard, inside a function, by a module loaded later, or not at all by name; a source in no
    extension (a build the static reading did not resolve) is lazy too: it needs work, but
    nothing shows that every run loads it. Outside core, a source in a plugin folder
    (``integrations/``, ``plugins/``...) is opt-in, as the plugin's Python modules are."""
    from migrator.kernels.builds import KERNEL_SUFFIXES
    from migrator.kernels.project import extension_views, kernel_file_roles

    kernel_files = [
        relative
        for relative in paths
        if relative.lower().endswith(KERNEL_SUFFIXES)
        and path_role(relative) in (None, CORE)
        and roles.get(relative) != OPT_IN
    ]
    if not kernel_files:
        return
    views = extension_views(root, paths, texts)
    by_file = kernel_file_roles(views, roles, CORE, LAZY, "unreachable", PUBLIC)
    # a project with no Python of its own beyond its build, tests and benchmarks (dietgpu: a
    # CMake library torch.ops.load_library loads) delivers its extensions: they are its core path
    library = not any(
        relative.endswith(".py")
        and relative.rsplit("/", 1)[-1] != "setup.py"
        and path_role(relative) in (None, CORE)
        and roles.get(relative, CORE) == CORE
        for relative in paths
    )
    built = {source for view in views for source in view.files} if library else set()
    if not library:
        _separate_native_builds(views, roles)
    for relative in kernel_files:
        role = by_file.get(relative, LAZY)
        if library and role != CORE and relative in built:
            role = CORE
        # an extension built by a nested setup.py (``pkg/kernels/setup.py``) stays a separate
        # deliverable unless code every run loads, or a public module of the project's own
        # package, imports it at module level: then it is the project's own path
        if roles.get(relative) == SUBPROJECT and role not in (CORE, PUBLIC):
            continue
        if role != CORE and plugin_module(relative):
            role = OPT_IN  # a plugin's kernels run when a user enables the plugin, as its modules
        roles[relative] = role


def _separate_native_builds(views: Sequence[ExtensionView], roles: dict[str, str]) -> None:
    """A CMake build whose every target is a plain native library no Python module loads, in a
    project whose Python package builds its own extensions another way (pytorch_cluster: the
    package's nine ``setup.py`` extensions, and a ``CMakeLists.txt`` that builds the same
    sources into a C++ library for libtorch users) is a separate C++ deliverable: its findings
    are work items shown apart, not the package's core path."""
    from migrator.kernels.buildmodel import CMAKE

    if not any(view.extension.kind != CMAKE for view in views):
        return
    by_build: dict[str, list[ExtensionView]] = {}
    for view in views:
        by_build.setdefault(view.extension.build, []).append(view)
    for build, targets in by_build.items():
        if not all(
            view.extension.kind == CMAKE and not view.extension.python_module and not view.imports
            for view in targets
        ):
            continue
        if roles.get(build, path_role(build) or CORE) == CORE:
            roles[build] = OPTIONAL


#: Build files of a nested sub-project: they build what the project imports from it.
_SUBPROJECT_BUILDS = ("setup.py", "pyproject.toml", "setup.cfg", "CMakeLists.txt")


def _imported_subprojects(
    nested: Sequence[str], modules: Sequence[str], eager: set[str], roles: dict[str, str]
) -> None:
    """A nested sub-project (its own ``setup.py``) whose modules code every run loads imports is
    part of the project's path, not a separate deliverable: those modules are core, and so are
    the sub-project's build files (the extension it builds is what the project runs). One that
    only a later or optional path imports stays apart, as its kernels do (``kernel_roles``)."""
    reached: set[str] = set()
    for relative in modules:
        if relative not in eager:
            continue
        roles[relative] = CORE
        reached.add(
            max((folder for folder in nested if relative.startswith(f"{folder}/")), key=len)
        )
    for folder in reached:
        for name in _SUBPROJECT_BUILDS:
            if roles.get(f"{folder}/{name}") == SUBPROJECT:
                roles[f"{folder}/{name}"] = CORE


def analyze(root: Path, paths: Iterable[str]) -> ProjectLayout:
    """The layout of the project at ``root`` whose files (relative, ``/``-separated) are ``paths``."""
    all_paths = sorted(set(paths))
    docs = doc_files(root)
    doc_modules, doc_scripts, docs_text = documented_commands(root, docs)
    documented = set(doc_scripts)
    roles: dict[str, str] = {}
    python: list[str] = []
    nested = sorted(
        {
            relative.rsplit("/", 1)[0]
            for relative in all_paths
            if "/" in relative
            and relative.rsplit("/", 1)[1] in ("pyproject.toml", "setup.py")
            and path_role(relative) not in PERIPHERAL_ROLES
        }
    )
    nested_python: list[str] = []
    for relative in all_paths:
        role = path_role(relative)
        if role not in PERIPHERAL_ROLES and any(
            relative.startswith(f"{folder}/") for folder in nested
        ):
            roles[relative] = SUBPROJECT
            if role is None and relative.endswith(".py"):
                nested_python.append(relative)
            continue
        if role is None or (relative in documented and relative.endswith(".py")):
            python.append(relative)  # a script the docs tell users to run is an entry point
        elif role == DEPLOY and not is_deployed(relative, docs_text):
            roles[relative] = "tooling"
        else:
            roles[relative] = role
    init_dirs = {p.rsplit("/", 1)[0] for p in all_paths if p.endswith("/__init__.py")}
    by_name: dict[str, str] = {}
    names_of: dict[str, list[str]] = {}
    for relative in [*python, *nested_python]:  # the project's own modules win a shared name
        names = module_names(relative, init_dirs)
        names_of[relative] = names
        for name in names:
            by_name.setdefault(name, relative)
    # Entry points.
    entries: list[str] = []
    for target in [*console_targets(root), *doc_modules]:
        for candidate in (target, f"{target}.__main__"):
            if candidate in by_name:
                entries.append(by_name[candidate])
    known = set(python)
    entries.extend(script for script in doc_scripts if script in known)
    public: list[str] = []
    for relative in python:
        parts = relative.split("/")
        if parts[-1] == "__main__.py" or (len(parts) == 1 and parts[0] not in ("setup.py",)):
            entries.append(relative)
        elif is_public_package_module(relative, init_dirs):
            if (
                parts[-1] == "__init__.py"
                # a top-level package (or one under src/): ``import package`` runs it
                and (len(parts) == 2 or (len(parts) == 3 and parts[0] == "src"))
            ):
                entries.append(relative)  # ``import package`` runs its __init__
            else:
                public.append(relative)
    entries = list(dict.fromkeys(entries))
    texts: dict[str, str] = {}
    eager = import_closure(
        root, entries, set(), texts, names_of, by_name, init_dirs, top_level=True
    )
    lazy = import_closure(root, entries, set(), texts, names_of, by_name, init_dirs) - eager
    api = import_closure(root, public, eager | lazy, texts, names_of, by_name, init_dirs)
    computes = any(_COMPUTE_IMPORT.search(texts[relative]) for relative in eager | lazy | api)
    for relative in python:
        if relative in eager:
            roles[relative] = CORE
        elif relative in lazy:
            roles[relative] = LAZY
        else:
            roles[relative] = PUBLIC if relative in api else "unreachable"
        if roles[relative] in (LAZY, PUBLIC) and plugin_module(relative):
            roles[relative] = OPT_IN
    _imported_subprojects(nested, nested_python, eager, roles)
    kernel_roles(root, all_paths, roles, texts)
    alternatives = mapped_alternatives(texts)
    for relative in alternatives:
        if roles.get(relative) in (LAZY, PUBLIC):
            roles[relative] = OPT_IN
    evidence_roles = {**dict.fromkeys(docs, "docs"), **roles}
    dispatch = frozenset(
        relative
        for relative, role in roles.items()
        if tier(role) == CORE and relative in texts and dispatch_in(texts[relative])
    ) | vendor_pairs(python)
    optional_lines = {
        relative: ranges
        for relative, role in roles.items()
        if role == CORE
        and relative.rsplit("/", 1)[-1] in ("pyproject.toml", "setup.cfg")
        and (ranges := optional_tables(read_text(root / relative, 2_000_000)))
    }
    return ProjectLayout(
        roles,
        sorted([*entries, *public]),
        amd_evidence(root, evidence_roles, texts),
        dispatch_files=dispatch,
        computes=computes,
        optional_lines=optional_lines,
        root=root,
        texts=texts,
        opt_in_modules={
            relative: why for relative, why in alternatives.items() if roles[relative] == OPT_IN
        },
        kernel_sources=find_kernel_sources(root, nested),
    )
