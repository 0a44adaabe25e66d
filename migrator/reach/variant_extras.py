"""Which extras of a ``pyproject.toml`` are the NVIDIA variant of an install the project also
offers for ROCm: a group named for a CUDA build (``cu121``, ``cu118onlytorch211``,
``flash...cu12x``, ``cuda``, ``nvidia``) or for a hosted service with NVIDIA GPUs only
(``colab-new``, ``kaggle``; ``migrator.knowledge.vendor_tokens.NVIDIA_HOSTED_TOKENS``), in a file that
also has a group named for ROCm or AMD (``amd``, ``rocm72-torch291``). ROCm users install the
ROCm group, so what the CUDA groups list never reaches a ROCm machine; the engine marks findings
inside them as guarded, like the NVIDIA twin of a file (``migrator.reach.project.amd_twins``).
"""

from __future__ import annotations

import re

from migrator.knowledge.vendor_tokens import NVIDIA_HOSTED_TOKENS

CUDA_EXTRA = "CUDA-variant extra (the project has a ROCm extra)"

#: The tables whose keys are install groups.
_GROUP_TABLES = frozenset({"project.optional-dependencies", "dependency-groups"})
#: A table header, ``[name]`` or an array-of-tables ``[[name]]``: either ends the group before it.
_TABLE = re.compile(r"^\s*\[\[?\s*([^\]\[]+?)\s*\]\]?\s*(?:#.*)?$")
_GROUP = re.compile(r"""^\s*(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_.-]+))\s*=\s*\[""")
#: A CUDA build (or an NVIDIA-only hosted service) named at the start of a word (``cu118only``,
#: ``colab-new``) or at the end (``...cu12x``).
_CUDA_NAME = re.compile(
    r"(?<![a-z0-9])(?:nvidia|cuda|"
    + "|".join(sorted(NVIDIA_HOSTED_TOKENS))
    + r"|cu1\d\d?)|cu1\d\d?x?$",
    re.IGNORECASE,
)
_ROCM_NAME = re.compile(r"(?<![a-z0-9])(?:amd|rocm|hip)(?![a-z])", re.IGNORECASE)


def _groups(text: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of every install group: from its key to the next key or table."""
    found: list[tuple[int, int, str]] = []
    table = ""
    offset = 0
    open_group: tuple[int, str] | None = None
    for line in text.splitlines(keepends=True):
        header = _TABLE.match(line)
        group = _GROUP.match(line) if table in _GROUP_TABLES and not header else None
        if (header or group) and open_group is not None:
            found.append((open_group[0], offset, open_group[1]))
            open_group = None
        if header:
            table = header.group(1).replace(" ", "").replace('"', "")
        elif group:
            open_group = (offset, next(name for name in group.groups() if name))
        offset += len(line)
    if open_group is not None:
        found.append((open_group[0], offset, open_group[1]))
    return found


def cuda_extra_regions(text: str) -> list[tuple[int, int, str]]:
    """(start, end, label) of the CUDA-variant install groups, when a ROCm-named one exists: a
    group named for a CUDA build, or one that installs such a group of the project itself
    (``colab-torch211 = ["unsloth[cu121onlytorch211]", ...]``)."""
    groups = _groups(text)
    if not any(_ROCM_NAME.search(name) for _, _, name in groups):
        return []
    cuda = {name for _, _, name in groups if _CUDA_NAME.search(name)}
    rocm = {name for _, _, name in groups if _ROCM_NAME.search(name)}
    project = _PROJECT_NAME.search(text)
    if project is not None:
        includes = {
            name: _included(text[start:end], project.group(1)) for start, end, name in groups
        }
        grown = True
        while grown:  # an extra that installs a CUDA variant is one too, transitively
            grown = False
            for name, inner in includes.items():
                if name not in cuda and inner & cuda and not inner & rocm:
                    cuda.add(name)
                    grown = True
    return [(start, end, CUDA_EXTRA) for start, end, name in groups if name in cuda - rocm]


_PROJECT_NAME = re.compile(r"""^\s*name\s*=\s*["']([A-Za-z0-9_.-]+)["']""", re.MULTILINE)


def _included(body: str, project: str) -> set[str]:
    """The project's own extras that a group's entries install (``"pkg[a,b]"`` -> {a, b})."""
    found: set[str] = set()
    pattern = re.compile(rf"""["']{re.escape(project)}\[([^\]]+)\]""", re.IGNORECASE)
    for match in pattern.finditer(body):
        found.update(part.strip() for part in match.group(1).split(","))
    return found
