"""The HTML report of fixtures/llm_app renders in a real headless Chromium: the rendered DOM has
the score, blockers, dependency table, target table and SVG charts, and a screenshot is kept as
a test artefact (artifacts/report.png, gitignored).

Install Chromium on Debian with ``apt-get update && apt-get install -y chromium``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT

ARTIFACTS = ROOT / "artifacts"
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


def chromium() -> str:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    pytest.skip(
        "Chromium is not installed (apt-get update && apt-get install -y chromium); "
        "the HTML report was not checked in a browser"
    )


def browse(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [binary, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "HOME": str(profile)},
    )


#: One worker runs the module, so its module-scoped fixtures are made once (`--dist loadgroup`).
pytestmark = pytest.mark.xdist_group("test_report_chromium")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    binary = chromium()
    from click.testing import CliRunner

    from migrator.cli import cli

    work = tmp_path_factory.mktemp("chromium")
    page = work / "report.html"
    result = CliRunner().invoke(
        cli, ["report", str(FIXTURES / "llm_app"), "--format", "html", "--output", str(page)]
    )
    assert result.exit_code == 0, result.output
    dom = browse(binary, work / "profile-dom", "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    ARTIFACTS.mkdir(exist_ok=True)
    screenshot = ARTIFACTS / "report.png"
    screenshot.unlink(missing_ok=True)
    shot = browse(
        binary,
        work / "profile-shot",
        f"--screenshot={screenshot}",
        "--window-size=1280,2000",
        "--hide-scrollbars",
        page.as_uri(),
    )
    assert shot.returncode == 0, shot.stderr[-2000:]
    shutil.copyfile(page, ARTIFACTS / "report.html")
    return dom.stdout, screenshot


def test_dom_has_score_blockers_tables_and_charts(rendered):
    dom, _ = rendered
    assert re.search(r'class="score">\d{1,3}</strong>', dom)
    # the fixture needs work: nothing blocks it, so no heading may speak of blockers
    assert re.search(r"verdict: <span class=\"verdict needs-work\">", dom)
    assert "<h3>Manual work</h3>" in dom and "Blockers and manual work" not in dom
    assert 'id="project-1-dependency-table"' in dom
    assert 'id="project-1-target-table"' in dom
    for gfx in ("gfx942", "gfx90a", "gfx950", "gfx1100"):
        assert gfx in dom
    assert dom.count("<svg") >= 2
    assert 'class="chart gauge"' in dom
    assert "<rect" in dom and "<path" in dom
    assert "How the score is computed" in dom


def test_no_script_ran_and_nothing_was_fetched(rendered):
    dom, _ = rendered
    assert "<script" not in dom.lower()
    assert not re.search(r'\b(src|srcset)="', dom)


def test_screenshot_is_a_png(rendered):
    _, screenshot = rendered
    data = screenshot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) > 20_000  # a blank page compresses to a few kilobytes
