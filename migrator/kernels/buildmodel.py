"""What the build model holds: each extension a build declares (its sources as patterns, the
branch it is built in, its kind, whether it builds GPU code only where CUDA is found), and what
the reading could not see or found wrong in the build itself (notes), shared by the readers of
``setup.py`` and Python loaders (``pybuild``) and of CMake (``cmake``)."""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass, field

#: C/C++/CUDA source suffixes the kernel rules read.
KERNEL_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh", ".hxx", ".inl")
#: Suffixes of sources that only a GPU compiler compiles.
GPU_SUFFIXES = (".cu", ".cuh")

#: Contexts of a source pattern: the branch of the build it entered in.
CUDA, ROCM, BOTH = "cuda", "rocm", "both"

#: Kinds of build.
SETUP, JIT, CMAKE = "setup", "jit", "cmake"

#: Kinds of note on a build (``BuildNote.kind``).
GATE = "gate"  # GPU code built only where the build finds CUDA: CPU-only (or nothing) on ROCm
CUDA_REQUIRED = "cuda-required"  # the build needs CUDA outright and has no HIP path
LINK = "link"  # a CUDA-only library linked
UNREAD = "unread"  # a part of the build the static reading could not follow
GENERATED = "generated"  # kernel sources written by the build or at run time
IDE_ONLY = "ide-only"  # a CMakeLists.txt that only an IDE reads


def meet(outer: str, inner: str) -> str | None:
    """The context of a pattern of context ``inner`` used in a branch of context ``outer``;
    None when the two exclude each other."""
    if outer == BOTH:
        return inner
    if inner == BOTH or inner == outer:
        return outer
    return None


def negate(context: str) -> str:
    """The context of the other branch of a vendor test."""
    return {CUDA: ROCM, ROCM: CUDA}.get(context, BOTH)


@dataclass(frozen=True, slots=True)
class Pattern:
    """A source path or glob, relative to the project root, and the builds that compile it;
    ``gate`` says the build compiles it only where it finds CUDA (no ROCm branch exists)."""

    glob: str
    context: str
    build: str = ""
    gate: str = ""

    def matches(self, relative: str) -> bool:
        return glob_regex(self.glob).fullmatch(relative) is not None


_REGEX_CACHE: dict[str, re.Pattern[str]] = {}


def glob_regex(pattern: str) -> re.Pattern[str]:
    """The regular expression of a glob over ``/``-separated paths (``**/`` any folders)."""
    cached = _REGEX_CACHE.get(pattern)
    if cached is None:
        out = []
        index = 0
        while index < len(pattern):
            if pattern.startswith("**/", index):
                out.append("(?:.*/)?")
                index += 3
            elif pattern.startswith("**", index):
                out.append(".*")
                index += 2
            elif pattern[index] == "*":
                out.append("[^/]*")
                index += 1
            elif pattern[index] == "?":
                out.append("[^/]")
                index += 1
            else:
                out.append(re.escape(pattern[index]))
                index += 1
        cached = re.compile("".join(out))
        if len(_REGEX_CACHE) < 4096:
            _REGEX_CACHE[pattern] = cached
    return cached


def under(folder: str, path: str) -> str | None:
    """``path`` written relative to ``folder`` (both from the project root), normalised; None
    when it leaves the root (``../..`` past it, or an absolute path)."""
    if path.startswith("/"):
        return None
    joined = f"{folder}/{path}" if folder and path else folder or path
    if not joined:
        return ""
    normal = posixpath.normpath(joined)
    if normal == ".":
        return ""
    if normal == ".." or normal.startswith("../") or normal.startswith("/"):
        return None
    return normal


@dataclass(frozen=True, slots=True)
class BuildNote:
    """Something the build does that the user must act on, or that the reading could not see:
    where (file and line), of which kind, in words."""

    path: str
    line: int
    kind: str
    message: str
    #: the extension (or CMake target) the note is about, "" for the whole build file
    extension: str = ""
    #: the code the note is about, as ``anchor_key`` writes it (a rule finds its node by it)
    anchor: str = ""


def call_digest(code: str) -> str:
    """The digest ``pybuild.call_anchor`` gives a call, from its code as written."""
    import hashlib

    return hashlib.sha1(anchor_key(code).encode()).hexdigest()[:16]


def anchor_key(code: str) -> str:
    """Code written so that two spellings of one expression compare equal (``ast.unparse``
    and the source as written differ in quotes, spaces, parentheses, trailing commas)."""
    return re.sub(r"[\s'\"(),\\]", "", re.sub(r"#[^\n]*", "", code))


