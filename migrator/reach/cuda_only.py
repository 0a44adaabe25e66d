"""Modules that never run on a ROCm build because they are written on a CUDA-only kernel
toolkit (the CuTe DSL's ``cutlass``, ``cuda.bindings``, PyCUDA, TensorRT), directly or through
project modules that are.

Found once per scan from the re-export index's unindented import lines (a top-level import
outside ``try``/``if``/``def``; a candidate line is confirmed by the tokenizer, so an import in
a docstring does not count; nothing is imported or run). Such a module's findings are moot on
ROCm: they are guarded (hidden, ``--show-guarded`` shows them marked, never fixed), and the
module is reported once, by ROC902 at its toolkit import, merged per folder. An importer is
CUDA-only by design too when it is a test or benchmark, or lies in a folder where most modules
are written on the toolkit (the CUDA-only component itself); any other importer is left alone.
Computed at settle time from every file's text, so a warm scan needs no extra cache key."""

from __future__ import annotations

import bisect
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cache

from migrator.files.paths import is_benchmark_path, is_test_path
from migrator.knowledge.vendor_tokens import ROCM_WORD, names_rocm
from migrator.model import Finding, Severity
from migrator.reach.console_scripts import console_scripts
from migrator.syntax.reexports import ProjectIndex

#: The problem key the rule reporting a CUDA-only module declares (ROC902,
#: ``rules/no_equivalent/cuda_only_module.py``): its findings are merged per folder here.
CUDA_ONLY_PROBLEM = "cuda-only-module"
#: A line that tests for a ROCm build (``if torch.version.hip``, ``elif IS_ROCM:``, ``if
#: is_hip():``): a word naming ROCm (``ROCM_WORD``, the guard facility's vendor tokens, matched
#: without loading libcst, which a warm scan never needs) before any comment.
_BRANCH = re.compile(r"^[ \t]*(?:if|elif)\b[^\n#]*", re.MULTILINE)
#: Triple-quoted strings (docstrings): an import line inside one is text, not an import.
_TRIPLE = re.compile(r'(?s)("""|\'\'\').*?(?:\1|\Z)')


@cache
def toolkits() -> dict[str, tuple[str, str]]:
    """Import names of the kernel toolkits (the package table, ``rules/data/packages.toml``)
    -> their label and what to use on ROCm."""
    from migrator.knowledge.tables import load_table

    table = load_table("packages")
    out: dict[str, tuple[str, str]] = {}
    entries = {**table.get("imports", {}), **table.get("toolkits", {})}
    for key in table.get("kernel_toolkits", {}).get("names", ()):
        entry = entries[key]
        for module in entry["modules"]:
            out[module] = (str(entry["label"]), str(entry["alternative"]))
    return out


def toolkit_of(module: str) -> str | None:
    """The toolkit import name ``module`` belongs to (itself or a parent), else None."""
    for name in toolkits():
        if module == name or module.startswith(name + "."):
            return name
    return None


@dataclass(frozen=True, slots=True)
class Cause:
    """Why a module never runs on ROCm: its import at ``line`` of ``imported`` (the toolkit
    module, or a project module that is CUDA-only), and the module written on the toolkit."""

    line: int
    imported: str
    toolkit: str
    root: str
    root_line: int
    via: str = ""
    #: For a module written on the toolkit: the folder its finding is merged under, and the
    #: modules outside the CUDA-only set that import it at top level (``path:line``).
    folder: str = ""
    importers: tuple[str, ...] = ()
    #: the modules outside the set that import it only inside a function, ``try`` or ``if``
    lazily: tuple[str, ...] = ()
    #: whether every module of its folder's finding is NVIDIA-only by design (in a folder
    #: written mostly on the toolkit, or imported only where asked for, and by nothing else at
    #: top level)
    component: bool = False
    #: For a file that only serves CUDA-only code (``migrator.reach.cuda_only_users``): how.
    note: str = ""
    #: For a module written on the toolkit: whether every run of the project loads it (the
    #: top-level package's ``__init__``): the whole package needs the toolkit
    core: bool = False
    #: For a module written on the toolkit: the console command (``[project.scripts]``,
    #: ``console_scripts``) that runs it, so the command fails on ROCm
    entry: str = ""
    #: the module that command runs (this one, or another of the folder's finding)
    entry_module: str = ""

    def reason(self) -> str:
        """The guard text of the module's findings."""
        if self.note:
            return f"never runs on ROCm: {self.note} ({self.root}:{self.root_line})"
        if not self.line:
            return (
                f"never runs on ROCm: its package `{self.imported}` ({self.via}) needs "
                f"`{self.toolkit}` ({self.root}:{self.root_line})"
            )
        if not self.via:
            return f"never runs on ROCm: the module imports `{self.imported}` at line {self.line}"
        return (
            f"never runs on ROCm: the module imports `{self.imported}` at line {self.line}, "
            f"which needs `{self.toolkit}` ({self.root}:{self.root_line})"
        )


