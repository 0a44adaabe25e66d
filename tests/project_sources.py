"""The repository's own Python sources (fixtures, ``migrator``, ``rules``), each read and parsed by
libcst once per test process: several tests check a property on every one of them, and parsing is
most of their cost. Tests that use it share the xdist group ``GROUP``, so one worker parses, and
the trees are let go after the group's last test (a million live nodes make every full garbage
collection of the worker's later tests half a second slower)."""

from __future__ import annotations

import functools
from pathlib import Path

import libcst as cst
import pytest

from tests.conftest import FIXTURES, ROOT

#: Every Python file of the fixtures, ``migrator`` and ``rules``.
SOURCES = sorted(
    [*FIXTURES.rglob("*.py"), *(ROOT / "migrator").rglob("*.py"), *(ROOT / "rules").rglob("*.py")]
)

#: The xdist group (``--dist loadgroup``) of the tests that read these trees.
GROUP = pytest.mark.xdist_group("project_sources")


def _in_group(item: pytest.Item | None) -> bool:
    return item is not None and any(
        mark.args == GROUP.args for mark in item.iter_markers("xdist_group")
    )


def release_after(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Drop the read texts and trees when the next test is not one of the group's."""
    if _in_group(item) and not _in_group(nextitem):
        libcst_tree.cache_clear()
        text_of.cache_clear()


@functools.cache
def text_of(path: Path) -> str:
    """The text of ``path``, read once."""
    return path.read_text(encoding="utf-8")


@functools.cache
def libcst_tree(path: Path) -> cst.Module:
    """libcst's own parse of ``path`` (trees are immutable: sharing one is safe)."""
    return cst.parse_module(text_of(path))
