"""One C/C++/CUDA source file, parsed by tree-sitter's CUDA grammar: its code tokens (never
comments or strings), inline assembly blocks, includes, calls and object-like macros.

tree-sitter parses every ``#if`` branch and recovers from what it cannot parse (error nodes
keep their tokens), so a file with an odd construct still yields its sites; the branches are
judged by ``migrator.kernels.preproc``."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from migrator.knowledge.versions import ProjectFacts

#: Files larger than this are not parsed (generated sources): the scan reports them skipped.
MAX_SOURCE_BYTES = 8 * 1024 * 1024


@lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_cuda

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))


@dataclass(frozen=True, slots=True)
class Token:
    """A leaf of the parse: its type, text and byte offsets."""

    type: str
    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class AsmBlock:
    """An inline assembly statement: where it starts and its template text (the string
    literals of its template; macro names when the template is built by a macro)."""

    start: int
    end: int
    template: str


@dataclass(frozen=True, slots=True)
class Call:
    """A call expression: the callee as written (``__shfl_xor_sync``, ``cute::gemm``), its
    argument texts and where it starts."""

    callee: str
    arguments: tuple[str, ...]
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Include:
    """An ``#include``: the header as written, without quotes or brackets."""

    header: str
    system: bool
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class ProjectMacros:
    """What the scanned project says of its own preprocessor symbols, read once per run from
    all its C/C++/CUDA sources and build files (``ProjectFacts``), for reading one file's
    branches as a build of that project reads them (``migrator.kernels.preproc``). The
    default is a file read on its own."""

    #: Macros the project defines only for NVIDIA builds: a HIP build never defines them.
    nvidia_only: frozenset[str] = frozenset()
    #: name -> value on HIP of the project's macros defined once as a preprocessor expression
    #: (``#define DG_X (CUDART_VERSION >= 11080)``: 0; ``migrator.kernels.macro_values``).
    values: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    #: The NVIDIA architectures the project builds for (empty: the default ones).
    cuda_archs: tuple[int, ...] = ()
    #: Opt-in switches nothing of the project defines (``ProjectFacts.unset_switches``):
    #: undefined on every platform.
    unset_switches: frozenset[str] = frozenset()
    #: Whether this file reaches hipcc without a hipify step (only CMake targets compile it:
    #: ``migrator.kernels.unhipified``): there ``__CUDACC__`` is not renamed, and hip-clang
    #: does not define it.
    unhipified: bool = False

    @classmethod
    def of(cls, facts: ProjectFacts | None, path: str = "") -> ProjectMacros:
        """The macros ``facts`` record, for the project file ``path``; none for a file read
        on its own (``facts`` None)."""
        if facts is None:
            return NO_MACROS
        if _LAST_MACROS and _LAST_MACROS[0][0] is facts and _LAST_MACROS[0][1] == path:
            return _LAST_MACROS[0][2]  # every rule of a file asks again
        macros = cls(
            frozenset(facts.nvidia_macros),
            MappingProxyType(dict(facts.macro_values)),
            facts.cuda_archs,
            frozenset(facts.unset_switches),
            path in facts.unhipified,
        )
        _LAST_MACROS[:] = [(facts, path, macros)]
        return macros


#: The macros of a file read on its own.
NO_MACROS = ProjectMacros()

_LAST_MACROS: list[tuple[ProjectFacts, str, ProjectMacros]] = []


