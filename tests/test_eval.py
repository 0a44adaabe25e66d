"""scripts/eval.py on the bundled fixture: labels match real scan findings, survive line shifts,
cope with aggregated findings, and every labelled fixture site is reported."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT

LABELS = ROOT / "tests" / "eval" / "fixture"
_SPEC = importlib.util.spec_from_file_location("migrate_eval", ROOT / "scripts" / "eval.py")
assert _SPEC is not None and _SPEC.loader is not None
ev = importlib.util.module_from_spec(_SPEC)
sys.modules["migrate_eval"] = ev
_SPEC.loader.exec_module(ev)


def _evaluate(report, corpus: Path):
    labels, sites = ev.load_labels(LABELS)
    findings = ev.parse_report("llm_app", report)
    return ev.evaluate(findings, labels, sites, ev.LineReader(corpus)), labels, sites


def test_every_fixture_finding_is_labelled_and_every_site_reported(scan_json):
    report = scan_json("--no-cache", str(FIXTURES / "llm_app"), cwd=FIXTURES / "llm_app")
    result, labels, sites = _evaluate(report, FIXTURES)
    unlabelled = [f"{f.primary.path}:{f.primary.line} {f.rule}" for f in result.unlabelled]
    assert unlabelled == [], "label new fixture findings in tests/eval/fixture/findings"
    assert [f"{s.path}:{s.line}" for s in result.sites_missed] == []
    assert len(result.sites_found) == len(sites) > 0
    correct, labelled = result.precision()
    assert labelled == len(report["findings"])
    assert 0 < correct < labelled  # the fixture holds both real problems and advisories


def test_labels_follow_a_shifted_file(scan_json, tmp_path):
    original = scan_json("--no-cache", str(FIXTURES / "llm_app"), cwd=FIXTURES / "llm_app")
    before, _, _ = _evaluate(original, FIXTURES)
    corpus = tmp_path / "corpus"
    shutil.copytree(FIXTURES / "llm_app", corpus / "llm_app")
    shifted_file = corpus / "llm_app" / "llm_app" / "gpu_utils.py"
    text = shifted_file.read_text()
    shifted_file.write_text('"""Shifted."""\n\n# two more lines\n' + text)
    shifted = scan_json("--no-cache", str(corpus / "llm_app"), cwd=corpus / "llm_app")
    moved = [f for f in shifted["findings"] if f["path"] == "llm_app/gpu_utils.py"]
    assert moved and all(f["line"] > 3 for f in moved)
    after, _, _ = _evaluate(shifted, corpus)
    assert after.unlabelled == []
    assert after.per_rule == before.per_rule
    assert len(after.sites_found) == len(before.sites_found)


def test_aggregated_finding_counts_once_and_keeps_its_sites(scan_json):
    report = scan_json("--no-cache", str(FIXTURES / "llm_app"), cwd=FIXTURES / "llm_app")
    after, _, _ = _evaluate(report, FIXTURES)
    [merged] = [
        f
        for f in report["findings"]
        if f["rule"] == "ROC201" and f["path"] == "llm_app/gpu_utils.py"
    ]
    # the engine reports one function's unguarded nvmlInit() and the NVML queries after it once
    assert len(merged["related"]) >= 1
    # the same problem reported once per site, as before aggregation
    split = [dict(merged, related=[])] + [
        dict(
            merged,
            rule="ROC202",
            name="nvml-device-query",
            line=site["line"],
            column=site["column"],
            related=[],
        )
        for site in merged["related"]
    ]
    others = [f for f in report["findings"] if f is not merged]
    before, _, _ = _evaluate(dict(report, findings=split + others), FIXTURES)
    assert after.unlabelled == []
    nvml = ("ROC201", "ROC202")

    def counted(result: ev.Evaluation, verdict: str | None = None) -> int:
        return sum(
            count
            for rule in nvml
            for kind, count in result.per_rule.get(rule, {}).items()
            if verdict in (None, kind)
        )

    assert counted(after) == counted(before) - len(merged["related"])
    assert counted(after, "duplicate") < counted(before, "duplicate")
    assert len(after.sites_found) == len(before.sites_found)


def test_related_site_alone_recalls_a_site():
    labels, sites = ev.load_labels(LABELS)
    site = next(s for s in sites if s.path == "requirements.txt")
    finding = ev.Finding(
        project="llm_app",
        rule="ROC999",
        name="anything",
        category="dependency",
        severity="error",
        message="m",
        primary=ev.Location("pyproject.toml", 1),
        related=[ev.Location(site.path, site.line)],
    )
    assert ev.site_found(site, [finding], ev.LineReader(FIXTURES))
    elsewhere = ev.Finding(**{**finding.__dict__, "related": [ev.Location(site.path, 999)]})
    assert not ev.site_found(site, [elsewhere], ev.LineReader(FIXTURES))


def test_advisory_counts_only_when_quiet():
    label = ev.Label("p", "a.py", 1, "", {"*"}, "advisory", "r", set(), "x:1")
    finding = ev.Finding("p", "R", "n", "c", "warning", "m", ev.Location("a.py", 1))
    assert ev.strict_verdict(finding, label) == "wrong-message"
    finding.severity = "info"
    assert ev.strict_verdict(finding, label) == "true"


def test_script_prints_tables_for_the_fixture(capsys):
    sites = sum(1 for _ in (LABELS / "sites" / "llm_app.jsonl").open())
    assert ev.main(["--corpus", str(FIXTURES), "--labels", str(LABELS)]) == 0
    out = capsys.readouterr().out
    assert "| **all** |" in out
    assert f"site recall: {sites}/{sites} = 100%" in out
    assert "unlabelled: 0" in out


def test_bad_label_is_a_one_line_error(tmp_path):
    (tmp_path / "findings").mkdir()
    (tmp_path / "findings" / "x.jsonl").write_text(
        json.dumps({"project": "p", "path": "a", "line": 1, "verdict": "maybe"}) + "\n"
    )
    with pytest.raises(SystemExit) as info:
        ev.load_labels(tmp_path)
    assert "findings/x.jsonl:1" in str(info.value) and "maybe" in str(info.value)
