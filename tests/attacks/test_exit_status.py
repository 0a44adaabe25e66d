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


def _padded(text, size):
    """``text`` followed by a comment that makes it ``size`` bytes."""
    return text + "#" + "x" * (size - len(text) - 2) + "\n"


def test_a_file_too_large_to_read_fails_the_gate_unless_allowed(tmp_path):
    write(tmp_path, "big.py", _padded(AMP, 9 * 1024 * 1024))  # over the 8 MiB read limit
    write(tmp_path, "clean.py", "x = 1\n")

    gate = migrate("scan", "--format", "json", tmp_path, cwd=tmp_path)

    failed = {
        entry["path"]: entry["reason"] for entry in json.loads(gate.stdout)["files"]["failed"]
    }
    assert list(failed) == ["big.py"]
    assert failed["big.py"].startswith("larger than 8 MiB")
    assert "1 file(s) could not be scanned" in gate.stderr
    assert gate.returncode == 1
    assert migrate("scan", "--allow-unscanned", tmp_path).returncode == 0
    fix = migrate("fix", tmp_path, cwd=tmp_path)
    assert "not read big.py: larger than 8 MiB" in fix.stderr
    assert fix.returncode == 1
    write(tmp_path, "pyproject.toml", "[tool.migrate]\nallow-unscanned = true\n")
    assert migrate("scan", tmp_path).returncode == 0


def test_a_project_file_too_large_to_read_for_context_is_named(tmp_path):
    """A 12 MB setup.py declares versions nobody read: listed, and the scan is incomplete, even
    where the file itself is excluded from the findings."""
    write(tmp_path, "setup.py", _padded("from setuptools import setup\n", 12 * 1000 * 1000))
    write(tmp_path, "requirements.txt", _padded("torch>=2.4\n", 12 * 1000 * 1000))
    write(tmp_path, "clean.py", "x = 1\n")
    write(
        tmp_path, "pyproject.toml", '[tool.migrate]\nexclude = ["setup.py", "requirements.txt"]\n'
    )

    gate = migrate("scan", "--format", "json", tmp_path, cwd=tmp_path)

    failed = {
        entry["path"]: entry["reason"] for entry in json.loads(gate.stdout)["files"]["failed"]
    }
    assert sorted(failed) == ["requirements.txt", "setup.py"]
    for reason in failed.values():
        assert reason.startswith("larger than 8 MiB") and "declared versions" in reason, reason
    assert "2 file(s) could not be scanned" in gate.stderr
    assert gate.returncode == 1
