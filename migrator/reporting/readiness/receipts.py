"""Verification receipts (``migrate verify --receipt``), read tolerantly for the report.

The receipt format belongs to verify: files are read and verdicts derived by
:mod:`migrator.verify.receipt_format`; this module only builds the report's view.
"""

from __future__ import annotations

from dataclasses import dataclass

from migrator.reporting.readiness.dependencies import text_of
from migrator.verify import receipt_format


@dataclass(frozen=True, slots=True)
class RunView:
    """One run in a verify receipt, worded so that emulation is never mistaken for hardware."""

    target: str
    tree: str
    baseline: bool
    emulated: bool
    device: str
    torch_build: str
    tokens_per_second: float | None
    passed: bool | None
    amd_hardware: bool


@dataclass(frozen=True, slots=True)
class Verification:
    """What a receipt says: overall result, runs, throughput before and after."""

    path: str
    project: str
    created: str
    passed: bool | None
    runs: list[RunView]
    tokens_before: float | None
    tokens_after: float | None
    amd_hardware: bool
    emulated: bool
    headline: str
    verdict: str = ""

    @property
    def speedup(self) -> float | None:
        """tokens/s after divided by before, when both are known."""
        if self.tokens_before and self.tokens_after is not None:
            return self.tokens_after / self.tokens_before
        return None

    @property
    def result_label(self) -> str:
        """PASS / FAIL / NOT COMPARED (never a match for outputs that were not compared)."""
        if self.verdict and self.verdict != "unknown":
            return self.verdict
        return {True: "PASS", False: "FAIL", None: "unknown"}[self.passed]


class ReceiptError(ValueError):
    """The receipt file cannot be read or is not a verify receipt."""


def _bool(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in {"true", "yes", "pass", "passed"}:
        return True
    if isinstance(value, str) and value.lower() in {"false", "no", "fail", "failed"}:
        return False
    return None


def _float(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _build_kind(build: object) -> str | None:
    if isinstance(build, dict):
        kind = build.get("kind")
        if isinstance(kind, str) and kind:
            return kind.lower()
        if build.get("hip"):
            return "rocm"
        if build.get("cuda"):
            return "cuda"
        return "cpu" if build.get("torch") else None
    if isinstance(build, str):
        lower = build.lower()
        if "rocm" in lower or "hip" in lower:
            return "rocm"
        if "cu" in lower:
            return "cuda"
        return "cpu" if lower else None
    return None


def _build_text(build: object) -> str:
    if isinstance(build, dict):
        kind = _build_kind(build)
        version = build.get("torch") or build.get("version") or "?"
        detail = {
            "rocm": f"ROCm/HIP {build.get('hip')}",
            "cuda": f"CUDA {build.get('cuda')}",
            "cpu": "CPU-only",
        }.get(kind or "", kind or "unknown")
        return f"torch {version} ({detail} build)"
    if isinstance(build, str) and build:
        return build
    return "torch not imported"


def _run_view(raw: dict[str, object]) -> RunView:
    emulated = _bool(raw.get("emulated")) is True
    real_device = text_of(raw.get("real_device") or raw.get("device") or "unknown")
    device_name = text_of(raw.get("device_name") or "")
    target = text_of(raw.get("target") or "?")
    build = raw.get("torch_build")
    ran_on_gpu = _bool(raw.get("ran_on_gpu"))
    amd = (
        not emulated
        and _bool(raw.get("emulated")) is False
        and _build_kind(build) == "rocm"
        and ran_on_gpu is not False
        and (
            ran_on_gpu is True
            or any(
                word in f"{real_device} {device_name}".lower()
                for word in ("amd", "instinct", "radeon", "gfx")
            )
        )
    )
    if emulated:
        emulation = text_of(raw.get("emulation") or f"ROCm on {target}")
        device = f"emulated ROCm ({emulation}) over {real_device}"
    elif amd:
        device = f"{device_name or real_device} (ROCm build on an AMD GPU)"
    else:
        device = (
            real_device
            if not device_name or device_name == real_device
            else f"{device_name} ({real_device})"
        )
    tree = text_of(raw.get("tree") or ("original" if raw.get("baseline") else "migrated"))
    baseline = _bool(raw.get("baseline")) is True or tree.lower() in {
        "original",
        "before",
        "baseline",
    }
    return RunView(
        target=target,
        tree=tree,
        baseline=baseline,
        emulated=emulated,
        device=device,
        torch_build=_build_text(build),
        tokens_per_second=_float(raw.get("tokens_per_second")),
        passed=None
        if receipt_format.run_verdict(dict(raw)) == "not-compared"
        else _bool(raw.get("passed")),
        amd_hardware=amd,
    )


def read_receipt(path: str) -> Verification:
    """Load a verify receipt; unknown or missing fields degrade to "unknown", never to a claim."""
    try:
        data = receipt_format.load(path)
    except receipt_format.ReceiptFormatError as error:
        raise ReceiptError(str(error)) from error
    return verification_from_dict(data, path)


def verification_from_dict(data: dict[str, object], path: str = "") -> Verification:
    """Build the report's view of a receipt already parsed from JSON."""
    raw_runs = data.get("runs")
    runs = (
        [_run_view(run) for run in raw_runs if isinstance(run, dict)]
        if isinstance(raw_runs, list)
        else []
    )
    declared = _bool(data.get("amd_gpu_used"))
    amd = any(run.amd_hardware for run in runs) and declared is not False
    emulated = any(run.emulated for run in runs)
    baseline = next((run for run in runs if run.baseline), None)
    migrated = [run for run in runs if not run.baseline]
    preferred = sorted(
        migrated, key=lambda run: (not run.amd_hardware, run.tokens_per_second is None)
    )
    after = next(
        (run.tokens_per_second for run in preferred if run.tokens_per_second is not None), None
    )
    passed = _bool(data.get("passed"))
    if passed is None and runs and all(run.passed is not None for run in migrated) and migrated:
        passed = all(run.passed for run in migrated)
    if amd:
        hardware = next(run.device for run in runs if run.amd_hardware)
        headline = f"a ROCm build of torch ran on an AMD GPU: {hardware}"
    elif emulated:
        emulated_run = next(run for run in runs if run.emulated)
        headline = f"{emulated_run.device}; no AMD GPU ran"
    elif runs:
        headline = f"native run on {runs[0].device}; no AMD GPU ran"
    else:
        headline = "the receipt lists no runs; no AMD GPU ran"
    return Verification(
        path=path,
        project=text_of(data.get("project") or ""),
        created=text_of(data.get("created") or ""),
        passed=passed,
        runs=runs,
        tokens_before=baseline.tokens_per_second if baseline else None,
        tokens_after=after,
        amd_hardware=amd,
        emulated=emulated,
        headline=headline,
        verdict=receipt_format.verdict_label(dict(data)),
    )
