"""Kernel sites that belong to a larger problem already reported, folded into it: one finding per
problem, where the user acts.

Three shapes:

- **A function that compiles to nothing on AMD.** A kernel or device function with code under
  nvcc and none under hipcc (ROC361) is ported by writing its AMD path: the PTX, the guard and
  the masks inside its body are that work, listed with it.
- **A library port.** A C/C++ file written on CUTLASS/CuTe (a CUTLASS include, ROC330) is ported
  by replacing the library: the inline PTX, lane masks and warp-size constants inside it are part
  of that port, not problems of their own.
- **An optional extension with no ROCm build.** An extension whose build has no ROCm path
  (reported at its build, ROC600) and that nothing a run always loads imports at module level
  (a nested ``setup.py`` the user builds by hand, a JIT ``load()`` inside a function) is one
  decision for the user: port it or keep it NVIDIA-only. Its kernel sites are the details of
  that decision. An extension that a module every run loads imports at module level is the
  project's own path: each of its kernel sites stays a finding (each is port work).

Folded sites stay visible: they become related sites of the anchor, each naming its own rule
(``Related.rule``), and the readiness score weighs them as that rule's findings."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from migrator.engine.aggregate import related_site
from migrator.model import Finding, Related
from migrator.syntax.reexports import ProjectIndex

if TYPE_CHECKING:
    from migrator.kernels.project import ExtensionView

#: The kernel rules whose sites may be folded (the construct rules of ``cuda_kernels``).
KERNEL_SITE_RULES = frozenset(
    {
        "ROC303",
        "ROC304",
        "ROC310",
        "ROC311",
        "ROC312",
        "ROC313",
        "ROC315",
        "ROC320",
        "ROC331",
        "ROC340",
        "ROC350",
        "ROC360",
        "ROC370",
        "ROC361",
    }
)
#: The kernel rules about assembly, which the compiler must assemble wherever it emits code.
ASSEMBLY_RULES = frozenset({"ROC310", "ROC311", "ROC312", "ROC313", "ROC320"})
#: The rule of a function that compiles to nothing on AMD: the kernel sites in its body are its.
EMPTY_RULE = "ROC361"
#: The CUTLASS/CuTe include rule: the library port that contains a file's other kernel sites.
LIBRARY_RULE = "ROC330"
#: The extension-build rule: the decision that contains an optional extension's kernel sites.
BUILD_RULE = "ROC600"
#: The rules reporting a build that compiles its GPU code only where it finds CUDA: the
#: branches on the macro it then defines (ROC360, "compiled only with CUDA") are its sites.
GATE_RULES = ("ROC605", "ROC606")
_GATED_BRANCH = re.compile(r"defines `\w+` only where it finds CUDA \(([^()]+):\d+\)")
_INDENTED = re.compile(r"[ \t]")


@dataclass(frozen=True, slots=True)
class KernelOwners:
    """Which build holds each kernel file of a project, read before any rule runs."""

    #: kernel file -> the build files (``setup.py``) of the optional extensions that compile it;
    #: absent when any extension compiling it is loaded by every run or has a ROCm branch
    optional: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: kernel files no extension the static reading resolved compiles (a JIT ``load()`` may)
    unbuilt: frozenset[str] = frozenset()
    #: build file -> why it is a leftover: every extension it declares is a second build of
    #: sources another build file's extension compiles, and no Python file imports it
    redundant: Mapping[str, str] = field(default_factory=dict)
    #: build file -> the module-level imports, in modules every run loads, of its extensions
    #: that have no ROCm branch: where the missing ROCm build surfaces as an ImportError
    loaded_at: Mapping[str, tuple[tuple[str, int], ...]] = field(default_factory=dict)


def kernel_owners(
    root: Path,
    paths: Sequence[str],
    index: ProjectIndex,
    kernel_texts: Mapping[str, bytes] | None = None,
) -> KernelOwners:
    """The owners of the kernel files among ``paths``, from the project's build files and the
    import lines of its Python index (``kernel_texts``: sources already read)."""
    from migrator.files.paths import is_benchmark_path, is_test_path
    from migrator.kernels.builds import KERNEL_SUFFIXES
    from migrator.kernels.importers import MODULE_LEVEL
    from migrator.kernels.project import extension_views

    kernel_files = [p for p in paths if p.lower().endswith(KERNEL_SUFFIXES)]
    if not kernel_files:
        return KernelOwners()
    views = extension_views(root, paths, index.sources, kernel_texts)
    eager = _eager_modules(index, lambda path: is_test_path(path) or is_benchmark_path(path))
    by_file: dict[str, list[tuple[str, bool]]] = {}
    loaded_at: dict[str, list[tuple[str, int]]] = {}
    for view in views:
        eager_imports = [
            (site.path, site.line)
            for site in view.imports
            if site.how == MODULE_LEVEL and site.path in eager
        ]
        keep = bool(eager_imports) or view.rocm_branch
        if eager_imports and not view.rocm_branch:
            loaded_at.setdefault(view.extension.build, []).extend(eager_imports)
        for relative in view.files:
            by_file.setdefault(relative, []).append((view.extension.build, keep))
    optional = {
        relative: tuple(dict.fromkeys(build for build, _ in owners))
        for relative, owners in by_file.items()
        if not any(keep for _, keep in owners)
    }
    unbuilt = frozenset(p for p in kernel_files if p not in by_file)
    return KernelOwners(
        optional,
        unbuilt,
        _redundant_builds(views),
        {build: tuple(sorted(set(sites))) for build, sites in loaded_at.items()},
    )


def _redundant_builds(views: Sequence[ExtensionView]) -> dict[str, str]:
    """Build files whose every extension no Python file imports and whose sources an extension
    of another build file compiles too: a standalone leftover of a kernel the project builds
    elsewhere (never what a ROCm user builds); and a ``setup.py`` that prebuilds a module the
    project builds at run time anyway (a JIT ``load`` of the same sources is its fallback):
    one module, reported at the ``load``."""
    out = _prebuilt_twins(views)
    by_build: dict[str, list[ExtensionView]] = {}
    for view in views:
        by_build.setdefault(view.extension.build, []).append(view)
    for build, own in by_build.items():
        if any(view.imports for view in own):
            continue
        for view in own:
            sources = set(view.extension.sources)
            other = next(
                (
                    candidate
                    for candidate in views
                    if candidate.extension.build != build
                    and sources <= set(candidate.extension.sources)
                ),
                None,
            )
            if other is None:
                break
        else:
            names = ", ".join(f"`{view.name}`" for view in own)
            host = next(
                candidate.extension
                for candidate in views
                if candidate.extension.build != build
                and set(own[0].extension.sources) <= set(candidate.extension.sources)
            )
            out[build] = (
                f"{names}: a second build of sources that `{host.name}` ({host.build}) "
                "compiles; no Python file imports it"
            )
    return out


def _prebuilt_twins(views: Sequence[ExtensionView]) -> dict[str, str]:
    """Build files declared only as the twin of a JIT-built module (the same sources)."""
    from migrator.kernels.buildmodel import JIT

    out: dict[str, str] = {}
    declared = {view.extension.build for view in views}
    for view in views:
        extension = view.extension
        if extension.kind != JIT:
            continue
        for twin, name in zip(
            extension.also_builds,
            extension.also_names or [""] * len(extension.also_builds),
            strict=False,
        ):
            if twin in declared or twin == extension.build:
                continue  # the file declares other modules of its own
            out.setdefault(
                twin,
                f"`{name or extension.name}` is the prebuilt form of `{extension.name}`, which "
                f"{extension.build}:{extension.line} builds at run time from the same sources "
                "when it is missing: reported there",
            )
    return out


def _eager_modules(index: ProjectIndex, left_out: Callable[[str], bool]) -> frozenset[str]:
    """The Python files a run loads: the modules no project file imports (scripts, the
    packages' ``__init__``), tests and benchmarks left out, and what they import at module
    level, unindented (an import under ``try`` or in a function is not loaded by every run)."""
    edges: dict[str, set[str]] = {}
    imported: set[str] = set()
    folders = frozenset(
        "/".join(parts[:depth])
        for relative in index.sources
        for parts in [relative.split("/")[:-1]]
        for depth in range(1, len(parts) + 1)
    )
    for relative, lines in index.top_imports.items():
        for _line, unindented, modules in lines:
            for module in modules:
                target = _resolve(module, index.modules, folders)
                if target is None or target == relative:
                    continue
                imported.add(target)
                if unindented:
                    edges.setdefault(relative, set()).add(target)
    files = {*index.sources, *index.modules.values()}
    entries = [
        relative
        for relative in sorted(files)
        if (relative not in imported or relative.endswith("/__init__.py"))
        and not left_out(relative)
    ]
    seen = set(entries)
    frontier = list(entries)
    while frontier:
        current = frontier.pop()
        for target in edges.get(current, ()):
            if target not in seen:
                seen.add(target)
                frontier.append(target)
    return frozenset(seen)


def _resolve(
    module: str, by_module: Mapping[str, str], folders: frozenset[str] = frozenset()
) -> str | None:
    """The project file a dotted import names (``a.b.c`` -> ``a/b/c.py``, or the module that
    defines the name ``c``); a namespace package's name (a folder without ``__init__.py``,
    which the index leaves out of module names) is dropped from the front."""
    parts = module.split(".")
    for first in range(len(parts)):
        if first and "/".join(parts[:first]) not in folders:
            break  # only a project folder may be left out of a module name
        for last in range(len(parts), first, -1):
            found = by_module.get(".".join(parts[first:last]))
            if found is not None:
                return found
    return None


def fold(
    findings: Sequence[Finding], owners: KernelOwners, sources: Mapping[str, str]
) -> list[Finding]:
    """``findings`` (unaggregated, one project) with the kernel sites of a CUTLASS file folded
    into that file's CUTLASS finding, those of an optional extension with no ROCm build into its
    build finding, and the branches compiled only with CUDA into the finding on the build that
    defines their macro only where it finds CUDA; first, the sites inside a function that
    compiles to nothing on AMD into that function's finding."""
    findings = _fold_into_functions(findings)
    anchors: dict[tuple[str, str], int] = {}  # (rule, path) -> index of the first finding
    gates: dict[str, int] = {}  # build file -> its gate finding
    for position, finding in enumerate(findings):
        if finding.rule in (LIBRARY_RULE, BUILD_RULE) and not finding.guard:
            anchors.setdefault((finding.rule, finding.path), position)
        if finding.rule in GATE_RULES and not finding.guard:
            gates.setdefault(finding.path, position)
    if not anchors and not gates:
        return list(findings)
    jit_folders = _jit_folders(findings, anchors, sources)
    folded: dict[int, list[Finding]] = {}
    out: list[Finding | None] = list(findings)
    for position, finding in enumerate(findings):
        if finding.rule not in KERNEL_SITE_RULES or finding.guard:
            continue
        gated = _GATED_BRANCH.search(finding.message) if finding.rule == "ROC360" else None
        target = gates.get(gated.group(1)) if gated is not None else None
        if target is None:
            target = _target(finding.path, anchors, owners, jit_folders)
        if target is None:
            continue
        folded.setdefault(target, []).append(finding)
        out[position] = None
    for target, members in folded.items():
        anchor = findings[target]
        out[target] = _absorb(anchor, members)
    for (rule, path), position in anchors.items():
        sites = owners.loaded_at.get(path)
        current = out[position]
        if rule == BUILD_RULE and sites and current is not None:
            out[position] = _with_imports(current, sites, sources)
    return [finding for finding in out if finding is not None]


