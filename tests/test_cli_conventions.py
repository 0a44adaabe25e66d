"""The command-line conventions users bring from ruff (issue #51): output to streams, a missing
path among real ones, configuration flags, file-level suppressions, statistics and SARIF sites.
Each test runs the real command line in a child process."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.attacks.conftest import AMP, CUDA_CHECK, migrate


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MIGRATE_CACHE_DIR", str(tmp_path / "cache"))


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "a.py").write_text(CUDA_CHECK)
    return project


@pytest.mark.parametrize("target", ["/dev/stdout", "-"])
def test_output_to_stdout_by_name(tmp_path, target):
    project = _project(tmp_path)
    result = migrate("scan", project, "--format", "json", "-o", target, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert [f["rule"] for f in json.loads(result.stdout)["findings"]] == ["ROC101"]
    report = migrate("report", project, "--format", "json", "-o", target, cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["projects"][0]["findings"]


def test_output_to_dev_null_is_discarded(tmp_path):
    project = _project(tmp_path)
    result = migrate("scan", project, "--format", "sarif", "-o", "/dev/null", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stdout == "" and "error" not in result.stderr
    report = migrate("report", project, "-o", "/dev/null", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert report.stdout == ""


def test_a_planted_link_to_a_stream_is_still_refused(tmp_path):
    """Only the names the user types mean a stream: a project's symlink to /dev/null or to
    /dev/stdout named like a report is refused as any symlink is."""
    project = _project(tmp_path)
    os.symlink("/dev/null", project / "report.json")
    os.symlink("/dev/stdout", project / "out.json")
    for name in ("report.json", "out.json"):
        result = migrate("scan", project, "--format", "json", "-o", project / name)
        assert result.returncode == 2, result.stdout
        assert "is a symlink; not written through it" in result.stderr
        assert result.stdout == ""


def test_a_missing_path_among_real_ones_is_warned_about_and_the_rest_scanned(tmp_path):
    project = _project(tmp_path)
    (project / "clean.py").write_text("import os\n")
    result = migrate("scan", "proj/a.py", "nope.py", "--format", "concise", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.startswith("proj/a.py:2:4: ROC101 ")
    assert result.stderr.splitlines() == [
        "migrate: warning: path does not exist: nope.py (not scanned; exit 1)"
    ]
    # nothing found in the rest: still exit 1, the scan was not what was asked for
    clean = migrate("scan", "proj/clean.py", "nope.py", "--exit-zero", cwd=tmp_path)
    assert clean.returncode == 1, clean.stdout + clean.stderr
    assert "path does not exist: nope.py" in clean.stderr
    # nothing that exists: a usage error, as before
    alone = migrate("scan", "nope.py", cwd=tmp_path)
    assert alone.returncode == 2
    assert alone.stderr.strip() == "migrate: error: path does not exist: nope.py"


def _codes(result) -> list[str]:
    assert result.returncode in (0, 1), result.stderr
    return sorted(f["rule"] for f in json.loads(result.stdout)["findings"])


def test_a_file_level_suppression_silences_the_file_or_the_codes_it_names(tmp_path):
    """``# migrate: ignore-file`` (ruff's ``# ruff: noqa``) and ``# migrate: ignore-file[CODES]``
    (``# ruff: noqa: CODES``), on a line of their own anywhere in the file; a notebook's in any
    cell; ``fix`` leaves what they silence."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "all.py").write_text("# migrate: ignore-file\n" + CUDA_CHECK + AMP)
    (project / "some.py").write_text(CUDA_CHECK + AMP + "    # migrate: ignore-file[ROC101]\n")
    cells = [
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": source,
        }
        for source in ("# migrate: ignore-file[ROC101]\nimport torch\n", CUDA_CHECK)
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (project / "nb.ipynb").write_text(json.dumps(notebook))
    scan = migrate("scan", ".", "--format", "json", "--select", "ROC101,ROC520", cwd=project)
    found = json.loads(scan.stdout)["findings"]
    assert [(f["path"], f["rule"]) for f in found] == [("some.py", "ROC520")], scan.stdout
    fixed = migrate("fix", project / "some.py", "--diff", "--select", "ROC101")
    assert "torch.version.hip" not in fixed.stdout, fixed.stdout


def test_unused_suppressions_are_reported_in_files_without_cuda_tokens(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "plain.py").write_text("import os\nx = 1  # migrate: ignore[ROC101]\n")
    (project / "whole.py").write_text("# migrate: ignore-file[ROC101]\nimport os\n")
    (project / "used.py").write_text("# migrate: ignore-file\n" + CUDA_CHECK)
    result = migrate("scan", project, "--show-unused-suppressions", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    unused = sorted(line for line in result.stderr.splitlines() if "unused suppression" in line)
    assert unused == [
        "proj/plain.py:2: unused suppression `# migrate: ignore[ROC101]`",
        "proj/whole.py:1: unused suppression `# migrate: ignore-file[ROC101]`",
    ]


APEX_CALLS = (
    "from apex import amp\n\n\ndef train():\n"
    "    amp.initialize(m, o)\n    amp.scale_loss(l, o)\n    amp.master_params(o)\n"
)


def test_statistics_count_sites_and_label_the_problems_they_fold_into(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "train.py").write_text(APEX_CALLS)
    (project / "a.py").write_text(CUDA_CHECK)
    text = migrate("scan", project, "--select", "ROC502,ROC101", "--statistics").stdout
    rows = [line.split("\t") for line in text.splitlines()]
    assert [row[:2] for row in rows] == [["     3", "ROC502"], ["     1", "ROC101"]]
    assert rows[0][2].endswith("(3 sites in 1 problem)") and "problem" not in rows[1][2]
    tally = migrate(
        "scan", project, "--select", "ROC502", "--statistics", "--format", "json"
    ).stdout
    assert json.loads(tally) == [
        {"code": "ROC502", "name": "apex-amp", "count": 3, "problems": 1, "fixable": False}
    ]


def test_sarif_shows_each_site_of_a_folded_problem_as_a_result(tmp_path):
    """Code scanning makes one alert per result: each site is a result with its own
    fingerprint (the baseline's), and the sites of one problem share ``properties.problem``
    and point at each other through related locations."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "train.py").write_text(APEX_CALLS)
    log = json.loads(
        migrate("scan", ".", "--select", "ROC502", "--format", "sarif", cwd=project).stdout
    )
    results = log["runs"][0]["results"]
    lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results]
    assert lines == [5, 6, 7]
    assert len({r["partialFingerprints"]["migrate/v1"] for r in results}) == 3
    assert len({r["properties"]["problem"] for r in results}) == 1
    assert results[1]["message"]["text"].endswith(
        "(site 2 of 3 of this problem; the first is at train.py:5)"
    )
    assert [len(r["relatedLocations"]) for r in results] == [2, 1, 1]
    baseline = tmp_path / "baseline.json"
    migrate("scan", ".", "--select", "ROC502", "--write-baseline", baseline, cwd=project)
    known = {entry["fingerprint"] for entry in json.loads(baseline.read_text())["findings"]}
    assert {r["partialFingerprints"]["migrate/v1"] for r in results} == known


def test_sarif_rule_levels_agree_with_their_results():
    from collections import Counter

    from tests.conftest import FIXTURES

    log = json.loads(migrate("scan", FIXTURES / "llm_app", "--format", "sarif").stdout)
    run = log["runs"][0]
    levels: dict[str, Counter[str]] = {}
    for result in run["results"]:
        levels.setdefault(result["ruleId"], Counter())[result["level"]] += 1
    rank = {"note": 0, "warning": 1, "error": 2}
    for rule in run["tool"]["driver"]["rules"]:
        counted = levels[rule["id"]]
        expected = max(counted, key=lambda level: (counted[level], rank[level]))
        assert rule["defaultConfiguration"]["level"] == expected, (rule["id"], counted)
    assert levels["ROC200"] == Counter({"error": levels["ROC200"].total()})


def _configured(tmp_path: Path) -> Path:
    """A project whose [tool.migrate] excludes legacy/ and ignores ROC101 in quiet.py."""
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "legacy").mkdir()
    (repo / ".git").mkdir()
    (repo / "pyproject.toml").write_text(
        '[tool.migrate]\nexclude = ["legacy/*"]\n\n'
        '[tool.migrate.per-file-ignores]\n"src/quiet.py" = ["ROC101"]\n'
    )
    for name in ("src/loud.py", "src/quiet.py", "legacy/old.py"):
        (repo / name).write_text(CUDA_CHECK)
    return repo


def _paths(result) -> list[str]:
    assert result.returncode in (0, 1), result.stderr
    return sorted(f["path"] for f in json.loads(result.stdout)["findings"])


def test_isolated_ignores_the_projects_configuration(tmp_path):
    repo = _configured(tmp_path)
    assert _paths(migrate("scan", ".", "--format", "json", cwd=repo)) == ["src/loud.py"]
    isolated = migrate("scan", ".", "--format", "json", "--isolated", cwd=repo)
    assert _paths(isolated) == ["legacy/old.py", "src/loud.py", "src/quiet.py"]
    fixed = migrate("fix", ".", "--diff", "--isolated", cwd=repo)
    assert "+++ b/legacy/old.py" in fixed.stdout, fixed.stdout + fixed.stderr


def test_config_names_one_file_for_every_path_or_sets_one_key(tmp_path):
    """As ruff's --config: a pyproject.toml's [tool.migrate] or another TOML file's top level,
    its globs from the current directory, the project's own file not read; or KEY = VALUE over
    the configuration in force. --config FILE with --isolated is a usage error."""
    repo = _configured(tmp_path)
    elsewhere = tmp_path / "migrate.toml"
    elsewhere.write_text('exclude = ["src/*"]\n')
    chosen = migrate("scan", ".", "--format", "json", "--config", elsewhere, cwd=repo)
    assert _paths(chosen) == ["legacy/old.py"]
    other = tmp_path / "other" / "pyproject.toml"
    other.parent.mkdir()
    other.write_text('[tool.migrate]\nselect = ["ROC520"]\n')
    assert _paths(migrate("scan", ".", "--format", "json", "--config", other, cwd=repo)) == []
    setting = migrate("scan", ".", "--format", "json", "--config", "exclude = []", cwd=repo)
    assert _paths(setting) == ["legacy/old.py", "src/loud.py"]  # per-file-ignores still hold
    both = migrate("scan", ".", "--config", elsewhere, "--isolated", cwd=repo)
    assert both.returncode == 2 and len(both.stderr.splitlines()) == 1
    assert "cannot be used with --isolated" in both.stderr
    bad = migrate("scan", ".", "--config", "selekt = []", cwd=repo)
    assert bad.returncode == 2 and "unknown [tool.migrate] keys: selekt" in bad.stderr


def test_show_files_and_show_settings_print_what_a_run_would_use(tmp_path):
    repo = _configured(tmp_path)
    files = migrate("scan", ".", "--show-files", cwd=repo)
    assert files.returncode == 0, files.stderr
    assert files.stdout.splitlines() == [
        str(repo / "pyproject.toml"),
        str(repo / "src" / "loud.py"),
        str(repo / "src" / "quiet.py"),
    ]
    assert migrate("fix", ".", "--show-files", "--isolated", cwd=repo).stdout.splitlines()[0] == (
        str(repo / "legacy" / "old.py")
    )
    settings = migrate("scan", "src/quiet.py", "--show-settings", cwd=repo)
    assert settings.returncode == 0, settings.stderr
    lines = settings.stdout.splitlines()
    assert lines[:3] == [
        f'Resolved settings for: "{repo / "src" / "quiet.py"}"',
        f'Settings path: "{repo / "pyproject.toml"}"',
        f'Project root: "{repo}"',
    ]
    rules = json.loads(next(line for line in lines if line.startswith("rules = "))[8:])
    assert "ROC102" in rules and "ROC101" not in rules  # the file's per-file-ignores applied
    isolated = migrate("scan", "src/quiet.py", "--show-settings", "--isolated", cwd=repo)
    assert "Settings path: none (--isolated)" in isolated.stdout
    assert '"ROC101"' in isolated.stdout


def _on_a_terminal(*args: object, cwd: Path, timeout: float = 300) -> str:
    """What ``migrate ARGS`` writes to stdout when stdout is a pseudo-terminal (stderr apart)."""
    import pty
    import select
    import subprocess
    import time

    from tests.attacks.conftest import command, environment

    master, slave = pty.openpty()
    process = subprocess.Popen(
        command(*args),
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=subprocess.DEVNULL,
        cwd=cwd,
        env=environment(COLUMNS="120", LINES="50", TERM="xterm", NO_COLOR="1"),
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)
    text = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    return re.sub(r"\x1b\[[0-9;]*m", "", text)  # the styles (bold, dim) rich chose


def test_report_on_a_terminal_shows_tables_and_html_goes_to_a_file_or_a_pipe(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "a.py").write_text(CUDA_CHECK)
    # a file name that would be markup for rich and an escape sequence for the terminal
    hostile = "b[bold]\x1b]0;pwned\x07.py"
    (project / hostile).write_text('import torch\nv = torch.version.cuda.split(".")\n')
    shown = _on_a_terminal("report", project, cwd=tmp_path)
    assert "<html" not in shown.lower() and "<!doctype" not in shown.lower()
    assert "ROCm readiness: proj" in shown
    for section in ("Manual work", "Effort:", "Unknowns", "migrate report PATH -o report.html"):
        assert section in shown, shown
    assert len(shown.splitlines()) < 100
    assert "\x1b]0;" not in shown and "b[bold]\\x1b]0;pwned\\x07.py" in shown
    # explicitly HTML on a terminal, and the default to a pipe: the document as before
    assert _on_a_terminal("report", project, "--format", "html", cwd=tmp_path).startswith(
        "<!DOCTYPE html>"
    )
    piped = migrate("report", project, cwd=tmp_path)
    assert piped.returncode == 0 and piped.stdout.startswith("<!DOCTYPE html>")
    text = migrate("report", project, "--format", "text", cwd=tmp_path)
    assert text.stdout.startswith("ROCm readiness: proj") and "\x1b" not in text.stdout


def test_fix_diff_exits_1_while_fixes_are_pending_and_0_when_none_are(tmp_path):
    """As ruff's ``check --diff``: a CI step tells "nothing to fix" from "fixes pending" by the
    exit status alone; the file is never written."""
    project = _project(tmp_path)
    pending = migrate("fix", project, "--diff", cwd=tmp_path)
    assert pending.returncode == 1, pending.stdout + pending.stderr
    assert "+++ b/proj/a.py" in pending.stdout and "Would fix 1 findings." in pending.stderr
    assert (project / "a.py").read_text() == CUDA_CHECK
    assert migrate("fix", project, cwd=tmp_path).returncode == 0  # applied: nothing remains
    clean = migrate("fix", project, "--diff", cwd=tmp_path)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert clean.stdout == ""
