"""Compare a migrated run's smoke outputs with the baseline's.

Tokens (and any list of integers) must be equal; floats must satisfy
``|migrated - baseline| <= atol + rtol * |baseline|`` elementwise; strings and other values must
be equal. Keys that describe the run rather than the model (``tokens_per_second``, ``device``,
timings) are not compared. Every verdict counts the keys and values it compared: a comparison of
nothing is ``not-compared``, never a match.

The unchanged baseline runs more than once (``--baseline-runs``, default 5), so each key's own
run-to-run noise is measured (:mod:`migrator.verify.noise`): a float key that varies is compared
with the baseline's median, and its tolerance is the larger of the user's and ``noise multiple ×``
its robust standard deviation; every key records which applied and why. A key that varies over
fewer than three runs is **not judged** when it stays within that tolerance (one outlier run could
have widened it) and different when it does not. A difference names how much the unchanged
baseline varied on that key.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from migrator.verify.noise import (
    DEFAULT_NOISE_MULTIPLE,
    IGNORED_KEYS,
    MIN_ROBUST_RUNS,
    Noise,
    baseline_noise,
    flatten,
    float_values,
    is_exact_key,
    is_int,
    is_number,
)

__all__ = [
    "DEFAULT_NOISE_MULTIPLE",
    "IGNORED_KEYS",
    "Comparison",
    "KeyComparison",
    "Noise",
    "baseline_noise",
    "compare_outputs",
    "compare_test_outcomes",
    "compare_values",
    "flaky_tests",
]

EQUAL = "equal"
WITHIN = "within-tolerance"
DIFFERENT = "different"
NOT_COMPARED = "not-compared"
NOT_JUDGED = "not-judged"
_RANK = {EQUAL: 0, NOT_COMPARED: 0, NOT_JUDGED: 0, WITHIN: 1, DIFFERENT: 2}


@dataclass(frozen=True, slots=True)
class KeyComparison:
    """The verdict for one output key."""

    key: str
    status: str
    max_abs_diff: float | None = None
    first_difference: int | None = None
    baseline: Any = None
    migrated: Any = None
    note: str = ""
    values: int = 0
    step: str | None = None
    tolerance: Mapping[str, Any] | None = None

    @property
    def compared(self) -> bool:
        """At least one value of this key was compared with the baseline's."""
        return self.values > 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (values only where they differ)."""
        out: dict[str, Any] = {"key": self.key, "status": self.status, "values": self.values}
        if self.step is not None:
            out["step"] = self.step
        if self.max_abs_diff is not None:
            out["max_abs_diff"] = self.max_abs_diff
        if self.first_difference is not None:
            out["first_difference"] = self.first_difference
        if self.status == DIFFERENT or isinstance(self.baseline, str):
            out["baseline"] = self.baseline
            out["migrated"] = self.migrated
        if self.note:
            out["note"] = self.note
        if self.tolerance is not None:
            out["tolerance"] = dict(self.tolerance)
        return out


@dataclass(frozen=True, slots=True)
class Comparison:
    """The verdict for one run against the baseline."""

    status: str
    keys: tuple[KeyComparison, ...] = ()
    note: str = ""
    max_abs_diff: float | None = None
    rtol: float = 0.0
    atol: float = 0.0
    ignored: tuple[str, ...] = field(default_factory=tuple)
    source: str | None = None
    noise: Noise | None = None

    @property
    def matches(self) -> bool:
        """Something was compared and everything compared is equal or within tolerance."""
        return self.status in (EQUAL, WITHIN) and self.values_compared > 0

    @property
    def keys_compared(self) -> int:
        """How many keys had at least one value compared."""
        return sum(key.compared for key in self.keys)

    @property
    def values_compared(self) -> int:
        """How many values were compared, over all keys."""
        return sum(key.values for key in self.keys)

    @property
    def first_difference(self) -> KeyComparison | None:
        """The first key that differs, if any."""
        return next((key for key in self.keys if key.status == DIFFERENT), None)

    @property
    def not_judged(self) -> list[KeyComparison]:
        """Keys that varied over too few baseline runs to be judged (and did not differ)."""
        return [key for key in self.keys if key.status == NOT_JUDGED]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "status": self.status,
            "source": self.source,
            "keys_compared": self.keys_compared,
            "values_compared": self.values_compared,
            "max_abs_diff": self.max_abs_diff,
            "rtol": self.rtol,
            "atol": self.atol,
            "note": self.note,
            "keys": [key.as_dict() for key in self.keys],
            "ignored_keys": list(self.ignored),
            "not_judged": [key.key for key in self.not_judged],
            "noise": self.noise.as_dict() if self.noise is not None else None,
        }


def _shape(value: Any) -> Any:
    if isinstance(value, list):
        return [len(value), *([_shape(value[0])] if value else [])]
    return None


def compare_values(
    key: str, baseline: Any, migrated: Any, rtol: float, atol: float, noise: Noise | None = None
) -> KeyComparison:
    """Compare one key's values (see the module docstring for the rules)."""
    base_flat, new_flat = flatten(baseline), flatten(migrated)
    if base_flat is not None and new_flat is not None:
        if _shape(baseline) != _shape(migrated) or len(base_flat) != len(new_flat):
            return KeyComparison(
                key,
                DIFFERENT,
                baseline=_shape(baseline),
                migrated=_shape(migrated),
                note="shape differs",
                values=1,
            )
        exact = is_exact_key(key) or all(is_int(item) for item in base_flat + new_flat)
        if exact or not all(is_number(item) for item in base_flat + new_flat):
            for index, (old, new) in enumerate(zip(base_flat, new_flat, strict=True)):
                if old != new:
                    return KeyComparison(
                        key,
                        DIFFERENT,
                        first_difference=index,
                        baseline=old,
                        migrated=new,
                        values=len(base_flat),
                    )
            return KeyComparison(key, EQUAL, values=len(base_flat))
        return _compare_floats(key, base_flat, new_flat, rtol, atol, noise)
    if is_number(baseline) and is_number(migrated) and not (is_int(baseline) and is_int(migrated)):
        result = _compare_floats(key, [baseline], [migrated], rtol, atol, noise)
        return replace(result, first_difference=None)
    if baseline == migrated:
        return KeyComparison(key, EQUAL, values=1)
    return KeyComparison(key, DIFFERENT, baseline=baseline, migrated=migrated, values=1)


