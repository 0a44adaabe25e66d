"""Printed paths open from where the user stands (issue #36): the formats people, terminals and
editors read name files relative to the current directory (absolute outside it), the formats of
code hosts name them from the repository root, and baselines and the cache do not depend on the
current directory."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import write

CUDA_CHECK = "import torch\nif torch.version.cuda:\n    pass\n"
#: The formats whose paths are relative to the current directory.
CWD_FORMATS = ("text", "concise", "json", "json-lines", "junit", "pylint", "azure")
#: The formats whose paths are relative to the repository root.
REPOSITORY_FORMATS = ("github", "sarif", "gitlab", "rdjson")


def printed_paths(output_format: str, output: str) -> list[str]:
    """The file paths a scan's output names, read as its consumer reads them."""
    if output_format == "text":
        return re.findall(r"^\s+(\S+?):\d+:\d+ ROC\d{3} ", output, re.M)
    if output_format == "concise":
        return re.findall(r"^(\S+?):\d+:\d+: ROC\d{3}", output, re.M)
    if output_format == "json":
        return [finding["path"] for finding in json.loads(output)["findings"]]
    if output_format == "json-lines":
        return [json.loads(line)["path"] for line in output.splitlines()]
    if output_format == "junit":
        root = ET.fromstring(output)
        suites = [suite.get("name") or "" for suite in root.iter("testsuite")]
        failures = [(f.text or "").split(":")[0] for f in root.iter("failure")]
        return suites + failures
    if output_format == "pylint":
        return re.findall(r"^(\S+?):\d+: \[", output, re.M)
    if output_format == "azure":
        return re.findall(r"sourcepath=([^;]+);", output)
    if output_format == "github":
        return re.findall(r"file=([^,]+),", output)
    if output_format == "sarif":
        results = json.loads(output)["runs"][0]["results"]
        return [
            location["physicalLocation"]["artifactLocation"]["uri"]
            for result in results
            for location in result["locations"]
        ]
    if output_format == "gitlab":
        return [issue["location"]["path"] for issue in json.loads(output)]
    assert output_format == "rdjson"
    return [item["location"]["path"] for item in json.loads(output)["diagnostics"]]


def _scan(run_cli, cwd: Path, output_format: str, *args: str, stdin: str | None = None) -> str:
    result = run_cli("scan", "--no-cache", "--format", output_format, *args, input=stdin, cwd=cwd)
    assert result.exit_code == 1, result.output
    return result.stdout


@pytest.mark.parametrize("output_format", CWD_FORMATS)
def test_a_scanned_folder_prints_paths_from_the_current_directory(tmp_path, run_cli, output_format):
    write(tmp_path, "pkg/a.py", CUDA_CHECK)
    from_parent = printed_paths(output_format, _scan(run_cli, tmp_path, output_format, "pkg"))
    assert from_parent and set(from_parent) == {"pkg/a.py"}
    from_inside = printed_paths(output_format, _scan(run_cli, tmp_path / "pkg", output_format, "."))
    assert from_inside and set(from_inside) == {"a.py"}
    absolute = _scan(run_cli, tmp_path, output_format, str(tmp_path / "pkg"))
    assert set(printed_paths(output_format, absolute)) == {"pkg/a.py"}


@pytest.mark.parametrize("output_format", CWD_FORMATS)
def test_a_file_outside_the_current_directory_is_printed_absolute(tmp_path, run_cli, output_format):
    write(tmp_path, "other/a.py", CUDA_CHECK)
    (tmp_path / "pkg").mkdir()
    output = _scan(run_cli, tmp_path / "pkg", output_format, "../other")
    assert set(printed_paths(output_format, output)) == {(tmp_path / "other/a.py").as_posix()}


@pytest.mark.parametrize("output_format", REPOSITORY_FORMATS)
def test_code_host_formats_name_files_from_the_repository_root_from_any_folder(
    tmp_path, run_cli, output_format
):
    (tmp_path / ".git").mkdir()
    write(tmp_path, "pkg/a.py", CUDA_CHECK)
    folder = tmp_path / "pkg"
    for cwd, target in ((tmp_path, "pkg"), (folder, "."), (tmp_path.parent, str(folder))):
        output = _scan(run_cli, cwd, output_format, target)
        assert set(printed_paths(output_format, output)) == {"pkg/a.py"}, cwd


def test_several_roots_with_the_same_file_names_print_distinct_paths(tmp_path, run_cli):
    write(tmp_path, "one/x.py", CUDA_CHECK)
    write(tmp_path, "two/sub/x.py", CUDA_CHECK)
    paths = printed_paths("json", _scan(run_cli, tmp_path, "json", "one", "two/sub"))
    assert sorted(paths) == ["one/x.py", "two/sub/x.py"]
    paths = printed_paths("concise", _scan(run_cli, tmp_path / "one", "concise", ".", "../two"))
    assert sorted(paths) == [(tmp_path / "two/sub/x.py").as_posix(), "x.py"]


