"""Every program ``migrate`` starts goes through ``migrator.process.helper``: a test reads the
source of ``migrator/`` and ``rules/`` with ``ast`` and fails on any call that starts a process
elsewhere. The launcher itself is tested on what a hostile working directory can plant."""

from __future__ import annotations

import ast
import os
import sys
import time
from pathlib import Path

import pytest

import migrator
from migrator.process import helper
from tests.conftest import ROOT, write

#: Calls that start a program or an interpreter.
_STARTERS = {
    ("subprocess", name)
    for name in ("run", "Popen", "call", "check_call", "check_output", "getoutput")
} | {("subprocess", "getstatusoutput")}
_STARTERS |= {("os", name) for name in ("system", "popen", "fork", "forkpty", "posix_spawn")}
_STARTERS |= {("os", "posix_spawnp"), ("pty", "spawn"), ("pty", "fork")}
_STARTERS |= {("asyncio", "create_subprocess_exec"), ("asyncio", "create_subprocess_shell")}
_STARTERS |= {("os", f"exec{suffix}") for suffix in ("l", "le", "lp", "lpe", "v", "ve", "vp")}
_STARTERS |= {("os", f"spawn{suffix}") for suffix in ("l", "le", "lp", "lpe", "v", "ve", "vp")}
_STARTERS |= {("os", "execvpe")}
#: The one launcher; the per-file workers (forked copies of this process, never a new
#: interpreter); the ROCm emulation, which runs inside verify's smoke process by design.
_ALLOWED = {
    "migrator/process/helper.py",
    "migrator/engine/isolation.py",
    "migrator/verify/sim/_migrate_rocm.py",
}


def _starts(path: Path) -> list[str]:
    """``module.name`` calls (and ``from module import name`` uses) that start a process."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported: dict[str, tuple[str, str]] = {}
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if (node.module, alias.name) in _STARTERS:
                    imported[alias.asname or alias.name] = (node.module, alias.name)
                if node.module == "multiprocessing" or node.module.startswith("multiprocessing."):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} multiprocessing")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in ("multiprocessing", "pty"):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {alias.name}")
        elif isinstance(node, ast.Call):
            function = node.func
            if (
                isinstance(function, ast.Attribute)
                and isinstance(function.value, ast.Name)
                and (function.value.id, function.attr) in _STARTERS
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {function.value.id}.")
            elif isinstance(function, ast.Name) and function.id in imported:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {function.id}")
    return found


def test_every_process_is_started_through_the_helper_launcher() -> None:
    offenders = [
        start
        for folder in ("migrator", "rules")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path.relative_to(ROOT).as_posix() not in _ALLOWED
        for start in _starts(path)
    ]
    assert offenders == []


def test_the_enumeration_finds_a_direct_start(tmp_path: Path) -> None:
    # the finder itself can fail: a module that calls subprocess directly is caught
    module = write(
        ROOT / "migrator",
        f"_probe_{os.getpid()}.py",
        "import subprocess\nfrom os import system\nsubprocess.run(['x'])\nsystem('y')\n",
    )
    try:
        assert len(_starts(module)) == 2
    finally:
        module.unlink()


def test_a_python_helper_never_imports_from_its_working_directory(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    planted = f"open({str(canary)!r}, 'w').write('ran')\n"
    for name in ("json.py", "runpy.py", "sitecustomize.py", "usercustomize.py", "migrator.py"):
        write(tmp_path, name, planted)
    write(tmp_path, "migrator/__init__.py", planted)
    write(tmp_path, "evil.pth", f"import os; {planted}")
    # the CLI imports json, runpy and the migrator package: each planted copy would run
    command = helper.python_module("migrator", "--version")
    done = helper.run(command, timeout=60, cwd=tmp_path, env={**os.environ, "PYTHONPATH": "."})
    assert not canary.exists()
    assert done.returncode == 0, done.err
    assert migrator.__version__ in done.out


def test_tools_are_never_found_through_a_relative_path_entry(tmp_path: Path) -> None:
    write(tmp_path, "git", "#!/bin/sh\necho planted\n").chmod(0o755)
    before = os.getcwd()
    os.chdir(tmp_path)
    try:
        found = helper.find_program("git", env={"PATH": f".:{os.pathsep}/usr/bin:/bin"})
        assert found is not None and Path(found).parent != tmp_path
        assert helper.find_program("git", env={"PATH": "."}) is None
        assert helper.find_program("git", avoid=[tmp_path], env={"PATH": str(tmp_path)}) is None
    finally:
        os.chdir(before)


def test_a_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    # a wrapper that starts a child and waits, as hipcc's perl script starts clang
    marker = tmp_path / "child.pid"
    script = f"sleep 300 & echo $! > {marker}; wait"
    done = helper.run(["/bin/sh", "-c", script], timeout=2)
    assert done.timed_out
    pid = int(marker.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the wrapper's child outlived the timeout")


def test_a_helper_runs_in_a_private_empty_folder() -> None:
    done = helper.run(["/bin/sh", "-c", "pwd; ls -A | wc -l"], timeout=30)
    where, count = done.out.split()
    assert Path(where).name.startswith("migrate-helper-") and count == "0"
    assert not Path(where).exists()


def test_relative_programs_are_refused() -> None:
    with pytest.raises(helper.HelperError):
        helper.run(["sh", "-c", "true"], timeout=10)
    assert sys.executable  # the launcher's own interpreter is absolute


def test_the_formatter_never_reads_a_configuration_outside_the_project(tmp_path: Path) -> None:
    # ruff follows `extend` wherever it points and quotes the file in its errors: a project
    # that extends a file outside itself gets no formatting, and that file is never read (were
    # it read, its line length of 20 would wrap the rewritten line)
    from tests.attacks.conftest import CUDA_CHECK, migrate

    write(tmp_path, "outside/ruff.toml", "line-length = 20\n")
    project = tmp_path / "project"
    write(
        project,
        "pyproject.toml",
        '[tool.ruff]\nextend = "../outside/ruff.toml"\n[tool.ruff.format]\n',
    )
    write(project, "pkg/a.py", CUDA_CHECK)
    result = migrate("fix", project)
    assert result.returncode in (0, 1), result.stderr
    assert "if torch.version.cuda or torch.version.hip:\n" in (project / "pkg/a.py").read_text()
