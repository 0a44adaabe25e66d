"""Run the engine over whole trees: discovery, cache, worker processes, selection and
per-file ignores, and (for ``fix``) atomic writes. Used by the CLI, verify, report and pr."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from migrator.engine.isolation import (
    DEFAULT_FILE_BUDGET,
    IsolatedRunner,
    workers_fork,
)
from migrator.engine.kernel_folding import ASSEMBLY_RULES, KERNEL_SITE_RULES, KernelOwners
from migrator.engine.rule import Rule
from migrator.engine.suppress import SUPPRESSION_MARK
from migrator.files.cache import ResultCache
from migrator.files.config import Config, load_config
from migrator.files.discovery import SourceFile, Unreadable, discover, file_kind, is_excluded
from migrator.files.paths import glob_matches, rebase_glob
from migrator.files.sources import (
    FailFile,
    NotRegular,
    SkipFile,
    TooLarge,
    content_key,
    decode_python,
    decode_text,
    read_regular,
    size_limit,
)
from migrator.knowledge.supported_versions import project_facts
from migrator.knowledge.versions import ProjectFacts
from migrator.model import Applicability, FileResult, Finding, ScanResult, Severity, Status
from migrator.syntax.reexports import ExportSlice, ProjectIndex, current_exports

if TYPE_CHECKING:
    # Imported where used: the fix policy behind it loads libcst, which a warm scan never needs.
    from migrator.engine.formatter import Formatter
    from migrator.engine.variants import Variant
    from migrator.kernels.dead import DeadSpan
    from migrator.reach.cuda_only import Cause

#: Below this many files to analyse, worker processes cost more than they save.
PARALLEL_THRESHOLD = 24


def _config_prefix(config: Config, root: Path | None) -> str:
    """Where ``root`` sits below the folder the configuration's globs are written from (its
    file's: ``pkg`` for a scan of ``pkg/`` configured by ``./pyproject.toml``; the current
    directory's for ``--config FILE``), "" when it is that folder."""
    base = config.globs_from or (str(Path(config.source).parent) if config.source else None)
    if root is None or base is None:
        return ""
    folder = root if root.is_dir() else root.parent
    try:
        relative = folder.resolve().relative_to(Path(base).resolve())
    except (OSError, ValueError):
        return ""
    return "" if relative == Path(".") else relative.as_posix()


@dataclass(frozen=True, slots=True)
class Selection:
    """Which rules and findings count: merged from ``[tool.migrate]`` and the command line."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    min_severity: Severity = Severity.INFO
    #: Rules in preview are chosen too (``--preview``).
    preview: bool = False
    #: Chosen on top of ``select`` (``--extend-select``): named, so hygiene rules among them show.
    extend_select: tuple[str, ...] = ()

    @classmethod
    def merge(
        cls,
        config: Config,
        *,
        select: Sequence[str] | None = None,
        ignore: Sequence[str] | None = None,
        exclude: Sequence[str] = (),
        min_severity: Severity | None = None,
        preview: bool | None = None,
        root: Path | None = None,
        extend_select: Sequence[str] = (),
        extend_ignore: Sequence[str] = (),
    ) -> Selection:
        """The command line's choices over the configuration's. The configuration's globs are
        written from its own folder; for a ``root`` below it they are rebased onto ``root``."""
        prefix = _config_prefix(config, root)
        rebased = (rebase_glob(pattern, prefix) for pattern in config.exclude)
        per_file = (
            (rebase_glob(pattern, prefix), codes)
            for pattern, codes in config.per_file_ignores.items()
        )
        return cls(
            select=tuple(select) if select else config.select,
            ignore=(*(tuple(ignore) if ignore else config.ignore), *extend_ignore),
            exclude=(*(pattern for pattern in rebased if pattern is not None), *exclude),
            per_file_ignores=tuple(
                (pattern, codes) for pattern, codes in per_file if pattern is not None
            ),
            min_severity=min_severity if min_severity is not None else config.min_severity,
            preview=preview if preview is not None else config.preview,
            extend_select=tuple(extend_select),
        )

    def _named(self, finding: Finding) -> bool:
        """Hygiene is off by default, but a rule selected by its code, name or category shows,
        and ``--select ALL`` means every rule, hygiene included."""
        return (
            finding.severity is Severity.HYGIENE
            and self.min_severity is Severity.INFO
            and any(
                selector in {finding.rule, finding.name, finding.category, "ALL"}
                for selector in (*self.select, *self.extend_select)
            )
        )

    def fixes(self, finding: Finding) -> bool:
        """Whether ``fix`` applies this finding's fix (and ``pr``, the language server's fix-all
        and the reports count it as fixable): a hygiene rewrite (a deprecated alias, which
        changes nothing on ROCm) is no migration, so it runs only where this selection shows
        hygiene findings (the rule named, ``--select ALL``, ``--min-severity hygiene``); every
        other finding's fix as its rule offers it."""
        return (
            finding.severity is not Severity.HYGIENE
            or self.min_severity is Severity.HYGIENE
            or self._named(finding)
        )

    def offered(self, finding: Finding) -> Finding:
        """``finding`` as shown: without its fix where ``fixes`` says ``fix`` leaves it."""
        return finding if finding.fix is None or self.fixes(finding) else replace(finding, fix=None)

    def codes(self, use_cache: bool = True) -> frozenset[str]:
        from migrator.engine.registry import catalog_entries, preview_codes, select_codes

        entries = catalog_entries(use_cache)
        preview = frozenset() if self.preview else preview_codes(use_cache)
        chosen = select_codes(entries, list(self.select), list(self.ignore), preview=preview)
        if self.extend_select:
            chosen |= select_codes(
                entries, list(self.extend_select), list(self.ignore), preview=preview
            )
        return chosen

    def keep(self, finding: Finding, codes: frozenset[str]) -> bool:
        if finding.rule not in codes:
            return False
        if finding.severity < self.min_severity and not self._named(finding):
            return False
        for pattern, ignored in self.per_file_ignores:
            if glob_matches(finding.path, pattern) and (
                finding.rule in ignored
                or finding.category in ignored
                or any(finding.rule.startswith(code) for code in ignored)
            ):
                return False
        return True


