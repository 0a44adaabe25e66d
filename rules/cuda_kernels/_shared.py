"""What the kernel rules share: the construct table and the classification of an inline
assembly template."""

from __future__ import annotations

import re
from typing import Any

from migrator.api import load_table

#: A PTX instruction: a mnemonic with a dotted suffix (``mov.u32``, ``lop3.b32``), a special
#: register (``%laneid``), a predicate guard (``@p``) or a register declaration (``.reg``).
_PTX = re.compile(
    r"(?<![\w.])[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+|%%?(?:laneid|clock|smid|warpid|globaltimer|lanemask)|(?<![\w])\.reg\b|@!?%?p"
)
#: AMD GCN/CDNA instructions (``v_add_f32``, ``s_waitcnt``, ``ds_read_b32``): a HIP branch's asm.
_GCN = re.compile(r"\b(?:v|s|ds|buffer|global|flat|scratch)_[a-z0-9_]+\b")
#: Host CPU assembly (x86 and Arm): a breakpoint, a spin-wait hint, a fence, a timestamp read,
#: x86 registers. Host code compiles for the CPU on ROCm as on CUDA: it is not PTX.
_HOST = re.compile(
    r"(?m)^\s*(?:lock\s*;?\s*)?(?:int3|int\s+\$?(?:0x)?3|rdtscp?|cpuid|pause|nop|ud2|hlt|[mls]fence|xgetbv"
    r"|yield|wf[ei]|sevl?|dmb|dsb|isb)\b"
    r"|%%?[re]?(?:ax|bx|cx|dx|si|di|sp|bp)\b|%%?[xyz]mm\d"
    r"|\b(?:mov|add|sub|xor|and|or|lea|push|pop|cmpxchg|xchg)[bwlq]?\s+[%$]"
)


def table() -> dict[str, Any]:
    data: dict[str, Any] = load_table("kernel_constructs")
    return data


def api_triggers(api_table: str) -> tuple[str, ...]:
    """The names and prefixes of the table ``api_table``: a rule's prefilter triggers."""
    api = table()[api_table]
    return (*api["names"], *api.get("prefixes", ()))


def asm_class(template: str) -> str | None:
    """The class of an inline assembly template: ``hopper``, ``tensor_core``, ``async_copy``,
    ``ptx``; None for an empty template (a compiler barrier), AMD assembly or host CPU
    assembly."""
    body = template.strip()
    if not body:
        return None
    ptx = table()["ptx"]
    lowered = body.lower()
    for key in ("hopper", "tensor_core", "async_copy"):
        if any(_starts_instruction(lowered, prefix) for prefix in ptx[key]):
            return key
    if _GCN.search(lowered) and not _PTX.search(lowered.replace("%%", "%")):
        return None
    if _HOST.search(lowered) and not _PTX.search(lowered.replace("%%", "%")):
        return None  # x86/Arm host assembly (a debugger breakpoint, a timestamp read)
    return "ptx"


def _starts_instruction(text: str, prefix: str) -> bool:
    index = text.find(prefix)
    while index >= 0:
        if index == 0 or not (text[index - 1].isalnum() or text[index - 1] in "._"):
            return True
        index = text.find(prefix, index + 1)
    return False


def lines_once(offsets: list[tuple[int, int]], line_of: object) -> list[tuple[int, int]]:
    """The first (start, end) span of each line, in order (one finding per line)."""
    seen: set[int] = set()
    out: list[tuple[int, int]] = []
    for start, end in sorted(offsets):
        line = line_of(start)  # type: ignore[operator]
        if line not in seen:
            seen.add(line)
            out.append((start, end))
    return out


def construct_spans(
    view: Any, asm_kind: str, api_table: str, *, calls_only: bool
) -> list[tuple[int, int]]:
    """Byte spans of one construct class, one per line: asm blocks of ``asm_kind`` and the C++
    names of the table ``api_table`` (called, or with ``calls_only`` off, named anywhere in code:
    a type, a field, an attribute, or a name starting with one of the table's ``prefixes``)."""
    source = view.source
    spans = [
        (block.start, block.end)
        for block in source.asm_blocks()
        if asm_class(block.template) == asm_kind
    ]
    api = table()[api_table]
    names = set(api["names"])
    prefixes = tuple(api.get("prefixes", ()))
    if calls_only:
        spans.extend(
            (call.start, call.end)
            for call in source.calls()
            if call.callee.rsplit("::", 1)[-1] in names
        )
    else:
        own = declared_here(source)
        spans.extend(
            (token.start, token.end)
            for token in source.tokens()
            if (token.text in names or (prefixes and token.text.startswith(prefixes)))
            and token.type in _NAME_TOKENS
            and token.start not in own
        )
    return lines_once(spans, source.line_of)


def declared_here(source: Any) -> frozenset[int]:
    """Byte offsets of the names the file's own function declarations and definitions
    declare (``void warpgroup_arrive() { asm(...); }``): a project's wrapper of a feature is
    reported by what it holds, not by its name."""
    offsets: set[int] = set()
    for node in source.nodes("function_declarator"):
        target = node.child_by_field_name("declarator")
        while target is not None and target.type in {"qualified_identifier", "template_function"}:
            target = target.child_by_field_name("name")
        if target is not None and target.type in {"identifier", "field_identifier"}:
            offsets.add(target.start_byte)
    return frozenset(offsets)


_NAME_TOKENS = frozenset(
    {
        "identifier",
        "type_identifier",
        "field_identifier",
        "namespace_identifier",
        "__cluster_dims__",
    }
)
