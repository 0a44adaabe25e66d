"""Every file the user names for output goes through one write facility
(``migrator.files.writer.write_output``): never over an input of the run, never through a symlink
(or creating a dangling link's target), atomic so that a failed write keeps the previous file,
with a one-line reason that names the file (issue #33)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from tests.conftest import FIXTURES, write


def _migrate(
    *args: str, cwd: Path | None = None, limit: int | None = None
) -> subprocess.CompletedProcess[str]:
    def restrict() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "migrator", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=cwd,
        preexec_fn=restrict,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    write(root, "app.py", "import pynvml\npynvml.nvmlInit()\n")
    write(root, "pyproject.toml", '[project]\nname = "app"\nversion = "1"\n')
    return root


def test_scan_output_never_overwrites_a_scanned_file(tmp_path):
    root = _project(tmp_path)
    before = (root / "app.py").read_bytes()
    done = _migrate("scan", str(root), "-o", str(root / "app.py"))
    assert done.returncode == 2
    assert "app.py is a file this run scans" in done.stderr and "Traceback" not in done.stderr
    assert (root / "app.py").read_bytes() == before


def test_report_output_never_overwrites_the_projects_pyproject(tmp_path):
    root = _project(tmp_path)
    before = (root / "pyproject.toml").read_bytes()
    done = _migrate("report", str(root), "--format", "md", "-o", str(root / "pyproject.toml"))
    assert done.returncode == 2
    assert (root / "pyproject.toml").read_bytes() == before


def test_a_planted_symlink_is_never_written_through(tmp_path):
    root = _project(tmp_path)
    victim = tmp_path / "bashrc"
    victim.write_text("keep me\n")
    (root / "report.html").symlink_to(victim)
    (root / "dangling.html").symlink_to(tmp_path / "created-by-attack")
    for name in ("report.html", "dangling.html"):
        done = _migrate("report", str(root), "-o", str(root / name))
        assert done.returncode == 2
        assert "is a symlink" in done.stderr
    assert victim.read_text() == "keep me\n"
    assert not (tmp_path / "created-by-attack").exists()


def test_a_failed_write_keeps_the_previous_report_and_names_the_file(tmp_path):
    root = _project(tmp_path)
    out = tmp_path / "report.md"
    out.write_text("previous report\n")
    done = _migrate("report", str(root), "--format", "md", "-o", str(out), limit=4096)
    assert done.returncode == 2
    assert str(out) in done.stderr and "previous file" in done.stderr
    assert out.read_text() == "previous report\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".migrate")] == []


def test_baseline_and_scan_output_cannot_share_an_input(tmp_path):
    root = _project(tmp_path)
    done = _migrate("scan", str(root), "--write-baseline", str(root / "app.py"))
    assert done.returncode == 2
    assert (root / "app.py").read_text().startswith("import pynvml")


def test_output_outside_the_project_is_written_atomically(tmp_path):
    root = _project(tmp_path)
    out = tmp_path / "findings.json"
    done = _migrate("scan", str(root), "--format", "json", "-o", str(out))
    assert done.returncode == 1, done.stderr
    assert out.read_text().startswith("{")


def test_a_file_whose_name_is_near_name_max_can_be_fixed(tmp_path):
    root = tmp_path / "project"
    name = "m" * 240 + ".py"
    write(root, name, "import torch\nif torch.version.cuda:\n    pass\n")
    done = _migrate("fix", str(root))
    assert done.returncode in (0, 1), done.stderr
    assert "torch.version.hip" in (root / name).read_text()


def test_kernels_output_is_written_by_the_same_facility(tmp_path):
    copy = tmp_path / "quant_kernels"
    import shutil

    shutil.copytree(FIXTURES / "quant_kernels", copy)
    done = _migrate("kernels", str(copy), "--no-hipify", "-o", str(copy / "setup.py"))
    assert done.returncode == 2
    assert "setup.py is a file this run scans" in done.stderr


def test_fix_diff_on_a_terminal_neutralises_escape_sequences(tmp_path):
    """OSC sequences in a fixed file (window title, OSC 52 clipboard write) reach a terminal
    as visible escapes; a pipe still gets the exact patch."""
    import pty

    root = tmp_path / "project"
    write(
        root,
        "a.py",
        "import torch\n# \x1b]0;owned\x07 \x1b]52;c;ZWNobyBoaQ==\x07\n"
        "if torch.version.cuda:\n    pass\n",
    )
    leader, follower = pty.openpty()
    done = subprocess.run(
        [sys.executable, "-m", "migrator", "fix", "--diff", str(root)],
        stdout=follower,
        stderr=subprocess.PIPE,
        timeout=120,
        check=False,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    shown = b"".join(chunks).decode("utf-8", "replace")
    assert done.returncode in (0, 1)
    assert "torch.version.hip" in shown
    assert "\x1b]" not in shown and "\x07" not in shown
    assert "\\x1b]0;owned\\x07" in shown
    piped = _migrate("fix", "--diff", str(root))
    assert "\x1b]0;owned\x07" in piped.stdout  # the patch itself is exact


def test_fix_keeps_the_final_carriage_return_of_a_cr_only_file(tmp_path):
    root = tmp_path / "project"
    path = write(root, "a.py", b"import torch\rif torch.version.cuda:\r    pass\r")
    done = _migrate("fix", str(root))
    assert done.returncode in (0, 1), done.stderr
    fixed = b"import torch\rif torch.version.cuda or torch.version.hip:\r    pass\r"
    assert path.read_bytes() == fixed
    _migrate("fix", str(root))
    assert path.read_bytes() == fixed