def _fold_into_functions(findings: Sequence[Finding]) -> list[Finding]:
    """``findings`` with each kernel site inside the span of a function that compiles to nothing
    on AMD (an unguarded ROC361 finding covers the whole definition) folded into it."""
    spans = [
        (position, finding)
        for position, finding in enumerate(findings)
        if finding.rule == EMPTY_RULE and not finding.guard
    ]
    if not spans:
        return list(findings)
    folded: dict[int, list[Finding]] = {}
    out: list[Finding | None] = list(findings)
    for position, finding in enumerate(findings):
        if finding.rule not in KERNEL_SITE_RULES or finding.rule == EMPTY_RULE or finding.guard:
            continue
        for target, anchor in spans:
            if anchor.path == finding.path and anchor.line <= finding.line <= anchor.end_line:
                folded.setdefault(target, []).append(finding)
                out[position] = None
                break
    for target, members in folded.items():
        out[target] = _absorb(findings[target], members)
    return [finding for finding in out if finding is not None]


def _with_imports(
    anchor: Finding, sites: Sequence[tuple[str, int]], sources: Mapping[str, str]
) -> Finding:
    """The build finding of an extension that modules every run loads import at module level,
    with those imports as related sites: there the missing ROCm build raises ImportError."""
    related = list(anchor.related)
    known = {(site.path, site.line) for site in related} | {(anchor.path, anchor.line)}
    added = 0
    for path, line in sites:
        if (path, line) in known:
            continue
        lines = sources.get(path, "").splitlines()
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        start = len(text) - len(text.lstrip()) + 1
        related.append(Related(path, line, start, line, len(text) + 1))
        added += 1
    if not added:
        return anchor
    first = sites[0]
    message = (
        f"{anchor.message}; modules every run loads import it at module level "
        f"({first[0]}:{first[1]}"
        + (f" and {added - 1} more" if added > 1 else "")
        + "): they raise ImportError on ROCm until it builds there"
    )
    return replace(anchor, message=message, related=tuple(related))


