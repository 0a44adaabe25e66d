"""Files the user names and files a hostile project plants are read through one read facility
(``migrator.files.sources.read_regular``: regular files only, never a blocking open, size caps) and
parsed with bounds (issue #33): each is a one-line reason, never a hang, a blow-up or a
traceback, and the rest of the run goes on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write


def _migrate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "migrator", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )


def test_a_baseline_that_is_a_fifo_or_a_device_is_refused_at_once(tmp_path):
    write(tmp_path, "app.py", "import pynvml\npynvml.nvmlInit()\n")
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    for name, kind in (("fifo.json", "named pipe"), ("zero.json", "device")):
        done = _migrate("scan", ".", "--baseline", name, cwd=tmp_path)
        assert done.returncode == 2
        assert f"cannot read baseline {name}: not a regular file ({kind})" in done.stderr


def test_an_absurd_file_timeout_is_a_configuration_error(tmp_path):
    write(tmp_path, "app.py", "import torch\n")
    write(tmp_path, "pyproject.toml", "[tool.migrate]\nfile-timeout = 1e308\n")
    done = _migrate("scan", ".", cwd=tmp_path)
    assert done.returncode == 2
    assert "file-timeout must be a positive number of seconds, at most 86400" in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_a_pyproject_nested_50000_deep_fails_alone(tmp_path):
    write(tmp_path, "app.py", "import pynvml\npynvml.nvmlInit()\n")
    write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "x"\nversion = "1"\ndependencies = ' + "[" * 50000 + "]" * 50000 + "\n",
    )
    for command in (["scan", "--format", "json", "."], ["report", "--format", "json", "."]):
        done = _migrate(*command, cwd=tmp_path)
        assert "internal error" not in done.stderr and "RecursionError" not in done.stderr
        assert "app.py" in done.stdout  # the other file's findings are kept
    done = _migrate("scan", "--output-format", "concise", ".", cwd=tmp_path)
    assert (
        "pyproject.toml: not scanned: invalid TOML: nested more than 200 levels deep" in done.stdout
    )


def test_a_file_name_that_is_not_utf8_is_escaped_in_every_json_format(tmp_path):
    """A byte of a name that is not UTF-8 is `\\xNN` text in JSON and the report, `%NN` in a
    SARIF uri: strict parsers accept every document, and nothing stops with an internal error."""
    import json

    with open(os.path.join(os.fsencode(tmp_path), b"caf\xe9.py"), "wb") as handle:
        handle.write(b"import pynvml\npynvml.nvmlInit()\n")
    for command in (
        ["scan", "--format", "json"],
        ["scan", "--format", "sarif"],
        ["report", "--format", "json"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "migrator", *command, "--no-cache", str(tmp_path)],
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert b"internal error" not in done.stderr, done.stderr
        text = done.stdout.decode("utf-8")  # strict UTF-8
        document = json.loads(text)
        assert "\\udce9" not in text and "caf\\\\xe9.py" in text or "caf%E9.py" in text
        assert document


def test_verify_output_reader_skips_an_overlong_line_and_reads_every_metric_line():
    """What the smoke output's reader makes of hostile output; that it takes time linear in the
    output (2 MB in 2,048 lines of 1,023 characters once took over 100 s: a lazy label tried
    from every position) is checked with every parser's, ``tests/test_linear_parsers.py``
    ("verify series")."""
    from migrator.verify.series import MAX_LINE, extract_default

    wide = extract_default(("a b c " * 170 + "x: 1\n") * 64)
    # one series (its label the words before the colon), one value per line
    assert [
        (len(points), {point.value for point in points}) for points in wide.values.values()
    ] == [(64, {1.0})]
    long_line = "word " * (MAX_LINE // 5 + 1) + "loss: 1.5\n"
    assert extract_default(long_line).values == {}  # longer than any line it reads
    big = extract_default("step 1/10 loss: 0.5 lr=3e-4 tokens/s: 1234\n" * 2_500)
    assert len(big.values["loss"]) == 2_500


def test_verify_pair_scanner_finds_what_the_pair_pattern_finds():
    """The linear scanner returns exactly the matches of the documented pattern, on any line."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from migrator.verify.series import _PAIR, pairs

    alphabet = st.sampled_from(
        list("ab_ xyz:=.,;|()%-/'\"0123456789eE+") + ["ms", "loss", "nan", "it/s", " = ", ": "]
    )

    @settings(max_examples=400, deadline=None)
    @given(st.lists(alphabet, max_size=40).map("".join))
    def check(line: str) -> None:
        expected = [(m["label"], m["value"], m["unit"]) for m in _PAIR.finditer(line)]
        assert pairs(line) == expected

    check()


