"""A real (non-editable) install carries the rule catalog as ``migrator.rules``, its data files,
the templates and the emulation files, and works from outside the source tree."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from migrator.engine.registry import all_rules
from tests.conftest import FIXTURES, ROOT


def test_installed_package_is_complete(tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(target),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    assert not (target / "rules").exists(), "the catalog must not install as a top-level package"
    for relative in [
        "migrator/rules/data/packages.toml",
        "migrator/rules/codes.toml",
        "migrator/pr/cli.py",
        "migrator/reporting/templates/report.html.j2",
        "migrator/fleet/templates/fleet.html.j2",
        "migrator/verify/sim/sitecustomize.py",
        "migrator/schemas/report.schema.json",
        "migrator/doctor/__init__.py",
        "migrator/reporting/readiness/scoring.py",
        "migrator/output/findings_json.py",
        "migrator/data/rocm-facts.md",
        "migrator/kernels/standins/thrust/complex.h",
    ]:
        assert (target / relative).is_file(), relative
    # Every package of the source tree is installed (setup.py derives the list).
    for init in [*(ROOT / "migrator").rglob("__init__.py"), *(ROOT / "rules").rglob("__init__.py")]:
        relative = init.relative_to(ROOT)
        if relative.parts[0] == "rules":
            relative = "migrator" / relative
        assert (target / relative).is_file(), relative
    env = {**os.environ, "PYTHONPATH": str(target), "MIGRATE_CACHE_DIR": str(tmp_path / "c")}
    run = lambda *args: subprocess.run(  # noqa: E731
        # -P (Python 3.11+) keeps the source tree off sys.path; cwd is tmp_path anyway.
        [
            sys.executable,
            *(["-P"] if sys.version_info >= (3, 11) else []),
            "-m",
            "migrator.cli",
            *args,
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    listing = run("rules", "--format", "json")
    assert listing.returncode == 0, listing.stderr
    assert len(json.loads(listing.stdout)) == len(all_rules())
    scan = run("scan", "--format", "json", str(FIXTURES / "llm_app"))
    assert scan.returncode == 1, scan.stderr
    assert json.loads(scan.stdout)["findings"]
    assert run("doctor", "--help").returncode == 0
    explain = run("explain", "ROC101")
    assert explain.returncode == 0, explain.stderr
    assert "torch.version.hip is not None" in explain.stdout  # the cited fact, quoted
    assert "github.com/pytorch/pytorch" in explain.stdout  # its primary source
    report = run("report", "--format", "json", str(FIXTURES / "llm_app"))
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["projects"]


def test_tomllib_is_never_imported_bare():
    """Python 3.10 has no ``tomllib``: every import goes through migrator.files.tomlcompat (or an
    explicit version check), in the package, the rules, the scripts and the tests."""
    import ast

    bare = []
    for folder in ("migrator", "rules", "scripts", "tests"):
        for path in (ROOT / folder).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            guarded = {
                id(node)
                for branch in ast.walk(tree)
                if isinstance(branch, ast.If) and "version_info" in ast.unparse(branch.test)
                for node in ast.walk(branch)
            }
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Import)
                    and any(alias.name == "tomllib" for alias in node.names)
                    and id(node) not in guarded
                ):
                    bare.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bare, bare
