"""The verify receipt: one JSON document, and the short text summary printed to stdout.

The wording rule: an emulated run is always called "emulated ROCm over <real device>", and the
summary never says an AMD GPU ran unless the probe saw a ROCm build of torch use a GPU.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from migrator.verify.compare import Comparison

SCHEMA = "migrate-verify-receipt/1"


@dataclass(slots=True)
class RunRecord:
    """Everything known about one run of the smoke command."""

    target: str
    tree: str
    command: list[str]
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
    comparison: Comparison | None = None
    baseline: bool = False
    container: str | None = None

    @property
    def exited_ok(self) -> bool:
        """The command exited by itself with status 0."""
        return self.exit_code == 0 and not self.timed_out and self.error is None

    @property
    def passed(self) -> bool:
        """Exited 0 and (for a migrated run) matches the baseline."""
        if not self.exited_ok:
            return False
        return self.baseline or (self.comparison is not None and self.comparison.matches)

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
            "error": self.error,
            "failure": self.failure,
            "missing_modules": self.missing_modules,
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
            "comparison": None if self.comparison is None else self.comparison.as_dict(),
        }


@dataclass(slots=True)
class Receipt:
    """The whole verify run."""

    project: str
    smoke: str
    settings: dict[str, Any]
    fixes: dict[str, Any]
    runs: list[RunRecord] = field(default_factory=list)
    workspace: str | None = None
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
        """The baseline ran, and every migrated run passed and matched it."""
        base = self.baseline
        runs = self.migrated_runs
        return (
            base is not None and base.exited_ok and bool(runs) and all(run.passed for run in runs)
        )

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
            "exit_code": self.exit_code,
            "amd_gpu_used": self.amd_gpu_used,
            "workspace": self.workspace,
            "runs": [run.as_dict() for run in self.runs],
        }

    def write(self, path: Path) -> None:
        """Write the JSON receipt to ``path``."""
        path.write_text(json.dumps(self.as_dict(), indent=2) + "\n", encoding="utf-8")


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


def _outcome(run: RunRecord) -> str:
    if run.error:
        return f"not run: {run.error}"
    if run.timed_out:
        return f"killed at the timeout after {run.wall_time_s:.1f}s"
    text = f"exit {run.exit_code} in {run.wall_time_s:.1f}s"
    if run.tokens_per_second is not None:
        text += f", {run.tokens_per_second:.1f} tok/s"
    return text


def _comparison_text(comparison: Comparison | None) -> str:
    if comparison is None:
        return "not compared"
    if comparison.status == "different":
        first = comparison.first_difference
        if first is None:
            return f"outputs different ({comparison.note})"
        where = f"[{first.first_difference}]" if first.first_difference is not None else ""
        detail = first.note or f"baseline {first.baseline!r} vs migrated {first.migrated!r}"
        return f"outputs different at {first.key}{where}: {detail}"
    if comparison.status == "within-tolerance":
        return (
            f"outputs within tolerance (max abs diff {comparison.max_abs_diff:.3g}, "
            f"rtol={comparison.rtol:g}, atol={comparison.atol:g})"
        )
    if comparison.status == "equal":
        return "outputs equal"
    return f"outputs not compared ({comparison.note})"


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
    refused = [entry for entry in log.get("blocked_imports") or [] if not entry.get("internal")]
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
    """The text summary (a few lines; the receipt holds the details)."""
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
                f"baseline original/{run.label}: {state} — {_outcome(run)}; {_build_text(run)}"
            )
            if not run.exited_ok and run.failure:
                lines.append(f"    {run.failure}")
            continue
        verdict = "PASS" if run.passed else "FAIL"
        detail = _outcome(run)
        if run.exited_ok:
            detail += "; " + _comparison_text(run.comparison)
        elif run.failure:
            detail += f"; {run.failure}"
        lines.append(f"{run.label}: {verdict} — {detail}")
        if not run.emulated:
            lines.append(f"    {_build_text(run)}")
        else:
            lines.extend(_emulation_lines(run))
    migrated = receipt.migrated_runs
    passing = sum(run.passed for run in migrated)
    base = receipt.baseline
    verdict = "PASS" if receipt.passed else "FAIL"
    reason = f"{passing}/{len(migrated)} migrated runs pass and match the baseline"
    if base is not None and not base.exited_ok:
        reason = "the baseline (original tree, native) did not run cleanly; nothing to match"
    hardware = (
        "an AMD GPU was used (ROCm build of torch, tensors on the GPU)"
        if receipt.amd_gpu_used
        else "no AMD GPU was used"
    )
    lines.append(f"result: {verdict} ({reason}; {hardware})")
    lines.append(
        f"receipt: {receipt_path}" if receipt_path else "receipt: not written (pass --receipt FILE)"
    )
    return "\n".join(lines)
