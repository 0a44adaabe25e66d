"""Fixture projects: pinned findings snapshot, pinned golden fixed tree, idempotent fix, and every
rewritten Python file compiles. Regenerate with ``pytest tests/test_fixtures.py --update-fixtures``."""

from __future__ import annotations

import filecmp
import json
import py_compile
import shutil
import time
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT

SNAPSHOTS = ROOT / "tests" / "snapshots"
GOLDEN = ROOT / "tests" / "golden"
PROJECTS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def _snapshot_lines(report) -> str:
    lines = []
    for f in report["findings"]:
        where = f"{f['path']}" + (f"[cell {f['cell']}]" if "cell" in f else "")
        fix = f" [{f['fix']['applicability']}]" if f["fix"] else ""
        lines.append(
            f"{where}:{f['line']}:{f['column']} {f['rule']} {f['severity']}{fix} {f['message']}"
        )
    for entry in report["files"]["failed"] + report["files"]["skipped"]:
        lines.append(f"{entry['path']}: {entry['reason']}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("project", PROJECTS)
def test_findings_match_snapshot(project, scan_json, update_fixtures):
    start = time.perf_counter()
    report = scan_json("--no-cache", str(FIXTURES / project), cwd=FIXTURES / project)
    elapsed = time.perf_counter() - start
    text = _snapshot_lines(report)
    snapshot = SNAPSHOTS / f"{project}.findings.txt"
    if update_fixtures:
        SNAPSHOTS.mkdir(exist_ok=True)
        snapshot.write_text(text)
    assert snapshot.is_file(), "no snapshot: run pytest --update-fixtures"
    assert text == snapshot.read_text()
    assert elapsed < 30  # a sanity bound only; speed is measured by scripts/bench.py


def _tree_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize("project", PROJECTS)
def test_fix_yields_golden_tree_and_is_idempotent(project, tmp_path, run_cli, update_fixtures):
    work = tmp_path / project
    shutil.copytree(FIXTURES / project, work)
    result = run_cli("fix", "--unsafe-fixes", str(work))
    assert result.exit_code in (0, 1), result.output
    assert "not fixed" not in result.output, result.output
    for path in work.rglob("*.py"):
        py_compile.compile(str(path), doraise=True, cfile=str(tmp_path / "x.pyc"))
    for path in work.rglob("*.ipynb"):
        json.loads(path.read_text())
    second = run_cli("fix", "--unsafe-fixes", "--diff", str(work))
    assert "+++ " not in second.output, f"second fix run would change files:\n{second.output}"
    golden = GOLDEN / project
    if update_fixtures:
        if golden.exists():
            shutil.rmtree(golden)
        shutil.copytree(work, golden)
    assert golden.is_dir(), "no golden tree: run pytest --update-fixtures"
    assert _tree_files(work) == _tree_files(golden)
    mismatched = [
        name
        for name in _tree_files(work)
        if not filecmp.cmp(work / name, golden / name, shallow=False)
    ]
    assert not mismatched, f"differs from golden: {mismatched}"


@pytest.mark.parametrize("project", PROJECTS)
def test_diff_shows_every_rewrite(project, tmp_path, run_cli):
    work = tmp_path / project
    shutil.copytree(FIXTURES / project, work)
    diff = run_cli("fix", "--unsafe-fixes", "--diff", str(work), cwd=work).output
    run_cli("fix", "--unsafe-fixes", str(work))
    changed = [
        name
        for name in _tree_files(work)
        if not filecmp.cmp(work / name, FIXTURES / project / name, shallow=False)
    ]
    for name in changed:
        assert f"+++ b/{name}" in diff, f"{name} changed but the diff does not show it"
