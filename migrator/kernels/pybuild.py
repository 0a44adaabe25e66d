"""The extensions a project's Python builds, wherever a build starts: ``setup.py`` files at any
depth, ``torch.utils.cpp_extension.load``/``CUDAExtension`` called in any module, and the
project's own functions that wrap them (``get_plugin(name, sources=...)`` calling ``load``
inside), followed across modules with the arguments of each call. Read with ``ast``, never
run. Source lists are evaluated as ``pyvalues`` (joins from ``__file__``, ``..``, f-strings,
``glob``/``os.listdir``/``os.walk`` with suffix filters, comprehensions, helper functions that
return lists, lists grown in branches); what cannot be evaluated becomes a note, not a guess.

Each source carries the branch of the build it entered in (``cuda``/``rocm``/``both``) and,
where a test finds the CUDA toolkit (``CUDA_HOME``, ``nvcc``, ``torch.version.cuda``) with no
ROCm branch beside it, that the build compiles it only with CUDA (a ROCm build leaves it out
and builds CPU-only)."""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

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
from migrator.kernels.pyloops import folder_next, macro_names, tuple_loop_bindings
from migrator.kernels.pyvalues import (
    ANCHOR,
    PARAM,
    Val,
    concat,
    dirname,
    join,
    narrow,
    product,
    suffix_test,
    to_patterns,
)
from migrator.knowledge.vendor_tokens import names_rocm

#: Files that may start a build: they name one of these.
_MARKERS = re.compile(r"cpp_extension|CUDAExtension|CppExtension|SYCLExtension|\bExtension\s*\(")
#: A test that finds the CUDA toolkit (false on a ROCm machine; ``torch.cuda.is_available()``
#: is true there, so it is not one).
_FINDS_CUDA = re.compile(
    r"CUDA_HOME|CUDA_PATH|CUDA_ROOT|CUDACXX|\bnvcc\b|version\.cuda\b|cuda_home|find_cuda",
    re.IGNORECASE,
)
#: ``#include`` lines inside Python strings: kernel-source templates a generator writes out.
_TEMPLATE_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)
#: Libraries only a CUDA toolkit ships (``-lcublas_static``, ``libraries=['cudart']``).
CUDA_LIBRARY = re.compile(
    r"^(?:-l)?(cudart(?:_static)?|cuda|cublas(?:Lt)?(?:_static)?|culibos|nvrtc(?:-builtins)?"
    r"(?:_static)?|cufft(?:w)?(?:_static)?|curand(?:_static)?|cusparse(?:_static)?"
    r"|cusolver(?:_static)?|nvToolsExt|nvjitlink(?:_static)?|cudnn|nvjpeg|nppc|nvinfer|nccl"
    r"(?:_static)?)$"
)
_EXTENSION_CLASSES = frozenset({"CUDAExtension", "CppExtension", "SYCLExtension"})
_CPP_EXTENSION = "torch.utils.cpp_extension"
_SETUPTOOLS = frozenset(
    {"setuptools", "distutils.core", "distutils.extension", "setuptools.extension"}
)
#: Calls deeper than this (a wrapper calling a wrapper ...) are not followed.
_MAX_DEPTH = 6
_MAX_ROUNDS = 6


@dataclass(frozen=True, slots=True)
class _Where:
    """The branch a statement runs in: vendor context and CUDA gate ("" when none)."""

    context: str = BOTH
    gate: str = ""


@dataclass(slots=True)
class _Builder:
    """A project function that builds an extension from its arguments."""

    path: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    tree: ast.Module

    @property
    def stem(self) -> str:
        parts = self.path[:-3].split("/")
        return parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]

    @property
    def key(self) -> tuple[str, int]:
        return (self.path, self.node.lineno)


@dataclass(slots=True)
class _Registry:
    """What the readers of one project's Python files share."""

    builders: dict[str, list[_Builder]] = field(default_factory=dict)
    envs: dict[str, dict[str, list[Val]]] = field(default_factory=dict)
    invoked: set[tuple[str, int]] = field(default_factory=set)
    #: (path, line) of every call that builds a GPU extension, directly or through a wrapper
    calls: set[tuple[str, int, str]] = field(default_factory=set)

    def add_builder(self, builder: _Builder) -> None:
        known = self.builders.setdefault(builder.node.name, [])
        if all(b.key != builder.key for b in known):
            known.append(builder)

    def keys(self) -> frozenset[tuple[str, int]]:
        return frozenset(b.key for known in self.builders.values() for b in known)


