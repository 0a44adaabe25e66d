"""Every module that `fix --unsafe-fixes` rewrites still imports on CPU without the CUDA-only
packages: each module is imported in a subprocess in which flash-attn, xformers, apex, pynvml,
... raise ImportError (torch stays real), before and after the fix. Checked on the
fixture project (real imports of its package) and on every rule example (its module-level
imports: the snippets use names they never define). A module that fails before the fix for
another reason is reported as a warning, not hidden."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import libcst as cst
import pytest

from migrator.engine.registry import all_rules
from migrator.engine.rule import PythonRule
from migrator.engine.runner import fix_tree
from migrator.model import Applicability, Severity
from migrator.testing import run_example


@pytest.fixture(autouse=True, scope="module")
def _torch_installed() -> None:
    """The subprocesses import the modules with the real torch (the verify extra; not imported
    here, where nothing uses it): without it every module would fail alike before and after the
    fix and the checks would prove nothing, so its absence fails them."""
    assert importlib.util.find_spec("torch") is not None, "torch missing: run scripts/setup.sh"


ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "llm_app"

#: Packages that exist only for NVIDIA GPUs: importing one raises ImportError in the subprocess.
CUDA_ONLY = (
    "flash_attn",
    "flash_attn_interface",
    "flash_attn_3",
    "xformers",
    "apex",
    "pynvml",
    "transformer_engine",
    "cupy",
    "tensorrt",
    "pycuda",
)

#: The package a rule family's fixes are about: after such a fix the module must not need it.
FAMILY_PACKAGES = {
    "flash-attn": {"flash_attn", "flash_attn_interface", "flash_attn_3"},
    "xformers": {"xformers"},
    "apex": {"apex"},
    "nvml": {"pynvml"},
}

_IMPORTER = r"""
import importlib, json, sys

BLOCKED = set(json.loads(sys.argv[2]))
# a None entry makes `import x` raise ImportError and importlib.util.find_spec("x") return None,
# as on a machine where the package is not installed (even where it is installed here)
for package in BLOCKED:
    sys.modules[package] = None
sys.path.insert(0, sys.argv[1])
results = {}
for module in json.loads(sys.argv[3]):
    try:
        importlib.import_module(module)
        results[module] = None
    except BaseException as error:
        name = getattr(error, "name", None) or ""
        top = name.split(".")[0]
        blocked = isinstance(error, ImportError) and top in BLOCKED
        results[module] = f"blocked:{top}" if blocked else f"{type(error).__name__}: {error}"
print(json.dumps(results))
"""


def import_results(root: Path, modules: list[str]) -> dict[str, str | None]:
    """``None`` per module that imports, else ``blocked:<package>`` or the error's line."""
    completed = subprocess.run(
        [sys.executable, "-c", _IMPORTER, str(root), json.dumps(CUDA_ONLY), json.dumps(modules)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=root,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    results: dict[str, str | None] = json.loads(completed.stdout.splitlines()[-1])
    return results


@dataclass
class Verdict:
    module: str
    before: str | None
    after: str | None
    families: set[str]

    def problem(self) -> str | None:
        """Why the rewrite broke importing without CUDA-only packages, else None."""
        if self.after is None:
            return None
        if self.after.startswith("blocked:"):
            package = self.after.split(":", 1)[1]
            if self.before is None:
                return f"imported before the fix; after it needs {package}"
            fixed_for = set().union(*(FAMILY_PACKAGES.get(f, set()) for f in self.families))
            if package in fixed_for:
                return f"a {package} rewrite was applied but the module still needs {package}"
            return None
        if self.after != self.before:
            return f"the fix changed the import failure: {self.before} -> {self.after}"
        return None


def _report(verdicts: list[Verdict]) -> None:
    left = [v for v in verdicts if v.after is not None and v.problem() is None]
    if left:
        warnings.warn(
            "modules that fail to import without CUDA-only packages before and after the fix, "
            "for reasons the fix does not address:\n"
            + "\n".join(f"  {v.module}: {v.after}" for v in left),
            stacklevel=2,
        )


def _module_name(relative: str) -> str:
    return relative[: -len(".py")].replace("/", ".").removesuffix(".__init__")


def test_fixture_modules_import_without_cuda_only_packages(tmp_path):
    project = tmp_path / "llm_app"
    shutil.copytree(FIXTURE, project)
    before_root = tmp_path / "before"
    shutil.copytree(FIXTURE, before_root)
    run = fix_tree(
        project, level=Applicability.UNSAFE, write=True, jobs=1, min_severity=Severity.HYGIENE
    )
    rewritten = {
        o.relative: {f.category for f in o.fixed}
        for o in run.outcomes
        if o.new_text is not None and o.relative.endswith(".py")
    }
    assert rewritten, "fix --unsafe-fixes rewrote no module of the fixture"
    modules = {_module_name(relative): families for relative, families in rewritten.items()}
    before = import_results(before_root, sorted(modules))
    after = import_results(project, sorted(modules))
    verdicts = [Verdict(m, before[m], after[m], modules[m]) for m in sorted(modules)]
    problems = [f"{v.module}: {v.problem()}" for v in verdicts if v.problem()]
    assert not problems, "\n".join(problems)
    _report(verdicts)


def _import_header(code: str) -> str:
    """The module-level imports of ``code`` (plain imports and ``try:`` blocks holding one):
    what runs when the module is imported, without the snippet's undefined names."""
    module = cst.parse_module(code)
    kept: list[cst.BaseStatement] = []
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine) and all(
            isinstance(small, cst.Import | cst.ImportFrom) for small in statement.body
        ):
            kept.append(statement)
        elif isinstance(statement, cst.Try) and "import" in module.code_for_node(statement.body):
            kept.append(statement)
    return module.with_changes(body=kept).code


def _python_examples() -> list[tuple[str, str, str, str]]:
    """(module name, rule family, example code, fixed code) of every Python rule example that
    `fix --unsafe-fixes` rewrites."""
    out = []
    for rule in all_rules():
        if not issubclass(rule, PythonRule):
            continue
        for index, example in enumerate(rule.invalid):
            if not example.path.endswith(".py"):
                continue
            analysis = run_example(rule, example, fix=True)
            if analysis.new_text is not None:
                name = f"example_{rule.code.lower()}_{index}"
                out.append((name, rule.category, example.code, analysis.new_text))
    return out


def test_rule_examples_import_without_cuda_only_packages(tmp_path):
    examples = _python_examples()
    assert any(family == "flash-attn" for _, family, _, _ in examples)
    before_root, after_root = tmp_path / "before", tmp_path / "after"
    before_root.mkdir()
    after_root.mkdir()
    for name, _, code, fixed in examples:
        (before_root / f"{name}.py").write_text(_import_header(code))
        (after_root / f"{name}.py").write_text(_import_header(fixed))
    names = [name for name, _, _, _ in examples]
    before = import_results(before_root, names)
    after = import_results(after_root, names)
    verdicts = [Verdict(n, before[n], after[n], {family}) for n, family, _, _ in examples]
    problems = [f"{v.module}: {v.problem()}" for v in verdicts if v.problem()]
    assert not problems, "\n".join(problems)
    # the attention rewrites are what makes these modules importable at all
    assert any(
        v.families & {"flash-attn", "xformers"} and v.before and v.after is None for v in verdicts
    )
    _report(verdicts)