@pytest.mark.parametrize(("folder", "name"), [("", "./pkg/a.py"), ("pkg", "../other/a.py")])
def test_stdin_prints_the_name_as_the_user_gave_it(tmp_path, run_cli, folder, name):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "other").mkdir()
    for output_format in ("concise", "json"):
        output = _scan(
            run_cli, tmp_path / folder, output_format, "--stdin-filename", name, stdin=CUDA_CHECK
        )
        assert printed_paths(output_format, output) == [name]


def test_a_baseline_matches_from_any_folder_of_the_repository(tmp_path, run_cli):
    (tmp_path / ".git").mkdir()
    write(tmp_path, "pkg/a.py", CUDA_CHECK)
    baseline = tmp_path / "baseline.json"
    written = run_cli("scan", ".", "--write-baseline", baseline, cwd=tmp_path)
    assert written.exit_code == 0, written.output
    assert [e["path"] for e in json.loads(baseline.read_text())["findings"]] == ["pkg/a.py"]
    write(tmp_path, "pkg/b.py", CUDA_CHECK)
    for cwd, target in ((tmp_path / "pkg", "."), (tmp_path, "pkg"), (tmp_path.parent, tmp_path)):
        output = _scan(run_cli, cwd, "json", str(target), "--baseline", str(baseline))
        expected = (tmp_path / "pkg" / "b.py").resolve().relative_to(cwd.resolve()).as_posix()
        assert printed_paths("json", output) == [expected], cwd  # only the new one
    # written from a sub-folder, the baseline holds the same repository paths
    again = tmp_path / "again.json"
    assert run_cli("scan", ".", "--write-baseline", again, cwd=tmp_path / "pkg").exit_code == 0
    assert sorted(e["path"] for e in json.loads(again.read_text())["findings"]) == [
        "pkg/a.py",
        "pkg/b.py",
    ]


def test_the_cache_of_a_folder_serves_scans_from_any_current_directory(
    tmp_path, run_cli, monkeypatch
):
    cache = tmp_path / "cache"
    monkeypatch.setenv("MIGRATE_CACHE_DIR", str(cache))
    monkeypatch.delenv("MIGRATE_NO_CACHE", raising=False)
    write(tmp_path, "pkg/a.py", CUDA_CHECK)

    def stored() -> dict[str, tuple[bytes, int]]:
        files = (path for path in cache.rglob("*") if path.is_file())
        return {str(path): (path.read_bytes(), path.stat().st_mtime_ns) for path in files}

    first = run_cli("scan", "--format", "json", "pkg", cwd=tmp_path)
    before = stored()
    assert before
    second = run_cli("scan", "--format", "json", ".", cwd=tmp_path / "pkg")
    assert stored() == before  # read, not rewritten
    assert printed_paths("json", first.stdout) == ["pkg/a.py"]
    assert printed_paths("json", second.stdout) == ["a.py"]


def test_related_sites_and_unused_suppressions_name_files_from_the_current_directory(
    tmp_path, run_cli
):
    calls = "    amp.initialize(m, o)  # migrate: ignore[ROC101]\n    amp.scale_loss(l, o)\n"
    write(tmp_path, "pkg/train.py", "from apex import amp\n\n\ndef train():\n" + calls)
    result = run_cli(
        "scan",
        "--no-cache",
        "--select",
        "ROC502",
        "--format",
        "json",
        "--show-unused-suppressions",
        "pkg",
        cwd=tmp_path,
    )
    [finding] = json.loads(result.stdout)["findings"]
    assert finding["path"] == "pkg/train.py"
    assert [site["path"] for site in finding["related"]] == ["pkg/train.py"]
    assert "pkg/train.py:5: unused suppression `# migrate: ignore[ROC101]`" in result.stderr


def test_fix_names_files_from_the_current_directory(tmp_path, run_cli):
    write(tmp_path, "pkg/a.py", CUDA_CHECK)
    write(tmp_path, "pkg/broken.py", "import torch\nif torch.version.cuda(:\n")
    write(tmp_path, "other/a.py", CUDA_CHECK)
    diff = run_cli("fix", "--diff", "pkg", cwd=tmp_path)
    assert "--- a/pkg/a.py\n+++ b/pkg/a.py\n" in diff.stdout
    assert "not read pkg/broken.py:" in diff.stderr
    inside = run_cli("fix", "--diff", ".", cwd=tmp_path / "pkg")
    assert "--- a/a.py\n+++ b/a.py\n" in inside.stdout
    assert "not read broken.py:" in inside.stderr
    outside = run_cli("fix", "--diff", "../other", cwd=tmp_path / "pkg")
    absolute = (tmp_path / "other/a.py").as_posix()
    assert f"--- {absolute}\n+++ {absolute}\n" in outside.stdout
