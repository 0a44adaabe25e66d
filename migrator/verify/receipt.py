"""The verify receipt: one JSON document, and the short text summary printed to stdout.

The wording rules: an emulated run is always called "emulated ROCm over <real device>", and the
summary never says an AMD GPU ran unless the probe saw a ROCm build of torch use a GPU; a run
whose outputs were not compared is "not compared", never a match, and passes only with
``--allow-uncompared``. The format is published as ``receipt.schema.json`` beside this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from migrator.verify.compare import NOT_COMPARED, Comparison, KeyComparison
from migrator.verify.metrics import MetricRatio, RunMetric
from migrator.verify.noise import MIN_ROBUST_RUNS
from migrator.verify.overhead import Overhead
from migrator.verify.timing import NOT_JUDGED_STATUS, NOT_MEASURED, TimingVerdict

SCHEMA = "migrate-verify-receipt/2"
PASS = "pass"
FAIL = "fail"
NOT_COMPARED_VERDICT = "not-compared"


@dataclass(slots=True)
class SetupRecord:
    """One ``--setup`` command, run once in one copy."""

    tree: str
    command: str
    exit_code: int | None
    timed_out: bool
    wall_time_s: float
    stdout_tail: str = ""
    stderr_tail: str = ""
    error: str | None = None
    log: str | None = None

    @property
    def ok(self) -> bool:
        """Exited by itself with status 0."""
        return self.exit_code == 0 and not self.timed_out and self.error is None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "tree": self.tree,
            "command": self.command,
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "wall_time_s": self.wall_time_s,
            "ok": self.ok,
            "error": self.error,
            "stdout_tail": self.stdout_tail,
            "stderr_tail": self.stderr_tail,
        }


@dataclass(slots=True)
class RunRecord:
    """Everything known about one run of the smoke command."""

    target: str
    tree: str
    command: list[str]
    mode: str = "smoke"
    allow_uncompared: bool = False
    emulated: bool = False
    emulation: str | None = None
    real_device: str = "unknown"
    torch_build: dict[str, Any] | None = None
    exit_code: int | None = None
    timed_out: bool = False
    wall_time_s: float = 0.0
    stdout_tail: str = ""
    stderr_tail: str = ""
    error: str | None = None
    failure: str | None = None
    missing_modules: list[str] = field(default_factory=list)
    device_name: str | None = None
    cuda_available: bool | None = None
    ran_on_gpu: bool = False
    peak_gpu_memory_bytes: int = 0
    tokens_per_second: float | None = None
    cuda_only_imports: list[dict[str, Any]] = field(default_factory=list)
    emulation_log: dict[str, Any] | None = None
    outputs: dict[str, Any] | None = None
    output_source: str | None = None
    output_error: str | None = None
    output_steps: dict[str, list[str | None]] | None = None
    test_outcomes: dict[str, str] | None = None
    metrics: dict[str, RunMetric] = field(default_factory=dict)
    metric_ratios: list[MetricRatio] = field(default_factory=list)
    comparison: Comparison | None = None
    #: the run's speed judged against the original's (migrated runs)
    timing: TimingVerdict | None = None
    #: ``--require-timing``: a timing not judged, or a regression, fails the run
    require_timing: bool = False
    #: rocm-sim only: the emulation's own cost, against native runs of the same tree
    overhead: Overhead | None = None
    baseline: bool = False
    container: str | None = None
    hint: str | None = None
    #: later runs of the same tree and target: the baseline's measure its own spread, the
    #: migrated ones (only when timing metrics were printed) the timing interval
    repeats: list[RunRecord] = field(default_factory=list)

    @property
    def exited_ok(self) -> bool:
        """The command ran to its end: exit 0, or (``--pytest``) a report with failing tests."""
        if self.timed_out or self.error is not None:
            return False
        if self.mode == "pytest":
            return self.exit_code in (0, 1) and self.test_outcomes is not None
        return self.exit_code == 0

    @property
    def compared(self) -> bool:
        """Some output of this migrated run was compared with the baseline's."""
        return self.comparison is not None and self.comparison.values_compared > 0

    @property
    def timing_failed(self) -> bool:
        """``--require-timing`` was given and the timing is not judged, or is a regression."""
        if not self.require_timing or self.baseline:
            return False
        return self.timing is None or not self.timing.acceptable

    @property
    def verdict(self) -> str:
        """``pass``, ``fail`` or ``not-compared`` (outputs not compared is its own outcome)."""
        if self.baseline:
            return PASS if self.exited_ok else FAIL
        if not self.exited_ok or self.comparison is None or self.timing_failed:
            return FAIL
        if self.comparison.matches:
            return PASS
        if self.comparison.status == NOT_COMPARED:
            return NOT_COMPARED_VERDICT
        return FAIL

    @property
    def passed(self) -> bool:
        """Exited 0 and (for a migrated run) matches the baseline, or nothing compared but
        ``--allow-uncompared`` was given."""
        verdict = self.verdict
        return verdict == PASS or (verdict == NOT_COMPARED_VERDICT and self.allow_uncompared)

    @property
    def label(self) -> str:
        """How the run is named in the summary; emulated runs always say so."""
        if self.emulated:
            return f"{self.target} (emulated ROCm over {self.real_device})"
        if self.target == "docker":
            return f"docker (container; device {self.real_device})"
        return f"{self.target} ({self.real_device})"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "target": self.target,
            "tree": self.tree,
            "mode": self.mode,
            "baseline": self.baseline,
            "emulated": self.emulated,
            "emulation": self.emulation,
            "real_device": self.real_device,
            "torch_build": self.torch_build,
            "command": self.command,
            "container": self.container,
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "wall_time_s": self.wall_time_s,
            "passed": self.passed,
            "verdict": self.verdict,
            "compared": self.compared,
            "error": self.error,
            "failure": self.failure,
            "missing_modules": self.missing_modules,
            "hint": self.hint,
            "stdout_tail": self.stdout_tail,
            "stderr_tail": self.stderr_tail,
            "device_name": self.device_name,
            "cuda_available": self.cuda_available,
            "ran_on_gpu": self.ran_on_gpu,
            "peak_gpu_memory_bytes": self.peak_gpu_memory_bytes,
            "tokens_per_second": self.tokens_per_second,
            "cuda_only_imports": self.cuda_only_imports,
            "emulation_log": self.emulation_log,
            "outputs": self.outputs,
            "output_source": self.output_source,
            "output_error": self.output_error,
            "output_steps": self.output_steps,
            "test_outcomes": self.test_outcomes,
            "metrics": [metric.as_dict() for metric in self.metrics.values()],
            "metric_ratios": [ratio.as_dict() for ratio in self.metric_ratios],
            "comparison": None if self.comparison is None else self.comparison.as_dict(),
            "timing": None if self.timing is None else self.timing.as_dict(),
            "timing_required": self.require_timing,
            "emulation_overhead": None if self.overhead is None else self.overhead.as_dict(),
            "repeats": [repeat.repeat_dict() for repeat in self.repeats],
        }

    def repeat_dict(self) -> dict[str, Any]:
        """What a repeated run adds: its exit, time, outputs and metrics."""
        return {
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "wall_time_s": self.wall_time_s,
            "failure": self.failure,
            "outputs": self.outputs,
            "test_outcomes": self.test_outcomes,
            "metrics": [metric.as_dict() for metric in self.metrics.values()],
            "stderr_tail": self.stderr_tail[-1000:],
        }