@dataclass(slots=True)
class CudaSource:
    """The parsed file. Offsets are byte offsets into ``data`` (the file's UTF-8 bytes)."""

    data: bytes
    tree: Any
    _tokens: list[Token] | None = None
    _asm: list[AsmBlock] | None = None
    _calls: list[Call] | None = None
    _includes: list[Include] | None = None
    _defines: dict[str, tuple[str, int]] | None = None
    _line_starts: list[int] = field(default_factory=list)
    _by_type: dict[str, list[Any]] | None = None
    #: what ``migrator.kernels.preproc`` computes once per parse
    memo: dict[str, Any] = field(default_factory=dict)
    #: what the project says of its macros, for reading this file's branches
    macros: ProjectMacros = NO_MACROS

    @property
    def has_errors(self) -> bool:
        return bool(self.tree.root_node.has_error)

    def text(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", "replace")

    def line_of(self, offset: int) -> int:
        """1-based line of a byte offset."""
        import bisect

        if not self._line_starts:
            starts = [0]
            index = self.data.find(b"\n")
            while index >= 0:
                starts.append(index + 1)
                index = self.data.find(b"\n", index + 1)
            self._line_starts = starts
        return bisect.bisect_right(self._line_starts, offset)

    def nodes(self, *types: str) -> Iterator[Any]:
        """Every node of one of ``types``, in source order. The tree is walked once for all the
        types the rules ask about (``INDEXED``); another type costs a walk of its own."""
        wanted = frozenset(types)
        if wanted <= INDEXED:
            if self._by_type is None:
                self._by_type = self._index()
            if len(types) == 1:
                yield from self._by_type.get(types[0], [])
                return
            merged = [node for kind in wanted for node in self._by_type.get(kind, [])]
            merged.sort(key=lambda node: (node.start_byte, -node.end_byte))
            yield from merged
            return
        yield from self._walk(wanted)

    def _index(self) -> dict[str, list[Any]]:
        found: dict[str, list[Any]] = {}
        for node in self._walk(INDEXED):
            found.setdefault(node.type, []).append(node)
        return found

    def _walk(self, wanted: frozenset[str]) -> Iterator[Any]:
        cursor = self.tree.walk()
        reached_root = False
        while not reached_root:
            node = cursor.node
            if node.type in wanted:
                yield node
            if cursor.goto_first_child():
                continue
            if cursor.goto_next_sibling():
                continue
            while True:
                if not cursor.goto_parent():
                    reached_root = True
                    break
                if cursor.goto_next_sibling():
                    break

    def tokens(self) -> list[Token]:
        """Code leaves in source order: no comments, no string or character literal contents
        (a string literal is one token of type ``string``)."""
        if self._tokens is None:
            found: list[Token] = []
            cursor = self.tree.walk()
            reached_root = False
            while not reached_root:
                node = cursor.node
                kind = node.type
                if kind == "comment":
                    pass
                elif kind in _STRING_TYPES:
                    found.append(Token("string", "", node.start_byte, node.end_byte))
                elif node.child_count == 0:
                    if node.end_byte > node.start_byte:
                        found.append(
                            Token(
                                kind,
                                self.text(node.start_byte, node.end_byte),
                                node.start_byte,
                                node.end_byte,
                            )
                        )
                elif cursor.goto_first_child():
                    continue
                if cursor.goto_next_sibling():
                    continue
                while True:
                    if not cursor.goto_parent():
                        reached_root = True
                        break
                    if cursor.goto_next_sibling():
                        break
            self._tokens = found
        return self._tokens

    def asm_blocks(self) -> list[AsmBlock]:
        """Inline assembly: parsed ``asm``/``__asm__`` expressions, and in error regions an
        ``asm`` keyword token followed by ``(``."""
        if self._asm is None:
            blocks: dict[int, AsmBlock] = {}
            for node in self.nodes("gnu_asm_expression"):
                blocks[node.start_byte] = AsmBlock(
                    node.start_byte, node.end_byte, self._asm_template(node)
                )
            tokens = self.tokens()
            for index, token in enumerate(tokens):
                if token.text not in _ASM_WORDS or token.start in blocks:
                    continue
                if any(b.start <= token.start < b.end for b in blocks.values()):
                    continue
                rest = tokens[index + 1 : index + 4]
                if not any(t.text == "(" for t in rest):
                    continue
                end = self.data.find(b";", token.start)
                end = len(self.data) if end < 0 else end
                blocks[token.start] = AsmBlock(
                    token.start, end, self._raw_template(token.start, end)
                )
            for node in self.nodes("preproc_def", "preproc_function_def"):
                # a macro body is opaque text to the parser: ``#define WAIT(i) case i:
                # asm volatile("cp.async.wait_group %0;" :: "n"(i)); break;`` is assembly too
                value = node.child_by_field_name("value")
                if value is None or b"asm" not in self.data[value.start_byte : value.end_byte]:
                    continue
                body = self.text(value.start_byte, value.end_byte)
                for match in _MACRO_ASM.finditer(body):
                    start = value.start_byte + len(body[: match.start()].encode())
                    end = self.data.find(b";", start, value.end_byte)
                    end = value.end_byte if end < 0 else end
                    if start not in blocks:
                        blocks[start] = AsmBlock(start, end, self._raw_template(start, end))
            self._asm = sorted(blocks.values(), key=lambda block: block.start)
        return self._asm

    def _asm_template(self, node: Any) -> str:
        template = node.child_by_field_name("assembly_code")
        if template is None:
            return self._raw_template(node.start_byte, node.end_byte)
        return self._raw_template(template.start_byte, template.end_byte)

    def _raw_template(self, start: int, end: int) -> str:
        text = self.text(start, end)
        literals = _STRING_LITERAL.findall(text)
        return " ".join(literals) if literals else text

    def calls(self) -> list[Call]:
        """Call expressions whose callee is a name or a qualified name."""
        if self._calls is None:
            found: list[Call] = []
            for node in self.nodes("call_expression"):
                function = node.child_by_field_name("function")
                arguments = node.child_by_field_name("arguments")
                if function is None or arguments is None:
                    continue
                if function.type not in {"identifier", "qualified_identifier", "template_function"}:
                    continue
                args = tuple(
                    self.text(child.start_byte, child.end_byte).strip()
                    for child in arguments.named_children
                    if child.type != "comment"
                )
                callee = self.text(function.start_byte, function.end_byte)
                callee = callee.split("<", 1)[0].replace(" ", "")
                found.append(Call(callee, args, node.start_byte, node.end_byte))
            self._calls = found
        return self._calls

    def includes(self) -> list[Include]:
        if self._includes is None:
            found: list[Include] = []
            for node in self.nodes("preproc_include"):
                path = node.child_by_field_name("path")
                if path is None:
                    continue
                raw = self.text(path.start_byte, path.end_byte).strip()
                system = raw.startswith("<")
                found.append(Include(raw.strip('<>"'), system, node.start_byte, node.end_byte))
            self._includes = found
        return self._includes

    def defines(self) -> dict[str, tuple[str, int]]:
        """Object-like macros: name -> (value text, offset of the ``#define``); the first
        definition of a name wins."""
        if self._defines is None:
            found: dict[str, tuple[str, int]] = {}
            for node in self.nodes("preproc_def"):
                name = node.child_by_field_name("name")
                value = node.child_by_field_name("value")
                if name is None:
                    continue
                key = self.text(name.start_byte, name.end_byte)
                text = "" if value is None else self.text(value.start_byte, value.end_byte)
                found.setdefault(key, (_strip_comment(text).strip(), node.start_byte))
            self._defines = found
        return self._defines


#: Node types indexed by one walk of the tree, for the rules and the preprocessor reading.
INDEXED = frozenset(
    {
        "call_expression",
        "preproc_if",
        "preproc_ifdef",
        "preproc_include",
        "preproc_def",
        "preproc_function_def",
        "gnu_asm_expression",
        "init_declarator",
        "enumerator",
        "binary_expression",
        "for_statement",
        "optional_parameter_declaration",
        "function_declarator",
        "parameter_declaration",
        "field_declaration",
        "type_definition",
        "struct_specifier",
        "class_specifier",
        "enum_specifier",
        "declaration",
        "alias_declaration",
    }
)
_STRING_TYPES = frozenset(
    {"string_literal", "char_literal", "raw_string_literal", "system_lib_string"}
)
_ASM_WORDS = frozenset({"asm", "__asm__", "__asm"})
#: Inline assembly written inside a macro body.
_MACRO_ASM = re.compile(r"\b(?:asm|__asm__|__asm)\s*(?:volatile\s*|__volatile__\s*)?\(")
_STRING_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def _strip_comment(text: str) -> str:
    return re.sub(r"//.*|/\*.*?\*/", "", text)


def parse(data: bytes, macros: ProjectMacros = NO_MACROS) -> CudaSource:
    """Parse one file's bytes (never raises on bad syntax: error nodes keep their tokens);
    its branches are read with the project's ``macros``."""
    return CudaSource(data, _parser().parse(data), macros=macros)


_LAST: list[tuple[str, CudaSource]] = []


def parse_text(text: str, macros: ProjectMacros = NO_MACROS) -> CudaSource:
    """Parse a decoded text, reusing the last parse of the same text with the same project
    ``macros`` (the rules of one file and its guard regions share one parse)."""
    if _LAST and _LAST[0][0] is text and _LAST[0][1].macros == macros:
        return _LAST[0][1]
    parsed = parse(text.encode("utf-8", "surrogateescape"), macros)
    _LAST[:] = [(text, parsed)]
    return parsed
