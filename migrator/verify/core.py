"""Orchestrate one ``migrate verify`` run: workspace, fixes, runs, comparison, receipt."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import migrator.verify.evidence as evidence
from migrator.process.helper import HelperError, find_program
from migrator.process.helper import run as run_helper
from migrator.verify.compare import (
    Comparison,
    Noise,
    baseline_noise,
    compare_outputs,
    compare_test_outcomes,
    flaky_tests,
)
from migrator.verify.metrics import RunMetric, is_timing_metric, ratios, run_metrics
from migrator.verify.options import MAX_RUNS, VerifyOptions
from migrator.verify.overhead import emulation_overhead
from migrator.verify.process import last_line, run_process, tail
from migrator.verify.pytest_report import REPORT_NAME, read_outcomes
from migrator.verify.receipt import Receipt, RunRecord, SetupRecord
from migrator.verify.smoke import read_smoke_output
from migrator.verify.targets import (
    EMULATION_LABEL,
    Invocation,
    docker_invocation,
    native_invocation,
    rocm_version_label,
    sim_invocation,
)
from migrator.verify.timing import judge
from migrator.verify.workspace import FixFunction, Workspace, apply_fixes

_HOST_CHECK = (
    "import json, torch\n"
    "available = torch.cuda.is_available()\n"
    "print(json.dumps({'torch': torch.__version__, 'cuda': torch.version.cuda,"
    " 'hip': getattr(torch.version, 'hip', None), 'available': available,"
    " 'name': torch.cuda.get_device_name(0) if available else 'cpu'}))\n"
)


def host_torch(python: str, env: Mapping[str, str]) -> dict[str, Any] | None:
    """Ask the interpreter itself which torch build and device it has (None if no torch)."""
    clean = {
        name: env[name]
        for name in ("PATH", "HOME", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES")
        if name in env
    }
    program = python if os.path.isabs(python) else find_program(python, env=clean)
    if program is None:
        return None
    try:
        # -I in a private folder: the interpreter's own torch, never a project's torch.py
        done = run_helper([program, "-I", "-c", _HOST_CHECK], env=clean, timeout=120)
    except HelperError:
        return None
    if done.returncode != 0:
        return None
    try:
        loaded = json.loads(done.out.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return None
    return loaded if isinstance(loaded, dict) else None


class _Runner:
    """Runs the smoke command for each (tree, target) and fills a :class:`RunRecord`."""

    def __init__(
        self, options: VerifyOptions, workspace: Workspace, caller_env: Mapping[str, str]
    ) -> None:
        self.options = options
        self.workspace = workspace
        self.caller_env = caller_env
        self._host: dict[str, Any] | None = None
        self._host_checked = False
        self.on_output: Callable[[str], None] | None = None

    def invocation(self, tree: str, target: str, repeat: int = 1) -> Invocation:
        # Each repeat gets its own folder: probe files and the emulation log are per run.
        run_dir = self.workspace.run_dir(tree, target if repeat == 1 else f"{target}-{repeat}")
        options = self.options
        if target == "rocm-sim":
            return sim_invocation(
                self.workspace,
                run_dir,
                options.smoke,
                options.env,
                self.caller_env,
                options.allow_modules,
            )
        if target == "docker":
            return docker_invocation(
                self.workspace,
                run_dir,
                options.smoke,
                options.docker_image,
                options.env,
                self.caller_env,
            )
        return native_invocation(
            self.workspace, tree, run_dir, options.smoke, options.env, self.caller_env
        )

    def set_up(self, tree: str) -> SetupRecord:
        """Run ``--setup`` once in one copy, with the runs' environment and its own timeout."""
        setup = self.options.setup or ""
        run_dir = self.workspace.run_dir(tree, "setup")
        invocation = native_invocation(
            self.workspace, tree, run_dir, setup, self.options.env, self.caller_env
        )
        result = run_process(
            invocation.argv,
            cwd=invocation.cwd,
            env=invocation.env,
            timeout=self.options.setup_timeout,
            log_dir=run_dir,
        )
        return SetupRecord(
            tree=tree,
            command=setup,
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            wall_time_s=result.wall_time_s,
            stdout_tail=tail(result.stdout),
            stderr_tail=tail(result.stderr),
            error=result.error,
            log=str(run_dir),
        )

    def host(self) -> dict[str, Any] | None:
        if not self._host_checked:
            self._host_checked = True
            self._host = host_torch(self.options.python, self.caller_env)
        return self._host

    def run(self, tree: str, target: str, repeat: int = 1) -> RunRecord:
        invocation = self.invocation(tree, target, repeat)
        on_timeout = None
        if invocation.container is not None:
            container = invocation.container

            def on_timeout() -> None:
                docker = find_program("docker", env=invocation.env)
                if docker is None:
                    return
                with contextlib.suppress(HelperError):
                    run_helper([docker, "kill", container], env=invocation.env, timeout=60)

        result = run_process(
            invocation.argv,
            cwd=invocation.cwd,
            env=invocation.env,
            timeout=self.options.timeout,
            log_dir=invocation.smoke_output.parent,
            on_timeout=on_timeout,
            on_poll=self._poll if self.on_output is not None else None,
        )
        logs = invocation.smoke_output.parent
        self._poll(logs / "stdout.txt", logs / "stderr.txt")  # the run's final line
        record = RunRecord(
            target=target,
            tree=tree,
            mode="pytest" if self.options.pytest_args is not None else "smoke",
            allow_uncompared=self.options.allow_uncompared,
            command=list(invocation.argv),
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            wall_time_s=result.wall_time_s,
            stdout_tail=tail(result.stdout),
            stderr_tail=tail(result.stderr),
            error=result.error,
            container=invocation.container,
        )
        if record.mode == "pytest":
            outcomes, why = read_outcomes(invocation.smoke_output.parent / REPORT_NAME)
            record.test_outcomes = outcomes
            if outcomes is None:
                record.output_error = why
        if not record.exited_ok:
            record.failure = (
                f"timed out after {self.options.timeout:g}s; process group killed"
                if result.timed_out
                else evidence.failure_reason(result.stderr) or evidence.pytest_error(result.stdout)
            )
            record.missing_modules = evidence.missing_modules(result.stderr + result.stdout)
        self._fill_probe(record, invocation)
        outputs = read_smoke_output(invocation.smoke_output, result.stdout, self.options.compare)
        if record.mode == "smoke":
            record.outputs = outputs.values
            record.output_source = outputs.source
            record.output_steps = outputs.steps
            record.output_error = outputs.error
        record.tokens_per_second = outputs.tokens_per_second
        record.metrics = run_metrics(
            result.stdout,
            outputs.metrics,
            outputs.units,
            self.options.metrics,
            peak_memory_bytes=record.peak_gpu_memory_bytes,
            tokens_per_second=outputs.tokens_per_second,
        )
        if target == "rocm-sim":
            record.emulated = True
            record.emulation = EMULATION_LABEL.format(
                rocm=rocm_version_label(invocation.env["MIGRATE_SIM_HIP_VERSION"])
            )
            record.emulation_log = evidence.read_emulation_log(invocation.sim_log, invocation.cwd)
        return record

    def _poll(self, stdout: Path, stderr: Path) -> None:
        if self.on_output is not None:
            self.on_output(last_line(stdout, stderr))

    def _fill_probe(self, record: RunRecord, invocation: Invocation) -> None:
        probe = evidence.read_probe(invocation.probe_dir)
        record.cuda_only_imports = probe["cuda_only_imports"]
        if probe["torch_imported"]:
            record.torch_build = probe["torch_build"]
            record.device_name = probe["device_name"]
            record.cuda_available = probe["cuda_available"]
            record.ran_on_gpu = probe["ran_on_gpu"]
            record.peak_gpu_memory_bytes = probe["peak_gpu_memory_bytes"]
            record.real_device = str(probe["device_name"] or "unknown")
            return
        if record.target == "docker":
            record.real_device = "unknown (no probe report from the container)"
            return
        host = self.host()
        if host is None:
            record.real_device = "unknown (torch not importable by the interpreter)"
            return
        build = {
            "torch": host.get("torch"),
            "cuda": host.get("cuda"),
            "hip": host.get("hip"),
            "source": "interpreter check (the smoke test did not import torch)",
        }
        build["kind"] = evidence.torch_build_kind(build)
        record.torch_build = build
        record.real_device = str(host.get("name") or "unknown")
        record.cuda_available = bool(host.get("available"))