def _test_like(relative: str) -> bool:
    """Tests and benchmarks: importing a CUDA-only module makes them CUDA-only by design."""
    return is_test_path(relative) or is_benchmark_path(relative)


def _folder(relative: str) -> str:
    return relative.rpartition("/")[0]


class _Lines:
    """Whether an import line the index read as text is code: not inside a triple-quoted
    string (a docstring's usage example); the spans are found once per file, on demand."""

    def __init__(self, sources: Mapping[str, str]) -> None:
        self._sources = sources
        self._spans: dict[str, list[tuple[int, int]]] = {}

    def confirmed(self, relative: str, line: int) -> bool:
        if not line:  # a module inside a package: importing it runs the package first
            return True
        spans = self._spans.get(relative)
        if spans is None:
            spans = self._spans[relative] = _string_lines(self._sources.get(relative, ""))
        index = bisect.bisect_right(spans, (line, 1 << 30)) - 1
        return index < 0 or not spans[index][0] < line <= spans[index][1]


def _string_lines(text: str) -> list[tuple[int, int]]:
    """(first line, last line) of every triple-quoted string of a text, in order."""
    spans = []
    for match in _TRIPLE.finditer(text):
        first = text.count("\n", 0, match.start()) + 1
        spans.append((first, first + text.count("\n", match.start(), match.end())))
    return spans


def cuda_only_modules(index: ProjectIndex) -> dict[str, Cause]:
    """Python files of the project that never run on a ROCm build, each with its cause."""
    lines = _Lines(index.sources)
    roots = {name.split(".", 1)[0] for name in index.modules}
    heads = {name.split(".", 1)[0] for name in toolkits()} - roots
    direct: dict[str, Cause] = {}
    for relative, top in index.top_imports.items():
        for line, unindented, named in top:
            if not unindented:
                continue
            hit = next((m for m in named if m.split(".", 1)[0] in heads and toolkit_of(m)), None)
            if hit is not None and lines.confirmed(relative, line):
                toolkit = toolkit_of(hit) or hit
                direct[relative] = Cause(line, hit, toolkit, relative, line)
                break
    if not direct:
        return {}
    importers, lazy = _importers(index)
    imports_of: dict[str, set[str]] = {}
    for imported, edges in importers.items():
        for importer, line, _ in edges:
            if line:  # explicit imports only: every module of a package imports its package
                imports_of.setdefault(importer, set()).add(imported)
    components = _components(index.sources, direct)

    def allowed(importer: str, cause: Cause) -> bool:
        # a module written on the toolkit itself is CUDA-only whoever it imports
        if importer in direct or _test_like(importer):
            return True
        return any(
            importer.startswith(folder + "/")
            for folder in components
            if cause.root.startswith(folder + "/")
        )

    def closure(seeds: Mapping[str, Cause]) -> dict[str, Cause]:
        found = dict(seeds)
        queue = deque(sorted(seeds))
        while queue:
            imported = queue.popleft()
            cause = found[imported]
            for importer, line, name in importers.get(imported, ()):
                if importer in found or not allowed(importer, cause):
                    continue
                if not lines.confirmed(importer, line):
                    continue
                found[importer] = Cause(
                    line, name, cause.toolkit, cause.root, cause.root_line, imported
                )
                queue.append(importer)
        return found

    # a module written on the toolkit that also imports a CUDA-only project module is a
    # consequence of it; what no chain reaches (an import cycle) stays a root
    everything = closure(direct)
    consequences = {
        relative
        for relative in direct
        if any(
            imported in everything
            and imported != relative
            and allowed(relative, everything[imported])
            for imported in imports_of.get(relative, ())
        )
    }
    # a module every run loads is where the problem is, whatever else it imports
    core = always_loaded(index)
    entries = entry_modules(index)
    consequences -= core | set(entries)
    for relative in core & set(direct):
        direct[relative] = replace(direct[relative], core=True)
    for relative in set(entries) & set(direct) - core:
        direct[relative] = replace(
            direct[relative], core=True, entry=entries[relative], entry_module=relative
        )
    seeds = {relative: cause for relative, cause in direct.items() if relative not in consequences}
    found = closure(seeds)
    missing = {relative: direct[relative] for relative in direct if relative not in found}
    if missing:
        found = closure({**seeds, **missing})
    return _describe_roots(found, importers, lazy, lines, components)