@dataclass(frozen=True, slots=True)
class _Task:
    path: str
    relative: str
    kind: str
    fix: Applicability | None
    codes: frozenset[str] | None
    prefilter: bool
    facts: ProjectFacts = field(default_factory=ProjectFacts)
    #: names re-exported through the project's own modules that this file imports
    exports: ExportSlice | None = None
    #: rules every finding of which the project's facts guard (``project.silenced_rules``):
    #: left out unless the file holds a suppression comment, whose use they may account for
    silenced: frozenset[str] = frozenset()
    #: Why every finding the file could hold is guarded (``MootFiles``), for a scan that hides
    #: them: ``all`` runs no rule on it, ``cuda-only`` only the rules reporting the CUDA-only
    #: module itself; like ``silenced``, not where the file holds a suppression comment.
    moot: str = ""
    #: the project's formatter (``migrator.engine.formatter``), run on a fix's changed lines
    formatter: Formatter | None = None
    #: the run's selection, for a fix: which findings' fixes it applies (``Selection.fixes``)
    selection: Selection | None = None


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


@dataclass(slots=True)
class FileOutcome:
    """One file's result, plus (for fix runs) its new text and what was fixed."""

    result: FileResult
    key: str = ""
    new_text: str | None = None
    encoding: str = "utf-8"
    fixed: list[Finding] = field(default_factory=list)
    error: str | None = None
    write_error: str | None = None

    @property
    def written(self) -> bool:
        """Whether this outcome's fixed text is (or, without writing, would be) on disk."""
        return self.new_text is not None and self.error is None and self.write_error is None

    @property
    def relative(self) -> str:
        return self.result.path


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

    macros = nvidia_only_macros(texts.values())
    if macros:
        facts = replace(facts, nvidia_macros=tuple(sorted(macros)))
    names, headers = project_cuda_names(texts)
    if names or headers:
        facts = replace(facts, cuda_names=tuple(sorted(names)), cuda_headers=tuple(sorted(headers)))
    values = macro_values(texts.values())
    if values:
        facts = replace(facts, macro_values=tuple(sorted(values.items())))
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

    model = read_builds(root, [source.relative for source in sources])
    return replace(
        facts,
        builds_read=True,
        build_calls=tuple(sorted(model.calls)),
        cuda_build_macros=tuple(
            sorted((macro, path, line) for macro, (path, line) in model.cuda_macros.items())
        ),
        build_notes=tuple(
            sorted({(n.path, n.line, n.kind, n.message, n.anchor) for n in model.notes})
        ),
    )