def _compare_floats(
    key: str,
    baseline: list[Any],
    migrated: list[Any],
    rtol: float,
    atol: float,
    noise: Noise | None = None,
) -> KeyComparison:
    """Elementwise; where the key varies between baseline runs, against their median with the
    noise's allowance. A key that varies over too few runs is not judged unless it differs even
    by that allowance."""
    reference = noise.reference(key, baseline) if noise is not None else list(baseline)
    allowances = noise.allowances(key, len(reference)) if noise is not None else []
    max_diff = 0.0
    first_bad: int | None = None
    for index, (old, new) in enumerate(zip(reference, migrated, strict=True)):
        old_f, new_f = float(old), float(new)
        if math.isnan(old_f) or math.isnan(new_f):
            if not (math.isnan(old_f) and math.isnan(new_f)) and first_bad is None:
                first_bad = index
            continue
        diff = abs(new_f - old_f)
        max_diff = max(max_diff, diff)
        allowed = allowances[index] if index < len(allowances) else 0.0
        if diff > max(atol + rtol * abs(old_f), allowed) and first_bad is None:
            first_bad = index
    if first_bad is not None:
        return KeyComparison(
            key,
            DIFFERENT,
            max_abs_diff=max_diff,
            first_difference=first_bad,
            baseline=reference[first_bad],
            migrated=migrated[first_bad],
            values=len(reference),
        )
    if noise is not None and not noise.judged(key):
        found = noise.key(key)
        runs = found.runs if found is not None else noise.runs
        return KeyComparison(
            key,
            NOT_JUDGED,
            max_abs_diff=max_diff,
            note=(
                f"not judged: its baseline runs differ and {runs} printed it; "
                f"{MIN_ROBUST_RUNS} are needed to outvote one outlier run "
                f"(--baseline-runs {MIN_ROBUST_RUNS})"
            ),
        )
    return KeyComparison(
        key, EQUAL if max_diff == 0.0 else WITHIN, max_abs_diff=max_diff, values=len(reference)
    )


