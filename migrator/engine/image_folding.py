"""One problem per CUDA container image: in a Dockerfile stage built on a CUDA base image (a rule
with ``container_image = "base"``), the lines that exist only for that image (rules with
``container_image = "part"``: ``CUDA_HOME``, ``TORCH_CUDA_ARCH_LIST``, ``NVIDIA_*`` variables,
CUDA apt packages) are porting that image, not problems of their own: they become related sites
of the base-image finding, each naming its rule. A part with a fix of its own, in code guarded
otherwise than its base, or in a stage whose base is not a CUDA image stays its own finding;
what installs CUDA software by another route (pip's CUDA wheel index, a CUDA-only package) is
never a part."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import replace

from migrator.engine.context import RawTextFinding
from migrator.model import WITHHELD, Finding, Related
from migrator.syntax.dockerfile import instructions

Pair = tuple[RawTextFinding, Finding]


def fold_image_parts(pairs: Sequence[Pair], text: str) -> list[Pair]:
    """``pairs`` of one Dockerfile with each stage's image parts folded into its base image."""
    if not any(raw.rule.impact.container_image == "base" for raw, _ in pairs):
        return list(pairs)
    stages = [item for item in instructions(text) if item.keyword == "FROM"]
    starts = [item.start for item in stages]

    def stage(offset: int) -> int:
        return bisect.bisect_right(starts, offset) - 1

    base_of: dict[int, int] = {}
    for index, (raw, _) in enumerate(pairs):
        if raw.rule.impact.container_image != "base":
            continue
        where = stage(raw.start)
        if where >= 0:
            base_of.setdefault(where, index)
        else:  # an ARG default before the first FROM: the stages whose FROM reads a variable
            for number, item in enumerate(stages):
                if "$" in item.text:
                    base_of.setdefault(number, index)
    folded: dict[int, list[Pair]] = {}
    kept: list[int] = []
    for index, (raw, finding) in enumerate(pairs):
        target = base_of.get(stage(raw.start))
        if (
            raw.rule.impact.container_image == "part"
            and raw.replacement is None
            and target is not None
            and finding.guard == pairs[target][1].guard
        ):
            folded.setdefault(target, []).append((raw, finding))
        else:
            kept.append(index)
    out: list[Pair] = []
    for index in kept:
        raw, finding = pairs[index]
        parts = folded.get(index)
        if parts:
            finding = _with_parts(finding, parts, text)
        out.append((raw, finding))
    return out


def _with_parts(base: Finding, parts: list[Pair], text: str) -> Finding:
    """The base-image finding with its parts as related sites and named in its message."""
    names = list(dict.fromkeys(f"`{text[raw.start : raw.end].lstrip('$')}`" for raw, _ in parts))
    head, withheld, reason = base.message.partition("; " + WITHHELD)
    message = f"{head}; the image's CUDA-only lines go with it: {', '.join(names)}"
    sites = tuple(
        Related(
            part.path,
            part.line,
            part.column,
            part.end_line,
            part.end_column,
            part.cell,
            rule=part.rule,
        )
        for _, part in parts
    )
    return replace(base, message=message + withheld + reason, related=base.related + sites)
