"""What PyTorch's hipify leaves: copy an extension's C/C++/CUDA sources into a private
temporary folder, run torch's hipify there in a subprocess with a timeout (the user's tree is
never written), and find the CUDA-only constructs still present in its output (hipify does not
report them itself), mapped back to the original file and line."""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from migrator.files.sources import read_project_bytes
from migrator.kernels.builds import KERNEL_SUFFIXES
from migrator.kernels.declared import declared_names
from migrator.kernels.source import MAX_SOURCE_BYTES, parse
from migrator.process.helper import HelperError, python_module
from migrator.process.helper import run as run_helper

#: Identifiers that name CUDA-only API after hipify besides the CUDA runtime, driver and
#: library names (``hipify_map.CUDA_NAME``, shared with the scan): warp-synchronous builtins,
#: NVIDIA's namespaces.
_RESIDUE = re.compile(
    r"^(?:nvcuda|__shfl(?:_up|_down|_xor)?_sync|__ballot_sync|__any_sync|__all_sync|"
    r"__match_(?:any|all)_sync|__reduce_\w+_sync|__activemask|__cvta_generic_to_shared|cute|cutlass)$"
)
#: Headers of NVIDIA's template libraries, besides the toolkit's own (``cuda_names.cuda_header``).
_CUDA_INCLUDE = re.compile(
    r"^(?:cute/|cutlass/|cub/|thrust/|mma\.h$|cublas|cudnn|cusparse|nvToolsExt)"
)


def _residue_name(name: str) -> bool:
    """A CUDA name still in hipify's output: anything named like CUDA's API that torch's headers
    do not define (hipify renamed every name its tables map), or a warp builtin or namespace."""
    from migrator.kernels.hipify_map import CUDA_NAME, load

    if CUDA_NAME.match(name):
        return name not in load().torch_names
    return _RESIDUE.match(name) is not None


def _residue_include(header: str) -> bool:
    from migrator.kernels.cuda_names import cuda_header

    return cuda_header(header) or _CUDA_INCLUDE.match(header) is not None


_PTX = re.compile(r"(?<![\w.])[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+|%%?laneid")
#: Copying stops past this many files or bytes (a generated or vendored tree).
MAX_FILES = 5000
MAX_TOTAL_BYTES = 256 * 1024 * 1024
#: Headers besides the kernel suffixes a unit may include (template and table files): copied
#: into the private copy as they are, so that the compile check finds every project header.
HEADER_SUFFIXES = (".inc", ".ipp", ".tcc", ".tpp", ".def", ".cuinc", ".impl")


@dataclass(frozen=True, slots=True)
class Residue:
    """A construct hipify left untranslated, at the original file and line."""

    path: str
    line: int
    construct: str
    kind: str  # identifier | include | asm


@dataclass(slots=True)
class HipifyRun:
    """The outcome of one hipify run over a copy: residue, skipped files, an error."""

    residue: list[Residue] = field(default_factory=list)
    hipified: dict[str, Path] = field(default_factory=dict)  # original relative -> copy path
    workdir: Path | None = None
    error: str | None = None
    problems: list[str] = field(default_factory=list)


def copy_sources(root: Path, relatives: Sequence[str], destination: Path) -> list[str]:
    """Copy regular kernel files into ``destination``; returns the one-line reasons of files
    left out. A symbolic link is followed only to a regular file of the project (one source
    built under two names: a ``.cu`` linked to the ``.cpp`` a CPU build compiles), whose bytes
    are copied under the link's name; never to a file outside ``root``."""
    inside = root.resolve()
    problems: list[str] = []
    total = 0
    for count, relative in enumerate(relatives):
        if count >= MAX_FILES:
            problems.append(f"copied only the first {MAX_FILES} files")
            break
        source = root / relative
        try:
            info = source.lstat()
        except OSError as error:
            problems.append(f"{relative}: {error.strerror}")
            continue
        if source.is_symlink():
            try:
                target = source.resolve(strict=True)
                target.relative_to(inside)
                info = target.stat()
            except (OSError, RuntimeError, ValueError):
                problems.append(f"{relative}: a link to nothing in the project, not copied")
                continue
            source = target
        if not source.is_file():
            problems.append(f"{relative}: not a regular file")
            continue
        if info.st_size > MAX_SOURCE_BYTES:
            problems.append(
                f"{relative}: larger than {MAX_SOURCE_BYTES // (1024 * 1024)} MiB, not hipified"
            )
            continue
        total += info.st_size
        if total > MAX_TOTAL_BYTES:
            problems.append("stopped copying at 256 MiB of sources")
            break
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return problems


