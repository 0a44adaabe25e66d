"""The project a run analyses, read from disk once: its files (discovered, named, or a buffer
standing for one), its declared facts completed by what its C/C++/CUDA sources and build
files say (NVIDIA-only macros, macro values, CUDA archs, build calls), and the re-export
index of its Python modules."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from migrator.engine.selection import Selection
from migrator.files.config import Config
from migrator.files.discovery import SourceFile, Unreadable, discover, file_kind, is_excluded
from migrator.files.sources import FailFile, NotRegular, SkipFile, read_regular, size_limit
from migrator.knowledge.versions import ProjectFacts
from migrator.model import FileResult, Status
from migrator.syntax.reexports import ProjectIndex


def kernel_texts(sources: Sequence[SourceFile]) -> dict[str, bytes]:
    """The bytes of the scan's C/C++/CUDA sources by relative path, read once for everything
    that reads them before the files are analysed (NVIDIA-only macros, unused definitions,
    include graphs); one that cannot be read is left out (the analysis reports why)."""
    out: dict[str, bytes] = {}
    for source in sources:
        if source.kind != "cuda":
            continue
        try:
            out[source.relative] = read_regular(str(source.path), size_limit(source.kind))
        except (SkipFile, FailFile, NotRegular):
            continue
    return out


def _with_kernel_macros(
    facts: ProjectFacts,
    texts: Mapping[str, bytes],
    root: Path | None = None,
    sources: Sequence[SourceFile] = (),
) -> ProjectFacts:
    """``facts`` with the macros the project's C/C++ sources (``kernel_texts``) define only for
    NVIDIA builds (a file's preprocessor branches on them are read as a HIP build reads them),
    the values on HIP of its macros defined as version tests, the CUDA-named identifiers and
    headers that are the project's own, and, with ``root``, what the project's build model says
    of its builds."""
    from migrator.kernels.cuda_names import project_cuda_names
    from migrator.kernels.macro_values import macro_values
    from migrator.kernels.macros import nvidia_only_macros
    from migrator.kernels.mask_macros import full_mask_macros, intrinsic_shims
    from migrator.kernels.namespaces import nvcuda_using_files
    from migrator.kernels.switches import unset_switches

    macros = nvidia_only_macros(texts.values())
    if macros:
        facts = replace(facts, nvidia_macros=tuple(sorted(macros)))
    names, headers = project_cuda_names(texts)
    if names or headers:
        facts = replace(facts, cuda_names=tuple(sorted(names)), cuda_headers=tuple(sorted(headers)))
    values = macro_values(texts.values())
    if values:
        facts = replace(facts, macro_values=tuple(sorted(values.items())))
    kernel_files = set(texts)
    switches = unset_switches(
        texts, root, [s.relative for s in sources if s.relative not in kernel_files]
    )
    if switches:
        facts = replace(facts, unset_switches=tuple(sorted(switches)))
    masks, shims = full_mask_macros(texts.values()), intrinsic_shims(texts.values())
    if masks or shims:
        facts = replace(
            facts, full_mask_macros=tuple(sorted(masks)), intrinsic_shims=tuple(sorted(shims))
        )
    nvcuda = nvcuda_using_files(texts)
    if nvcuda:
        facts = replace(facts, nvcuda_using=tuple(sorted(nvcuda)))
    if root is not None and root.is_dir():
        facts = _with_builds(facts, root, sources, bool(texts))
        if texts:
            from migrator.kernels.archs import built_archs

            facts = replace(facts, cuda_archs=built_archs(root, [s.relative for s in sources]))
    return facts


def _with_builds(
    facts: ProjectFacts, root: Path, sources: Sequence[SourceFile], kernels: bool
) -> ProjectFacts:
    """``facts`` with the build calls, CUDA-gated macros and build notes of the project's
    build model: read where the project has C/C++/CUDA sources or CMake files."""
    if not kernels and not any(source.kind == "cmake" for source in sources):
        return facts
    from migrator.kernels.builds import read_builds
    from migrator.kernels.unhipified import unhipified_files

    model = read_builds(root, [source.relative for source in sources])
    unhipified = unhipified_files(root, [source.relative for source in sources], model)
    return replace(
        facts,
        builds_read=True,
        unhipified=tuple(sorted(unhipified)),
        build_calls=tuple(sorted(model.calls)),
        cuda_build_macros=tuple(
            sorted((macro, path, line) for macro, (path, line) in model.cuda_macros.items())
        ),
        build_notes=tuple(
            sorted({(n.path, n.line, n.kind, n.message, n.anchor) for n in model.notes})
        ),
    )


def _sources(
    root: Path,
    selection: Selection,
    config: Config,
    files: Sequence[Path | SourceFile] | None = None,
    within: Path | None = None,
) -> tuple[list[SourceFile], list[FileResult]]:
    """The files to analyse, and what discovery could not read or left out (an unreadable
    folder, or a walk stopped by ``config``'s discovery budget, fails: the scan is incomplete)."""
    sources: list[SourceFile] = []
    problems: list[FileResult] = []
    if files is not None:
        return _explicit_sources(root, selection, files), problems
    budget = config.discovery_timeout
    if within is not None:
        prefix = Path(os.path.relpath(within, root)).as_posix() + "/"
        for item in discover(within, budget=budget):
            relative = prefix + item.relative
            if isinstance(item, Unreadable):
                status = Status.FAILED if item.unscanned else Status.SKIPPED
                problems.append(FileResult(relative, status, reason=item.reason))
            elif not is_excluded(relative, selection.exclude):
                sources.append(SourceFile(item.path, relative, item.kind))
        return sources, problems
    for item in discover(root, exclude=selection.exclude, budget=budget):
        if isinstance(item, Unreadable):
            status = Status.FAILED if item.unscanned else Status.SKIPPED
            problems.append(FileResult(item.relative, status, reason=item.reason))
        else:
            sources.append(item)
    return sources, problems


#: Files whose presence makes a folder a project (modelled whole when part of it is scanned).
_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def _declares_a_project(root: Path) -> bool:
    """Whether ``root`` declares itself a project: a file's own folder, a home folder or ``/``
    holding none of the markers is not walked whole for one file or buffer."""
    return root.is_dir() and any((root / marker).exists() for marker in _PROJECT_MARKERS)


def _project_model(
    root: Path, selection: Selection, config: Config, analysed: Sequence[SourceFile]
) -> list[SourceFile]:
    """Every file of the project under ``root``, with ``analysed`` in place of the files of
    the same name (a buffer stands for its file): what the project-wide analyses read when a
    scan analyses part of it. Discovery's problems outside that part are not this scan's."""
    if not root.is_dir():
        return list(analysed)
    whole, _ = _sources(root, selection, config)
    given = {source.relative: source for source in analysed}
    model = [given.pop(source.relative, source) for source in whole]
    return model + list(given.values())


def _unread_context(facts: ProjectFacts, files: Sequence[FileResult]) -> list[FileResult]:
    """The files declaring the project's versions that were too large to read, unless listed
    already (a scanned ``setup.py`` over the limit is): failed, so the scan is incomplete."""
    listed = {file.path for file in files}
    return [
        FileResult(path, Status.FAILED, reason=reason)
        for path, reason in facts.unread
        if path not in listed
    ]


def _python_texts(sources: Sequence[SourceFile]) -> list[tuple[str, str]]:
    """``(relative path, text)`` of the project's readable Python files."""
    texts: list[tuple[str, str]] = []
    for source in sources:
        if source.kind != "python":
            continue
        try:
            data = read_regular(str(source.path))
        except (SkipFile, FailFile):
            continue
        texts.append((source.relative, data.decode("utf-8", "replace")))
    return texts


def project_index(sources: Sequence[SourceFile]) -> ProjectIndex:
    """The re-export index of the project's Python files (their import lines, read as text)."""
    containers: dict[str, str] = {}
    packaging: dict[str, str] = {}
    for source in sources:
        root_packaging = source.relative in ("pyproject.toml", "setup.cfg")
        if source.kind != "dockerfile" and not root_packaging:
            continue
        try:
            data = read_regular(str(source.path))
        except (SkipFile, FailFile):
            continue
        text = data.decode("utf-8", "replace")
        if root_packaging:
            packaging[source.relative] = text
        else:
            containers[source.relative] = text
    index = ProjectIndex.build(_python_texts(sources))
    index.containers = containers
    index.packaging = packaging
    return index


def _explicit_sources(
    root: Path, selection: Selection, files: Sequence[Path | SourceFile]
) -> list[SourceFile]:
    """Files named on the command line, relative to ``root``; ``exclude`` still applies to them
    (ruff's ``--force-exclude``), as pre-commit passes every changed file explicitly. A
    ``SourceFile`` names its relative path itself (a buffer read from a temporary file)."""
    sources = []
    for path in files:
        if isinstance(path, SourceFile):
            if not is_excluded(path.relative, selection.exclude):
                sources.append(path)
            continue
        relative = Path(os.path.relpath(path, root)).as_posix()
        kind = file_kind(relative)
        if kind is None or is_excluded(relative, selection.exclude):
            continue
        sources.append(SourceFile(path, relative, kind))
    return sources