def compare_outputs(
    baseline: dict[str, Any] | None,
    migrated: dict[str, Any] | None,
    rtol: float,
    atol: float,
    *,
    source: str | None = None,
    steps: dict[str, list[str | None]] | None = None,
    noise: Noise | None = None,
) -> Comparison:
    """Compare every key of either output, except :data:`IGNORED_KEYS`.

    ``steps`` (from stdout series) names the step of each value, so that a difference is
    reported as ``loss at step 12/20`` rather than only by position. ``noise`` (from repeated
    baseline runs) compares a float key that varies with the runs' median, within its own noise
    times the noise multiple.
    """
    if not baseline and not migrated:
        return Comparison(
            NOT_COMPARED, note="neither run reported outputs", rtol=rtol, atol=atol, source=source
        )
    if not baseline:
        return Comparison(
            NOT_COMPARED,
            note="the baseline reported no outputs",
            rtol=rtol,
            atol=atol,
            source=source,
        )
    if not migrated:
        return Comparison(
            DIFFERENT,
            note="the migrated run reported no outputs",
            rtol=rtol,
            atol=atol,
            source=source,
        )
    keys: list[KeyComparison] = []
    ignored = sorted(key for key in set(baseline) | set(migrated) if key in IGNORED_KEYS)
    for key in sorted(set(baseline) | set(migrated)):
        if key in IGNORED_KEYS:
            continue
        if key not in migrated:
            keys.append(KeyComparison(key, DIFFERENT, note="missing from the migrated run"))
        elif key not in baseline:
            if steps is None:
                keys.append(KeyComparison(key, DIFFERENT, note="missing from the baseline"))
            else:  # a printed line the original never printed: reported, not compared
                keys.append(
                    KeyComparison(key, NOT_COMPARED, note="printed by the migrated run only")
                )
        else:
            if steps is not None and key in steps:
                found = _compare_series(key, baseline[key], migrated[key], steps, rtol, atol, noise)
            else:
                found = compare_values(key, baseline[key], migrated[key], rtol, atol, noise)
            keys.append(_with_tolerance(found, baseline[key], rtol, atol, noise))
    compared = [key for key in keys if key.compared or key.status == DIFFERENT]
    status = max((key.status for key in compared), key=_RANK.__getitem__, default=NOT_COMPARED)
    diffs = [key.max_abs_diff for key in keys if key.max_abs_diff is not None]
    unjudged = [key.key for key in keys if key.status == NOT_JUDGED]
    if compared:
        note = ""
    elif unjudged:
        runs = max((key.runs for key in (noise.keys.values() if noise else ())), default=0)
        note = (
            f"no key could be judged: {', '.join(unjudged)} varied over {runs} baseline runs, "
            f"too few to outvote one outlier run ({MIN_ROBUST_RUNS} are needed)"
        )
    else:
        note = "no output key is common to both runs"
    return Comparison(
        status,
        tuple(keys),
        note=note,
        max_abs_diff=max(diffs) if diffs else None,
        rtol=rtol,
        atol=atol,
        ignored=tuple(ignored),
        source=source,
        noise=noise,
    )


def _with_tolerance(
    found: KeyComparison, baseline: Any, rtol: float, atol: float, noise: Noise | None
) -> KeyComparison:
    """Record which tolerance applied to a key and why (user's, or the baseline's own noise)."""
    numbers = float_values(baseline)
    if numbers is None and (noise is None or found.key not in noise.varies):
        return found
    record: dict[str, Any] = {"baseline_runs": noise.runs if noise is not None else 1}
    if noise is not None and found.key in noise.varies:
        record.update(applied="exact", baseline_varies=noise.varies[found.key])
        record["why"] = (
            f"compared exactly; the unchanged baseline itself differed between runs at "
            f"{noise.varies[found.key]}"
        )
        return replace(found, tolerance=record)
    finite = [value for value in numbers or [] if math.isfinite(value)]
    user = atol + rtol * max((abs(value) for value in finite), default=0.0)
    record.update(rtol=rtol, atol=atol, user_allowance=user)
    if noise is None or noise.runs < 2:
        record.update(applied="user", why="the baseline ran once: its own noise is not measured")
        return replace(found, tolerance=record)
    key = noise.key(found.key)
    if key is None:
        record.update(
            applied="user",
            effective_allowance=user,
            why=f"the unchanged baseline gave the same values in all {noise.runs} runs",
        )
        return replace(found, tolerance=record)
    allowances = noise.allowances(found.key, len(key.scale))
    widest = max(allowances, default=0.0)
    record.update(
        baseline_runs=key.runs,
        reference=f"the median of {key.runs} baseline runs",
        statistic="median absolute deviation per value, scaled to a standard deviation",
        baseline_spread=key.spread,
        relative_sigma=key.relative,
        noise_multiple=noise.multiple,
        relative_allowance=noise.multiple * key.relative,
        noise_allowance=widest,
        outlier_runs=list(key.outliers),
    )
    if found.status == NOT_JUDGED:
        record.update(applied="not-judged", effective_allowance=max(widest, user), why=found.note)
    elif widest > user:
        record.update(
            applied="baseline-noise",
            effective_allowance=widest,
            why=(
                f"the unchanged baseline varies by {key.relative:.3%} (robust standard deviation) "
                f"over {key.runs} runs; {noise.multiple:g} × that exceeds atol + rtol × |baseline|"
            ),
        )
    else:
        record.update(
            applied="user",
            effective_allowance=user,
            why=(
                f"the baseline's own noise ({key.relative:.3%} over {key.runs} runs) × "
                f"{noise.multiple:g} is within atol + rtol × |baseline|"
            ),
        )
    return replace(found, tolerance=record)