def _work(task: _Task) -> FileOutcome:
    """Analyse one file with its project's facts in force (reset after, so in-process runs of
    several roots never see each other's declared versions)."""
    from migrator.kernels.differential import cuda_archs
    from migrator.kernels.preproc import project_macro_values, project_nvidia_macros
    from migrator.knowledge.versions import current_facts

    token = current_facts.set(task.facts)
    macros_token = project_nvidia_macros.set(frozenset(task.facts.nvidia_macros))
    values_token = project_macro_values.set(MappingProxyType(dict(task.facts.macro_values)))
    archs_token = cuda_archs.set(task.facts.cuda_archs or cuda_archs.get())
    exports_token = current_exports.set(task.exports)
    if task.formatter is None:  # a scan: the formatter module is not even imported
        formatted = None
    else:
        from migrator.engine.formatter import current_formatter

        formatted = (current_formatter, current_formatter.set(task.formatter))
    if task.selection is None or task.fix is None:  # a scan offers every fix a rule has
        chosen = None
    else:
        from migrator.engine.fix_policy import chosen_fixes

        chosen = (chosen_fixes, chosen_fixes.set(task.selection.fixes))
    try:
        return _analyse(task)
    finally:
        if chosen is not None:
            chosen[0].reset(chosen[1])
        if formatted is not None:
            formatted[0].reset(formatted[1])
        current_exports.reset(exports_token)
        cuda_archs.reset(archs_token)
        project_macro_values.reset(values_token)
        project_nvidia_macros.reset(macros_token)
        current_facts.reset(token)


def _analyse(task: _Task) -> FileOutcome:
    """Analyse one file; every failure becomes a one-line reason (the per-file boundary)."""
    from migrator.engine.engine import analyze
    from migrator.engine.registry import all_rules

    rules = all_rules()
    if task.codes is not None:
        rules = tuple(rule for rule in rules if rule.code in task.codes)
    try:
        data = read_regular(task.path, size_limit(task.kind))
    except NotRegular as error:  # discovery saw a regular file: it was replaced since
        reason = f"changed during the run, now {error}"
        return FileOutcome(FileResult(task.relative, Status.FAILED, reason=reason))
    except TooLarge as error:  # code that may run, unread: the scan is incomplete
        return FileOutcome(FileResult(task.relative, Status.FAILED, reason=str(error)))
    except SkipFile as error:
        return FileOutcome(FileResult(task.relative, Status.SKIPPED, reason=str(error)))
    except FailFile as error:
        return FileOutcome(FileResult(task.relative, Status.FAILED, reason=str(error)))
    key = content_key(data)
    try:
        decoded = decode_python(data) if task.kind == "python" else decode_text(data)
        if (task.silenced or task.moot) and SUPPRESSION_MARK not in decoded.text:
            rules = tuple(rule for rule in rules if rule.code not in task.silenced)
            rules = _unmoot(rules, task.moot)
        analysis = analyze(
            decoded.text, task.relative, task.kind, rules, fix=task.fix, prefilter=task.prefilter
        )
    except TooLarge as error:
        return FileOutcome(FileResult(task.relative, Status.FAILED, reason=str(error)), key)
    except SkipFile as error:
        return FileOutcome(FileResult(task.relative, Status.SKIPPED, reason=str(error)), key)
    except FailFile as error:
        return FileOutcome(FileResult(task.relative, Status.FAILED, reason=str(error)), key)
    except RecursionError:
        return FileOutcome(
            FileResult(task.relative, Status.FAILED, reason="too deeply nested"), key
        )
    except Exception as error:  # an internal error on one file must not stop the run
        reason = f"internal error: {type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}"
        return FileOutcome(FileResult(task.relative, Status.FAILED, reason=reason), key)
    findings = tuple(sorted(analysis.findings, key=Finding.sort_key))
    result = FileResult(
        task.relative,
        Status.SCANNED,
        findings=findings,
        unused_suppressions=tuple(analysis.unused_suppressions),
    )
    return FileOutcome(
        result,
        key,
        new_text=analysis.new_text,
        encoding=decoded.encoding,
        fixed=analysis.fixed,
        error=analysis.fix_error,
    )


def _size(task: _Task) -> int:
    try:
        return os.path.getsize(task.path)
    except OSError:
        return 0


def _failed(task: _Task, reason: str) -> FileOutcome:
    return FileOutcome(FileResult(task.relative, Status.FAILED, reason=reason))


#: The tasks of the run in progress, set before its workers fork: a forked worker reads its task
#: from the memory it inherited and only the task's position goes through the pipe (a task
#: holds the project's facts and the file's export slice, pickled and unpickled per file
#: otherwise).
_INHERITED: list[_Task] = []


def _work_inherited(position: int) -> FileOutcome:
    return _work(_INHERITED[position])


def _failed_inherited(position: int, reason: str) -> FileOutcome:
    return _failed(_INHERITED[position], reason)


def _load_engine() -> None:
    """Import the engine, libcst and every rule once, here, before the workers fork: they
    inherit the loaded modules instead of each importing them again, and the selection and
    aggregation that follow the run find them loaded."""
    from migrator.engine.engine import analyze  # noqa: F401
    from migrator.engine.registry import all_rules

    all_rules()


