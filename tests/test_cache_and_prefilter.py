"""The prefilter and the cache are optimisations: turning them off never changes findings."""

from __future__ import annotations

import ast
import shutil

import pytest

from tests.conftest import FIXTURES, write

PROJECTS = sorted(
    p.name for p in FIXTURES.iterdir() if p.is_dir() and not p.name.endswith("_fixed")
)


def _key(report):
    return [
        (f["path"], f.get("cell"), f["line"], f["column"], f["rule"], f["message"])
        for f in report["findings"]
    ]


@pytest.mark.parametrize("project", PROJECTS)
def test_prefilter_and_cache_do_not_change_findings(project, scan_json):
    root = str(FIXTURES / project)
    baseline = scan_json("--no-cache", "--no-prefilter", root)
    assert baseline["findings"], "fixture has no findings"
    assert _key(scan_json("--no-cache", root)) == _key(baseline)
    cold = scan_json(root)
    warm = scan_json(root)
    assert _key(cold) == _key(baseline) == _key(warm)
    assert cold["files"] == baseline["files"] == warm["files"]


def test_cache_sees_edits(tmp_path, scan_json):
    path = write(tmp_path, "a.py", "import torch\n")
    assert scan_json(str(tmp_path))["findings"] == []
    path.write_text("import torch\nx = torch.cuda.amp.GradScaler()\n")
    assert [f["line"] for f in scan_json("--select", "ROC520", str(tmp_path))["findings"]] == [2]


def test_parallel_and_serial_agree(tmp_path, scan_json):
    for index in range(40):
        write(
            tmp_path,
            f"m{index}.py",
            "import torch\n" * (index % 3) + "x = torch.cuda.amp.GradScaler()\n"
            if index % 2
            else "y = 1\n",
        )
    shutil.copy(FIXTURES / "llm_app" / "llm_app" / "model.py", tmp_path / "model.py")
    serial = scan_json("--no-cache", "--jobs", "1", str(tmp_path))
    parallel = scan_json("--no-cache", "--jobs", "2", str(tmp_path))
    assert _key(serial) == _key(parallel)


WARM_SCAN = """
import sys
from migrator.cli import cli
try:
    cli.main(["scan", sys.argv[1]], standalone_mode=False)
except SystemExit:
    pass
print("LIBCST-LOADED" if "libcst" in sys.modules else "LIBCST-NOT-LOADED", file=sys.stderr)
"""


