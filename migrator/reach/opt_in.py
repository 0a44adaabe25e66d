"""Findings in code that runs only with an opt-in backend option (``if args.use_apex:``, off by
default; ``migrator.syntax.options``): the default path runs on ROCm, so the finding is a hint
for users who switch the option on, not a problem of the project as it runs by default."""

from __future__ import annotations

from dataclasses import replace

from migrator.model import Finding, Severity

#: What the message says of the option (the option as the code spells it).
_NOTE = "; only with the opt-in `{option}` (off by default: the default path runs on ROCm)"


def as_hint(finding: Finding, option: str) -> Finding:
    """``finding`` at info, its message saying which opt-in it needs (errors and warnings only:
    an info or hygiene finding stays as it is)."""
    if not option or finding.severity not in (Severity.ERROR, Severity.WARNING):
        return finding
    return replace(
        finding, severity=Severity.INFO, message=finding.message + _NOTE.format(option=option)
    )