@dataclass(slots=True)
class Receipt:
    """The whole verify run."""

    project: str
    smoke: str
    settings: dict[str, Any]
    fixes: dict[str, Any]
    runs: list[RunRecord] = field(default_factory=list)
    setup: list[SetupRecord] = field(default_factory=list)
    workspace: str | None = None
    #: What the copy of the project left out or changed (symlinks leaving the project, special
    #: files), one line each: the runs saw that copy, not the user's tree.
    copy_notes: list[str] = field(default_factory=list)
    #: Files of the user's own tree that changed while the runs ran (a smoke command writing
    #: through an absolute path): the run fails, whatever its outputs.
    original_changed: list[str] = field(default_factory=list)
    created: str = field(
        default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds")
    )

    @property
    def baseline(self) -> RunRecord | None:
        """The native run of the original tree."""
        return next((run for run in self.runs if run.baseline), None)

    @property
    def migrated_runs(self) -> list[RunRecord]:
        """Every run of the migrated tree."""
        return [run for run in self.runs if not run.baseline]

    @property
    def passed(self) -> bool:
        """The baseline ran, and every migrated run passed (matched it, or was allowed uncompared)."""
        base = self.baseline
        runs = self.migrated_runs
        return (
            base is not None
            and base.exited_ok
            and bool(runs)
            and all(run.passed for run in runs)
            and not self.original_changed
        )

    @property
    def verdict(self) -> str:
        """``fail`` if any run failed, ``not-compared`` if any was not compared, else ``pass``."""
        base = self.baseline
        runs = self.migrated_runs
        if base is None or not base.exited_ok or not runs or self.original_changed:
            return FAIL
        verdicts = {run.verdict for run in runs}
        if FAIL in verdicts:
            return FAIL
        return NOT_COMPARED_VERDICT if NOT_COMPARED_VERDICT in verdicts else PASS

    @property
    def regressions(self) -> list[tuple[str, MetricRatio]]:
        """(target, ratio) for every metric that regressed beyond the threshold."""
        return [
            (run.target, ratio)
            for run in self.migrated_runs
            for ratio in run.metric_ratios
            if ratio.regression
        ]

    @property
    def exit_code(self) -> int:
        """0 when :attr:`passed`, else 1."""
        return 0 if self.passed else 1

    @property
    def amd_gpu_used(self) -> bool:
        """Whether a non-emulated run saw a ROCm build of torch put tensors on a GPU."""
        return any(
            not run.emulated and run.ran_on_gpu and (run.torch_build or {}).get("kind") == "rocm"
            for run in self.runs
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "schema": SCHEMA,
            "created": self.created,
            "project": self.project,
            "smoke": self.smoke,
            "settings": self.settings,
            "fixes": self.fixes,
            "passed": self.passed,
            "verdict": self.verdict,
            "outputs_compared": all(run.compared for run in self.migrated_runs)
            and bool(self.migrated_runs),
            "exit_code": self.exit_code,
            "amd_gpu_used": self.amd_gpu_used,
            "regressions": [
                {"target": target, **ratio.as_dict()} for target, ratio in self.regressions
            ],
            "workspace": self.workspace,
            "copy_notes": list(self.copy_notes),
            "original_changed": list(self.original_changed),
            "setup": [record.as_dict() for record in self.setup],
            "runs": [run.as_dict() for run in self.runs],
        }

    def write(self, path: Path) -> None:
        """Write the JSON receipt to ``path`` (``migrator.files.writer.write_output``: atomic, never
        through a symlink, never over a file of the verified project)."""
        from migrator.errors import MigrateError
        from migrator.files.writer import WriteRefused, write_output
        from migrator.output.escape import json_text

        try:
            write_output(
                path,
                json_text(self.as_dict(), indent=2) + "\n",
                [Path(self.project)] if getattr(self, "project", None) else [],
            )
        except WriteRefused as error:
            raise MigrateError(str(error)) from None


