"""Read what a smoke test reported.

In order: ``--compare`` patterns over stdout; the JSON object in ``$MIGRATE_SMOKE_OUTPUT``;
otherwise the numeric series printed on stdout (``loss: 2.31``; see
:mod:`migrator.verify.series`) together with the keys of the last JSON object printed there. Timing-like values printed on stdout are
always read as metrics. A ``tokens_per_second=<x>`` line is accepted too (the JSON key wins).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from migrator.verify.series import Point, extract

_TPS_LINE = re.compile(r"^\s*tokens_per_second\s*[=:]\s*([-+0-9.eE]+)\s*$", re.MULTILINE)

SOURCE_FILE = "file"
SOURCE_JSON = "stdout-json"
SOURCE_SERIES = "stdout-series"
SOURCE_PATTERNS = "stdout-compare"


@dataclass(frozen=True, slots=True)
class SmokeOutput:
    """The parsed outputs of one run and where they came from (None when nothing was found)."""

    values: dict[str, Any] | None
    source: str | None
    tokens_per_second: float | None
    error: str | None = None
    steps: dict[str, list[str | None]] | None = None
    metrics: dict[str, list[Point]] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)


def last_json_object(text: str) -> dict[str, Any] | None:
    """The last top-level JSON object printed in ``text`` (whole lines or a trailing block)."""
    decoder = json.JSONDecoder()
    found: dict[str, Any] | None = None
    index = text.find("{")
    while index != -1:
        try:
            value, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError:
            index = text.find("{", index + 1)
            continue
        if isinstance(value, dict):
            found = value
        index = text.find("{", end)
    return found


def _float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return None


def read_smoke_output(
    output_file: Path, stdout: str, patterns: Sequence[re.Pattern[str]] = ()
) -> SmokeOutput:
    """Parse one run's outputs; a malformed output file is reported, not raised."""
    values: dict[str, Any] | None = None
    source: str | None = None
    error: str | None = None
    steps: dict[str, list[str | None]] | None = None
    series = extract(stdout, patterns)
    if patterns:
        values, source, steps = series.as_outputs() or None, SOURCE_PATTERNS, series.steps()
    if values is None and output_file.is_file():
        from migrator.files.sources import FailFile, SkipFile, read_regular

        try:
            loaded = json.loads(read_regular(str(output_file)).decode("utf-8"))
        except (SkipFile, FailFile, UnicodeDecodeError, json.JSONDecodeError) as exc:
            error = f"MIGRATE_SMOKE_OUTPUT is not valid JSON: {exc}"
        else:
            if isinstance(loaded, dict):
                values, source, steps = loaded, SOURCE_FILE, None
            else:
                error = "MIGRATE_SMOKE_OUTPUT does not hold a JSON object"
    if values is None and not patterns:
        parsed = last_json_object(stdout)
        if not series.empty:
            # Numbers printed on stdout, plus the keys of a JSON object printed there (a JSON
            # config printed at start-up must not hide the losses printed after it).
            values = {**series.as_outputs(), **(parsed or {})}
            source, steps = SOURCE_SERIES, series.steps()
            for key in parsed or {}:
                steps.pop(key, None)
        elif parsed is not None:
            values, source, steps = parsed, SOURCE_JSON, None
    if values is None and patterns:
        source = SOURCE_PATTERNS
    tps = _float(values.get("tokens_per_second")) if values and source != SOURCE_PATTERNS else None
    if tps is None:
        matches = _TPS_LINE.findall(stdout)
        if matches:
            try:
                tps = float(matches[-1])
            except ValueError:
                tps = None
    return SmokeOutput(
        values=values,
        source=source,
        tokens_per_second=tps,
        error=error,
        steps=steps,
        metrics=series.metrics,
        units=series.units,
    )
