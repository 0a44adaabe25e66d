"""ROCm variants of NVIDIA container files: where fix withholds a vendor swap in a Dockerfile
(an NVIDIA base image, an NVIDIA-named file), ``fix --unsafe-fixes`` writes the ROCm text to a
new sibling (``Dockerfile.rocm``) and leaves the original byte-identical, but only when the
variant has nothing left that breaks on ROCm and its ROCm versions agree."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from migrator.engine.fix_policy import WITHHELD, vendor_swap_allowed
from migrator.engine.rule import Rule
from migrator.knowledge.versions import ProjectFacts, current_facts
from migrator.model import Applicability, Severity

#: File kinds a variant is written for. Compose services and CI jobs get none: a compose variant
#: would need the image built from the Dockerfile variant, and a CI job an AMD runner the
#: project does not have; their findings say what to add by hand.
VARIANT_KINDS = frozenset({"dockerfile", "requirements"})

_NVIDIA_NAME = re.compile(r"(?<![a-z0-9])(cuda|nvidia|cu\d{2,3})(?![a-z0-9])", re.IGNORECASE)
_IMAGE_ROCM = re.compile(r"\brocm/[\w.-]+:(?:rocm)?(\d+)\.(\d+)", re.IGNORECASE)
_WHEEL_ROCM = re.compile(r"(?:/whl/|\+)rocm(\d+)\.(\d+)", re.IGNORECASE)
_WHEEL_ROCM_FULL = re.compile(r"(?:/whl/|\+)rocm(\d+\.\d+(?:\.\d+)?)", re.IGNORECASE)
_TORCH_PIN = re.compile(r"\btorch==(\d+\.\d+(?:\.\d+)?)")
_PIP_INSTALL = re.compile(r"\b(?:pip3?|uv\s+pip|conda|mamba)\s+install\b")
_ROCM_TORCH_IMAGE = re.compile(r"\brocm/pytorch\b", re.IGNORECASE)


def torch_source_problem(text: str) -> str | None:
    """Why packages installed by ``text`` could pull a CUDA torch: it installs from PyPI with
    neither a ROCm wheel index nor a base image that already holds ROCm torch."""
    if not _PIP_INSTALL.search(text) or _WHEEL_ROCM.search(text):
        return None
    if _ROCM_TORCH_IMAGE.search(text):
        return None
    return (
        "it installs Python packages without a ROCm wheel index on a base image without ROCm "
        "torch, so torch would come from PyPI as a CUDA build; add `--index-url "
        "https://download.pytorch.org/whl/rocmX.Y` for torch"
    )


@dataclass(slots=True)
class Variant:
    """A ROCm sibling for one file: its text, or why there is none; ``error`` when writing failed."""

    original: str
    relative: str
    text: str | None = None
    reason: str = ""
    error: str | None = None


def sibling_name(relative: str) -> str:
    """``Dockerfile`` → ``Dockerfile.rocm``, ``requirements.txt`` → ``requirements-rocm.txt``; a
    name naming CUDA or NVIDIA gets ``rocm`` in that place (``Dockerfile.cuda`` →
    ``Dockerfile.rocm``, ``requirements-cu121.txt`` → ``requirements-rocm.txt``)."""
    directory, _, name = relative.rpartition("/")
    renamed, count = _NVIDIA_NAME.subn("rocm", name, count=1)
    stem, dot, extension = name.rpartition(".")
    if count:
        new = renamed
    elif dot and extension.lower() in ("txt", "in"):
        new = f"{stem}-rocm.{extension}"
    else:
        new = f"{name}.rocm"
    return f"{directory}/{new}" if directory else new


def wants_variant(messages: Sequence[str]) -> bool:
    """Whether fix withheld a vendor swap (or left an NVIDIA file) among these findings."""
    from migrator.engine.fix_policy import _SWAP_REASON

    return any(
        WITHHELD in message and (_SWAP_REASON in message or "this file is for NVIDIA" in message)
        for message in messages
    )


def rocm_versions_disagree(
    text: str, served: Callable[[str], tuple[str, ...] | None]
) -> str | None:
    """Why the ROCm versions in ``text`` (base image tag, wheel index, ``+rocm`` local versions,
    a pinned torch and the indexes that serve it) do not agree, or None; ``served`` gives the
    ROCm versions of the indexes serving a torch release (None: nothing known)."""
    found = {f"{m[0]}.{m[1]}" for m in _IMAGE_ROCM.findall(text)}
    wheels_full = set(_WHEEL_ROCM_FULL.findall(text))
    wheels = {".".join(w.split(".")[:2]) for w in wheels_full}
    if found and wheels and found != wheels or len(found | wheels) > 1:
        return f"its ROCm versions disagree ({', '.join(sorted(found | wheels))})"
    for version in _TORCH_PIN.findall(text):
        indexes = served(version)
        if indexes is not None and wheels_full and not wheels_full & set(indexes):
            have = ", ".join(indexes) if indexes else "none"
            return (
                f"torch {version} is not on the ROCm {', '.join(sorted(wheels_full))} wheel "
                f"index (ROCm indexes serving it: {have})"
            )
    return None


def plan_variant(
    relative: str, kind: str, text: str, rules: Sequence[type[Rule]], facts: ProjectFacts
) -> Variant | None:
    """The ROCm sibling of one file whose vendor swap was withheld (None: nothing to swap)."""
    from migrator.engine.engine import analyze
    from migrator.engine.registry import all_rules
    from migrator.knowledge.torch_builds import indexes_serving

    target = sibling_name(relative)
    facts_token = current_facts.set(facts)
    swap_token = vendor_swap_allowed.set(True)
    try:
        analysis = analyze(text, target, kind, rules, fix=Applicability.UNSAFE)
        if analysis.new_text is None:
            return None
        # every rule judges what is left, whatever the selection
        left = analyze(analysis.new_text, target, kind, all_rules()).findings
    finally:
        vendor_swap_allowed.reset(swap_token)
        current_facts.reset(facts_token)
    blocking = [f for f in left if f.severity >= Severity.WARNING]
    if blocking:
        first = blocking[0]
        return Variant(
            relative,
            target,
            reason=(
                f"the ROCm variant would still need manual work ({len(blocking)} finding(s); "
                f"line {first.line} {first.rule}: {first.message.split(';')[0]})"
            ),
        )
    disagreement = rocm_versions_disagree(analysis.new_text, indexes_serving)
    problem = disagreement or torch_source_problem(analysis.new_text)
    if problem:
        return Variant(relative, target, reason=problem)
    new_text = analysis.new_text
    if kind == "dockerfile":
        new_text = without_vendor_comments(text, new_text)
    return Variant(relative, target, text=new_text)


_FROM_ROCM = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*rocm/", re.IGNORECASE)
_VENDOR_WORD = re.compile(r"\b(?:NGC|NVIDIA|nvcr\.io|CUDA)\b", re.IGNORECASE)


def without_vendor_comments(original: str, new: str) -> str:
    """``new`` without the comment lines directly above a ``FROM`` it switched to a ROCm image
    that name the NVIDIA image it replaced (``# Start with NGC container``): they describe the
    original, not the sibling."""
    before = set(original.splitlines())
    lines = new.splitlines(keepends=True)
    drop: set[int] = set()
    for index, line in enumerate(lines):
        if not _FROM_ROCM.match(line) or line.rstrip("\r\n") in before:
            continue
        above = index - 1
        while above >= 0 and lines[above].lstrip().startswith("#"):
            if _VENDOR_WORD.search(lines[above]):
                drop.add(above)
            above -= 1
    return "".join(line for index, line in enumerate(lines) if index not in drop)


def write_variants(root: Path, variants: Sequence[Variant]) -> None:
    """Create each planned sibling through the write policy; a refusal is kept as its error."""
    from migrator.files.writer import WriteRefused, create_new

    for variant in variants:
        if variant.text is None:
            continue
        try:
            create_new(root, variant.relative, variant.text, variant.original)
        except WriteRefused as error:
            variant.error = str(error)
