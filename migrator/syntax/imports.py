"""Resolve names to qualified names from a module's own import statements.

Scope analysis (libcst's QualifiedNameProvider) costs about ten times the parse; the import table
is enough for matching library APIs: ``import pynvml as nv`` makes ``nv.nvmlInit`` resolve to
``pynvml.nvmlInit`` while a local ``def flash_attn_func`` stays unresolved.

``ImportTable.from_module`` reads the table from the concrete tree; ``imports_from_ast`` builds
the same table from an ``ast`` tree, for partial parsing (``migrator.engine.partial``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence

import libcst as cst

from migrator.syntax.flags import flag_package, flag_target, may_bind, module_flags
from migrator.syntax.parse import parse_ast
from migrator.syntax.reexports import ExportSlice, absolute, rewrite


def dotted_name(node: cst.BaseExpression | cst.ImportFrom | cst.Attribute | cst.Name) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    current: cst.CSTNode = node
    while isinstance(current, cst.Attribute):
        parts.append(current.attr.value)
        current = current.value
    if isinstance(current, cst.Name):
        parts.append(current.value)
        return ".".join(reversed(parts))
    return None


class ImportTable:
    """Maps each locally bound name to the dotted module path or object it was imported as."""

    __slots__ = ("bindings", "modules", "attribute_flags", "_exports")

    def __init__(self, exports: ExportSlice | None = None) -> None:
        self.bindings: dict[str, str] = {}
        self.modules: set[str] = set()
        #: attributes that hold an availability flag (``self.use_xformers``) -> its package
        #: (``migrator.syntax.flags``; the flag names themselves are ``bindings``)
        self.attribute_flags: dict[str, str] = {}
        #: names the project re-exports through its own modules (``migrator.syntax.reexports``)
        self._exports = exports

    @classmethod
    def from_module(
        cls,
        module: cst.Module,
        exports: ExportSlice | None = None,
        text: str | None = None,
        tree: ast.Module | None = None,
    ) -> ImportTable:
        """The table of a concrete tree; with ``text`` (the module's source, and its ``ast``
        when the caller has it), its availability flags too, as ``imports_from_ast`` reads
        them."""
        table = cls(exports)
        table._collect(module.body)
        if exports is not None:
            table.follow_reexports(exports)
        if text is not None and table.may_bind_flags(text):
            tree = tree if tree is not None else parse_ast(text)
            if tree is not None:
                table.bind_flags(tree)
        return table

    def may_bind_flags(self, text: str) -> bool:
        """Whether a file with this table and ``text`` may bind availability flags: its text
        may bind its own (``flags.may_bind``), or it imports one."""
        return may_bind(text) or any(map(flag_package, self.bindings.values()))

    def bind_flags(self, tree: ast.Module) -> None:
        """Bind the file's availability flags (``migrator.syntax.flags``): a name to
        ``flag_target(package)`` (unless an import binds it), an attribute in
        ``attribute_flags``."""
        flags = module_flags(tree, self.resolve_ast)
        for name, package in flags.names.items():
            self.bindings.setdefault(name, flag_target(package))
        self.attribute_flags.update(flags.attributes)

    def opt_in(self, node: cst.CSTNode) -> str | None:
        """How the code spells an opt-in backend option (``args.use_apex``, ``use_xformers``;
        ``migrator.syntax.options``), None when ``node`` is no such option."""
        options = self._exports.opt_ins if self._exports is not None else ()
        if not options:
            return None
        if type(node) is cst.Name:
            assert isinstance(node, cst.Name)
            name = node.value
        elif type(node) is cst.Attribute:
            assert isinstance(node, cst.Attribute)
            name = node.attr.value
        else:
            return None
        if name not in options or self.resolve(node) is not None:
            return None
        return dotted_name(node)

    def flag_of(self, node: cst.CSTNode) -> str | None:
        """The package an availability flag (a name or attribute, see ``bind_flags``) probes."""
        found = flag_package(self.resolve(node))
        if found is None and type(node) is cst.Attribute:
            assert isinstance(node, cst.Attribute)
            if self.resolve(node) is None:
                found = self.attribute_flags.get(node.attr.value)
        return found

    def follow_reexports(self, exports: ExportSlice) -> None:
        """Bind names imported from a project module that re-exports them to their origin."""
        for local, target in list(self.bindings.items()):
            origin = rewrite(target, exports.exports)
            if origin != target:
                self.bindings[local] = origin
                self.modules.add(origin)
                if "." in origin:
                    self.modules.add(origin.rsplit(".", 1)[0])

    def _collect(self, body: object) -> None:
        statements = body if isinstance(body, (list, tuple)) else ()
        for statement in statements:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Import):
                        self._add_import(small)
                    elif isinstance(small, cst.ImportFrom):
                        self._add_import_from(small)
            elif isinstance(statement, cst.BaseCompoundStatement):
                self._collect_compound(statement)

    def _collect_compound(self, statement: cst.BaseCompoundStatement) -> None:
        if isinstance(statement, (cst.Try, cst.TryStar)):
            before = dict(self.bindings)
            self._collect_block(statement)
            _forget_fallbacks(self.bindings, before, _cst_fallbacks(statement.handlers))
            return
        self._collect_block(statement)

    def _collect_block(self, statement: cst.BaseCompoundStatement) -> None:
        if isinstance(statement, cst.Match):
            for case in statement.cases:
                self._collect_compound(case)  # type: ignore[arg-type]
            return
        block = statement.body
        if isinstance(block, cst.IndentedBlock):
            self._collect(block.body)
        elif isinstance(block, cst.SimpleStatementSuite):
            self._collect([cst.SimpleStatementLine(body=block.body)])
        for attribute in ("orelse", "finalbody"):
            extra = getattr(statement, attribute, None)
            if isinstance(extra, (cst.Else, cst.Finally)):
                self._collect_compound(extra)  # type: ignore[arg-type]
            elif isinstance(extra, cst.If):
                self._collect_compound(extra)
        for handler in getattr(statement, "handlers", ()):
            self._collect_compound(handler)

    def _add_import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            self.modules.add(full)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.bindings[alias.asname.name.value] = full
            else:
                head = full.split(".", 1)[0]
                self.bindings[head] = head

    def _add_import_from(self, node: cst.ImportFrom) -> None:
        if node.relative:
            self._add_relative(node)
            return
        if node.module is None:
            return
        module = dotted_name(node.module)
        if module is None:
            return
        self.modules.add(module)
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            if not isinstance(alias.name, cst.Name):
                continue
            local = alias.name.value
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.bindings[local] = f"{module}.{alias.name.value}"

    def _add_relative(self, node: cst.ImportFrom) -> None:
        """``from .utils import flash_attn_func``: bound only when the project module re-exports
        an external name (a project's own helper stays unresolved, as before)."""
        exports = self._exports
        if exports is None or isinstance(node.names, cst.ImportStar):
            return
        dots = "." * len(node.relative)
        tail = dotted_name(node.module) if node.module is not None else ""
        module = absolute(dots + (tail or ""), exports.module, exports.package)
        if module is None:
            return
        for alias in node.names:
            if not isinstance(alias.name, cst.Name):
                continue
            target = f"{module}.{alias.name.value}"
            origin = rewrite(target, exports.exports)
            if origin == target:
                continue
            local = alias.name.value
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.bindings[local] = origin

    def resolve(self, node: cst.CSTNode) -> str | None:
        """Qualified name of a Name/Attribute chain whose head was imported, else None."""
        parts: list[str] = []
        current: cst.CSTNode = node
        # by type identity: libcst's classes are ABCs, whose failing ``isinstance`` is slow, and
        # these concrete ones have no subclasses
        while type(current) is cst.Attribute:
            assert isinstance(current, cst.Attribute)
            parts.append(current.attr.value)
            current = current.value
        if type(current) is not cst.Name:
            return None
        assert isinstance(current, cst.Name)
        return self._qualified(current.value, parts)

    def _qualified(self, head: str, attributes: list[str]) -> str | None:
        """``head`` resolved through its import, followed by ``attributes`` (given as a chain is
        read from its outer end: ``c``, ``b`` for ``a.b.c``), re-exports followed; None when no
        import binds ``head``."""
        base = self.bindings.get(head)
        if base is None:
            return None
        qualified = ".".join([base, *reversed(attributes)])
        if self._exports is not None:
            return rewrite(qualified, self._exports.exports)
        return qualified

    def may_resolve(self, qualified: Iterable[str]) -> bool:
        """Whether some Name/Attribute chain of the file could resolve to one of ``qualified``:
        a binding is one of them or a module above one, or a project module re-exporting names
        lies at or under or above it (``rewrite`` may then give anything)."""
        wanted = tuple(qualified)
        modules = tuple(self._exports.exports) if self._exports is not None else ()
        for base in self.bindings.values():
            if any(name == base or name.startswith(base + ".") for name in wanted):
                return True
            if any(
                module == base or module.startswith(base + ".") or base.startswith(module + ".")
                for module in modules
            ):
                return True
        return False

    def renames_to(self, last_names: set[str]) -> bool:
        """Whether a re-export this table follows may give a name whose last part is one of
        ``last_names`` (else a resolved name ends in a part its own text spells)."""
        if self._exports is None:
            return False
        return any(
            target.rsplit(".", 1)[-1] in last_names
            for names in self._exports.exports.values()
            for target in names.values()
        )

    def resolve_ast(self, node: ast.expr) -> str | None:
        """``resolve`` for an ``ast`` Name/Attribute chain (the same answer on the same code)."""
        parts: list[str] = []
        current = node
        while isinstance(current, ast.Attribute):
            parts.append(current.attr)
            current = current.value
        if not isinstance(current, ast.Name):
            return None
        return self._qualified(current.id, parts)

    def local_names_for(self, qualified: str) -> list[str]:
        """Local spellings that resolve to ``qualified`` (for building replacement nodes)."""
        return [local for local, full in self.bindings.items() if full == qualified]


def _forget_fallbacks(bindings: dict[str, str], before: dict[str, str], names: set[str]) -> None:
    """After a ``try``: a name its body's import bound that a handler binds again to a fallback
    (a function, a class, a value other than ``None``/``False``) is either, so it resolves to
    neither (``except ImportError: class RMSNorm(nn.Module): ...`` after ``from apex... import
    FusedRMSNorm as RMSNorm``: a use runs the portable class where apex is missing)."""
    for name in names:
        if name in bindings and bindings[name] != before.get(name):
            del bindings[name]


def _cst_fallbacks(handlers: Sequence[cst.ExceptHandler | cst.ExceptStarHandler]) -> set[str]:
    """Names a handler that does not end by raising defines as a fallback (see
    ``_forget_fallbacks``)."""
    names: set[str] = set()
    for handler in handlers:
        block = handler.body
        statements: list[cst.BaseStatement] = (
            list(block.body)
            if isinstance(block, cst.IndentedBlock)
            else [cst.SimpleStatementLine(body=block.body)]
            if isinstance(block, cst.SimpleStatementSuite)
            else []
        )
        last = statements[-1] if statements else None
        if (
            isinstance(last, cst.SimpleStatementLine)
            and last.body
            and isinstance(last.body[-1], cst.Raise)
        ):
            continue
        for statement in statements:
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                names.add(statement.name.value)
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign) and not _absent_value(small.value):
                        names.update(
                            t.target.value for t in small.targets if isinstance(t.target, cst.Name)
                        )
                    elif (
                        isinstance(small, cst.AnnAssign)
                        and small.value is not None
                        and not _absent_value(small.value)
                        and isinstance(small.target, cst.Name)
                    ):
                        names.add(small.target.value)
    return names


