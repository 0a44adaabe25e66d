"""A scanned file's syntax trees are freed when its analysis returns, not left to the garbage
collector.

A report holds its rule and the rule its context; helpers memoise analyses that hold the tree
they read; the position pass's sink and recorder point at each other. Left as reference
cycles, every node of every parsed file waited for a collection, which traversed them all
first: about a tenth of the workers' time on a large project. The engine releases them once
the findings are read (``PythonContext.release``, ``TextContext.release``)."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import libcst as cst
import pytest

from migrator.engine.context import PythonContext
from migrator.engine.engine import analyze
from migrator.engine.registry import all_rules
from tests.conftest import ROOT

FIXTURE = ROOT / "fixtures" / "llm_app"
PYTHON_FILES = sorted(FIXTURE.rglob("*.py"))


@contextmanager
def _collector_off() -> Iterator[list[object]]:
    """Garbage that only the collector could free, gathered after the block (not freed)."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    found: list[object] = []
    try:
        yield found
        gc.collect()
        found.extend(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def _cyclic_garbage(run: Callable[[], object]) -> list[object]:
    """``run``, then two more files scanned, as in a scan: they push the first file's tree out
    of the helpers' small caches (the last few trees and modules)."""
    rules = all_rules()
    with _collector_off() as found:
        run()
        for other in ("llm_app/server.py", "scripts/gpu_report.py"):
            analyze((FIXTURE / other).read_text(encoding="utf-8"), other, "python", rules)
    return found


@pytest.mark.parametrize("path", PYTHON_FILES, ids=lambda path: path.name)
def test_a_scanned_file_leaves_no_node_to_the_collector(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    relative = path.relative_to(FIXTURE).as_posix()
    rules = all_rules()
    analyze(text, relative, "python", rules)  # rules' own module-level caches warmed
    garbage = _cyclic_garbage(lambda: analyze(text, relative, "python", rules))
    # a helper's closure may still hold the (released, empty) context; never a node
    assert [type(node).__name__ for node in garbage if isinstance(node, cst.CSTNode)] == []


def test_the_fixture_files_have_findings() -> None:
    """The files above exercise the release of reports, not only of empty contexts."""
    rules = all_rules()
    with_findings = [
        path
        for path in PYTHON_FILES
        if analyze(
            path.read_text(encoding="utf-8"), path.relative_to(FIXTURE).as_posix(), "python", rules
        ).findings
    ]
    assert len(with_findings) >= 5


def test_a_context_left_unreleased_is_cyclic_garbage() -> None:
    """The check above can fail: a context left as it was, with its reports, is garbage that
    only the collector finds, with every node of its file."""
    path = FIXTURE / "llm_app" / "gpu_utils.py"
    text = path.read_text(encoding="utf-8")
    rules = all_rules()
    release = PythonContext.release
    PythonContext.release = lambda self: None  # type: ignore[method-assign]
    try:
        garbage = _cyclic_garbage(lambda: analyze(text, "llm_app/gpu_utils.py", "python", rules))
    finally:
        PythonContext.release = release  # type: ignore[method-assign]
    assert any(isinstance(each, PythonContext) for each in garbage)
    assert sum(isinstance(each, cst.CSTNode) for each in garbage) > 100
