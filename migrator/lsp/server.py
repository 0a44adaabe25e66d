"""The language server: one scan of the open buffer per change, published as diagnostics; the
fixes of ``migrate fix`` for that buffer as code actions; the rule's summary and fact on hover.

A buffer is scanned as the file it is in its project: the nearest folder above it holding a
``pyproject.toml`` with ``[tool.migrate]``, else the workspace folder, else its own folder, is
the root whose configuration applies. Positions are converted to the UTF-16 units LSP counts.

Only the text the editor sent is analysed, never a file read from disk, and only for a
``file:`` URI of this machine (``..`` resolved first); each analysis runs in a worker process
(``lsp.analysis``), and the stream is read with bounds (``lsp.wire``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

import migrator
from migrator.files.config import find_pyproject, load_config
from migrator.lsp.analysis import Analyst, BufferAnalysis, BufferTask
from migrator.lsp.wire import say, serve_stdio
from migrator.model import Applicability, Finding, Severity

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
    Severity.HYGIENE: types.DiagnosticSeverity.Hint,
}


class MigrateProtocol(LanguageServerProtocol):
    """pygls's protocol, but a change to a document never opened is ignored (pygls raises
    ``KeyError``, shown to the user as an error)."""

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(
        self, params: types.DidChangeTextDocumentParams
    ) -> Generator[Any, Any, None]:
        if _opened(self.workspace.text_documents, params.text_document.uri) is None:
            say("a change to a document that is not open; ignored")
            return
        try:
            for change in params.content_changes:
                self.workspace.update_text_document(params.text_document, change)
        except (IndexError, ValueError) as error:  # a range outside the buffer
            say(f"a change that does not fit the document ({type(error).__name__}); ignored")
            return
        handler = self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)
        if handler is not None:
            yield handler, (params,), None


#: How long an edit waits for the next before the buffer is analysed: a burst of keystrokes
#: costs one analysis, of its last text.
SETTLE_SECONDS = 0.15


class MigrateServer(LanguageServer):
    """The server, with the findings last published per document (for hover, and shown again
    while the buffer does not parse)."""

    def __init__(self) -> None:
        super().__init__(
            "migrate",
            migrator.__version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
            protocol_cls=MigrateProtocol,
        )
        self.published: dict[str, tuple[Finding, ...]] = {}
        self.analyst = Analyst()


server = MigrateServer()


def _opened(documents: dict[str, TextDocument], uri: str) -> TextDocument | None:
    """The document the editor opened at ``uri``; None for any other (pygls would read it from
    disk: a named pipe there blocks the server, and the server reads nothing it was not sent)."""
    return documents.get(unquote(uri))


def _local_path(uri: str) -> Path | None:
    """The absolute path, ``..`` resolved, that a ``file:`` URI names on this machine; None for
    any other URI (``untitled:``, ``http:``, a file on another host) or none a path can hold."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return None
    if parts.scheme.lower() != "file" or parts.netloc.lower() not in ("", "localhost"):
        return None
    path = to_fs_path(uri)
    if not path or "\0" in path or not os.path.isabs(path):
        return None
    return Path(os.path.normpath(path))


def _root_and_relative(ls: LanguageServer, uri: str) -> tuple[Path, str] | None:
    """The scan root for a buffer and the buffer's path under it (None: not a file on disk)."""
    path = _local_path(uri)
    if path is None:
        return None
    try:
        config = find_pyproject(path.parent)
    except (OSError, ValueError):  # a name too long for the file system
        return None
    if config is not None:
        root = config.parent
    else:
        folders = [_local_path(folder.uri) for folder in ls.workspace.folders.values()]
        containing = [f for f in folders if f is not None and path.is_relative_to(f)]
        root = max(containing, key=lambda folder: len(folder.parts)) if containing else path.parent
    return root, path.relative_to(root).as_posix()


def _buffer_bytes(text: str) -> bytes:
    """The buffer as the bytes of its file: a lone surrogate (JSON allows one) makes bytes that
    are not UTF-8, which the analysis reports as it would in a file on disk."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def _analyse(
    ls: MigrateServer, root: Path, relative: str, data: bytes, fixes: bool
) -> BufferAnalysis:
    """The buffer's analysis in the worker, within the project's per-file time budget; a
    configuration that cannot be read is shown to the user once per analysis."""
    try:
        budget = load_config(root).file_timeout
    except migrator.errors.MigrateError as error:
        analysis = BufferAnalysis(config_error=str(error))
    else:
        analysis = ls.analyst.run(BufferTask(root, relative, data, fixes), budget)
    if analysis.config_error:
        ls.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Error, message=f"migrate: {analysis.config_error}"
            )
        )
    return analysis


def _utf16(line: str, column: int) -> int:
    """LSP's character offset (UTF-16 code units) of the 1-based code-point ``column``."""
    prefix = line[: max(column - 1, 0)]
    return len(prefix.encode("utf-16-le", "surrogatepass")) // 2