def _absent_value(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Name) and value.value in ("None", "False")


def _ast_fallbacks(handlers: Sequence[ast.ExceptHandler]) -> set[str]:
    """``_cst_fallbacks`` read from ``ast``."""
    names: set[str] = set()
    for handler in handlers:
        if handler.body and isinstance(handler.body[-1], ast.Raise):
            continue
        for statement in handler.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(statement.name)
            elif isinstance(statement, ast.Assign) and not _ast_absent(statement.value):
                names.update(t.id for t in statement.targets if isinstance(t, ast.Name))
            elif (
                isinstance(statement, ast.AnnAssign)
                and statement.value is not None
                and not _ast_absent(statement.value)
                and isinstance(statement.target, ast.Name)
            ):
                names.add(statement.target.id)
    return names


def _ast_absent(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and (value.value is None or value.value is False)


def imports_from_ast(
    tree: ast.Module, exports: ExportSlice | None = None, text: str | None = None
) -> ImportTable:
    """The import table of the whole file: what ``ImportTable.from_module`` reads from the
    concrete tree, in the same order (later bindings win), re-exports followed alike, with the
    file's availability flags (``text``, the file's source: a file that binds none is skipped
    at a glance, as ``from_module`` does)."""
    table = ImportTable(exports)
    _collect(table, tree.body, exports)
    if exports is not None:
        table.follow_reexports(exports)
    if text is None or table.may_bind_flags(text):
        table.bind_flags(tree)
    return table


_AST_TRY = (ast.Try, getattr(ast, "TryStar", ast.Try))


def _collect(
    table: ImportTable, statements: Sequence[ast.stmt], exports: ExportSlice | None
) -> None:
    # same order as ImportTable._collect: a block, then orelse, finalbody, then handlers
    for statement in statements:
        if isinstance(statement, ast.Import):
            _add_import(table, statement)
        elif isinstance(statement, ast.ImportFrom):
            _add_import_from(table, statement, exports)
        elif isinstance(statement, ast.Match):
            for case in statement.cases:
                _collect(table, case.body, exports)
        elif isinstance(
            statement,
            (
                ast.FunctionDef,
                ast.AsyncFunctionDef,
                ast.ClassDef,
                ast.With,
                ast.AsyncWith,
            ),
        ):
            _collect(table, statement.body, exports)
        elif isinstance(statement, (ast.If, ast.For, ast.AsyncFor, ast.While)):
            _collect(table, statement.body, exports)
            _collect(table, statement.orelse, exports)
        elif isinstance(statement, _AST_TRY):
            before = dict(table.bindings)
            _collect(table, statement.body, exports)
            _collect(table, statement.orelse, exports)
            _collect(table, statement.finalbody, exports)
            for handler in statement.handlers:
                _collect(table, handler.body, exports)
            _forget_fallbacks(table.bindings, before, _ast_fallbacks(statement.handlers))


def _add_import(table: ImportTable, node: ast.Import) -> None:
    for alias in node.names:
        full = alias.name
        table.modules.add(full)
        if alias.asname is not None:
            table.bindings[alias.asname] = full
        else:
            head = full.split(".", 1)[0]
            table.bindings[head] = head


def _add_import_from(table: ImportTable, node: ast.ImportFrom, exports: ExportSlice | None) -> None:
    if node.level:
        _add_relative(table, node, exports)
        return
    if node.module is None:
        return
    table.modules.add(node.module)
    for alias in node.names:
        if alias.name == "*":
            return
        table.bindings[alias.asname or alias.name] = f"{node.module}.{alias.name}"


def _add_relative(table: ImportTable, node: ast.ImportFrom, exports: ExportSlice | None) -> None:
    """As ``ImportTable._add_relative``: bound only when a project module re-exports the name."""
    if exports is None or any(alias.name == "*" for alias in node.names):
        return
    module = absolute("." * node.level + (node.module or ""), exports.module, exports.package)
    if module is None:
        return
    for alias in node.names:
        target = f"{module}.{alias.name}"
        origin = rewrite(target, exports.exports)
        if origin != target:
            table.bindings[alias.asname or alias.name] = origin
