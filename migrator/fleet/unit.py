"""One unit of work: a repository's scan (report JSON and HTML, optionally ``fix --diff`` and the
kernel check) or its verification, run in the process that calls it (a Ray worker) within a
time budget. It writes nothing: it returns its files, and the driver stores them."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import migrator
from migrator.engine.isolation import settle_process
from migrator.fleet.manifest import RepoSpec
from migrator.process.helper import helper_environment, python_module
from migrator.process.helper import run as run_helper

SCAN = "scan"
VERIFY = "verify"
#: Test-only fault hook, set by the tests: ``kill:NAME@DIR`` (the worker kills itself on the
#: first attempt only, remembering it in DIR), ``raise:NAME``, ``hang:NAME``, ``stuck:NAME@DIR``
#: (hangs with the unit's timer blocked, as native code that never returns would) and
#: ``slow:NAME@DIR`` (sleeps on the first attempt only); these two write their process id to
#: DIR, for the test to kill or check it from outside.
FAULT_VARIABLE = "MIGRATE_FLEET_TEST_FAULT"


class UnitTimeout(Exception):
    """The unit ran past its time budget."""


@dataclass(frozen=True, slots=True)
class Unit:
    """What a worker needs to run one unit (picklable, small)."""

    spec: RepoSpec
    commit: str
    key: str
    stage: str = SCAN
    timeout: float = 600.0
    max_bytes: int = 500 * 2**20
    fault: str = ""


@contextlib.contextmanager
def _budget(seconds: float) -> Iterator[None]:
    """Raise UnitTimeout in this thread after ``seconds`` (main thread only: elsewhere the
    subprocess timeouts and the engine's retries are the bound)."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(_signum: int, _frame: object) -> None:
        raise UnitTimeout(f"took longer than its time budget of {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _fault(unit: Unit) -> None:
    """The test-only fault hook (``FAULT_VARIABLE``); does nothing unless it names this unit."""
    for entry in unit.fault.split(";"):
        kind, _, rest = entry.partition(":")
        name, _, folder = rest.partition("@")
        if name != unit.spec.name:
            continue
        if kind == "raise":
            raise RuntimeError("injected scan crash")
        if kind == "hang":
            time.sleep(3600)
        if kind == "stuck":
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
            with open(Path(folder) / f"stuck-{name}", "a", encoding="utf-8") as pids:
                pids.write(f"{os.getpid()}\n")
            time.sleep(3600)
        if kind == "slow":
            marker = Path(folder) / f"running-{name}"
            if not marker.exists():
                marker.write_text(str(os.getpid()), encoding="utf-8")
                time.sleep(60)
        if kind == "kill":
            marker = Path(folder) / f"killed-{name}"
            if not marker.exists():
                marker.touch()
                os.kill(os.getpid(), signal.SIGKILL)


def _display(spec: RepoSpec) -> str:
    where = spec.shown + (f"@{spec.ref}" if spec.ref else "")
    return where + (f"/{spec.subdir}" if spec.subdir else "")


def _cli(args: list[str], timeout: float, where: Path) -> tuple[int, str, str]:
    """Run ``migrate ARGS`` with this interpreter, isolated (``migrator.process``), from the
    folder ``where`` holding the repository (so printed paths start at its name)."""
    env = helper_environment({"NO_COLOR": "1", "MIGRATE_NO_CACHE": "1"})
    done = run_helper(
        python_module("migrator", *args), timeout=max(1.0, timeout), cwd=where, env=env
    )
    if done.returncode is None:
        raise UnitTimeout(f"`migrate {args[0]}` took longer than {timeout:.0f} s") from None
    return done.returncode, done.out, done.err


def _scan(root: Path, unit: Unit, deadline: float) -> tuple[dict[str, str], dict[str, Any]]:
    from migrator.engine.runner import scan
    from migrator.reporting import html, report_json
    from migrator.reporting.readiness import build_report

    spec = unit.spec
    run = scan(
        root,
        select=list(spec.select) or None,
        ignore=list(spec.ignore) or None,
        exclude=list(spec.exclude),
        preview=spec.preview or None,
        use_cache=False,
        jobs=1,
    )
    report = build_report([(spec.name, run.scan)], generated="")
    project = report.projects[0]
    project.root = _display(spec)
    files = {"report.json": report_json.render(report), "report.html": html.render(report)}
    summary: dict[str, Any] = {
        "score": project.score,
        "verdict": project.verdict.value,
        "findings": len(project.items),
        "hours": round(project.effort.total_hours, 2),
        "files_scanned": project.files_scanned,
    }
    if spec.fix_diff:
        code, out, err = _cli(
            ["fix", root.name, "--diff"], deadline - time.monotonic(), root.parent
        )
        files["fix.diff"] = out
        summary["fix_diff_lines"] = out.count("\n")
    if spec.kernels:
        code, out, err = _cli(
            ["kernels", root.name, "--no-hipify", "--format", "json"],
            deadline - time.monotonic(),
            root.parent,
        )
        if code == 2:
            raise RuntimeError(f"kernel check failed: {(err.strip().splitlines() or [''])[-1]}")
        files["kernels.json"] = out
        summary["kernels_blocked"] = code == 1
    return files, summary


def _verify(root: Path, unit: Unit, deadline: float) -> tuple[dict[str, str], dict[str, Any]]:
    receipt = root.parent / f"{root.name}-receipt.json"
    args = ["verify", root.name, "--smoke", unit.spec.verify, "--targets", unit.spec.verify_targets]
    code, out, err = _cli(
        [*args, "--receipt", str(receipt)], deadline - time.monotonic(), root.parent
    )
    files = {"verify.log": out + err}
    if receipt.is_file():
        files["receipt.json"] = receipt.read_text(encoding="utf-8")
        receipt.unlink()
    if code == 2:
        raise RuntimeError(f"verify failed to run: {(err.strip().splitlines() or [''])[-1]}")
    return files, {"verify_passed": code == 0}


def _cpu_seconds() -> float:
    """CPU seconds (user and system) of this process and of the children it has reaped: a
    scan's per-file worker processes, git and the sub-commands are part of a unit's cost."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _prepare_process() -> None:
    """Load what every scan unit uses (the scan engine, the rules, the report writers) once per
    process, before a unit's timer starts: a worker's first unit is not charged the worker's
    start-up, which on a busy machine alone can take a short budget."""
    from migrator.engine.registry import all_rules
    from migrator.engine.runner import scan  # noqa: F401 - loaded for its side effect
    from migrator.reporting import html, report_json  # noqa: F401 - loaded for the same
    from migrator.reporting.readiness import build_report  # noqa: F401 - and the same

    all_rules()


def run_unit(unit: Unit) -> dict[str, Any]:
    """Run one unit and return ``{"files": {name: text}, "meta": {...}}``; exceptions (a clone
    that fails, a crash, UnitTimeout) propagate so that the engine retries the unit."""
    from migrator.fleet import checkout

    if unit.stage != VERIFY:
        _prepare_process()
    started = time.time()
    start = time.monotonic()
    cpu_start = _cpu_seconds()
    deadline = start + unit.timeout
    spec = unit.spec
    cleanup: Path | None = None
    with _budget(unit.timeout):
        if unit.fault:
            _fault(unit)
        try:
            if spec.is_git:
                cleanup = checkout.clone(
                    spec.source,
                    unit.commit,
                    submodules=spec.submodules,
                    max_bytes=unit.max_bytes,
                    timeout=unit.timeout,
                )
                base = cleanup
            else:
                base = Path(spec.source)
            root = base / spec.subdir if spec.subdir else base
            if not root.is_dir():
                raise FileNotFoundError(f"no folder {spec.subdir or '.'} in {spec.shown}")
            work = _verify if unit.stage == VERIFY else _scan
            files, summary = work(root, unit, deadline)
        finally:
            if cleanup is not None:
                checkout.remove(cleanup)
    meta = {
        "name": spec.name,
        "source": spec.shown,
        "ref": spec.ref,
        "commit": unit.commit,
        "stage": unit.stage,
        "key": unit.key,
        "tool_version": migrator.__version__,
        "options": spec.options(),
        "started": round(started, 3),
        "seconds": round(time.monotonic() - start, 3),
        "cpu_seconds": round(_cpu_seconds() - cpu_start, 3),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "pid": os.getpid(),
        "host": os.uname().nodename,
        "summary": summary,
        "files": sorted(files),
    }
    # After its first unit a process holds the rules and the caches the units share: frozen,
    # the collections around each later scan no longer traverse them.
    settle_process()
    return {"files": files, "meta": meta}
