"""The project's formatter (``migrator.engine.formatter``): detected from CI commands, pre-commit
hooks, Makefiles and configuration, and run by ``fix`` on the rewritten lines only (real ruff)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from migrator.engine.formatter import _within, detect_formatter, executable, touched_ranges
from tests.conftest import write

WORKFLOW = """\
name: lint
on: [push]
jobs:
  style:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Check the project's formatting
        run: |
          pip install ruff black
          ruff format --check --diff --line-length 60 pkg
"""

SOURCE = """\
import torch
import torch.nn.functional as F


def unrelated( a,b ):
    return {'a':a,'b':b}


def attend(q, k, v):
    with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):
        return F.scaled_dot_product_attention(q, k, v)
"""

# ruff lays the call out as its check wants at 60 columns; `unrelated` (not formatter-clean,
# not rewritten) keeps its bytes
FIXED = """\
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def unrelated( a,b ):
    return {'a':a,'b':b}


def attend(q, k, v):
    with sdpa_kernel(
        [
            SDPBackend.FLASH_ATTENTION,
            SDPBackend.CUDNN_ATTENTION,
        ]
    ):
        return F.scaled_dot_product_attention(q, k, v)
"""


def _project(root, workflow: str = WORKFLOW) -> None:
    write(root, ".github/workflows/lint.yml", workflow)
    write(root, "requirements.txt", "torch>=2.4\n")
    write(root, "pkg/attn.py", SOURCE)


def _ruff_diff(root, relative: str) -> str:
    """What `ruff format --diff --line-length 60` would change in one file (the CI check)."""
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--diff", "--line-length", "60", relative],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout


def test_settings_given_only_on_the_ci_command_line_are_found(tmp_path):
    _project(tmp_path)
    found = detect_formatter(tmp_path)
    assert found is not None
    assert (found.tool, found.source) == ("ruff", ".github/workflows/lint.yml")
    assert (found.options, found.line_length, found.paths) == (
        ("--line-length", "60"),
        60,
        ("pkg",),
    )
    assert found.covers("pkg/attn.py") and not found.covers("scripts/run.py")


def test_fix_formats_the_rewritten_lines_as_the_ci_check_wants_and_nothing_else(tmp_path, run_cli):
    _project(tmp_path)
    original_check = _ruff_diff(tmp_path, "pkg/attn.py")
    assert "def unrelated(a, b):" in original_check  # the file was not formatter-clean before
    result = run_cli("fix", "--select", "ROC150", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "pkg/attn.py").read_text() == FIXED
    # the only change ruff's check still asks for is the one it asked for before the fix
    after = _ruff_diff(tmp_path, "pkg/attn.py")
    changed = [line for line in after.splitlines() if line[:1] in "+-" and line[:3] not in "+++---"]
    assert changed == [
        "-def unrelated( a,b ):",
        "-    return {'a':a,'b':b}",
        "+def unrelated(a, b):",
        '+    return {"a": a, "b": b}',
    ]
    assert "formatter" not in result.output


def test_without_the_formatter_the_line_length_from_ci_still_holds(tmp_path, run_cli):
    # a formatter `fix` never runs (yapf): the CI line length withholds the long rewrite, and
    # fix names the command to run on what it did fix
    yapf = 'yapf --diff --recursive --style "{based_on_style: pep8, column_limit: 60}" pkg'
    _project(tmp_path, WORKFLOW.replace("ruff format --check --diff --line-length 60 pkg", yapf))
    assert detect_formatter(tmp_path).line_length == 60
    result = run_cli("fix", "--select", "ROC150", str(tmp_path))
    assert (tmp_path / "pkg/attn.py").read_text() == SOURCE
    assert "not fixed" in result.output
    write(tmp_path, "pkg/short.py", "import torch\nwith torch.cuda.amp.autocast():\n    pass\n")
    result = run_cli("fix", "--select", "ROC520", str(tmp_path))
    assert (
        "formatter yapf (from .github/workflows/lint.yml) not run by fix: run `yapf --style {based_on_style: pep8, column_limit: 60} FILES` on the 1 fixed file(s)"
    ) in " ".join(result.output.split())


def test_a_formatter_that_refuses_its_settings_leaves_the_rewrite_as_fix_made_it(tmp_path, run_cli):
    _project(tmp_path, WORKFLOW.replace("--line-length 60", '--config "no-such-key=1"'))
    write(tmp_path, "pkg/short.py", "import torch\nwith torch.cuda.amp.autocast( ):\n    x=1\n")
    result = run_cli("fix", "--select", "ROC520", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "pkg/short.py").read_text() == (
        'import torch\nwith torch.amp.autocast( "cuda"):\n    x=1\n'
    )


def test_files_outside_the_checked_paths_are_not_formatted(tmp_path, run_cli):
    _project(tmp_path)
    write(
        tmp_path,
        "scripts/run.py",
        "import torch\nwith torch.cuda.amp.autocast(enabled = True):\n    pass\n",
    )
    run_cli("fix", "--select", "ROC520", str(tmp_path))
    assert (tmp_path / "scripts/run.py").read_text() == (
        'import torch\nwith torch.amp.autocast("cuda", enabled = True):\n    pass\n'
    )


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {
                ".pre-commit-config.yaml": (
                    "repos:\n- repo: https://github.com/psf/black\n  rev: 24.1.0\n  hooks:\n"
                    "  - id: black\n    args: [--line-length=119, -S]\n    exclude: ^vendor/\n"
                )
            },
            ("black", ".pre-commit-config.yaml", ("--line-length=119", "-S"), 119),
        ),
        (
            {"Makefile": "style:\n\t@python -m black -l 100 src tests\n\truff check src\n"},
            ("black", "Makefile", ("-l", "100"), 100),
        ),
        (
            {"tox.ini": "[testenv:lint]\ncommands =\n    black --check -l 99 .\n"},
            ("black", "tox.ini", ("-l", "99"), 99),
        ),
        (
            {"pyproject.toml": "[tool.ruff]\nline-length = 110\n[tool.ruff.format]\n"},
            ("ruff", "pyproject.toml", (), 110),
        ),
        (
            # CI runs the check with no options: the configured line length is the one
            {
                "pyproject.toml": "[tool.black]\nline-length = 79\n",
                ".github/workflows/lint.yml": "steps:\n  - run: black --check --diff .\n",
            },
            ("black", ".github/workflows/lint.yml", (), 79),
        ),
        ({"pyproject.toml": "[tool.ruff]\nline-length = 110\n"}, None),  # ruff's linter only
        ({".github/workflows/ci.yml": "steps:\n  - run: pip install black ruff\n"}, None),
    ],
)
def test_detection(tmp_path, files, expected):
    for relative, text in files.items():
        write(tmp_path, relative, text)
    found = detect_formatter(tmp_path)
    got = None if found is None else (found.tool, found.source, found.options, found.line_length)
    assert got == expected


def test_pre_commit_exclude_and_ci_exclude_limit_what_is_checked(tmp_path):
    write(
        tmp_path,
        ".pre-commit-config.yaml",
        "repos:\n- repo: r\n  hooks:\n  - id: ruff-format\n    exclude: ^vendor/\n",
    )
    found = detect_formatter(tmp_path)
    assert found is not None and not found.covers("vendor/x.py") and found.covers("src/x.py")
    write(
        tmp_path,
        ".github/workflows/ci.yml",
        'steps:\n  - run: ruff format --check src/ --exclude "src/a.py,src/b.py"\n',
    )
    found = detect_formatter(tmp_path)
    assert found is not None and found.excluded == ("src/a.py", "src/b.py")
    assert found.covers("src/c.py") and not found.covers("src/a.py")


def test_touched_ranges_merge_neighbours_and_take_the_line_after_a_removal():
    old = "a\nb\nc\nd\ne\n"
    new = "a\nB\nC\nd\nx\ny\n"
    assert touched_ranges(old, new) == [(2, 3), (5, 6)]
    assert touched_ranges("a\nb\nc\n", "a\nc\n") == [(2, 2)]
    assert touched_ranges("a\nb\nc\n", "a\nb\n") == [(2, 2)]


def test_a_removed_import_leaves_no_blank_line_at_the_top_of_its_block(tmp_path, run_cli):
    # ROC503 removes `import apex` from the top of the `if` block; ruff's check wants no blank
    # line left there, and the badly formatted statement after the block keeps its bytes
    write(tmp_path, "pyproject.toml", "[tool.ruff.format]\n")
    source = (
        "import torch.nn as nn\n\n\ndef build(model, sync):\n    if sync:\n        import apex\n\n"
        "        model = apex.parallel.convert_syncbn_model(model)\n    x = {1:2}\n"
        "    return model\n"
    )
    write(tmp_path, "train.py", source)
    result = run_cli("fix", "--unsafe-fixes", "--select", "ROC503", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "train.py").read_text() == (
        "import torch.nn as nn\n\n\ndef build(model, sync):\n    if sync:\n"
        "        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)\n    x = {1:2}\n"
        "    return model\n"
    )


def test_ruff_is_run_from_this_interpreters_environment():
    # the program pip put beside this interpreter, by absolute path: never `python -m ruff`,
    # which would put the working directory (a project's `ruff/` folder) first on sys.path
    assert executable("ruff") == [str(Path(sys.executable).parent / "ruff")]
    assert executable("yapf") is None  # recognised, never run


def test_black_with_settings_from_a_makefile_formats_the_rewrite_only(tmp_path, run_cli):
    # black comes with the test extra (scripts/setup.sh): a missing black fails, never skips
    assert executable("black") is not None, "black is missing: run bash scripts/setup.sh"
    write(tmp_path, "Makefile", "style:\n\tblack --check -l 60 -S pkg\n")
    write(tmp_path, "requirements.txt", "torch>=2.4\n")
    write(tmp_path, "pkg/attn.py", SOURCE)
    result = run_cli("fix", "--select", "ROC150", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "pkg/attn.py").read_text() == FIXED


def test_formatter_changes_away_from_the_rewrite_are_dropped():
    # black's --line-ranges also settles the blank lines after a formatted import; those lines
    # were not rewritten, so they keep their bytes
    new = "import a\nimport b\n\n\ndef f( x ):\n    pass\n"
    formatted = "import a\nimport b\n\ndef f( x ):\n    pass\n"
    assert _within(new, formatted, [(2, 2)]) == new
    assert _within("x=1\n\ny=2\n", "x = 1\n\ny = 2\n", [(3, 3)]) == "x=1\n\ny = 2\n"


def test_an_editors_buffer_is_formatted_as_the_project_checks_it(tmp_path):
    from migrator.engine.runner import fix_text
    from migrator.model import Applicability

    _project(tmp_path)
    # ROC150 is hygiene: the editor's fix-all applies it where the project selects it by name
    assert fix_text(tmp_path, "pkg/attn.py", SOURCE.encode(), Applicability.SAFE) == (None, ())
    write(tmp_path, "pyproject.toml", '[tool.migrate]\nselect = ["ROC150"]\n')
    new_text, fixed = fix_text(tmp_path, "pkg/attn.py", SOURCE.encode(), Applicability.SAFE)
    assert new_text == FIXED
    assert [finding.rule for finding in fixed] == ["ROC150"]