def compare(
    baseline: RunRecord, record: RunRecord, options: VerifyOptions, noise: Noise | None = None
) -> Comparison:
    """The migrated run's outputs (or per-test outcomes) against the baseline's; ``noise``
    (the baseline's own spread over its runs) widens float tolerances."""
    if record.mode == "pytest":
        runs = [baseline, *baseline.repeats]
        flaky = flaky_tests([run.test_outcomes for run in runs if run.exited_ok])
        return compare_test_outcomes(baseline.test_outcomes, record.test_outcomes, flaky)
    return compare_outputs(
        baseline.outputs,
        record.outputs,
        options.rtol,
        options.atol,
        source=baseline.output_source or record.output_source,
        steps=baseline.output_steps,
        noise=noise,
    )


def _noise(baseline: RunRecord, options: VerifyOptions) -> Noise:
    runs = [run for run in (baseline, *baseline.repeats) if run.exited_ok]
    return baseline_noise([run.outputs for run in runs], options.noise_multiple)


def _rounds(record: RunRecord) -> list[dict[str, RunMetric] | None]:
    """The metrics of each round of one tree and target (None: that round did not run cleanly)."""
    return [run.metrics if run.exited_ok else None for run in (record, *record.repeats)]


def _times(record: RunRecord) -> bool:
    return any(is_timing_metric(name) for name in record.metrics)