def _build_text(run: RunRecord) -> str:
    build = run.torch_build or {}
    kind = build.get("kind")
    if not kind:
        return "torch not imported"
    versions = {
        "cuda": f"CUDA {build.get('cuda')}",
        "rocm": f"ROCm/HIP {build.get('hip')}",
        "cpu": "CPU-only",
    }
    return f"torch {build.get('torch')} ({versions.get(kind, kind)} build)"


def _repeats_text(run: RunRecord) -> str:
    """`` (2 runs: 1.2s, 1.3s)`` when the run was repeated; a repeat that failed is named."""
    if not run.repeats:
        return ""
    runs = [run, *run.repeats]
    times = ", ".join(
        f"{repeat.wall_time_s:.1f}s" + ("" if repeat.exited_ok else " FAILED") for repeat in runs
    )
    return f" ({len(runs)} runs: {times})"


def _outcome(run: RunRecord) -> str:
    if run.error:
        return f"not run: {run.error}"
    if run.timed_out:
        return f"killed at the timeout after {run.wall_time_s:.1f}s"
    text = f"exit {run.exit_code} in {run.wall_time_s:.1f}s"
    if run.tokens_per_second is not None:
        text += f", {run.tokens_per_second:.1f} tok/s"
    return text


def _clean(text: object) -> str:
    """Text from the project (test ids, labels) with control characters escaped."""
    return "".join(
        char if char.isprintable() else char.encode("unicode_escape").decode("ascii")
        for char in str(text)
    )


