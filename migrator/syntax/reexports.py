"""Names a project re-exports through its own modules (``mypkg/nvml.py`` does ``import pynvml``,
another file does ``from mypkg.nvml import pynvml as N``; ``utils.py`` does ``from flash_attn
import flash_attn_func``, another does ``from .utils import flash_attn_func``).

Built once per scan from the import lines of every Python file (a regular expression over the
text: nothing is parsed, imported or run), then each file gets the slice it needs: for each
project module it imports, the external names that module binds. ``ImportTable`` rewrites
bindings through that slice, so every rule resolves re-exported names like direct imports.
The slice is plain data (it travels to worker processes and into the cache key)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from migrator.syntax.flags import flag_target, may_bind

#: Project module -> {bound name: qualified external target}.
Exports = Mapping[str, Mapping[str, str]]
#: The import lines of a file: (line number, unindented or not, the absolute modules it names).
TopImports = list[tuple[int, bool, list[str]]]


@dataclass(frozen=True, slots=True)
class ExportSlice:
    """The part of the index one file needs: its own module name (for relative imports) and
    the external names bound by the project modules it imports."""

    module: str
    package: bool
    exports: Exports
    #: the project's opt-in backend options this file names (``migrator.syntax.options``)
    opt_ins: tuple[str, ...] = ()

    def fingerprint(self) -> str:
        """A short stable digest (part of the file's cache key)."""
        items = sorted((module, sorted(names.items())) for module, names in self.exports.items())
        text = repr((self.module, self.package, items, self.opt_ins))
        return hashlib.sha1(text.encode()).hexdigest()[:12]


_DEFINED = re.compile(
    r"^(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)|^(\w+)[ \t]*(?::[^=\n]*)?=[^=]", re.MULTILINE
)
#: A name assigned on a line of its own, at any indentation (a flag candidate).
_ASSIGNED = re.compile(r"^[ \t]*(\w+)[ \t]*(?::[^=\n]*)?=[^=]", re.MULTILINE)
_ALIAS = re.compile(r"^([\w.]+)(?:\s+as\s+(\w+))?$")
_MAX_CHAIN = 8


def module_name(relative: str, packages: set[str]) -> str | None:
    """Dotted module name of a Python file: its path up from the outermost package directory
    (a folder with ``__init__.py``); a file outside any package is a top-level module."""
    if not relative.endswith(".py"):
        return None
    parts = relative[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
        if not parts:
            return None
    start = len(parts) - 1
    while start > 0 and "/".join(parts[:start]) in packages:
        start -= 1
    name_parts = parts[start:]
    return ".".join(name_parts) if all(p.isidentifier() for p in name_parts) else None


def absolute(module: str, current: str, is_package: bool) -> str | None:
    """``from .x import`` inside ``current`` -> the absolute module path (None when it leaves
    the project's packages)."""
    level = len(module) - len(module.lstrip("."))
    if not level:
        return module
    base = current.split(".") if is_package else current.split(".")[:-1]
    if level - 1 > len(base) or (level - 1 == len(base) and not module[level:]):
        return None
    base = base[: len(base) - (level - 1)]
    rest = module[level:]
    return ".".join([*base, rest] if rest else base) or None


def import_bindings(
    text: str, current: str, is_package: bool, top: TopImports | None = None
) -> tuple[dict[str, str], set[str]]:
    """(name -> qualified target) bound by the import lines of a module's text, and what it
    imports (``import a.b`` -> ``a.b``; ``from a import b`` -> ``a.b``), both absolute; with
    ``top``, also collects each import line, whether it is unindented and the modules it names."""
    bindings: dict[str, str] = {}
    modules: set[str] = set()
    for line, unindented, statement in _import_lines(text):
        named: list[str] = []
        if top is not None:
            top.append((line, unindented, named))
        plain = statement[7:] if statement.startswith("import ") else None
        if plain is not None:
            for part in plain.split(","):
                alias = _ALIAS.match(part.strip())
                if alias is None:
                    continue
                target, local = alias.group(1), alias.group(2)
                modules.add(target)
                named.append(target)
                if local:
                    bindings[local] = target
                else:
                    head = target.split(".", 1)[0]
                    bindings.setdefault(head, head)
            continue
        head, _, names = statement[5:].partition(" import ")
        module = absolute(head.strip(), current, is_package)
        if module is None or not names:
            continue
        named.append(module)
        names = names.strip().strip("()")
        if names.strip() == "*":
            continue
        for part in names.replace("\\\n", " ").split(","):
            alias = _ALIAS.match(" ".join(part.split("#", 1)[0].split()))
            if alias is None or "." in alias.group(1):
                continue
            name = alias.group(1)
            local = alias.group(2) or name
            bindings[local] = f"{module}.{name}"
            modules.add(f"{module}.{name}")
            named.append(f"{module}.{name}")
    return bindings, modules


def _import_lines(text: str) -> Iterator[tuple[int, bool, str]]:
    """Each ``import ...`` / ``from ... import ...`` statement of a text, on one line
    (parenthesised and backslash-continued name lists joined; comments dropped), with its
    1-based line number and whether the line starts unindented. Only the lines holding
    "import" (and their continuations) are cut out of the text."""
    end = -1  # the offset of the newline ending the last line read (-1: none read yet)
    counted = newlines = 0  # newlines in text[:counted]
    position = text.find("import")
    while position >= 0:
        if position <= end:  # a line already read (as part of the statement before)
            position = text.find("import", end + 1)
            continue
        newlines += text.count("\n", counted, position)
        counted = position
        start = text.rfind("\n", 0, position) + 1
        end = _line_end(text, position)
        line = text[start:end]
        number = newlines + 1
        position = text.find("import", end + 1)
        unindented = line[:1] not in (" ", "\t")
        statement = line.split("#", 1)[0].strip()
        if not statement.startswith(("import ", "from ")):
            continue
        while (statement.endswith("\\") or ("(" in statement and ")" not in statement)) and (
            end < len(text)
        ):
            following = _line_end(text, end + 1)
            statement = (
                statement.rstrip("\\") + " " + text[end + 1 : following].split("#", 1)[0].strip()
            )
            end = following
        for part in statement.split(";"):
            part = part.strip()
            if part.startswith(("import ", "from ")):
                yield number, unindented, " ".join(part.split())


def _line_end(text: str, offset: int) -> int:
    """The offset of the newline ending the line holding ``offset`` (the text's length when
    the line is the last, unterminated one)."""
    end = text.find("\n", offset)
    return len(text) if end < 0 else end


class ProjectIndex:
    """Which project modules bind which external names (computed on demand, per module), and
    which names each file imports from project modules."""

    def __init__(self) -> None:
        self.modules: dict[str, str] = {}  # module name -> relative path
        self._texts: dict[str, str] = {}  # module name -> text
        self._raw: dict[str, dict[str, str]] = {}  # module name -> every import binding
        self._used: dict[str, set[str]] = {}  # relative path -> imported targets
        self._files: dict[str, tuple[str, dict[str, str]]] = {}  # relative -> text, bindings
        self._defined: dict[str, set[str]] = {}
        self._external: dict[str, dict[str, str]] = {}
        self._roots: set[str] = set()
        self._flags: dict[str, dict[str, str]] = {}  # module name -> its flags (on demand)
        self._options: frozenset[str] | None = None
        self._assigned: dict[str, set[str]] = {}  # module name -> the names it assigns
        self._names: dict[str, str] = {}  # relative path -> module name
        #: relative path -> its text and its import lines (every Python file)
        self.sources: dict[str, str] = {}
        self.top_imports: dict[str, TopImports] = {}
        #: relative path -> text of the project's container files (set by the runner)
        self.containers: dict[str, str] = {}
        #: root packaging file name (pyproject.toml, setup.cfg) -> its text (set by the runner):
        #: the console scripts they declare name modules every run of a command loads
        self.packaging: dict[str, str] = {}

    @classmethod
    def build(cls, texts: Iterable[tuple[str, str]]) -> ProjectIndex:
        """Index ``(relative path, text)`` of every Python file of a project."""
        files = [(relative, text) for relative, text in texts if relative.endswith(".py")]
        packages = {
            relative.rsplit("/", 1)[0] for relative, _ in files if relative.endswith("/__init__.py")
        }
        index = cls()
        names: dict[str, tuple[str, str]] = {}
        ambiguous: set[str] = set()
        for relative, text in files:
            name = module_name(relative, packages)
            if name is None:
                continue
            if name in names:
                ambiguous.add(name)
            names[name] = (relative, text)
        for name in ambiguous:
            del names[name]
        named = {relative for relative, _ in names.values()}
        for relative, text in files:
            # files with no unique module name: only their own top-level imports are read
            if relative not in named and "import" in text:
                lines: TopImports = []
                import_bindings(text, module_name(relative, packages) or "", False, lines)
                index.sources[relative] = text
                index.top_imports[relative] = lines
        index.modules = {name: relative for name, (relative, _) in names.items()}
        index._names = {relative: name for name, (relative, _) in names.items()}
        index._roots = {name.split(".", 1)[0] for name in names}
        for name, (relative, text) in names.items():
            if "import" not in text:
                continue
            index._texts[name] = text
            top: TopImports = []
            bindings, used = import_bindings(text, name, relative.endswith("__init__.py"), top)
            index.sources[relative] = text
            index.top_imports[relative] = top
            index._raw[name] = bindings
            project = {target for target in used if index._project(target)}
            if project:
                index._used[relative] = project
                index._files[relative] = (text, bindings)
        return index

    def release_texts(self) -> None:
        """Forget the file texts (most of the index: a project's whole source) while worker
        processes run; ``restore_texts`` puts them back. A forked worker maps every page its
        parent holds, so each one would count them in its resident set again."""
        for relative in self.sources:
            self.sources[relative] = ""
        for name in self._texts:
            self._texts[name] = ""
        for relative, (_, bindings) in self._files.items():
            self._files[relative] = ("", bindings)

    def restore_texts(self, texts: Mapping[str, str]) -> None:
        """Put back the texts ``release_texts`` dropped, from ``texts`` (relative path -> text,
        as ``build`` was given them)."""
        for relative in self.sources:
            self.sources[relative] = texts.get(relative, "")
        for name in self._texts:
            self._texts[name] = texts.get(self.modules[name], "")
        for relative, (_, bindings) in self._files.items():
            self._files[relative] = (texts.get(relative, ""), bindings)

    def _project(self, qualified: str) -> bool:
        return qualified.split(".", 1)[0] in self._roots

    def _binding(self, module: str, name: str) -> str | None:
        """What ``module`` binds ``name`` to by an import (None when it defines it itself), or
        the availability flag it binds ``name`` to (``migrator.syntax.flags``)."""
        target = self._raw.get(module, {}).get(name)
        if target is None:
            # only a name the module assigns may be a flag (most are functions or classes)
            assigned = self._assigned.get(module)
            if assigned is None:
                text = self._texts.get(module, "")
                assigned = self._assigned[module] = (
                    set(_ASSIGNED.findall(text)) if may_bind(text) else set()
                )
            return self._flags_of(module).get(name) if name in assigned else None
        defined = self._defined.get(module)
        if defined is None:
            text = self._texts.get(module, "")
            defined = self._defined[module] = {a or b for a, b in _DEFINED.findall(text)}
        return None if name in defined else target

    def _flags_of(self, module: str) -> dict[str, str]:
        """The availability flags ``module`` binds at its top level -> their flag targets,
        read on demand (only for a module another file imports names from) from its ``ast``;
        a flag it imports from another project module counts (``_chase``)."""
        found = self._flags.get(module)
        if found is not None:
            return found
        self._flags[module] = {}  # an import cycle reads no flags
        text = self._texts.get(module, "")
        if not text or not may_bind(text):
            return {}
        import ast

        from migrator.syntax.flags import module_flags
        from migrator.syntax.pyast import parse_ast

        tree = parse_ast(text)
        if tree is None:
            return {}
        bindings = self._raw.get(module, {})

        def resolve(node: ast.expr) -> str | None:
            if not isinstance(node, ast.Name) or node.id not in bindings:
                return None
            return self._chase(bindings[node.id])

        flags = module_flags(tree, resolve)
        found = {name: flag_target(package) for name, package in flags.names.items()}
        self._flags[module] = found
        return found

    def _chase(self, target: str) -> str | None:
        """The external name a project binding ends at (following re-exports), or None."""
        for _ in range(_MAX_CHAIN):
            if not self._project(target):
                return target
            if target in self.modules:
                return None  # a project module itself
            module, _, name = target.rpartition(".")
            bound = self._binding(module, name)
            if bound is None:
                return None
            target = bound
        return None

    def external(self, module: str) -> dict[str, str]:
        """Every external name ``module`` binds through its imports."""
        found = self._external.get(module)
        if found is None:
            found = {}
            for local in self._raw.get(module, {}):
                bound = self._binding(module, local)
                resolved = self._chase(bound) if bound is not None else None
                if resolved is not None:
                    found[local] = resolved
            self._external[module] = found
        return found

    def _attributes_used(self, relative: str, module: str) -> dict[str, str]:
        """The external names of a project module imported whole that the file reads as
        attributes (``m.pynvml`` after ``import mypkg.nvml as m``)."""
        external = self.external(module)
        if not external:
            return {}
        text, bindings = self._files[relative]
        spellings = [local for local, target in bindings.items() if target == module]
        spellings.append(module)
        found: dict[str, str] = {}
        for spelling in spellings:
            if spelling + "." not in text:
                continue
            pattern = re.compile(re.escape(spelling) + r"\.(\w+)")
            for match in pattern.finditer(text):
                before = text[match.start() - 1 : match.start()]
                attribute = match.group(1)
                if attribute in external and not (before.isalnum() or before in "._"):
                    found[attribute] = external[attribute]
        return found

    def slice_for(self, relative: str) -> ExportSlice | None:
        """The slice the file at ``relative`` needs (None when it imports no re-exports): the
        names it imports from project modules, or every name of a project module it imports
        whole."""
        exports: dict[str, dict[str, str]] = {}
        for target in sorted(self._used.get(relative, ())):
            if target in self.modules:
                names = self._attributes_used(relative, target)
                if names:
                    exports.setdefault(target, {}).update(names)
                continue
            module, _, name = target.rpartition(".")
            if module not in self.modules:
                continue
            bound = self._binding(module, name)
            resolved = self._chase(bound) if bound is not None else None
            if resolved is not None:
                exports.setdefault(module, {})[name] = resolved
        text = self.sources.get(relative, "")
        opt_ins = tuple(name for name in self._opt_ins() if name in text)
        if not exports and not opt_ins:
            return None
        return ExportSlice(
            self._names.get(relative, ""), relative.endswith("__init__.py"), exports, opt_ins
        )

    def _opt_ins(self) -> frozenset[str]:
        """The project's opt-in backend options (read once, from every file's text)."""
        if self._options is None:
            from migrator.syntax.options import opt_in_options

            self._options = opt_in_options(self.sources.values())
        return self._options


def rewrite(qualified: str, exports: Exports) -> str:
    """``mypkg.nvml.pynvml.nvmlInit`` -> ``pynvml.nvmlInit`` when ``mypkg.nvml`` binds
    ``pynvml`` to the external module."""
    for _ in range(_MAX_CHAIN):
        if not any(qualified.startswith(module) for module in exports):
            return qualified
        changed = False
        for module, names in exports.items():
            if not qualified.startswith(module + "."):
                continue
            rest = qualified[len(module) + 1 :]
            head, dot, tail = rest.partition(".")
            target = names.get(head)
            if target is not None:
                qualified = target + dot + tail
                changed = True
                break
        if not changed:
            return qualified
    return qualified
