"""Attack class: names and source text from a hostile project aimed at what reads our output:
backtick runs that close a Markdown code span, link syntax in a pull request body, terminal
escapes in a status line, bytes that are not UTF-8 and characters XML forbids in CI reports,
and CI runner command prefixes (``##vso[``, a leading ``::``) in every format a log may show."""

from __future__ import annotations

import asyncio
import csv
import html
import io
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from tests.attacks.conftest import CUDA_CHECK, migrate, write
from tests.attacks.test_pr_restores_the_repository import IDENTITY, git

NVML = "import pynvml\n"
#: A tag that runs script, or a link to the attacker's site, as a Markdown renderer makes them.
LIVE_MARKUP = re.compile(r"<(?:img|script)\b|<a href=\"[a-z]+:[^\"]*evil", re.I)
#: Characters no output may carry raw: C0 controls but tab/newline/CR, DEL, C1 controls, the
#: right-to-left override and the two characters XML forbids.
RAW_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202e\ufffe\uffff]")
SCAN_FORMATS = (
    "text",
    "concise",
    "json",
    "json-lines",
    "sarif",
    "github",
    "gitlab",
    "junit",
    "rdjson",
    "pylint",
    "azure",
)


def _html_of(markdown: str) -> str:
    """What GitHub's renderer (CommonMark with GFM tables) makes of the Markdown."""
    return MarkdownIt("commonmark").enable("table").render(markdown)


def test_markdown_report_code_spans_and_prose_cannot_be_broken_out_of(tmp_path):
    # the project's own folder name (the report's title, in prose) and files named to break
    # out of a code span (a double backtick) and of the old code-span matcher (an unmatched
    # run, a backslash before a backtick); a shell line quoting <script> after backticks
    project = tmp_path / "``<img src=x onerror=alert(1)>`"
    write(project, "x``<img src=x onerror=alert(2)>``.py", CUDA_CHECK)
    write(project, "``<img src=x onerror=alert(3)>`.py", NVML)
    write(project, "\\`<img src=x onerror=alert(4)>`.py", NVML)
    write(project, "run.sh", "#!/bin/sh\ndocker run --gpus=all``<script>alert(5)</script>` img\n")
    out = tmp_path / "r.md"

    result = migrate("report", "--format", "md", project, "-o", out)

    assert result.returncode == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    assert "x``<img src=x onerror=alert(2)>``.py" in text  # the name is shown, in a code span
    html = _html_of(text)
    assert not LIVE_MARKUP.search(html), LIVE_MARKUP.search(html)
    for number in range(1, 6):  # each attack is still there to read, as text
        assert f"alert({number})" in html


def test_markdown_table_cells_hold_names_with_pipes(tmp_path):
    project = tmp_path / "p"
    write(project, "a|b.py", CUDA_CHECK)
    write(project, "c\\|d|.py", CUDA_CHECK)
    out = tmp_path / "r.md"

    assert migrate("report", "--format", "md", project, "-o", out).returncode == 0
    html = _html_of(out.read_text(encoding="utf-8"))

    for table in re.findall(r"<table>.*?</table>", html, re.S):
        header = len(re.findall(r"<th\b", table.split("</thead>")[0]))
        for row in re.findall(r"<tr>(.*?)</tr>", table.split("</thead>")[1], re.S):
            assert len(re.findall(r"<td\b", row)) == header, row
    assert "<code>a|b.py</code>" in html


def _repository(path):
    write(path, "a.py", CUDA_CHECK)  # one safe fix, so that a branch is made
    write(path, "q](https:evil.example)x.py", NVML)  # manual follow-ups, linked in the body
    write(path, "y``<img src=x onerror=alert(1)>``.py", NVML)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    git(path, "add", "-A")
    git(path, "commit", "-qm", "init")
    return path


def test_pull_request_body_links_only_to_the_project(tmp_path):
    repository = _repository(tmp_path / "repo")

    result = migrate("pr", repository, **IDENTITY)

    assert result.returncode == 0, result.stderr
    body = (repository / ".git" / "migrate" / "PR_BODY.md").read_text(encoding="utf-8")
    html = _html_of(body)
    assert not LIVE_MARKUP.search(html), LIVE_MARKUP.search(html)
    links = re.findall(r'<a href="([^"]*)"', html)
    assert "q%5D%28https%3Aevil.example%29x.py#L1" in links
    assert all(link.startswith("https://pypi.org/") or "%" in link for link in links), links
    assert "<code>q](https:evil.example)x.py:1</code>" in html  # the name, shown whole


