"""hipify defects in a translation, at the original's line: a kernel launch that hipify glued
to the word before it (``else kernel<<<…>>>`` becomes ``elsehipLaunchKernelGGL(…)``, which
does not compile), found in the translated text whether or not a compiler ever reads it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from migrator.kernels.hipify import line_map

#: An identifier ending in hipify's launch macro, longer than the macro: a glued token.
_GLUED = re.compile(r"\b(\w+)(hipLaunchKernelGGL)\b")


@dataclass(frozen=True, slots=True)
class Defect:
    """One hipify defect: the original file and line, its text, and what hipify made of it."""

    path: str
    line: int
    original: str
    translated: str
    message: str


def glued_launches(relative: str, original: Path, translated: Path) -> list[Defect]:
    """Launches hipify glued to the preceding word in ``translated`` (hipify's output for
    ``original``, project-relative ``relative``)."""
    try:
        before = original.read_text(errors="replace").splitlines()
        after = translated.read_text(errors="replace").splitlines()
    except OSError:
        return []
    if not any("hipLaunchKernelGGL" in line for line in after):
        return []
    mapping = line_map(before, after)
    found: list[Defect] = []
    for index, text in enumerate(after):
        for match in _GLUED.finditer(text):
            line = mapping[index] if index < len(mapping) else index + 1
            source = before[line - 1].strip() if 0 < line <= len(before) else ""
            found.append(
                Defect(
                    relative,
                    line,
                    source,
                    text.strip(),
                    f"hipify glued the launch to `{match.group(1)}`: "
                    f"`{match.group(1)}{match.group(2)}` does not compile (write the launch on "
                    "its own line or in braces)",
                )
            )
    return found