def _counted(comparison: Comparison) -> str:
    """``3 keys, 60 values`` (``12 tests`` for pytest)."""
    if comparison.source == "pytest":
        return f"{comparison.values_compared} tests that passed on the original"
    keys, values = comparison.keys_compared, comparison.values_compared
    return f"{keys} key{'s' * (keys != 1)}, {values} value{'s' * (values != 1)}"


def _source_text(comparison: Comparison) -> str:
    return {
        "file": "MIGRATE_SMOKE_OUTPUT",
        "stdout-json": "JSON on stdout",
        "stdout-series": "numbers on stdout",
        "stdout-compare": "--compare patterns on stdout",
        "pytest": "pytest outcomes",
    }.get(comparison.source or "", "outputs")


def _comparison_text(comparison: Comparison | None, allow_uncompared: bool = False) -> str:
    if comparison is None:
        return "outputs not compared"
    if comparison.status == "different":
        first = comparison.first_difference
        if first is None:
            return f"outputs different ({comparison.note})"
        if comparison.source == "pytest":
            return (
                f"test {_clean(first.key)} {_clean(first.baseline)} on the original, "
                f"{_clean(first.migrated or 'not collected')} on the migrated tree "
                f"({_counted(comparison)} compared)"
            )
        if first.step is not None:
            where = f" at {first.step}"
        elif first.first_difference is not None:
            where = f"[{first.first_difference}]"
        else:
            where = ""
        detail = first.note or f"baseline {first.baseline!r} vs migrated {first.migrated!r}"
        return (
            f"outputs different: {_clean(first.key)}{where}: {_clean(detail)} "
            f"({_counted(comparison)} compared); {_baseline_variation(comparison, first)}"
        )
    if comparison.status == NOT_COMPARED or comparison.values_compared == 0:
        why = comparison.note or "nothing comparable"
        if allow_uncompared:
            tail = " — passed only because of --allow-uncompared"
        elif comparison.not_judged:
            tail = (
                f" — rerun with --baseline-runs {MIN_ROBUST_RUNS} or more, or pass "
                "--allow-uncompared"
            )
            return f"outputs NOT JUDGED ({why}){tail}"
        else:
            tail = " — pass --compare REGEX, report JSON, or --allow-uncompared"
        return f"outputs NOT COMPARED ({why}){tail}"
    counted = f"{_counted(comparison)} compared from {_source_text(comparison)}"
    if comparison.source == "pytest":
        return f"tests: no test that passed on the original fails ({counted})"
    noise = _tolerance_text(comparison)
    if comparison.status == "within-tolerance":
        return (
            f"outputs within tolerance ({counted}; max abs diff {comparison.max_abs_diff:.3g}, "
            f"rtol={comparison.rtol:g}, atol={comparison.atol:g}{noise})"
        )
    return f"outputs equal ({counted}{noise})"


