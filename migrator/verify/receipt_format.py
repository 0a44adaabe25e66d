"""The one reader of verify receipts, for every command that consumes them (report, pr).

The format is published as ``migrator/schemas/verify-receipt.schema.json``. Receipts of schema
``/1`` (before per-run verdicts) are read too: a run whose comparison was ``not-compared`` is
``not-compared`` whatever its old ``passed`` said, so a reader never turns it into a match.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from migrator.verify.receipt import FAIL, NOT_COMPARED_VERDICT, PASS

SCHEMA_FILE = "verify-receipt.schema.json"
VERDICTS = (PASS, FAIL, NOT_COMPARED_VERDICT)


class ReceiptFormatError(ValueError):
    """The file cannot be read, or is not a verify receipt."""


def json_schema() -> dict[str, Any]:
    """The receipt's JSON Schema (draft 2020-12)."""
    text = resources.files("migrator").joinpath("schemas", SCHEMA_FILE).read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def load(path: str | Path) -> dict[str, Any]:
    """The receipt at ``path`` as a dict (ReceiptFormatError when unreadable or not an object)."""
    from migrator.files.sources import FailFile, SkipFile, read_regular

    try:
        data = json.loads(read_regular(str(path)).decode("utf-8"))
    except (SkipFile, FailFile, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ReceiptFormatError(f"cannot read verify receipt {path}: {error}") from error
    if not isinstance(data, dict):
        raise ReceiptFormatError(f"{path} is not a verify receipt (expected a JSON object)")
    return data


def run_verdict(run: dict[str, Any]) -> str | None:
    """``pass`` / ``fail`` / ``not-compared`` for one run; None when the receipt cannot say."""
    verdict = run.get("verdict")
    if verdict in VERDICTS:
        return str(verdict)
    comparison = run.get("comparison")
    if isinstance(comparison, dict) and comparison.get("status") == "not-compared":
        return NOT_COMPARED_VERDICT
    passed = run.get("passed")
    if isinstance(passed, bool):
        return PASS if passed else FAIL
    return None


def verdict(data: dict[str, Any]) -> str | None:
    """The receipt's overall verdict (derived from the runs for ``/1`` receipts)."""
    declared = data.get("verdict")
    if declared in VERDICTS:
        return str(declared)
    runs = [run for run in data.get("runs") or [] if isinstance(run, dict)]
    migrated = [run for run in runs if not run.get("baseline")]
    if not migrated:
        return None
    verdicts = [run_verdict(run) for run in migrated]
    if FAIL in verdicts:
        return FAIL
    if None in verdicts:
        return None
    return NOT_COMPARED_VERDICT if NOT_COMPARED_VERDICT in verdicts else PASS


def outputs_compared(data: dict[str, Any]) -> bool | None:
    """Whether every migrated run's outputs were compared (None when unknown)."""
    declared = data.get("outputs_compared")
    if isinstance(declared, bool):
        return declared
    found = verdict(data)
    if found is None:
        return None
    return found != NOT_COMPARED_VERDICT and all(
        run_verdict(run) != NOT_COMPARED_VERDICT
        for run in data.get("runs") or []
        if isinstance(run, dict) and not run.get("baseline")
    )


def verdict_label(data: dict[str, Any]) -> str:
    """``PASS``, ``FAIL``, ``NOT COMPARED``, ``PASS, NOT COMPARED`` (allowed) or ``unknown``."""
    found = verdict(data)
    if found == PASS:
        return "PASS"
    if found == FAIL:
        return "FAIL"
    if found == NOT_COMPARED_VERDICT:
        return "PASS, NOT COMPARED" if data.get("passed") is True else "NOT COMPARED"
    return "unknown"