class _Imports:
    """What a module's import statements bind: names to dotted targets (``load`` ->
    ``torch.utils.cpp_extension.load``), relative imports with their leading dots."""

    def __init__(self, tree: ast.Module) -> None:
        self.names: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.names[alias.asname] = alias.name
                    else:
                        self.names.setdefault(alias.name.split(".")[0], alias.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                for alias in node.names:
                    target = (
                        f"{module}.{alias.name}"
                        if module and module[-1] != "."
                        else module + alias.name
                    )
                    self.names[alias.asname or alias.name] = target

    def dotted(self, node: ast.expr) -> str:
        """``a.b.c`` of a name or attribute chain, its first part resolved through the imports."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return ""
        first = self.names.get(node.id, node.id)
        return ".".join([first, *reversed(parts)])


def _module_matches(target: str, builder: _Builder) -> bool:
    """Whether an import target (``pkg.custom_ops.get_plugin``, ``.custom_ops``) names the
    builder's module."""
    parts = [part for part in target.split(".") if part]
    return builder.stem in parts


class _Reader:
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


# --- helpers ----------------------------------------------------------------------------


def _branch_context(test: ast.expr) -> str:
    """``rocm`` for a test true on ROCm builds, ``cuda`` for its negation, else ``both``."""
    text = ast.unparse(test)
    if not names_rocm(text):
        return BOTH
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        # ``CUDA_HOME is not None or is_rocm_pytorch``: true on either vendor
        parts = {_branch_context(value) for value in test.values}
        return parts.pop() if len(parts) == 1 and ROCM not in parts else BOTH
    negated = _negated(test)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        rocm_parts = [v for v in test.values if names_rocm(ast.unparse(v))]
        negated = all(_negated(v) for v in rocm_parts)
    return CUDA if negated else ROCM


def _negated(test: ast.expr) -> bool:
    """``not X``, ``X is None``, ``X == ''``/``False``: the test is true when X is absent."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return True
    return (
        isinstance(test, ast.Compare)
        and any(isinstance(op, (ast.Is, ast.Eq)) for op in test.ops)
        and any(
            isinstance(c, ast.Constant) and c.value in (None, False, "") for c in test.comparators
        )
    )


def _chain_has_rocm(orelse: Sequence[ast.stmt]) -> bool:
    while len(orelse) == 1 and isinstance(orelse[0], ast.If):
        branch = orelse[0]
        if _branch_context(branch.test) == ROCM:
            return True
        orelse = branch.orelse
    return False


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = node.args
    names = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
    if args.vararg is not None:
        names.append(args.vararg.arg)
    return [name for name in names if name not in {"self", "cls"}]


def _arguments(
    call: ast.Call, positional: Sequence[str], kwargs: dict[str, list[Val]]
) -> dict[str, ast.expr]:
    """A call's arguments by name: the first positional ones named by ``positional``, then its
    keywords; keywords passed through ``**kwargs`` of a wrapper appear as constants."""
    out: dict[str, ast.expr] = {}
    for index, argument in enumerate(call.args[: len(positional)]):
        if isinstance(argument, ast.Starred):
            break
        out[positional[index]] = argument
    for keyword in call.keywords:
        if keyword.arg is not None:
            out[keyword.arg] = keyword.value
        else:
            for name, values in kwargs.items():
                out.setdefault(
                    name,
                    ast.copy_location(
                        ast.List([ast.Constant(v.text) for v in values], ast.Load()), call
                    ),
                )
    return out


def _is_list(node: ast.expr, lists: set[str]) -> bool:
    if isinstance(node, (ast.List, ast.ListComp, ast.Tuple, ast.Set, ast.SetComp)):
        return True
    if isinstance(node, ast.Name):
        return node.id in lists
    if isinstance(node, ast.Call):
        func = node.func
        name = (
            func.id
            if isinstance(func, ast.Name)
            else func.attr
            if isinstance(func, ast.Attribute)
            else ""
        )
        return name in {"glob", "iglob", "sorted", "list", "listdir", "rglob"}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _is_list(node.left, lists) or _is_list(node.right, lists)
    return False


def _list_parameters(
    call: ast.Call, node: ast.FunctionDef | ast.AsyncFunctionDef, lists: set[str]
) -> set[str]:
    names = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
    if names and names[0] in {"self", "cls"} and isinstance(call.func, ast.Attribute):
        names = names[1:]
    out = {names[i] for i, a in enumerate(call.args[: len(names)]) if _is_list(a, lists)}
    out.update(k.arg for k in call.keywords if k.arg and _is_list(k.value, lists))
    return out


def _one_string(values: list[Val] | None) -> str | None:
    if values and len(values) == 1 and not values[0].from_param and not values[0].anchored:
        text = values[0].text
        if "*" not in text:
            return text
    return None


def _gate_of(patterns: Iterable[object]) -> str:
    """The gate of an extension whose every GPU source is compiled only with CUDA."""
    gpu = [p for p in patterns if getattr(p, "glob", "").endswith(GPU_SUFFIXES)]
    if gpu and all(getattr(p, "gate", "") for p in gpu):
        return str(getattr(gpu[0], "gate", ""))
    return ""


def call_anchor(call: ast.Call) -> str:
    """A short digest of a call's code as ``anchor_key`` writes it: a rule finds the call by it."""
    return hashlib.sha1(anchor_key(ast.unparse(call)).encode()).hexdigest()[:16]


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- the project ------------------------------------------------------------------------


@dataclass(slots=True)
class PythonBuilds:
    """The Python side of a project's build model, and the call sites that build GPU
    extensions (for the rules that report flags and builds through wrappers)."""

    model: BuildModel
    calls: frozenset[tuple[str, int, str]]
    files: list[str]


def read_python_builds(
    relatives: Sequence[str], read_text: Callable[[str], str | None]
) -> PythonBuilds:
    """Every extension the project's Python code builds (``read_text`` gives a file's text,
    None when it cannot be read)."""
    python = [r for r in relatives if r.endswith(".py")]
    texts: dict[str, str | None] = {}

    def text_of(relative: str) -> str | None:
        if relative not in texts:
            texts[relative] = read_text(relative)
        return texts[relative]

    trees: dict[str, ast.Module | None] = {}

    def tree_of(relative: str) -> ast.Module | None:
        if relative not in trees:
            text = text_of(relative)
            try:
                trees[relative] = ast.parse(text) if text else None
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                trees[relative] = None
        return trees[relative]

    involved = [r for r in python if _MARKERS.search(text_of(r) or "")]
    templates = {
        match.group(1).strip()
        for relative in python
        if "#include" in (text_of(relative) or "")
        for match in _TEMPLATE_INCLUDE.finditer(text_of(relative) or "")
    }
    registry = _Registry()
    model = BuildModel()
    for _round in range(_MAX_ROUNDS):
        before = registry.keys()
        registry.calls.clear()
        registry.invoked.clear()
        model = BuildModel()
        for relative in involved:
            tree = tree_of(relative)
            if tree is None:
                continue
            # a chain of wrappers inside one file resolves here, not one round per level
            for _pass in range(_MAX_DEPTH):
                registered = registry.keys()
                scratch = BuildModel()
                try:
                    _Reader(relative, tree, registry, scratch).run()
                except RecursionError:
                    scratch = BuildModel()
                if registry.keys() == registered:
                    break
            model.merge(scratch, "")
        names = sorted(registry.builders)
        added: list[str] = []
        if names:
            calls = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\s*\(")
            added = [r for r in python if r not in involved and calls.search(text_of(r) or "")]
        if not added and registry.keys() == before:
            break
        involved.extend(added)
    # a builder nothing in the project calls: its own paths, a parameter's part as its folder
    for known in registry.builders.values():
        for builder in known:
            if builder.key in registry.invoked:
                continue
            reader = _Reader(
                builder.path,
                builder.tree,
                registry,
                model,
                env=registry.envs.get(builder.path, {}),
                depth=1,
                stack=(builder.key,),
            )
            reader.default_name = builder.node.name
            for argument in _parameters(builder.node):
                reader.env[argument] = [Val(PARAM + argument, BOTH, reader.folder)]
            try:
                reader.block(builder.node.body, _Where())
            except RecursionError:
                continue
    _merge_duplicates(model)
    model.template_includes = templates
    return PythonBuilds(model, frozenset(registry.calls), involved)


def _merge_duplicates(model: BuildModel) -> None:
    """One extension per build call: a wrapper reached twice from one call site (two branches
    of the wrapper) contributes each branch's sources to the same record."""
    merged: dict[tuple[str, int, str], Extension] = {}
    for extension in model.extensions:
        key = (extension.build, extension.line, extension.name)
        known = merged.get(key)
        if known is None:
            merged[key] = extension
            continue
        seen = set(known.patterns)
        known.patterns.extend(p for p in extension.patterns if p not in seen)
        if known.context != extension.context:
            known.context = BOTH
        known.gate = known.gate if extension.gate else ""
    model.extensions[:] = list(merged.values())


__all__ = ["CUDA_LIBRARY", "PythonBuilds", "call_anchor", "read_python_builds"]