def _tolerance_text(comparison: Comparison) -> str:
    """``; tolerance from the baseline's own noise over 5 runs: loss ±0.1% (±0.0103 at most)``,
    the keys not judged, and the baseline runs set aside as outliers."""
    parts: list[str] = []
    noisy = [
        key
        for key in comparison.keys
        if key.tolerance is not None and key.tolerance.get("applied") == "baseline-noise"
    ]
    if noisy:
        names = ", ".join(_key_tolerance(key) for key in noisy[:4])
        runs = noisy[0].tolerance["baseline_runs"] if noisy[0].tolerance else 0
        parts.append(f"tolerance from the baseline's own noise over {runs} runs: {names}")
    unjudged = comparison.not_judged
    if unjudged:
        runs = unjudged[0].tolerance.get("baseline_runs", 0) if unjudged[0].tolerance else 0
        names = ", ".join(_clean(key.key) for key in unjudged[:6])
        parts.append(
            f"not judged (too few baseline repeats: they vary over {runs} runs, "
            f"{MIN_ROBUST_RUNS} are needed to outvote an outlier): {names}"
        )
    outliers = [
        f"run {', '.join(map(str, key.tolerance['outlier_runs']))} on {_clean(key.key)}"
        for key in comparison.keys
        if key.tolerance is not None and key.tolerance.get("outlier_runs")
    ]
    if outliers:
        parts.append(f"baseline outliers set aside by the median: {'; '.join(outliers[:4])}")
    return "".join(f"; {part}" for part in parts)


def _key_tolerance(key: KeyComparison) -> str:
    """``loss ±0.1% (±0.0103 at most)``: the typical relative allowance and the widest one."""
    tolerance = key.tolerance or {}
    relative = float(tolerance.get("relative_allowance") or 0.0)
    widest = float(tolerance.get("effective_allowance") or 0.0)
    return f"{_clean(key.key)} ±{relative:.2%} (±{widest:.3g} at most)"


def _baseline_variation(comparison: Comparison, first: KeyComparison) -> str:
    """Whether the unchanged baseline itself varies by as much as the difference found."""
    noise = comparison.noise
    if noise is None or noise.runs < 2:
        return "the baseline ran once, so its own variation is unknown (--baseline-runs 2)"
    key = _clean(first.key)
    if first.key in noise.varies:
        return (
            f"the unchanged baseline varies too: its {noise.runs} runs differ at "
            f"{_clean(noise.varies[first.key])}"
        )
    found = noise.keys.get(first.key)
    spread = found.inlier_spread if found is not None else None
    if found is None or not found.spread:
        return f"the unchanged baseline gave the same {key} in all {noise.runs} runs"
    tolerance = first.tolerance or {}
    allowed = ""
    if tolerance.get("applied") in ("baseline-noise", "not-judged"):
        allowed = (
            f"; tolerance ±{float(tolerance.get('relative_allowance') or 0):.2%} of the median "
            f"of {tolerance.get('baseline_runs')} runs"
        )
    if found.outliers:
        runs = ", ".join(map(str, found.outliers))
        allowed += f"; outlier run {runs} (up to {found.spread:.3g} off) set aside"
    diff = _abs_diff(first)
    if diff is not None and spread is not None and spread >= diff:
        return (
            f"the unchanged baseline varies by as much ({spread:.3g} over {noise.runs} runs, "
            f"difference {diff:.3g}){allowed}"
        )
    scale = f" (the difference is ×{diff / spread:.0f} that)" if diff and spread else ""
    return (
        f"the unchanged baseline varies by at most {spread or 0:.3g} on {key} over "
        f"{noise.runs} runs{scale}{allowed}"
    )


def _abs_diff(key: KeyComparison) -> float | None:
    old, new = key.baseline, key.migrated
    if isinstance(old, (int, float)) and isinstance(new, (int, float)):
        return abs(float(new) - float(old))
    return key.max_abs_diff