def always_loaded(index: ProjectIndex) -> set[str]:
    """The modules every run of the project loads: the ``__init__`` of each top-level package
    (any import of the package runs it first) and its ``__main__``, outside tests, benchmarks
    and vendored code."""
    from migrator.files.paths import vendored

    out: set[str] = set()
    for name, relative in index.modules.items():
        parts = name.split(".")
        top = len(parts) == 1 and relative.endswith("/__init__.py")
        main = len(parts) == 2 and parts[1] == "__main__"
        if (top or main) and not _test_like(relative) and not vendored(relative):
            out.add(relative)
    return out


def entry_modules(index: ProjectIndex) -> dict[str, str]:
    """The project's modules that a console script it declares runs (``relative -> command``):
    every run of that command loads them, so a toolkit import there is the command's problem,
    never a consequence of what the module imports. Declared in the root ``pyproject.toml``,
    ``setup.cfg`` or ``setup.py``; tests and vendored code left out."""
    from migrator.files.paths import vendored

    texts = dict(index.packaging)
    if "setup.py" in index.sources:
        texts["setup.py"] = index.sources["setup.py"]
    out: dict[str, str] = {}
    for command, module in console_scripts(texts).items():
        relative = index.modules.get(module)
        if relative and not _test_like(relative) and not vendored(relative):
            out.setdefault(relative, command)
    return out


def _describe_roots(
    found: dict[str, Cause],
    importers: Mapping[str, list[tuple[str, int, str]]],
    lazy: Mapping[str, list[tuple[str, int]]],
    lines: _Lines,
    components: set[str],
) -> dict[str, Cause]:
    """Give each module written on the toolkit its folder (a test's is the folder of a
    non-test module on the same toolkit: one CUDA-only component, one finding) and the
    modules outside the set that import it at top level."""
    outside: dict[str, set[str]] = {}
    optional: dict[str, set[str]] = {}
    for imported, cause in found.items():
        for importer, line, _ in importers.get(imported, ()):
            if line and importer not in found and lines.confirmed(importer, line):
                outside.setdefault(cause.root, set()).add(f"{importer}:{line}")
        for importer, line in lazy.get(imported, ()):
            if importer not in found and lines.confirmed(importer, line):
                optional.setdefault(cause.root, set()).add(f"{importer}:{line}")
    roots = sorted(relative for relative, cause in found.items() if not cause.via)
    sizes: dict[str, int] = {}
    for relative in roots:
        if not _test_like(relative):
            sizes[_folder(relative)] = sizes.get(_folder(relative), 0) + 1
    largest = min(sizes, key=lambda folder: (-sizes[folder], folder)) if sizes else None
    folders: dict[str, str] = {}
    for relative in roots:
        folder = _folder(relative)
        folders[relative] = (
            largest if _test_like(relative) and largest is not None else folder
        ) or "."
    # a folder's finding is "by design" only when each of its modules is: part of a CUDA-only
    # component or imported only where asked for, and imported at top level by nothing else
    design: dict[str, bool] = {}
    for relative in roots:
        folder = folders[relative]
        own = (folder in components or any(folder.startswith(c + "/") for c in components)) or bool(
            optional.get(relative)
        )
        design[folder] = (
            design.get(folder, True)
            and own
            and not outside.get(relative)
            and not found[relative].core
        )
    # a folder's finding names the console command that runs one of its modules
    commands: dict[str, tuple[str, str]] = {}
    for relative in roots:
        if found[relative].entry:
            commands.setdefault(folders[relative], (found[relative].entry, relative))
    for relative in roots:
        command, module = commands.get(folders[relative], ("", ""))
        found[relative] = replace(
            found[relative],
            entry=command,
            entry_module=module,
            folder=folders[relative],
            importers=tuple(sorted(outside.get(relative, ()))),
            lazily=tuple(sorted(optional.get(relative, ()))),
            component=design[folders[relative]],
        )
    return found


def _targets(index: ProjectIndex, name: str) -> list[tuple[str, str]]:
    """Project files executed by importing ``name`` (the module and its parent packages)."""
    parts = name.split(".")
    out = []
    for end in range(1, len(parts) + 1):
        module = ".".join(parts[:end])
        relative = index.modules.get(module)
        if relative is not None:
            out.append((relative, module))
    return out


_Importers = tuple[dict[str, list[tuple[str, int, str]]], dict[str, list[tuple[str, int]]]]
#: The last index's importers: several passes of one scan's aggregation read them.
_last_importers: list[tuple[ProjectIndex, _Importers]] = []


