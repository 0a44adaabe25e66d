"""What ``migrate pr`` was asked to do and what it did: the command's option and result records."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

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
