"""Hygiene is not migration: a rewrite that changes nothing on ROCm (a deprecated alias:
ROC520 ``torch.cuda.amp``, ROC150 ``sdp_kernel``) is left out of the default ``fix``, and runs
where the rule is named, as hygiene findings are shown. ``fix``, ``fix --diff``, the scan's
fixable counts, the editor's fix-all and ``pr`` count the same set (``Selection.fixes``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from migrator.engine.runner import fix_text
from migrator.model import Applicability
from tests.conftest import write

#: One migration fix (ROC101, an error on ROCm) and two hygiene rewrites (ROC520, ROC150).
SOURCE = (
    "import torch\n"
    "\n"
    "with torch.cuda.amp.autocast():\n"
    "    pass\n"
    "if torch.version.cuda:\n"
    "    pass\n"
    "ctx = torch.backends.cuda.sdp_kernel(enable_flash=True)\n"
)


def _project(root: Path) -> Path:
    write(root, "requirements.txt", "torch>=2.4\n")
    write(root, "train.py", SOURCE)
    return root


def _fixed_rules(output: str) -> set[str]:
    """The rules `fix` says it fixed (its summary: `   1  ROC101 cuda-version-as-gpu-check`)."""
    return {
        line.split()[1]
        for line in output.splitlines()
        if line.strip() and line.split()[0].isdigit() and line.split()[1:2][0].startswith("ROC")
    }


def test_default_fix_leaves_hygiene_rewrites(tmp_path, run_cli):
    root = _project(tmp_path / "p")
    result = run_cli("fix", "--diff", str(root))
    assert "+if torch.version.cuda or torch.version.hip:" in result.output
    assert "torch.amp.autocast" not in result.output
    assert "sdpa_kernel" not in result.output
    assert _fixed_rules(result.output) == {"ROC101"}
    run_cli("fix", str(root))
    text = (root / "train.py").read_text()
    assert "torch.cuda.amp.autocast()" in text and "sdp_kernel(enable_flash=True)" in text
    assert "torch.version.hip" in text


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--select", "ROC520"], {"ROC520"}),
        (["--select", "cuda-amp-namespace"], {"ROC520"}),
        (["--extend-select", "cuda-amp"], {"ROC101", "ROC520"}),
        (["--extend-select", "ROC150"], {"ROC101", "ROC150"}),
        (["--select", "ALL"], {"ROC101", "ROC520", "ROC150"}),
        (["--min-severity", "hygiene"], {"ROC101", "ROC520", "ROC150"}),
    ],
)
def test_a_named_hygiene_rule_is_fixed(tmp_path, run_cli, options, expected):
    root = _project(tmp_path / "p")
    result = run_cli("fix", "--diff", *options, str(root))
    assert _fixed_rules(result.output) == expected, result.output


def test_scan_counts_as_fixable_what_fix_applies(tmp_path, run_cli):
    root = _project(tmp_path / "p")
    for options in ([], ["--select", "ROC520"], ["--select", "ALL"]):
        scanned = run_cli("scan", "--no-cache", "--format", "json", *options, str(root))
        report = json.loads(scanned.stdout)
        offered = {f["rule"] for f in report["findings"] if f["fix"] is not None}
        fixed = _fixed_rules(run_cli("fix", "--diff", *options, str(root)).output)
        assert offered == fixed, options


def test_the_editors_fix_all_follows_the_projects_selection(tmp_path):
    root = _project(tmp_path / "p")
    new_text, fixed = fix_text(root, "train.py", SOURCE.encode(), Applicability.SAFE)
    assert new_text is not None and "torch.cuda.amp.autocast()" in new_text
    assert {finding.rule for finding in fixed} == {"ROC101"}
    write(root, "pyproject.toml", '[tool.migrate]\nselect = ["ROC101", "cuda-amp"]\n')
    new_text, fixed = fix_text(root, "train.py", SOURCE.encode(), Applicability.SAFE)
    assert new_text is not None and 'torch.amp.autocast("cuda")' in new_text
    assert {finding.rule for finding in fixed} == {"ROC101", "ROC520"}


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def _git_identity(monkeypatch, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for key in ("GIT_AUTHOR", "GIT_COMMITTER"):
        monkeypatch.setenv(f"{key}_NAME", "Test")
        monkeypatch.setenv(f"{key}_EMAIL", "test@example.com")


@pytest.mark.usefixtures("_git_identity")
@pytest.mark.parametrize("options", [[], ["--select", "ROC520,ROC101"]])
def test_pr_commits_the_hygiene_rewrites_fix_applies_with_the_same_options(
    tmp_path, run_cli, options
):
    repo = _project(tmp_path / "repo")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "initial")
    copy = _project(tmp_path / "copy")
    assert run_cli("fix", *options, str(copy)).exit_code in (0, 1)
    result = run_cli("pr", *options, str(repo))
    assert result.exit_code == 0, result.output
    assert _git(repo, "show", "migrate/rocm:train.py") + "\n" == (copy / "train.py").read_text()
    subjects = _git(repo, "log", "--format=%s", "main..migrate/rocm").splitlines()
    families = {subject.split()[1] for subject in subjects}
    assert families == ({"cuda-version", "cuda-amp"} if options else {"cuda-version"})
