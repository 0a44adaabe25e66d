"""Every rule's valid and invalid examples, run as tests (ids like ROC520-invalid-1)."""

from __future__ import annotations

import pytest

from migrator.engine.registry import all_rules
from migrator.testing import check_invalid, check_valid

VALID = [
    pytest.param(rule, example, id=f"{rule.code}-valid-{index}")
    for rule in all_rules()
    for index, example in enumerate(rule.valid, start=1)
]
INVALID = [
    pytest.param(rule, example, id=f"{rule.code}-invalid-{index}")
    for rule in all_rules()
    for index, example in enumerate(rule.invalid, start=1)
]


@pytest.mark.parametrize(("rule", "example"), VALID)
def test_valid_example_is_not_flagged(rule, example):
    check_valid(rule, example)


@pytest.mark.parametrize(("rule", "example"), INVALID)
def test_invalid_example_is_flagged_and_fixed_exactly(rule, example):
    check_invalid(rule, example)
