"""The extensions a project's Python builds, wherever a build starts: ``setup.py`` files at any
depth, ``torch.utils.cpp_extension.load``/``CUDAExtension`` called in any module, and the
project's own functions that wrap them (``get_plugin(name, sources=...)`` calling ``load``
inside), followed across modules with the arguments of each call. Read with ``ast``, never
run. Source lists are evaluated as ``pyvalues`` (joins from ``__file__``, ``..``, f-strings,
``glob``/``os.listdir``/``os.walk`` with suffix filters, comprehensions, helper functions that
return lists, lists grown in branches); what cannot be evaluated becomes a note, not a guess.

Each source carries the branch of the build it entered in (``cuda``/``rocm``/``both``) and,
where a test finds the CUDA toolkit (``CUDA_HOME``, ``nvcc``, ``torch.version.cuda``) with no
ROCm branch beside it, that the build compiles it only with CUDA (a ROCm build leaves it out
and builds CPU-only)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from migrator.kernels.buildmodel import BOTH, BuildModel, Extension
from migrator.kernels.pybuild_names import (
    _MAX_DEPTH,
    CUDA_LIBRARY,
    _parameters,
    _Registry,
    _Where,
    call_anchor,
)
from migrator.kernels.pybuild_reader import _Reader
from migrator.kernels.pyvalues import PARAM, Val

#: Files that may start a build: they name one of these.
_MARKERS = re.compile(r"cpp_extension|CUDAExtension|CppExtension|SYCLExtension|\bExtension\s*\(")


#: ``#include`` lines inside Python strings: kernel-source templates a generator writes out.
_TEMPLATE_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)


_MAX_ROUNDS = 6


@dataclass(slots=True)
class PythonBuilds:
    """The Python side of a project's build model, and the call sites that build GPU
    extensions (for the rules that report flags and builds through wrappers)."""

    model: BuildModel
    calls: frozenset[tuple[str, int, str]]
    files: list[str]


def read_python_builds(
    relatives: Sequence[str], read_text: Callable[[str], str | None]
) -> PythonBuilds:
    """Every extension the project's Python code builds (``read_text`` gives a file's text,
    None when it cannot be read)."""
    python = [r for r in relatives if r.endswith(".py")]
    texts: dict[str, str | None] = {}

    def text_of(relative: str) -> str | None:
        if relative not in texts:
            texts[relative] = read_text(relative)
        return texts[relative]

    trees: dict[str, ast.Module | None] = {}

    def tree_of(relative: str) -> ast.Module | None:
        if relative not in trees:
            text = text_of(relative)
            try:
                trees[relative] = ast.parse(text) if text else None
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                trees[relative] = None
        return trees[relative]

    involved = [r for r in python if _MARKERS.search(text_of(r) or "")]
    templates = {
        match.group(1).strip()
        for relative in python
        if "#include" in (text_of(relative) or "")
        for match in _TEMPLATE_INCLUDE.finditer(text_of(relative) or "")
    }
    registry = _Registry()
    model = BuildModel()
    for _round in range(_MAX_ROUNDS):
        before = registry.keys()
        registry.calls.clear()
        registry.invoked.clear()
        model = BuildModel()
        for relative in involved:
            tree = tree_of(relative)
            if tree is None:
                continue
            # a chain of wrappers inside one file resolves here, not one round per level
            for _pass in range(_MAX_DEPTH):
                registered = registry.keys()
                scratch = BuildModel()
                try:
                    _Reader(relative, tree, registry, scratch).run()
                except RecursionError:
                    scratch = BuildModel()
                if registry.keys() == registered:
                    break
            model.merge(scratch, "")
        names = sorted(registry.builders)
        added: list[str] = []
        if names:
            calls = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\s*\(")
            added = [r for r in python if r not in involved and calls.search(text_of(r) or "")]
        if not added and registry.keys() == before:
            break
        involved.extend(added)
    # a builder nothing in the project calls: its own paths, a parameter's part as its folder
    for known in registry.builders.values():
        for builder in known:
            if builder.key in registry.invoked:
                continue
            reader = _Reader(
                builder.path,
                builder.tree,
                registry,
                model,
                env=registry.envs.get(builder.path, {}),
                depth=1,
                stack=(builder.key,),
            )
            reader.default_name = builder.node.name
            for argument in _parameters(builder.node):
                reader.env[argument] = [Val(PARAM + argument, BOTH, reader.folder)]
            try:
                reader.block(builder.node.body, _Where())
            except RecursionError:
                continue
    _merge_duplicates(model)
    model.template_includes = templates
    return PythonBuilds(model, frozenset(registry.calls), involved)


def _merge_duplicates(model: BuildModel) -> None:
    """One extension per build call: a wrapper reached twice from one call site (two branches
    of the wrapper) contributes each branch's sources to the same record."""
    merged: dict[tuple[str, int, str], Extension] = {}
    for extension in model.extensions:
        key = (extension.build, extension.line, extension.name)
        known = merged.get(key)
        if known is None:
            merged[key] = extension
            continue
        seen = set(known.patterns)
        known.patterns.extend(p for p in extension.patterns if p not in seen)
        if known.context != extension.context:
            known.context = BOTH
        known.gate = known.gate if extension.gate else ""
    model.extensions[:] = list(merged.values())


__all__ = ["CUDA_LIBRARY", "PythonBuilds", "call_anchor", "read_python_builds"]
