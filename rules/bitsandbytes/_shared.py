"""What the ROC510, ROC511 rules share."""

from __future__ import annotations

from typing import Any

from migrator.ruledata import load_table


def _data() -> dict[str, Any]:
    data: dict[str, Any] = load_table("bitsandbytes")
    return data
