"""The versions a project supports, from every place it states them: the ranges its dependency
files declare (``versions.declared_facts``), their floor lowered to the lowest version it
states anywhere else (``stated_versions``: a ``setup.py`` assert, CI matrices, tox, nox, the
README), each floor kept with where it was read."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from migrator.knowledge.stated_versions import python_torch_floor, stated_floors
from migrator.knowledge.versions import Floor, ProjectFacts, VersionRange, declared_facts


def project_facts(root: Path) -> ProjectFacts:
    """The facts of the project at ``root`` (a folder): its torch floor is the lowest version it
    states anywhere (a package its dependency files declare without a lower bound, and that
    nothing else states, still withholds nothing)."""
    declared = declared_facts(root)
    if not root.is_dir():
        return declared
    ranges = dict(declared.ranges)
    floors: dict[str, set[Floor]] = {name: set(found) for name, found in declared.floors.items()}
    for name, stated in stated_floors(root).items():
        if not stated:
            continue
        floors.setdefault(name, set()).update(stated)
        old = ranges.get(name, VersionRange())
        lows = [floor.version for floor in stated] + ([old.low] if old.low is not None else [])
        ranges[name] = VersionRange(min(lows), old.high)
    if ranges.get("torch", VersionRange()).low is None:
        # no torch floor anywhere: the floor stays unknown, but an old Python the project
        # supports caps it (the newest torch there), evidence for a withheld fix
        bound = python_torch_floor(root)
        if bound is not None:
            floors.setdefault("torch", set()).add(bound)
    return replace(
        declared,
        versions_read=True,
        ranges=ranges,
        floors={name: tuple(sorted(found)) for name, found in sorted(floors.items())},
    )