def run_hipify(
    root: Path, relatives: Sequence[str], *, timeout: float = 300.0, keep: Path | None = None
) -> HipifyRun:
    """Hipify a copy of ``relatives`` (project-relative kernel files) and collect the residue.
    ``keep``: a folder to hold the copy (the compile check reads it); else a temporary one that
    is removed."""
    run = HipifyRun()
    owned = keep is None
    workdir = Path(tempfile.mkdtemp(prefix="migrate-hipify-")) if keep is None else keep
    try:
        source_dir = workdir / "src"
        source_dir.mkdir(parents=True, exist_ok=True)
        files = [r for r in relatives if r.lower().endswith(KERNEL_SUFFIXES + HEADER_SUFFIXES)]
        run.problems.extend(copy_sources(root, files, source_dir))
        from migrator.kernels.compile_paths import project_include_folders

        roots = [str(f) for f in project_include_folders(source_dir, files) if f != source_dir]
        command = python_module("migrator.kernels.hipify_worker", str(source_dir), *roots)
        try:
            done = run_helper(command, timeout=timeout, cwd=workdir)
        except HelperError as error:
            run.error = f"hipify could not start: {error}"
            return run
        if done.timed_out:
            run.error = f"hipify did not finish within {timeout:g} s"
            return run
        try:
            answer = json.loads(done.out.strip().splitlines()[-1]) if done.out.strip() else {}
        except json.JSONDecodeError:
            answer = {}
        if "error" in answer or "files" not in answer:
            last = (done.err.strip().splitlines() or ["no output"])[-1]
            run.error = answer.get("error") or f"hipify failed: {last}"
            return run
        for source, hipified in answer["files"].items():
            try:
                relative = Path(source).resolve().relative_to(source_dir.resolve()).as_posix()
            except ValueError:
                continue
            if relative in files:
                run.hipified[relative] = Path(hipified)
        for relative in files:
            run.hipified.setdefault(relative, source_dir / relative)
        declared: set[str] = set()
        for path in run.hipified.values():
            data = read_project_bytes(path, MAX_SOURCE_BYTES)
            if data is not None:
                declared |= declared_names(data)
        for relative, path in sorted(run.hipified.items()):
            run.residue.extend(residue_of(root / relative, path, relative, declared))
        if not owned:
            run.workdir = workdir
        return run
    finally:
        if owned:
            shutil.rmtree(workdir, ignore_errors=True)


def line_map(original: list[str], hipified: list[str]) -> list[int]:
    """For each hipified line (0-based), the 1-based original line it came from (the nearest
    aligned line before it for an inserted one)."""
    matcher = difflib.SequenceMatcher(a=original, b=hipified, autojunk=False)
    mapping = [0] * len(hipified)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        for offset in range(b1 - b0):
            if tag == "equal" or (tag == "replace" and a1 - a0 == b1 - b0):
                mapping[b0 + offset] = a0 + offset + 1
            else:
                mapping[b0 + offset] = min(a0 + offset, max(a1 - 1, a0)) + 1
    return mapping


def residue_of(
    original: Path, hipified: Path, relative: str, declared: set[str] | None = None
) -> Iterator[Residue]:
    """CUDA-only constructs in one hipified file, at the original's lines (``declared``: names
    the project declares itself, which are never residue)."""
    data = read_project_bytes(hipified, MAX_SOURCE_BYTES)
    original_data = read_project_bytes(original, MAX_SOURCE_BYTES)
    if data is None or original_data is None:
        return
    before = original_data.decode("utf-8", "replace").splitlines()
    after = data.decode("utf-8", "replace").splitlines()
    mapping = line_map(before, after) if before != after else list(range(1, len(after) + 1))
    source = parse(data)
    seen: set[tuple[int, str]] = set()

    def at(offset: int) -> int:
        index = source.line_of(offset) - 1
        return mapping[index] if 0 <= index < len(mapping) else index + 1

    for include in source.includes():
        if _residue_include(include.header):
            key = (at(include.start), include.header)
            if key not in seen:
                seen.add(key)
                yield Residue(relative, key[0], include.header, "include")
    for block in source.asm_blocks():
        if _PTX.search(block.template):
            key = (at(block.start), "asm")
            if key not in seen:
                seen.add(key)
                yield Residue(relative, key[0], "inline PTX `asm`", "asm")
    for token in source.tokens():
        if declared is not None and token.text in declared:
            continue
        if token.type in {
            "identifier",
            "type_identifier",
            "namespace_identifier",
            "field_identifier",
        } and _residue_name(token.text):
            key = (at(token.start), token.text)
            if key not in seen:
                seen.add(key)
                yield Residue(relative, key[0], token.text, "identifier")


__all__ = [
    "HEADER_SUFFIXES",
    "HipifyRun",
    "Residue",
    "run_hipify",
    "line_map",
    "residue_of",
    "copy_sources",
]
_ = os
