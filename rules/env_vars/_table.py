"""The environment-variable table, ``rules/data/env_vars.toml``, and what the Python and text
forms of a rule read from it alike."""

from __future__ import annotations

from typing import Any

from migrator.api import Severity, load_table


def _table() -> dict[str, Any]:
    return load_table("env_vars")


def paired_handled(cuda_name: str) -> tuple[str, ...]:
    """The variables that keep ``cuda_name``'s ROCm counterpart in step (``[paired]``'s
    ``handled``): where a file writes one, the rules read that statement too."""
    return tuple(_table()["paired"][cuda_name]["handled"])


def cuda_only_variables() -> tuple[str, ...]:
    """The variables only a CUDA build reads (``[cuda_only]``, in table order): ROC703 looks for
    them in Python, ROC713 in shell, Docker, compose and CI files."""
    return tuple(_table()["cuda_only"])


def cuda_only_handled(name: str, text: str) -> bool:
    """Whether ``text`` also names the ROCm counterpart of CUDA-only ``name`` (the build
    already handles ROCm)."""
    entry = _table()["cuda_only"][name]
    return any(other in text for other in entry.get("handled", ()))


def cuda_only_note(name: str) -> tuple[str, Severity | None]:
    """The message of a use of CUDA-only ``name`` and the severity its table entry sets (None:
    the rule's own)."""
    entry = _table()["cuda_only"][name]
    message = f"`{name}` has no effect on ROCm ({entry['why']}); use {entry['instead']}"
    return message, Severity.parse(entry["severity"]) if "severity" in entry else None
