"""A real LSP client (pygls's own) speaking to ``migrate server`` over stdio, for tests that
drive the server as an editor does: open, edit, ask for code actions, read the diagnostics."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any


class Editor:
    """One editor session: the client, and the diagnostics the server published, in order."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.published: asyncio.Queue[Any] = asyncio.Queue()

    def open(self, path: Path, text: str, version: int = 1) -> str:
        from lsprotocol import types

        uri = path.as_uri()
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="python", version=version, text=text
                )
            )
        )
        return uri

    def change(self, uri: str, text: str, version: int) -> None:
        from lsprotocol import types

        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    async def diagnostics(self, uri: str, version: int | None = None) -> Any:
        """The next diagnostics published for ``uri`` (of ``version``, when given); those of
        other versions before it are dropped."""
        while True:
            params = await asyncio.wait_for(self.published.get(), 120)
            if params.uri == uri and (version is None or params.version == version):
                return params

    async def located(
        self, uri: str, version: int | None = None
    ) -> list[tuple[str, int, int, str]]:
        """The next diagnostics of ``uri`` as ``scan`` prints findings: (rule, line, column,
        message without the fix note), sorted; the unnamed information notes left out."""
        from lsprotocol import types

        published = await self.diagnostics(uri, version)
        return sorted(
            (
                str(d.code),
                d.range.start.line + 1,
                d.range.start.character + 1,
                d.message.split(" [fix")[0],
            )
            for d in published.diagnostics
            if d.severity != types.DiagnosticSeverity.Information or d.code
        )

    async def code_actions(self, uri: str, only: list[str] | None = None) -> list[Any]:
        from lsprotocol import types

        start = types.Position(line=0, character=0)
        answer = await self.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(start=start, end=start),
                context=types.CodeActionContext(diagnostics=[], only=only),
            )
        )
        return list(answer or [])


@asynccontextmanager
async def editor(workspace: Path) -> AsyncIterator[Editor]:
    """``migrate server`` started as an editor starts it, initialised on ``workspace``."""
    from lsprotocol import types
    from pygls.lsp.client import LanguageClient

    client = LanguageClient("migrate-tests", "1")
    session = Editor(client)

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def diagnostics(params: types.PublishDiagnosticsParams) -> None:
        session.published.put_nowait(params)

    await client.start_io(sys.executable, "-m", "migrator", "server")
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="project")],
        )
    )
    client.initialized(types.InitializedParams())
    try:
        yield session
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
