"""The language server's analysis of one buffer, run in a warm worker process as ``scan`` runs
each file (``engine.isolation``): a buffer that crashes the native parser or overruns the
per-file time budget costs that buffer only, reported in one line, and the server goes on."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from migrator.engine.isolation import DEFAULT_FILE_BUDGET, ResidentWorker, WorkerError
from migrator.errors import MigrateError
from migrator.model import Applicability, Finding, Status

#: The longest one buffer's analysis may take, whatever the project's ``file-timeout`` says: the
#: server answers nothing else meanwhile, and a project may set a day.
MAX_BUFFER_BUDGET = DEFAULT_FILE_BUDGET


@dataclass(frozen=True, slots=True)
class BufferTask:
    """One buffer to analyse as the file ``relative`` under ``root``: its findings, or (with
    ``fixes``) the texts ``migrate fix`` would make of it."""

    root: Path
    relative: str
    data: bytes
    fixes: bool = False


@dataclass(frozen=True, slots=True)
class BufferAnalysis:
    """What the worker found in a buffer."""

    findings: tuple[Finding, ...] = ()
    #: why the buffer was not analysed, or not whole (a crash, the budget, deep nesting)
    failure: str = ""
    #: why the buffer was skipped (undecodable, too large)
    skipped: str = ""
    #: the project's configuration cannot be read: the one-line reason
    config_error: str = ""
    #: (level, fixed text, the findings its fixes resolve), for each level that changes the text
    fixes: tuple[tuple[Applicability, str, tuple[Finding, ...]], ...] = ()


def analyse(task: BufferTask) -> BufferAnalysis:
    """Analyse one buffer (in the worker): ``scan``'s findings, or ``fix``'s texts."""
    from migrator.engine.runner import fix_text, scan_text

    try:
        if task.fixes:
            fixes = []
            for level in (Applicability.SAFE, Applicability.UNSAFE):
                text, fixed = fix_text(task.root, task.relative, task.data, level)
                if text is not None:
                    fixes.append((level, text, fixed))
            return BufferAnalysis(fixes=tuple(fixes))
        run = scan_text(task.root, task.relative, task.data, isolated=False)
    except MigrateError as error:  # the project's configuration, read again here
        return BufferAnalysis(config_error=str(error))
    findings = tuple(finding for file in run.scan.files for finding in file.findings)
    failed = [file.reason for file in run.scan.files if file.status is Status.FAILED]
    skipped = [file.reason for file in run.scan.files if file.status is Status.SKIPPED]
    return BufferAnalysis(
        findings, failure="; ".join(failed), skipped="; ".join(f"skipped: {r}" for r in skipped)
    )


def _failed(task: BufferTask, reason: str) -> BufferAnalysis:
    return BufferAnalysis(failure=reason)


def _load_engine() -> None:
    """Import the engine, the rules and libcst here, once, so that every worker forked from
    this process starts with them loaded (a worker replaced after a crash is ready at once)."""
    from migrator.engine import fix_policy, runner  # noqa: F401
    from migrator.engine.engine import analyze  # noqa: F401
    from migrator.engine.registry import all_rules

    all_rules()


class Analyst:
    """Runs each buffer's analysis in one warm worker process, within a time budget."""

    def __init__(self) -> None:
        self._worker: ResidentWorker[BufferTask, BufferAnalysis] = ResidentWorker(analyse, _failed)
        self._loaded = False

    def run(self, task: BufferTask, budget: float) -> BufferAnalysis:
        """The analysis of ``task``, or the one-line reason the worker gave none."""
        if not self._loaded:
            _load_engine()
            self._loaded = True
        try:
            return self._worker.call(task, min(budget, MAX_BUFFER_BUDGET))
        except WorkerError as error:  # a bug of ours: that buffer's analysis is lost, not more
            return BufferAnalysis(failure=f"internal error ({error}); file not analysed")
        except OSError as error:  # no process could be started (out of memory, process limit)
            reason = error.strerror or type(error).__name__
            return BufferAnalysis(failure=f"no analysis process ({reason}); file not analysed")

    def close(self) -> None:
        self._worker.close()
