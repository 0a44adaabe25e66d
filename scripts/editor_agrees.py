"""Whether `scan PATH`, `--stdin-filename` and the language server give the same findings for
every Python file of real projects (issue #50; ``tests/test_editor_agrees.py`` holds the same
check on the bundled fixtures, which CI runs).

    python scripts/editor_agrees.py PROJECT [PROJECT ...]

Each project is copied to a temporary folder first (the scan writes its cache there, never into
the project); the server is driven by the same LSP client as the tests (pygls's own, over
stdio). Prints, per project, the files compared and every file whose three answers differ
(rule, line, column, message); exits 1 when any differs.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

Located = list[tuple[str, int, int, str]]


def _cli(*args: str, cwd: Path, stdin: bytes | None = None) -> list[dict[str, object]]:
    command = [sys.executable, "-m", "migrator", "scan", "--output-format", "json", *args]
    done = subprocess.run(
        command,
        cwd=cwd,
        input=stdin,
        capture_output=True,
        timeout=900,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )
    if done.returncode not in (0, 1):
        why = done.stderr.decode("utf-8", "replace").strip()[-300:]
        raise SystemExit(f"migrate scan failed in {cwd}: {why}")
    findings: list[dict[str, object]] = json.loads(done.stdout)["findings"]
    return findings


def _located(findings: list[dict[str, object]]) -> Located:
    return sorted(
        (str(f["rule"]), int(str(f["line"])), int(str(f["column"])), str(f["message"]))
        for f in findings
    )


async def _served(project: Path, files: list[Path]) -> dict[Path, Located]:

    # the tests' LSP client (pygls's own), loaded by name: it is test code, not typed as ours
    editor = importlib.import_module("tests.lsp_session").editor
    seen: dict[Path, Located] = {}
    async with editor(project) as session:
        for path in files:
            uri = session.open(path, path.read_text(encoding="utf-8", errors="replace"))
            seen[path] = await session.located(uri, 1)
    return seen


def compare(source: Path) -> list[str]:
    """The files of ``source`` whose three answers differ (one line each)."""
    with tempfile.TemporaryDirectory(prefix="migrate-agree-") as folder:
        project = Path(folder) / source.name
        shutil.copytree(source, project, symlinks=True)
        files = sorted(
            path
            for path in project.rglob("*.py")
            if path.is_file() and not path.is_symlink() and ".git" not in path.parts
        )
        whole = _cli(".", cwd=project)
        served = asyncio.run(_served(project, files))
        differing = []
        for path in files:
            relative = path.relative_to(project).as_posix()
            by_path = _located([f for f in whole if f["path"] == relative])
            by_stdin = _located(
                _cli("--stdin-filename", relative, "-", cwd=project, stdin=path.read_bytes())
            )
            if not (by_path == by_stdin == served[path]):
                differing.append(
                    f"{relative}: stdin {sorted(set(by_stdin) ^ set(by_path))}, "
                    f"editor {sorted(set(served[path]) ^ set(by_path))}"
                )
        print(
            f"{source.name}: {len(files)} Python files, {len(whole)} findings of the scan, "
            f"{sum(len(found) for found in served.values())} diagnostics in the editor, "
            f"{len(differing)} files differ"
        )
        return differing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("projects", nargs="+", type=Path)
    arguments = parser.parse_args()
    differing = [line for project in arguments.projects for line in compare(project)]
    for line in differing:
        print(f"  {line}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
