"""Attack class: one file that crashes the native parser (deep nesting) or runs away (a huge
expression) must cost that file only: the rest is scanned, the run ends, the file is listed."""

from __future__ import annotations

import json
import time

from tests.attacks.conftest import AMP, CUDA_CHECK, CUDA_CHECK_FIXED_MARK, migrate, write


def _report(result):
    data = json.loads(result.stdout)
    reasons = {entry["path"]: entry["reason"] for entry in data["files"]["failed"]}
    return [(f["path"], f["line"], f["rule"]) for f in data["findings"]], reasons


def test_deep_nesting_costs_one_file(tmp_path):
    write(tmp_path, "good.py", AMP)
    depth = 2000
    write(tmp_path, "parens.py", "import torch.cuda.amp\nx = " + "(" * depth + "1" + ")" * depth)
    # not brackets: a chain of lambdas also overflows the native parser's stack
    write(tmp_path, "lambdas.py", "import torch.cuda.amp\nx = " + "lambda: " * 20000 + "1\n")

    result = migrate(
        "scan",
        "--min-severity",
        "hygiene",
        "--no-cache",
        "--format",
        "json",
        tmp_path,
        cwd=tmp_path,
    )

    findings, failed = _report(result)
    assert findings == [("good.py", 2, "ROC520")]
    assert failed["parens.py"] == "nested more than 200 levels deep; not parsed"
    assert failed["lambdas.py"] == "analysis crashed (SIGSEGV); file not analysed"
    assert result.returncode == 1


def test_a_runaway_file_is_stopped_by_the_time_budget(tmp_path):
    write(tmp_path, "pyproject.toml", "[tool.migrate]\nfile-timeout = 2\n")
    write(tmp_path, "good.py", AMP)
    # the long expression sits in the statement that holds the trigger, so even a partial parse
    # (only the statements rules can see) has to parse it
    write(
        tmp_path,
        "huge.py",
        "import torch.cuda.amp\nx = torch.cuda.amp.autocast() + " + "+".join(["a"] * 20000) + "\n",
    )

    began = time.monotonic()
    result = migrate(
        "scan",
        "--min-severity",
        "hygiene",
        "--no-cache",
        "--format",
        "json",
        tmp_path,
        cwd=tmp_path,
    )
    elapsed = time.monotonic() - began

    findings, failed = _report(result)
    assert findings == [("good.py", 2, "ROC520")]
    assert failed["huge.py"] == (
        "analysis took longer than the per-file time budget of 2 s; file not analysed"
    )
    assert elapsed < 60  # the old tool needed minutes for this one file


def test_a_crash_in_fix_costs_one_file_and_the_rest_is_written(tmp_path):
    good = write(tmp_path, "good.py", CUDA_CHECK)
    write(tmp_path, "lambdas.py", "import torch.cuda.amp\nx = " + "lambda: " * 20000 + "1\n")

    result = migrate("fix", tmp_path, cwd=tmp_path)

    assert CUDA_CHECK_FIXED_MARK in good.read_text()
    assert "not read lambdas.py: analysis crashed (SIGSEGV)" in result.stderr
    assert "Fixed 1 findings." in result.stderr
    assert result.returncode == 1


def test_a_crash_on_stdin_is_reported_like_a_file(tmp_path):
    """``scan --stdin-filename`` (an editor's lint-on-type integration) analyses in a worker too."""
    import subprocess

    from tests.attacks.conftest import command, environment

    lambdas = "import torch.cuda.amp\nx = " + "lambda: " * 20000 + "1\n"
    result = subprocess.run(
        command("scan", "--format", "json", "--stdin-filename", "lambdas.py", "-"),
        input=lambdas,
        capture_output=True,
        text=True,
        timeout=180,
        env=environment(),
        cwd=tmp_path,
        check=False,
    )
    findings, failed = _report(result)
    assert failed == {"lambdas.py": "analysis crashed (SIGSEGV); file not analysed"}
    assert result.returncode == 1
