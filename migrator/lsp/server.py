"""The language server: one scan of the open buffer per change, published as diagnostics; the
fixes of ``migrate fix`` for that buffer as code actions; the rule's summary and fact on hover.

A buffer is scanned as the file it is in its project: the nearest folder above it holding a
``pyproject.toml`` with ``[tool.migrate]``, else the workspace folder, else its own folder, is
the root whose configuration applies. Positions are converted to the UTF-16 units LSP counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

import migrator
from migrator.engine.runner import fix_text, scan_text
from migrator.files.config import find_pyproject
from migrator.model import Applicability, Finding, Severity

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
    Severity.HYGIENE: types.DiagnosticSeverity.Hint,
}


class MigrateServer(LanguageServer):
    """The server, with the findings last published per document (for hover)."""

    def __init__(self) -> None:
        super().__init__(
            "migrate", migrator.__version__, text_document_sync_kind=types.TextDocumentSyncKind.Full
        )
        self.published: dict[str, tuple[Finding, ...]] = {}


server = MigrateServer()


def _root_and_relative(ls: LanguageServer, document: TextDocument) -> tuple[Path, str] | None:
    """The scan root for a buffer and the buffer's path under it (None: not a file on disk)."""
    if not document.uri.startswith("file:"):
        return None
    path = Path(document.path).absolute()
    config = find_pyproject(path.parent)
    if config is not None:
        root = config.parent
    else:
        folders = [Path(to_fs_path(folder.uri) or "") for folder in ls.workspace.folders.values()]
        containing = [folder for folder in folders if path.is_relative_to(folder)]
        root = max(containing, key=lambda folder: len(folder.parts)) if containing else path.parent
    return root, path.relative_to(root).as_posix()


def _utf16(line: str, column: int) -> int:
    """LSP's character offset (UTF-16 code units) of the 1-based code-point ``column``."""
    prefix = line[: max(column - 1, 0)]
    return len(prefix.encode("utf-16-le")) // 2


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


def publish(ls: MigrateServer, uri: str) -> None:
    """Scan the buffer and publish its diagnostics (an empty list clears them)."""
    document = ls.workspace.get_text_document(uri)
    located = _root_and_relative(ls, document)
    findings: tuple[Finding, ...] = ()
    if located is not None:
        root, relative = located
        try:
            run = scan_text(root, relative, document.source.encode("utf-8", "surrogateescape"))
        except migrator.errors.MigrateError as error:  # a broken config: say so once
            ls.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Error, message=f"migrate: {error}")
            )
        else:
            findings = tuple(f for file in run.scan.files for f in file.findings)
    ls.published[uri] = findings
    lines = document.source.splitlines()
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(
            uri=uri,
            version=document.version,
            diagnostics=[_diagnostic(lines, finding) for finding in findings],
        )
    )


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: MigrateServer, params: types.DidOpenTextDocumentParams) -> None:
    publish(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: MigrateServer, params: types.DidChangeTextDocumentParams) -> None:
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


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll]
    ),
)
def code_action(ls: MigrateServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """The fixes ``migrate fix`` makes to this buffer: the safe ones, then (labelled) those
    that also need review, each as one edit of the whole buffer."""
    document = ls.workspace.get_text_document(params.text_document.uri)
    located = _root_and_relative(ls, document)
    if located is None:
        return []
    root, relative = located
    data = document.source.encode("utf-8", "surrogateescape")
    actions: list[types.CodeAction] = []
    safe_text: str | None = None
    for level, title in (
        (Applicability.SAFE, "migrate: apply {n} safe fix{es}"),
        (Applicability.UNSAFE, "migrate: apply {n} fix{es} including unsafe ones (review them)"),
    ):
        new_text, fixed = fix_text(root, relative, data, level)
        if new_text is None or new_text == safe_text:
            continue
        if level is Applicability.SAFE:
            safe_text = new_text
        lines = document.source.splitlines()
        end = types.Position(line=len(lines), character=0)
        edit = types.TextEdit(
            range=types.Range(start=types.Position(line=0, character=0), end=end),
            new_text=new_text,
        )
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
    return actions


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: MigrateServer, params: types.HoverParams) -> types.Hover | None:
    """The rule's summary, what it means on ROCm, its fact and its page, for the findings under
    the cursor."""
    from migrator.engine.registry import rule_by_code
    from migrator.output.escape import markdown_code, markdown_inline
    from migrator.output.rule_docs import facts_url, rule_url, summary

    document = ls.workspace.get_text_document(params.text_document.uri)
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
            f"On ROCm: `{rule.consequence}`. Fact: {rule.fact}"
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
    server.start_io()
