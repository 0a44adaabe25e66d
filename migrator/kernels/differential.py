"""Differential preprocessing: each ``__global__`` and ``__device__`` function of a CUDA source
read as nvcc's device pass reads it for each NVIDIA architecture the project builds for, and as
hipcc reads it for AMD. A function with code under CUDA and none under HIP (its body, or every
definition of its name hipcc compiles, empty or a stub: ``#pragma message``, an assertion, a
constant ``return``) compiles to nothing on AMD: the kernel launches and writes nothing.

The conditions are those of ``migrator.kernels.preproc`` (our own evaluator: no compiler runs
here). nvcc's device pass defines ``__CUDACC__``, ``__NVCC__`` and ``__CUDA_ARCH__`` (``800``
for sm_80); hip-clang defines ``__HIP__``, ``__HIPCC__`` and ``__HIP_DEVICE_COMPILE__``, its
headers ``__HIP_PLATFORM_AMD__``, PyTorch's ROCm build ``USE_ROCM``, and never
``__CUDA_ARCH__`` (``docs/kernels.md``). A branch whose value is not known counts as compiled on
both sides: an unknown project macro never makes a function look empty on AMD."""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from migrator.kernels import preproc
from migrator.kernels.archs import DEFAULT_ARCHS
from migrator.kernels.source import CudaSource
from migrator.kernels.stubs import holds_code

#: The NVIDIA architectures of the project being scanned, as ``__CUDA_ARCH__`` values.

_QUALIFIERS = frozenset({"__global__", "__device__"})
_WORDS = re.compile(r"[A-Za-z_]\w*")
_DECLARATOR_WRAPPERS = frozenset(
    {"pointer_declarator", "reference_declarator", "parenthesized_declarator"}
)
Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class EmptyOnAmd:
    """A function hipcc compiles with an empty body (or a stub) where nvcc compiles code."""

    name: str
    kernel: bool  # a ``__global__`` function (else ``__device__``)
    start: int  # the definition's first byte
    end: int  # the byte after its closing brace
    archs: tuple[int, ...]  # the NVIDIA architectures whose device pass gives it code
    guard: str  # the directive whose branch takes the code away on AMD ("" when unseen)


@dataclass(frozen=True, slots=True)
class _Definition:
    name: str
    kernel: bool
    start: int
    end: int
    body: Span  # inside the braces


def empty_on_amd(source: CudaSource, archs: Sequence[int] | None = None) -> list[EmptyOnAmd]:
    """The ``__global__``/``__device__`` definitions that hold code for some NVIDIA
    architecture of ``archs`` (default: the project's, ``source.macros.cuda_archs``) and none on AMD: the
    function compiles to nothing there. A name with a definition that has code on AMD (an
    overload, the other side of an ``#if`` around whole functions) is never reported."""
    chosen = tuple(archs) if archs is not None else source.macros.cuda_archs or DEFAULT_ARCHS
    key = f"empty-on-amd:{chosen}"
    cached = source.memo.get(key)
    if cached is None:
        cached = _empty_on_amd(source, chosen)
        source.memo[key] = cached
    return cached