def _execute(
    tasks: list[_Task],
    jobs: int | None,
    progress: Callable[[int], None] | None,
    budget: float = DEFAULT_FILE_BUDGET,
) -> list[FileOutcome]:
    """Analyse every task in worker processes: a crash or a runaway file costs that file only
    (``jobs=0``: in this process, for a caller that is such a worker already)."""
    if not tasks:
        return []
    if jobs == 0:
        _load_engine()
        return [_work(task) for task in tasks]
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    if len(tasks) < PARALLEL_THRESHOLD:
        workers = 1
    _load_engine()
    # Largest files first: the few files that need a parse dominate, and handing them out
    # early keeps every worker busy to the end.
    order = sorted(range(len(tasks)), key=lambda index: _size(tasks[index]), reverse=True)
    ordered = [tasks[index] for index in order]
    if workers_fork():
        global _INHERITED
        _INHERITED = ordered
        try:
            by_position = IsolatedRunner(
                _work_inherited, _failed_inherited, workers=workers, budget=budget
            )
            outcomes = by_position.run(list(range(len(ordered))), progress)
        finally:
            _INHERITED = []
    else:
        runner = IsolatedRunner(_work, _failed, workers=workers, budget=budget)
        outcomes = runner.run(ordered, progress)
    placed: list[FileOutcome | None] = [None] * len(tasks)
    for index, outcome in zip(order, outcomes, strict=True):
        placed[index] = outcome
    return [outcome for outcome in placed if outcome is not None]


def _execute_released(
    tasks: list[_Task],
    jobs: int | None,
    progress: Callable[[int], None] | None,
    budget: float,
    index: ProjectIndex,
    sources: Sequence[SourceFile],
) -> list[FileOutcome]:
    """``_execute`` with the index's texts dropped (and their memory handed back) while the
    workers run, then read again: forked workers would each count them in their resident set
    (80 MB on a 1M-line project, three times over with two workers). Reading them again costs
    tens of milliseconds there."""
    if not tasks or not workers_fork() or jobs == 0:
        return _execute(tasks, jobs, progress, budget)
    index.release_texts()  # the runner collects them and trims the heap before it forks
    try:
        return _execute(tasks, jobs, progress, budget)
    finally:
        index.restore_texts(dict(_python_texts(sources)))


@dataclass(slots=True)
class RootRun:
    """A scan (or fix) of one root: results after selection, and fix outcomes."""

    root: Path
    scan: ScanResult
    outcomes: list[FileOutcome] = field(default_factory=list)
    config: Config = field(default_factory=Config)
    #: ROCm siblings of NVIDIA container files (``fix --unsafe-fixes``), written or not
    variants: list[Variant] = field(default_factory=list)
    #: the project's formatter, which ``fix`` runs on the lines it rewrites
    formatter: Formatter | None = None


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
    for source in sources:
        if source.kind != "dockerfile":
            continue
        try:
            data = read_regular(str(source.path))
        except (SkipFile, FailFile):
            continue
        containers[source.relative] = data.decode("utf-8", "replace")
    index = ProjectIndex.build(_python_texts(sources))
    index.containers = containers
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


def _unmoot(rules: tuple[type[Rule], ...], moot: str) -> tuple[type[Rule], ...]:
    """The rules whose findings may show in a file that is ``moot`` (``_Task.moot``)."""
    if moot == MOOT_ALL:
        return ()
    if moot == MOOT_CUDA_ONLY:
        from migrator.reach.cuda_only import CUDA_ONLY_PROBLEM

        return tuple(rule for rule in rules if rule.problem == CUDA_ONLY_PROBLEM)
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


