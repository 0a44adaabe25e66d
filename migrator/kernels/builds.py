"""The extensions a project builds and, for each CUDA source, whether a ROCm build compiles it.

Read statically, never run: ``setup.py`` (``CUDAExtension``/``CppExtension``/``Extension`` and
``torch.utils.cpp_extension.load``: sources as literals, ``os.path.join``/``Path`` joins,
``glob``, list comprehensions, lists grown in branches) and ``CMakeLists.txt`` (``set``,
``list(APPEND)``, ``add_library``/``target_sources`` under ``if``/``elseif``/``else``). Each
source pattern carries the branch it entered the build in: ``cuda`` (a branch for CUDA
builds only, the ``else`` of a ROCm test, ``if not ROCM_VERSION``), ``rocm`` or ``both``. A
kernel file that only ``cuda`` patterns name is never compiled for AMD; a header only such
files include is not either. What static reading cannot resolve counts as compiled."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from migrator.files.sources import read_project_bytes, read_project_text
from migrator.knowledge.vendor_tokens import names_rocm

#: C/C++/CUDA source suffixes the kernel rules read.
KERNEL_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh", ".hxx", ".inl")
#: Build files larger than this are not read.
_MAX_BUILD_BYTES = 2 * 1024 * 1024
_EXTENSION_CALLS = frozenset(
    {"CUDAExtension", "CppExtension", "Extension", "load", "SYCLExtension"}
)
_CUDA_WORD = re.compile(r"(?<![A-Za-z])(cuda|nvcc|CUDA_HOME)(?![a-z])", re.IGNORECASE)

CUDA, ROCM, BOTH = "cuda", "rocm", "both"


def _meet(outer: str, inner: str) -> str | None:
    """The context of a pattern of context ``inner`` used in a branch of context ``outer``;
    None when the two exclude each other."""
    if outer == BOTH:
        return inner
    if inner == BOTH or inner == outer:
        return outer
    return None


@dataclass(frozen=True, slots=True)
class Pattern:
    """A source path or glob, relative to the project root, and the builds that compile it."""

    glob: str
    context: str
    build: str = ""

    def matches(self, relative: str) -> bool:
        return _glob_regex(self.glob).fullmatch(relative) is not None


_REGEX_CACHE: dict[str, re.Pattern[str]] = {}


def _glob_regex(pattern: str) -> re.Pattern[str]:
    cached = _REGEX_CACHE.get(pattern)
    if cached is None:
        out = []
        index = 0
        while index < len(pattern):
            if pattern.startswith("**/", index):
                out.append("(?:.*/)?")
                index += 3
            elif pattern.startswith("**", index):
                out.append(".*")
                index += 2
            elif pattern[index] == "*":
                out.append("[^/]*")
                index += 1
            elif pattern[index] == "?":
                out.append("[^/]")
                index += 1
            else:
                out.append(re.escape(pattern[index]))
                index += 1
        cached = re.compile("".join(out))
        _REGEX_CACHE[pattern] = cached
    return cached


@dataclass(slots=True)
class Extension:
    """One compiled module a build file declares."""

    name: str
    build: str
    line: int
    patterns: list[Pattern]
    context: str
    sources: list[str] = field(default_factory=list)


@dataclass(slots=True)
class BuildModel:
    """Every extension found, every source pattern with its context, and whether any build
    file has a ROCm branch."""

    extensions: list[Extension] = field(default_factory=list)
    patterns: list[Pattern] = field(default_factory=list)
    rocm_branch: list[str] = field(default_factory=list)  # build files with a ROCm branch
    _literal: dict[str, list[Pattern]] | None = None
    _wild: list[Pattern] = field(default_factory=list)

    def _hits(self, relative: str) -> list[Pattern]:
        if self._literal is None:
            self._literal = {}
            self._wild = []
            for pattern in self.patterns:
                if any(char in pattern.glob for char in "*?"):
                    self._wild.append(pattern)
                else:
                    self._literal.setdefault(os.path.normpath(pattern.glob), []).append(pattern)
        return self._literal.get(relative, []) + [p for p in self._wild if p.matches(relative)]

    def names(self, relative: str) -> bool:
        """Whether any build pattern names ``relative``."""
        return bool(self._hits(relative))

    def cuda_only(self, relative: str) -> str | None:
        """The build file whose CUDA-only branch alone compiles ``relative``, or None."""
        hits = self._hits(relative)
        if hits and all(p.context == CUDA for p in hits):
            return hits[0].build or "the build"
        return None


# --- setup.py ---------------------------------------------------------------------------


class _Segments:
    """Source text of nodes, with the line offsets computed once (``ast.get_source_segment``
    splits the whole file again on every call)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        for index, char in enumerate(text):
            if char == "\n":
                self.starts.append(index + 1)

    def __call__(self, node: ast.AST) -> str:
        line = getattr(node, "lineno", None)
        end_line = getattr(node, "end_lineno", None)
        if line is None or end_line is None:
            return ""
        start = self.starts[line - 1] + getattr(node, "col_offset", 0)
        end = self.starts[end_line - 1] + (getattr(node, "end_col_offset", 0) or 0)
        return self.text[start:end]


