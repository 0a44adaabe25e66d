"""`migrate report` output: escaping in HTML and Markdown, self-contained HTML, the JSON schema,
the CLI (fleet, --repos, --receipt, --target) and the verification wording."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from migrator.model import Applicability, FileResult, Finding, FixInfo, ScanResult, Severity, Status
from migrator.reporting import html, markdown, readiness, report_json
from tests.conftest import FIXTURES, ROOT, write

SCHEMA = json.loads(
    (ROOT / "migrator" / "schemas" / "report.schema.json").read_text(encoding="utf-8")
)
XSS = "<script>alert(1)</script>"
RECEIPT = {
    "schema": "migrate-verify-receipt/1",
    "project": "/p",
    "passed": True,
    "amd_gpu_used": False,
    "runs": [
        {
            "target": "native",
            "tree": "original",
            "baseline": True,
            "emulated": False,
            "real_device": "NVIDIA H200",
            "torch_build": {"torch": "2.13.0", "cuda": "13.0", "kind": "cuda"},
            "tokens_per_second": 50.0,
            "passed": True,
        },
        {
            "target": "rocm-sim",
            "tree": "migrated",
            "emulated": True,
            "emulation": "ROCm 7.2 on AMD Instinct MI300X (gfx942), emulated",
            "real_device": "NVIDIA H200",
            "torch_build": {"torch": "2.13.0", "cuda": "13.0", "kind": "cuda"},
            "tokens_per_second": 45.0,
            "passed": True,
        },
    ],
}


def hostile_meta(code: str) -> readiness.RuleMeta:
    return readiness.RuleMeta(
        code=code,
        name="hostile-rule",
        category=f"cat{XSS}",
        severity=Severity.ERROR,
        message=f"message {XSS}",
        fix_title=None,
        applicability=Applicability.NONE,
        fact=f"fact {XSS}",
        targets=("all",),
        effort_hours=1.0,
        blocker=True,
        port=True,
        manual_steps=f"Steps with raw HTML {XSS} and `code {XSS}`",
        references=f"- ref {XSS}",
    )


def hostile_report() -> readiness.Report:
    finding = Finding(
        rule="ROC990",
        name="hostile-rule",
        category=f"cat{XSS}",
        severity=Severity.ERROR,
        path=f"pkg/{XSS}.py",
        line=3,
        column=1,
        end_line=3,
        end_column=4,
        message=f"`{XSS}` found in {XSS} | pipe",
        fix=None,
        source_line=f"{XSS}==1.0",
    )
    dependency = Finding(
        rule="ROC990",
        name="hostile-rule",
        category="dependency",
        severity=Severity.WARNING,
        path="requirements.txt",
        line=1,
        column=1,
        end_line=1,
        end_column=2,
        message=XSS,
        fix=FixInfo(Applicability.SAFE, XSS),
        source_line=f"--index-url https://x.test/{XSS}",
    )
    scan = ScanResult(
        "/tmp/proj",
        [
            FileResult(finding.path, Status.SCANNED, (finding,)),
            FileResult("requirements.txt", Status.SCANNED, (dependency,)),
            FileResult(f"bad{XSS}.py", Status.FAILED, reason=XSS),
        ],
    )
    return readiness.build_report(
        [(f"proj{XSS}", scan)],
        lookup=hostile_meta,
        verification=readiness.verification_from_dict(RECEIPT, f"r{XSS}.json"),
    )


def test_html_escapes_everything_from_scanned_code():
    text = html.render(hostile_report())
    assert XSS not in text
    assert "<script" not in text.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_html_is_self_contained():
    text = html.render(hostile_report())
    assert not re.search(r"<(script|link|iframe|img|object|embed)\b", text, re.IGNORECASE)
    assert not re.search(r"\b(src|srcset)=", text)
    assert "@import" not in text and "url(" not in text
    external = [href for href in re.findall(r'href="([^"]+)"', text) if not href.startswith("#")]
    assert external == []
    assert text.count("<svg") >= 2


def test_markdown_escapes_html_and_table_pipes():
    text = markdown.render(hostile_report())
    outside_code = re.sub(r"`[^`\n]*`", "", text)
    assert "<script" not in outside_code
    for line in text.splitlines():
        if line.startswith("| `pkg/") and "ROC990" in line:
            cells = re.split(r"(?<!\\)\|", line)
            assert len(cells) == 7, line  # 5 columns: the message's pipe is escaped


def test_markdown_cell_helpers():
    assert markdown.inline("a <b> `c <d>`") == "a &lt;b&gt; `c <d>`"
    assert markdown.cell("x | y") == "x \\| y"
    assert markdown.code("a`b") == "``a`b``"
    long = "first clause with `code span`; " * 20
    cut = markdown.short(long, 100)
    assert len(cut) <= 102 and cut.endswith(" …") and cut.count("`") % 2 == 0
    assert markdown.short("x" * 300, 50) == "x" * 50 + " …"
    assert markdown.short("brief") == "brief"


def test_json_validates_against_the_schema():
    document = report_json.report_dict(hostile_report())
    jsonschema.validate(document, SCHEMA)
    assert document["verification"]["emulated"] is True
    assert document["verification"]["amd_hardware"] is False
    project = document["projects"][0]
    assert project["manual_work"][0]["kind"] == "port"
    # blockers are the work items deciding a blocked verdict, and only then
    assert bool(project["blockers"]) == (project["verdict"] == "blocked")
    assert set(project["blockers"]) <= {item["key"] for item in project["deciding"]}
    assert document["formula"]["half_life"] == readiness.HALF_LIFE
    assert document["formula"]["bands"] == {
        "ready": [70, 100],
        "needs-work": [35, 69],
        "blocked": [0, 34],
    }
    low, high = project["band"]
    assert low <= project["score"] <= high
    assert project["verdict_reason"].startswith(project["verdict_rule"])


def test_report_cli_html_on_the_fixture(run_cli, tmp_path):
    output = tmp_path / "report.html"
    result = run_cli(
        "report", str(FIXTURES / "llm_app"), "--format", "html", "--output", str(output)
    )
    assert result.exit_code == 0, result.output
    text = output.read_text(encoding="utf-8")
    for marker in (
        "Readiness score",
        "<h3>Manual work</h3>",  # the fixture needs work; nothing blocks it
        "dependency-table",
        "target-table",
        "How the score is computed",
        "<svg",
    ):
        assert marker in text
    assert "wrote" in result.output


def test_report_cli_json_fleet_with_repos_file_and_targets(run_cli, tmp_path):
    clean = tmp_path / "clean"
    write(clean, "app.py", "print('hello')\n")
    repos = tmp_path / "repos.txt"
    repos.write_text(f"# fleet\n{FIXTURES / 'llm_app'}\n\nclean\n", encoding="utf-8")
    result = run_cli(
        "report", "--repos", str(repos), "--format", "json", "--target", "gfx942,gfx1100"
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    jsonschema.validate(document, SCHEMA)
    assert [row["name"] for row in document["fleet"]] == ["clean", "llm_app"]
    assert document["fleet"][0]["score"] == 100
    assert document["targets"] == ["gfx942", "gfx1100"]
    assert [t["target"] for t in document["projects"][1]["targets"]["summary"]] == [
        "gfx942",
        "gfx1100",
    ]


def test_report_cli_markdown_with_receipt(run_cli, tmp_path):
    receipt = tmp_path / "receipt.json"
    receipt.write_text(json.dumps(RECEIPT), encoding="utf-8")
    result = run_cli(
        "report", str(FIXTURES / "llm_app"), "--format", "md", "--receipt", str(receipt)
    )
    assert result.exit_code == 0, result.output
    text = result.output
    assert "## Verification" in text
    assert "emulated ROCm" in text
    assert "no AMD GPU ran" in text
    assert "Tokens per second before: **50.0**, after: **45.0**" in text
    assert "ran on an AMD GPU" not in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give at least one PATH"),
        (("/does/not/exist",), "path does not exist"),
        ((".", "--target", "mi300"), "unknown GPU target"),
    ],
)
def test_report_cli_usage_errors(run_cli, args, message):
    result = run_cli("report", *args)
    assert result.exit_code == 2
    assert message in result.output


def test_report_cli_rejects_a_receipt_that_is_not_json(run_cli, tmp_path):
    receipt = tmp_path / "receipt.json"
    receipt.write_text("not json", encoding="utf-8")
    result = run_cli("report", str(tmp_path), "--receipt", str(receipt))
    assert result.exit_code == 2
    assert "cannot read verify receipt" in result.output


def test_fleet_html_has_a_row_and_a_section_per_project(tmp_path):
    roots = []
    for name, source in (
        ("one", "import torch\n"),
        ("two", "import torch.cuda.amp as amp\namp.GradScaler()\n"),
    ):
        write(tmp_path / name, "m.py", source)
        roots.append(str(tmp_path / name))
    from migrator.reporting.cli import make_report

    text = html.render(make_report(roots))
    assert 'id="fleet-table"' in text
    assert 'id="project-1"' in text and 'id="project-2"' in text


def test_report_paths_survive_a_script_named_file(run_cli, tmp_path):
    write(
        tmp_path, f"{XSS}.py".replace("/", "_"), "import torch\nif torch.version.cuda:\n    pass\n"
    )
    result = run_cli("report", str(tmp_path), "--format", "html")
    assert result.exit_code == 0
    assert "<script>" not in result.output
    assert "&lt;script&gt;" in result.output


def test_docs_state_the_formula():
    text = (ROOT / "docs" / "report.md").read_text(encoding="utf-8")
    assert f"0.5 ^ (penalty / {readiness.HALF_LIFE:g})" in text
    for verdict, (low, high) in readiness.BANDS.items():
        assert f"{verdict.replace('-', ' ')} {low}-{high}" in text
    for line in (*readiness.FORMULA_LINES, *readiness.VERDICT_RULES, *readiness.EFFORT_ASSUMPTIONS):
        assert line in text, line
    assert "## What the score does not know" in text


def test_every_template_renders_without_undefined_names(tmp_path):
    empty = readiness.build_report([("empty", ScanResult(str(tmp_path), []))])
    assert "No findings." in html.render(empty)
    assert "No findings." in markdown.render(empty)
    jsonschema.validate(report_json.report_dict(empty), SCHEMA)
    assert Path(html.TEMPLATES, "report.html.j2").is_file()


def test_markdown_tables_parse_as_gfm_tables():
    from markdown_it import MarkdownIt

    from migrator.reporting.cli import make_report

    text = markdown.render(
        make_report([str(FIXTURES / "llm_app"), str(FIXTURES / "llm_app_incomplete")])
    )
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    separators = [line for line in text.splitlines() if line.startswith("|---")]
    assert separators and rendered.count("<table") == len(separators)
    assert rendered.count("<details") == rendered.count("</details>")
    assert len(text) < 65_536 * 2  # two projects, each within GitHub's comment limit


def test_score_colour_follows_the_verdict_band():
    expected = {
        readiness.Verdict.READY: html.COLOURS["safe"],
        readiness.Verdict.NEEDS_WORK: html.COLOURS["unsafe"],
        readiness.Verdict.BLOCKED: html.COLOURS["blocker"],
    }
    for verdict, colour in expected.items():
        for penalty in (0.0, 5.0, 50.0, 500.0):
            assert html.score_colour(readiness.score_from_penalty(penalty, verdict)) == colour


def test_html_reports_share_one_compiled_template_and_render_the_same() -> None:
    """Compiling the template costs more than a small project's scan: ``render`` compiles it
    once per process; ``environment()`` still gives callers a fresh environment to extend."""
    assert html.environment() is not html.environment()
    shared = html._shared_environment()
    assert shared is html._shared_environment()
    first = shared.get_template("report.html.j2")
    assert shared.get_template("report.html.j2") is first