def scan(
    root: Path,
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    min_severity: Severity | None = None,
    preview: bool | None = None,
    extend_select: Sequence[str] = (),
    extend_ignore: Sequence[str] = (),
    use_cache: bool = True,
    prefilter: bool = True,
    jobs: int | None = None,
    progress: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
    only: Sequence[Path | SourceFile] | None = None,
    within: Path | None = None,
    show_guarded: bool = False,
) -> RootRun:
    """Scan one root (or ``only`` the given files under it). The cache holds every rule's
    findings; selection, guards and aggregation apply afterwards (``show_guarded`` keeps
    findings in code that never runs on ROCm). ``jobs=0`` analyses in this process, for a caller
    that is a worker already; there, the files beyond ``only`` come from the cache or not at
    all (a file that crashes the parser would take the caller down with it)."""
    config = load_config(root)
    selection = Selection.merge(
        config,
        select=select,
        ignore=ignore,
        exclude=exclude,
        min_severity=min_severity,
        preview=preview,
        root=root,
        extend_select=extend_select,
        extend_ignore=extend_ignore,
    )
    sources, problems = _sources(root, selection, config, only, within)
    # The project is analysed whole (facts, import graph, guards, builds, folding of sites
    # across files; the other files mostly from the cache) whichever part of it is asked for,
    # so a file gives the same findings named alone, in its folder, from stdin or from an
    # editor's buffer as in a scan of the project.
    whole = (only or within) and _declares_a_project(root)
    model = _project_model(root, selection, config, sources) if whole else sources
    # the fix policy applies to scan too: a finding never advertises a fix `fix` would withhold
    texts = kernel_texts(model)
    facts = _with_kernel_macros(
        project_facts(root if root.is_dir() else root.parent), texts, root, model
    )
    facts_key = repr(facts).encode()
    cache = ResultCache(root) if use_cache else None
    # The cache holds every rule's findings so that a later scan with another selection can
    # reuse it; without the cache only the selected rules need to run.
    task_codes = None if use_cache else selection.codes(use_cache=False)
    # Rules whose every finding a project-level fact guards (a dependency the project is, or
    # declares at a ROCm-capable version) cannot change what a scan that hides guarded findings
    # shows: they are not run, and the cache keys say so.
    silenced = frozenset() if show_guarded else _silenced(model, facts, use_cache)
    silenced_key = f"~{','.join(sorted(silenced))}" if silenced else ""
    results: dict[str, FileResult] = {}
    tasks: list[_Task] = []
    keys: dict[str, str] = {}
    index = project_index(model)
    relatives = [source.relative for source in model]
    # files whose every finding settling guards (by path, or written on a CUDA-only toolkit)
    moot_files = MootFiles.find(relatives, index, root, texts)
    scope = {source.relative for source in sources}
    # a buffer (a file standing in for the project's own) is analysed but never cached
    buffers = {s.relative for s in sources if root.is_dir() and not s.path.is_relative_to(root)}
    for source in model:
        exports = index.slice_for(source.relative)
        moot = "" if show_guarded else moot_files.moot(source.relative)
        if cache is not None:
            try:
                data = read_regular(str(source.path), size_limit(source.kind))
            except (SkipFile, FailFile):
                data = None
            if data is not None:
                key = content_key(data + facts_key)  # findings depend on the declared versions
                if exports is not None:  # the file's findings depend on the modules it imports
                    key = f"{key}+{exports.fingerprint()}"
                key += silenced_key + (f"~moot:{moot}" if moot else "")
                keys[source.relative] = key
                cached = cache.get(source.relative, key, source.kind)
                if cached is not None:
                    results[source.relative] = cached
                    continue
        if jobs == 0 and source.relative not in scope:
            continue  # in this process: the rest of the project only as far as it is cached
        tasks.append(
            _Task(
                str(source.path),
                source.relative,
                source.kind,
                None,
                task_codes,
                prefilter,
                facts,
                exports=exports,
                silenced=silenced,
                moot=moot,
            )
        )
    if on_total:
        on_total(len(tasks))
    kinds = {task.relative: task.kind for task in tasks}
    for outcome in _execute_released(tasks, jobs, progress, config.file_timeout, index, model):
        results[outcome.relative] = outcome.result
        cacheable = outcome.relative not in buffers and outcome.result.status is not Status.FAILED
        if cache is not None and outcome.key and cacheable:
            key = keys.get(outcome.relative, outcome.key)
            cache.put(outcome.relative, key, kinds[outcome.relative], outcome.result)
    if cache is not None:
        cache.save(set(keys))
    ordered = [results[source.relative] for source in model if source.relative in results]
    files = settle(ordered, selection, relatives, show_guarded, facts, use_cache, index, moot_files)
    if model is not sources:  # part of the project analysed: its files are the answer
        files = [file for file in files if file.path in scope]
    files.extend(problems)
    files.extend(_unread_context(facts, files))
    return RootRun(root, ScanResult(str(root), files), config=config)


@dataclass(frozen=True, slots=True)
class Plan:
    """What a scan of one root would use, found without analysing anything (``--show-files``,
    ``--show-settings``)."""

    config: Config
    selection: Selection
    sources: list[SourceFile]


def plan(
    root: Path,
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    min_severity: Severity | None = None,
    preview: bool | None = None,
    extend_select: Sequence[str] = (),
    extend_ignore: Sequence[str] = (),
    only: Sequence[Path] | None = None,
    within: Path | None = None,
) -> Plan:
    """The configuration, the merged selection and the files ``scan`` would analyse for
    ``root`` with the same arguments (discovery and exclusions as a scan applies them)."""
    config = load_config(root)
    selection = Selection.merge(
        config,
        select=select,
        ignore=ignore,
        exclude=exclude,
        min_severity=min_severity,
        preview=preview,
        root=root,
        extend_select=extend_select,
        extend_ignore=extend_ignore,
    )
    sources, _ = _sources(root, selection, config, only, within)
    return Plan(config, selection, sources)