def _empty_on_amd(source: CudaSource, archs: tuple[int, ...]) -> list[EmptyOnAmd]:
    if b"__global__" not in source.data and b"__device__" not in source.data:
        return []
    definitions = _definitions(source)
    if not definitions:
        return []
    chains = preproc.all_branches(source)
    hip = _Skipped.of(chains, preproc.platform_values(source, hip=True))
    cuda = {
        arch: _Skipped.of(chains, preproc.platform_values(source, False, arch)) for arch in archs
    }
    guards = _Guards.of(chains)
    by_name: dict[str, list[tuple[_Definition, bool, bool, tuple[int, ...]]]] = {}
    for definition in definitions:
        on_hip = not hip.covers(definition.start)
        hip_code = on_hip and hip.has_code(source, definition.body)
        with_code = tuple(
            arch
            for arch in archs
            if not cuda[arch].covers(definition.start)
            and cuda[arch].has_code(source, definition.body)
        )
        by_name.setdefault(definition.name, []).append((definition, on_hip, hip_code, with_code))
    found: list[EmptyOnAmd] = []
    for entries in by_name.values():
        if any(hip_code for _, _, hip_code, _ in entries):
            continue  # some definition of the name computes on AMD
        code_archs = tuple(sorted({arch for *_, with_code in entries for arch in with_code}))
        if not code_archs:
            continue  # empty for NVIDIA too: a declaration-like stub, not a lost kernel
        definitions_with_code = [entry[0] for entry in entries if entry[3]][:_GUARD_LOOKUPS]
        for definition, on_hip, _, _ in entries:
            if not on_hip:
                continue  # hipcc never sees this definition: no empty kernel is built
            found.append(
                EmptyOnAmd(
                    definition.name,
                    definition.kernel,
                    definition.start,
                    definition.end,
                    code_archs,
                    guards.first([definition, *definitions_with_code]),
                )
            )
    return sorted(found, key=lambda item: item.start)


def _definitions(source: CudaSource) -> list[_Definition]:
    """The ``__global__``/``__device__`` function definitions the parse found whole, those a
    macro of the file declares included (``DEFINE_KERNEL(name, ...) { ... }`` where the macro
    expands to ``__global__ void name(...)``: named by the macro's first argument)."""
    declaring = _declaring_macros(source)
    out: list[_Definition] = []
    for node in source.nodes("function_definition"):
        qualifiers = frozenset(child.type for child in node.children) & _QUALIFIERS
        declarator = node.child_by_field_name("declarator")
        name = ""
        if not qualifiers and declaring:
            macro, name = _macro_declared(source, declarator)
            qualifiers = declaring.get(macro, frozenset())
        if not qualifiers:
            continue
        body = node.child_by_field_name("body")
        if body is None or body.type != "compound_statement":
            continue
        if source.data[body.start_byte : body.start_byte + 1] != b"{":
            continue
        if source.data[body.end_byte - 1 : body.end_byte] != b"}":
            continue
        name = name or _name(source, declarator)
        if not name:
            continue
        out.append(
            _Definition(
                name,
                "__global__" in qualifiers,
                node.start_byte,
                node.end_byte,
                (body.start_byte + 1, body.end_byte - 1),
            )
        )
    return out


def _declaring_macros(source: CudaSource) -> dict[str, frozenset[str]]:
    """The file's function-like macros whose expansion declares a ``__global__`` or
    ``__device__`` function, with the qualifiers it uses."""
    out: dict[str, frozenset[str]] = {}
    for node in source.nodes("preproc_function_def"):
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is None or value is None:
            continue
        words = set(_WORDS.findall(source.text(value.start_byte, value.end_byte))) & _QUALIFIERS
        if words:
            out[source.text(name.start_byte, name.end_byte)] = frozenset(words)
    return out


def _macro_declared(source: CudaSource, declarator: Any) -> tuple[str, str]:
    """(the macro, the function's name: its first argument) of a definition written as a
    macro call and a body (``DEFINE_KERNEL(flash_fwd_kernel, bool Is_causal) { ... }``)."""
    if declarator is None or declarator.type != "function_declarator":
        return "", ""
    inner = declarator.child_by_field_name("declarator")
    parameters = declarator.child_by_field_name("parameters")
    if inner is None or parameters is None or inner.type != "identifier":
        return "", ""
    arguments = source.text(parameters.start_byte, parameters.end_byte)
    first = _WORDS.search(arguments)
    return source.text(inner.start_byte, inner.end_byte), first.group(0) if first else ""


def _name(source: CudaSource, declarator: Any) -> str:
    """The function's name from its declarator, without template arguments."""
    current = declarator
    while current is not None and current.type in _DECLARATOR_WRAPPERS:
        current = current.child_by_field_name("declarator")
    if current is None or current.type != "function_declarator":
        return ""
    inner = current.child_by_field_name("declarator")
    if inner is None:
        return ""
    text = source.text(inner.start_byte, inner.end_byte)
    return "".join(text.split("<", 1)[0].split())