def _range(lines: Sequence[str], finding: Finding) -> types.Range:
    def position(line: int, column: int) -> types.Position:
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        return types.Position(line=max(line - 1, 0), character=_utf16(text, column))

    return types.Range(
        start=position(finding.line, finding.column),
        end=position(finding.end_line, finding.end_column),
    )


def _diagnostic(lines: Sequence[str], finding: Finding) -> types.Diagnostic:
    from migrator.output.rule_docs import rule_url

    url = rule_url(finding.rule)
    fix = ""
    if finding.fix is not None:
        unsafe = finding.fix.applicability is Applicability.UNSAFE
        fix = f" [fix{' (unsafe)' if unsafe else ''}: {finding.fix.description}]"
    return types.Diagnostic(
        range=_range(lines, finding),
        severity=_SEVERITY[finding.severity],
        code=finding.rule,
        code_description=types.CodeDescription(href=url) if url else None,
        source="migrate",
        message=finding.message + fix,
    )


def _not_analysed(reason: str, severity: types.DiagnosticSeverity) -> types.Diagnostic:
    """The one diagnostic that says why a buffer was not analysed (or not whole)."""
    start = types.Position(line=0, character=0)
    return types.Diagnostic(
        range=types.Range(start=start, end=start),
        severity=severity,
        source="migrate",
        message=reason,
    )


def _syntax_error(reason: str, lines: Sequence[str]) -> types.Diagnostic | None:
    """The diagnostic of a buffer that does not parse, at the error; None for other failures."""
    from migrator.engine.python_reports import syntax_error_at

    at = syntax_error_at(reason)
    if at is None:
        return None
    line, column = at
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    start = types.Position(line=max(line - 1, 0), character=_utf16(text, column))
    return types.Diagnostic(
        range=types.Range(start=start, end=start),
        severity=types.DiagnosticSeverity.Error,
        source="migrate",
        message=f"{reason}; the other diagnostics are from the last text that parsed",
    )


def publish(ls: MigrateServer, uri: str) -> None:
    """Scan the buffer and publish its diagnostics (an empty list clears them). While the
    buffer does not parse, the last findings stay, with one diagnostic for the syntax error
    (an editor that cleared them would flicker on every keystroke)."""
    document = _opened(ls.workspace.text_documents, uri)
    if document is None:
        return
    located = _root_and_relative(ls, uri)
    analysis = BufferAnalysis()
    if located is not None:
        root, relative = located
        analysis = _analyse(ls, root, relative, _buffer_bytes(document.source), fixes=False)
    lines = document.source.splitlines()
    syntax = _syntax_error(analysis.failure, lines) if analysis.failure else None
    if syntax is None:
        ls.published[uri] = analysis.findings
    findings = ls.published.get(uri, ()) if syntax is not None else analysis.findings
    diagnostics = [_diagnostic(lines, finding) for finding in findings]
    if syntax is not None:
        diagnostics.append(syntax)
    elif analysis.failure:
        diagnostics.append(_not_analysed(analysis.failure, types.DiagnosticSeverity.Warning))
    if analysis.skipped:
        diagnostics.append(_not_analysed(analysis.skipped, types.DiagnosticSeverity.Information))
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, version=document.version, diagnostics=diagnostics)
    )


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: MigrateServer, params: types.DidOpenTextDocumentParams) -> None:
    publish(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: MigrateServer, params: types.DidChangeTextDocumentParams) -> None:
    """Analyse once the edits settle: a change followed within ``SETTLE_SECONDS`` by another
    leaves the analysis to the later one."""
    await asyncio.sleep(SETTLE_SECONDS)
    document = _opened(ls.workspace.text_documents, params.text_document.uri)
    if document is None or document.version != params.text_document.version:
        return
    publish(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: MigrateServer, params: types.DidSaveTextDocumentParams) -> None:
    publish(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: MigrateServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.published.pop(params.text_document.uri, None)
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
    )


#: The kind of the fix-all action: an editor asking for ``source.fixAll`` (or ``source``)
#: on save gets it; ``.migrate`` lets a user ask for migrate's alone.
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.migrate"