def test_a_warm_scan_never_loads_the_rules_or_libcst(tmp_path):
    """A warm scan answers from cached data: the rationale, dependency and catalog facts it
    prints come from the cache, so neither the rules nor libcst are imported."""
    import os
    import subprocess
    import sys

    project = tmp_path / "project"
    shutil.copytree(FIXTURES / "llm_app", project)
    env = dict(os.environ, MIGRATE_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("MIGRATE_NO_CACHE", None)  # a caller's own setting would turn the cache off
    runs = [
        subprocess.run(
            [sys.executable, "-c", WARM_SCAN, str(project)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        for _ in range(2)
    ]
    cold, warm = runs
    assert "LIBCST-LOADED" in cold.stderr  # the first scan parses
    assert "LIBCST-NOT-LOADED" in warm.stderr, warm.stderr
    assert warm.stdout == cold.stdout and "Why" in warm.stdout


def test_scan_options_do_not_leak_into_later_commands_of_the_process(tmp_path):
    """`--no-cache` and `--whole-parse` reach the workers through the environment; an in-process
    caller (a test runner, an editor plug-in) must get its environment back after the command."""
    import os

    from click.testing import CliRunner

    from migrator.cli import cli
    from migrator.engine.parse_plan import PARSE_MODE_VARIABLE
    from migrator.files.cache import NO_CACHE_VARIABLE

    project = tmp_path / "project"
    write(project, "a.py", "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n")
    before = {name: os.environ.get(name) for name in (NO_CACHE_VARIABLE, PARSE_MODE_VARIABLE)}
    result = CliRunner().invoke(cli, ["scan", "--no-cache", "--whole-parse", str(project)])
    assert result.exit_code in (0, 1), result.output
    assert {name: os.environ.get(name) for name in before} == before


def test_the_trigger_search_finds_exactly_the_triggers_in_a_text():
    """The prefilter's nested search (a trigger searched only where one it contains occurs)
    answers what one search per trigger does, for every kind's trigger table, on every file of
    the repository (its code, fixtures and test data: configs, Dockerfiles, workflows)."""
    from pathlib import Path

    from migrator.engine.parse_plan import _trigger_search, table_for
    from migrator.engine.registry import all_rules
    from migrator.files.discovery import file_kind

    rules = tuple(all_rules())
    root = Path(__file__).resolve().parent.parent
    texts: dict[str, list[str]] = {}
    folders = ("tests", "rules", "migrator", "scripts", "docs", FIXTURES)
    for path in sorted(path for folder in folders for path in (root / folder).rglob("*")):
        kind = file_kind(path.name)
        if kind is None or not path.is_file():
            continue
        texts.setdefault(kind, []).append(path.read_text(encoding="utf-8", errors="replace"))
    assert len(texts) >= 4 and len(texts["python"]) > 100
    nested = 0
    for kind, kind_texts in texts.items():
        search = _trigger_search(rules, kind)
        triggers = {trigger for rule in rules for trigger in table_for(rule, kind)}
        nested += len(triggers) - len(search.roots)
        for text in kind_texts:
            assert search.present(text) == {t for t in triggers if t in text}
    assert nested > 20  # the nesting is real: many triggers are searched only under another


def test_a_rule_runs_only_where_a_text_holds_what_it_requires(tmp_path, scan_json):
    from migrator.engine.parse_plan import active_rules
    from migrator.engine.registry import all_rules

    rules = all_rules()

    def active(text: str) -> set[str]:
        return {rule.code for rule in active_rules(rules, text, True)}

    # a warp mask in plain Python (a bit mask, a hash): no kernel source, ROC302 does not run
    assert "ROC302" not in active("MASK = 0xffffffff\nh = (h * 31) & MASK\n")
    assert "ROC302" in active("SRC = '__global__ void k() { __ballot_sync(0xffffffff, 1); }'\n")
    assert "ROC302" in active("from torch.utils.cpp_extension import load_inline\nM = 0xffffffff\n")
    # no HIP or ROCR list next to the CUDA one: ROC704 has nothing to compare
    assert "ROC704" not in active('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n')
    assert "ROC704" in active(
        'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\nos.environ["ROCR_VISIBLE_DEVICES"] = "1"\n'
    )
    # and the findings with the prefilter are those without it
    write(
        tmp_path,
        "kernels.py",
        'SRC = """\n__global__ void k(float* x) {\n  x[0] = __shfl_xor_sync(0xffffffff, x[0], 1);\n}"""\n',
    )
    write(tmp_path, "hashing.py", "MASK = 0xffffffff\nWARP_SIZE = 32\n")
    with_prefilter = scan_json("--no-cache", "--select", "ROC302", str(tmp_path))["findings"]
    without = scan_json("--no-cache", "--no-prefilter", "--select", "ROC302", str(tmp_path))[
        "findings"
    ]
    assert [(f["path"], f["line"]) for f in with_prefilter] == [("kernels.py", 1)]
    assert with_prefilter == without


def test_a_dependency_rule_reads_a_python_file_only_where_setup_declares_requirements(
    tmp_path, scan_json
):
    """``kind_requires``: in Python, the dependency rules read only ``setup()``'s requirement
    keywords, so a file mentioning setuptools without one is not theirs (it is then parsed in
    part for the other rules instead of whole); in a requirements file they need no keyword."""
    from migrator.engine.parse_plan import active_rules
    from migrator.engine.registry import all_rules

    rules = all_rules()

    def active(text: str, kind: str = "python") -> set[str]:
        return {rule.code for rule in active_rules(rules, text, True, kind)}

    installer = 'import subprocess\nsubprocess.run(["pip", "install", "-U", "setuptools"])\n'
    assert "ROC812" not in active(installer)
    declared = 'from setuptools import setup\nsetup(install_requires=["pynvml"])\n'
    assert "ROC812" in active(declared)
    assert "ROC812" in active("pynvml\n", "requirements")
    # and the findings with the prefilter are those without it
    write(tmp_path, "setup.py", declared)
    write(tmp_path, "install.py", installer + 'REQS = ["pynvml"]\n')
    with_prefilter = scan_json("--no-cache", "--select", "ROC811,ROC812", str(tmp_path))
    without = scan_json("--no-cache", "--no-prefilter", "--select", "ROC811,ROC812", str(tmp_path))
    assert [(f["path"], f["line"]) for f in with_prefilter["findings"]] == [("setup.py", 2)]
    assert with_prefilter["findings"] == without["findings"]


def test_the_fp8_rules_do_not_run_where_a_block_scaled_format_is_named(tmp_path, scan_json):
    """``silenced_by``: OCP FP8 is a block-scaled format's own element type, so the FP8 rules
    report nothing in a file naming one (MXFP8, NVFP4); they are not run there at all, with the
    same findings."""
    from migrator.engine.parse_plan import active_rules
    from migrator.engine.registry import all_rules

    rules = all_rules()
    fp8 = "import torch\nFP8_MAX = 448.0\nw = x.to(torch.float8_e4m3fn)\nscaled = torch._scaled_mm(w, w)\n"
    block = fp8 + "# MXFP8 recipe\n"
    codes = {rule.code for rule in active_rules(rules, fp8, True)}
    assert {"ROC120", "ROC121"} <= codes
    assert not {"ROC120", "ROC121"} & {rule.code for rule in active_rules(rules, block, True)}
    write(tmp_path, "plain.py", fp8)
    write(tmp_path, "block.py", block)
    with_prefilter = scan_json("--no-cache", "--select", "ROC120,ROC121", str(tmp_path))
    without = scan_json("--no-cache", "--no-prefilter", "--select", "ROC120,ROC121", str(tmp_path))
    assert sorted((f["path"], f["rule"]) for f in with_prefilter["findings"]) == [
        ("plain.py", "ROC120"),
        ("plain.py", "ROC121"),
    ]
    assert with_prefilter["findings"] == without["findings"]


def test_a_rule_runs_only_where_the_imports_can_resolve_what_it_reports(tmp_path, scan_json):
    """``requires_imports``: ROC604 reports ``torch.utils.cpp_extension.CUDA_HOME``; an installer
    naming the ``CUDA_HOME`` variable without importing torch is not its (nor parsed whole for
    it), while ``import torch`` or a project module re-exporting the name keeps it running, with
    the same findings."""
    write(tmp_path, "pkg/__init__.py", "")
    write(tmp_path, "pkg/env.py", "from torch.utils.cpp_extension import CUDA_HOME\n")
    write(tmp_path, "install.py", 'import os\nhome = os.environ.get("CUDA_HOME") + "/bin"\n')
    write(
        tmp_path,
        "build.py",
        "import torch\nnvcc = torch.utils.cpp_extension.CUDA_HOME + '/bin/nvcc'\n",
    )
    write(tmp_path, "reexported.py", "from pkg import env\nnvcc = env.CUDA_HOME + '/bin/nvcc'\n")
    with_prefilter = scan_json("--no-cache", "--select", "ROC604", str(tmp_path))
    without = scan_json("--no-cache", "--no-prefilter", "--select", "ROC604", str(tmp_path))
    assert sorted(f["path"] for f in with_prefilter["findings"]) == ["build.py", "reexported.py"]
    assert with_prefilter["findings"] == without["findings"]

    from migrator.syntax.imports import imports_from_ast

    def may(source: str) -> bool:
        table = imports_from_ast(ast.parse(source))
        return table.may_resolve(["torch.utils.cpp_extension.CUDA_HOME"])

    assert not may("import os\nimport numpy as np\nfrom torch import nn\n")
    assert may("import torch\n") and may("from torch.utils import cpp_extension as ext\n")
    assert may("from torch.utils.cpp_extension import CUDA_HOME\n")
    # the installer is not even parsed for it
    from migrator.engine.python_reports import python_reports
    from migrator.engine.registry import all_rules

    rules = [rule for rule in all_rules() if rule.code == "ROC604"]
    installer = (tmp_path / "install.py").read_text()
    assert python_reports(installer, "install.py", rules) == (None, None)
    module, _ = python_reports((tmp_path / "build.py").read_text(), "build.py", rules)
    assert module is not None
