"""Command-line value types shared by the commands."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    _FloatType = click.ParamType[float]
else:  # click 8.1 has no generic ParamType at run time
    _FloatType = click.ParamType


class FiniteSeconds(_FloatType):
    """A positive, finite number of seconds: ``nan`` and ``inf`` would mean no limit at all."""

    name = "seconds"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or seconds <= 0:
            self.fail(f"{value!r} is not a finite, positive number of seconds", param, ctx)
        return seconds


SECONDS = FiniteSeconds()
