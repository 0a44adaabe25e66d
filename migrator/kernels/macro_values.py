"""Object-like macros a project defines once, outside any vendor or architecture branch, as a
preprocessor expression whose value on HIP is known: ``#define DG_ADVANCED (CUDART_VERSION >=
11080)`` is 0 for hipcc (``CUDART_VERSION`` is never defined there), so ``#if DG_ADVANCED`` in
another file is false on ROCm, as the compiler sees it after expanding the macro. One file's
preprocessor reading cannot know that alone: the values are read once per scan and set for
each file's analysis (``preproc.project_macro_values``)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from migrator.kernels import preproc
from migrator.kernels.source import CudaSource, parse, parse_text
from migrator.kernels.spellings import standard_condition

#: A file worth parsing: it defines an object-like macro whose value tests something.
_DEFINE = re.compile(
    rb"^[ \t]*#[ \t]*define[ \t]+\w+[ \t]+[^\n]*(?:[<>=!]=|[<>]|&&|\|\||\bdefined\b|\band\b|\bor\b)",
    re.M,
)
_ANY_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+(\w+)", re.M)
#: A value worth evaluating: an expression that tests a macro (not a plain number or a type).
_TESTS = re.compile(r"[<>=!]=?|&&|\|\||\band\b|\bor\b|\bnot\b|\bdefined\b")
#: Longest value evaluated.
_MAX_VALUE = 512


def _guard_only(source: CudaSource, start: int) -> bool:
    """Whether every conditional around ``start`` is one hipcc takes, or an include guard
    (``#ifndef NAME`` whose branch defines ``NAME``)."""
    for node, chain in preproc.all_branches(source):
        for branch in chain:
            if not branch.start <= start < branch.end:
                continue
            if branch.on_hip == 1:
                continue
            name = node.child_by_field_name("name")
            word = "" if name is None else source.text(name.start_byte, name.end_byte)
            guard = (
                node.type == "preproc_ifdef"
                and node.children
                and node.children[0].type == "#ifndef"
                and word in source.defines()
                and branch is chain[0]
            )
            if not guard:
                return False
    return True


def _value(text: str) -> int | None:
    parsed = parse_text(f"#if {text}\n#endif\n")
    node = next(iter(parsed.nodes("preproc_if")), None)
    if node is None:
        return None
    source, condition = standard_condition(parsed, node, node.child_by_field_name("condition"))
    if condition is None:
        return None
    return preproc.evaluate(source, condition, hip=True)


def macro_values(sources: Iterable[bytes]) -> dict[str, int]:
    """name -> value on HIP of each object-like macro the sources define exactly once, outside
    any branch hipcc may skip, as an expression that tests macros and has a known value."""
    definitions: Counter[str] = Counter()
    candidates: dict[str, str] = {}
    for data in sources:
        definitions.update(match.group(1).decode() for match in _ANY_DEFINE.finditer(data))
        if not _DEFINE.search(data):
            continue
        source = parse(data)
        for name, (value, offset) in source.defines().items():
            if value and len(value) <= _MAX_VALUE and _TESTS.search(value):
                if _guard_only(source, offset):
                    candidates[name] = value
    values: dict[str, int] = {}
    for name, text in sorted(candidates.items()):
        if definitions[name] != 1:
            continue  # defined more than once: which one a file sees depends on its includes
        result = _value(text)
        if result is not None:
            values[name] = result
    return values


__all__ = ["macro_values"]
