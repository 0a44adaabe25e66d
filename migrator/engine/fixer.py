"""Apply chosen fixes: CST node replacements plus scheduled imports for Python, span edits for
text files. Every rewritten Python text must parse and compile, or the file keeps its old text."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import libcst as cst

from migrator.engine.context import RawPythonFinding, RawTextFinding
from migrator.engine.import_placement import place_imports
from migrator.model import Applicability


class FixError(Exception):
    """The fixes for one file were dropped; the message says why (one line)."""


def eligible(raw: RawPythonFinding | RawTextFinding, level: Applicability) -> bool:
    """Whether a finding's fix is applied at ``level`` (SAFE: safe only; UNSAFE: safe and unsafe)."""
    if raw.replacement is None or raw.applicability is Applicability.NONE:
        return False
    if raw.applicability is Applicability.SAFE:
        return True
    return level is Applicability.UNSAFE


class _Replacer(cst.CSTTransformer):
    def __init__(
        self, replacements: dict[int, RawPythonFinding], extra: dict[int, cst.CSTNode]
    ) -> None:
        super().__init__()
        self.replacements = replacements
        self.extra = extra

    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]:
        raw = self.replacements.get(id(original_node))
        if raw is None or raw.replacement is None:
            return self.extra.get(id(original_node), updated_node)
        replacement = raw.replacement
        # When children were rewritten too, the outer rewrite wins for this pass; the engine's
        # fix loop re-scans and applies what is left.
        return replacement() if callable(replacement) else replacement


def incomplete_groups(chosen: Iterable[RawPythonFinding]) -> set[str]:
    """The ``together`` keys of which fewer fixes are chosen than the group holds: none of them
    may apply (a call dispatched without its import made optional, or the reverse)."""
    counts: dict[str, int] = {}
    sizes: dict[str, int] = {}
    for raw in chosen:
        if raw.together:
            counts[raw.together] = counts.get(raw.together, 0) + 1
            sizes[raw.together] = raw.together_size
    return {key for key, count in counts.items() if count < sizes[key]}


def apply_python_fixes(module: cst.Module, chosen: Sequence[RawPythonFinding], path: str) -> str:
    """The module's code with the chosen replacements and their imports applied."""
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

    replacements: dict[int, RawPythonFinding] = {}
    extra: dict[int, cst.CSTNode] = {}
    for raw in chosen:
        replacements.setdefault(id(raw.node), raw)
        for node, new in raw.extra_edits:
            extra.setdefault(id(node), new)
    try:
        new_module = module.visit(_Replacer(replacements, extra))
        context = CodemodContext()
        adds = {(module_name, obj) for raw in chosen for module_name, obj in raw.imports}
        removes = {tuple(item) for raw in chosen for item in raw.remove_imports}
        if removes:
            for item in sorted(removes, key=str):
                module_name, obj, *rest = item
                RemoveImportsVisitor.remove_unused_import(
                    context, str(module_name), obj, rest[0] if rest else None
                )
            new_module = RemoveImportsVisitor(context).transform_module(new_module)
        if adds:
            new_module = place_imports(new_module, adds)
            for module_name, obj in sorted(adds, key=str):
                AddImportsVisitor.add_needed_import(context, module_name, obj)
            new_module = AddImportsVisitor(context).transform_module(new_module)
        code = new_module.code
    except Exception as error:  # a rule's replacement broke the tree: drop this file's fixes
        raise FixError(
            f"rewrite failed ({type(error).__name__}: {error}); file left unchanged"
        ) from None
    check_python(code, path)
    return code


def check_python(code: str, path: str) -> None:
    """Raise FixError unless ``code`` parses with libcst and compiles with CPython."""
    try:
        cst.parse_module(code)
        compile(code, path, "exec", dont_inherit=True)
    except (cst.ParserSyntaxError, SyntaxError, ValueError) as error:
        raise FixError(f"rewritten file would not compile ({error}); file left unchanged") from None


def apply_text_edits(text: str, chosen: Sequence[RawTextFinding]) -> str:
    """Apply non-overlapping span replacements, first come first served."""
    edits = sorted(
        {
            (raw.start, raw.end, raw.replacement or "")
            for raw in chosen
            if raw.replacement is not None
        }
    )
    out: list[str] = []
    cursor = 0
    for start, end, replacement in edits:
        if start < cursor:
            continue
        out.append(text[cursor:start])
        out.append(replacement)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)
