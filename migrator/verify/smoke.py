"""Read what a smoke test reported: ``$MIGRATE_SMOKE_OUTPUT``, else the last JSON object in stdout.

A ``tokens_per_second=<x>`` line in stdout is accepted too (the JSON key wins when both exist).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_TPS_LINE = re.compile(r"^\s*tokens_per_second\s*[=:]\s*([-+0-9.eE]+)\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class SmokeOutput:
    """The parsed outputs of one run and where they came from (``file``, ``stdout`` or None)."""

    values: dict[str, Any] | None
    source: str | None
    tokens_per_second: float | None
    error: str | None = None


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


def read_smoke_output(output_file: Path, stdout: str) -> SmokeOutput:
    """Parse one run's outputs; a malformed output file is reported, not raised."""
    values: dict[str, Any] | None = None
    source: str | None = None
    error: str | None = None
    if output_file.is_file():
        try:
            loaded = json.loads(output_file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            error = f"MIGRATE_SMOKE_OUTPUT is not valid JSON: {exc}"
        else:
            if isinstance(loaded, dict):
                values, source = loaded, "file"
            else:
                error = "MIGRATE_SMOKE_OUTPUT does not hold a JSON object"
    if values is None:
        parsed = last_json_object(stdout)
        if parsed is not None:
            values, source = parsed, "stdout"
    tps = _float(values.get("tokens_per_second")) if values else None
    if tps is None:
        matches = _TPS_LINE.findall(stdout)
        if matches:
            try:
                tps = float(matches[-1])
            except ValueError:
                tps = None
    return SmokeOutput(values=values, source=source, tokens_per_second=tps, error=error)
