"""Compare a migrated run's smoke outputs with the baseline's.

Tokens (and any list of integers) must be equal; floats must satisfy
``|migrated - baseline| <= atol + rtol * |baseline|`` elementwise; strings and other values must
be equal. Keys that describe the run rather than the model (``tokens_per_second``, ``device``,
timings) are not compared.
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

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (values only where they differ)."""
        out: dict[str, Any] = {"key": self.key, "status": self.status}
        if self.max_abs_diff is not None:
            out["max_abs_diff"] = self.max_abs_diff
        if self.first_difference is not None:
            out["first_difference"] = self.first_difference
        if self.status == DIFFERENT:
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

    @property
    def matches(self) -> bool:
        """Equal, within tolerance, or nothing to compare."""
        return self.status != DIFFERENT

    @property
    def first_difference(self) -> KeyComparison | None:
        """The first key that differs, if any."""
        return next((key for key in self.keys if key.status == DIFFERENT), None)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "status": self.status,
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
                        key, DIFFERENT, first_difference=index, baseline=old, migrated=new
                    )
            return KeyComparison(key, EQUAL)
        return _compare_floats(key, base_flat, new_flat, rtol, atol)
    if (
        _is_number(baseline)
        and _is_number(migrated)
        and not (_is_int(baseline) and _is_int(migrated))
    ):
        result = _compare_floats(key, [baseline], [migrated], rtol, atol)
        return KeyComparison(
            key, result.status, result.max_abs_diff, None, result.baseline, result.migrated
        )
    if baseline == migrated:
        return KeyComparison(key, EQUAL)
    return KeyComparison(key, DIFFERENT, baseline=baseline, migrated=migrated)


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
        )
    return KeyComparison(key, EQUAL if max_diff == 0.0 else WITHIN, max_abs_diff=max_diff)


def compare_outputs(
    baseline: dict[str, Any] | None, migrated: dict[str, Any] | None, rtol: float, atol: float
) -> Comparison:
    """Compare every key of either output, except :data:`IGNORED_KEYS`."""
    if baseline is None and migrated is None:
        return Comparison(NOT_COMPARED, note="neither run reported outputs", rtol=rtol, atol=atol)
    if baseline is None:
        return Comparison(
            NOT_COMPARED, note="the baseline reported no outputs", rtol=rtol, atol=atol
        )
    if migrated is None:
        return Comparison(
            DIFFERENT, note="the migrated run reported no outputs", rtol=rtol, atol=atol
        )
    keys: list[KeyComparison] = []
    ignored = sorted(key for key in set(baseline) | set(migrated) if key in IGNORED_KEYS)
    for key in sorted(set(baseline) | set(migrated)):
        if key in IGNORED_KEYS:
            continue
        if key not in migrated:
            keys.append(KeyComparison(key, DIFFERENT, note="missing from the migrated run"))
        elif key not in baseline:
            keys.append(KeyComparison(key, DIFFERENT, note="missing from the baseline"))
        else:
            keys.append(compare_values(key, baseline[key], migrated[key], rtol, atol))
    status = max((key.status for key in keys), key=_RANK.__getitem__, default=EQUAL)
    diffs = [key.max_abs_diff for key in keys if key.max_abs_diff is not None]
    return Comparison(
        status,
        tuple(keys),
        max_abs_diff=max(diffs) if diffs else None,
        rtol=rtol,
        atol=atol,
        ignored=tuple(ignored),
    )