def scan_text(
    root: Path,
    relative: str,
    data: bytes,
    *,
    show_guarded: bool = False,
    use_cache: bool = True,
    isolated: bool = True,
    **chosen: Any,
) -> RootRun:
    """Scan ``data`` (stdin, an editor's buffer) as if it were the file ``relative`` under
    ``root``, through ``scan`` itself: the root's configuration, exclusions, project facts,
    guards and folding apply exactly as to that file in a scan of the project, so the editor,
    ``--stdin-filename`` and ``scan PATH`` give one answer. The bytes are written to a private
    temporary file that a worker reads like any other; the buffer's findings are never cached
    (they are not the file's). ``isolated=False``: analysed in this process, for a caller that
    is a worker already (the language server's), the rest of the project from the cache."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="migrate-buffer-") as directory:
        path = Path(directory) / "buffer"
        path.write_bytes(data)
        kind = file_kind(relative)
        only = [SourceFile(path, relative, kind)] if kind is not None else []
        return scan(
            root,
            **chosen,
            use_cache=use_cache,
            only=only,
            show_guarded=show_guarded,
            jobs=None if isolated else 0,
        )


def settle(
    results: Sequence[FileResult],
    selection: Selection,
    paths: Sequence[str],
    show_guarded: bool = False,
    facts: ProjectFacts | None = None,
    use_cache: bool = True,
    index: ProjectIndex | None = None,
    moot_files: MootFiles | None = None,
) -> list[FileResult]:
    """The findings a user sees, from every rule's findings of every file: the selection,
    file-level guards (platform-only files, NVIDIA variants with an AMD twin, modules written
    on a CUDA-only kernel toolkit, found from ``index``), project-level guards (a dependency
    the project is, or declares at a ROCm-capable version), guarded code hidden unless
    ``show_guarded``, and one finding per problem across the root (``moot_files``: the
    file-level guards, when the caller found them already)."""
    from migrator.engine.aggregate import aggregate
    from migrator.engine.kernel_folding import fold
    from migrator.engine.registry import catalog_entries, dependency_entries
    from migrator.files.paths import is_test_path
    from migrator.reach.callers import unguard_if_called_elsewhere
    from migrator.reach.cuda_only import rocm_path, settle_finding
    from migrator.reach.project import (
        MASK_TEST_INPUT,
        dependency_guard,
        own_packages,
        resolves_device_masks,
        uses_guard,
    )

    codes = selection.codes(use_cache)
    paths = list(paths)
    if moot_files is None:
        moot_files = MootFiles.find(paths, index)
    guarded_files = moot_files.guarded
    own = own_packages(paths)
    dependencies = dependency_entries(use_cache)
    mask_rules = (
        mask_rule_codes()
        if index is not None and resolves_device_masks(index.sources)
        else frozenset()
    )
    cuda_only = moot_files.cuda_only
    rocm = functools.cache(lambda: rocm_path(index, cuda_only) if index is not None else "")
    kept: list[Finding] = []
    for result in results:
        file_guard = guarded_files.get(result.path, "")
        for finding in result.findings:
            if not selection.keep(finding, codes):
                continue
            finding = selection.offered(finding)
            if finding.guard and index is not None:
                # before the file's own guard, which a dispatch guard must not hide once lifted
                finding = unguard_if_called_elsewhere(finding, index.sources)
            if file_guard and not finding.guard:
                finding = replace(finding, guard=file_guard)
            if finding.rule in mask_rules and not finding.guard and is_test_path(result.path):
                finding = replace(finding, guard=MASK_TEST_INPUT)
            if result.path in cuda_only:
                finding = settle_finding(finding, cuda_only, rocm)
            if finding.rule in KERNEL_SITE_RULES and not finding.guard:
                assembly = finding.rule in ASSEMBLY_RULES
                unused = moot_files.unused_at(result.path, finding.line, assembly)
                if unused:
                    finding = replace(finding, guard=unused)
            dependency, rocm_release = dependencies.get(finding.rule, (None, None))
            if dependency and not finding.guard:
                why = dependency_guard(dependency, rocm_release, own, facts)
                if why:
                    finding = replace(finding, guard=why)
            kept.append(finding)
    used = frozenset(finding.category for finding in kept if not finding.guard)
    ran = frozenset(category for code, _, category in catalog_entries(use_cache) if code in codes)
    kept = [
        replace(finding, guard=why)
        if not finding.guard and (why := uses_guard(finding, used, ran))
        else finding
        for finding in kept
    ]
    if not show_guarded:
        kept = [finding for finding in kept if not finding.guard]
    # kernel sites inside a CUTLASS port or an optional extension with no ROCm build: one
    # problem with it (``engine.kernel_folding``)
    kept = fold(kept, moot_files.kernels, index.sources if index is not None else {})
    by_path: dict[str, list[Finding]] = {}
    for finding in aggregate(kept):
        by_path.setdefault(finding.path, []).append(finding)
    return [replace(result, findings=tuple(by_path.get(result.path, ()))) for result in results]


def fix_tree(
    root: Path,
    *,
    level: Applicability = Applicability.SAFE,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    min_severity: Severity | None = None,
    preview: bool | None = None,
    extend_select: Sequence[str] = (),
    extend_ignore: Sequence[str] = (),
    write: bool = True,
    jobs: int | None = None,
    progress: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
    family: str | None = None,
    with_variants: bool = True,
) -> RootRun:
    """Compute (and with ``write``, apply atomically under the write policy of
    ``migrator.files.writer``) the fixes for one root; a file that may not be written keeps its text
    and its outcome says why. ``family``: only the rules of that category among those the
    selection chooses, the others' fixes as the selection has them (``pr``'s commit of one
    family: the category restricts, it does not name a hygiene rule). ``with_variants``: plan
    (and write) the ROCm siblings ``--unsafe-fixes`` adds (``pr`` commits them on their own)."""
    config = load_config(root)
    selection = Selection.merge(
        config,
        select=select,
        ignore=ignore,
        exclude=exclude,
        min_severity=min_severity,
        preview=preview,
        root=root,
        extend_select=extend_select,
        extend_ignore=extend_ignore,
    )
    codes = selection.codes()
    if family is not None:
        from migrator.engine.registry import catalog_entries

        codes &= frozenset(code for code, _, category in catalog_entries() if category == family)
    sources, problems = _sources(root, selection, config)
    texts = kernel_texts(sources)
    facts = _with_kernel_macros(
        project_facts(root if root.is_dir() else root.parent), texts, root, sources
    )
    from migrator.engine.registry import all_rules

    # the uses of a dependency the project is, or declares at a ROCm-capable version, are left
    # as they are
    codes = codes - _silenced(sources, facts, use_cache=True)
    index = project_index(sources)
    relatives = [source.relative for source in sources]
    # nor are files that never run on ROCm (an NVIDIA variant next to its AMD twin, a module
    # written on a CUDA-only toolkit); settling reads the same answers
    moot_files = MootFiles.find(relatives, index, root, texts)
    guarded_files = moot_files.guarded
    from migrator.files.paths import is_test_path
    from migrator.reach.project import resolves_device_masks

    # a test's CUDA_VISIBLE_DEVICES is input of the project's own mask resolver: no HIP copy
    mask_rules = mask_rule_codes() if resolves_device_masks(index.sources) else frozenset()
    from migrator.engine.formatter import detect_formatter

    formatter = detect_formatter(root if root.is_dir() else root.parent)
    tasks = [
        _Task(
            str(s.path),
            s.relative,
            s.kind,
            None if moot_files.moot(s.relative) else level,
            codes - mask_rules if codes is not None and is_test_path(s.relative) else codes,
            True,
            facts,
            index.slice_for(s.relative),
            formatter=formatter,
            selection=selection,
        )
        for s in sources
    ]
    if on_total:
        on_total(len(tasks))
    outcomes = _execute(tasks, jobs, progress, config.file_timeout)
    files = settle(
        [outcome.result for outcome in outcomes],
        selection,
        relatives,
        facts=facts,
        index=index,
        moot_files=moot_files,
    )
    variants = []
    if level is Applicability.UNSAFE and with_variants:
        rules = tuple(rule for rule in all_rules() if rule.code in codes)
        variants = _variants(root, sources, outcomes, guarded_files, rules, facts)
        from migrator.engine.variant_scope import runs_nothing_on_rocm, withhold_all

        withhold_all(variants, runs_nothing_on_rocm(root, index, moot_files.cuda_only))
    if write:
        write_outcomes(root, outcomes)
        from migrator.engine.variants import write_variants

        write_variants(root, variants)
    files.extend(problems)
    files.extend(_unread_context(facts, files))
    run = RootRun(
        root,
        ScanResult(str(root), files),
        outcomes=outcomes,
        config=config,
        variants=variants,
        formatter=formatter,
    )
    return run


def _work_on_bytes(
    data: bytes,
    relative: str,
    kind: str,
    level: Applicability | None,
    codes: frozenset[str] | None,
    facts: ProjectFacts | None = None,
    formatter: Formatter | None = None,
    selection: Selection | None = None,
) -> FileOutcome:
    """Analyse bytes that are no file on disk (stdin, an editor's buffer) as the file
    ``relative``: written to a private temporary file that the worker reads like any other."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="migrate-buffer-") as directory:
        path = Path(directory) / "buffer"
        path.write_bytes(data)
        task = _Task(str(path), relative, kind, level, codes, True, facts or ProjectFacts())
        return _work(replace(task, formatter=formatter, selection=selection))


def fix_text(
    root: Path, relative: str, data: bytes, level: Applicability
) -> tuple[str | None, tuple[Finding, ...]]:
    """The fixed text of ``data`` as the file ``relative`` under ``root`` (an editor's unsaved
    buffer), and the findings the fixes resolve; None when nothing changes. The root's
    configuration and project facts apply as in ``fix``; which files never run on ROCm (a
    project-wide question) is not asked here."""

    config = load_config(root)
    selection = Selection.merge(config, root=root)
    kind = file_kind(relative)
    if kind is None or is_excluded(relative, selection.exclude):
        return None, ()
    facts = project_facts(root if root.is_dir() else root.parent)
    from migrator.engine.formatter import detect_formatter

    formatter = detect_formatter(root if root.is_dir() else root.parent)
    outcome = _work_on_bytes(
        data, relative, kind, level, selection.codes(), facts, formatter, selection
    )
    if outcome.new_text is None or not outcome.fixed:
        return None, ()
    return outcome.new_text, tuple(outcome.fixed)


def _variants(
    root: Path,
    sources: Sequence[SourceFile],
    outcomes: Sequence[FileOutcome],
    guarded: Mapping[str, str],
    rules: tuple[type[Rule], ...],
    facts: ProjectFacts,
) -> list[Variant]:
    """ROCm siblings for the container files whose vendor swap fix withheld."""
    by_path = {outcome.relative: outcome for outcome in outcomes}
    from migrator.engine.variants import VARIANT_KINDS, plan_variant, sibling_name, wants_variant

    planned: list[Variant] = []
    for source in sources:
        outcome = by_path.get(source.relative)
        if source.kind not in VARIANT_KINDS or source.relative in guarded or outcome is None:
            continue
        if not wants_variant([finding.message for finding in outcome.result.findings]):
            continue
        target = sibling_name(source.relative)
        if os.path.lexists(root / target):
            planned.append(
                Variant(source.relative, target, reason=f"{target} exists; left as it is")
            )
            continue
        try:
            text = decode_text(read_regular(str(source.path))).text
        except (SkipFile, FailFile):
            continue
        variant = plan_variant(source.relative, source.kind, text, rules, facts)
        if variant is not None:
            planned.append(variant)
    return _consistent(root, planned, by_path)


def _consistent(
    root: Path, planned: list[Variant], by_path: Mapping[str, FileOutcome]
) -> list[Variant]:
    """The planned variants, each pointing at the siblings of the files it includes (``-r``),
    with none written where an included file still installs NVIDIA builds, nor where the
    variants of the project would use different ROCm releases."""
    from migrator.engine.variants import include_problem, rocm_versions_across, wants_variant
    from migrator.model import Severity

    def needs_rocm(relative: str) -> str | None:
        outcome = by_path.get(relative)
        if outcome is None:
            return None
        messages = [finding.message for finding in outcome.result.findings]
        blocking = [f for f in outcome.result.findings if f.severity >= Severity.WARNING]
        if wants_variant(messages) or blocking:
            first = (blocking or list(outcome.result.findings))[0]
            return f"has line {first.line} {first.rule} ({first.message.split(';')[0]})"
        return None

    siblings = {v.original: v.relative for v in planned if v.text is not None}
    for variant in planned:
        if variant.text is None:
            continue
        problem = include_problem(root, variant, needs_rocm, siblings)
        if problem:
            variant.text, variant.reason = None, problem
            siblings.pop(variant.original, None)
    disagreement = rocm_versions_across(planned)
    if disagreement:
        for variant in planned:
            if variant.text is not None:
                variant.text, variant.reason = None, disagreement
    return planned


def write_outcomes(root: Path, outcomes: Sequence[FileOutcome]) -> None:
    """Write every fixed text under ``migrator.files.writer``'s policy; a file that may not be
    written (symlink, outside the root, edited since it was read, unwritable) keeps its text and
    its outcome's ``write_error`` says why."""
    from migrator.files.writer import WriteRefused, write_checked

    for outcome in outcomes:
        if outcome.new_text is None or outcome.error is not None:
            continue
        try:
            write_checked(root, outcome.relative, outcome.new_text, outcome.encoding, outcome.key)
        except WriteRefused as refused:
            outcome.write_error = str(refused)


def mask_rule_codes() -> frozenset[str]:
    """The rules that report a CUDA_VISIBLE_DEVICES set without its HIP counterpart."""
    from migrator.engine.registry import all_rules

    return frozenset(
        rule.code for rule in all_rules() if rule.name.endswith("cuda-visible-devices-without-hip")
    )
