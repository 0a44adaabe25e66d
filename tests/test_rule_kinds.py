"""Rules as data (``QualifiedCallRule``: a table of qualified calls plus examples, the engine's
declarations derived) and the preview tier (rules that ship opt-in)."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrator.api import Impact, Invalid, QualifiedCallRule, Severity, Valid
from migrator.engine.registry import catalog_entries, rule_by_code, select_codes
from migrator.engine.rule import CallShape
from migrator.engine.runner import scan
from migrator.errors import ConfigError
from migrator.testing import reported, run_example


def test_a_call_table_rule_derives_its_prefilter_and_parse_declarations() -> None:
    rule = rule_by_code("ROC530")
    assert issubclass(rule, QualifiedCallRule)
    assert rule.parsing.triggers == ("cupy",)
    assert rule.parsing.scope == "statement"
    assert rule.parsing.statement_calls == (CallShape(names=frozenset({"eig", "eigvals"})),)
    assert rule.parsing.requires_imports == ("cupy.linalg.eig", "cupy.linalg.eigvals")
    assert not hasattr(rule, "visit_Call") or rule.visit_Call is QualifiedCallRule.visit_Call


def test_the_longest_matching_entry_gives_the_message() -> None:
    rule = rule_by_code("ROC502")
    source = (
        "from apex import amp\n"
        "model, opt = amp.initialize(model, opt)\n"
        "def step():\n"
        "    with amp.disable_casts():\n"
        "        pass\n"
    )
    findings = reported(rule, run_example(rule, Invalid(source), fix=False))
    messages = {finding.line: finding.message for finding in findings}
    assert messages[2].startswith("`apex.amp.initialize` needs a ROCm/apex build: replace `amp.")
    assert messages[4] == (
        "`apex.amp.disable_casts` needs a ROCm/apex build: use torch.autocast and "
        "torch.amp.GradScaler"
    )


def test_a_call_table_needs_qualified_entries() -> None:
    with pytest.raises(TypeError, match="calls must name"):

        class Broken(QualifiedCallRule):  # noqa: F841
            """Doc."""

            code = "ROC999"
            name = "broken"
            category = "cupy"
            severity = Severity.ERROR
            impact = Impact(consequence="crash-path")
            message = "m"
            fact = "§9"
            calls = {"cupy.*.eig": "m"}
            valid = [Valid("x = 1\n")]
            invalid = [Invalid("import cupy\ncupy.linalg.eig(a)\n")]


def test_a_rule_without_a_consequence_is_refused() -> None:
    with pytest.raises(TypeError, match="consequence"):

        class Silent(QualifiedCallRule):  # noqa: F841
            """Doc."""

            code = "ROC998"
            name = "silent"
            category = "cupy"
            severity = Severity.ERROR
            message = "m"
            fact = "§9"
            calls = {"cupy.linalg.eig": "m"}


def test_preview_rules_are_left_out_and_naming_one_says_how_to_opt_in() -> None:
    entries = catalog_entries(use_cache=False)
    preview = frozenset({"ROC530"})
    assert "ROC530" not in select_codes(entries, None, None, preview=preview)
    assert "ROC530" not in select_codes(entries, ["ROC5"], None, preview=preview)
    assert "ROC530" in select_codes(entries, ["ROC5"], None)
    with pytest.raises(ConfigError, match=r"ROC530 \(cupy-linalg-eig\) is a preview rule"):
        select_codes(entries, ["cupy-linalg-eig"], None, preview=preview)


def test_preview_through_the_command_line_and_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli
) -> None:
    (tmp_path / "solve.py").write_text("import cupy as cp\nw, v = cp.linalg.eig(a)\n")
    monkeypatch.setattr(rule_by_code("ROC530"), "preview", True)
    codes = lambda run: {finding.rule for finding in run.scan.findings}  # noqa: E731
    assert "ROC530" not in codes(scan(tmp_path, use_cache=False))
    assert "ROC530" in codes(scan(tmp_path, use_cache=False, preview=True))
    (tmp_path / "pyproject.toml").write_text("[tool.migrate]\npreview = true\n")
    assert "ROC530" in codes(scan(tmp_path, use_cache=False))
    (tmp_path / "pyproject.toml").write_text('[tool.migrate]\npreview = "yes"\n')
    result = run_cli("scan", tmp_path, "--no-cache")
    assert result.exit_code == 2
    assert "preview must be true or false" in result.output
