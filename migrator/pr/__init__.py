"""``migrate pr``: apply the fixes on a branch, one commit per rule family, and write the pull
request's title and body (optionally push and open it with ``gh`` or ``glab``).

Modules: ``git`` (plumbing), ``commits`` (one commit per family), ``body`` (title and body),
``create`` (the all-or-nothing transaction), ``hosting`` (gh/glab), ``cli`` (the command).
See docs/pr.md. The command object is :data:`pr_command`.
"""

from __future__ import annotations

from migrator.pr.cli import pr_command
from migrator.pr.create import create_pr
from migrator.pr.options import CommitInfo, PrOptions, PrResult

__all__ = ["CommitInfo", "PrOptions", "PrResult", "create_pr", "pr_command"]
