"""Meta-tests on the rule catalog: unique codes, documented rules, enough examples, docs current."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from migrator.registry import all_rules
from migrator.rule import Rule
from tests.conftest import ROOT

REQUIRED = ["## What it does", "## Why it breaks on ROCm", "## Example"]
FACTS = ROOT.parent / "shared" / "docs" / "rocm-facts.md"
REQUIRED_CATEGORIES = {
    "nvml",
    "nvidia-smi",
    "cudnn",
    "tf32",
    "sdpa",
    "flash-attn",
    "bitsandbytes",
    "xformers",
    "apex",
    "cuda-amp",
    "cuda-version",
    "device-gate",
    "fp8",
    "warp-size",
    "env-var",
    "cuda-extension",
    "dependency",
    "container",
    "onnxruntime",
    "no-rocm-equivalent",
}


def test_codes_and_names_are_unique():
    rules = all_rules()
    assert len({rule.code for rule in rules}) == len(rules)
    assert len({rule.name for rule in rules}) == len(rules)


def test_every_required_category_is_covered():
    assert REQUIRED_CATEGORIES <= {rule.category for rule in all_rules()}


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_rule_is_documented_and_exemplified(rule: type[Rule]):
    doc = rule.doc()
    positions = [doc.find(section) for section in REQUIRED]
    assert all(p >= 0 for p in positions), f"{rule.code} lacks a section of {REQUIRED}"
    assert positions == sorted(positions), f"{rule.code}: sections out of order"
    fix_section = "## Fix" in doc.replace("## Fix safety", "")
    assert fix_section or "## Manual migration" in doc, f"{rule.code}: no Fix or Manual migration"
    if rule.fix_availability() != "never":
        assert "## Fix safety" in doc, f"{rule.code} has a fix but no Fix safety section"
    assert len(rule.valid) >= 2 and len(rule.invalid) >= 2, f"{rule.code} needs 2 valid + 2 invalid"
    assert re.search(r"§\d|\[[A-Z]+\d*\]", rule.fact), f"{rule.code}: fact must cite rocm-facts.md"
    assert rule.triggers and all(rule.triggers), f"{rule.code}: empty trigger"


def test_fact_sources_exist_in_the_facts_file():
    if not FACTS.is_file():
        pytest.skip("shared facts file not present")
    text = FACTS.read_text()
    for rule in all_rules():
        for source in re.findall(r"\[([A-Z]+\d*)\]", rule.fact):
            assert f"[{source}]" in text, f"{rule.code} cites unknown source [{source}]"


def test_generated_rule_docs_are_current():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_rule_docs.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, (
        "docs/rules is stale; run scripts/gen_rule_docs.py\n" + result.stdout
    )
