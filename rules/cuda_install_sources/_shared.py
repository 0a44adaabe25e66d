"""What ROC815-ROC817 share: the file kinds they read."""

from __future__ import annotations

_INSTALL_KINDS = frozenset(
    {"requirements", "pyproject", "setupcfg", "conda", "shell", "dockerfile", "ci-yaml", "cog"}
)
