"""Every command over a hostile project (``tests/attacks/hostile_project.py``), from inside the
tree and from outside it, with a relative entry on PATH: no planted code runs (no canary), no
file outside the project is read into any output (no secret token) or changed, and the run
ends. ``verify`` runs the smoke command by design, in its copy only."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.attacks.hostile_project import SECRET, Hostile, plant
from tests.conftest import ROOT
from tests.lazy_modules import LazyModule

types = LazyModule("lsprotocol.types")

#: Runs this checkout's ``migrate`` isolated, as the installed ``migrate`` program runs: the
#: working directory is never on sys.path (``python -c`` would put the project's ``json.py``
#: there before migrate even starts, which no tool can defend against).
_BOOT = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from migrator.cli import main; main()"

IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}


def _env() -> dict[str, str]:
    env = {**os.environ, **IDENTITY, "PATH": f"bin:.::{os.environ.get('PATH', '')}"}
    env.pop("MIGRATE_DEBUG", None)
    return env


def _migrate(cwd: Path, *args: object, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-c", _BOOT, *map(str, args)],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _assert_contained(project: Hostile, outside_before: dict[str, bytes], *texts: str) -> None:
    assert project.canaries_written() == []
    assert project.outside_state() == outside_before
    for text in texts:
        assert SECRET not in text
    for path in project.root.parent.glob("out.*"):
        assert SECRET.encode() not in path.read_bytes()


SCAN_FORMATS = ["text", "concise", "json", "json-lines", "sarif", "github", "gitlab", "junit"]
SCAN_FORMATS += ["rdjson", "pylint", "azure"]

#: (id, arguments with PROJECT standing for the project's path).
COMMANDS: list[tuple[str, list[str]]] = [
    *[(f"scan-{name}", ["scan", "PROJECT", "--format", name]) for name in SCAN_FORMATS],
    ("fix-diff", ["fix", "PROJECT", "--diff", "--unsafe-fixes"]),
    ("fix", ["fix", "PROJECT", "--unsafe-fixes"]),
    ("pr", ["pr", "PROJECT"]),
    *[
        (f"report-{name}", ["report", "PROJECT", "--format", name, "-o", f"OUT.{name}"])
        for name in ("html", "md", "json")
    ],
    ("report-terminal", ["report", "PROJECT", "--format", "md"]),
    ("kernels-compile", ["kernels", "PROJECT", "--compile", "--format", "json"]),
    ("kernels-text", ["kernels", "PROJECT", "--compile"]),
    ("doctor", ["doctor", "PROJECT"]),
    ("explain", ["explain", "ROC520"]),
    ("rules", ["rules"]),
    ("verify", ["verify", "PROJECT", "--smoke", "true", "--targets", "native"]),
]


@pytest.mark.parametrize("inside", [True, False], ids=["inside", "outside"])
@pytest.mark.parametrize(("name", "arguments"), COMMANDS, ids=[name for name, _ in COMMANDS])
def test_no_command_runs_the_projects_code_or_reads_outside(
    tmp_path: Path, name: str, arguments: list[str], inside: bool
) -> None:
    project = plant(tmp_path)
    before = project.outside_state()
    cwd = project.root if inside else tmp_path
    where = "." if inside else "project"
    args = [
        where
        if part == "PROJECT"
        else str(tmp_path / part.replace("OUT", "out"))
        if part.startswith("OUT.")
        else part
        for part in arguments
    ]
    result = _migrate(cwd, *args)
    assert result.returncode in (0, 1), result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    _assert_contained(project, before, result.stdout, result.stderr)
    if name in ("fix", "fix-diff"):
        assert "torch.version.hip" in (
            result.stdout + (project.root / "app.py").read_text(encoding="utf-8")
        )
    if name.startswith("kernels"):
        # the kernel that includes files outside is not compiled, and says so
        assert "outside the project" in result.stdout + result.stderr


def test_fleet_on_local_ray_runs_none_of_the_projects_code(tmp_path: Path) -> None:
    project = plant(tmp_path)
    before = project.outside_state()
    manifest = tmp_path / "fleet.toml"
    manifest.write_text(
        '[[repo]]\npath = "project"\nfix-diff = true\nkernels = true\n', encoding="utf-8"
    )
    result = _migrate(
        project.root, "fleet", manifest, "--num-cpus", "1", "--format", "json", timeout=600
    )
    assert result.returncode == 0, result.stderr[-2000:]
    stored = b"".join(
        path.read_bytes() for path in tmp_path.rglob("migrate-fleet-results/**/*") if path.is_file()
    )
    _assert_contained(
        project, before, result.stdout, result.stderr, stored.decode("utf-8", "replace")
    )


async def _code_actions(project: Path) -> list[object]:
    from pygls.lsp.client import LanguageClient

    client = LanguageClient("migrate-tests", "1")
    published: asyncio.Queue[types.PublishDiagnosticsParams] = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def diagnostics(params: types.PublishDiagnosticsParams) -> None:
        published.put_nowait(params)

    await client.start_io(sys.executable, "-I", "-c", _BOOT, "server", cwd=project, env=_env())
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="project")],
        )
    )
    client.initialized(types.InitializedParams())
    uri = (project / "app.py").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri,
                language_id="python",
                version=1,
                text=(project / "app.py").read_text(encoding="utf-8"),
            )
        )
    )
    opened = await asyncio.wait_for(published.get(), 120)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=9, character=0)
            ),
            context=types.CodeActionContext(diagnostics=opened.diagnostics),
        )
    )
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return list(actions or [])


def test_the_language_servers_code_actions_run_none_of_the_projects_code(tmp_path: Path) -> None:
    project = plant(tmp_path)
    before = project.outside_state()
    actions = asyncio.run(asyncio.wait_for(_code_actions(project.root), 300))
    assert actions, "the project's findings have fixes: code actions expected"
    _assert_contained(project, before, repr(actions))