def _jit_folders(
    findings: Sequence[Finding], anchors: Mapping[tuple[str, str], int], sources: Mapping[str, str]
) -> dict[str, int]:
    """folder -> the build finding of a JIT ``load()`` called inside a function of a module in
    that folder: the kernel sources under the folder are that extension's."""
    out: dict[str, int] = {}
    for (rule, path), position in anchors.items():
        if rule != BUILD_RULE or not path.endswith(".py") or path.endswith("setup.py"):
            continue
        text = sources.get(path)
        if text is None:
            continue
        lines = text.splitlines()
        line = findings[position].line
        if 0 < line <= len(lines) and _INDENTED.match(lines[line - 1]) and "/" in path:
            out.setdefault(path.rsplit("/", 1)[0], position)
    return out


def _target(
    path: str,
    anchors: Mapping[tuple[str, str], int],
    owners: KernelOwners,
    jit_folders: Mapping[str, int],
) -> int | None:
    """The finding a kernel site in ``path`` folds into, or None."""
    library = anchors.get((LIBRARY_RULE, path))
    if library is not None:
        return library
    builds = owners.optional.get(path, ())
    if builds:
        positions = [anchors.get((BUILD_RULE, build)) for build in builds]
        if all(position is not None for position in positions):
            return positions[0]
        return None
    if path in owners.unbuilt:
        for folder in sorted(jit_folders, key=len, reverse=True):
            if path.startswith(f"{folder}/"):
                return jit_folders[folder]
    return None


