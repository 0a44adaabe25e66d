"""The preprocessor's branches as a HIP build sees them: which ``#if``/``#ifdef`` branches of a
CUDA source are compiled by hipcc, which are NVIDIA-only with a portable path beside them (not a
problem), and which are NVIDIA-architecture branches with nothing for AMD (the kernel compiles
to nothing there: still a problem).

Conditions are evaluated in three values (true, false, unknown) under what hip-clang defines
after PyTorch's hipify: ``__HIPCC__``, ``__HIP__``, ``__HIP_PLATFORM_AMD__``, ``USE_ROCM`` (set
by ``cpp_extension`` on ROCm), ``__CUDACC__`` (hipify renames it ``__HIPCC__``); never
``__CUDA_ARCH__`` or ``__NVCC__``. A project macro whose name says ROCm or HIP (``IS_ROCM``,
``BNB_HIP``) counts as defined on ROCm builds; one the project's own headers define only in
branches a HIP build skips counts as undefined there (``migrator.kernels.macros``); any other
unknown macro is unknown."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from migrator.kernels.source import NO_MACROS, CudaSource, ProjectMacros
from migrator.kernels.spellings import standard_condition
from migrator.kernels.stubs import ASYNC_BOOKKEEPING, FAILS, holds_code
from migrator.knowledge.vendor_tokens import ROCM_TOKENS

#: Macros hip-clang (or PyTorch's ROCm extension build) defines, and those it never defines.
HIP_DEFINED = frozenset(
    {
        "USE_ROCM",
        "__HIPCC__",
        "__HIP__",
        "__HIP_PLATFORM_AMD__",
        "__HIP_PLATFORM_HCC__",
        "__CUDACC__",
        "__HIP_DEVICE_COMPILE__",
    }
)
HIP_UNDEFINED = frozenset(
    {
        "__CUDA_ARCH__",
        "__NVCC__",
        "__CUDA_ARCH_FEAT_SM90_ALL",
        "__CUDA_ARCH_FEAT_SM100_ALL",
        "__CUDA_ARCH_SPECIFIC__",
        "__CUDA_ARCH_FAMILY_SPECIFIC__",
        "__HIP_PLATFORM_NVIDIA__",
        "__HIP_PLATFORM_NVCC__",
        "USE_CUDA",
        "__CUDACC_RTC__",
        # nvcc's own version macros: hip-clang never defines them and hipify leaves them
        "__CUDACC_VER_MAJOR__",
        "__CUDACC_VER_MINOR__",
        "__CUDACC_VER_BUILD__",
        "__NVCC_DIAG_PRAGMA_SUPPORT__",
        "CUDART_VERSION",
        "CUBLAS_VERSION",
        "CUSPARSE_VERSION",
        "CUDNN_VERSION",
    }
)
#: Macros with a known value on HIP: hipify renames ``CUDA_VERSION`` to ``TORCH_HIP_VERSION``
#: (major * 100 + minor: 700 for ROCm 7.0), which is below every CUDA version number.
HIP_VALUES = {"CUDA_VERSION": 700, "TORCH_HIP_VERSION": 700}
#: Macros that name an NVIDIA architecture: a branch on them is an architecture branch.
ARCH_MACROS = frozenset(
    {
        "__CUDA_ARCH__",
        "__CUDA_ARCH_FEAT_SM90_ALL",
        "__CUDA_ARCH_FEAT_SM100_ALL",
        "__CUDA_ARCH_SPECIFIC__",
        "__CUDA_ARCH_FAMILY_SPECIFIC__",
    }
)
_WORD = re.compile(r"[A-Za-z0-9]+")
_NUMBER = re.compile(r"^(0[xX][0-9a-fA-F]+|\d+)[uUlL]*$")

Value = int | None


def _names_rocm(name: str) -> bool:
    words = {word.lower() for word in _WORD.findall(name.replace("_", " "))}
    return bool(words & ROCM_TOKENS) and "nvidia" not in words and "nvcc" not in words


def _defined(
    name: str, hip: bool, arch: int | None = None, macros: ProjectMacros = NO_MACROS
) -> Value:
    """Whether ``name`` is defined on HIP, or under nvcc (``arch``: the device pass for that
    NVIDIA architecture, where ``__CUDA_ARCH__`` is defined); None when unknown. ``macros``:
    what the project says of its macros (NVIDIA-only ones, switches nothing turns on, whether
    this file reaches hipcc without hipify)."""
    if name in macros.unset_switches:
        return 0  # an opt-in switch no build of the project turns on
    if hip:
        if name == "__CUDACC__" and macros.unhipified:
            return 0  # no hipify renames it to ``__HIPCC__`` on the way to hipcc
        if name in HIP_DEFINED or name in HIP_VALUES or _names_rocm(name):
            return 1
        if name in HIP_UNDEFINED or name in macros.nvidia_only:
            return 0
        return None
    if name in {"__CUDACC__", "__NVCC__", "USE_CUDA"}:
        return 1
    if arch is not None and name == "__CUDA_ARCH__":
        return 1
    if name in HIP_DEFINED or _names_rocm(name):
        return 0
    return None


def evaluate(source: CudaSource, node: Any, hip: bool, arch: int | None = None) -> Value:
    """The value of a preprocessor expression node on HIP, or under nvcc (for the NVIDIA
    architecture ``arch`` when given: ``__CUDA_ARCH__`` is ``arch``): an int, or None when
    unknown."""
    kind = node.type
    text = source.text(node.start_byte, node.end_byte).strip()
    if kind == "number_literal":
        match = _NUMBER.match(text)
        return int(match.group(1), 0) if match else None
    if kind == "identifier":
        if text in ("true",):
            return 1
        if text in ("false",):
            return 0
        if hip and text in HIP_VALUES:
            return HIP_VALUES[text]
        if hip and text in source.macros.values:
            return source.macros.values[text]  # ``#define DG_X (CUDART_VERSION >= 11080)``
        if not hip and arch is not None and text == "__CUDA_ARCH__":
            return arch
        defined = _defined(text, hip, arch, source.macros)
        if defined == 0:
            return 0  # an undefined macro reads as 0 in #if
        if text not in HIP_DEFINED and _names_rocm(text):
            return 1  # a project's ROCm switch (``#if BNB_HIP``), set on ROCm builds
        if text in ARCH_MACROS and not hip:
            return None
        return None  # defined, but its value is not known here
    if kind == "preproc_defined":
        names = [c for c in node.named_children if c.type == "identifier"]
        if not names:
            return None
        name = source.text(names[0].start_byte, names[0].end_byte)
        return _defined(name, hip, arch, source.macros)
    if kind == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type != "comment"]
        return evaluate(source, inner[0], hip, arch) if inner else None
    if kind == "unary_expression":
        operand = node.child_by_field_name("argument")
        operator = node.child_by_field_name("operator")
        if operand is None or operator is None:
            return None
        value = evaluate(source, operand, hip, arch)
        op = operator.type
        if value is None:
            return None
        if op == "!":
            return int(not value)
        if op == "-":
            return -value
        if op == "~":
            return ~value
        return value
    if kind == "binary_expression":
        left_node = node.child_by_field_name("left")
        right_node = node.child_by_field_name("right")
        operator = node.child_by_field_name("operator")
        if left_node is None or right_node is None or operator is None:
            return None
        op = operator.type
        left = evaluate(source, left_node, hip, arch)
        right = evaluate(source, right_node, hip, arch)
        if op == "&&":
            if left == 0 or right == 0:
                return 0
            return 1 if left is not None and right is not None else None
        if op == "||":
            if (left is not None and left != 0) or (right is not None and right != 0):
                return 1
            return 0 if left == 0 and right == 0 else None
        if left is None or right is None:
            return None
        return _binary(op, left, right)
    return None


def _binary(op: str, left: int, right: int) -> Value:
    table: dict[str, Callable[[], Value]] = {
        "==": lambda: int(left == right),
        "!=": lambda: int(left != right),
        "<": lambda: int(left < right),
        "<=": lambda: int(left <= right),
        ">": lambda: int(left > right),
        ">=": lambda: int(left >= right),
        "+": lambda: left + right,
        "-": lambda: left - right,
        "*": lambda: left * right,
        "&": lambda: left & right,
        "|": lambda: left | right,
        "/": lambda: left // right if right else None,
        "%": lambda: left % right if right else None,
    }
    compute = table.get(op)
    return compute() if compute is not None else None


def _mentions(source: CudaSource, node: Any, names: frozenset[str]) -> bool:
    return any(source.text(child.start_byte, child.end_byte) in names for child in _leaves(node))


def _leaves(node: Any) -> list[Any]:
    out: list[Any] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.child_count == 0:
            out.append(current)
        else:
            stack.extend(current.children)
    return out


@dataclass(frozen=True, slots=True)
class Branch:
    """One branch of a conditional: its body's byte range, its directive, whether hipcc
    compiles it (1, 0 or None for unknown), whether its condition names an NVIDIA
    architecture, and whether its body holds code."""

    start: int
    end: int
    directive: str
    on_hip: Value
    arch: bool
    has_code: bool
    on_cuda: Value = None


@dataclass(frozen=True, slots=True)
class Region:
    """A byte range hipcc never compiles, or compiles to nothing for AMD, and why."""

    start: int
    end: int
    label: str
    fallback: bool  # a sibling branch gives AMD a path


def _directive_text(source: CudaSource, node: Any) -> str:
    line_end = source.data.find(b"\n", node.start_byte)
    end = node.end_byte if line_end < 0 else min(line_end, node.end_byte)
    return " ".join(source.text(node.start_byte, end).split())[:80]


def _body_start(source: CudaSource, node: Any) -> int:
    line_end = source.data.find(b"\n", node.start_byte)
    return node.end_byte if line_end < 0 else line_end + 1


def _has_code(source: CudaSource, start: int, end: int) -> bool:
    """Whether a branch body computes something: an ``#else`` holding only a ``#pragma
    message``, an assertion, a constant ``return`` or a macro of the file that expands to one of
    those is no AMD path (``migrator.kernels.stubs``)."""
    return holds_code(source.data[start:end], stub_macros(source))


def stub_macros(source: CudaSource) -> frozenset[str]:
    """The file's macros every definition of which expands to nothing or to a stub (``#define
    UNSUPPORTED printf("needs sm80")``): a use of one computes nothing. Computed once per
    parse."""
    cached = source.memo.get("stub-macros")
    if cached is None:
        stubs: set[str] = set()
        code: set[str] = set()
        for node in source.nodes("preproc_def", "preproc_function_def"):
            name = node.child_by_field_name("name")
            if name is None:
                continue
            word = source.text(name.start_byte, name.end_byte)
            value = node.child_by_field_name("value")
            body = b"" if value is None else source.data[value.start_byte : value.end_byte]
            (code if body.strip() and holds_code(body) else stubs).add(word)
        cached = frozenset(stubs - code)
        source.memo["stub-macros"] = cached
    return cached


def _links(node: Any) -> list[Any]:
    """The nodes of one ``#if``/``#ifdef`` chain: the opening directive, then each
    ``#elif``/``#elifdef``/``#else``."""
    out: list[Any] = []
    current: Any = node
    while current is not None and current.type in _LINK_TYPES:
        out.append(current)
        current = current.child_by_field_name("alternative")
    return out