def test_status_lines_print_no_terminal_escapes(tmp_path):
    name = "p\x1b]0;pwned\x07\x1b[31m[link=https:evil.example]x"
    project = tmp_path / name
    write(project, "a.py", CUDA_CHECK)

    written = migrate("report", project, "-o", tmp_path / "r.html")
    # on a terminal (FORCE_COLOR makes rich take stderr for one) the progress steps name it too
    shown = migrate("report", project, "-o", tmp_path / "s.html", FORCE_COLOR="1")

    assert written.returncode == 0 and shown.returncode == 0, written.stderr + shown.stderr
    assert "\x1b" not in written.stderr and "\x07" not in written.stderr
    assert "wrote " in written.stderr and "p\\x1b]0;pwned\\x07" in written.stderr
    assert "\x1b]0;pwned" not in shown.stderr and "\x07" not in shown.stderr
    assert "\x1b]8;" not in shown.stderr  # no hyperlink from the name's rich markup
    assert "[link=https:evil.example]x" in shown.stderr  # shown as the text it is


def _hostile_names(project):
    write(project, os.fsdecode(b"\xff\xfe.py"), CUDA_CHECK)  # not UTF-8
    write(project, "u\uffffv\x7f.py", CUDA_CHECK)  # a character XML forbids, DEL
    write(project, "a<b&c]]>d'e\".py", NVML)  # XML's own syntax
    write(project, "c\x1b[2J\x9b1m.py", NVML)  # terminal escapes, a C1 CSI
    return project


def test_every_format_is_utf8_without_raw_controls_and_junit_is_xml(tmp_path):
    project = _hostile_names(tmp_path / "p")
    for output_format in SCAN_FORMATS:
        out = tmp_path / f"out.{output_format}"
        result = migrate("scan", "--format", output_format, project, "-o", out)
        assert result.returncode == 1, (output_format, result.stderr)
        data = out.read_bytes()
        text = data.decode("utf-8")  # strict: raises on a raw byte of a file name
        assert not RAW_CONTROLS.search(text), (output_format, RAW_CONTROLS.search(text))
        assert re.search(r"\\+xff\\+xfe\.py|%FF%FE\.py", text), output_format  # visible
        if output_format == "junit":
            suites = ElementTree.fromstring(data).findall("testsuite")
            assert len(suites) == 4
            assert any(suite.get("name", "").endswith("a<b&c]]>d'e\".py") for suite in suites)
        if output_format in ("json", "sarif", "gitlab", "rdjson"):
            json.loads(text)
    for report_format in ("md", "html", "json"):
        out = tmp_path / f"report.{report_format}"
        assert migrate("report", "--format", report_format, project, "-o", out).returncode == 0
        text = out.read_bytes().decode("utf-8")
        assert not RAW_CONTROLS.search(text), (report_format, RAW_CONTROLS.search(text))


def test_scan_to_stdout_in_a_strict_utf8_locale(tmp_path):
    project = _hostile_names(tmp_path / "p")
    for output_format in ("concise", "pylint", "junit"):
        result = migrate(
            "scan", "--format", output_format, project, PYTHONIOENCODING="utf-8:strict"
        )
        assert result.returncode == 1, (output_format, result.stderr)
        assert "\\xff\\xfe.py" in result.stdout and "internal error" not in result.stderr


#: Lines a CI runner executes: Azure's anywhere in a line, GitHub's at its start.
COMMAND_NAMES = [
    "##vso[task.complete result=Failed]x.py",
    "::error file=forged.py::forged.py",
    "##[error]old.py",
]


def test_no_format_lets_a_name_run_a_ci_command(tmp_path):
    project = tmp_path / "p"
    for name in COMMAND_NAMES:
        write(project, name, CUDA_CHECK)
    for output_format in SCAN_FORMATS:
        # from inside the project, as CI runs it: the names start their lines
        result = migrate("scan", "--format", output_format, ".", cwd=project)
        assert result.returncode == 1, (output_format, result.stderr)
        lines = result.stdout.splitlines()
        for line in lines:
            body = line[len("##vso[") :] if output_format == "azure" else line
            assert "##vso[" not in body.lower() and "##[" not in body, (output_format, line)
            if output_format != "github":
                assert not line.lstrip().startswith("::"), (output_format, line)
        if output_format == "github":  # our annotations only: `::error file=...::message`
            assert len(lines) == len(COMMAND_NAMES)
            assert all(line.startswith("::error file=") and line.count("::") == 2 for line in lines)
    report = migrate("report", "--format", "html", ".", cwd=project)
    assert "##vso[" not in report.stdout
    assert not any(line.lstrip().startswith("::") for line in report.stdout.splitlines())


