"""The baseline's own run-to-run noise per output key, measured so that one outlier run cannot
widen it.

The unchanged original runs several times (``--baseline-runs``, default 5). For each float key
and each printed position, the reference is the **median** of the runs and the noise the
**median absolute deviation** (MAD) from it, scaled to a standard deviation for that number of
runs (:func:`mad_to_sigma`). A position's scale is at least the key's typical relative MAD (the
median over its positions), so a position where the runs happen to agree is not held to zero,
while a key whose noise grows along the run keeps each position's own. A migrated value may
differ from the reference by ``multiple × scale`` (or the user's ``atol + rtol × |value|``,
whichever is larger). Medians outvote one run of three, so one outlier run moves neither the
reference nor the tolerance; it is named instead. A key whose runs differ but which fewer than
:data:`MIN_ROBUST_RUNS` runs printed cannot be judged that way (see :mod:`migrator.verify.compare`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
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
DEFAULT_NOISE_MULTIPLE = 5.0
"""A float value may differ from the baseline's median by this many robust standard deviations:
with five baseline runs, identical code fails a 30-value key about once in 400 runs for normal
noise (simulated; docs/verification.md)."""
MIN_ROBUST_RUNS = 3
"""Runs a varying key needs before a median can outvote one outlier run."""
_MAD_TO_SIGMA = (2.091, 2.769, 2.211, 1.987, 1.877, 1.795, 1.748, 1.706, 1.682, 1.657, 1.642)
"""1 / the median MAD of 2..12 standard normal samples (simulated, 400,000 draws each)."""


def mad_to_sigma(runs: int) -> float:
    """The factor that turns the median MAD of ``runs`` values into a standard deviation (1.4826
    for many runs; larger for few, whose MAD is small: of three values one is the median)."""
    if runs < 2:
        return 0.0
    if runs - 2 < len(_MAD_TO_SIGMA):
        return _MAD_TO_SIGMA[runs - 2]
    return 1.4826 * (1 + 1.2 / runs)


def flatten(value: Any) -> list[Any] | None:
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


def is_int(value: Any) -> bool:
    """An integer, not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """An int or float, not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def float_values(value: Any) -> list[float] | None:
    """A float key's values, flattened; None for integers (compared exactly) and non-numbers."""
    flat = flatten(value) if isinstance(value, list) else [value]
    if flat is None or not flat or not all(is_number(item) for item in flat):
        return None
    if all(is_int(item) for item in flat):
        return None
    return [float(item) for item in flat]


def is_exact_key(key: str) -> bool:
    """Tokens are compared exactly, whatever their type."""
    return key == "tokens" or key.endswith("tokens")


@dataclass(frozen=True, slots=True)
class KeyNoise:
    """One float key over the baseline's runs."""

    runs: int
    center: tuple[float, ...]
    #: per position: the robust standard deviation (absolute)
    scale: tuple[float, ...]
    #: the key's typical relative standard deviation (median over positions)
    relative: float
    #: the widest difference between any two runs at one position
    spread: float
    #: per position: the larger of the runs' range there and the key's widest relative range
    #: times the value (what a key varying over too few runs is allowed, times the multiple)
    ranges: tuple[float, ...] = ()
    #: baseline runs (1-based, among those that ran cleanly) beyond the tolerance at most
    #: positions: set aside by the medians
    outliers: tuple[int, ...] = ()
    #: the widest difference between two runs that are not outliers
    inlier_spread: float = 0.0

    @property
    def varies(self) -> bool:
        """The runs did not all print the same values."""
        return self.spread > 0


