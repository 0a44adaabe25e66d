"""`migrate fix` writes atomically and keeps encoding, BOM, line endings, mode and comments."""

from __future__ import annotations

import json
import os
import stat

from tests.conftest import write

SOURCE = "import torch  # keep me\n\n# a comment\nwith torch.cuda.amp.autocast(dtype=torch.bfloat16):  # and me\n    pass\n"
FIXED = 'import torch  # keep me\n\n# a comment\nwith torch.amp.autocast("cuda", dtype=torch.bfloat16):  # and me\n    pass\n'


def test_fix_rewrites_in_place_keeping_comments_and_mode(tmp_path, run_cli):
    path = write(tmp_path, "a.py", SOURCE)
    os.chmod(path, 0o754)
    result = run_cli("fix", "--select", "ROC520", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert path.read_text() == FIXED
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o754
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".migrate")]


def test_crlf_bom_and_latin1_cookie_survive(tmp_path, run_cli):
    crlf = write(tmp_path, "crlf.py", SOURCE.replace("\n", "\r\n").encode())
    bom = write(tmp_path, "bom.py", b"\xef\xbb\xbf" + SOURCE.encode())
    latin = write(
        tmp_path,
        "latin.py",
        ("# -*- coding: latin-1 -*-\nname = 'café'\n" + SOURCE).encode("latin-1"),
    )
    result = run_cli("fix", "--select", "ROC520", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert crlf.read_bytes() == FIXED.replace("\n", "\r\n").encode()
    assert bom.read_bytes() == b"\xef\xbb\xbf" + FIXED.encode()
    assert latin.read_bytes() == ("# -*- coding: latin-1 -*-\nname = 'café'\n" + FIXED).encode(
        "latin-1"
    )


def test_diff_writes_nothing_and_shows_the_change(tmp_path, run_cli):
    path = write(tmp_path, "a.py", SOURCE)
    result = run_cli("fix", "--diff", "--select", "ROC520", str(tmp_path))
    assert path.read_text() == SOURCE
    assert "--- a/a.py" in result.output and "+++ b/a.py" in result.output
    assert "-with torch.cuda.amp.autocast(dtype=torch.bfloat16):  # and me" in result.output
    assert '+with torch.amp.autocast("cuda", dtype=torch.bfloat16):  # and me' in result.output


def test_second_fix_is_a_no_op(tmp_path, run_cli):
    path = write(tmp_path, "a.py", SOURCE)
    run_cli("fix", "--select", "ROC520", str(tmp_path))
    first = path.read_bytes()
    second = run_cli("fix", "--diff", "--select", "ROC520", str(tmp_path))
    assert second.output.strip() == "" or "---" not in second.output
    assert path.read_bytes() == first


def test_notebook_cells_are_rewritten_outputs_untouched(tmp_path, run_cli):
    notebook = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["torch.cuda.amp in prose\n"]},
            {
                "cell_type": "code",
                "execution_count": 3,
                "metadata": {"tags": ["x"]},
                "outputs": [{"output_type": "stream", "name": "stdout", "text": ["hi\n"]}],
                "source": [
                    "!nvidia-smi\n",
                    "import torch\n",
                    "scaler = torch.cuda.amp.GradScaler()",
                ],
            },
        ],
        "metadata": {"kernelspec": {"name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = write(tmp_path, "nb.ipynb", json.dumps(notebook, indent=1) + "\n")
    write(tmp_path, "requirements.txt", "torch>=2.3\n")  # GradScaler("cuda") needs 2.3
    result = run_cli("fix", "--select", "ROC520", str(tmp_path))
    assert result.exit_code == 0, result.output
    after = json.loads(path.read_text())
    assert after["cells"][1]["source"] == [
        "!nvidia-smi\n",
        "import torch\n",
        'scaler = torch.amp.GradScaler("cuda")',
    ]
    assert after["cells"][1]["outputs"] == notebook["cells"][1]["outputs"]
    assert after["cells"][0] == notebook["cells"][0]
    assert after["metadata"] == notebook["metadata"]


def test_notebook_findings_point_at_cell_and_line(tmp_path, scan_json):
    notebook = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "outputs": [], "source": "import torch\n"},
            {
                "cell_type": "code",
                "metadata": {},
                "outputs": [],
                "source": "x = 1\ny = torch.cuda.amp.GradScaler()\n",
            },
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    write(tmp_path, "nb.ipynb", json.dumps(notebook))
    report = scan_json("--select", "ROC520", str(tmp_path))
    [finding] = report["findings"]
    assert (finding["path"], finding["cell"], finding["line"], finding["column"]) == (
        "nb.ipynb",
        1,
        2,
        5,
    )


def test_interrupted_write_leaves_old_file(tmp_path, monkeypatch):
    from migrator.files import writer

    path = write(tmp_path, "a.py", SOURCE)

    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(writer.os, "replace", boom)
    try:
        writer.write_atomic(path, FIXED, "utf-8")
    except KeyboardInterrupt:
        pass
    assert path.read_text() == SOURCE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py"]


def test_a_rewrite_that_would_not_compile_is_dropped(tmp_path):
    import libcst as cst

    from migrator.engine.context import RawPythonFinding
    from migrator.engine.fixer import FixError, apply_python_fixes
    from migrator.engine.registry import rule_by_code
    from migrator.model import Applicability

    module = cst.parse_module("x = f(1)\n")
    call = module.body[0].body[0].value
    bad = cst.Call(func=cst.Name("g"), args=[cst.Arg(cst.Name("yield"))])
    raw = RawPythonFinding(rule_by_code("ROC520"), call, "m", bad, (), (), Applicability.SAFE, None)
    try:
        apply_python_fixes(module, [raw], "x.py")
    except FixError as error:
        assert "would not compile" in str(error)
    else:
        raise AssertionError("a non-compiling rewrite was accepted")


def test_fix_accepts_a_single_file_path(tmp_path, run_cli):
    path = write(tmp_path, "a.py", SOURCE)
    diff = run_cli("fix", "--diff", "--select", "ROC520", str(path))
    assert "+++ b/a.py" in diff.output
    result = run_cli("fix", "--select", "ROC520", str(path))
    assert result.exit_code == 0, result.output
    assert path.read_text() == FIXED