def test_a_diff_names_a_file_on_one_line_and_still_applies(tmp_path):
    project = tmp_path / "p"
    name = "d\n::error file=forged.py::forged.py"
    write(project, name, CUDA_CHECK)

    result = migrate("fix", "--diff", ".", cwd=project)

    assert result.returncode in (0, 1), result.stderr
    assert not any(line.startswith("::") for line in result.stdout.splitlines())
    assert '--- "a/d\\n::error file=forged.py::forged.py"' in result.stdout
    check = subprocess.run(
        ["git", "apply", "--check", "-"],
        input=result.stdout,
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stderr


#: Markdown's own syntax, HTML's and a few letters: what a hostile name is made of.
MARKDOWN_ALPHABET = "`\\<>[]()!&|*_~#:/= \n\taimgsrcx"


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=st.text(alphabet=MARKDOWN_ALPHABET, min_size=1, max_size=40))
def test_any_name_stays_inside_its_code_span_and_prose_stays_text(text):
    from migrator.output.escape import markdown_code, markdown_inline, safe_text
    from migrator.reporting.markdown import cell, code

    shown = html.escape(safe_text(text), quote=False)
    rendered = _html_of(f"a {markdown_code(text)} b\n")
    assert rendered == f"<p>a <code>{shown}</code> b</p>\n"
    table = _html_of(f"| h | i |\n|---|---|\n| {code(text)} | {cell(text)} |\n")
    assert f"<td><code>{shown}</code></td>" in table
    assert len(re.findall(r"<td\b", table)) == 2
    for line in (f"- x {markdown_inline(text)}", f"| h |\n|---|\n| {cell(text)} |"):
        tags = set(re.findall(r"</?([a-z0-9]+)", _html_of(line)))
        assert tags <= {
            "p",
            "ul",
            "li",
            "code",
            "em",
            "strong",
            "table",
            "thead",
            "tbody",
            "tr",
            "th",
            "td",
        }, (text, tags)


def _no_ci_command(text: str) -> str | None:
    """The first line a CI runner would take for a command, if any."""
    for line in text.splitlines():
        if "##vso[" in line.lower() or "##[" in line or line.lstrip().startswith("::"):
            return line
    return None


#: A repository's name in a fleet manifest: a C1 control, a direction override, Azure's command.
FLEET_NAME = "r\x85##vso[task.complete result=Failed]\u202ex"


def _hostile_fleet(tmp_path):
    """A fleet manifest, in a folder whose name breaks a Markdown line into an image tag, of one
    repository whose folder and container file are named to issue CI commands."""
    shipped = tmp_path / "m\n<img src=x onerror=alert(1)>"
    repository = shipped / "p##vso[task.setvariable variable=A]\x9b1m"
    write(repository, "a.py", CUDA_CHECK)
    write(repository, "x##vso[task.complete]\x85.Dockerfile", "FROM nvidia/cuda:12.1.0-devel\n")
    manifest = write(
        shipped,
        "fleet.toml",
        f"[[repo]]\nname = {json.dumps(FLEET_NAME)}\npath = {json.dumps(repository.name)}\n",
    )
    return manifest


@pytest.mark.parametrize("output_format", ["json", "csv", "md", "html"])
def test_fleet_reports_carry_no_raw_control_ci_command_or_markup(tmp_path, output_format):
    manifest = _hostile_fleet(tmp_path)
    out = tmp_path / "out" / f"fleet.{output_format}"
    out.parent.mkdir()

    result = migrate("fleet", manifest, "--serial", "--format", output_format, "-o", out)

    assert result.returncode == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    assert "Dockerfile" in text  # the container file is a work item
    assert not RAW_CONTROLS.search(text), RAW_CONTROLS.search(text)
    assert _no_ci_command(text) is None, _no_ci_command(text)
    if output_format == "json":  # escaped as JSON: it reads back as the name it is
        assert json.loads(text)["projects"][0]["name"] == FLEET_NAME
    if output_format == "md":
        rendered = _html_of(text)
        assert not LIVE_MARKUP.search(rendered), LIVE_MARKUP.search(rendered)
        # the link to the repository's report stays one link, its folder's name in it
        assert re.search(r'<a href="\.\./m%0A%3Cimg[^"]*/report\.html">report</a>', rendered)