@dataclass(frozen=True, slots=True)
class Noise:
    """What the repeated runs of the unchanged baseline say about each output key."""

    runs: int
    multiple: float = DEFAULT_NOISE_MULTIPLE
    keys: Mapping[str, KeyNoise] = field(default_factory=dict)
    #: other keys whose value differed between baseline runs: where (``tokens[5]``)
    varies: Mapping[str, str] = field(default_factory=dict)

    def key(self, name: str) -> KeyNoise | None:
        """The noise of a float key that varied between the baseline's runs (None otherwise)."""
        found = self.keys.get(name)
        return found if found is not None and found.varies else None

    def allowances(self, name: str, count: int) -> list[float]:
        """Per position of ``name``: the absolute difference the baseline's noise allows (for a
        key too few runs printed, its widest range: a difference beyond even that is real)."""
        found = self.key(name)
        if found is None:
            return [0.0] * count
        scale = found.scale if found.runs >= MIN_ROBUST_RUNS else found.ranges
        return [self.multiple * (scale[i] if i < len(scale) else 0.0) for i in range(count)]

    def judged(self, name: str) -> bool:
        """False for a key whose runs differ but too few runs printed it to outvote an outlier."""
        found = self.key(name)
        return found is None or found.runs >= MIN_ROBUST_RUNS

    def reference(self, name: str, values: Sequence[Any]) -> list[Any]:
        """What a migrated value is compared with: the baseline's median where the key varies."""
        found = self.key(name)
        if found is None or len(found.center) < len(values):
            return list(values)
        return [
            center if math.isfinite(center) else value
            for center, value in zip(found.center, values, strict=False)
        ]

    def widest(self, name: str) -> float:
        """The largest absolute difference between baseline runs on ``name`` (0 when none)."""
        found = self.keys.get(name)
        return found.spread if found is not None else 0.0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "baseline_runs": self.runs,
            "noise_multiple": self.multiple,
            "statistic": "median absolute deviation per position, scaled to a standard deviation",
            "spread": {name: key.spread for name, key in self.keys.items()},
            "relative_sigma": {name: key.relative for name, key in self.keys.items()},
            "runs_per_key": {name: key.runs for name, key in self.keys.items()},
            "outliers": {
                name: list(key.outliers) for name, key in self.keys.items() if key.outliers
            },
            "varies": dict(self.varies),
        }


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def key_noise(series: Sequence[Sequence[float]], multiple: float) -> KeyNoise:
    """One key's noise from each run's values (see the module docstring)."""
    length = max((len(values) for values in series), default=0)
    centers: list[float] = []
    mads: list[float] = []
    counts: list[int] = []
    widths: list[float] = []
    spread = 0.0
    for index in range(length):
        column = [
            values[index]
            for values in series
            if index < len(values) and math.isfinite(values[index])
        ]
        if not column:
            centers.append(math.nan)
            mads.append(0.0)
            counts.append(0)
            widths.append(0.0)
            continue
        center = _median(column)
        centers.append(center)
        mads.append(_median([abs(value - center) for value in column]))
        counts.append(len(column))
        widths.append(max(column) - min(column))
        spread = max(spread, widths[-1])
    relatives = [
        mad / abs(center)
        for mad, center, count in zip(mads, centers, counts, strict=True)
        if count >= 2 and math.isfinite(center) and center != 0
    ]
    relative_mad = _median(relatives) if relatives else 0.0
    # The scale is itself estimated: from few deviations it may come out small by chance, and
    # the tolerance widens as Student's t does over the normal (×2 from 4 deviations, ×1.1 from 40).
    deviations = sum(max(count - 1, 0) for count in counts)
    widen = 1 + 4 / deviations if deviations else 1.0
    scale = tuple(
        widen
        * mad_to_sigma(count)
        * max(mad, relative_mad * abs(center) if math.isfinite(center) else 0)
        for mad, center, count in zip(mads, centers, counts, strict=True)
    )
    widest_relative = max(
        (
            width / abs(center)
            for width, center in zip(widths, centers, strict=True)
            if math.isfinite(center) and center != 0
        ),
        default=0.0,
    )
    ranges = tuple(
        max(width, widest_relative * abs(center) if math.isfinite(center) else 0.0)
        for width, center in zip(widths, centers, strict=True)
    )
    runs = max(counts, default=0)
    outliers: list[int] = []
    for number, values in enumerate(series, 1):
        beyond = [
            abs(value - center) > multiple * sigma
            for value, center, sigma in zip(values, centers, scale, strict=False)
            if math.isfinite(value) and math.isfinite(center)
        ]
        if beyond and sum(beyond) * 2 > len(beyond) and runs >= MIN_ROBUST_RUNS:
            outliers.append(number)
    inliers = [values for number, values in enumerate(series, 1) if number not in outliers]
    inlier_spread = 0.0
    for index in range(length):
        column = [v[index] for v in inliers if index < len(v) and math.isfinite(v[index])]
        if column:
            inlier_spread = max(inlier_spread, max(column) - min(column))
    return KeyNoise(
        runs=runs,
        center=tuple(centers),
        scale=scale,
        relative=mad_to_sigma(runs) * relative_mad,
        spread=spread,
        ranges=ranges,
        outliers=tuple(outliers),
        inlier_spread=inlier_spread,
    )


def _where_differs(key: str, old: Any, new: Any) -> str:
    old_flat, new_flat = flatten(old), flatten(new)
    if old_flat is not None and new_flat is not None:
        for index, (a, b) in enumerate(zip(old_flat, new_flat, strict=False)):
            if a != b:
                return f"{key}[{index}]"
        return f"{key} (length)"
    return key


def baseline_noise(
    outputs: Sequence[Mapping[str, Any] | None], multiple: float = DEFAULT_NOISE_MULTIPLE
) -> Noise:
    """Each key's noise over the baseline's runs (one output dict per run that ran cleanly)."""
    runs = [run for run in outputs if run]
    if len(runs) < 2:
        return Noise(len(runs), multiple)
    keys: dict[str, KeyNoise] = {}
    varies: dict[str, str] = {}
    first = runs[0]
    for name, value in first.items():
        if name in IGNORED_KEYS:
            continue
        numbers = float_values(value)
        if numbers is not None and not is_exact_key(name):
            series = [numbers] + [
                found
                for found in (float_values(run.get(name)) for run in runs[1:])
                if found is not None
            ]
            keys[name] = key_noise(series, multiple)
            continue
        for run in runs[1:]:
            other = run.get(name)
            if other != value:
                varies[name] = _where_differs(name, value, other)
                break
    return Noise(len(runs), multiple, keys, varies)