#: At most this many files of the user's tree are fingerprinted (a larger tree is checked up to it).
_FINGERPRINT_LIMIT = 200_000


def tree_fingerprint(root: Path) -> dict[str, tuple[int, int, int]]:
    """(size, modification time in ns, inode) of every regular file and symlink under the
    user's tree, symlinks not followed: what a run must leave as it was. The walk keeps its own
    stack: a tree nested deeper than the recursion limit is walked as far as paths can go."""
    found: dict[str, tuple[int, int, int]] = {}
    pending = [str(root)]
    while pending:
        try:
            entries = sorted(os.scandir(pending.pop()), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found[os.path.relpath(entry.path, root)] = (info.st_size, info.st_mtime_ns, info.st_ino)
            if len(found) >= _FINGERPRINT_LIMIT:
                return found
            if stat.S_ISDIR(info.st_mode):
                pending.append(entry.path)
    return found


def changed_files(
    before: Mapping[str, tuple[int, int, int]], after: Mapping[str, tuple[int, int, int]]
) -> list[str]:
    """Paths created, removed or changed between two fingerprints, sorted."""
    return sorted(path for path in set(before) | set(after) if before.get(path) != after.get(path))


def verify(
    options: VerifyOptions,
    *,
    fixer: FixFunction | None = None,
    caller_env: Mapping[str, str] | None = None,
    on_step: Callable[[str], None] | None = None,
    on_output: Callable[[str], None] | None = None,
) -> Receipt:
    """Copy, fix, run and compare; the user's tree is only read. Returns the receipt.
    ``on_step`` hears each stage (copy and fix, set-up, every run) and ``on_output`` the last
    line the running command printed, about twice a second, for progress display."""
    step = on_step or (lambda message: None)
    env = dict(os.environ if caller_env is None else caller_env)
    step("copying the project and applying fixes")
    workspace = Workspace.create(options.root, options.python)
    try:
        fixes = apply_fixes(workspace.migrated, options.unsafe_fixes, fixer)
        receipt = Receipt(
            project=str(options.root),
            smoke=options.smoke,
            settings={
                "targets": list(options.targets),
                "timeout_s": options.timeout,
                "rtol": options.rtol,
                "atol": options.atol,
                "unsafe_fixes": options.unsafe_fixes,
                "allow_modules": list(options.allow_modules),
                "docker_image": options.docker_image if "docker" in options.targets else None,
                "python": options.python,
                "env": [name for name, _ in options.env],
                "pytest": options.pytest_args,
                "compare": [pattern.pattern for pattern in options.compare],
                "metrics": [spec.describe() for spec in options.metrics],
                "timing_threshold": options.timing_threshold,
                "regression_threshold": options.timing_threshold,
                "require_timing": options.require_timing,
                "allow_uncompared": options.allow_uncompared,
                "setup": options.setup,
                "setup_timeout_s": options.setup_timeout if options.setup else None,
                "baseline_runs": options.baseline_runs,
                "timing_runs": options.timing_runs,
                "noise_multiple": options.noise_multiple,
            },
            fixes=fixes.as_dict(),
            workspace=str(workspace.root) if options.keep_workspace else None,
            copy_notes=list(workspace.copy_notes),
        )
        before = tree_fingerprint(options.root)
        runner = _Runner(options, workspace, env)
        runner.on_output = on_output
        if options.setup:
            step("running the set-up command")
            receipt.setup = [runner.set_up(tree) for tree in ("original", "migrated")]
        targets = options.targets
        rounds = max(options.baseline_runs, options.timing_runs)
        step("baseline run 1: original tree, native")
        baseline = runner.run("original", "native")
        baseline.baseline = True
        if not baseline.exited_ok:
            baseline.hint = evidence.baseline_hint(
                baseline.missing_modules, options.root, options.python, options.setup
            )
        receipt.runs.append(baseline)
        migrated: dict[str, RunRecord] = {}
        for target in targets:
            step(f"migrated run 1: migrated tree, {target}")
            migrated[target] = runner.run("migrated", target)
        timing = options.timing_runs > 1 and (
            _times(baseline) or any(_times(record) for record in migrated.values())
        )
        # Later rounds alternate original and migrated runs, so that drift in the machine's
        # speed (clocks, caches, other load) falls on both sides alike; every other round runs
        # them in the reverse order (ABBA), so that neither side always goes first.
        for round_ in range(2, rounds + 1):
            more_baseline = round_ <= options.baseline_runs or (
                timing and round_ <= options.timing_runs
            )
            order: list[str | None] = [None, *targets]  # None: the original tree
            if round_ % 2 == 0:
                order.reverse()
            for side in order:
                if side is None:
                    if more_baseline and baseline.exited_ok:
                        step(f"baseline run {round_}: original tree, native")
                        baseline.repeats.append(runner.run("original", "native", round_))
                elif timing and round_ <= options.timing_runs and migrated[side].exited_ok:
                    step(f"timing run {round_}/{options.timing_runs}: migrated tree, {side}")
                    migrated[side].repeats.append(runner.run("migrated", side, round_))
        noise = _noise(baseline, options)
        base_metrics = [run.metrics for run in (baseline, *baseline.repeats) if run.exited_ok] or [
            baseline.metrics
        ]
        for target in targets:
            record = migrated[target]
            record.comparison = compare(baseline, record, options, noise)
            runs = [run.metrics for run in (record, *record.repeats) if run.exited_ok]
            record.metric_ratios = ratios(
                base_metrics, runs or [record.metrics], options.timing_threshold
            )
            record.timing = judge(record.metric_ratios, options.timing_threshold, MAX_RUNS)
            record.require_timing = options.require_timing
            if target == "rocm-sim":
                native = migrated.get("native")
                record.overhead = emulation_overhead(
                    _rounds(native) if native is not None else None, _rounds(record)
                )
            receipt.runs.append(record)
        receipt.original_changed = changed_files(before, tree_fingerprint(options.root))
        return receipt
    finally:
        if not options.keep_workspace:
            workspace.remove()