@dataclass(slots=True)
class Extension:
    """One compiled module (or CMake target) a build declares."""

    name: str
    build: str
    line: int
    patterns: list[Pattern]
    context: str
    sources: list[str] = field(default_factory=list)
    #: ``setup`` (a setuptools extension), ``jit`` (built at run time by ``load``) or ``cmake``
    kind: str = SETUP
    #: why the build compiles the GPU code only where it finds CUDA ("" when it does not)
    gate: str = ""
    #: the project function the build goes through (``custom_ops.py:40 get_plugin``), if any
    via: str = ""
    #: a CMake target whose Python module is imported by name (``pybind11_add_module``)
    python_module: bool = True
    #: other CMake targets this one links (their sources are part of its module)
    links: list[str] = field(default_factory=list)
    #: other declarations of the same module (a ``setup.py`` beside a JIT ``load``)
    also: list[str] = field(default_factory=list)
    #: the names those declarations give the module (imported by either)
    also_names: list[str] = field(default_factory=list)
    #: the build files of those declarations, and their kinds
    also_builds: list[str] = field(default_factory=list)
    also_kinds: list[str] = field(default_factory=list)
    #: project-relative include folders and ``NAME[=VALUE]`` macros the build compiles it with
    include_dirs: list[str] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    #: macros the build defines with a value it computes when it runs (unknown here)
    computed_defines: list[str] = field(default_factory=list)


@dataclass(slots=True)
class BuildModel:
    """Every extension found, every source pattern with its context, whether any build file has
    a ROCm branch, the macros builds define only where they find CUDA, and the notes."""

    extensions: list[Extension] = field(default_factory=list)
    patterns: list[Pattern] = field(default_factory=list)
    rocm_branch: list[str] = field(default_factory=list)  # build files with a ROCm branch
    #: macro -> (build file, line) of a definition made only where the build finds CUDA
    cuda_macros: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: macros a Python build defines outside a CUDA-only branch (ROCm builds get them too)
    rocm_macros: set[str] = field(default_factory=set)
    notes: list[BuildNote] = field(default_factory=list)
    #: headers that kernel-source templates in Python strings ``#include`` (a generator writes
    #: the kernels that compile them): compiled, though no source file of the tree includes them
    template_includes: set[str] = field(default_factory=set)
    #: build files read
    read: list[str] = field(default_factory=list)
    #: (path, line, call digest) of each call that builds a GPU extension, directly or through
    #: a project function wrapping ``cpp_extension`` (``pybuild.call_anchor``)
    calls: frozenset[tuple[str, int, str]] = frozenset()
    _literal: dict[str, list[Pattern]] | None = None
    _wild: list[Pattern] = field(default_factory=list)

    def _hits(self, relative: str) -> list[Pattern]:
        if self._literal is None:
            self._literal = {}
            self._wild = []
            for pattern in self.patterns:
                if any(char in pattern.glob for char in "*?"):
                    self._wild.append(pattern)
                else:
                    self._literal.setdefault(os.path.normpath(pattern.glob), []).append(pattern)
        return self._literal.get(relative, []) + [p for p in self._wild if p.matches(relative)]

    def names(self, relative: str) -> bool:
        """Whether any build pattern names ``relative``."""
        return bool(self._hits(relative))

    def cuda_only(self, relative: str) -> str | None:
        """The build file whose CUDA-only branch alone compiles ``relative`` (a ROCm branch of
        the build compiles other sources instead), or None."""
        hits = self._hits(relative)
        if hits and all(p.context == CUDA and not p.gate for p in hits):
            return hits[0].build or "the build"
        return None

    def gated(self, relative: str) -> str | None:
        """Why every build that names ``relative`` compiles it only where it finds CUDA (the
        build has no ROCm branch: a ROCm build leaves it out), or None."""
        hits = self._hits(relative)
        if hits and all(p.gate for p in hits):
            return hits[0].gate
        return None

    def merge(self, other: BuildModel, build: str) -> None:
        """Add what another build file's reading found, its patterns tagged with ``build``."""
        self.extensions.extend(other.extensions)
        self.patterns.extend(Pattern(p.glob, p.context, build, p.gate) for p in other.patterns)
        self.rocm_branch.extend(other.rocm_branch)
        for macro, where in other.cuda_macros.items():
            self.cuda_macros.setdefault(macro, where)
        self.rocm_macros |= other.rocm_macros
        self.notes.extend(other.notes)
        self.template_includes |= other.template_includes
        self._literal = None


__all__ = [
    "BOTH",
    "CMAKE",
    "CUDA",
    "CUDA_REQUIRED",
    "GATE",
    "GENERATED",
    "GPU_SUFFIXES",
    "IDE_ONLY",
    "JIT",
    "KERNEL_SUFFIXES",
    "LINK",
    "ROCM",
    "SETUP",
    "UNREAD",
    "BuildModel",
    "BuildNote",
    "Extension",
    "Pattern",
    "anchor_key",
    "call_digest",
    "glob_regex",
    "meet",
    "negate",
    "under",
]