_LINK_TYPES = frozenset(
    {"preproc_if", "preproc_elif", "preproc_ifdef", "preproc_elifdef", "preproc_else"}
)


def _link_value(source: CudaSource, link: Any, hip: bool, arch: int | None = None) -> Value:
    """The value of one link's own condition for a platform: HIP, or CUDA for the NVIDIA
    architecture ``arch`` (``800`` for sm_80; None when the architecture is not known)."""
    kind = link.type
    if kind in {"preproc_if", "preproc_elif"}:
        # ``#if defined(X) and not Y``: evaluated as the symbols it spells
        spelled, condition = standard_condition(source, link, link.child_by_field_name("condition"))
        value = None if condition is None else evaluate(spelled, condition, hip=hip, arch=arch)
        return None if value is None else int(bool(value))
    if kind in {"preproc_ifdef", "preproc_elifdef"}:
        name = link.child_by_field_name("name")
        word = "" if name is None else source.text(name.start_byte, name.end_byte)
        negated = link.children and link.children[0].type in {"#ifndef", "#elifndef"}
        defined = _defined(word, hip=hip, arch=arch, macros=source.macros)
        return None if defined is None else int(bool(defined) != bool(negated))
    return 1  # #else


def _names_arch(source: CudaSource, link: Any) -> bool:
    if link.type in {"preproc_if", "preproc_elif"}:
        spelled, condition = standard_condition(source, link, link.child_by_field_name("condition"))
        return condition is not None and _mentions(spelled, condition, ARCH_MACROS)
    if link.type in {"preproc_ifdef", "preproc_elifdef"}:
        name = link.child_by_field_name("name")
        return name is not None and source.text(name.start_byte, name.end_byte) in ARCH_MACROS
    return False


