"""Run per-file work in worker processes so that one file cannot end the run: a worker that
dies (a native parser's SIGSEGV, the out-of-memory killer) or overruns the per-file time budget
costs that file only and is replaced, and every worker exits when its parent dies."""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: Seconds one file may take (parse, rules, fixes) before its worker is killed.
DEFAULT_FILE_BUDGET = 60.0

#: How often an idle worker checks that its parent is still alive.
_PARENT_CHECK_S = 0.5

#: Allocations between two young-generation collections in a worker. A file's trees are freed
#: by reference counting once it is analysed (the engine breaks their cycles), so collections
#: find little garbage and mostly traverse live trees: fewer of them cost less.
_GC_THRESHOLD = 200_000


def _die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (PR_SET_PDEATHSIG); elsewhere the
    idle loop's parent check does the same job a little later."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError, TypeError):
        pass


def _trim_heap() -> None:
    """Hand the C heap's free pages back to the system (glibc's ``malloc_trim``), after a
    collection and before forking workers that would otherwise map them too."""
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError, TypeError):
        pass


def _serve(connection: Connection, function: Callable[[Any], Any], parent: int) -> None:
    """A worker's loop: receive a task, send back its result; exit when the parent is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    _die_with_parent()
    # A parse allocates hundreds of thousands of acyclic nodes: collecting every 700
    # allocations (the default) costs about a tenth of a worker's time and frees nothing.
    gc.set_threshold(_GC_THRESHOLD, 20, 20)
    while True:
        if os.getppid() != parent:
            os._exit(0)
        try:
            if not connection.poll(_PARENT_CHECK_S):
                continue
            task = connection.recv()
        except (EOFError, OSError):
            os._exit(0)
        try:
            result = function(task)
        except Exception as error:  # not a file's fault (those are caught by ``function``)
            result = _Raised(type(error).__name__, str(error).splitlines()[0] if str(error) else "")
        try:
            connection.send(result)
        except (BrokenPipeError, EOFError, OSError):
            os._exit(0)


#: Whether ``settle_process`` froze this process's objects. A flag, not
#: ``gc.get_freeze_count()``: that walks every frozen object (10 to 30 ms in a Ray worker
#: holding 100,000, twice per unit, a tenth of a fleet unit's CPU time).
_settled = False


def settle_process() -> None:
    """Collect, then freeze every object this process holds now (its imports, the rules,
    warmed caches) out of the cyclic collector's reach, once: a process that scans many
    projects in turn (a fleet worker) then pays, for each of the collections around a scan,
    only for that scan's own objects, not for the tens of thousands it keeps for its
    lifetime (half a unit's CPU time before, more in a Ray worker, which holds twice as many)."""
    global _settled
    if not _settled:
        gc.collect()
        gc.freeze()
        _settled = True


def process_settled() -> bool:
    """Whether ``settle_process`` has frozen this process's long-lived objects (in constant
    time, unlike ``gc.get_freeze_count``)."""
    return _settled


def workers_fork() -> bool:
    """Whether workers are forked (POSIX): they then start with a copy of the parent's memory."""
    return os.name == "posix"


class WorkerError(Exception):
    """The per-file function raised in a worker: a bug of ours, not a file's fault."""


class _Raised:
    """What a worker sends back instead of a result when the function raised."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        self.message = message


class _Worker:
    """One worker process and the task it is working on."""

    def __init__(self, context: Any, function: Callable[[Any], Any]) -> None:
        parent_end, child_end = context.Pipe(duplex=True)
        self.process = context.Process(
            target=_serve, args=(child_end, function, os.getpid()), daemon=True
        )
        self.process.start()
        child_end.close()
        self.connection: Connection = parent_end
        self.index: int | None = None
        self.deadline = 0.0

    def give(self, index: int, task: Any, budget: float) -> None:
        self.index = index
        self.deadline = time.monotonic() + budget
        self.connection.send(task)

    def stop(self) -> None:
        """Kill the process at once (it may be stuck in native code) and reap it."""
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=5)
        self.connection.close()


def crash_reason(exitcode: int | None) -> str:
    """A one-line reason for a worker that died while analysing a file."""
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"analysis crashed ({name}); file not analysed"
    return f"analysis process exited unexpectedly (status {exitcode}); file not analysed"


class IsolatedRunner(Generic[T, R]):
    """Maps ``function`` over tasks in worker processes, one file per task, with a time budget."""

    def __init__(
        self,
        function: Callable[[T], R],
        on_failure: Callable[[T, str], R],
        *,
        workers: int,
        budget: float = DEFAULT_FILE_BUDGET,
    ) -> None:
        self.function = function
        self.on_failure = on_failure
        self.workers = max(1, workers)
        self.budget = budget
        self.context = multiprocessing.get_context("fork" if workers_fork() else "spawn")

    def run(self, tasks: Sequence[T], progress: Callable[[int], None] | None = None) -> list[R]:
        """Results in task order; a crashed or overrunning task gets ``on_failure``'s result."""
        results: dict[int, R] = {}
        pending = list(range(len(tasks)))
        pending.reverse()
        pool: list[_Worker] = []
        # What the parent has loaded stays shared with the forked workers: a collection in a
        # worker would otherwise touch (and so copy) every page of it. A process that froze
        # its long-lived objects itself (``settle_process``) keeps them frozen: thawing them
        # would make every later collection traverse them again.
        outer_freeze = process_settled()
        gc.collect()
        _trim_heap()
        if not outer_freeze:
            gc.freeze()
        try:
            for _ in range(min(self.workers, len(tasks))):
                pool.append(_Worker(self.context, self.function))
            for worker in pool:
                if pending:
                    index = pending.pop()
                    worker.give(index, tasks[index], self.budget)
            while len(results) < len(tasks):
                busy = [worker for worker in pool if worker.index is not None]
                timeout = max(0.0, min(worker.deadline for worker in busy) - time.monotonic())
                ready = wait(
                    [w.connection for w in busy] + [w.process.sentinel for w in busy],
                    timeout=timeout,
                )
                now = time.monotonic()
                for position, worker in enumerate(pool):
                    if worker.index is None:
                        continue
                    index = worker.index
                    outcome: R | None = None
                    replace = False
                    if worker.connection in ready or worker.process.sentinel in ready:
                        try:
                            if worker.connection.poll():
                                outcome = worker.connection.recv()
                                if isinstance(outcome, _Raised):
                                    raise WorkerError(f"{outcome.kind}: {outcome.message}")
                            else:
                                raise EOFError
                        except (EOFError, OSError):
                            worker.process.join(timeout=5)
                            outcome = self.on_failure(
                                tasks[index], crash_reason(worker.process.exitcode)
                            )
                            replace = True
                    elif now >= worker.deadline:
                        outcome = self.on_failure(
                            tasks[index],
                            f"analysis took longer than the per-file time budget of "
                            f"{self.budget:g} s; file not analysed",
                        )
                        replace = True
                    if outcome is None:
                        continue
                    results[index] = outcome
                    worker.index = None
                    if progress:
                        progress(1)
                    if replace:
                        worker.stop()
                        if not pending:
                            continue
                        worker = _Worker(self.context, self.function)
                        pool[position] = worker
                    if pending:
                        next_index = pending.pop()
                        worker.give(next_index, tasks[next_index], self.budget)
        finally:
            for worker in pool:
                worker.stop()
            if not outer_freeze:
                gc.unfreeze()
        return [results[index] for index in range(len(tasks))]


class ResidentWorker(Generic[T, R]):
    """One worker process kept warm between calls, for a long-lived process that analyses one
    file at a time (the language server's buffers): a call that crashes the worker or overruns
    the budget gets ``on_failure``'s result, and the next call starts a fresh worker.

    On POSIX the worker is forked: call only while the process runs a single thread (a thread
    holding a lock at the fork, such as a blocked read of stdin, leaves it held in the worker)."""

    def __init__(
        self,
        function: Callable[[T], R],
        on_failure: Callable[[T, str], R],
        *,
        budget: float = DEFAULT_FILE_BUDGET,
    ) -> None:
        self.function = function
        self.on_failure = on_failure
        self.budget = budget
        self.context = multiprocessing.get_context("fork" if workers_fork() else "spawn")
        self._worker: _Worker | None = None

    def call(self, task: T, budget: float | None = None) -> R:
        """``function(task)`` in the worker, or ``on_failure``'s result with a one-line reason
        when the worker dies or takes longer than ``budget`` seconds (``self.budget`` if None).
        Raises WorkerError when ``function`` raised (a bug of ours, not the file's fault)."""
        limit = self.budget if budget is None else budget
        worker = self._worker
        if worker is None or not worker.process.is_alive():
            if worker is not None:
                worker.stop()
            worker = self._worker = _Worker(self.context, self.function)
        try:
            worker.give(0, task, limit)
        except (BrokenPipeError, EOFError, OSError):  # it died between two calls
            return self._failed(task, worker)
        while True:
            remaining = worker.deadline - time.monotonic()
            if remaining <= 0:
                self._retire()
                return self.on_failure(
                    task,
                    f"analysis took longer than the per-file time budget of {limit:g} s; "
                    "file not analysed",
                )
            ready = wait([worker.connection, worker.process.sentinel], timeout=remaining)
            if not ready:
                continue
            try:
                if not worker.connection.poll():
                    raise EOFError
                outcome = worker.connection.recv()
            except (EOFError, OSError):
                return self._failed(task, worker)
            worker.index = None
            if isinstance(outcome, _Raised):
                raise WorkerError(f"{outcome.kind}: {outcome.message}")
            result: R = outcome
            return result

    def _failed(self, task: T, worker: _Worker) -> R:
        worker.process.join(timeout=5)
        reason = crash_reason(worker.process.exitcode)
        self._retire()
        return self.on_failure(task, reason)

    def _retire(self) -> None:
        if self._worker is not None:
            self._worker.stop()
            self._worker = None

    def close(self) -> None:
        """Stop the worker (a later call starts another)."""
        self._retire()
