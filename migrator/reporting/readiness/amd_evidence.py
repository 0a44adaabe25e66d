"""Signs that a project already ships an AMD path (ROCm requirements, an AMD container, vendor
dispatch in code, an AMD install guide), so the score can credit it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from migrator.reporting.readiness.project_text import read_text
from migrator.reporting.readiness.roles import (
    CORE,
    DEPLOY,
    is_container_file,
    is_requirements_file,
    tier,
)

#: Words of a module's name that make it the NVIDIA (or the AMD) implementation of a vendor pair.
_NVIDIA_MODULE = re.compile(r"(?:^|_)(?:nvidia|nvml|cuda)(?:_|$)", re.I)
_AMD_MODULE = re.compile(r"(?:^|_)(?:amd|rocm|hip|amdsmi)(?:_|$)", re.I)

#: Code that dispatches on the vendor or talks to ROCm tooling: an AMD path in the code.
_DISPATCH = re.compile(
    r"torch\.version\.hip|\bis_hip\w*\s*\(|\bis_rocm\w*|\bIS_ROCM\b|\bimport amdsmi\b|\bfrom amdsmi\b"
    r"|[\"'](?:rocm-smi|amd-smi)[\"']|\bROCM_(?:HOME|PATH)\b|\bhipcc\b|COMPUTE_BACKEND[^\n]*hip"
    r"|\bUSE_ROCM\b|__HIP_PLATFORM_AMD__|\bIS_HIP_EXTENSION\b"
)
#: Every alternative of ``_DISPATCH`` contains one of these words (a cheap test first: the
#: pattern has no literal prefix, so searching a large module with it alone is slow).
_DISPATCH_WORDS = ("hip", "HIP", "rocm", "ROCM", "amdsmi", "amd-smi")


def dispatch_in(text: str) -> re.Match[str] | None:
    """The first vendor dispatch in ``text``, looking only at lines that name HIP, ROCm or
    amdsmi (every alternative of the pattern fits on one line)."""
    if not any(word in text for word in _DISPATCH_WORDS):
        return None
    for line in text.splitlines():
        if any(word in line for word in _DISPATCH_WORDS):
            match = _DISPATCH.search(line)
            if match:
                return match
    return None


_ROCM_INDEX = re.compile(r"download\.pytorch\.org/whl/rocm|repo\.radeon\.com|\+rocm\d", re.I)
_ROCM_IMAGE = re.compile(
    r"^\s*(?:ARG\s+\w+\s*=\s*|FROM\s+)(?:--platform=\S+\s+)?rocm/", re.I | re.M
)
_AMD_NAME = re.compile(r"(?:^|[-_./])(?:rocm|amd|hip)(?:$|[-_./\d])", re.I)


@dataclass(frozen=True, slots=True)
class Evidence:
    """One sign that the project already ships an AMD path."""

    kind: str
    path: str
    detail: str
    #: Packages (work-item subjects) this AMD path provides for: named in the AMD install guide,
    #: the ROCm requirements or the AMD container.
    covers: tuple[str, ...] = ()


def vendor_pairs(python: Iterable[str]) -> frozenset[str]:
    """NVIDIA modules with an AMD sibling in the same folder (``hardware/nvidia.py`` next to
    ``hardware/amd.py``): the project dispatches on the vendor by module."""
    by_folder: dict[str, list[str]] = {}
    for relative in python:
        folder, _, name = relative.rpartition("/")
        by_folder.setdefault(folder, []).append(name[:-3])
    paired: set[str] = set()
    for folder, stems in by_folder.items():
        if any(_AMD_MODULE.search(stem) for stem in stems):
            paired.update(
                f"{folder}/{stem}.py" if folder else f"{stem}.py"
                for stem in stems
                if _NVIDIA_MODULE.search(stem)
            )
    return frozenset(paired)


def amd_evidence(
    root: Path, roles: Mapping[str, str], texts: Mapping[str, str] | None = None
) -> list[Evidence]:
    """Signs of an existing AMD path in core, deployment and documentation files (``texts``: the
    source of modules already read, by path)."""
    found: list[Evidence] = []
    seen_kinds: dict[str, int] = {}

    def add(kind: str, path: str, detail: str, text: str = "") -> None:
        if kind == "dispatch" and seen_kinds.get(kind, 0) >= 3:
            return
        seen_kinds[kind] = seen_kinds.get(kind, 0) + 1
        found.append(Evidence(kind, path, detail, covered_subjects(text)))

    for relative, role in sorted(roles.items()):
        name = relative.rsplit("/", 1)[-1]
        if role in ("test", "benchmark", "example", "unreachable"):
            continue
        if is_requirements_file(relative):
            text = read_text(root / relative, 200_000)
            if _AMD_NAME.search(name) or _ROCM_INDEX.search(text):
                add("requirements", relative, "ROCm requirements", text)
            continue
        if role in (DEPLOY, "tooling") and (
            is_container_file(relative) or "docker" in relative.lower()
        ):
            text = read_text(root / relative, 200_000)
            if _ROCM_IMAGE.search(text) or "/dev/kfd" in text:
                add("container", relative, "AMD container image or device flags", text)
            continue
        if role == "docs":
            if _AMD_NAME.search(name.rsplit(".", 1)[0]):
                add("docs", relative, "AMD install guide", read_text(root / relative, 400_000))
            continue
        if tier(role) == CORE and (name.endswith(".py") or name == "CMakeLists.txt"):
            known = texts.get(relative) if texts is not None else None
            match = dispatch_in(known if known is not None else read_text(root / relative))
            if match and tier(role) == CORE:
                add("dispatch", relative, f"vendor dispatch in code (`{match.group(0).strip()}`)")
    readme = next(
        (p for p in sorted(roles) if "/" not in p and p.lower().startswith("readme")), None
    )
    if readme is not None:
        section = _amd_section(read_text(root / readme, 400_000))
        if section:
            add("docs", readme, "README has an AMD/ROCm install section", section)
    return found


_HEADING = re.compile(r"^(#+)\s+(.*)$", re.MULTILINE)
_FENCE = re.compile(r"^[ \t]*(?:```|~~~)", re.MULTILINE)
_AMD_HEADING = re.compile(r"\b(?:AMD|ROCm|HIP)\b")


def _amd_section(text: str) -> str:
    """The README section under an AMD/ROCm heading, up to the next heading as high, or ``""``."""
    fences = [match.start() for match in _FENCE.finditer(text)]

    def in_code(offset: int) -> bool:
        return sum(start < offset for start in fences) % 2 == 1

    # A ``# comment`` inside a fenced code block is not a heading.
    headings = [match for match in _HEADING.finditer(text) if not in_code(match.start())]
    for index, heading in enumerate(headings):
        if not _AMD_HEADING.search(heading.group(2)):
            continue
        level = len(heading.group(1))
        end = next(
            (later.start() for later in headings[index + 1 :] if len(later.group(1)) <= level),
            len(text),
        )
        return text[heading.start() : end]
    return ""


#: Packages an AMD path can provide for, by the words that name them (work-item subjects).
_COVERABLE: dict[str, re.Pattern[str]] = {
    "flash-attn": re.compile(r"flash[-_ ]?attn|flash[-_ ]?attention", re.I),
    "bitsandbytes": re.compile(r"bitsandbytes", re.I),
    "xformers": re.compile(r"xformers", re.I),
    "apex": re.compile(r"\bapex\b", re.I),
    "nvml": re.compile(r"amdsmi|amd-smi|rocm-smi", re.I),
    "triton": re.compile(r"triton", re.I),
    "deepspeed": re.compile(r"deepspeed", re.I),
    "vllm": re.compile(r"\bvllm\b", re.I),
    "onnxruntime": re.compile(r"onnxruntime|migraphx", re.I),
}


def covered_subjects(text: str) -> tuple[str, ...]:
    """The packages an AMD guide, ROCm requirements file or AMD container names."""
    return tuple(subject for subject, pattern in _COVERABLE.items() if pattern.search(text))