def _chain_effective(values: list[Value]) -> list[Value]:
    """Each branch's value given its own condition and whether an earlier branch was taken."""
    out: list[Value] = []
    earlier: Value = 0
    for value in values:
        out.append(_effective(earlier, value))
        earlier = _taken(earlier, value)
    return out


def branches(source: CudaSource, node: Any) -> list[Branch]:
    """The branches of one ``#if``/``#ifdef`` chain, each with its effective value on HIP
    (its own condition and no earlier branch taken)."""
    links = _links(node)
    on_hip = _chain_effective([_link_value(source, link, hip=True) for link in links])
    on_cuda = _chain_effective([_link_value(source, link, hip=False) for link in links])
    endif = next((c for c in node.children if c.type == "#endif"), None)
    last_end = endif.start_byte if endif is not None else node.end_byte
    out: list[Branch] = []
    for index, link in enumerate(links):
        start = _body_start(source, link)
        end = links[index + 1].start_byte if index + 1 < len(links) else last_end
        out.append(
            Branch(
                start,
                max(start, end),
                _directive_text(source, link),
                on_hip[index],
                _names_arch(source, link),
                _has_code(source, start, end),
                on_cuda[index],
            )
        )
    return out


def platform_values(source: CudaSource, hip: bool, arch: int | None = None) -> list[list[Value]]:
    """For each conditional of ``all_branches``, each branch's effective value for one
    platform: HIP (``hip``), or nvcc's device pass for the NVIDIA architecture ``arch``
    (``__CUDA_ARCH__`` is ``arch`` there). Computed once per parse and platform."""
    key = f"values:{hip}:{arch}"
    cached = source.memo.get(key)
    if cached is None:
        cached = [
            _chain_effective([_link_value(source, link, hip, arch) for link in _links(node)])
            for node, _ in all_branches(source)
        ]
        source.memo[key] = cached
    return cached


