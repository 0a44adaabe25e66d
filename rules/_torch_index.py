"""Rewriting PyTorch CUDA wheel index URLs to their ROCm counterparts: what ROC802 (dependency
files) and ROC865 (pip commands in containers and scripts) share."""

from __future__ import annotations

import re
from collections.abc import Callable

from migrator.api.knowledge import CUDA_INDEX_RE, index_url_for

IndexChoice = Callable[[int], tuple[str | None, str]]


def cuda_index_edits(
    matches: list[tuple[int, int, re.Match[str]]], choose: IndexChoice
) -> list[tuple[int, int, str, str | None]]:
    """(start, end, message, replacement) for each PyTorch CUDA index URL found; ``choose``
    gives, for a URL's offset, the ROCm version of its replacement index or why there is none."""
    out: list[tuple[int, int, str, str | None]] = []
    for start, end, match in matches:
        cuda = match.group("cuda")
        nightly = match.group("nightly")
        page = re.match(r"/[\w.-]", match.string[match.end() : match.end() + 2])
        rocm, reason = (None, "") if nightly or page else choose(start)
        if nightly or rocm is None or page:
            if nightly:
                why = (
                    f"the {nightly.rstrip('/')} ROCm index tracks its own ROCm release; "
                    "choose it by hand"
                )
            elif page:
                why = "point it at the `whl/rocmX.Y` index of your torch release instead"
            else:
                why = reason
            out.append(
                (
                    start,
                    end,
                    f"PyTorch {cuda} wheel index: pip installs CUDA builds of torch, "
                    f"which find no GPU on ROCm; {why}",
                    None,
                )
            )
            continue
        new = index_url_for(rocm)
        out.append(
            (
                start,
                end,
                f"PyTorch {cuda} wheel index: pip installs CUDA builds of torch, which "
                f"find no GPU on ROCm; use `{new}`",
                new,
            )
        )
    return out


def url_matches(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int, re.Match[str]]]:
    """CUDA index URL matches inside the given spans of ``text``."""
    out = []
    for start, end in spans:
        for match in CUDA_INDEX_RE.finditer(text, start, end):
            out.append((match.start(), match.end(), match))
    return out
