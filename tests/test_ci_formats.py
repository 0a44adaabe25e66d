"""The CI output formats of `migrate scan` (issue #36): each parses as its consumer parses it,
carries the finding's exact location, and escapes what it takes from scanned files."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

from tests.conftest import FIXTURES, write

FIXTURE = FIXTURES / "quant_kernels"


def _run(run_cli, output_format, path):
    """``migrate scan`` of ``path`` in ``output_format``, run from inside it."""
    result = run_cli("scan", "--no-cache", "--format", output_format, str(path), cwd=path)
    assert result.exit_code == 1, result.output
    return result.stdout


def test_json_lines_is_one_finding_per_line(run_cli):
    lines = _run(run_cli, "json-lines", FIXTURE).splitlines()
    items = [json.loads(line) for line in lines]
    assert [(i["rule"], i["path"], i["line"], i["column"]) for i in items][0] == (
        "ROC310",
        "csrc/lane_ptx.cu",
        6,
        3,
    )


def test_junit_is_xml_with_a_failure_per_finding(run_cli):
    root = ET.fromstring(_run(run_cli, "junit", FIXTURE))
    assert root.tag == "testsuites" and root.get("failures") == "3"
    cases = root.findall(".//testcase")
    assert any(case.get("name") == "ROC310 inline-ptx at line 6" for case in cases)
    assert all(case.find("failure") is not None for case in cases)


def test_gitlab_code_quality_issues_have_stable_fingerprints(run_cli):
    first = json.loads(_run(run_cli, "gitlab", FIXTURE))
    again = json.loads(_run(run_cli, "gitlab", FIXTURE))
    assert [issue["fingerprint"] for issue in first] == [issue["fingerprint"] for issue in again]
    issue = next(i for i in first if i["check_name"].startswith("ROC310"))
    assert issue["severity"] == "critical"
    assert issue["location"]["path"].endswith("csrc/lane_ptx.cu")
    assert issue["location"]["lines"]["begin"] == 6
    assert {"description", "check_name", "fingerprint", "severity", "location"} <= issue.keys()


def test_rdjson_diagnostics_for_reviewdog(run_cli):
    document = json.loads(_run(run_cli, "rdjson", FIXTURE))
    assert document["source"]["name"] == "migrate"
    diagnostic = document["diagnostics"][0]
    assert diagnostic["code"]["value"] == "ROC310" and diagnostic["severity"] == "ERROR"
    assert diagnostic["location"]["range"]["start"] == {"line": 6, "column": 3}


def test_pylint_and_azure_lines(run_cli):
    pylint = _run(run_cli, "pylint", FIXTURE).splitlines()
    assert re.match(r"^csrc/lane_ptx\.cu:6: \[E310\(inline-ptx\), \] .+ \(ROC310\)$", pylint[0])
    azure = _run(run_cli, "azure", FIXTURE).splitlines()
    assert azure[0].startswith("##vso[task.logissue type=error;sourcepath=")
    assert ";linenumber=6;columnnumber=3;code=ROC310]" in azure[0]


def test_hostile_file_names_cannot_forge_records(tmp_path, run_cli):
    name = "a];code=X]<b>&\u202e.py"
    write(tmp_path, name, "import pynvml\npynvml.nvmlInit()\n")
    azure = _run(run_cli, "azure", tmp_path)
    assert all(line.count("]") == 1 for line in azure.splitlines())  # only the command's own
    root = ET.fromstring(_run(run_cli, "junit", tmp_path))
    assert root.find(".//testsuite").get("name").endswith("a];code=X]<b>&\\u202e.py")
    assert "\u202e" not in _run(run_cli, "pylint", tmp_path)  # shown as a visible escape
    for output_format in ("json-lines", "gitlab", "rdjson"):
        text = _run(run_cli, output_format, tmp_path)
        json.loads(text.splitlines()[0] if output_format == "json-lines" else text)