def _effective(earlier: Value, value: Value) -> Value:
    """A branch's value given whether an earlier branch of its chain was taken."""
    if earlier == 1:
        return 0
    if earlier == 0:
        return value
    return 0 if value == 0 else None


def _taken(earlier: Value, value: Value) -> Value:
    """Whether a branch of the chain up to this one (included) was taken."""
    if earlier == 1 or value == 1:
        return 1
    if earlier == 0 and value == 0:
        return 0
    return None


def all_branches(source: CudaSource) -> list[tuple[Any, list[Branch]]]:
    """Every conditional of the file with its branches (computed once per parse)."""
    cached = source.memo.get("branches")
    if cached is None:
        cached = [
            (node, branches(source, node)) for node in source.nodes("preproc_if", "preproc_ifdef")
        ]
        source.memo["branches"] = cached
    return cached


def rocm_only(source: CudaSource, offset: int) -> bool:
    """Whether the code at ``offset`` sits in a branch only ROCm builds compile (``#if
    BNB_HIP``, ``#ifdef USE_ROCM``): code the project wrote for AMD."""
    spans = source.memo.get("rocm-only")
    if spans is None:
        spans = [
            (branch.start, branch.end)
            for _, chain in all_branches(source)
            for branch in chain
            if branch.on_hip == 1 and branch.on_cuda == 0
        ]
        source.memo["rocm-only"] = spans
    return any(start <= offset < end for start, end in spans)


