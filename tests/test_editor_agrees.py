"""The editor and CI give one answer, and the editor behaves while the user types: a real LSP
client drives ``migrate server`` over stdio (open, edit into and out of a syntax error, rapid
edits, fix on save) and its diagnostics are compared with ``scan PATH`` and
``--stdin-filename`` on the bundled fixtures."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import FIXTURES, ROOT
from tests.lsp_session import editor

BROKEN = "import pynvml\npynvml.nvmlInit()\ndef f(:\n"


def _cli(*args: object, cwd: Path, stdin: bytes | None = None) -> dict[str, object]:
    command = [sys.executable, "-m", "migrator", "scan", "--output-format", "json"]
    result = subprocess.run(
        [*command, *map(str, args)],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"},  # the server's cache
    )
    assert result.returncode in (0, 1), result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


def _located(findings: object) -> list[tuple[str, int, int, str]]:
    assert isinstance(findings, list)
    return sorted((f["rule"], f["line"], f["column"], f["message"]) for f in findings)


def _copy(fixture: str, tmp_path: Path) -> Path:
    project = tmp_path / fixture
    shutil.copytree(FIXTURES / fixture, project)
    return project


def test_server_stdin_and_scan_path_give_the_same_findings(tmp_path: Path) -> None:
    """Every Python file of the bundled projects: the same rule, line, column and message in a
    scan of the project, from stdin and in the editor (guards across modules, folding and
    project facts included)."""
    projects = [_copy("llm_app", tmp_path), _copy("quant_kernels", tmp_path)]
    files = [(p, f) for p in projects for f in sorted(p.rglob("*.py"))]
    assert len(files) >= 6

    async def session(project: Path) -> dict[Path, list[tuple[str, int, int, str]]]:

        seen: dict[Path, list[tuple[str, int, int, str]]] = {}
        async with editor(project) as ed:  # the project is the editor's workspace
            for _, path in [(p, f) for p, f in files if p == project]:
                uri = ed.open(path, path.read_text())
                seen[path] = await ed.located(uri, 1)
        return seen

    # the project scanned first, as CI or a pre-commit hook does: the editor takes the sites of
    # the files it does not hold open from that scan's cache (the analysis of the buffer is its own)
    whole = {project: _cli(".", cwd=project)["findings"] for project in projects}
    served = {**asyncio.run(session(projects[0])), **asyncio.run(session(projects[1]))}
    differing = []
    for project, path in files:
        relative = path.relative_to(project).as_posix()
        findings = whole[project]
        assert isinstance(findings, list)
        by_path = _located([f for f in findings if f["path"] == relative])
        by_stdin = _located(
            _cli("--stdin-filename", relative, "-", cwd=project, stdin=path.read_bytes())[
                "findings"
            ]
        )
        if not (by_path == by_stdin == served[path]):
            differing.append(
                f"{relative}: stdin {set(by_stdin) ^ set(by_path)}, editor {set(served[path]) ^ set(by_path)}"
            )
    assert not differing, "\n".join(differing)
    # the fixture's NVML module: folded sites and a guarded import, as scan PATH shows them
    gpu_utils = projects[0] / "llm_app" / "gpu_utils.py"
    codes = [code for code, *_ in served[gpu_utils]]
    assert "ROC201" in codes and "ROC202" not in codes and "ROC200" not in codes


def test_a_syntax_error_keeps_the_last_findings_and_says_where(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("")

    async def session() -> tuple[object, object, object]:
        async with editor(tmp_path) as ed:
            uri = ed.open(tmp_path / "app.py", "import pynvml\npynvml.nvmlInit()\n")
            good = await ed.diagnostics(uri, 1)
            ed.change(uri, BROKEN, 2)
            broken = await ed.diagnostics(uri, 2)
            ed.change(uri, "import torch\n", 3)
            mended = await ed.diagnostics(uri, 3)
        return good, broken, mended

    good, broken, mended = asyncio.run(session())
    before = [(d.code, d.range.start.line) for d in good.diagnostics]  # type: ignore[attr-defined]
    assert before and all(code for code, _ in before)
    shown = list(broken.diagnostics)  # type: ignore[attr-defined]
    kept = [(d.code, d.range.start.line) for d in shown if d.code]
    assert kept == before  # the last findings stay while the buffer does not parse
    (syntax,) = [d for d in shown if not d.code]
    assert syntax.message.startswith("syntax error at line 3, column 1: ")
    assert syntax.message.endswith("the other diagnostics are from the last text that parsed")
    assert (syntax.range.start.line, syntax.range.start.character) == (2, 0)
    assert syntax.severity == 1  # an error
    assert list(mended.diagnostics) == []  # type: ignore[attr-defined]


def test_rapid_edits_cost_one_analysis_of_the_last_text(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("")

    async def session() -> list[int]:
        async with editor(tmp_path) as ed:
            uri = ed.open(tmp_path / "app.py", "import torch\n")
            await ed.diagnostics(uri, 1)
            for version in range(2, 7):  # five keystrokes in one burst
                ed.change(uri, f"import torch\nx = {version}\nimport pynvml\n", version)
            versions: list[int] = []
            while not versions or versions[-1] != 6:
                versions.append((await asyncio.wait_for(ed.published.get(), 120)).version)
            return versions

    # the burst is analysed once, as its last text; none of the texts in between is published
    assert asyncio.run(session()) == [6]


def test_fix_on_save_gets_the_safe_fixes_of_migrate_fix(tmp_path: Path) -> None:
    source = "import torch\n\nif torch.version.cuda:\n    print('gpu')\n"
    (tmp_path / "app.py").write_text(source)
    fixed = subprocess.run(
        [sys.executable, "-m", "migrator", "fix", "--diff", "app.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
    )
    assert "+if torch.version.cuda or torch.version.hip:" in fixed.stdout, fixed.stdout

    async def session() -> tuple[list[object], list[object], list[object]]:
        async with editor(tmp_path) as ed:
            uri = ed.open(tmp_path / "app.py", source)
            await ed.diagnostics(uri, 1)
            fix_all = await ed.code_actions(uri, ["source.fixAll"])
            source_kind = await ed.code_actions(uri, ["source"])
            refactor = await ed.code_actions(uri, ["refactor"])
        return fix_all, source_kind, refactor

    fix_all, source_kind, refactor = asyncio.run(session())
    (action,) = fix_all
    assert action.kind == "source.fixAll.migrate"  # type: ignore[attr-defined]
    [edit] = action.edit.changes[(tmp_path / "app.py").as_uri()]  # type: ignore[attr-defined]
    assert "if torch.version.cuda or torch.version.hip:" in edit.new_text
    assert [a.kind for a in source_kind] == ["source.fixAll.migrate"]  # type: ignore[attr-defined]
    assert refactor == []