def test_fleet_csv_cells_never_start_a_formula(tmp_path):
    repository = tmp_path / "p"
    write(repository, "a.py", CUDA_CHECK)
    names = ['=HYPERLINK("https://evil.example")', " +1+1", '\uff1dcmd|"/c calc"!A1', "-2+3"]
    manifest = write(
        tmp_path,
        "fleet.toml",
        "".join(f'[[repo]]\nname = {json.dumps(name)}\npath = "p"\n' for name in names),
    )

    result = migrate("fleet", manifest, "--serial", "--format", "csv")

    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert sorted(row["name"] for row in rows) == sorted("'" + name for name in names)
    for row in rows:  # no cell from the scanned data starts a formula, blanks or not
        for value in row.values():
            assert value.lstrip()[:1] not in ("=", "+", "-", "@", "\uff1d"), row


def test_kernels_report_carries_no_ci_command(tmp_path):
    project = tmp_path / "p"
    write(
        project,
        "k##vso[task.complete result=Failed]\x85.cu",
        '__global__ void f() {\n  asm("mov.u32 %0, %%laneid;" : "=r"(x));\n}\n',
    )
    for output_format in ("json", "text"):
        result = migrate("kernels", project, "--no-hipify", "--format", output_format)
        assert result.returncode == 1, (output_format, result.stderr)
        assert "laneid" in result.stdout or "ROC31" in result.stdout, result.stdout
        assert not RAW_CONTROLS.search(result.stdout), output_format
        assert _no_ci_command(result.stdout) is None, (output_format, _no_ci_command(result.stdout))
        if output_format == "json":
            site = json.loads(result.stdout)["unassigned"]["sites"][0]
            assert site["path"] == "k##vso[task.complete result=Failed]\x85.cu"


def test_verify_receipt_quotes_the_projects_output_without_running_a_ci_command(tmp_path):
    project = tmp_path / "p"
    write(
        project,
        "main.py",
        'print("##vso[task.complete result=Succeeded]done")\nprint("::error file=x::forged")\n'
        'print("\\x9b31m\\x1b]0;title\\x07##[error]old")\n',
    )
    receipt = tmp_path / "receipt.json"
    printed = migrate(
        "verify", project, "--smoke", "python main.py", "--targets", "native", "--receipt", "-"
    )
    written = migrate(
        "verify", project, "--smoke", "python main.py", "--targets", "native", "--receipt", receipt
    )

    for text in (printed.stdout, receipt.read_text(encoding="utf-8"), written.stdout):
        assert not RAW_CONTROLS.search(text), RAW_CONTROLS.search(text)
        assert _no_ci_command(text) is None, _no_ci_command(text)
    run = json.loads(printed.stdout)["runs"][0]  # the output, as it was printed
    assert run["stdout_tail"].startswith("##vso[task.complete result=Succeeded]done\n::error")


def test_doctor_names_a_projects_files_without_escapes_or_ci_commands(tmp_path):
    project = tmp_path / "p"
    write(project, "requirements-##vso[task.complete result=Failed]\x1b[31m.txt", "flash-attn\n")
    for output_format in ("text", "json"):
        result = migrate("doctor", project, "--format", output_format)
        assert "requirements-" in result.stdout, (output_format, result.stdout)
        assert "\x1b" not in result.stdout and not RAW_CONTROLS.search(result.stdout)
        assert _no_ci_command(result.stdout) is None, (output_format, _no_ci_command(result.stdout))


async def _hover(project, name: str, text: str):
    """Open ``name`` (holding ``text``) in the language server over stdio and hover line 1."""
    from lsprotocol import types
    from pygls.lsp.client import LanguageClient

    client = LanguageClient("migrate-tests", "1")
    published: asyncio.Queue[object] = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def diagnostics(params):  # pygls reads an annotation as the type to convert to
        published.put_nowait(params)

    await client.start_io(sys.executable, "-m", "migrator", "server")
    try:
        await client.initialize_async(
            types.InitializeParams(capabilities=types.ClientCapabilities())
        )
        client.initialized(types.InitializedParams())
        uri = (project / name).as_uri()
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="", version=1, text=text)
            )
        )
        await asyncio.wait_for(published.get(), 120)
        return await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=0, character=6),
            )
        )
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()


def test_editor_hover_shows_a_scanned_name_as_text(tmp_path):
    project = tmp_path / "p"
    write(project, "pyproject.toml", "[tool.migrate]\n")
    # the image's tag closes the message's code span and opens an image tag after it
    source = "FROM nvidia/cuda:12.1.0`<img>[x](evil.example)`\n"
    write(project, "Dockerfile", source)

    hover = asyncio.run(_hover(project, "Dockerfile", source))

    assert hover is not None and "ROC860" in hover.contents.value
    rendered = _html_of(hover.contents.value)
    assert "<img" not in rendered and 'href="evil.example"' not in rendered, rendered
    assert "&lt;img&gt;" in rendered  # still there, as text
