"""The values a rule hands to ``report()`` beyond where and what: the fix (``Rewrite``) and which
problem the finding is (``Problem``). Two small objects instead of fifteen keyword options, so a
rule's report reads as the finding it makes and the engine alone knows how each is used."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from migrator.model import Applicability, Severity

if TYPE_CHECKING:
    import libcst as cst


@dataclass(frozen=True, slots=True)
class Rewrite:
    """A report's fix.

    ``replacement`` replaces the reported node or span (None: no fix after all, for a rule
    whose replacement is computed and may not exist); ``imports`` are added and
    ``remove_imports`` dropped with it; ``extra_edits`` are further statements the fix rewrites
    (node, replacement); ``applicability`` overrides the rule's fix safety and ``description``
    its fix title; ``requires`` names the minimum versions of the APIs the replacement emits
    (package → version; the rule's ``fix_requires`` when None); fixes sharing a ``together`` key
    apply only all ``together_size`` of them at once.
    """

    replacement: cst.CSTNode | Callable[[], cst.CSTNode] | str | None
    imports: Sequence[tuple[str, str | None]] = ()
    remove_imports: Sequence[tuple[str | None, ...]] = ()
    extra_edits: Sequence[tuple[cst.CSTNode, cst.CSTNode]] = ()
    applicability: Applicability | None = None
    description: str | None = None
    requires: Mapping[str, str] | None = None
    together: str = ""
    together_size: int = 0


@dataclass(frozen=True, slots=True)
class Problem:
    """Which problem a report is, and how serious.

    ``group`` tells distinct problems of one aggregating rule apart (e.g. the package name), so
    that only reports of one problem are merged; reports of any rule sharing a ``key`` in one
    file (``scope="project"``: in the project, with the rules declaring that key) are one
    finding, anchored where the user acts; ``without_fix`` is the key a report with a fix takes
    when the engine withholds that fix (the site is then one more use of the problem reported
    elsewhere); ``severity`` overrides the rule's for this report (a gate that only warns).
    """

    key: str = ""
    scope: str = "file"
    without_fix: str = ""
    group: str = ""
    severity: Severity | None = None


#: A report with nothing to say about its problem.
NO_PROBLEM = Problem()
