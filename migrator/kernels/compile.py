"""The HIP compile check: each hipified CUDA translation unit is compiled for AMD targets by a
real HIP compiler (device code only, full code generation so that inline assembly is
assembled), in parallel subprocesses with a timeout each, inside the private hipify copy. Errors
are mapped back to the original CUDA file and line.

What it checks: that the device code of each `.cu` file, as PyTorch's hipify leaves it,
compiles for the given targets with the installed ROCm. What it cannot check: host-only C++
files, linking, run-time behaviour (wave64 reductions that compile but compute wrong results),
and features newer than the installed ROCm (reported as "not checkable", never as a failure)."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path

from migrator.files.sources import read_project_text
from migrator.kernels.compile_env import (
    TORCH_HEADER,
    device_library_folders,
    gap_of,
    has_device_library,
)
from migrator.kernels.compile_paths import include_line, missing_headers, project_include_folders
from migrator.kernels.compiler_text import WITHHELD, inside, last_line, roots, shown_lines
from migrator.kernels.hipify import HipifyRun, line_map
from migrator.kernels.includes import unchecked_units
from migrator.kernels.prelude import Prelude, build_prelude, pch_flags, prelude_kind
from migrator.kernels.source import MAX_SOURCE_BYTES
from migrator.process.helper import HelperError, find_program, helper_environment
from migrator.process.helper import run as run_helper

#: Default targets: CDNA2 (MI200), CDNA3 (gfx940, the first MI300 target ID, is what older
#: compilers know of gfx942) and RDNA2 (a wave32 consumer GPU).
DEFAULT_TARGETS = ("gfx90a", "gfx940", "gfx1030")
_DIAGNOSTIC = re.compile(
    r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<column>\d+): (?P<level>fatal error|error): (?P<message>.*)$",
    re.M,
)
#: An error of the driver or the device linker, located nowhere (``lld: error: undefined
#: hidden symbol: __ockl_get_local_id``).
_DRIVER = re.compile(
    r"^(?:clang|clang\+\+|lld|ld\.lld|hipcc)(?:-\d+(?:\.\d+)*)?: error: (?P<message>.*)$", re.M
)
_COMMAND_FAILED = re.compile(r"command failed with exit code|command failed due to signal")
_NOT_FOUND = re.compile(r"^'(?P<name>[^']+)' file not found")
#: The status of a unit the compile check did not compile: it may read a file outside the
#: project (``migrator.kernels.includes``). Neither a pass nor a failure.
NOT_CHECKED = "not checked"
#: Statuses that make ``migrate kernels --compile`` exit 1: a unit that failed, or that was not
#: compiled or not fully checked.
UNFINISHED = frozenset({"fail", "timeout", "crash", NOT_CHECKED, "not checkable"})


@dataclass(frozen=True, slots=True)
class Compiler:
    """The HIP compiler found: its path, HIP version and clang version lines."""

    path: str
    hip_version: str
    clang_version: str


def find_compiler() -> Compiler | None:
    """``hipcc`` (``$HIPCC`` when set, else on the absolute entries of PATH), with its versions;
    None when absent."""
    path = find_program(os.environ.get("HIPCC") or "hipcc")
    if not path:
        return None
    try:
        done = run_helper(
            [path, "--version"], timeout=60, env=helper_environment({"HIP_PLATFORM": "amd"})
        )
    except HelperError:
        return None
    if done.timed_out:
        return None
    text = done.out + done.err
    hip = re.search(r"HIP version: (\S+)", text)
    clang = re.search(r"clang version (\S+)", text)
    return Compiler(
        path, hip.group(1) if hip else "unknown", clang.group(1) if clang else "unknown"
    )


@dataclass(frozen=True, slots=True)
class Diagnostic:
    path: str
    line: int
    message: str
    checkable: bool = True


@dataclass(slots=True)
class UnitResult:
    """One translation unit on one target."""

    path: str
    target: str
    status: str  # pass | fail | not checkable | not checked | timeout | crash
    seconds: float
    diagnostics: list[Diagnostic] = field(default_factory=list)
    note: str = ""


def translation_units(run: HipifyRun, excluded: Collection[str] = ()) -> list[str]:
    """The original `.cu` files of a hipify run (each is one translation unit), less those no
    ROCm build compiles (``excluded``)."""
    return sorted(
        relative
        for relative in run.hipified
        if relative.lower().endswith(".cu") and relative not in excluded
    )


STANDINS = Path(__file__).resolve().parent / "standins"
#: Stand-ins for ROCm libraries torch's HIP headers include for their handle types, searched
#: after every real folder (``-idirafter``): an installed library wins.
STANDINS_AFTER = STANDINS / "after"


@dataclass(frozen=True, slots=True)
class UnitFlags:
    """What the build compiles one unit with: project-relative include folders, macros."""

    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    #: macros the build computes when it runs: an ``#error`` in a file that tests one is not
    #: checkable (the check does not know which branch the build takes)
    unknown: tuple[str, ...] = ()


def _command(
    compiler: Compiler,
    unit: Path | None,
    target: str,
    include_dirs: Sequence[Path],
    defines: Sequence[str] = (),
    *,
    link: bool = True,
    dependencies: bool = False,
    extra: Sequence[str] = (),
) -> list[str]:
    command = [
        compiler.path,
        "-x",
        "hip",
        f"--offload-arch={target}",
        "--cuda-device-only",
        *(["-M", "-MG"] if dependencies else ["-c", "-o", os.devnull]),
        "-std=c++17",
        "-w",
        "-D__HIP_PLATFORM_AMD__=1",
        "-DUSE_ROCM=1",
        "-D__HIP_PLATFORM_HCC__=1",
        "-DC10_CUDA_NO_CMAKE_CONFIGURE_FILE",
        *(f"-D{define}" for define in defines),
    ]
    if not link and not dependencies:
        # no device library for this target here: compile the code, do not link it
        command.append("-nogpulib")
    command.extend(extra)
    for folder in include_dirs:
        command.append(f"-I{folder}")
    command.extend(["-idirafter", str(STANDINS_AFTER)])
    if unit is not None:
        command.append(str(unit))
    return command


def compile_units(
    compiler: Compiler,
    run: HipifyRun,
    root: Path,
    units: Sequence[str],
    targets: Sequence[str],
    *,
    jobs: int = 0,
    timeout: float = 120.0,
    progress: Callable[[UnitResult, int, int], None] | None = None,
    extra_includes: Sequence[Path] = (),
    flags: Mapping[str, UnitFlags] | None = None,
    torch_gap: str = "",
    use_prelude: bool = True,
    prelude_notes: list[str] | None = None,
) -> list[UnitResult]:
    """Compile each unit for each target in parallel, largest units first; results in the
    order of ``units`` and ``targets``. ``flags``: each unit's include folders and macros from
    the build; ``torch_gap``: why torch's headers are missing ("" when they were prepared)."""
    assert run.workdir is not None, "the hipify run must keep its copy"
    workdir: Path = run.workdir
    source_dir = workdir / "src"
    flags = flags or {}
    prelude_notes = [] if prelude_notes is None else prelude_notes
    project_dirs = project_include_folders(source_dir, list(run.hipified))
    common = list(
        dict.fromkeys(
            project_dirs
            + sorted(
                {(source_dir / u).parent for u in run.hipified}
                | {path.parent for path in run.hipified.values()}
                | {source_dir}
            )
            + list(extra_includes)
        )
    )

    def folders_of(unit: str) -> list[Path]:
        own = [
            source_dir / d if d else source_dir for d in flags.get(unit, UnitFlags()).include_dirs
        ]
        return list(dict.fromkeys([STANDINS, *own, *common]))

    maps: dict[Path, tuple[str, list[int]]] = {}
    for relative, hipified in run.hipified.items():
        original_text = read_project_text(root / relative, limit=MAX_SOURCE_BYTES)
        hipified_text = read_project_text(hipified, limit=MAX_SOURCE_BYTES)
        if original_text is None or hipified_text is None:
            continue
        before, after = original_text.splitlines(), hipified_text.splitlines()
        maps[hipified.resolve()] = (relative, line_map(before, after))
        maps[(source_dir / relative).resolve()] = (relative, line_map(before, after))
    every_folder = list(dict.fromkeys(f for unit in units for f in folders_of(unit)))
    every_folder.append(STANDINS_AFTER)
    refused = unchecked_units(
        root,
        source_dir,
        {unit: run.hipified.get(unit, source_dir / unit) for unit in units},
        every_folder,
        [workdir, STANDINS, *extra_includes],
    )
    libraries = device_library_folders()
    linked = {target: has_device_library(target, libraries) for target in targets}
    copies = [path for path in run.hipified.values()]

    def size(unit: str) -> int:
        try:
            return run.hipified.get(unit, source_dir / unit).stat().st_size
        except OSError:
            return 0

    order = {
        (unit, target): index
        for index, (unit, target) in enumerate((u, t) for u in units for t in targets)
    }
    work = sorted(order, key=lambda item: (-size(item[0]), order[item]))
    workers = jobs or max(1, os.cpu_count() or 1)
    kinds = {
        u: prelude_kind(run.hipified.get(u, source_dir / u)) for u in units if u not in refused
    }
    preludes: dict[tuple[str, str], Prelude] = {}
    if use_prelude and extra_includes:
        wanted = sorted({(kind, t) for kind in kinds.values() if kind for t in targets})

        def precompile(item: tuple[str, str]) -> Prelude:
            base = _command(
                compiler,
                None,
                item[1],
                [STANDINS, *extra_includes],
                link=linked[item[1]],
            )
            return build_prelude(base, item[0], item[1], workdir / "prelude", timeout)

        with ThreadPoolExecutor(max_workers=workers) as pool:
            for built in pool.map(precompile, wanted):
                if built.path is not None:
                    preludes[(built.kind, built.target)] = built
                else:
                    prelude_notes.append(f"{built.kind} prelude for {built.target}: {built.note}")

    def one(item: tuple[str, str]) -> UnitResult:
        unit, target = item
        path = run.hipified.get(unit, source_dir / unit)
        defines = flags.get(unit, UnitFlags()).defines
        prelude = preludes.get((kinds.get(unit, ""), target))
        started = time.monotonic()
        try:
            for flags_now in ([pch_flags(prelude)] if prelude else []) + [[]]:
                command = _command(
                    compiler,
                    path,
                    target,
                    folders_of(unit),
                    defines,
                    link=linked[target],
                    extra=flags_now,
                )
                finished = run_helper(
                    command,
                    timeout=timeout,
                    cwd=workdir,
                    env=helper_environment({"HIP_PLATFORM": "amd"}),
                )
                if finished.returncode in (0, None):
                    break  # a pass (or a timeout) on the prelude stands; a failure is retried
        except HelperError as error:
            return UnitResult(unit, target, "crash", time.monotonic() - started, note=str(error))
        code = finished.returncode
        if code is None:
            return UnitResult(
                unit,
                target,
                "timeout",
                time.monotonic() - started,
                note=f"the compiler did not finish within {timeout:g} s (its process group was killed)",
            )
        diagnostics = [
            d if d.path else replace(d, path=unit)
            for d in _diagnostics(finished.err, maps, workdir, compiler, torch_gap, extra_includes)
        ]
        if any(_NOT_FOUND.match(d.message) for d in diagnostics):
            diagnostics = _in_order(
                diagnostics,
                _more_missing(
                    compiler,
                    path,
                    target,
                    folders_of(unit),
                    defines,
                    workdir,
                    timeout,
                    [path, *copies],
                    maps,
                    diagnostics,
                    torch_gap,
                    extra_includes,
                ),
            )
        diagnostics = _with_gaps(
            _unknown_branches(diagnostics, root, flags.get(unit, UnitFlags()).unknown)
        )
        seconds = time.monotonic() - started
        if code == 0:
            return UnitResult(unit, target, "pass", seconds)
        if code < 0 or (not diagnostics and code != 1):
            last = last_line(finished.err, workdir, extra_includes)
            return UnitResult(
                unit,
                target,
                "crash",
                seconds,
                diagnostics,
                note=f"the compiler exited with {code}: {last}",
            )
        if diagnostics and all(not d.checkable for d in diagnostics):
            return UnitResult(
                unit, target, "not checkable", seconds, diagnostics, note=diagnostics[0].message
            )
        if not diagnostics:
            last = last_line(finished.err, workdir, extra_includes)
            return UnitResult(unit, target, "fail", seconds, note=last)
        return UnitResult(unit, target, "fail", seconds, diagnostics)

    def checked(item: tuple[str, str]) -> UnitResult:
        """A unit that may read a file outside the project is not compiled (not checked)."""
        if item[0] in refused:
            return UnitResult(item[0], item[1], NOT_CHECKED, 0.0, note=refused[item[0]])
        return one(item)

    results: dict[tuple[str, str], UnitResult] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(checked, item): item for item in work}
        for future in as_completed(futures):
            result = future.result()
            results[futures[future]] = result
            if progress is not None:
                progress(result, len(results), len(work))
    return [results[item] for item in sorted(results, key=order.__getitem__)]


