"""Running a fleet's units: plan them (resolve each repository's commit or content digest, skip
the units whose result is stored), run the rest as Ray tasks (scan units on CPUs, verification
units on a GPU) with bounded retries, store each result as it arrives and show progress. A
serial engine runs the same units in this process, for comparison and for debugging."""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from migrator.errors import MigrateError
from migrator.fleet.manifest import RepoSpec
from migrator.fleet.store import Store, result_key
from migrator.fleet.unit import FAULT_VARIABLE, SCAN, VERIFY, Unit, run_unit
from migrator.process.helper import HOME

INSTALL_HINT = "migrate fleet needs Ray: pip install 'migrate-rocm[fleet]'"


@dataclass(slots=True)
class Planned:
    """The units of a fleet: those to run, those whose result is stored, those that failed
    before they could start (a ref that cannot be resolved)."""

    units: list[Unit] = field(default_factory=list)
    todo: list[Unit] = field(default_factory=list)
    reused: list[Unit] = field(default_factory=list)
    failed: list[tuple[Unit, str]] = field(default_factory=list)


def _commit(spec: RepoSpec, max_bytes: int, attempts: int) -> tuple[str, str]:
    """(commit or content digest, "") or ("", reason) after ``attempts`` tries."""
    from migrator.fleet import checkout

    reason = ""
    for _ in range(max(1, attempts)):
        try:
            if spec.is_git:
                return checkout.resolve_commit(spec.source, spec.ref), ""
            return checkout.content_digest(Path(spec.source), max_bytes), ""
        except (checkout.CheckoutError, OSError) as error:
            reason = str(error)
            if not spec.is_git:
                break
    return "", reason


def plan(
    repos: Sequence[RepoSpec],
    store: Store,
    *,
    timeout: float = 600.0,
    max_bytes: int = 500 * 2**20,
    retries: int = 2,
    force: bool = False,
) -> Planned:
    """Every unit of the fleet, keyed; a unit whose result is stored is reused unless ``force``."""
    fault = os.environ.get(FAULT_VARIABLE, "")
    with ThreadPoolExecutor(max_workers=16) as pool:
        commits = list(pool.map(lambda spec: _commit(spec, max_bytes, retries + 1), repos))
    planned = Planned()
    for spec, (commit, reason) in zip(repos, commits, strict=True):
        stages = [SCAN, VERIFY] if spec.verify else [SCAN]
        for stage in stages:
            key = result_key(spec.source, commit or f"unresolved:{spec.ref}", stage, spec.options())
            unit = Unit(spec, commit, key, stage, timeout, max_bytes, fault)
            planned.units.append(unit)
            if reason:
                planned.failed.append((unit, f"cannot fetch: {reason}"))
            elif store.done(spec.name, key) and not force:
                planned.reused.append(unit)
            else:
                planned.todo.append(unit)
    return planned