def _compare_series(
    key: str,
    baseline: list[float],
    migrated: list[float],
    steps: dict[str, list[str | None]],
    rtol: float,
    atol: float,
    noise: Noise | None = None,
) -> KeyComparison:
    """Values printed under one label, n-th against n-th; a missing tail is a difference."""
    common = min(len(baseline), len(migrated))
    key_steps = steps.get(key) or []

    def step_of(index: int) -> str:
        step = key_steps[index] if index < len(key_steps) else None
        return f"step {step}" if step else f"occurrence {index + 1}"

    result = _compare_floats(key, baseline[:common], migrated[:common], rtol, atol, noise)
    if result.status == DIFFERENT and result.first_difference is not None:
        return KeyComparison(
            key,
            DIFFERENT,
            max_abs_diff=result.max_abs_diff,
            first_difference=result.first_difference,
            baseline=result.baseline,
            migrated=result.migrated,
            values=common,
            step=step_of(result.first_difference),
        )
    if len(baseline) != len(migrated):
        return KeyComparison(
            key,
            DIFFERENT,
            max_abs_diff=result.max_abs_diff,
            first_difference=common,
            note=f"the baseline printed {len(baseline)} values, the migrated run {len(migrated)}",
            values=common,
            step=step_of(common),
        )
    if result.status == NOT_JUDGED:
        return result
    return KeyComparison(key, result.status, max_abs_diff=result.max_abs_diff, values=common)


PASSING_OUTCOMES = frozenset({"passed", "xfailed", "xpassed"})


def flaky_tests(runs: Sequence[Mapping[str, str] | None]) -> dict[str, list[str]]:
    """Tests whose outcome differed between runs of the unchanged original: id → outcomes."""
    reports = [run for run in runs if run is not None]
    found: dict[str, list[str]] = {}
    for test_id in sorted({test for report in reports for test in report}):
        outcomes = [report.get(test_id, "not collected") for report in reports]
        if len(set(outcomes)) > 1:
            found[test_id] = outcomes
    return found


def compare_test_outcomes(
    baseline: dict[str, str] | None,
    migrated: dict[str, str] | None,
    flaky: Mapping[str, Sequence[str]] | None = None,
) -> Comparison:
    """Per-test outcomes (pytest ids): a test that passed on the original must pass migrated.

    A test in ``flaky`` (its outcome varied over the original's runs) is reported, not compared.
    """
    source = "pytest"
    if not baseline:
        note = "the baseline collected no tests" if baseline is not None else "no test report"
        return Comparison(NOT_COMPARED, note=note, source=source)
    if migrated is None:
        return Comparison(DIFFERENT, note="the migrated run wrote no test report", source=source)
    keys: list[KeyComparison] = []
    for test_id in sorted(set(baseline) | set(migrated)):
        old = baseline.get(test_id)
        new = migrated.get(test_id)
        if old is None:
            keys.append(KeyComparison(test_id, NOT_COMPARED, migrated=new, note="new test"))
            continue
        if new is None:
            status = DIFFERENT if old in PASSING_OUTCOMES else NOT_COMPARED
            keys.append(
                KeyComparison(
                    test_id, status, baseline=old, note="not collected on the migrated tree"
                )
            )
            continue
        if flaky and test_id in flaky:
            keys.append(
                KeyComparison(
                    test_id,
                    NOT_COMPARED,
                    baseline=old,
                    migrated=new,
                    note="outcome varies on the unchanged original: " + ", ".join(flaky[test_id]),
                )
            )
            continue
        if old not in PASSING_OUTCOMES:  # no evidence either way: reported, not compared
            keys.append(
                KeyComparison(
                    test_id, NOT_COMPARED, baseline=old, migrated=new, note=f"{old} on the original"
                )
            )
            continue
        status = EQUAL if new in PASSING_OUTCOMES else DIFFERENT
        keys.append(KeyComparison(test_id, status, baseline=old, migrated=new, values=1))
    compared = [key for key in keys if key.compared or key.status == DIFFERENT]
    status = max((key.status for key in compared), key=_RANK.__getitem__, default=NOT_COMPARED)
    return Comparison(status, tuple(keys), source=source)
