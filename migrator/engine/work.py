"""One file's analysis as a task (its path, kind, rules, facts, export slice, fix level) and
the execution of a run's tasks in isolated worker processes: a crash or a runaway file costs
that file only."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from migrator.engine.isolation import DEFAULT_FILE_BUDGET, IsolatedRunner, workers_fork
from migrator.engine.moot import _unmoot
from migrator.engine.outcomes import FileOutcome
from migrator.engine.project_model import _python_texts
from migrator.engine.selection import Selection
from migrator.engine.suppress import SUPPRESSION_MARK
from migrator.files.discovery import SourceFile
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
from migrator.knowledge.versions import ProjectFacts
from migrator.model import Applicability, FileResult, Finding, Status
from migrator.syntax.reexports import ExportSlice, ProjectIndex

if TYPE_CHECKING:
    # Imported where used: they load libcst, which a warm scan never needs.
    from migrator.engine.context import FileInputs
    from migrator.engine.formatter import Formatter

#: Below this many files to analyse, worker processes cost more than they save.
PARALLEL_THRESHOLD = 24


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


def _work(task: _Task) -> FileOutcome:
    """Analyse one file with its project's inputs (``FileInputs``: facts, export slice,
    formatter, the selection's fixes) handed to the engine explicitly, so in-process runs of
    several roots never see each other's."""
    return _analyse(task)


def _inputs(task: _Task) -> FileInputs:
    """What the analysis of ``task`` reads beyond the file's text."""
    from migrator.engine.context import FileInputs

    # a scan offers every fix a rule has
    chosen = None if task.selection is None or task.fix is None else task.selection.fixes
    return FileInputs(task.facts, task.exports, task.formatter, chosen)


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
            decoded.text,
            task.relative,
            task.kind,
            rules,
            fix=task.fix,
            prefilter=task.prefilter,
            inputs=_inputs(task),
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
