"""Attack class: control characters, line breaks and bidirectional overrides in file names,
aimed at Markdown renderers, terminals, SARIF viewers and GitHub annotations."""

from __future__ import annotations

import json

from tests.attacks.conftest import AMP, CUDA_CHECK, migrate, write

NAMES = [
    "x`\r`<img src=x onerror=alert(1)>.py",  # CR ends a Markdown code span: raw HTML follows
    "b\x1b[31mred\x1b]8;;http:evil\x07.py",  # terminal colour and hyperlink escapes
    "c\u202eyp.py",  # right-to-left override: shows as c‮yp.py reversed
    "d\n::error file=forged.py::forged.py",  # a newline that forges a CI annotation
]
CONTROLS = ["\r", "\x1b", "\x07", "\u202e"]


def _project(tmp_path):
    for name in NAMES:
        write(tmp_path, name, AMP + CUDA_CHECK)
    return tmp_path


def test_markdown_report(tmp_path):
    project = _project(tmp_path / "p")
    out = tmp_path / "r.md"
    result = migrate("report", project, "--format", "md", "-o", out)
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    for control in CONTROLS:
        assert control not in text
    assert "x`\\x0d`<img src=x onerror=alert(1)>.py" in text  # shown, inside a code span
    for line in text.splitlines():  # never a raw tag outside a code span
        assert not line.startswith("<img") and not line.startswith("::error")


def test_text_github_and_sarif(tmp_path):
    project = _project(tmp_path / "p")
    for output_format in ("text", "github", "sarif"):
        result = migrate("scan", "--format", output_format, project)
        for control in CONTROLS:
            assert control not in result.stdout, (output_format, control)
        lines = result.stdout.splitlines()
        assert not any(line.startswith("::error file=forged.py") for line in lines)
        if output_format == "github":
            assert len(lines) == len(NAMES)  # one annotation per finding, no forged ones
        if output_format == "sarif":
            uris = sorted(
                r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                for r in json.loads(result.stdout)["runs"][0]["results"]
            )
            assert "x%60%0D%60%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E.py" in uris
