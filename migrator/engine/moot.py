"""Files whose findings settling guards whatever they are (never run on ROCm, written on a
CUDA-only toolkit, kernels of a build with no ROCm port, definitions never used), found from
paths and the project index before any file is analysed, so a scan that hides guarded
findings need not look for them; and the rules a project's facts silence."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from migrator.engine.kernel_folding import KernelOwners
from migrator.engine.rule import Rule
from migrator.files.discovery import SourceFile
from migrator.knowledge.versions import ProjectFacts
from migrator.syntax.reexports import ProjectIndex

if TYPE_CHECKING:
    # Imported where used: the fix policy behind it loads libcst, which a warm scan never needs.
    from migrator.kernels.dead import DeadSpan
    from migrator.reach.cuda_only import Cause


#: ``_Task.moot``: the file never runs on ROCm (``project.file_guards``): every finding guarded.
MOOT_ALL = "all"


#: ``_Task.moot``: a module written on a CUDA-only kernel toolkit, or serving one
#: (``cuda_only_users.cuda_only_files``): every finding guarded but the module's own.
MOOT_CUDA_ONLY = "cuda-only"


@dataclass(frozen=True, slots=True)
class MootFiles:
    """The files whose findings settling guards whatever they are, found from paths and the
    project index before any file is analysed: a scan that hides guarded findings need not
    look for them (``settle`` reads the same answers)."""

    #: file -> why it never runs on a ROCm build (``project.file_guards``)
    guarded: Mapping[str, str]
    #: file -> its CUDA-only cause (``cuda_only_users.cuda_only_files``)
    cuda_only: Mapping[str, Cause]
    #: which build holds each kernel file (``engine.kernel_folding``): its sites may fold into it
    kernels: KernelOwners = field(default_factory=KernelOwners)
    #: kernel file -> the definitions in it that the project never uses (``kernels.dead``)
    dead: Mapping[str, tuple[DeadSpan, ...]] = field(default_factory=dict)

    @classmethod
    def find(
        cls,
        paths: Sequence[str],
        index: ProjectIndex | None,
        root: Path | None = None,
        kernel_texts: Mapping[str, bytes] | None = None,
    ) -> MootFiles:
        """From the scan's paths and index; with ``root``, ``kernel_texts`` are the scan's
        C/C++/CUDA sources as ``kernel_texts`` read them (relative path -> bytes), shared so
        that no source is read twice."""
        from migrator.engine.kernel_folding import kernel_owners
        from migrator.kernels.builds import cuda_only_sources
        from migrator.kernels.dead import dead_definitions
        from migrator.reach.cuda_only_users import cuda_only_files
        from migrator.reach.project import file_guards

        cuda_only = cuda_only_files(index, paths) if index is not None else {}
        guarded = file_guards(paths)
        kernels = KernelOwners()
        dead: dict[str, tuple[DeadSpan, ...]] = {}
        if root is not None and root.is_dir():
            from migrator.reach.dev_containers import gpu_less_dev_containers

            for path, reason in gpu_less_dev_containers(root, paths).items():
                guarded.setdefault(path, reason)
            python = index.sources.values() if index is not None else ()
            kernel_texts = kernel_texts or {}
            dead = dead_definitions(kernel_texts, python)
            # C/C++/CUDA sources that only a CUDA-only branch of a build file compiles
            for path, reason in cuda_only_sources(root, paths, kernel_texts).items():
                guarded.setdefault(path, f"never compiled for AMD: {reason}")
            if index is not None:
                kernels = kernel_owners(root, paths, index, kernel_texts)
                _compiled_despite_their_path(guarded, root, paths, index, kernel_texts)
                # a leftover build script of sources another extension compiles
                for path, reason in kernels.redundant.items():
                    guarded.setdefault(path, f"never built for ROCm: {reason}")
        return cls(guarded, cuda_only, kernels, dead)

    def unused_at(self, relative: str, line: int, assembly: bool) -> str:
        """Why a kernel site at ``relative:line`` changes nothing: it sits in a definition the
        project never uses, which for ``assembly`` (inline PTX must still assemble) the compiler
        does not emit either; "" otherwise."""
        for span in self.dead.get(relative, ()):
            if span.first <= line <= span.last and not (assembly and span.emitted):
                return f"`{span.name}` is defined but never used in the project's sources"
        return ""

    def moot(self, relative: str) -> str:
        """``_Task.moot`` for a file ("" when its findings may show)."""
        if relative in self.guarded:
            return MOOT_ALL
        return MOOT_CUDA_ONLY if relative in self.cuda_only else ""


def _unmoot(rules: tuple[type[Rule], ...], moot: str) -> tuple[type[Rule], ...]:
    """The rules whose findings may show in a file that is ``moot`` (``_Task.moot``)."""
    if moot == MOOT_ALL:
        return ()
    if moot == MOOT_CUDA_ONLY:
        from migrator.reach.cuda_only import CUDA_ONLY_PROBLEM

        return tuple(rule for rule in rules if rule.impact.problem == CUDA_ONLY_PROBLEM)
    return rules


def _silenced(
    sources: Sequence[SourceFile], facts: ProjectFacts, use_cache: bool
) -> frozenset[str]:
    """The rules the project's facts silence (``project.silenced_rules``); read from the cached
    catalog data, so a warm scan still imports no rule."""
    from migrator.engine.registry import dependency_entries
    from migrator.reach.project import own_packages, silenced_rules

    own = own_packages(source.relative for source in sources)
    return silenced_rules(dependency_entries(use_cache), own, facts)


def _compiled_despite_their_path(
    guarded: dict[str, str],
    root: Path,
    paths: Sequence[str],
    index: ProjectIndex,
    kernel_texts: Mapping[str, bytes],
) -> None:
    """Un-guard the kernel sources a path word calls NVIDIA-only (``blackwell/``, ``hopper/``)
    that an extension without a ROCm branch compiles: a ROCm build of it hipifies them and hands
    them to hipcc (SageAttention3's ``sageattn3/blackwell/``). Where the build has a ROCm branch
    (flash-attention's ``hopper/setup.py``), the path still says they are for NVIDIA only."""
    from migrator.kernels.builds import KERNEL_SUFFIXES
    from migrator.kernels.project import extension_views
    from migrator.reach.project import NVIDIA_PATH_REASON

    named = {
        path
        for path, why in guarded.items()
        if why == NVIDIA_PATH_REASON and path.lower().endswith(KERNEL_SUFFIXES)
    }
    if not named:
        return
    for view in extension_views(root, paths, index.sources, kernel_texts):
        if view.rocm_branch:
            continue
        for relative in named.intersection(view.files):
            guarded.pop(relative, None)
