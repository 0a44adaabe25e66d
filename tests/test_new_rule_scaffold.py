"""``scripts/new_rule.py`` writes a rule that the engine accepts, a fact stub where the facts
are, and examples that fail until the contributor writes them; it refuses codes that are taken,
retired or outside every category's range. Run on a copy of the real rules and facts."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from migrator.engine.rule import Rule
from migrator.testing import check_invalid, check_valid
from tests.conftest import ROOT

SCRIPT = ROOT / "scripts" / "new_rule.py"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(
        ROOT / "rules", tmp_path / "rules", ignore=shutil.ignore_patterns("__pycache__")
    )
    (tmp_path / "docs").mkdir()
    shutil.copy(ROOT / "docs" / "rocm-facts.md", tmp_path / "docs" / "rocm-facts.md")
    return tmp_path


def _free_code(tree: Path, category: str) -> str:
    """The first code of ``category``'s range that no rule of the copy uses."""
    from migrator.engine.registry import parse_code_table

    table = parse_code_table((tree / "rules" / "codes.toml").read_text(encoding="utf-8"))
    used = {rule.code for rule in _registry()}
    (span,) = (span for span in table.ranges if span.name == category)
    return next(
        f"ROC{n}"
        for n in range(span.first, span.last + 1)
        if f"ROC{n}" not in used | set(table.retired)
    )


def _registry() -> tuple[type[Rule], ...]:
    from migrator.engine.registry import all_rules

    return all_rules()


def _new_rule(tree: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *arguments, "--root", str(tree)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _load(path: Path) -> type[Rule]:
    spec = importlib.util.spec_from_file_location(f"scaffolded_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    (rule,) = (
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, Rule)
        and value.__module__ == module.__name__
    )
    return rule


@pytest.mark.parametrize(
    ("kind", "family", "category", "section"),
    [
        ("python", "env_vars", "env-var", "6"),
        ("text", "containers", "container", "9"),
        ("kernel", "cuda_kernels", "cuda-api", "7"),
    ],
)
def test_a_scaffolded_rule_loads_and_its_examples_fail_until_written(
    tree: Path, kind: str, family: str, category: str, section: str
) -> None:
    code = _free_code(tree, category)
    done = _new_rule(
        tree, code, family, "--name", "todo-thing", "--kind", kind, "--section", section
    )
    assert done.returncode == 0, done.stderr
    module = tree / "rules" / family / "todo_thing.py"
    rule = _load(module)
    assert (rule.code, rule.name, rule.category) == (code, "todo-thing", category)
    assert rule.impact.consequence and rule.parsing.triggers
    check_valid(rule, rule.valid[0])  # a portable example passes
    with pytest.raises(AssertionError):
        check_invalid(rule, rule.invalid[0])  # the CUDA-only example waits for its matcher
    facts = (tree / "docs" / "rocm-facts.md").read_text(encoding="utf-8")
    assert f'<a id="s{section}-todo-thing"></a>' in facts and f"({code})" in facts
    assert "TODO" in module.read_text(encoding="utf-8")


def test_taken_retired_and_unranged_codes_are_refused(tree: Path) -> None:
    taken = _registry()[0].code
    for code, reason in ((taken, "already a rule's code"), ("ROC999", "no category's range")):
        done = _new_rule(tree, code, "env_vars", "--name", "x-y", "--section", "6")
        assert done.returncode == 2 and reason in done.stderr, done.stderr
    done = _new_rule(
        tree, _free_code(tree, "env-var"), "nowhere", "--name", "x-y", "--section", "6"
    )
    assert done.returncode == 2 and "no rule family" in done.stderr
    assert not list((tree / "rules").rglob("x_y.py"))
