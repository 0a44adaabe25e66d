"""What ``migrate pr`` was asked to do and what it did: the command's option and result records."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from migrator.model import Severity
from migrator.reporting.readiness import ProjectReport, Verification

DEFAULT_BRANCH = "migrate/rocm"
BODY_NAME = "PR_BODY.md"


@dataclass(frozen=True, slots=True)
class PrOptions:
    """What the command line asked for."""

    path: Path
    branch: str = DEFAULT_BRANCH
    base: str | None = None
    unsafe_fixes: bool = False
    verify: bool = False
    smoke: str | None = None
    push: str | None = None
    open_pr: bool = False
    #: the rule selection, as ``fix`` takes it (``FixChoice``)
    choice: FixChoice = field(default_factory=lambda: FixChoice())


@dataclass(frozen=True, slots=True)
class FixChoice:
    """The selection options ``pr`` shares with ``fix``: with the same ones, ``pr`` applies
    exactly what ``fix`` would."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    extend_ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    min_severity: Severity | None = None
    preview: bool | None = None

    def arguments(self, exclude: tuple[str, ...] = ()) -> dict[str, Any]:
        """``fix_tree``'s selection arguments (``exclude``: more paths to leave, the submodules)."""
        return {
            "select": list(self.select) or None,
            "ignore": list(self.ignore) or None,
            "extend_select": list(self.extend_select),
            "extend_ignore": list(self.extend_ignore),
            "exclude": [*self.exclude, *exclude],
            "min_severity": self.min_severity,
            "preview": self.preview,
        }

    def words(self) -> list[str]:
        """The same options on a ``migrate`` command line."""
        out: list[str] = []
        for flag, values in (
            ("--select", self.select),
            ("--ignore", self.ignore),
            ("--extend-select", self.extend_select),
            ("--extend-ignore", self.extend_ignore),
            ("--exclude", self.exclude),
        ):
            if values:
                out += [flag, ",".join(values)]
        if self.min_severity is not None:
            out += ["--min-severity", self.min_severity.label]
        if self.preview:
            out.append("--preview")
        return out


@dataclass(slots=True)
class CommitInfo:
    """One commit this run made: the rule family, its rules and counts, the files it touched."""

    sha: str
    category: str
    rules: Counter[str]
    files: list[str]
    manual: bool = False

    @property
    def fixes(self) -> int:
        return sum(self.rules.values())


@dataclass(slots=True)
class PrResult:
    """What ``migrate pr`` did."""

    branch: str
    base: str
    created: bool
    commits: list[CommitInfo]
    before: ProjectReport
    after: ProjectReport
    title: str
    body: str
    body_path: Path
    verification: Verification | None = None
    verification_note: str = ""
    pushed: bool = False
