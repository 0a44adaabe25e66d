"""Turns every rule's examples into checks (used by tests/test_rule_examples.py)."""

from __future__ import annotations

from migrator.engine.aggregate import aggregate
from migrator.engine.context import FileInputs
from migrator.engine.engine import Analysis, analyze
from migrator.engine.rule import Invalid, Rule, Valid
from migrator.files.discovery import file_kind
from migrator.model import Applicability, Finding


def kind_for(path: str) -> str:
    kind = file_kind(path)
    if kind is None:
        raise ValueError(f"example path {path!r} has no known file kind")
    return kind


def run_example(
    rule: type[Rule], example: Valid | Invalid, fix: bool, variant: bool = False
) -> Analysis:
    """Analyse an example; ``variant`` lets vendor-swapping fixes apply (a ROCm variant's text)."""
    return analyze(
        example.code,
        example.path,
        kind_for(example.path),
        (rule,),
        fix=Applicability.UNSAFE if fix else None,
        inputs=FileInputs(vendor_swap=variant),
    )


def reported(rule: type[Rule], analysis: Analysis) -> list[Finding]:
    """What a user sees of ``rule`` in one example: guarded code hidden, one finding per problem."""
    return aggregate(f for f in analysis.findings if f.rule == rule.code and not f.guard)


def check_valid(rule: type[Rule], example: Valid) -> None:
    analysis = run_example(rule, example, fix=False)
    hits = reported(rule, analysis)
    assert not hits, (
        f"{rule.code} fired on a valid example: {hits[0].message} at line {hits[0].line}"
    )


def check_invalid(rule: type[Rule], example: Invalid) -> None:
    analysis = run_example(rule, example, fix=False)
    hits = reported(rule, analysis)
    assert hits, f"{rule.code} did not fire on:\n{example.code}"
    if example.count is not None:
        assert len(hits) == example.count, f"expected {example.count} findings, got {len(hits)}"
    if example.sites is not None:
        sites = sum(1 + len(hit.related) for hit in hits)
        assert sites == example.sites, f"expected {example.sites} sites, got {sites}"
    first = hits[0]
    if example.line is not None:
        assert first.line == example.line, f"line {first.line} != {example.line}"
    if example.column is not None:
        assert first.column == example.column, f"column {first.column} != {example.column}"
    if rule.fix.replaces_vendor:
        in_place = run_example(rule, example, fix=True)
        assert in_place.new_text is None, f"{rule.code} edited a file NVIDIA uses in place"
    fixed = run_example(rule, example, fix=True, variant=rule.fix.replaces_vendor)
    assert fixed.fix_error is None, fixed.fix_error
    if example.fixed is None:
        assert fixed.new_text is None, f"unexpected fix:\n{fixed.new_text}"
        return
    assert fixed.new_text == example.fixed, (
        f"fix differs\n--- expected\n{example.fixed}\n--- got\n{fixed.new_text}"
    )
    again = run_example(
        rule, Invalid(fixed.new_text, path=example.path), fix=True, variant=rule.fix.replaces_vendor
    )
    assert again.new_text is None, f"second fix pass changed the text again:\n{again.new_text}"
