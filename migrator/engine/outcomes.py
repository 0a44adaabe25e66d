"""What a run produces: one file's outcome (result, fixed text, what was fixed, why a write
was refused) and one root's run (results after selection, outcomes, ROCm siblings)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from migrator.files.config import Config
from migrator.model import FileResult, Finding, ScanResult

if TYPE_CHECKING:
    # Imported where used: the fix policy behind it loads libcst, which a warm scan never needs.
    from migrator.engine.formatter import Formatter
    from migrator.engine.variants import Variant


@dataclass(slots=True)
class FileOutcome:
    """One file's result, plus (for fix runs) its new text and what was fixed."""

    result: FileResult
    key: str = ""
    new_text: str | None = None
    encoding: str = "utf-8"
    fixed: list[Finding] = field(default_factory=list)
    error: str | None = None
    write_error: str | None = None

    @property
    def written(self) -> bool:
        """Whether this outcome's fixed text is (or, without writing, would be) on disk."""
        return self.new_text is not None and self.error is None and self.write_error is None

    @property
    def relative(self) -> str:
        return self.result.path


@dataclass(slots=True)
class RootRun:
    """A scan (or fix) of one root: results after selection, and fix outcomes."""

    root: Path
    scan: ScanResult
    outcomes: list[FileOutcome] = field(default_factory=list)
    config: Config = field(default_factory=Config)
    #: ROCm siblings of NVIDIA container files (``fix --unsafe-fixes``), written or not
    variants: list[Variant] = field(default_factory=list)
    #: the project's formatter, which ``fix`` runs on the lines it rewrites
    formatter: Formatter | None = None