def _branch_context(test: ast.expr, source: _Segments) -> str:
    text = source(test)
    if not names_rocm(text):
        return BOTH
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        parts = [source(v) for v in test.values]
        rocm_parts = [v for v, t in zip(test.values, parts, strict=True) if names_rocm(t)]
        negated = all(isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not) for v in rocm_parts)
    if (
        isinstance(test, ast.Compare)
        and any(isinstance(op, (ast.Is, ast.Eq)) for op in test.ops)
        and any(
            isinstance(c, ast.Constant) and c.value in (None, False, "") for c in test.comparators
        )
    ):
        negated = True
    return CUDA if negated else ROCM


def _negate(context: str) -> str:
    return {CUDA: ROCM, ROCM: CUDA}.get(context, BOTH)


class _SetupReader:
    """Abstract reading of a setup.py: variables hold source patterns with contexts."""

    def __init__(self, text: str, folder: str, build: str) -> None:
        self.text = text
        self.segments = _Segments(text)
        self.folder = folder
        self.build = build
        self.env: dict[str, list[Pattern]] = {}
        self.model = BuildModel()
        self.callees = set(_EXTENSION_CALLS)

    def run(self) -> BuildModel:
        tree = ast.parse(self.text)
        self._block(tree.body, BOTH)
        return self.model

    def _block(self, body: Sequence[ast.stmt], context: str) -> None:
        for statement in body:
            self._statement(statement, context)

    def _statement(self, node: ast.stmt, context: str) -> None:
        if isinstance(node, ast.If):
            own = _branch_context(node.test, self.segments)
            if own == BOTH and _CUDA_WORD.search(self.segments(node.test)):
                # ``if CUDA_HOME ...: ... elif torch.version.hip:``: the first is for CUDA builds
                if _chain_has_rocm(node.orelse, self.segments):
                    own = CUDA
            inner = _meet(context, own)
            if own == ROCM:
                self.model.rocm_branch.append(self.build)
            if inner is not None:
                self._block(node.body, inner)
            other = _meet(context, _negate(own) if own != BOTH else BOTH)
            if other is not None:
                self._block(node.orelse, other)
            self._scan_calls(node.test, context)
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._block(node.body, context)
            return
        if isinstance(node, (ast.For, ast.While, ast.With, ast.AsyncFor, ast.AsyncWith)):
            if isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.target, ast.Name):
                self.env[node.target.id] = self._eval(node.iter, context)
            self._block(node.body, context)
            self._block(getattr(node, "orelse", []), context)
            return
        if isinstance(node, ast.Try):
            self._block(node.body, context)
            for handler in node.handlers:
                self._block(handler.body, context)
            self._block(node.orelse, context)
            self._block(node.finalbody, context)
            return
        if isinstance(node, ast.Assign):
            if isinstance(node.value, ast.Name) and node.value.id in self.callees:
                self.callees.update(t.id for t in node.targets if isinstance(t, ast.Name))
            value = self._eval(node.value, context)
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.env[target.id] = value
            self._scan_calls(node.value, context)
            return
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            if isinstance(node.target, ast.Name):
                self.env[node.target.id] = self._eval(node.value, context)
            self._scan_calls(node.value, context)
            return
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            added = self._eval(node.value, context)
            self.env[node.target.id] = self.env.get(node.target.id, []) + added
            self._scan_calls(node.value, context)
            return
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            call = node.value
            func = call.func
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.attr in {"append", "extend", "add", "update"}
                and call.args
            ):
                added = self._eval(call.args[0], context)
                self.env[func.value.id] = self.env.get(func.value.id, []) + added
            self._scan_calls(call, context)
            return
        if isinstance(node, ast.Return) and node.value is not None:
            self._scan_calls(node.value, context)
            return
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self._scan_calls(child, context)

    def _scan_calls(self, node: ast.AST, context: str) -> None:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call) and _callee(sub) in self.callees:
                self._extension(sub, context)

    def _extension(self, call: ast.Call, context: str) -> None:
        name_node: ast.expr | None = call.args[0] if call.args else None
        sources_node: ast.expr | None = call.args[1] if len(call.args) > 1 else None
        for keyword in call.keywords:
            if keyword.arg == "name":
                name_node = keyword.value
            elif keyword.arg == "sources":
                sources_node = keyword.value
        if sources_node is None:
            return
        name = _string(name_node) or "?"
        patterns = [
            Pattern(p.glob, ctx)
            for p in self._eval(sources_node, context)
            if (ctx := _meet(context, p.context)) is not None
        ]
        self.model.extensions.append(Extension(name, self.build, call.lineno, patterns, context))
        self.model.patterns.extend(patterns)

    def _eval(self, node: ast.expr | None, context: str) -> list[Pattern]:
        """Source patterns an expression may hold (relative to the project root)."""
        if node is None:
            return []
        if isinstance(node, ast.Name):
            return [
                Pattern(p.glob, c)
                for p in self.env.get(node.id, [])
                if (c := _meet(context, p.context))
            ]
        if isinstance(node, (ast.Constant, ast.JoinedStr)) or _is_join(node):
            text = self._path(node)
            if text is None:
                return []
            return [Pattern(_under(self.folder, text), context)]
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return [p for element in node.elts for p in self._eval(element, context)]
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Add):
                return self._eval(node.left, context) + self._eval(node.right, context)
            if isinstance(node.op, ast.Sub):
                return self._eval(node.left, context)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            generator = node.generators[0]
            items = self._eval(generator.iter, context)
            if isinstance(generator.target, ast.Name) and isinstance(node.elt, ast.Call):
                func = node.elt.func
                if (
                    isinstance(func, ast.Attribute)
                    and func.attr == "replace"
                    and len(node.elt.args) == 2
                ):
                    old, new = (_string(a) for a in node.elt.args)
                    if old is not None and new is not None:
                        return [Pattern(p.glob.replace(old, new), p.context) for p in items]
            return items
        if isinstance(node, ast.Call):
            callee = _callee(node)
            if callee in {"glob", "iglob"} and node.args:
                return self._eval(node.args[0], context)
            if callee in {"sorted", "list", "set", "tuple", "str"} and node.args:
                return self._eval(node.args[0], context)
            if (
                isinstance(node.func, ast.Attribute)
                and node.func.attr in {"glob", "rglob"}
                and node.args
            ):
                base = self._path(node.func.value)
                pattern = _string(node.args[0])
                if base is not None and pattern is not None:
                    prefix = "**/" if node.func.attr == "rglob" else ""
                    return [Pattern(_under(self.folder, _join(base, prefix + pattern)), context)]
        return []

    def _path(self, node: ast.expr) -> str | None:
        """A path expression as a pattern relative to setup.py's folder: strings, f-strings
        (values read as ``*``), ``os.path.join`` and ``Path`` joins; an unknown leading part
        (``this_dir``, ``Path(__file__).parent``) is the folder itself."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.JoinedStr):
            return "".join(
                part.value
                if isinstance(part, ast.Constant) and isinstance(part.value, str)
                else "*"
                for part in node.values
            )
        if isinstance(node, ast.Name):
            values = self.env.get(node.id)
            if values and len(values) == 1:
                return values[0].glob
            return ""
        if isinstance(node, ast.Call) and _callee(node) == "join":
            parts = [self._path(a) for a in node.args]
            return _join(*[("*" if p is None else p) for p in parts])
        if isinstance(node, ast.Call) and _callee(node) in {"Path", "PurePath"}:
            return self._path(node.args[0]) if node.args else ""
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left = self._path(node.left)
            right = self._path(node.right)
            return _join(left or "", "*" if right is None else right)
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            return ""
        return None


def _is_join(node: ast.expr) -> bool:
    return (isinstance(node, ast.Call) and _callee(node) in {"join", "Path"}) or (
        isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)
    )


def _join(*parts: str) -> str:
    kept = [part.strip("/") for part in parts if part and part not in {".", "./"}]
    return "/".join(kept)


def _under(folder: str, path: str) -> str:
    path = path.lstrip("./") if path.startswith("./") else path
    if path.startswith("/"):
        return path.lstrip("/")
    return _join(folder, path) if folder else path


def _string(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _callee(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _chain_has_rocm(orelse: Sequence[ast.stmt], text: _Segments) -> bool:
    while len(orelse) == 1 and isinstance(orelse[0], ast.If):
        branch = orelse[0]
        if _branch_context(branch.test, text) == ROCM:
            return True
        orelse = branch.orelse
    return False


# --- CMakeLists.txt -----------------------------------------------------------------------

_CMAKE_COMMAND = re.compile(r"(?m)^[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(")
_CMAKE_VAR = re.compile(r"\$\{([A-Za-z0-9_]+)\}")


def _cmake_commands(text: str) -> Iterable[tuple[str, str]]:
    """(command, argument text) of each command, comments removed; linear in the text."""
    text = re.sub(r"#[^\n]*", "", text)
    for match in _CMAKE_COMMAND.finditer(text):
        depth = 0
        index = match.end() - 1
        limit = min(len(text), index + 200_000)
        while index < limit:
            char = text[index]
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0:
                    break
            index += 1
        yield match.group(1).lower(), text[match.end() : index]


def _cmake_context(condition: str) -> str:
    if names_rocm(condition) or re.search(r"(?i)\bhip\b|_HIP\b|HIP_", condition):
        return CUDA if re.match(r"(?i)\s*NOT\b", condition) else ROCM
    if re.search(r"(?<![A-Za-z])CUDA(?![a-z])|\"cuda\"|(?i:nvcc)", condition):
        return ROCM if re.match(r"(?i)\s*NOT\b", condition) else CUDA
    return BOTH


def read_cmake(text: str, folder: str, build: str) -> BuildModel:
    """Source patterns of a CMakeLists.txt with the branch each entered the build in."""
    model = BuildModel()
    env: dict[str, list[Pattern]] = {}
    stack: list[tuple[str, str]] = []  # (context of the enclosing block, context of this branch)

    def current() -> str:
        return stack[-1][1] if stack else BOTH

    def items(arguments: str, context: str) -> list[Pattern]:
        out: list[Pattern] = []
        for word in arguments.split():
            word = word.strip('"')
            names = _CMAKE_VAR.findall(word)
            if names and _CMAKE_VAR.fullmatch(word):
                out.extend(
                    Pattern(p.glob, c)
                    for p in env.get(names[0], [])
                    if (c := _meet(context, p.context))
                )
            elif word.lower().endswith(KERNEL_SUFFIXES) and "$" not in word:
                out.append(Pattern(_under(folder, word), context))
            elif word.lower().endswith(KERNEL_SUFFIXES):
                out.append(Pattern(_under(folder, _CMAKE_VAR.sub("*", word)), context))
        return out

    for command, arguments in _cmake_commands(text):
        if command == "if":
            outer = current()
            own = _cmake_context(arguments)
            if own == ROCM:
                model.rocm_branch.append(build)
            stack.append((outer, _meet(outer, own) or "none"))
            continue
        if command in {"elseif", "else"} and stack:
            outer, previous = stack.pop()
            own = _cmake_context(arguments) if command == "elseif" else _negate(previous)
            if command == "else" and previous not in {CUDA, ROCM}:
                own = BOTH
            if own == ROCM:
                model.rocm_branch.append(build)
            stack.append((outer, _meet(outer, own) or "none"))
            continue
        if command == "endif" and stack:
            stack.pop()
            continue
        context = current()
        if context == "none":
            continue
        words = arguments.split()
        if not words:
            continue
        if command == "set":
            env[words[0]] = items(" ".join(words[1:]), context)
        elif command == "list" and len(words) > 2 and words[0].upper() == "APPEND":
            env[words[1]] = env.get(words[1], []) + items(" ".join(words[2:]), context)
        elif command == "file" and len(words) > 2 and words[0].upper().startswith("GLOB"):
            patterns = [
                w.strip('"')
                for w in words[2:]
                if w.upper() not in {"CONFIGURE_DEPENDS", "RELATIVE"}
            ]
            env[words[1]] = [
                Pattern(_under(folder, _CMAKE_VAR.sub("*", p).replace("*/", "**/", 1)), context)
                for p in patterns
                if "." in p
            ]
        elif command in {
            "add_library",
            "cuda_add_library",
            "hip_add_library",
            "add_executable",
            "target_sources",
            "pybind11_add_module",
            "python_add_library",
        }:
            found = items(" ".join(words[1:]), context)
            extension = Extension(words[0], build, text.count("\n", 0, 0) + 1, found, context)
            model.extensions.append(extension)
            model.patterns.extend(found)
    return model


# --- the project --------------------------------------------------------------------------


def read_builds(root: Path, relatives: Sequence[str]) -> BuildModel:
    """Every setup.py and CMakeLists.txt of the project, read into one model; a file that
    cannot be read or parsed adds nothing."""
    model = BuildModel()
    candidates = list(relatives)
    listed = set(candidates)
    folders = {
        r.rsplit("/", 1)[0] if "/" in r else ""
        for r in relatives
        if r.lower().endswith(KERNEL_SUFFIXES)
    }
    ancestors: set[str] = set()
    for folder in folders:
        parts = folder.split("/") if folder else []
        for depth in range(len(parts) + 1):
            ancestors.add("/".join(parts[:depth]))
    for folder in sorted(ancestors):
        cmake = f"{folder}/CMakeLists.txt" if folder else "CMakeLists.txt"
        if cmake not in listed and (root / cmake).is_file():
            candidates.append(cmake)
    for relative in candidates:
        name = relative.rsplit("/", 1)[-1]
        if name not in {"setup.py", "CMakeLists.txt"}:
            continue
        folder = relative.rsplit("/", 1)[0] if "/" in relative else ""
        text = _read(root / relative)
        if text is None:
            continue
        try:
            part = (
                _SetupReader(text, folder, relative).run()
                if name == "setup.py"
                else read_cmake(text, folder, relative)
            )
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        model.extensions.extend(part.extensions)
        model.patterns.extend(Pattern(p.glob, p.context, relative) for p in part.patterns)
        model.rocm_branch.extend(part.rocm_branch)
    return model


def _read(path: Path) -> str | None:
    if path.is_symlink():
        return None
    return read_project_text(path, limit=_MAX_BUILD_BYTES)


_HEADER_SUFFIXES = (".cuh", ".h", ".hpp", ".hh", ".hxx", ".inl")
_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)
_MAX_KERNEL_BYTES = 8 * 1024 * 1024


def include_graph(
    root: Path, kernel_files: Sequence[str], texts: Mapping[str, bytes] | None = None
) -> dict[str, set[str]]:
    """header -> the project files that include it (resolved against the includer's folder,
    then by path suffix among the project's files); ``texts`` holds sources already read."""
    by_name: dict[str, list[str]] = {}
    for relative in kernel_files:
        by_name.setdefault(relative.rsplit("/", 1)[-1], []).append(relative)
    known = set(kernel_files)
    included_by: dict[str, set[str]] = {}
    for relative in kernel_files:
        data = texts.get(relative) if texts is not None else None
        if data is None:
            data = read_project_bytes(root / relative, _MAX_KERNEL_BYTES)
        if data is None:
            continue
        folder = relative.rsplit("/", 1)[0] if "/" in relative else ""
        for match in _INCLUDE.finditer(data):
            header = match.group(1).decode("utf-8", "replace").strip()
            near = os.path.normpath(f"{folder}/{header}" if folder else header)
            if near in known:
                included_by.setdefault(near, set()).add(relative)
                continue
            candidates = [
                c for c in by_name.get(header.rsplit("/", 1)[-1], []) if c.endswith(header)
            ]
            if len(candidates) == 1:
                included_by.setdefault(candidates[0], set()).add(relative)
    return included_by


def cuda_only_sources(
    root: Path, relatives: Sequence[str], texts: Mapping[str, bytes] | None = None
) -> dict[str, str]:
    """Kernel files no ROCm build compiles, each with the reason: sources that only a CUDA-only
    branch of a build file names, and headers that only such files include (``texts``: sources
    already read)."""
    kernel_files = [r for r in relatives if r.lower().endswith(KERNEL_SUFFIXES)]
    if not kernel_files:
        return {}
    model = read_builds(root, relatives)
    if not model.patterns:
        return {}
    out: dict[str, str] = {}
    for relative in kernel_files:
        build = model.cuda_only(relative)
        if build is not None:
            out[relative] = f"only the CUDA build in {build} compiles it"
    included_by = include_graph(root, kernel_files, texts)
    # a header beside an extension's sources that no file of the project includes and no build
    # names is compiled by nothing (a leftover of an older kernel)
    source_folders = {
        relative.rsplit("/", 1)[0]
        for relative in kernel_files
        if model.names(relative) and "/" in relative
    }
    for relative in kernel_files:
        if (
            relative.lower().endswith(_HEADER_SUFFIXES)
            and relative not in included_by
            and relative not in out
            and not model.names(relative)
            and any(relative.startswith(f"{folder}/") for folder in source_folders)
        ):
            out[relative] = "no source of the project includes it"
    changed = True
    while changed:
        changed = False
        for header, includers in included_by.items():
            if header in out or not includers:
                continue
            if all(includer in out for includer in includers) and model.cuda_only(header) is None:
                if model.names(header):
                    continue  # a source a ROCm build names itself
                out[header] = "only sources that no ROCm build compiles include it"
                changed = True
    return out


def extensions(root: Path, relatives: Sequence[str]) -> list[Extension]:
    """The extensions of the project with their existing sources resolved."""
    model = read_builds(root, relatives)
    kernel_files = [r for r in relatives if r.lower().endswith(KERNEL_SUFFIXES)]
    for extension in model.extensions:
        extension.sources = sorted(
            {r for r in kernel_files for p in extension.patterns if p.matches(r)}
        )
    return model.extensions


__all__: Sequence[str] = ["BuildModel", "Extension", "Pattern", "cuda_only_sources", "extensions"]
_ = Mapping
