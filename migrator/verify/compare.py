"""Compare a migrated run's smoke outputs with the baseline's.

Tokens (and any list of integers) must be equal; floats must satisfy
``|migrated - baseline| <= atol + rtol * |baseline|`` elementwise; strings and other values must
be equal. Keys that describe the run rather than the model (``tokens_per_second``, ``device``,
timings) are not compared. Every verdict counts the keys and values it compared: a comparison of
nothing is ``not-compared``, never a match.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

IGNORED_KEYS = frozenset(
    {
        "tokens_per_second",
        "device",
        "device_name",
        "elapsed",
        "elapsed_s",
        "seconds",
        "time",
        "time_s",
        "wall_time",
        "wall_time_s",
        "torch_version",
    }
)

EQUAL = "equal"
WITHIN = "within-tolerance"
DIFFERENT = "different"
NOT_COMPARED = "not-compared"
_RANK = {EQUAL: 0, NOT_COMPARED: 0, WITHIN: 1, DIFFERENT: 2}


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
        }


def _flatten(value: Any) -> list[Any] | None:
    """Nested lists of scalars → flat list; None when ``value`` is not a list."""
    if not isinstance(value, list):
        return None
    flat: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
        else:
            flat.append(item)
    return flat


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _shape(value: Any) -> Any:
    if isinstance(value, list):
        return [len(value), *([_shape(value[0])] if value else [])]
    return None


def compare_values(
    key: str, baseline: Any, migrated: Any, rtol: float, atol: float
) -> KeyComparison:
    """Compare one key's values (see the module docstring for the rules)."""
    base_flat, new_flat = _flatten(baseline), _flatten(migrated)
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
        exact = (
            key == "tokens"
            or key.endswith("tokens")
            or all(_is_int(item) for item in base_flat + new_flat)
        )
        if exact or not all(_is_number(item) for item in base_flat + new_flat):
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
        return _compare_floats(key, base_flat, new_flat, rtol, atol)
    if (
        _is_number(baseline)
        and _is_number(migrated)
        and not (_is_int(baseline) and _is_int(migrated))
    ):
        result = _compare_floats(key, [baseline], [migrated], rtol, atol)
        return KeyComparison(
            key,
            result.status,
            result.max_abs_diff,
            None,
            result.baseline,
            result.migrated,
            values=1,
        )
    if baseline == migrated:
        return KeyComparison(key, EQUAL, values=1)
    return KeyComparison(key, DIFFERENT, baseline=baseline, migrated=migrated, values=1)


def _compare_floats(
    key: str, baseline: list[Any], migrated: list[Any], rtol: float, atol: float
) -> KeyComparison:
    max_diff = 0.0
    first_bad: int | None = None
    for index, (old, new) in enumerate(zip(baseline, migrated, strict=True)):
        old_f, new_f = float(old), float(new)
        if math.isnan(old_f) or math.isnan(new_f):
            if not (math.isnan(old_f) and math.isnan(new_f)) and first_bad is None:
                first_bad = index
            continue
        diff = abs(new_f - old_f)
        max_diff = max(max_diff, diff)
        if diff > atol + rtol * abs(old_f) and first_bad is None:
            first_bad = index
    if first_bad is not None:
        return KeyComparison(
            key,
            DIFFERENT,
            max_abs_diff=max_diff,
            first_difference=first_bad,
            baseline=baseline[first_bad],
            migrated=migrated[first_bad],
            values=len(baseline),
        )
    return KeyComparison(
        key, EQUAL if max_diff == 0.0 else WITHIN, max_abs_diff=max_diff, values=len(baseline)
    )


def compare_outputs(
    baseline: dict[str, Any] | None,
    migrated: dict[str, Any] | None,
    rtol: float,
    atol: float,
    *,
    source: str | None = None,
    steps: dict[str, list[str | None]] | None = None,
) -> Comparison:
    """Compare every key of either output, except :data:`IGNORED_KEYS`.

    ``steps`` (from stdout series) names the step of each value, so that a difference is
    reported as ``loss at step 12/20`` rather than only by position.
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
        elif steps is not None and key in steps:
            keys.append(_compare_series(key, baseline[key], migrated[key], steps, rtol, atol))
        else:
            keys.append(compare_values(key, baseline[key], migrated[key], rtol, atol))
    compared = [key for key in keys if key.compared or key.status == DIFFERENT]
    status = max((key.status for key in compared), key=_RANK.__getitem__, default=NOT_COMPARED)
    diffs = [key.max_abs_diff for key in keys if key.max_abs_diff is not None]
    return Comparison(
        status,
        tuple(keys),
        note="" if compared else "no output key is common to both runs",
        max_abs_diff=max(diffs) if diffs else None,
        rtol=rtol,
        atol=atol,
        ignored=tuple(ignored),
        source=source,
    )


def _compare_series(
    key: str,
    baseline: list[float],
    migrated: list[float],
    steps: dict[str, list[str | None]],
    rtol: float,
    atol: float,
) -> KeyComparison:
    """Values printed under one label, n-th against n-th; a missing tail is a difference."""
    common = min(len(baseline), len(migrated))
    key_steps = steps.get(key) or []

    def step_of(index: int) -> str:
        step = key_steps[index] if index < len(key_steps) else None
        return f"step {step}" if step else f"occurrence {index + 1}"

    result = _compare_floats(key, baseline[:common], migrated[:common], rtol, atol)
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
    return KeyComparison(key, result.status, max_abs_diff=result.max_abs_diff, values=common)


PASSING_OUTCOMES = frozenset({"passed", "xfailed", "xpassed"})


def compare_test_outcomes(
    baseline: dict[str, str] | None, migrated: dict[str, str] | None
) -> Comparison:
    """Per-test outcomes (pytest ids): a test that passed on the original must pass migrated."""
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