#: At most this many definitions of one name are searched for the guard a message names.
_GUARD_LOOKUPS = 8
#: At most this many earlier branches are tried as the one around a definition.
_ENCLOSING_LOOKUPS = 64


@dataclass(frozen=True, slots=True)
class _Skipped:
    """The bytes a platform never compiles: the union of the branch bodies it skips (a branch
    whose value is unknown is compiled), as sorted disjoint intervals."""

    starts: list[int]
    ends: list[int]

    @classmethod
    def of(
        cls,
        chains: Sequence[tuple[Any, list[preproc.Branch]]],
        values: Sequence[Sequence[preproc.Value]],
    ) -> _Skipped:
        spans = sorted(
            (branch.start, branch.end)
            for (_, chain), chain_values in zip(chains, values, strict=True)
            for branch, value in zip(chain, chain_values, strict=True)
            if value == 0 and branch.end > branch.start
        )
        starts: list[int] = []
        ends: list[int] = []
        for start, end in spans:
            if ends and start <= ends[-1]:
                ends[-1] = max(ends[-1], end)
            else:
                starts.append(start)
                ends.append(end)
        return cls(starts, ends)

    def covers(self, offset: int) -> bool:
        """Whether the platform skips the byte at ``offset``."""
        index = bisect.bisect_right(self.starts, offset) - 1
        return index >= 0 and offset < self.ends[index]

    def has_code(self, source: CudaSource, body: Span) -> bool:
        """Whether ``body``, without the bytes the platform skips, computes something."""
        first, last = body
        kept: list[bytes] = []
        position = first
        index = max(0, bisect.bisect_right(self.starts, first) - 1)
        while index < len(self.starts) and self.starts[index] < last:
            start, end = max(self.starts[index], first), min(self.ends[index], last)
            if start > position:
                kept.append(source.data[position:start])
            position = max(position, end)
            index += 1
        if position < last:
            kept.append(source.data[position:last])
        return holds_code(b"\n".join(kept), preproc.stub_macros(source))


@dataclass(frozen=True, slots=True)
class _Guards:
    """The branches hipcc skips that hold code, by start: the guard a message names."""

    starts: list[int]
    branches: list[preproc.Branch]

    @classmethod
    def of(cls, chains: Sequence[tuple[Any, list[preproc.Branch]]]) -> _Guards:
        found = sorted(
            (
                (branch.start, branch)
                for _, chain in chains
                for branch in chain
                if branch.on_hip == 0 and branch.has_code
            ),
            key=lambda item: item[0],
        )
        return cls([start for start, _ in found], [branch for _, branch in found])

    def first(self, definitions: Sequence[_Definition]) -> str:
        """The directive of the first such branch inside one of ``definitions``, else of the
        innermost one around it ("" when none)."""
        for definition in definitions:
            index = bisect.bisect_left(self.starts, definition.start)
            if index < len(self.starts) and self.starts[index] < definition.end:
                return self.branches[index].directive
        for definition in definitions:
            index = bisect.bisect_right(self.starts, definition.start) - 1
            for candidate in range(index, max(-1, index - _ENCLOSING_LOOKUPS), -1):
                if definition.start < self.branches[candidate].end:
                    return self.branches[candidate].directive
        return ""


#: How the branches were read, said in every message built on this reading: migrate's own
#: evaluator of the preprocessor conditions, not ``nvcc -E``/``hipcc -E`` (no compiler runs in a
#: scan).
READER = "read by migrate's own preprocessor evaluator, not nvcc -E/hipcc -E"


def arch_names(archs: Sequence[int]) -> str:
    """``sm_80, sm_90`` for ``(800, 900)``."""
    return ", ".join(f"sm_{arch // 10}" for arch in archs)


__all__ = ["DEFAULT_ARCHS", "READER", "EmptyOnAmd", "arch_names", "empty_on_amd"]