def has_rocm_branch(source: CudaSource) -> bool:
    """Whether the file has a branch only ROCm builds compile (it already chooses per vendor)."""
    return any(
        branch.on_hip == 1 and branch.on_cuda == 0 and branch.has_code
        for _, chain in all_branches(source)
        for branch in chain
    )


def regions(source: CudaSource) -> list[Region]:
    """Byte ranges that hipcc skips. A skipped branch with a sibling that gives AMD code, or
    one excluded by a vendor condition (``#ifndef USE_ROCM``), has ``fallback`` or a vendor
    label; an NVIDIA-architecture branch with nothing for AMD is a region too, marked
    ``fallback=False``, so that what it holds is still reported."""
    found: list[Region] = []
    for _, chain in all_branches(source):
        for branch in chain:
            if branch.on_hip != 0:
                continue
            fallback = any(
                other is not branch and other.on_hip != 0 and other.has_code for other in chain
            )
            if not fallback and branch.arch and _bookkeeping_only(source, branch):
                fallback = True  # nothing lost on AMD: no async copy there to commit or wait for
                label = f"hipcc skips `{branch.directive}`, which only orders async copies"
            elif fallback:
                label = f"hipcc skips `{branch.directive}`; another branch compiles for AMD"
            elif branch.on_cuda == 0 and not branch.arch:
                label = f"no build of the project compiles `{branch.directive}`"
            elif branch.arch:
                label = f"`{branch.directive}` is never true on AMD and has no AMD branch"
            else:
                label = f"excluded from ROCm builds by `{branch.directive}`"
            found.append(Region(branch.start, branch.end, label, fallback or not branch.arch))
    return sorted(found, key=lambda region: (region.start, -region.end))


def _bookkeeping_only(source: CudaSource, branch: Branch) -> bool:
    """Whether the branch holds async-copy bookkeeping PTX (``cp.async.commit_group``,
    ``cp.async.wait_group``) and no other code: the copies it orders are reported where they
    are issued, and where they have an AMD fallback there is nothing to order."""
    body = source.data[branch.start : branch.end]
    return not branch.has_code and ASYNC_BOOKKEEPING.search(body) is not None


def skipped_on_hip(source: CudaSource) -> list[tuple[int, int, str]]:
    """(start, end, label) byte ranges that never run on AMD because the project gives AMD
    another path or excludes them from ROCm builds: the guard regions of a CUDA source."""
    return [(r.start, r.end, r.label) for r in regions(source) if r.fallback]


def no_amd_path(source: CudaSource, offset: int) -> str | None:
    """Why the code at ``offset`` compiles to nothing on AMD with nothing in its place (an
    NVIDIA-architecture branch with no other branch), or None."""
    for region in regions_cached(source):
        if region.start <= offset < region.end and not region.fallback:
            return region.label
    return None


def regions_cached(source: CudaSource) -> list[Region]:
    """``regions`` computed once per parse."""
    cached = source.memo.get("regions")
    if cached is None:
        cached = regions(source)
        source.memo["regions"] = cached
    return cached


#: CUDA library version macros: never defined on HIP, so a branch on them compiles out there.
VERSION_MACROS = frozenset(
    {"CUDART_VERSION", "CUBLAS_VERSION", "CUSPARSE_VERSION", "CUDNN_VERSION", "CUDA_VERSION"}
)


#: The compiler macro a HIP build without hipify never defines (``ProjectMacros.unhipified``).
_UNHIPIFIED_COMPILER = frozenset({"__CUDACC__"})
_QUOTED = re.compile(rb'(?m)^[ \t]*#[ \t]*include[ \t]*"')
_DEFINE_LINE = re.compile(rb"(?m)^[ \t]*#[ \t]*define[ \t]+\w+[^\n]*\S")
_LEGACY_ONLY = re.compile(r"__CUDA_ARCH__\s*<|CUDA_VERSION\s*<")
_FEATURE_GATE = re.compile(r"__CUDA_ARCH__\s*>|_VERSION\s*>|>=\s*__CUDA_ARCH__")


