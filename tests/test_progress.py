"""Long commands show progress on a terminal and stay quiet otherwise (CI logs, pipes)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from tests.conftest import FIXTURES


def _run(args: list[str], cwd, terminal: bool) -> tuple[int, str, str]:
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120"}
    env.pop("NO_COLOR", None)
    command = [sys.executable, "-m", "migrator", *args]
    if not terminal:
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
        return done.returncode, done.stdout, done.stderr
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=follower, text=True
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    stdout = process.stdout.read() if process.stdout else ""
    process.wait()
    os.close(leader)
    return process.returncode, stdout, b"".join(chunks).decode("utf-8", "replace")


def test_report_shows_its_steps_on_a_terminal_and_nothing_when_piped(tmp_path, monkeypatch):
    monkeypatch.setenv("MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    project = FIXTURES / "llm_app"
    code, stdout, stderr = _run(["report", str(project), "--format", "md"], tmp_path, True)
    assert code == 0 and stdout.startswith("# ROCm readiness report")
    assert "scanning llm_app" in stderr and "rendering md" in stderr
    code, stdout, stderr = _run(["report", str(project), "--format", "md"], tmp_path, False)
    assert code == 0 and stdout.startswith("# ROCm readiness report")
    assert stderr == ""


def test_fix_shows_a_progress_bar_on_a_terminal(tmp_path, monkeypatch):
    monkeypatch.setenv("MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    code, _, stderr = _run(["fix", "--diff", str(FIXTURES / "llm_app")], tmp_path, True)
    assert code in (0, 1) and "computing fixes" in stderr
    code, _, stderr = _run(["fix", "--diff", str(FIXTURES / "llm_app")], tmp_path, False)
    assert "computing fixes" not in stderr


def test_scan_shows_progress_on_a_terminal_or_when_forced(tmp_path, monkeypatch):
    monkeypatch.setenv("MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    project = str(FIXTURES / "llm_app")
    code, _, stderr = _run(["scan", "--no-cache", project], tmp_path, True)
    assert code == 1 and "scanning" in stderr
    code, _, stderr = _run(["scan", "--no-cache", project], tmp_path, False)
    assert code == 1 and "scanning" not in stderr
    # rich's own switch (FORCE_COLOR) still turns it on off a terminal
    monkeypatch.setenv("FORCE_COLOR", "1")
    code, _, stderr = _run(["scan", "--no-cache", project], tmp_path, False)
    assert code == 1 and "scanning" in stderr