_ERROR_LINE = re.compile(r"^\s*#\s*error\b")


def _unknown_branches(
    diagnostics: list[Diagnostic], root: Path, unknown: Sequence[str]
) -> list[Diagnostic]:
    """An ``#error`` in a file whose conditionals test a macro the build computes when it runs
    (``-DCUDA_ARCH={capability}``) is not checkable: which branch the build takes is unknown."""
    if not unknown:
        return diagnostics
    tests = re.compile(
        r"^\s*#\s*(?:if|elif|ifdef|ifndef)\b.*\b(?:" + "|".join(map(re.escape, unknown)) + r")\b",
        re.M,
    )
    out: list[Diagnostic] = []
    for diagnostic in diagnostics:
        text = (
            read_project_text(root / diagnostic.path, limit=MAX_SOURCE_BYTES)
            if diagnostic.path
            else None
        )
        lines = text.splitlines() if text else []
        line = lines[diagnostic.line - 1] if 0 < diagnostic.line <= len(lines) else ""
        if diagnostic.checkable and text and _ERROR_LINE.match(line) and tests.search(text):
            names = ", ".join(f"`{name}`" for name in unknown)
            diagnostic = replace(
                diagnostic,
                checkable=False,
                message=f"{diagnostic.message} (under a branch on {names}, which the build "
                "computes when it runs: not known here)",
            )
        out.append(diagnostic)
    return out