def _emulation_lines(run: RunRecord) -> list[str]:
    log = run.emulation_log or {}
    lines = [
        f"    emulation: {run.emulation}; real device underneath: {run.real_device}, "
        f"{_build_text(run)}"
    ]
    queries = log.get("device_queries") or []
    if queries:
        asked = ", ".join(
            f"{query['api'].rsplit('.', 1)[-1]} -> {query['answer']} ({query['caller']})"
            for query in queries[:6]
        )
        more = f" (+{len(queries) - 6} more)" if len(queries) > 6 else ""
        lines.append(f"    code asked: {asked}{more}")
    refused = [
        entry
        for entry in log.get("blocked_imports") or []
        if entry.get("from_project", not entry.get("internal"))
    ]
    imports = [entry for entry in refused if entry.get("kind") != "find_spec"]
    checks = [entry for entry in refused if entry.get("kind") == "find_spec"]
    if imports:
        names = ", ".join(f"{entry['module']} ({entry['caller']})" for entry in imports[:8])
        lines.append(f"    imports refused as on ROCm: {names}")
    if checks:
        names = ", ".join(sorted({str(entry["module"]) for entry in checks}))
        lines.append(f"    availability checks answered 'not installed': {names}")
    for tool in log.get("blocked_executables") or []:
        lines.append(
            f"    {tool['executable']} not found as on ROCm ({', '.join(tool['callers'])})"
        )
    for event in log.get("sdpa_no_kernel") or []:
        lines.append(f"    SDPA with only the cuDNN backend: no kernel on ROCm ({event['caller']})")
    return lines


def summary(receipt: Receipt, receipt_path: str | None = None) -> str:
    """The text summary (a few lines; the receipt holds the details), each line shown escaped
    (``safe_text``): it quotes the project's name, command and output."""
    lines = [f"migrate verify {receipt.project}  (smoke: {receipt.smoke})"]
    fixes = receipt.fixes
    if not fixes.get("engine_available", True):
        lines.append(f"fixes: NOT APPLIED — {fixes.get('note')}")
    else:
        applied = fixes.get("applied") or {}
        counts = ", ".join(f"{rule}×{count}" for rule, count in applied.items()) or "none"
        lines.append(
            f"fixes ({fixes.get('level')}): {fixes.get('total', 0)} applied in "
            f"{len(fixes.get('files_changed') or [])} files: {counts}"
        )
        if fixes.get("errors"):
            lines.append(f"fix errors in: {', '.join(fixes['errors'])}")
    for run in receipt.runs:
        if run.baseline:
            state = "ran" if run.exited_ok else "FAILED"
            lines.append(
                f"baseline original/{run.label}: {state} — {_outcome(run)}{_repeats_text(run)}; "
                f"{_build_text(run)}"
            )
            if not run.exited_ok and run.failure:
                lines.append(f"    {run.failure}")
            if run.hint:
                lines.append(f"    what to do: {run.hint}")
            continue
        verdict = {PASS: "PASS", FAIL: "FAIL"}.get(run.verdict, "NOT COMPARED")
        if run.verdict == NOT_COMPARED_VERDICT and run.passed:
            verdict = "PASS (not compared)"
        detail = _outcome(run) + _repeats_text(run)
        if run.exited_ok:
            detail += "; " + _comparison_text(run.comparison, run.allow_uncompared)
        elif run.failure:
            detail += f"; {run.failure}"
        if run.timing_failed and run.timing is not None:
            detail += f"; fails --require-timing: {run.timing.status.replace('-', ' ')}"
        lines.append(f"{run.label}: {verdict} — {detail}")
        if run.timing is not None and (run.timing.status != NOT_MEASURED or run.require_timing):
            lines.append(f"    {run.timing.text()}")
        if run.overhead is not None:
            lines.append(f"    {run.overhead.text()}")
        if run.metric_ratios:
            shown = "; ".join(ratio.text() for ratio in run.metric_ratios[:6])
            more = f" (+{len(run.metric_ratios) - 6} more)" if len(run.metric_ratios) > 6 else ""
            lines.append(f"    vs original: {shown}{more}")
        if not run.emulated:
            lines.append(f"    {_build_text(run)}")
        else:
            lines.extend(_emulation_lines(run))
    setup_lines = [
        f"setup in {record.tree}/: {'ok' if record.ok else 'FAILED'} — exit {record.exit_code}"
        f"{', timed out' if record.timed_out else ''} in {record.wall_time_s:.1f}s "
        f"({record.command})"
        for record in receipt.setup
    ]
    copy_lines = [f"copy: {_clean(note)}" for note in receipt.copy_notes[:10]]
    if len(receipt.copy_notes) > 10:
        copy_lines.append(f"copy: +{len(receipt.copy_notes) - 10} more (see the receipt)")
    changed_lines = [
        f"the runs changed the original tree (not the copy): {_clean(path)}"
        for path in receipt.original_changed[:10]
    ]
    if len(receipt.original_changed) > 10:
        changed_lines.append(f"... +{len(receipt.original_changed) - 10} more changed files")
    lines[2:2] = copy_lines + setup_lines + changed_lines
    lines.append(_result_line(receipt))
    lines.append(
        f"receipt: {receipt_path}" if receipt_path else "receipt: not written (pass --receipt FILE)"
    )
    from migrator.output.escape import safe_text

    return "\n".join(safe_text(line) for line in lines)  # names and output of the project