def test_a_notebook_large_because_of_its_outputs_is_scanned_by_its_code_cells(tmp_path):
    import base64
    import json

    cell = {
        "cell_type": "code",
        "metadata": {},
        "execution_count": 1,
        "source": ["import pynvml\n", "pynvml.nvmlInit()\n"],
        "outputs": [
            {
                "output_type": "display_data",
                "data": {"image/png": base64.b64encode(b"x" * 9 * 1024 * 1024).decode()},
                "metadata": {},
            }
        ],
    }
    document = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "big.ipynb").write_text(json.dumps(document))
    assert (tmp_path / "big.ipynb").stat().st_size > 8 * 1024 * 1024
    done = _migrate("scan", "--output-format", "concise", ".", cwd=tmp_path)
    assert done.returncode == 1
    assert "big.ipynb[cell 0]:1:1: ROC200" in done.stdout
    assert "skipped" not in done.stdout


@pytest.mark.parametrize("command", ["scan", "fix"])
def test_a_file_replaced_by_a_folder_mid_run_is_named_and_fails_the_gate(
    tmp_path, run_cli, monkeypatch, command
):
    from migrator.engine import runner

    source = "import torch\nwith torch.cuda.amp.autocast():\n    pass\n"
    (tmp_path / "a.py").write_text(source)
    (tmp_path / "b.py").write_text(source)
    discovered = runner._sources

    def then_replace(*args, **kwargs):
        found = discovered(*args, **kwargs)
        (tmp_path / "a.py").unlink()
        (tmp_path / "a.py").mkdir()
        return found

    monkeypatch.setattr(runner, "_sources", then_replace)
    result = run_cli(command, tmp_path, "--no-cache" if command == "scan" else "--diff")
    assert result.exit_code == 1
    assert "a.py: changed during the run, now not a regular file (directory)" in result.output


#: Modules that may read a file without ``read_regular``, each for a reason that keeps project
#: files out: the cache the tool owns, package resources, the machine's own ``/sys`` files, and
#: the files this tool writes itself (process output, fleet results).
_OWN_READS = {
    "migrator/files/cache.py": "the tool's own package files and a cache file checked ours",
    "migrator/knowledge/tables.py": "package data",
    "migrator/knowledge/facts_doc.py": "package data",
    "migrator/kernels/hipify_map.py": "package data (the hipify tables generated from torch)",
    "migrator/verify/receipt_format.py": "the package's JSON schema",
    "migrator/verify/process.py": "the output files it captured the child into",
    "migrator/doctor/system.py": "the machine's /sys files",
    "migrator/fleet/unit.py": "the receipt verify wrote and its own bookkeeping",
    "migrator/environment/elf.py": "shared objects of the environment --python names, opened "
    "after a non-blocking check that each is a regular ELF file, read with size caps",
    "migrator/kernels/hip_nvidia/defects.py": "the private copy's sources (an explicit --run)",
    "migrator/kernels/hip_nvidia/headers.py": "package data (the patch) and the installed HIP "
    "headers it patches into a private copy",
    "migrator/kernels/hip_nvidia/run.py": "the --inputs file the user names and the run's own "
    "result files in its private workspace",
    "migrator/kernels/hip_nvidia/runner.py": "its job file, written by migrate in the workspace",
    "migrator/kernels/hipify_worker.py": "writes hipify's output into the private copy",
    "migrator/kernels/torch_headers.py": "the installed torch's version.py and migrate's own "
    "cache records",
    "migrator/fleet/connect.py": "the user's Ray token file and this process's /proc records",
    "migrator/fleet/engine.py": "the unit records migrate stored in its own results folder",
}


def _raw_reads() -> dict[str, list[int]]:
    import ast

    root = Path(__file__).resolve().parents[1]
    found: dict[str, list[int]] = {}
    for path in sorted((root / "migrator").rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative.startswith("migrator/verify/sim/"):
            continue  # runs inside the project's own process, as the project's code
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if (isinstance(func, ast.Attribute) and func.attr in ("read_text", "read_bytes")) or (
                isinstance(func, ast.Name) and func.id == "open"
            ):
                found.setdefault(relative, []).append(node.lineno)
    return found


def test_every_other_read_goes_through_the_read_facility():
    """A plain ``read_text``/``read_bytes``/``open`` on a project path blocks on a named pipe and
    never ends on ``/dev/zero`` (it hung ``report`` and ``kernels`` through the include graph):
    outside the modules listed with their reason, files are read with ``read_regular`` or
    ``read_project_text``/``read_project_bytes``; a listed module that no longer reads is
    taken off the list."""
    found = _raw_reads()
    assert {module: lines for module, lines in found.items() if module not in _OWN_READS} == {}
    assert sorted(set(_OWN_READS) - set(found)) == []
