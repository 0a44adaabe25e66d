"""``migrate server`` end to end: pygls's own language client starts the server as a subprocess
and speaks LSP to it over stdio (no mocked messages): diagnostics on open and on change, the
project's configuration honoured, a code action whose edit is ``migrate fix``'s text, and the
rule's explanation on hover."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.lazy_modules import LazyModule

#: pygls and lsprotocol are imported by the worker that runs these tests, not at collection.
types = LazyModule("lsprotocol.types")

SOURCE = "import torch\n\nif torch.version.cuda:\n    print('gpu')\nwith torch.cuda.amp.autocast():\n    pass\n"


async def _session(project: Path) -> dict[str, object]:
    from tests.lsp_session import editor

    out: dict[str, object] = {}
    async with editor(project) as ed:
        client = ed.client
        uri = ed.open(project / "app.py", SOURCE)
        out["opened"] = await ed.diagnostics(uri, 1)
        hover = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=2, character=5),
            )
        )
        out["hover"] = hover
        opened = out["opened"]
        assert isinstance(opened, types.PublishDiagnosticsParams)
        out["actions"] = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(
                    start=types.Position(line=0, character=0),
                    end=types.Position(line=6, character=0),
                ),
                context=types.CodeActionContext(diagnostics=opened.diagnostics),
            )
        )
        ed.change(uri, "import torch\n", 2)
        out["changed"] = await ed.diagnostics(uri, 2)
    return out


def test_diagnostics_fixes_and_hover_over_stdio(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.migrate]\nmin-severity = "hygiene"\n')
    (tmp_path / "app.py").write_text(SOURCE)
    out = asyncio.run(_session(tmp_path))

    opened = out["opened"]
    assert isinstance(opened, types.PublishDiagnosticsParams)
    located = sorted(
        (d.code, d.range.start.line, d.range.start.character, d.source) for d in opened.diagnostics
    )
    # ROC520 is a hygiene finding: shown because the project's configuration asks for it
    assert located == [("ROC101", 2, 3, "migrate"), ("ROC520", 4, 5, "migrate")]
    assert opened.version == 1

    hover = out["hover"]
    assert isinstance(hover, types.Hover) and isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.value.startswith("**ROC101 `cuda-version-as-gpu-check`**")
    assert "migrate explain ROC101" in hover.contents.value

    actions = list(out["actions"])  # type: ignore[call-overload]
    assert actions
    safe = actions[0]
    assert safe.title == "migrate: apply 2 safe fixes" and safe.is_preferred
    [edit] = safe.edit.changes[(tmp_path / "app.py").as_uri()]
    assert "torch.version.hip" in edit.new_text and "torch.amp.autocast" in edit.new_text
    assert (tmp_path / "app.py").read_text() == SOURCE  # the server never writes a file

    changed = out["changed"]
    assert isinstance(changed, types.PublishDiagnosticsParams)
    assert list(changed.diagnostics) == [] and changed.version == 2


def test_neovim_shows_the_diagnostics_and_applies_the_fix(tmp_path: Path) -> None:
    """A real editor: Neovim's built-in LSP client, headless, on a copy of the fixture file."""
    import os
    import shutil
    import subprocess

    from tests.conftest import FIXTURES, ROOT

    nvim = shutil.which("nvim")
    assert nvim is not None, "scripts/test.sh installs Debian's neovim"
    project = tmp_path / "llm_app"
    shutil.copytree(FIXTURES / "llm_app", project)
    target = project / "llm_app" / "gpu_utils.py"
    before = target.read_text()
    report = tmp_path / "nvim.out"
    env = {
        **os.environ,
        "MIGRATE_FILE": str(target),
        "MIGRATE_ROOT": str(project),
        "MIGRATE_PYTHON": sys.executable,
        "MIGRATE_OUT": str(report),
        "PYTHONPATH": str(ROOT),
    }
    subprocess.run(
        [nvim, "--headless", "--clean", "-n", "-c", f"luafile {ROOT / 'tests/editors/neovim.lua'}"],
        env=env,
        cwd=tmp_path,
        timeout=180,
        capture_output=True,
        check=False,
    )
    lines = report.read_text().splitlines()
    assert lines[-1] == "status:ok", lines
    assert any(line.startswith("diagnostic:ROC") for line in lines)
    assert any(line.startswith("action:migrate: apply") for line in lines)
    # the editor's fix is `migrate fix`'s for that file
    expected = tmp_path / "expected"
    shutil.copytree(FIXTURES / "llm_app", expected)
    subprocess.run(
        [sys.executable, "-m", "migrator", "fix", str(expected)],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    after = target.read_text()
    assert after != before
    assert after == (expected / "llm_app" / "gpu_utils.py").read_text()
