"""Attack class: make a CI gate pass on code that was not read, or make a user error look like
a crash. Unscanned files fail the gate unless allowed; user errors are one line with exit 2; a
closed stdout is a quiet exit."""

from __future__ import annotations

import json
import subprocess

from tests.attacks.conftest import AMP, command, environment, migrate, one_line_error, write


def test_an_unparsable_file_fails_the_gate_unless_allowed(tmp_path):
    write(tmp_path, "a.py", "import torch\nwith torch.cuda.amp.autocast(:\n    pass\n")
    gate = migrate("scan", "--format", "json", tmp_path, cwd=tmp_path)
    assert gate.returncode == 1
    assert json.loads(gate.stdout)["files"]["failed"][0]["path"] == "a.py"
    assert "1 file(s) could not be scanned" in gate.stderr
    assert migrate("scan", "--allow-unscanned", tmp_path).returncode == 0
    write(tmp_path, "pyproject.toml", "[tool.migrate]\nallow-unscanned = true\n")
    assert migrate("scan", tmp_path).returncode == 0


def test_user_errors_are_one_line_with_exit_2(tmp_path):
    write(tmp_path, "a.py", AMP)
    cases = [
        ("scan", tmp_path, "-o", tmp_path / "missing" / "out.txt"),
        ("scan", tmp_path, "--format", "json", "-o", tmp_path / "missing" / "out.json"),
        ("scan", tmp_path, "-o", tmp_path),
        ("scan", tmp_path / "does-not-exist"),
        ("scan", "--no-such-option", tmp_path),
        ("scan", tmp_path, "--select", "NOPE"),
        ("verify", tmp_path, "--smoke", "true", "--timeout", "nan"),
        ("verify", tmp_path, "--smoke", "true", "--timeout", "inf"),
        ("doctor", "--timeout", "nan"),
    ]
    for args in cases:
        result = migrate(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert one_line_error(result.stderr), (args, result.stderr)


def test_a_closed_stdout_is_a_quiet_exit(tmp_path):
    for index in range(60):
        write(tmp_path, f"m{index:02d}.py", AMP * 20)
    for args in (("fix", "--diff", tmp_path), ("scan", "--format", "json", tmp_path)):
        process = subprocess.Popen(
            command(*args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environment(),
            text=True,
        )
        assert process.stdout is not None and process.stderr is not None
        process.stdout.readline()
        process.stdout.close()  # like `| head -1`
        stderr = process.stderr.read()
        process.wait(timeout=120)
        assert "Traceback" not in stderr and "internal error" not in stderr, stderr
        assert "Broken pipe" not in stderr and "BrokenPipe" not in stderr, stderr


def test_an_unwritable_report_path_is_a_one_line_error(tmp_path):
    write(tmp_path, "a.py", AMP)
    for args in (
        ("report", tmp_path, "-o", tmp_path / "missing" / "r.html"),
        ("report", tmp_path, "--format", "md", "-o", tmp_path / "missing" / "r.md"),
    ):
        result = migrate(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert one_line_error(result.stderr), (args, result.stderr)
