"""The fix review machinery (scripts/fix_review.py) on the bundled fixtures: every hunk of
`fix --diff` and `fix --diff --unsafe-fixes` has a recorded verdict, and none of them is wrong."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load_script():
    spec = importlib.util.spec_from_file_location("fix_review", ROOT / "scripts" / "fix_review.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fix_review"] = module
    spec.loader.exec_module(module)
    return module


fix_review = _load_script()


@pytest.mark.parametrize("project", ["llm_app", "llm_app_incomplete"])
def test_fixture_hunks_are_reviewed_and_none_is_wrong(project):
    verdicts = ROOT / "tests" / "fix_review" / f"fixture-{project}.toml"
    review = fix_review.review(project, ROOT / "fixtures" / project, verdicts)
    unreviewed = [f"{h.path}:{h.old_start} {sorted(h.rules)} {h.digest}" for h in review.unreviewed]
    assert not unreviewed, (
        "hunks without a verdict (scripts/fix_review.py --fixtures --update):\n"
        + "\n".join(unreviewed)
    )
    assert not review.stale, f"verdicts for hunks that no longer exist: {review.stale}"
    assert review.counts["safe"]["wrong"] == 0
    assert review.counts["unsafe"]["wrong"] == 0
    assert review.counts["hygiene"]["wrong"] == 0


def test_a_changed_hunk_needs_a_new_verdict(tmp_path):
    """A hunk whose added lines differ from the reviewed one has another hash: it is unreviewed."""
    project = tmp_path / "p"
    project.mkdir()
    (project / "train.py").write_text("import torch\nuse_gpu = bool(torch.version.cuda)\n")
    (project / "requirements.txt").write_text("torch>=2.4\n")
    verdicts = tmp_path / "p.toml"
    first = fix_review.review("p", project, verdicts, update=True)
    assert [h.rules for h in first.unreviewed] == [{"ROC101"}]
    text = verdicts.read_text().replace('verdict = ""', 'verdict = "right"')
    verdicts.write_text(text)
    assert not fix_review.review("p", project, verdicts).unreviewed
    (project / "train.py").write_text("import torch\nuse_gpu = bool(torch.version.cuda) and True\n")
    again = fix_review.review("p", project, verdicts)
    assert len(again.unreviewed) == 1 and len(again.stale) == 1
