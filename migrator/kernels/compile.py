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
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from migrator.files.sources import read_project_text
from migrator.kernels.compiler_text import WITHHELD, inside, last_line
from migrator.kernels.hipify import HipifyRun, line_map
from migrator.kernels.includes import unchecked_units
from migrator.kernels.source import MAX_SOURCE_BYTES
from migrator.process.helper import HelperError, find_program, helper_environment, python_module
from migrator.process.helper import run as run_helper

#: Default targets: CDNA2 (MI200), CDNA3 (gfx940, the first MI300 target ID, is what older
#: compilers know of gfx942) and RDNA2 (a wave32 consumer GPU).
DEFAULT_TARGETS = ("gfx90a", "gfx940", "gfx1030")
_DIAGNOSTIC = re.compile(
    r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<column>\d+): (?P<level>fatal error|error): (?P<message>.*)$",
    re.M,
)
#: Errors a newer ROCm would not give: a builtin or header this compiler's ROCm lacks.
_NEWER_ROCM = re.compile(
    r"use of undeclared identifier '(?:__shfl(?:_up|_down|_xor)?_sync|__ballot_sync|__any_sync|__all_sync|"
    r"__activemask|__syncwarp|__hmax\w*|__hmin\w*|__reduce_\w+_sync|__match_\w+_sync)'|"
    r"'(?:hip/hip_bf16\.h|hip/hip_fp8\.h|hipcub/[^']*|rocprim/[^']*|hipblas[^']*|rocblas[^']*|thrust/[^']*|"
    r"rocwmma/[^']*|hipsparse[^']*|hiprand/[^']*|rocrand/[^']*)' file not found"
)
#: The status of a unit the compile check did not compile: it may read a file outside the
#: project (``migrator.kernels.includes``). Neither a pass nor a failure.
NOT_CHECKED = "not checked"
#: Headers of PyTorch's C++ API: the CPU wheel has no HIP build of them.
_TORCH_HEADERS = re.compile(r"'(?:torch|ATen|c10|pybind11)/[^']*' file not found")


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


def translation_units(run: HipifyRun) -> list[str]:
    """The original `.cu` files of a hipify run (each is one translation unit)."""
    return sorted(relative for relative in run.hipified if relative.lower().endswith(".cu"))


STANDINS = Path(__file__).resolve().parent / "standins"


def torch_include_dirs(workdir: Path, timeout: float = 300.0) -> tuple[list[Path], str]:
    """Include folders for translation units that use PyTorch's C++ API: a hipified copy of
    torch's ATen/c10 headers (made in ``workdir``, a subprocess with a timeout), torch's own
    include folders and Python's. Empty, with the reason, where torch is not installed."""
    import json

    destination = workdir / "torch-hip"
    destination.mkdir(parents=True, exist_ok=True)
    command = python_module("migrator.kernels.hipify_worker", "--torch-shim", str(destination))
    try:
        done = run_helper(command, timeout=timeout)
        if done.timed_out:
            return [], f"torch's headers could not be prepared within {timeout:g} s"
        answer = json.loads(done.out.strip().splitlines()[-1])
    except (HelperError, json.JSONDecodeError, IndexError) as error:
        return [], f"torch's headers could not be prepared: {error}"
    if "error" in answer:
        return [], str(answer["error"])
    return [
        Path(folder) for folder in answer["include"]
    ], f"torch {answer.get('torch', '?')} headers, hipified"