def _importers(index: ProjectIndex) -> _Importers:
    """Project file -> the files importing it at top level (importer, line, module name), and
    -> the files importing it indented (in a function, ``try`` or ``if``: importer, line).
    Computed once per index (read-only for its callers)."""
    if _last_importers and _last_importers[0][0] is index:
        return _last_importers[0][1]
    result = _compute_importers(index)
    _last_importers[:] = [(index, result)]
    return result


def _compute_importers(index: ProjectIndex) -> _Importers:
    out: dict[str, list[tuple[str, int, str]]] = {}
    lazy: dict[str, list[tuple[str, int]]] = {}
    packages = {
        relative[: -len("/__init__.py")]: name
        for name, relative in index.modules.items()
        if relative.endswith("/__init__.py")
    }
    roots = {name.split(".", 1)[0] for name in index.modules}
    for importer, top in sorted(index.top_imports.items()):
        folder = _folder(importer)
        while folder:
            package = packages.get(folder)
            init = f"{folder}/__init__.py"
            if package is not None and init != importer:
                out.setdefault(init, []).append((importer, 0, package))
            folder = _folder(folder)
        for line, unindented, named in top:
            for name in named:
                if name.split(".", 1)[0] not in roots:
                    continue
                for target, module in _targets(index, name):
                    if target == importer:
                        continue
                    if unindented:
                        out.setdefault(target, []).append((importer, line, module))
                    else:
                        lazy.setdefault(target, []).append((importer, line))
    return out, lazy


def _components(sources: Iterable[str], direct: Mapping[str, Cause]) -> set[str]:
    """Folders (not the root) where most Python files are written on a kernel toolkit."""
    totals: dict[str, int] = {}
    for relative in sources:
        totals[_folder(relative)] = totals.get(_folder(relative), 0) + 1
    counts: dict[str, int] = {}
    for relative in direct:
        counts[_folder(relative)] = counts.get(_folder(relative), 0) + 1
    return {
        folder
        for folder, count in counts.items()
        if folder and 2 * count >= totals.get(folder, count) and count >= 2
    }


def rocm_path(index: ProjectIndex, excluded: Mapping[str, Cause]) -> str:
    """``path:line`` of the project's first branch on a ROCm build outside ``excluded`` (the
    project already runs on ROCm in some form), "" when there is none."""
    for relative in sorted(index.sources, key=lambda path: (_test_like(path), path)):
        if relative in excluded:
            continue
        text = index.sources[relative]
        if not names_rocm(text):
            continue
        for match in _BRANCH.finditer(text):
            if ROCM_WORD.search(match.group(0)):
                return f"{relative}:{text.count(chr(10), 0, match.start()) + 1}"
    return ""


def settle_finding(
    finding: Finding, causes: Mapping[str, Cause], rocm: Callable[[], str]
) -> Finding:
    """A finding in a CUDA-only module: guarded, except the module's own ROC902 finding, which
    is merged per folder (at info when the project already has a ROCm path: ``rocm()``, the
    :func:`rocm_path`, read only for such a finding, as it searches every file)."""
    cause = causes.get(finding.path)
    if cause is None or finding.guard:
        return finding
    if finding.problem != CUDA_ONLY_PROBLEM or cause.via or cause.note:
        return replace(finding, guard=cause.reason())
    problem = f"{finding.rule}:{cause.folder}"
    finding = replace(finding, aggregate="project", problem=problem)
    message = finding.message.split(" (+", 1)[0]
    if cause.entry:
        message += (
            f"; `{cause.entry_module}` is the module the `{cause.entry}` command (a console "
            "script the project declares) runs: that command fails on ROCm"
        )
    elif cause.core:
        package = cause.root.rsplit("/", 2)[-2] if "/" in cause.root else cause.root
        message += (
            f"; it is the `{package}` package's own `{cause.root.rsplit('/', 1)[-1]}`, which every"
            f" import of `{package}` runs: no part of the package imports on ROCm"
        )
    if cause.importers:
        more = len(cause.importers) - 1
        others = f" (and {more} more)" if more else ""
        message += (
            f"; `{cause.importers[0]}`{others} imports it at top level and cannot be imported"
            " on ROCm either"
        )
        return replace(finding, message=message)
    if cause.component and (rocm_site := rocm()):
        how = (
            f"the project imports it only where it is asked for (`{cause.lazily[0]}`)"
            if cause.lazily
            else "it belongs to a folder written on the toolkit"
        )
        message += (
            f"; {how}, and the project already has a ROCm code path ({rocm_site}), so this module"
            " is most likely NVIDIA-only by design"
        )
        return replace(finding, severity=Severity.INFO, message=message)
    return replace(finding, message=message)
