"""The values an expression of a project's build files may hold, for the reader of its Python
builds (``migrator.kernels.pybuild_reader``): strings, joins from ``__file__`` and ``..``,
f-strings, list arithmetic, comprehensions, subscripts, ``glob``/``os.listdir`` calls and the
project's own helper functions; None where a value cannot be known (never a guess)."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import replace

from migrator.kernels.buildmodel import meet
from migrator.kernels.pybuild_names import _Imports, _is_list, _Where
from migrator.kernels.pyloops import folder_next
from migrator.kernels.pyvalues import (
    ANCHOR,
    Val,
    concat,
    dirname,
    join,
    narrow,
    product,
    suffix_test,
)


class _Values:
    """Abstract evaluation of expressions; the base of ``_Reader``, which holds the state below
    and follows statements (a loop's bindings, a helper function's body)."""

    #: the file read, its folder, the names bound so far, the names bound to lists, its imports
    path: str
    folder: str
    env: dict[str, list[Val]]
    lists: set[str]
    imports: _Imports

    def _bind_loop(self, target: ast.expr, iterable: ast.expr, where: _Where) -> None:
        """Bind a loop's (or comprehension's) target to what it iterates (``_Reader``)."""
        raise NotImplementedError

    def _helper(self, call: ast.Call, where: _Where) -> list[Val] | None:
        """What a project function returns for this call (``_Reader``)."""
        raise NotImplementedError

    # --- values ---------------------------------------------------------------------------

    def eval(self, node: ast.expr | None, where: _Where) -> list[Val] | None:
        """The values ``node`` may hold, or None when unknown (also when it nests too deep to
        follow)."""
        if node is None:
            return None
        try:
            found = self._eval(node, where)
        except RecursionError:
            return None
        if found is None:
            return None
        out: list[Val] = []
        for value in found:
            context = meet(where.context, value.context)
            if context is None:
                continue
            out.append(replace(value, context=context, gate=value.gate or where.gate))
        return out

    def _eval(self, node: ast.expr, where: _Where) -> list[Val] | None:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return [Val(node.value, where.context, self.folder)]
            return None
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node, where)
        if isinstance(node, ast.Name):
            if node.id == "__file__":
                return [Val(ANCHOR + self.path, where.context, self.folder)]
            return self.env.get(node.id)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            out: list[Val] = []
            for element in node.elts:
                inner = element.value if isinstance(element, ast.Starred) else element
                out.extend(self.eval(inner, where) or [])
            return out
        if isinstance(node, ast.BinOp):
            return self._binop(node, where)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return self._comprehension(node, where)
        if isinstance(node, ast.IfExp):
            both = (self.eval(node.body, where) or []) + (self.eval(node.orelse, where) or [])
            return both or None
        if isinstance(node, ast.Attribute):
            if node.attr == "parent":
                parent = self.eval(node.value, where)
                return None if parent is None else [dirname(v) for v in parent]
            return None
        if isinstance(node, ast.Subscript):
            return self._subscript(node, where)
        if isinstance(node, ast.Call):
            return self._call(node, where)
        return None

    def _fstring(self, node: ast.JoinedStr, where: _Where) -> list[Val] | None:
        parts: list[list[Val]] = []
        for index, part in enumerate(node.values):
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                parts.append([Val(part.value, where.context, self.folder)])
                continue
            inner = self.eval(part.value, where) if isinstance(part, ast.FormattedValue) else None
            if inner and len(inner) <= 16:
                parts.append(inner)
            elif index == 0 and folder_next(node.values):  # f"{HERE}/k.cu", not f"{name}_k.cu"
                parts.append([Val(ANCHOR + self.folder, where.context, self.folder)])
            else:
                parts.append([Val("*", where.context, self.folder)])
        if not parts:
            return None
        return product(parts, concat)

    def _binop(self, node: ast.BinOp, where: _Where) -> list[Val] | None:
        left = self.eval(node.left, where)
        right = self.eval(node.right, where)
        if isinstance(node.op, ast.Div):
            if left is None:
                left = [Val("", where.context, self.folder)]
            return None if right is None else product([left, right], join)
        if isinstance(node.op, ast.Add):
            if _is_list(node.left, self.lists) or _is_list(node.right, self.lists):
                if left is None and right is None:
                    return None
                return (left or []) + (right or [])
            if left is None or right is None:
                return None
            return product([left, right], concat)
        if isinstance(node.op, ast.Sub):
            return left
        return None

    def _comprehension(
        self, node: ast.ListComp | ast.GeneratorExp | ast.SetComp, where: _Where
    ) -> list[Val] | None:
        saved = dict(self.env)
        try:
            for generator in node.generators:
                self._bind_loop(generator.target, generator.iter, where)
                if isinstance(generator.target, ast.Name) and generator.target.id not in self.env:
                    return None
                for test in generator.ifs:
                    narrowed = suffix_test(test)
                    if narrowed is not None and narrowed[0] in self.env:
                        name, suffixes, keep = narrowed
                        self.env[name] = narrow(self.env[name], suffixes, keep)
            return self.eval(node.elt, where)
        finally:
            self.env = saved

    def _subscript(self, node: ast.Subscript, where: _Where) -> list[Val] | None:
        # ``Path(__file__).parents[1]``
        value = node.value
        if (
            isinstance(value, ast.Attribute)
            and value.attr == "parents"
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, int)
        ):
            inner = self.eval(value.value, where)
            if inner is None:
                return None
            for _ in range(node.slice.value + 1):
                inner = [dirname(v) for v in inner]
            return inner
        return None

    def _call(self, node: ast.Call, where: _Where) -> list[Val] | None:
        dotted = self.imports.dotted(node.func)
        last = dotted.rsplit(".", 1)[-1] if dotted else ""
        method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        args = node.args
        if (
            last == "join"
            and dotted.endswith(("path.join", "posixpath.join"))
            or dotted in {"os.path.join", "join"}
        ):
            return self._join_all(args, where)
        if last in {"Path", "PurePath", "PosixPath", "PurePosixPath"}:
            return (
                self._join_all(args, where)
                if args
                else [Val(ANCHOR + self.folder, where.context, self.folder)]
            )
        if dotted in {"os.path.dirname", "dirname", "posixpath.dirname"} and args:
            inner = self.eval(args[0], where)
            return None if inner is None else [dirname(v) for v in inner]
        if dotted in {"os.path.basename", "basename"} and args:
            inner = self.eval(args[0], where)
            return (
                None
                if inner is None
                else [replace(v, text=v.text.rsplit("/", 1)[-1].replace(ANCHOR, "")) for v in inner]
            )
        if (
            dotted
            in {
                "os.path.abspath",
                "os.path.realpath",
                "os.path.normpath",
                "os.path.expanduser",
                "os.fspath",
                "str",
                "sorted",
                "list",
                "set",
                "tuple",
                "reversed",
                "glob.glob",
                "glob.iglob",
                "glob",
                "iglob",
            }
            and args
        ):
            return self.eval(args[0], where)
        if dotted in {"os.getcwd", "os.curdir"}:
            return [Val(ANCHOR + self.folder, where.context, self.folder)]
        if dotted in {"os.listdir", "listdir", "os.scandir"}:
            return [Val("*", where.context, self.folder)]
        if method and isinstance(node.func, ast.Attribute):
            return self._method(node, method, where)
        return self._helper(node, where)

    def _method(self, node: ast.Call, method: str, where: _Where) -> list[Val] | None:
        assert isinstance(node.func, ast.Attribute)
        if method in {"resolve", "absolute", "expanduser", "as_posix", "strip", "rstrip"}:
            return self.eval(node.func.value, where)
        if method in {"glob", "rglob"} and node.args:
            base = self.eval(node.func.value, where) or [Val("", where.context, self.folder)]
            pattern = self.eval(node.args[0], where)
            if pattern is None:
                return None
            if method == "rglob":
                pattern = [replace(v, text=f"**/{v.text}") for v in pattern]
            return product([base, pattern], join)
        if method == "joinpath":
            return self._join_all([node.func.value, *node.args], where)
        if method == "replace" and len(node.args) == 2:
            old = node.args[0]
            new = node.args[1]
            inner = self.eval(node.func.value, where)
            if (
                inner is not None
                and isinstance(old, ast.Constant)
                and isinstance(new, ast.Constant)
                and isinstance(old.value, str)
                and isinstance(new.value, str)
            ):
                return [replace(v, text=v.text.replace(old.value, new.value)) for v in inner]
            return None
        return self._helper(node, where)

    def _join_all(self, args: Sequence[ast.expr], where: _Where) -> list[Val] | None:
        parts: list[list[Val]] = []
        for index, argument in enumerate(args):
            if isinstance(argument, ast.Starred):
                return None
            found = self.eval(argument, where)
            if found is None or not found:
                # an unknown leading folder (``this_dir``) is the file's folder
                found = [Val("" if index == 0 else "*", where.context, self.folder)]
            parts.append(found)
        return product(parts, join) if parts else None
