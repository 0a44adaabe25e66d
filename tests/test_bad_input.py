"""Bad input gets a one-line reason and the scan goes on; no traceback reaches the user."""

from __future__ import annotations

import json
import os

from tests.conftest import write

AMP = "import torch\nwith torch.cuda.amp.autocast():\n    pass\n"


def _reasons(report, key):
    return {entry["path"]: entry["reason"] for entry in report["files"][key]}


def test_each_bad_file_is_reported_and_the_rest_is_scanned(tmp_path, scan_json):
    write(tmp_path, "good.py", AMP)
    write(tmp_path, "py2.py", 'import torch\nprint "torch.cuda.amp"\n')
    write(tmp_path, "broken.py", "import torch.cuda.amp as amp\ndef f(:\n")
    write(tmp_path, "latin.py", b"import torch.cuda.amp\nx = '\xff\xfe'\n")
    write(tmp_path, "binary.py", b"\x7fELF\x00\x00\x01amp")
    write(tmp_path, "empty.py", "")
    with open(tmp_path / "huge.py", "wb") as handle:
        handle.truncate(50 * 1024 * 1024)
    write(tmp_path, "nb.ipynb", '{"cells": [ {"cell_type": "code", "source": "torch.cuda.amp"')
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\ndependencies = ["flash-attn" \n')
    os.symlink(tmp_path / "missing.py", tmp_path / "dangling.py")

    report = scan_json("--min-severity", "hygiene", str(tmp_path))

    assert [(f["path"], f["line"], f["rule"]) for f in report["findings"]] == [
        ("good.py", 2, "ROC520")
    ]
    failed = _reasons(report, "failed")
    skipped = _reasons(report, "skipped")
    assert failed["py2.py"].startswith("syntax error at line 2")
    assert failed["broken.py"].startswith("syntax error at line 2")
    assert skipped["latin.py"].startswith("undecodable bytes (utf-8)")
    assert skipped["binary.py"] == "binary file (contains NUL bytes)"
    assert failed["huge.py"].startswith("larger than 8 MiB")  # unread code: incomplete
    assert failed["nb.ipynb"].startswith("malformed notebook")
    assert skipped["dangling.py"] == "broken symlink"
    for reason in [*failed.values(), *skipped.values()]:
        assert "\n" not in reason and "Traceback" not in reason
    assert "empty.py" not in failed and "empty.py" not in skipped


def test_malformed_toml_is_a_failed_file_not_a_crash(tmp_path, scan_json):
    write(tmp_path, "sub/pyproject.toml", '[project\nname = "flash-attn"\n')
    write(tmp_path, "a.py", AMP)
    report = scan_json("--min-severity", "hygiene", str(tmp_path))
    reasons = _reasons(report, "failed")
    assert reasons["sub/pyproject.toml"].startswith("invalid TOML")
    assert report["findings"][0]["path"] == "a.py"


def test_symlink_loop_is_not_followed(tmp_path, scan_json):
    write(tmp_path, "pkg/a.py", AMP)
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "loop")
    report = scan_json("--min-severity", "hygiene", str(tmp_path))
    assert [f["path"] for f in report["findings"]] == ["pkg/a.py"]
    assert any("symlink loop" in s["reason"] for s in report["files"]["skipped"])


def test_file_vanishing_between_discovery_and_read_is_a_failed_file(tmp_path):
    from migrator.engine.work import _Task, _work

    outcome = _work(_Task(str(tmp_path / "gone.py"), "gone.py", "python", None, None, True))
    assert outcome.result.status.value == "failed"
    assert outcome.result.reason == "cannot read: No such file or directory"


def test_missing_path_is_a_usage_error(run_cli, tmp_path):
    result = run_cli("scan", str(tmp_path / "nope"))
    assert result.exit_code == 2
    assert "path does not exist" in result.output


def test_unknown_rule_selector_is_exit_2_with_one_line(run_cli, tmp_path):
    write(tmp_path, "a.py", AMP)
    result = run_cli("scan", "--select", "ROC999,nonsense", str(tmp_path))
    assert result.exit_code == 2
    assert result.output.strip().startswith("migrate: error: unknown rule")
    assert len(result.output.strip().splitlines()) == 1


def test_bad_config_is_exit_2(run_cli, tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.migrate]\nselekt = ["ROC520"]\n')
    write(tmp_path, "a.py", AMP)
    result = run_cli("scan", str(tmp_path))
    assert result.exit_code == 2
    assert "unknown [tool.migrate] keys: selekt" in result.output


def test_json_output_is_valid_even_with_failures(tmp_path, run_cli):
    write(tmp_path, "bad.py", "import torch.cuda.amp\n(((\n")
    result = run_cli("scan", "--format", "json", str(tmp_path))
    assert result.exit_code == 1  # a file that could not be scanned is not a clean result
    assert json.loads(result.stdout)["files"]["failed"][0]["path"] == "bad.py"
    allowed = run_cli("scan", "--format", "json", "--allow-unscanned", str(tmp_path))
    assert allowed.exit_code == 0
