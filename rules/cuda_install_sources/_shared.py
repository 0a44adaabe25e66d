"""What the ROC815, ROC816, ROC817 rules share."""

from __future__ import annotations

_INSTALL_KINDS = frozenset(
    {"requirements", "pyproject", "setupcfg", "conda", "shell", "dockerfile", "ci-yaml", "cog"}
)
