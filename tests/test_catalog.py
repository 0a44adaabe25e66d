"""Meta-tests on the rule catalog: unique codes, documented rules, enough examples, docs current."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from migrator.engine.registry import all_rules, code_table, code_table_problems, parse_code_table
from migrator.engine.rule import Rule
from migrator.knowledge import facts_doc as facts
from tests.conftest import ROOT

REQUIRED = ["## What it does", "## Why it breaks on ROCm", "## Example"]
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


def test_every_rule_code_is_in_its_category_range_of_the_code_table():
    table = code_table()
    assert code_table_problems([(rule.code, rule.category) for rule in all_rules()], table) == []
    used = {table.range_of(rule.code) for rule in all_rules()}
    assert used == set(table.ranges), "a range in rules/codes.toml has no rule: remove it"


SMALL_TABLE = """
[[family]]
name = "monitoring"
codes = "ROC200-ROC299"
[[range]]
codes = "ROC200-ROC209"
category = "nvml"
[[range]]
codes = "ROC210-ROC219"
category = "nvidia-smi"
[retired]
ROC205 = "merged into ROC202"
"""


@pytest.mark.parametrize(
    ("pairs", "problem"),
    [
        ([("ROC201", "nvml"), ("ROC211", "nvidia-smi")], None),
        ([("ROC230", "nvml")], "rule code ROC230 (nvml) is in no range of the code table"),
        ([("ROC212", "nvml")], "rule code ROC212 is in the nvidia-smi range ROC210-ROC219"),
        ([("ROC205", "nvml")], "rule code ROC205 is retired (merged into ROC202)"),
    ],
)
def test_the_code_table_refuses_unlisted_misfiled_and_retired_codes(pairs, problem):
    problems = code_table_problems(pairs, parse_code_table(SMALL_TABLE))
    if problem is None:
        assert problems == []
    else:
        assert len(problems) == 1 and problems[0].startswith(problem), problems


def test_the_code_table_refuses_overlapping_ranges_and_ranges_outside_a_family():
    text = SMALL_TABLE + '[[range]]\ncodes = "ROC215-ROC225"\ncategory = "x"\n'
    text += '[[range]]\ncodes = "ROC295-ROC305"\ncategory = "y"\n'
    problems = code_table_problems([], parse_code_table(text.replace("[retired]\n", "")))
    assert problems == [
        "ranges ROC210-ROC219 and ROC215-ROC225 overlap",
        "range ROC295-ROC305 (y) is not inside one family",
    ]


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
    assert rule.parsing.triggers and all(rule.parsing.triggers), f"{rule.code}: empty trigger"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_rule_citation_resolves_in_the_shipped_facts_document(rule: type[Rule]):
    resolution = facts.load().resolve(rule.fact)
    assert not resolution.unknown, (
        f"{rule.code} cites what docs/rocm-facts.md lacks: {resolution.unknown}"
    )
    assert resolution.sections or resolution.sources, f"{rule.code} cites nothing"
    assert all(source.urls or source.ident == "V" for source in resolution.sources)
    quoted = facts.quote(rule.fact)
    for fact in resolution.facts:
        assert fact.text in quoted


def test_rule_docstring_section_references_exist():
    document = facts.load()
    for rule in all_rules():
        for number in re.findall(r"§(\d+[a-z]?)", rule.doc()):
            assert number in document.sections, f"{rule.code} docstring cites missing §{number}"


def test_doctor_check_sources_exist():
    sources = facts.load().sources
    text = (ROOT / "migrator" / "doctor" / "checks.py").read_text() + (
        ROOT / "migrator" / "doctor" / "smoke.py"
    ).read_text()
    cited = {
        ident
        for group in re.findall(r"facts=\(([^)]*)\)", text)
        for ident in re.findall(r'"([A-Z]+\d*)"', group)
    }
    assert cited and cited <= set(sources), sorted(cited - set(sources))


def test_shipped_facts_are_the_documented_facts():
    assert facts.document_text() == (ROOT / "docs" / "rocm-facts.md").read_text(encoding="utf-8")


def test_a_wrong_citation_is_reported_unknown():
    resolution = facts.load().resolve("§9 no-such-package row; §12; §10.99; [ZZ9]")
    assert resolution.unknown == ["§9 no-such-package row", "§12", "§10.99", "[ZZ9]"]


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


def test_the_contributor_guide_lists_every_rule_attribute():
    guide = (ROOT / "docs" / "contributing" / "adding-a-rule.md").read_text(encoding="utf-8")
    missing = [
        name
        for name in Rule.__annotations__
        if not name.startswith("_") and f"`{name}`" not in guide
    ]
    assert missing == []
