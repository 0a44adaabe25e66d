"""What the build model says about one file, for the rules that report it there: the notes on
its builds (a GPU build only where CUDA is found, CUDA-only libraries linked, sources not read),
the calls in it that build a GPU extension, and the macros builds define only with CUDA. In a
project scan these come from the whole project's model (``ProjectFacts``, passed by the rule
from its context); a file read alone (a rule example, an editor buffer outside a scan; ``facts``
None) is read by itself."""

from __future__ import annotations

import ast

from migrator.kernels.buildmodel import BuildModel, BuildNote
from migrator.knowledge.versions import ProjectFacts


def notes_for(
    facts: ProjectFacts | None, path: str, text: str, kinds: frozenset[str]
) -> list[BuildNote]:
    """The notes of ``kinds`` on builds written in the file ``path`` (whose text is ``text``)
    of the project whose facts are ``facts``."""
    if facts is not None and facts.builds_read:
        return [
            BuildNote(note_path, line, kind, message, "", anchor)
            for note_path, line, kind, message, anchor in facts.build_notes
            if note_path == path and kind in kinds
        ]
    return [note for note in _read_alone(path, text).notes if note.kind in kinds]


def build_calls_in(facts: ProjectFacts | None, path: str) -> frozenset[str] | None:
    """Digests (``buildmodel.call_digest``) of the calls in ``path`` that build a GPU
    extension, directly or through a project function wrapping ``cpp_extension``; None outside
    a project scan."""
    if facts is None or not facts.builds_read:
        return None
    return frozenset(digest for call_path, _, digest in facts.build_calls if call_path == path)


def cuda_build_macros(facts: ProjectFacts | None) -> dict[str, tuple[str, int]]:
    """Macro -> (build file, line) of each macro the project's builds define only where they
    find CUDA (empty outside a project scan)."""
    if facts is None:
        return {}
    return {macro: (path, line) for macro, path, line in facts.cuda_build_macros}


def _read_alone(path: str, text: str) -> BuildModel:
    """The build model of one file on its own."""
    name = path.rsplit("/", 1)[-1]
    if name == "CMakeLists.txt" or name.lower().endswith(".cmake"):
        from migrator.kernels import cmake

        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        model = cmake.read_cmake(text, folder, path)
        cmake.settle(model, [path])
        return model
    if not path.endswith(".py"):
        return BuildModel()
    from migrator.kernels.pybuild import read_python_builds

    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return BuildModel()
    return read_python_builds([path], lambda relative: text if relative == path else None).model


__all__ = ["build_calls_in", "cuda_build_macros", "notes_for"]