def _absorb(anchor: Finding, members: Iterable[Finding]) -> Finding:
    """The anchor with each member's sites as related sites naming the member's rule and a
    message that says what the folded sites are. The anchor keeps its severity: it says what
    the problem means for the project (an optional extension that does not build on ROCm is
    work, not a crash of the project), and the readiness score weighs each folded site as its
    own rule's finding."""
    sites = list(anchor.related)
    seen = {related_site(anchor), *sites}
    names: dict[str, int] = {}
    for member in members:
        for site in (related_site(member), *member.related):
            tagged = replace(
                site, rule=site.rule or member.rule
            )  # a site folded twice keeps its rule
            if replace(site, rule="") in seen or tagged in seen:
                continue
            seen.add(tagged)
            sites.append(tagged)
            names[member.name] = names.get(member.name, 0) + 1
    if not names:
        return anchor
    if anchor.rule != BUILD_RULE:  # a library port or an empty function: sites listed with it
        return replace(anchor, related=tuple(sites))
    count = sum(names.values())
    listed = ", ".join(sorted(names))
    message = (
        f"{anchor.message}; its sources hold {count} kernel site{'s' if count != 1 else ''} "
        f"of this port ({listed})"
    )
    return replace(anchor, message=message, related=tuple(sites))


__all__ = [
    "ASSEMBLY_RULES",
    "EMPTY_RULE",
    "KERNEL_SITE_RULES",
    "KernelOwners",
    "fold",
    "kernel_owners",
]