@dataclass(frozen=True, slots=True)
class DeadBranch:
    """A branch with code that hipcc skips, with nothing in its place for AMD, because its
    condition reads an NVIDIA architecture or a CUDA library version."""

    directive_start: int
    directive_end: int
    directive: str


def dead_on_amd(source: CudaSource) -> list[DeadBranch]:
    """Branches whose statements compile out on AMD with no other branch for it: ``#if
    __CUDA_ARCH__ >= 800`` or ``#if CUBLAS_VERSION >= 11600`` with no ``#else``."""
    found: list[DeadBranch] = []
    compiler = _UNHIPIFIED_COMPILER if source.macros.unhipified else frozenset()
    for node, chain in all_branches(source):
        first = chain[0] if chain else None
        if first is None or first.on_cuda == 0:
            continue
        condition = node.child_by_field_name("condition") or node.child_by_field_name("name")
        if condition is None:
            continue
        # ``#ifdef __CUDACC__`` where no hipify renames it: its other branch was written for the
        # host compiler (``#define HOSTDEVICE`` with nothing), not for AMD, so it is no AMD path
        host_split = bool(compiler) and _mentions(source, condition, compiler)
        if host_split:
            if first.on_hip != 0:
                continue  # the condition also admits hipcc (``|| defined(__HIPCC__)``)
        elif any(branch.on_hip != 0 and branch.has_code for branch in chain):
            continue
        if not _mentions(source, condition, ARCH_MACROS | VERSION_MACROS | compiler):
            continue
        if _only_specialisations(node, first):
            continue  # the primary template serves AMD
        if _bookkeeping_only(source, first):
            continue  # orders async copies: nothing to order on AMD
        condition_text = source.text(condition.start_byte, condition.end_byte)
        if _LEGACY_ONLY.search(condition_text) and not _FEATURE_GATE.search(condition_text):
            continue  # code for older NVIDIA GPUs only (``__CUDA_ARCH__ < 800``): AMD takes the rest
        raw = source.data[first.start : first.end]
        body = re.sub(rb"(?m)^[ \t]*#.*$", b"", raw)
        body = re.sub(rb"//[^\n]*|/\*.*?\*/", b"", body, flags=re.S)
        # a project header included, or a macro defined, only by the compiler's branch is the
        # code it holds (the GPU half of a library: ``#include "detail/gpu_impl.h"``,
        # ``#define HOSTDEVICE __host__ __device__``)
        includes = host_split and (
            _QUOTED.search(raw) is not None or _DEFINE_LINE.search(raw) is not None
        )
        if (b";" not in body and not includes) or FAILS.search(body):
            continue
        line_end = source.data.find(b"\n", node.start_byte)
        end = node.end_byte if line_end < 0 else line_end
        found.append(DeadBranch(node.start_byte, end, first.directive))
    return found


def _only_specialisations(node: Any, branch: Branch) -> bool:
    """Whether the branch holds nothing but template specialisations (``template<int N>
    struct Converter<at::BFloat16, N> {...}``): compiled out, the primary template is used."""
    children = [
        child
        for child in node.named_children
        if branch.start <= child.start_byte < branch.end and child.type != "comment"
    ]
    if not children:
        return False
    for child in children:
        if child.type != "template_declaration":
            return False
        inner = [
            c
            for c in child.named_children
            if c.type
            in {"struct_specifier", "class_specifier", "function_definition", "declaration"}
        ]
        if not inner:
            return False
        target = inner[-1]
        name = target.child_by_field_name("name") or target.child_by_field_name("declarator")
        if (
            name is None
            or "<" not in name.text.decode("utf-8", "replace")
            and not _empty_template(child)
        ):
            return False
    return True


def _empty_template(node: Any) -> bool:
    """``template <>``: an explicit specialisation."""
    parameters = node.child_by_field_name("parameters")
    return parameters is not None and not parameters.named_children
