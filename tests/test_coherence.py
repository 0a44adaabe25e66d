"""Every output of the bundled fixture tells one story (``scripts/coherence.py``), the one the
consequence model (``migrator.model.MEANINGS``) and its table in docs/report.md write down."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from migrator.model import DEFAULT_FAIL_ON, MEANINGS, Severity

ROOT = Path(__file__).resolve().parent.parent
_SPEC = importlib.util.spec_from_file_location("coherence", ROOT / "scripts" / "coherence.py")
assert _SPEC and _SPEC.loader
coherence = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(coherence)


#: One worker runs the module, so its module-scoped fixtures are made once (`--dist loadgroup`).
pytestmark = pytest.mark.xdist_group("test_coherence")


@pytest.fixture(scope="module")
def fixture_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return coherence.outputs(ROOT / "fixtures" / "llm_app", tmp_path_factory.mktemp("outputs"))


def test_no_output_of_the_fixture_contradicts_another(fixture_outputs):
    assert coherence.contradictions(fixture_outputs) == []
    # the fixture has both kinds, so the check above compared real counts
    summary = fixture_outputs["scan"]["summary"]
    assert summary["problems"] == 35 and summary["hints"] == 7
    assert fixture_outputs["report_json"]["projects"][0]["verdict"] == "needs-work"


def test_the_check_finds_a_blocker_beside_another_verdict_and_run_together_items(
    fixture_outputs,
):
    broken = copy.deepcopy(fixture_outputs)
    broken["report_md"] = broken["report_md"].replace(
        "### Manual work", "### Blockers and manual work"
    )
    broken["pr_body"] += "\nThe score is unchanged.- **3** items left\n"
    broken["scan_exit"] = 0
    found = coherence.contradictions(broken)
    assert "report_md names blockers beside needs-work" in found
    assert "pr_body runs two list items together" in found
    assert any(line.startswith("scan exits 0 with 35 problem(s)") for line in found)


def test_the_documented_table_is_the_model():
    text = (ROOT / "docs" / "report.md").read_text(encoding="utf-8")
    rows = re.findall(
        r"^\| `(\w+)` \| (\w+) \| (.+?) \| (\w+) \| (\w+) \| (\w+) \| `(\w+)` \| (\w+) \|$",
        text,
        re.M,
    )
    documented = {row[0]: row[1:] for row in rows}
    assert set(documented) == {severity.label for severity in MEANINGS}
    yes = {True: "yes", False: "no"}
    for severity, meaning in MEANINGS.items():
        kind, on_rocm, label, effort, scored, level, fails = documented[severity.label]
        assert (kind, on_rocm, label, level) == (
            meaning.kind,
            meaning.on_rocm,
            meaning.report_label,
            meaning.sarif_level,
        )
        assert (effort, scored, fails) == (
            yes[meaning.effort],
            yes[meaning.scored],
            yes[meaning.fails_ci],
        )
    assert DEFAULT_FAIL_ON is Severity.WARNING


def _score(run_cli, root: Path, out: Path) -> int:
    result = run_cli("report", str(root), "--format", "json", "-o", str(out))
    assert result.exit_code in (0, 1), result.output
    return int(json.loads(out.read_text())["projects"][0]["score"])


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_the_tools_own_fixes_never_lower_the_score(tmp_path, run_cli, unsafe):
    project = tmp_path / "llm_app"
    shutil.copytree(ROOT / "fixtures" / "llm_app", project)
    before = _score(run_cli, project, tmp_path / "before.json")
    shown = json.loads(run_cli("scan", str(project), "--format", "json").stdout)["summary"]
    fixed = run_cli("fix", str(project), *(["--unsafe-fixes"] if unsafe else []))
    assert fixed.exit_code in (0, 1), fixed.output
    after = _score(run_cli, project, tmp_path / "after.json")
    assert after >= before
    if not unsafe:
        # `fix` applies exactly what `scan` showed as fixable at the same selection
        left = json.loads(run_cli("scan", str(project), "--format", "json").stdout)["summary"]
        assert left["by_fix"]["safe"] == 0
        assert left["total"] == shown["total"] - shown["by_fix"]["safe"]
