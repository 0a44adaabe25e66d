"""Preprocessor branches a project's build turns on only with CUDA: ``#ifdef FT_WITH_CUDA``
where the build defines ``FT_WITH_CUDA`` only once it has found ``nvcc`` (the build model's
``cuda_macros``). A ROCm build compiles the other branch, typically one that raises ("not
compiled with GPU support"): the code is compiled only with CUDA, not "never compiled for AMD"
by the project's choice."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from migrator.kernels import preproc
from migrator.kernels.source import CudaSource

_WORD = re.compile(r"[A-Za-z_]\w*")
_PREPROCESSOR_LINE = re.compile(rb"(?m)^[ \t]*#.*$")
_COMMENT = re.compile(rb"//[^\n]*|/\*.*?\*/", re.S)
#: What a branch does that only raises: a check that always fails, an error, a throw.
_RAISES = re.compile(
    rb"TORCH_CHECK\s*\(\s*(?:false|0)\b|AT_ERROR\s*\(|TORCH_INTERNAL_ASSERT\s*\(\s*(?:false|0)\b"
    rb"|\bthrow\b|#\s*error|\bassert\s*\(\s*(?:false|0)\b|\babort\s*\(|runtime_error"
)


@dataclass(frozen=True, slots=True)
class GatedBranch:
    """A conditional whose code a build compiles only with CUDA: where its directive is, the
    macro, and where the build defines it."""

    directive_start: int
    directive_end: int
    directive: str
    macro: str
    build: str
    line: int


def cuda_build_branches(
    source: CudaSource, macros: Mapping[str, tuple[str, int]]
) -> list[GatedBranch]:
    """Each ``#if``/``#ifdef`` on a macro of ``macros`` whose branch for the macro holds code
    (a call or a declaration; a branch that only reports the build, ``return true;``, does not
    count) and whose other branch only raises: there the GPU path fails on ROCm. A branch
    whose other side degrades quietly (``return -1;``) is part of the build's gate, reported
    at the build."""
    if not macros:
        return []
    found: list[GatedBranch] = []
    for node, chain in preproc.all_branches(source):
        if not chain:
            continue
        condition = node.child_by_field_name("condition") or node.child_by_field_name("name")
        if condition is None:
            continue
        text = source.text(condition.start_byte, condition.end_byte)
        hits = sorted(set(_WORD.findall(text)) & set(macros))
        if not hits:
            continue
        negated = chain[0].directive.startswith("#ifndef") or text.lstrip().startswith("!")
        target = chain[1] if negated and len(chain) > 1 else None if negated else chain[0]
        if target is None or not _holds_code(source.data[target.start : target.end]):
            continue
        others = [b for b in chain if b is not target]
        if not others or not all(_RAISES.search(source.data[b.start : b.end]) for b in others):
            continue
        line_end = source.data.find(b"\n", node.start_byte)
        end = node.end_byte if line_end < 0 else line_end
        build, line = macros[hits[0]]
        found.append(GatedBranch(node.start_byte, end, chain[0].directive, hits[0], build, line))
    return found


def _holds_code(body: bytes) -> bool:
    body = _PREPROCESSOR_LINE.sub(b"", _COMMENT.sub(b"", body))
    return b"(" in body and b";" in body


__all__ = ["GatedBranch", "cuda_build_branches"]