def _command(
    compiler: Compiler, unit: Path, target: str, include_dirs: Sequence[Path]
) -> list[str]:
    command = [
        compiler.path,
        "-x",
        "hip",
        f"--offload-arch={target}",
        "--cuda-device-only",
        "-c",
        "-o",
        os.devnull,
        "-std=c++17",
        "-w",
        "-D__HIP_PLATFORM_AMD__=1",
        "-DUSE_ROCM=1",
        "-D__HIP_PLATFORM_HCC__=1",
        "-DC10_CUDA_NO_CMAKE_CONFIGURE_FILE",
    ]
    if not target.startswith(("gfx90", "gfx94")):
        # this ROCm ships no device libraries for it: compile the code, do not link them
        command.append("-nogpulib")
    for folder in include_dirs:
        command.append(f"-I{folder}")
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
) -> list[UnitResult]:
    """Compile each unit for each target in parallel; results in submission order."""
    assert run.workdir is not None, "the hipify run must keep its copy"
    workdir: Path = run.workdir
    source_dir = workdir / "src"
    folders = (
        [STANDINS]
        + sorted(
            {(source_dir / u).parent for u in run.hipified}
            | {path.parent for path in run.hipified.values()}
            | {source_dir}
        )
        + list(extra_includes)
    )
    maps: dict[Path, tuple[str, list[int]]] = {}
    for relative, hipified in run.hipified.items():
        original_text = read_project_text(root / relative, limit=MAX_SOURCE_BYTES)
        hipified_text = read_project_text(hipified, limit=MAX_SOURCE_BYTES)
        if original_text is None or hipified_text is None:
            continue
        before, after = original_text.splitlines(), hipified_text.splitlines()
        maps[hipified.resolve()] = (relative, line_map(before, after))
        maps[(source_dir / relative).resolve()] = (relative, line_map(before, after))
    refused = unchecked_units(
        root,
        source_dir,
        {unit: run.hipified.get(unit, source_dir / unit) for unit in units},
        folders,
        [workdir, STANDINS, *extra_includes],
    )
    work = [(unit, target) for unit in units for target in targets]
    total = len(work)
    done_count = 0

    def one(item: tuple[str, str]) -> UnitResult:
        unit, target = item
        path = run.hipified.get(unit, source_dir / unit)
        command = _command(compiler, path, target, folders)
        started = time.monotonic()
        try:
            finished = run_helper(
                command,
                timeout=timeout,
                cwd=workdir,
                env=helper_environment({"HIP_PLATFORM": "amd"}),
            )
        except HelperError as error:
            return UnitResult(unit, target, "crash", time.monotonic() - started, note=str(error))
        code = finished.returncode
        if code is None:
            return UnitResult(
                unit,
                target,
                "timeout",
                time.monotonic() - started,
                note=f"the compiler did not finish within {timeout:g} s",
            )
        seconds = time.monotonic() - started
        diagnostics = _diagnostics(finished.err, maps, workdir)
        if code == 0:
            return UnitResult(unit, target, "pass", seconds)
        if code < 0 or (not diagnostics and code != 1):
            last = last_line(finished.err, workdir)
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
            last = last_line(finished.err, workdir)
            return UnitResult(unit, target, "fail", seconds, note=last)
        return UnitResult(unit, target, "fail", seconds, diagnostics)

    def checked(item: tuple[str, str]) -> UnitResult:
        """A unit that may read a file outside the project is not compiled (not checked)."""
        if item[0] in refused:
            return UnitResult(item[0], item[1], NOT_CHECKED, 0.0, note=refused[item[0]])
        return one(item)

    results: list[UnitResult] = []
    workers = jobs or max(1, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for result in pool.map(checked, work):
            done_count += 1
            results.append(result)
            if progress is not None:
                progress(result, done_count, total)
    return results


def _diagnostics(
    stderr: str, maps: dict[Path, tuple[str, list[int]]], workdir: Path
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
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
        checkable = not (_NEWER_ROCM.search(message) or _TORCH_HEADERS.search(message))
        if mapped is None and not inside(str(raw), workdir):
            message = WITHHELD  # never the text of a file outside the project
        key = (path, line, message)
        if key in seen:
            continue
        seen.add(key)
        out.append(Diagnostic(path, line, message, checkable))
    return out


__all__ = [
    "Compiler",
    "DEFAULT_TARGETS",
    "Diagnostic",
    "NOT_CHECKED",
    "UnitResult",
    "compile_units",
    "find_compiler",
    "translation_units",
]
