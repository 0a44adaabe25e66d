"""Attack class: make discovery run forever before any file is analysed (the per-file budget
does not cover it). A `.gitignore` pattern that backtracks (`*a*a*a…!`) against a long name,
or a malformed pattern, costs nothing; and discovery has a time budget of its own
(`[tool.migrate] discovery-timeout`): past it the scan stops discovering, says so, and counts
as incomplete."""

from __future__ import annotations

import json

from tests.attacks.conftest import CUDA_CHECK, migrate, write

CLEAN = "x = 1\n"


def test_a_backtracking_gitignore_pattern_costs_nothing(tmp_path):
    write(tmp_path, ".gitignore", "*a*a*a*a*a*a*a*a*a*a*a*a!\nignored_*.py\n")
    long_name = "a" * 240 + ".py"  # within NAME_MAX; matches the pattern up to its last `!`
    write(tmp_path, long_name, CUDA_CHECK)
    write(tmp_path, "a" * 250 + "/b.py", CUDA_CHECK)  # a folder's name is matched too
    write(tmp_path, "ignored_1.py", CUDA_CHECK)  # the other pattern still ignores

    result = migrate("scan", "--format", "json", "--no-cache", tmp_path, cwd=tmp_path, timeout=60)

    paths = {finding["path"] for finding in json.loads(result.stdout)["findings"]}
    assert paths == {long_name, "a" * 250 + "/b.py"}


def test_a_malformed_gitignore_pattern_is_left_out(tmp_path):
    """A pattern git cannot read (a trailing backslash, an unclosed range) matches nothing;
    the others apply."""
    write(tmp_path, ".gitignore", "foo\\\n[a-\nignored_*.py\n")
    write(tmp_path, "a.py", CUDA_CHECK)
    write(tmp_path, "ignored_1.py", CUDA_CHECK)

    result = migrate("scan", "--format", "json", tmp_path, cwd=tmp_path, timeout=60)

    assert "internal error" not in result.stderr
    assert [finding["path"] for finding in json.loads(result.stdout)["findings"]] == ["a.py"]


def test_discovery_past_its_budget_is_an_incomplete_scan(tmp_path):
    for index in range(20):
        write(tmp_path, f"pkg{index}/m.py", CLEAN)
    write(tmp_path, "pyproject.toml", "[tool.migrate]\ndiscovery-timeout = 1e-9\n")

    result = migrate("scan", "--format", "json", tmp_path, cwd=tmp_path, timeout=60)

    failed = json.loads(result.stdout)["files"]["failed"]
    assert len(failed) == 1, failed
    assert failed[0]["reason"].startswith("discovery stopped after the discovery time budget")
    assert "1 file(s) could not be scanned" in result.stderr
    assert result.returncode == 1
    allowed = migrate("scan", "--allow-unscanned", tmp_path, cwd=tmp_path, timeout=60)
    assert allowed.returncode == 0, allowed.stderr


def test_the_discovery_budget_is_checked_like_the_file_budget(tmp_path):
    for value in ("0", "-1", "nan", '"soon"', "1e308"):
        write(tmp_path, "pyproject.toml", f"[tool.migrate]\ndiscovery-timeout = {value}\n")
        result = migrate("scan", tmp_path, cwd=tmp_path, timeout=60)
        assert result.returncode == 2, (value, result.stderr)
        assert "discovery-timeout" in result.stderr and "Traceback" not in result.stderr