def _result_line(receipt: Receipt) -> str:
    """The last word: what was compared, how many keys and values, and whether it passed."""
    migrated = receipt.migrated_runs
    base = receipt.baseline
    compared = [run for run in migrated if run.verdict == PASS]
    uncompared = [run for run in migrated if run.verdict == NOT_COMPARED_VERDICT]
    failed = [run for run in migrated if run.verdict == FAIL]
    if receipt.verdict == PASS:
        verdict = "PASS"
    elif receipt.verdict == NOT_COMPARED_VERDICT and receipt.passed:
        verdict = "PASS, NOT COMPARED"
    elif receipt.verdict == NOT_COMPARED_VERDICT:
        verdict = "NOT COMPARED"
    else:
        verdict = "FAIL"
    parts: list[str] = []
    if base is not None and not base.exited_ok:
        parts.append("the baseline (original tree, native) did not run cleanly; nothing to match")
    else:
        if compared:
            counts = sorted({_counted(run.comparison) for run in compared if run.comparison})
            parts.append(
                f"{len(compared)}/{len(migrated)} migrated runs match the baseline on "
                f"{' / '.join(counts)}"
            )
        if uncompared:
            names = ", ".join(run.target for run in uncompared)
            parts.append(
                f"{len(uncompared)}/{len(migrated)} ran with outputs not compared ({names})"
                + ("; allowed by --allow-uncompared" if receipt.passed else "")
            )
        if failed:
            parts.append(
                f"{len(failed)}/{len(migrated)} failed ({', '.join(r.target for r in failed)})"
            )
    regressions = receipt.regressions
    if regressions:
        targets: dict[str, list[str]] = {}
        for target, ratio in regressions:
            targets.setdefault(ratio.name, []).append(target)
        named = ", ".join(
            f"{_clean(name)} on {', '.join(where)}" for name, where in targets.items()
        )
        parts.append(
            f"{len(regressions)} performance regression(s) beyond run-to-run noise: {named}"
        )
    parts.extend(_timing_parts(migrated))
    hardware = (
        "an AMD GPU was used (ROCm build of torch, tensors on the GPU)"
        if receipt.amd_gpu_used
        else "no AMD GPU was used"
    )
    parts.append(hardware)
    return f"result: {verdict} ({'; '.join(parts)})"


def _timing_parts(runs: list[RunRecord]) -> list[str]:
    """What the result line says of timing that was not judged, or failed ``--require-timing``."""
    parts: list[str] = []
    unjudged = [
        run for run in runs if run.timing is not None and run.timing.status == NOT_JUDGED_STATUS
    ]
    if unjudged:
        names = ", ".join(run.target for run in unjudged)
        most = max(run.timing.rerun_with or 0 for run in unjudged if run.timing is not None)
        advice = f"rerun with --timing-runs {most}" if most else "the runs are too noisy to judge"
        parts.append(f"timing not judged on {names} ({advice})")
    required = [run for run in runs if run.timing_failed and run.exited_ok]
    if required:
        names = ", ".join(
            f"{run.target} ({run.timing.status.replace('-', ' ') if run.timing else 'no timing'})"
            for run in required
        )
        parts.append(f"--require-timing fails {names}")
    return parts