def _with_gaps(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """An error on the line of a named gap follows from it (clang's typo correction turns a
    missing ``__syncwarp()`` into a wrong call of ``__sync_swap``): not checkable either."""
    gaps = {(d.path, d.line) for d in diagnostics if not d.checkable}
    return [
        replace(d, checkable=False, message=f"{d.message} (follows from the gap on this line)")
        if d.checkable and (d.path, d.line) in gaps
        else d
        for d in diagnostics
    ]


def _in_order(first: list[Diagnostic], more: list[Diagnostic]) -> list[Diagnostic]:
    """A unit's diagnostics with those of the second pass: by file and line when it found
    any (the first pass stopped at a missing header)."""
    if not more:
        return first
    return sorted(first + more, key=lambda d: (d.path, d.line))


def _more_missing(
    compiler: Compiler,
    path: Path,
    target: str,
    folders: Sequence[Path],
    defines: Sequence[str],
    workdir: Path,
    timeout: float,
    files: Sequence[Path],
    maps: Mapping[Path, tuple[str, list[int]]],
    known: Sequence[Diagnostic],
    torch_gap: str,
    extra: Sequence[Path] = (),
) -> list[Diagnostic]:
    """Every header the unit includes that is missing, not only the first clang stops at: the
    preprocessor's dependency list with missing headers allowed (``-M -MG``), and the
    preprocessor's own errors past that header (an ``#error``), which it lists even when it
    exits with an error."""
    command = _command(compiler, path, target, folders, defines, dependencies=True)
    try:
        finished = run_helper(
            command, timeout=timeout, cwd=workdir, env=helper_environment({"HIP_PLATFORM": "amd"})
        )
    except HelperError:
        return []
    if finished.returncode is None:
        return []
    shown = {m.group("name") for d in known if (m := _NOT_FOUND.match(d.message))}
    seen = {(d.path, d.line, d.message) for d in known}
    out: list[Diagnostic] = []
    for diagnostic in _diagnostics(finished.err, maps, workdir, compiler, torch_gap, extra):
        key = (diagnostic.path, diagnostic.line, diagnostic.message)
        if diagnostic.path and key not in seen and not _NOT_FOUND.match(diagnostic.message):
            seen.add(key)
            out.append(diagnostic)
    for name in missing_headers(finished.out, workdir):
        if name in shown:
            continue
        shown.add(name)
        where = include_line(name, files, maps)
        if where is None:
            continue
        message = f"'{name}' file not found"
        gap = gap_of(message, compiler.hip_version)
        torch = bool(torch_gap) and TORCH_HEADER.search(message) is not None
        if gap:
            message += f" ({gap})"
        elif torch:
            message += f" ({torch_gap})"
        out.append(Diagnostic(where[0], where[1], message, not (gap or torch)))
    return out


def _diagnostics(
    stderr: str,
    maps: Mapping[Path, tuple[str, list[int]]],
    workdir: Path,
    compiler: Compiler,
    torch_gap: str = "",
    extra: Sequence[Path] = (),
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    allowed = roots(workdir, extra)
    seen: set[tuple[str, int, str]] = set()
    for match in _DIAGNOSTIC.finditer(stderr):
        raw = Path(match.group("path"))
        resolved = (raw if raw.is_absolute() else workdir / raw).resolve()
        line = int(match.group("line"))
        message = match.group("message").strip()
        mapped = maps.get(resolved)
        if mapped is not None:
            relative, mapping = mapped
            path = relative
            line = mapping[line - 1] if 0 < line <= len(mapping) else line
        else:
            path = str(raw)
        gap = gap_of(message, compiler.hip_version)
        torch = bool(torch_gap) and TORCH_HEADER.search(message) is not None
        if mapped is None and not inside(str(raw), workdir, allowed):
            message = WITHHELD  # never the text of a file outside the project
        elif gap:
            message += f" ({gap})"
        elif torch:
            message += f" ({torch_gap})"
        key = (path, line, message)
        if key in seen:
            continue
        seen.add(key)
        out.append(Diagnostic(path, line, message, not (gap or torch)))
    driver = [
        m.group("message").strip()
        for m in _DRIVER.finditer(stderr)
        if not _COMMAND_FAILED.search(m.group("message"))
    ]
    for message in driver if not out else []:
        shown = shown_lines(message, workdir, extra)
        text = shown[0] if shown else WITHHELD
        key = ("", 0, text)
        if key not in seen:
            seen.add(key)
            out.append(Diagnostic("", 0, text[:300]))
    return out


__all__ = [
    "Compiler",
    "DEFAULT_TARGETS",
    "Diagnostic",
    "NOT_CHECKED",
    "UNFINISHED",
    "UnitFlags",
    "UnitResult",
    "compile_units",
    "find_compiler",
    "translation_units",
]
