"""Abstract reading of one Python file of a project's builds (``migrator.kernels.pybuild``):
statements run once each with the branch they sit in, extension calls become ``Extension``
records, calls of the project's own builder functions are followed with their arguments."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import replace

from migrator.kernels.build_flags import build_flags
from migrator.kernels.buildmodel import (
    BOTH,
    CUDA,
    GATE,
    GENERATED,
    GPU_SUFFIXES,
    JIT,
    KERNEL_SUFFIXES,
    LINK,
    ROCM,
    SETUP,
    UNREAD,
    BuildModel,
    BuildNote,
    Extension,
    anchor_key,
    meet,
    negate,
)
from migrator.kernels.pybuild_names import (
    _CPP_EXTENSION,
    _EXTENSION_CLASSES,
    _FINDS_CUDA,
    _MAX_DEPTH,
    _SETUPTOOLS,
    CUDA_LIBRARY,
    _arguments,
    _branch_context,
    _Builder,
    _chain_has_rocm,
    _gate_of,
    _Imports,
    _is_list,
    _list_parameters,
    _module_matches,
    _negated,
    _one_string,
    _parameters,
    _Registry,
    _short,
    _Where,
    call_anchor,
)
from migrator.kernels.pybuild_values import _Values
from migrator.kernels.pyloops import macro_names, tuple_loop_bindings
from migrator.kernels.pyvalues import ANCHOR, PARAM, Val, narrow, suffix_test, to_patterns
from migrator.knowledge.vendor_tokens import names_rocm


class _Reader(_Values):
    """Abstract reading of one Python file: names hold ``Val`` lists, statements run once each
    with the branch they sit in, extension calls become ``Extension`` records."""

    def __init__(
        self,
        path: str,
        tree: ast.Module,
        registry: _Registry,
        model: BuildModel,
        *,
        env: dict[str, list[Val]] | None = None,
        depth: int = 0,
        record_at: tuple[str, int] | None = None,
        via: str = "",
        stack: tuple[tuple[str, int], ...] = (),
        record: bool = True,
    ) -> None:
        self.path = path
        self.folder = path.rsplit("/", 1)[0] if "/" in path else ""
        self.setup = path.rsplit("/", 1)[-1] == "setup.py"
        self.tree = tree
        self.registry = registry
        self.model = model
        self.env: dict[str, list[Val]] = dict(env or {})
        self.lists: set[str] = set()
        self.kwargs: dict[str, list[Val]] = {}
        self.depth = depth
        self.record_at = record_at
        self.via = via
        self.stack = stack
        self.record = record
        self.imports = _Imports(tree)
        self.functions = {
            node.name: node
            for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        self.aliases: dict[str, str] = {}  # ``extension = CUDAExtension``
        self.current: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self.returns: list[Val] | None = None
        self.default_name = ""
        #: ``call_anchor`` of the call ``record_at`` names
        self.record_call = ""
        #: gate text -> (file, line, test code) of the test that makes it
        self.gates: dict[str, tuple[str, int, str]] = {}
        #: names bound from a CUDA-toolkit probe (``_, major, _ = cuda_version(CUDA_HOME)``, or a
        #: call of this module's function whose body looks for the toolkit): a test of one is a
        #: test of the toolkit
        self.cuda_probes: set[str] = set()

    # --- statements ---------------------------------------------------------------------

    def run(self) -> None:
        self.block(self.tree.body, _Where())
        if self.depth == 0:
            self.registry.envs[self.path] = dict(self.env)

    def block(self, body: Sequence[ast.stmt], where: _Where) -> None:
        for statement in body:
            self.statement(statement, where)

    def statement(self, node: ast.stmt, where: _Where) -> None:
        if isinstance(node, ast.If):
            self._if(node, where)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._function(node, where)
        elif isinstance(node, ast.ClassDef):
            saved = dict(self.env)
            self.block(node.body, where)
            self.env = saved
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.scan(node.iter, where)
            self._bind_loop(node.target, node.iter, where)
            self.block(node.body, where)
            self.block(node.orelse, where)
        elif isinstance(node, (ast.While,)):
            self.block(node.body, where)
            self.block(node.orelse, where)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                self.scan(item.context_expr, where)
                self._written(item.context_expr, where)
            self.block(node.body, where)
        elif isinstance(node, ast.Try):
            self.block(node.body, where)
            for handler in node.handlers:
                self.block(handler.body, where)
            self.block(node.orelse, where)
            self.block(node.finalbody, where)
        elif isinstance(node, ast.Assign):
            self._assign(node.targets, node.value, where)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self._assign([node.target], node.value, where)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            added = self.eval(node.value, where) or []
            name = node.target.id
            self.env[name] = self.env.get(name, []) + added
            self._macros(node.value, where)
            self.scan(node.value, where)
        elif isinstance(node, ast.Expr):
            self._expression(node.value, where)
        elif isinstance(node, ast.Return):
            if node.value is not None:
                if self.returns is not None:
                    self.returns.extend(self.eval(node.value, where) or [])
                self.scan(node.value, where)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.scan(child, where)

    def _if(self, node: ast.If, where: _Where) -> None:
        own = _branch_context(node.test)
        text = ast.unparse(node.test)
        finds_cuda = (
            own == BOTH
            and (_FINDS_CUDA.search(text) is not None or self._tests_probe(node.test))
            and not names_rocm(text)
        )
        chain_rocm = _chain_has_rocm(node.orelse)
        if finds_cuda and chain_rocm:
            own = CUDA  # ``if CUDA_HOME ...: ... elif torch.version.hip:``
        if own == ROCM or names_rocm(text):
            self.model.rocm_branch.append(self.path)  # the build chooses per vendor
        body = _Where(meet(where.context, own) or "none", where.gate)
        other = _Where(meet(where.context, negate(own)) or "none", where.gate)
        if finds_cuda and not chain_rocm:
            gate = f"`{_short(text)}` ({self.path}:{node.lineno})"
            self.gates[gate] = (self.path, node.lineno, text)
            if _negated(node.test):
                other = replace(other, gate=other.gate or gate)
            else:
                body = replace(body, gate=body.gate or gate)
        self.scan(node.test, where)
        narrowed = suffix_test(node.test)
        saved: list[Val] | None = None
        if narrowed is not None and narrowed[0] in self.env:
            name, suffixes, keep = narrowed
            saved = self.env[name]
            self.env[name] = narrow(saved, suffixes, keep)
        if body.context != "none":
            self.block(node.body, body)
        if saved is not None and narrowed is not None:
            self.env[narrowed[0]] = narrow(saved, narrowed[1], not narrowed[2])
        if other.context != "none":
            self.block(node.orelse, other)
        if saved is not None and narrowed is not None:
            self.env[narrowed[0]] = saved

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, where: _Where) -> None:
        """A function's body read where it is defined, its parameters standing for what a
        caller passes: a build inside it that depends on them makes it a builder."""
        if self.depth or any(n is node for n in self.current):
            return
        saved = dict(self.env)
        probes = set(self.cuda_probes)
        for argument in _parameters(node):
            self.env[argument] = [Val(PARAM + argument, BOTH, self.folder)]
        self.current.append(node)
        try:
            self.block(node.body, where)
        finally:
            self.current.pop()
            self.env = saved
            self.cuda_probes = probes

    def _finds_cuda(self, value: ast.expr) -> bool:
        """Whether ``value`` probes for the CUDA toolkit (and not for ROCm): its text names the
        toolkit, or it calls a function of this module whose body does."""
        text = ast.unparse(value)
        if names_rocm(text):
            return False
        if _FINDS_CUDA.search(text):
            return True
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            helper = self.functions.get(value.func.id)
            if helper is not None:
                body = ast.unparse(helper)
                return _FINDS_CUDA.search(body) is not None and not names_rocm(body)
        return False

    def _probe_targets(self, targets: Sequence[ast.expr], value: ast.expr) -> None:
        """Mark the names bound from a CUDA-toolkit probe; a name bound from anything else is
        no longer one."""
        probe = self._finds_cuda(value)
        for target in targets:
            names = (
                [target]
                if isinstance(target, ast.Name)
                else [e for e in target.elts if isinstance(e, ast.Name)]
                if isinstance(target, (ast.Tuple, ast.List))
                else []
            )
            for name in names:
                (self.cuda_probes.add if probe else self.cuda_probes.discard)(name.id)

    def _tests_probe(self, test: ast.expr) -> bool:
        """Whether a test reads a name bound from a CUDA-toolkit probe."""
        return any(
            isinstance(node, ast.Name) and node.id in self.cuda_probes for node in ast.walk(test)
        )

    def _assign(self, targets: Sequence[ast.expr], value: ast.expr, where: _Where) -> None:
        self._probe_targets(targets, value)
        if isinstance(value, (ast.Name, ast.Attribute)):
            kind = self._extension_kind_of(value)
            if kind:
                for target in targets:
                    if isinstance(target, ast.Name):
                        self.aliases[target.id] = kind
        values = self.eval(value, where)
        listy = _is_list(value, self.lists)
        for target in targets:
            if isinstance(target, ast.Name):
                if values is None:
                    self.env.pop(target.id, None)
                else:
                    self.env[target.id] = values
                (self.lists.add if listy else self.lists.discard)(target.id)
            elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(
                value, (ast.Tuple, ast.List)
            ):
                for sub, item in zip(target.elts, value.elts, strict=False):
                    if isinstance(sub, ast.Name):
                        found = self.eval(item, where)
                        if found is None:
                            self.env.pop(sub.id, None)
                        else:
                            self.env[sub.id] = found
        self._macros(value, where)
        self.scan(value, where)

    def _expression(self, value: ast.expr, where: _Where) -> None:
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and isinstance(value.func.value, ast.Name)
            and value.func.attr in {"append", "extend", "add", "update", "insert"}
            and value.args
        ):
            argument = value.args[-1] if value.func.attr == "insert" else value.args[0]
            added = self.eval(argument, where) or []
            name = value.func.value.id
            self.env[name] = self.env.get(name, []) + added
            self.lists.add(name)
            self._macros(argument, where)
        elif isinstance(value, ast.Call):
            self._written(value, where)
        self.scan(value, where)

    def _bind_loop(self, target: ast.expr, iterable: ast.expr, where: _Where) -> None:
        if isinstance(target, ast.Name):
            found = self.eval(iterable, where)
            if found is None:
                self.env.pop(target.id, None)
            else:
                self.env[target.id] = found
            return
        if not isinstance(target, ast.Tuple):
            return
        names = [e.id if isinstance(e, ast.Name) else "" for e in target.elts]
        call = iterable if isinstance(iterable, ast.Call) else None
        bound = tuple_loop_bindings(
            self.imports.dotted(call.func) if call is not None else "",
            names,
            call.args if call is not None else [],
            lambda node: self.eval(node, where),
            where.context,
            self.folder,
        )
        for name in names:
            if name in bound:
                self.env[name] = bound[name]
            else:
                self.env.pop(name, None)

    # --- extension calls ------------------------------------------------------------------

    def scan(self, node: ast.AST, where: _Where) -> None:
        """Record the extension builds and builder calls inside an expression."""
        for sub in ast.walk(node):
            if not isinstance(sub, ast.Call):
                continue
            kind = self._extension_kind(sub)
            if kind:
                self._extension(sub, where, kind)
                continue
            builder = self._builder(sub)
            if builder is not None:
                self._invoke(sub, builder, where)

    def _extension_kind_of(self, node: ast.expr) -> str:
        """``setup``/``jit``/``inline`` when ``node`` names an extension class or loader."""
        if isinstance(node, ast.Name) and node.id in self.aliases:
            return self.aliases[node.id]
        dotted = self.imports.dotted(node)
        last = dotted.rsplit(".", 1)[-1]
        if last in _EXTENSION_CLASSES:
            return SETUP
        owner = dotted.rsplit(".", 1)[0] if "." in dotted else ""
        if last == "Extension" and (owner in _SETUPTOOLS or dotted == "Extension"):
            return SETUP
        if owner == _CPP_EXTENSION and last == "load":
            return JIT
        if owner == _CPP_EXTENSION and last == "load_inline":
            return "inline"
        return ""

    def _extension_kind(self, call: ast.Call) -> str:
        return self._extension_kind_of(call.func)

    def _extension(self, call: ast.Call, where: _Where, kind: str) -> None:
        if where.context == "none":
            return
        arguments = _arguments(call, ("name", "sources"), self.kwargs)
        if kind == "inline":
            self._site(call)
            return
        name_values = self.eval(arguments.get("name"), where) if "name" in arguments else None
        sources = arguments.get("sources")
        source_values = self.eval(sources, where) if sources is not None else None
        depends = any(v.from_param for v in (name_values or []) + (source_values or []))
        if depends and self.current and not self.depth:
            # a build from the function's parameters: the function is a builder
            self.registry.add_builder(_Builder(self.path, self.current[-1], self.tree))
            return
        if not self.record:
            return
        name = (
            _one_string(name_values)
            or _one_string(self.eval(call.args[0], where) if call.args else None)
            or self.default_name
        )
        patterns = to_patterns(source_values or [], self.setup, drop_params=depends)
        path, line = self.record_at or (self.path, call.lineno)
        gate = where.gate or _gate_of(patterns)
        extension = Extension(
            name or "?",
            path,
            line,
            patterns,
            where.context,
            kind=JIT if kind == JIT else SETUP,
            gate=gate,
            via=self.via,
        )
        extension.include_dirs, extension.defines = build_flags(
            lambda node: self.eval(node, where), arguments, self.setup, extension.computed_defines
        )
        self.model.extensions.append(extension)
        self.model.patterns.extend(patterns)
        if gate and gate in self.gates:
            test_path, test_line, test_code = self.gates[gate]
            self.model.notes.append(
                BuildNote(
                    test_path,
                    test_line,
                    GATE,
                    f"builds `{name or '?'}` with its GPU sources only when `{_short(test_code)}` "
                    "finds the CUDA toolkit: a ROCm build has none, so it builds the extension "
                    "CPU-only (or not at all) and its GPU calls fail at run time; test for ROCm "
                    "too (`torch.version.hip`, `ROCM_HOME`)",
                    name or "",
                    anchor_key(test_code),
                )
            )
        if source_values is None and sources is not None:
            self.model.notes.append(
                BuildNote(
                    path,
                    line,
                    UNREAD,
                    f"the sources of `{name or '?'}` are computed by `{_short(ast.unparse(sources))}`, "
                    "which a static reading does not follow: its kernel files are not tied to "
                    "this build (check them by hand)",
                    name or "",
                    anchor_key(ast.unparse(sources)) if self.record_at is None else "",
                )
            )
        if any(p.glob.endswith(GPU_SUFFIXES) for p in patterns) or kind == JIT:
            self._site(call)
        self._links(call, arguments, where, name or "?")
        self._define_macros(arguments, where, gate)

    def _site(self, call: ast.Call) -> None:
        if self.record:
            self.registry.calls.add((self.path, call.lineno, call_anchor(call)))
            if self.record_at is not None:
                self.registry.calls.add((*self.record_at, self.record_call))

    def _links(
        self, call: ast.Call, arguments: dict[str, ast.expr], where: _Where, name: str
    ) -> None:
        for keyword in ("extra_link_args", "extra_ldflags", "libraries"):
            node = arguments.get(keyword)
            if node is None:
                continue
            for value in self.eval(node, where) or []:
                library = CUDA_LIBRARY.match(value.text.strip())
                if library is None:
                    continue
                line = getattr(node, "lineno", call.lineno)
                path = self.path
                if self.record_at is not None and keyword in self.kwargs:
                    path, line = self.record_at
                self.model.notes.append(
                    BuildNote(
                        path,
                        line,
                        LINK,
                        f"links `{value.text.strip()}`, a library only the CUDA toolkit ships: "
                        "the link fails on ROCm",
                        name,
                        value.text,
                    )
                )

    def _define_macros(self, arguments: dict[str, ast.expr], where: _Where, gate: str) -> None:
        if not gate:
            return
        for keyword in ("define_macros", "extra_compile_args", "extra_cuda_cflags"):
            node = arguments.get(keyword)
            if node is not None:
                self._macros(node, replace(where, gate=gate))

    def _macros(self, node: ast.expr, where: _Where) -> None:
        """Macros a branch defines (``('WITH_CUDA', None)``, ``'-DWITH_CUDA'``): only where the
        build finds CUDA when gated, else (outside a CUDA-only branch) for ROCm builds too."""
        for name, line in macro_names(node):
            if where.gate:
                self.model.cuda_macros.setdefault(name, (self.path, line))
            elif where.context in (BOTH, ROCM):
                self.model.rocm_macros.add(name)

    def _written(self, node: ast.expr, where: _Where) -> None:
        """``open(path, 'w')`` or ``Path(path).write_text(...)`` of a kernel source: a file the
        build generates."""
        if not isinstance(node, ast.Call) or not self.record:
            return
        target: ast.expr | None = None
        dotted = self.imports.dotted(node.func)
        if dotted in {"open", "io.open"} and node.args:
            mode = node.args[1] if len(node.args) > 1 else None
            for keyword in node.keywords:
                if keyword.arg == "mode":
                    mode = keyword.value
            if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and "w" in mode.value:
                target = node.args[0]
        elif isinstance(node.func, ast.Attribute) and node.func.attr in {
            "write_text",
            "write_bytes",
        }:
            target = node.func.value
            if (
                isinstance(target, ast.Call)
                and target.args
                and self.imports.dotted(target.func).endswith("Path")
            ):
                target = target.args[0]
        if target is None:
            return
        for value in self.eval(target, where) or []:
            if value.text.lower().endswith(KERNEL_SUFFIXES):
                shown = value.text.replace(ANCHOR, "").replace(PARAM, "")
                self.model.notes.append(
                    BuildNote(
                        self.path,
                        node.lineno,
                        GENERATED,
                        f"writes the kernel source `{_short(shown)}` when it runs: generated "
                        "at build time, not read",
                        "",
                        anchor_key(ast.unparse(node)),
                    )
                )
                return

    # --- builders -------------------------------------------------------------------------

    def _builder(self, call: ast.Call) -> _Builder | None:
        func = call.func
        name = (
            func.id
            if isinstance(func, ast.Name)
            else func.attr
            if isinstance(func, ast.Attribute)
            else ""
        )
        candidates = self.registry.builders.get(name, [])
        if not candidates:
            return None
        for builder in candidates:
            if isinstance(func, ast.Name):
                if builder.path == self.path and name in self.functions:
                    return builder
                target = self.imports.names.get(name, "")
                if target and _module_matches(target.rsplit(".", 1)[0], builder):
                    return builder
            elif isinstance(func, ast.Attribute):
                owner = self.imports.dotted(func.value)
                if owner and _module_matches(owner, builder):
                    return builder
                if (
                    isinstance(func.value, ast.Name)
                    and func.value.id == "self"
                    and builder.path == self.path
                ):
                    return builder
        return None

    def _invoke(self, call: ast.Call, builder: _Builder, where: _Where) -> None:
        if where.context == "none":
            return
        bound, kwargs = self._bind(call, builder.node, where)
        if (
            self.current
            and not self.depth
            and any(v.from_param for values in bound.values() for v in values)
        ):
            # passes its own parameters on: it is a builder too
            self.registry.add_builder(_Builder(self.path, self.current[-1], self.tree))
            return
        if self.depth >= _MAX_DEPTH or builder.key in self.stack:
            return
        self.registry.invoked.add(builder.key)
        record_at = self.record_at or (self.path, call.lineno)
        record_call = self.record_call if self.record_at else call_anchor(call)
        inner = _Reader(
            builder.path,
            builder.tree,
            self.registry,
            self.model,
            env={**self.registry.envs.get(builder.path, {}), **bound},
            depth=self.depth + 1,
            record_at=record_at,
            via=self.via or f"{builder.path}:{builder.node.lineno} {builder.node.name}",
            stack=(*self.stack, builder.key),
            record=self.record,
        )
        inner.kwargs = kwargs
        inner.record_call = record_call
        inner.lists = {
            name for name in bound if name in _list_parameters(call, builder.node, self.lists)
        }
        inner.block(builder.node.body, where)

    def _bind(
        self, call: ast.Call, node: ast.FunctionDef | ast.AsyncFunctionDef, where: _Where
    ) -> tuple[dict[str, list[Val]], dict[str, list[Val]]]:
        """The values of a call's arguments, by the callee's parameter names; keywords the
        callee takes as ``**kwargs``."""
        names = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
        if names and names[0] in {"self", "cls"} and isinstance(call.func, ast.Attribute):
            names = names[1:]
        bound: dict[str, list[Val]] = {}
        kwargs: dict[str, list[Val]] = {}
        for index, argument in enumerate(call.args):
            if isinstance(argument, ast.Starred) or index >= len(names):
                break
            found = self.eval(argument, where)
            if found is not None:
                bound[names[index]] = found
        keyword_names = {*names, *(a.arg for a in node.args.kwonlyargs)}
        for keyword in call.keywords:
            if keyword.arg is None:
                continue
            found = self.eval(keyword.value, where)
            if found is None:
                continue
            if keyword.arg in keyword_names:
                bound[keyword.arg] = found
            elif node.args.kwarg is not None:
                kwargs[keyword.arg] = found
        defaults = node.args.defaults
        for name, default in zip(names[len(names) - len(defaults) :], defaults, strict=False):
            if name not in bound and not (
                isinstance(default, ast.Constant) and default.value is None
            ):
                found = self.eval(default, where)
                if found is not None:
                    bound[name] = found
        return bound, kwargs

    def _helper(self, call: ast.Call, where: _Where) -> list[Val] | None:
        """The values a project function returns for this call (a helper that builds a source
        list), or None."""
        func = call.func
        if not isinstance(func, ast.Name) or func.id not in self.functions:
            return None
        node = self.functions[func.id]
        key = (self.path, node.lineno)
        if self.depth >= _MAX_DEPTH or key in self.stack:
            return None
        bound, _ = self._bind(call, node, where)
        inner = _Reader(
            self.path,
            self.tree,
            self.registry,
            BuildModel(),
            env={**self.registry.envs.get(self.path, {}), **self.env, **bound},
            depth=self.depth + 1,
            stack=(*self.stack, key),
            record=False,
        )
        inner.returns = []
        inner.block(node.body, where)
        return inner.returns or None