class Progress:
    """Units done, failed, running and queued, with the time left, on stderr: one line kept
    up to date on a terminal, a line every few seconds elsewhere (CI logs)."""

    def __init__(self, total: int, reused: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.reused = reused
        self.done = 0
        self.failed = 0
        self.running = 0
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.monotonic()
        self._last = 0.0
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def line(self) -> str:
        """The progress line as it stands."""
        finished = self.done + self.failed
        left = self.total - finished
        elapsed = time.monotonic() - self.start
        eta = f"~{_duration(elapsed / finished * left)} left" if finished and left else ""
        queued = max(0, left - self.running)
        parts = [
            f"fleet: {finished + self.reused}/{self.total + self.reused} units",
            f"{self.done} done",
            f"{self.reused} reused",
            f"{self.failed} failed",
            f"{self.running} running",
            f"{queued} queued",
        ]
        return ", ".join(parts) + (f", {eta}" if eta else "")

    def show(self, force: bool = False) -> None:
        """Print the line (rate-limited unless ``force``)."""
        now = time.monotonic()
        if not force and now - self._last < (0.2 if self._tty else 5.0):
            return
        self._last = now
        if self._tty:
            self.stream.write("\r\033[K" + self.line())
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    def close(self) -> None:
        """The final line."""
        self.show(force=True)
        if self._tty:
            self.stream.write("\n")
            self.stream.flush()


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def _failure(unit: Unit, reason: str, attempts: int) -> dict[str, Any]:
    return {
        "name": unit.spec.name,
        "source": unit.spec.shown,
        "ref": unit.spec.ref,
        "commit": unit.commit,
        "stage": unit.stage,
        "key": unit.key,
        "reason": " ".join(reason.split())[:500],
        "attempts": attempts,
        "time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def _store_result(store: Store, unit: Unit, result: dict[str, Any], attempts: int | None) -> None:
    meta = dict(result["meta"])
    meta["attempts"] = attempts
    store.write(unit.spec.name, unit.key, result["files"], meta)


def run_serial(
    units: Sequence[Unit], store: Store, progress: Progress, retries: int = 2
) -> list[dict[str, Any]]:
    """Run units one after another in this process (no Ray); failures after ``retries``."""
    failures = []
    for unit in units:
        progress.running = 1
        progress.show()
        reason = ""
        for _attempt in range(retries + 1):
            try:
                result = run_unit(unit)
            except Exception as error:  # noqa: BLE001 - a unit's failure is recorded, not raised
                reason = f"{type(error).__name__}: {error}"
                continue
            _store_result(store, unit, result, _attempt + 1)
            progress.done += 1
            break
        else:
            record = _failure(unit, reason, retries + 1)
            store.write_failure(unit.spec.name, unit.key, record)
            failures.append(record)
            progress.failed += 1
    progress.running = 0
    return failures


#: Seconds a local Ray instance costs before and after its units on a small machine: starting
#: its daemons and workers (4 to 9 s on 2 cores, docs/fleet.md) and stopping them (about 2 s).
RAY_FIXED_SECONDS = 8.0
#: Seconds of one unit when the results folder holds none measured: a scan with its report of
#: a small real repository (the dev corpus: 0.3 to 1.6 s, beyond the larger ones).
DEFAULT_UNIT_SECONDS = 1.0
#: Share of each CPU a local Ray instance's units get (its daemons and driver take the rest).
RAY_EFFICIENCY = 0.85


@dataclass(frozen=True, slots=True)
class Choice:
    """Where a fleet without ``--address`` runs, and the estimates that chose it."""

    engine: str  # "ray" or "serial"
    units: int
    cpus: int
    serial_seconds: float
    ray_seconds: float

    def line(self) -> str:
        """The stderr line that tells the user which is faster and how to choose the other."""
        serial = f"about {_duration(self.serial_seconds)}"
        ray = f"about {_duration(self.ray_seconds)} on {self.cpus} CPU{'s' * (self.cpus != 1)}"
        if self.engine == "serial":
            return (
                f"fleet: {self.units} units in this process, {serial} (a local Ray instance: "
                f"{ray}); --engine ray to use Ray anyway"
            )
        return (
            f"fleet: {self.units} units on a local Ray instance, {ray} (in this process: {serial})"
        )


def measured_unit_seconds(results: Path, limit: int = 400) -> list[float]:
    """The ``seconds`` of units stored in the results folder (at most ``limit`` read)."""
    seconds = []
    for path in sorted(results.glob("units/*/*/unit.json"))[:limit]:
        try:
            value = json.loads(path.read_text(encoding="utf-8")).get("seconds")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(value, (int, float)) and value > 0:
            seconds.append(float(value))
    return seconds


def choose_engine(units: int, cpus: int, measured: Sequence[float]) -> Choice:
    """In this process or on a local Ray instance, whichever is expected to finish first: the
    units one after another, against Ray's fixed cost plus the units spread over ``cpus``. A
    unit's seconds are the median of those measured in the results folder, else
    ``DEFAULT_UNIT_SECONDS``. One CPU never gains from Ray; 16 units of a second on 2 CPUs
    stay here (as the issue measured: 7 to 15 s in one process, 22 to 39 s on Ray), 200 go to
    Ray."""
    per_unit = statistics.median(measured) if measured else DEFAULT_UNIT_SECONDS
    serial = units * per_unit
    ray = RAY_FIXED_SECONDS + serial / (max(cpus, 1) * RAY_EFFICIENCY)
    return Choice("ray" if ray < serial else "serial", units, cpus, serial, ray)


def import_ray() -> Any:
    """Ray, or MigrateError with the line that says how to install it."""
    try:
        import ray
    except ImportError:
        raise MigrateError(INSTALL_HINT) from None
    return ray


def _reason(error: BaseException) -> str:
    """One line on why a Ray task failed: the unit's own exception, or what Ray says happened
    to its worker or node."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, BaseException):
        first = str(cause).strip().splitlines()
        return f"{type(cause).__name__}: {first[0] if first else ''}"
    name = type(error).__name__
    if name in ("WorkerCrashedError", "ActorDiedError"):
        return "worker process died (killed or crashed)"
    if name in ("NodeDiedError", "ObjectLostError", "OwnerDiedError"):
        return f"node lost: {name}"
    first = str(error).strip().splitlines()
    return f"{name}: {first[0] if first else ''}"


def _task(unit: Unit) -> dict[str, Any]:
    """The Ray task: run the unit and name the Ray node it ran on."""
    import ray

    result = run_unit(unit)
    result["meta"]["node"] = ray.get_runtime_context().get_node_id()
    return result


def run_ray(
    units: Sequence[Unit],
    store: Store,
    progress: Progress,
    *,
    address: str | None = None,
    num_cpus: int | None = None,
    retries: int = 2,
    on_connect: Callable[[dict[str, float]], None] | None = None,
    then: Callable[[], None] | None = None,
) -> list[dict[str, Any]]:
    """Run units as Ray tasks on a local instance (started here, stopped at the end) or on the
    cluster at ``address``; every result is stored as it arrives, so an interruption loses only
    the units in flight. ``then`` runs once every unit is done, before a local instance is
    stopped (the report is built while Ray's processes exit). Returns the failure records."""
    ray = import_ray()
    # Ray's driver prints its workers' and raylet's messages ("Task failed, retrying") on
    # stdout, where the report may be going: they go to stderr, with the progress.
    with contextlib.redirect_stdout(sys.stderr):
        return _run_ray(ray, units, store, progress, address, num_cpus, retries, on_connect, then)


@contextlib.contextmanager
def working_directory(folder: Path) -> Iterator[None]:
    """Run the block with ``folder`` as this process's working directory."""
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def local_instance_options(num_cpus: int) -> dict[str, Any]:
    """``ray.init`` options of a local instance for fleet units: a new instance (never the last
    one ``ray start`` left on this machine) with ``num_cpus`` CPUs, whose workers run at normal
    priority. At Ray's default worker niceness (15) the units would yield to every other
    process of a busy machine, where a serial run would not: a 20-second fleet took minutes
    beside two busy processes."""
    return {"address": "local", "num_cpus": num_cpus, "_system_config": {"worker_niceness": 0}}


def _run_ray(
    ray: Any,
    units: Sequence[Unit],
    store: Store,
    progress: Progress,
    address: str | None,
    num_cpus: int | None,
    retries: int,
    on_connect: Callable[[dict[str, float]], None] | None,
    then: Callable[[], None] | None,
) -> list[dict[str, Any]]:
    started = False
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "logging_level": "ERROR",
        }
        if address:
            kwargs["address"] = address
        else:
            kwargs.update(local_instance_options(num_cpus or os.cpu_count() or 1))
        # Ray puts the driver's working directory on every worker's sys.path (and a local
        # instance's processes inherit it): started from the folder migrate's own package is
        # imported from (already on that path), never from a project.
        with working_directory(Path(HOME)):
            try:
                ray.init(**kwargs)
            except Exception as error:  # noqa: BLE001 - joining a cluster fails in one line
                if not address:
                    raise
                from migrator.fleet.connect import init_error

                raise init_error(error, address) from None
        started = True
    try:
        resources = ray.cluster_resources()
        if on_connect:
            on_connect(resources)
        failures = _drive(ray, units, store, progress, retries, resources)
        if started and then:
            # Stopping a local instance waits about a second for its processes to exit:
            # the report is built meanwhile.
            import threading

            stopping = threading.Thread(target=ray.shutdown, name="ray-shutdown")
            stopping.start()
            started = False
            then()
            stopping.join()
        elif then:
            then()
        return failures
    finally:
        if started:
            ray.shutdown()


def stuck_after(timeout: float) -> float:
    """Seconds after which the driver kills a unit still running: its own timer (``timeout``)
    should have ended it before; past this, it is stuck where the timer cannot reach (native
    code, a blocked signal) and its worker is killed."""
    return timeout + max(5.0, timeout / 4)


#: Scan units in flight per CPU. The one beyond the running unit waits in the queue of Ray's
#: driver-side task submitter, which hands it to the worker the moment the worker's unit ends
#: (reusing the worker's lease); with one per CPU, each worker also waited between two units
#: for this loop to wake up, submit the next unit and get a new lease from the raylet, and the
#: driver is slowest to wake when the machine is busiest.
DEPTH = 2


@dataclass(slots=True)
class _InFlight:
    """A unit submitted to Ray: how many attempts it had before, when it started running (as
    far as the driver can tell; None while it waits in Ray's queue), whether it was killed."""

    unit: Unit
    attempts_before: int = 0
    since: float | None = None
    killed: bool = False


class _Window:
    """Which submitted scan units are running. Ray starts the tasks of one kind in the order
    they were submitted, as workers free up, so of the scan units in flight the oldest ones,
    as many as there are CPUs for them, are running; each is deemed to start when it enters
    that window (when the driver learns that the unit before it ended: a few milliseconds
    after it really started, never before), and the stuck-unit check counts from then."""

    def __init__(self) -> None:
        self.order: list[Any] = []

    def add(self, ref: Any) -> None:
        self.order.append(ref)

    def remove(self, ref: Any) -> None:
        if ref in self.order:
            self.order.remove(ref)

    def advance(self, pending: dict[Any, _InFlight], slots: int, now: float) -> None:
        """Mark the oldest ``slots`` units in flight as running from ``now`` if they were not
        (none while verification units hold every CPU)."""
        for ref in self.order[: max(0, slots)]:
            flight = pending[ref]
            if flight.since is None:
                flight.since = now


def _drive(
    ray: Any,
    units: Sequence[Unit],
    store: Store,
    progress: Progress,
    retries: int,
    resources: dict[str, float],
) -> list[dict[str, Any]]:
    remote = ray.remote(_task)
    scan_options = {"num_cpus": 1, "max_retries": 0, "retry_exceptions": False}
    scan_task = remote.options(**scan_options)
    verify_task = remote.options(**scan_options, num_gpus=1)
    cpus = max(1, int(resources.get("CPU", 1)))
    gpus = int(resources.get("GPU", 0))
    failures: list[dict[str, Any]] = []
    # (unit, attempts it had before), the next one last; a unit to retry goes last, next
    scans = [(unit, 0) for unit in reversed(units) if unit.stage != VERIFY]
    verifications = [(unit, 0) for unit in reversed(units) if unit.stage == VERIFY]
    pending: dict[Any, _InFlight] = {}
    window = _Window()

    def fail(unit: Unit, reason: str, attempts: int) -> None:
        record = _failure(unit, reason, attempts)
        store.write_failure(unit.spec.name, unit.key, record)
        failures.append(record)
        progress.failed += 1

    def verifying() -> int:
        return sum(1 for flight in pending.values() if flight.unit.stage == VERIFY)

    def refill() -> None:
        # Retries are the driver's, not Ray's: each attempt's time running is its own, and the
        # attempts recorded are exact. Verification units: as many in flight as there are
        # GPUs, each running from its submission. Scan units: DEPTH per CPU left to them.
        now = time.monotonic()
        while verifications and verifying() < gpus and len(pending) < cpus * DEPTH:
            unit, before = verifications.pop()
            pending[verify_task.remote(unit)] = _InFlight(unit, before, now)
        while scans and len(pending) < cpus * DEPTH:
            unit, before = scans.pop()
            ref = scan_task.remote(unit)
            pending[ref] = _InFlight(unit, before)
            window.add(ref)
        window.advance(pending, cpus - verifying(), now)

    if not gpus:
        for unit, _ in verifications:
            fail(unit, "no GPU node in the Ray cluster (verify needs one)", 0)
        verifications.clear()
    while scans or verifications or pending:
        refill()
        progress.running = min(len(pending), cpus)
        progress.show()
        if not pending:
            continue
        ready, rest = ray.wait(list(pending), num_returns=1, timeout=0.5)
        if ready and rest:  # every other unit that is done as well, without waiting
            ready += ray.wait(rest, num_returns=len(rest), timeout=0)[0]
        done = [(ref, pending.pop(ref)) for ref in ready]
        for ref, _ in done:
            window.remove(ref)
        refill()
        for ref, flight in done:
            unit, attempts = flight.unit, flight.attempts_before + 1
            try:
                result = ray.get(ref)
            except Exception as error:  # noqa: BLE001 - retried, then recorded as its failure
                if attempts <= retries:
                    (verifications if unit.stage == VERIFY else scans).append((unit, attempts))
                elif flight.killed:
                    reason = (
                        f"took longer than its time budget of {unit.timeout:g} s and did not "
                        f"stop: its worker was killed after {stuck_after(unit.timeout):g} s"
                    )
                    fail(unit, reason, attempts)
                else:
                    fail(unit, _reason(error), attempts)
                continue
            _store_result(store, unit, result, attempts)
            progress.done += 1
        now = time.monotonic()
        for ref, flight in pending.items():
            if flight.since is None or flight.killed:
                continue
            if now - flight.since > stuck_after(flight.unit.timeout):
                flight.killed = True  # stuck where its own timer cannot reach: kill its worker
                ray.cancel(ref, force=True)
    progress.running = 0
    return failures