def _covers(asked: str, kind: str) -> bool:
    """An ``only`` entry asks for ``kind`` when it is that kind or a prefix of it (LSP)."""
    return kind == asked or kind.startswith(f"{asked}.")


def _asks_fix_all(only: Sequence[str]) -> bool:
    return any(_covers(str(asked), FIX_ALL_KIND) for asked in only)


def _asks_quick_fixes(only: Sequence[str]) -> bool:
    return any(_covers(str(asked), types.CodeActionKind.QuickFix.value) for asked in only)


def _whole_buffer_edit(old: str, new: str) -> types.TextEdit:
    """One edit replacing the whole buffer ``old`` with ``new``."""
    end = types.Position(line=len(old.splitlines()), character=0)
    return types.TextEdit(
        range=types.Range(start=types.Position(line=0, character=0), end=end), new_text=new
    )


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll]
    ),
)
def code_action(ls: MigrateServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """The fixes ``migrate fix`` makes to this buffer: the safe ones, then (labelled) those
    that also need review, each as one edit of the whole buffer."""
    document = _opened(ls.workspace.text_documents, params.text_document.uri)
    located = None if document is None else _root_and_relative(ls, params.text_document.uri)
    if document is None or located is None:
        return []
    root, relative = located
    analysis = _analyse(ls, root, relative, _buffer_bytes(document.source), fixes=True)
    fixes = {level: (text, fixed) for level, text, fixed in analysis.fixes}
    only = params.context.only
    # ``source.fixAll`` (fix on save): the safe fixes, as ``migrate fix`` applies them
    safe_all, _ = fixes.get(Applicability.SAFE, (None, ()))
    fix_all = (
        []
        if safe_all is None or (only is not None and not _asks_fix_all(only))
        else [
            types.CodeAction(
                title="migrate: fix all (safe fixes)",
                kind=FIX_ALL_KIND,
                edit=types.WorkspaceEdit(
                    changes={
                        params.text_document.uri: [_whole_buffer_edit(document.source, safe_all)]
                    }
                ),
            )
        ]
    )
    if only is not None and not _asks_quick_fixes(only):
        return fix_all
    actions: list[types.CodeAction] = []
    safe_text: str | None = None
    for level, title in (
        (Applicability.SAFE, "migrate: apply {n} safe fix{es}"),
        (Applicability.UNSAFE, "migrate: apply {n} fix{es} including unsafe ones (review them)"),
    ):
        new_text, fixed = fixes.get(level, (None, ()))
        if new_text is None or new_text == safe_text:
            continue
        if level is Applicability.SAFE:
            safe_text = new_text
        edit = _whole_buffer_edit(document.source, new_text)
        codes = {finding.rule for finding in fixed}
        actions.append(
            types.CodeAction(
                title=title.format(n=len(fixed), es="es" if len(fixed) != 1 else ""),
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[d for d in params.context.diagnostics if d.code in codes],
                edit=types.WorkspaceEdit(changes={params.text_document.uri: [edit]}),
                is_preferred=level is Applicability.SAFE,
            )
        )
    return actions + fix_all


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: MigrateServer, params: types.HoverParams) -> types.Hover | None:
    """The rule's summary, what it means on ROCm, its fact and its page, for the findings under
    the cursor."""
    from migrator.engine.registry import rule_by_code
    from migrator.output.escape import markdown_code, markdown_inline
    from migrator.output.rule_docs import facts_url, rule_url, summary

    document = _opened(ls.workspace.text_documents, params.text_document.uri)
    if document is None:
        return None
    lines = document.source.splitlines()
    line = params.position.line
    parts = []
    for finding in ls.published.get(params.text_document.uri, ()):
        span = _range(lines, finding)
        if not span.start.line <= line <= span.end.line:
            continue
        rule = rule_by_code(finding.rule)
        fact, page = facts_url(rule.fact), rule_url(finding.rule)
        parts.append(
            # the message quotes scanned code: its code spans kept, no tag or link outside them
            f"**{finding.rule} {markdown_code(rule.name)}**: {markdown_inline(finding.message)}"
            f"\n\n{summary(rule)}\n\n"
            f"On ROCm: `{rule.impact.consequence}`. Fact: {rule.fact}"
            + (f" ([rocm-facts]({fact}))" if fact else "")
            + (f" · [{finding.rule}]({page})" if page else "")
            + f" · `migrate explain {finding.rule}`"
        )
    if not parts:
        return None
    return types.Hover(
        contents=types.MarkupContent(
            kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)
        )
    )


def main() -> None:
    """Serve over stdio until the client exits."""
    try:
        serve_stdio(server.protocol)
    finally:
        server.analyst.close()
