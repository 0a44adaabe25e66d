"""The rule API: the only part of ``migrator`` that rule modules import (``tests/test_layout.py``
holds them to it). This module gives the rule classes and their examples, the contexts a rule
reads, the finding vocabulary and the rule-data loader; ``migrator.api.syntax``,
``migrator.api.knowledge`` and ``migrator.api.reach`` give the shared helpers, each re-exported
from its one home."""

from migrator.engine.context import PythonContext, TextContext
from migrator.engine.report_values import NO_PROBLEM, Problem, Rewrite
from migrator.engine.rule import (
    Invalid,
    KernelRule,
    PythonRule,
    QualifiedCallRule,
    Rule,
    TextRule,
    Valid,
)
from migrator.engine.rule_parts import CallShape, Fixing, Impact, Parsing
from migrator.knowledge.tables import load_table
from migrator.model import CONSEQUENCES, Applicability, Severity

__all__ = [
    "CONSEQUENCES",
    "NO_PROBLEM",
    "Applicability",
    "CallShape",
    "Fixing",
    "Impact",
    "Invalid",
    "KernelRule",
    "Parsing",
    "PythonContext",
    "Problem",
    "PythonRule",
    "QualifiedCallRule",
    "Rewrite",
    "Rule",
    "Severity",
    "TextContext",
    "TextRule",
    "Valid",
    "load_table",
]
