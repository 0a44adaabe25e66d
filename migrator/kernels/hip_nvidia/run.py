"""Orchestrates a hip-on-nvidia run: copy an extension's files into a private workspace,
hipify the copy (or take a translated tree the user names), write torch's header shim, plan
both builds and start the runner through ``migrator.process.helper`` in the workspace; returns
the report. It runs the project's extension code, so ``migrate kernels`` only calls it on an
explicit ``--run hip-on-nvidia``."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from migrator.errors import MigrateError
from migrator.kernels.hip_nvidia.defects import glued_launches
from migrator.kernels.hip_nvidia.headers import installed
from migrator.kernels.hipify import copy_sources, run_hipify
from migrator.process.helper import HelperError, find_program, python_module
from migrator.process.helper import run as run_helper

STATEMENT = (
    "HIP over CUDA on NVIDIA GPU {device}, warp size {warp}: proves the translation, "
    "not AMD behaviour"
)
#: Written into a kept translation: original relative path -> translated relative path.
MAPPING_FILE = ".migrate-hipified.json"
_HEADER_SUFFIXES = (".h", ".hpp", ".cuh", ".hxx", ".inl", ".inc")


def find_nvcc() -> str | None:
    """nvcc from ``$CUDA_HOME/bin`` (or ``$CUDA_PATH/bin``), else the absolute ``PATH``
    entries; the runner hands its folder to torch's ``cpp_extension`` as ``CUDA_HOME``."""
    for name in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(name)
        if home and os.access(Path(home) / "bin" / "nvcc", os.X_OK):
            return str(Path(home) / "bin" / "nvcc")
    return find_program("nvcc")


def read_inputs(path: Path | None) -> list[dict[str, Any]]:
    """The declared op calls (TOML ``[[call]]`` tables: extension, op, args, seed, rtol,
    atol); a bad file is a usage error with its one-line reason."""
    if path is None:
        return []
    from migrator.files.tomlcompat import tomllib

    try:
        data = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise MigrateError(f"--inputs {path}: {error}") from None
    calls = data.get("call", [])
    if not isinstance(calls, list) or not all(
        isinstance(c, dict) and "op" in c and "extension" in c for c in calls
    ):
        raise MigrateError(f"--inputs {path}: each [[call]] needs `extension` and `op`")
    return calls


def declared_extensions(path: Path | None, root: Path) -> list[dict[str, Any]]:
    """Extensions the ``--inputs`` file declares (``[[extension]]``: name, sources), for a build
    the scan could not read (sources computed from ``__file__``, say); their folders' headers
    come along."""
    if path is None:
        return []
    from migrator.files.tomlcompat import tomllib

    try:
        tables = tomllib.loads(path.read_text()).get("extension", [])
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise MigrateError(f"--inputs {path}: {error}") from None
    found = []
    for table in tables if isinstance(tables, list) else []:
        sources = table.get("sources") if isinstance(table, dict) else None
        if not isinstance(sources, list) or not isinstance(table.get("name"), str):
            raise MigrateError(f"--inputs {path}: each [[extension]] needs `name` and `sources`")
        folders = {str(Path(str(s)).parent) for s in sources}
        headers = sorted(
            p.relative_to(root).as_posix()
            for folder in folders
            for p in (root / folder).glob("*")
            if p.suffix.lower() in _HEADER_SUFFIXES and p.is_file() and not p.is_symlink()
        )
        found.append(
            {"name": table["name"], "sources": [str(s) for s in sources], "files": headers}
        )
    return found


def module_stem(name: str) -> str:
    """A Python identifier for an extension's name (``pkg._ext`` -> ``pkg__ext``)."""
    return re.sub(r"\W", "_", name).strip("_") or "extension"


def _header_dirs(tree: Path, files: Sequence[str]) -> list[str]:
    folders = {str((tree / f).parent) for f in files if f.lower().endswith(_HEADER_SUFFIXES)}
    folders |= {str((tree / f).parent) for f in files}
    return sorted(folders) + [str(tree)]


def translated_sources(tree: Path, sources: Sequence[str], mapping: dict[str, str]) -> list[str]:
    """The translated build's sources: hipify's ``.hip`` files get a ``.cu`` twin so nvcc
    compiles them as CUDA (HIP-on-NVIDIA is CUDA C++ with HIP's headers)."""
    out = []
    for relative in sources:
        path = tree / mapping.get(relative, relative)
        if path.suffix == ".hip":
            twin = path.with_name(path.name + ".cu")
            shutil.copyfile(path, twin)
            path = twin
        out.append(str(path))
    return out


def plan(
    workspace: Path,
    extensions: Sequence[dict[str, Any]],
    mapping: dict[str, str],
    hip_include: Path,
    shim: Path,
) -> list[dict[str, Any]]:
    """Both builds of each extension: sources and include folders."""
    original_tree = workspace / "original"
    translated_tree = workspace / "translated"
    planned = []
    for extension in extensions:
        files = list(dict.fromkeys([*extension["sources"], *extension["files"]]))
        translated_files = [mapping.get(f, f) for f in files]
        planned.append(
            {
                "name": extension["name"],
                "module": module_stem(extension["name"]),
                "original": {
                    "sources": [str(original_tree / s) for s in extension["sources"]],
                    "include": _header_dirs(original_tree, files),
                },
                "translated": {
                    "sources": translated_sources(translated_tree, extension["sources"], mapping),
                    "include": [
                        str(hip_include),
                        str(shim),
                        *_header_dirs(translated_tree, translated_files),
                    ],
                },
            }
        )
    return planned


def _translate(
    root: Path, files: list[str], workspace: Path, translated: Path | None, timeout: float
) -> dict[str, str]:
    """Fill ``workspace/translated``: hipify a copy, or copy the tree the user names (a kept
    workspace's ``translated`` folder, edited or ported by hand). Returns the file mapping."""
    target = workspace / "translated"
    if translated is not None:
        try:
            mapping = json.loads((translated / MAPPING_FILE).read_text())
        except (OSError, ValueError):
            raise MigrateError(
                f"--translated {translated}: no {MAPPING_FILE} (name the `translated` folder of "
                "a workspace kept with --keep-workspace)"
            ) from None
        shutil.copytree(translated, target, symlinks=False)
        return {str(k): str(v) for k, v in mapping.items()}
    hipified = run_hipify(root, files, timeout=timeout, keep=workspace / "hipify")
    if hipified.error:
        raise MigrateError(f"hip-on-nvidia: {hipified.error}")
    source = workspace / "hipify" / "src"
    shutil.move(str(source), str(target))
    mapping = {}
    for relative, path in hipified.hipified.items():
        try:
            mapping[relative] = path.resolve().relative_to(source.resolve()).as_posix()
        except ValueError:
            mapping[relative] = relative
    (target / MAPPING_FILE).write_text(json.dumps(mapping, indent=1))
    return mapping


def _shim(workspace: Path, timeout: float) -> Path:
    shim = workspace / "shim"
    shim.mkdir()
    command = python_module("migrator.kernels.hipify_worker", "--torch-nvidia-shim", str(shim))
    try:
        done = run_helper(command, timeout=timeout, cwd=workspace)
    except HelperError as error:
        raise MigrateError(f"hip-on-nvidia: {error}") from None
    if done.returncode != 0:
        last = (done.out.strip().splitlines() or done.err.strip().splitlines() or ["no output"])[-1]
        raise MigrateError(f"hip-on-nvidia: torch's header shim could not be written: {last}")
    return shim


def run_hip_on_nvidia(
    root: Path,
    extensions: Sequence[dict[str, Any]],
    *,
    inputs: Path | None,
    translated: Path | None = None,
    keep: Path | None = None,
    timeout: float = 1800.0,
) -> dict[str, Any]:
    """Build, run and compare every extension in ``extensions`` (``name``, ``sources``,
    ``files`` as ``migrate kernels`` reports them). Raises MigrateError (one line) when a
    needed tool is missing."""
    if find_nvcc() is None:
        raise MigrateError(
            "hip-on-nvidia needs CUDA's nvcc (CUDA_HOME or PATH) and an NVIDIA GPU; nothing was built"
        )
    hip_include = installed()
    if hip_include is None:
        raise MigrateError(
            "hip-on-nvidia needs the patched HIP headers: run `python -m "
            "migrator.kernels.hip_nvidia.headers install` once (Debian: libamdhip64-dev first)"
        )
    calls = read_inputs(inputs)
    workspace = Path(tempfile.mkdtemp(prefix="migrate-hip-nvidia-")) if keep is None else keep
    workspace.mkdir(parents=True, exist_ok=True)
    try:
        files = sorted({f for e in extensions for f in [*e["sources"], *e["files"]]})
        problems = copy_sources(root, files, workspace / "original")
        mapping = _translate(root, files, workspace, translated, timeout)
        defects = []
        for relative, translated_relative in sorted(mapping.items()):
            for defect in glued_launches(
                relative, root / relative, workspace / "translated" / translated_relative
            ):
                defects.append(
                    {
                        "path": defect.path,
                        "line": defect.line,
                        "original": defect.original,
                        "translated": defect.translated,
                        "message": defect.message,
                    }
                )
        shim = _shim(workspace, min(timeout, 600.0))
        for call in calls:
            for extension in extensions:
                if call["extension"] != extension["name"] and extension["name"].endswith(
                    "." + str(call["extension"])
                ):
                    call["extension"] = extension["name"]
        job = {
            "extensions": plan(workspace, extensions, mapping, hip_include, shim),
            "calls": calls,
            "build_dir": str(workspace / "build"),
            "result": str(workspace / "result.json"),
        }
        (workspace / "job.json").write_text(json.dumps(job, indent=1))
        command = python_module("migrator.kernels.hip_nvidia.runner", str(workspace / "job.json"))
        try:
            done = run_helper(command, timeout=timeout, cwd=workspace, env=_environment())
        except HelperError as error:
            raise MigrateError(f"hip-on-nvidia: {error}") from None
        try:
            result: dict[str, Any] = json.loads((workspace / "result.json").read_text())
        except (OSError, ValueError):
            last = (done.err.strip().splitlines() or ["no output"])[-1]
            state = "did not finish in time" if done.timed_out else f"failed: {last}"
            result = {"error": f"the runner {state}", "builds": [], "calls": [], "uncalled": []}
        result["defects"] = defects
        result["problems"] = problems
        if keep is not None:
            result["workspace"] = str(workspace)
        return summarise(result)
    finally:
        if keep is None:
            shutil.rmtree(workspace, ignore_errors=True)


def _environment() -> dict[str, str]:
    from migrator.process.helper import helper_environment

    env = helper_environment()
    nvcc = find_nvcc()
    if nvcc and "CUDA_HOME" not in env:
        env["CUDA_HOME"] = str(Path(nvcc).parent.parent)
    return env


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    """Add the statement and the verdict: passed only when every build succeeded, every
    exported op was called and matched, and no hipify defect was met."""
    device = result.get("device") or "(none reached)"
    warp = result.get("warp_size") or "unknown"
    result["statement"] = STATEMENT.format(device=device, warp=warp)
    failed_builds = [b for b in result.get("builds", []) if not b.get("ok")]
    bad_calls = [c for c in result.get("calls", []) if c.get("status") != "match"]
    result["passed"] = bool(
        result.get("calls")
        and not result.get("error")
        and not failed_builds
        and not bad_calls
        and not result.get("uncalled")
        and not result.get("defects")
    )
    return result


def render(result: dict[str, Any]) -> list[str]:
    """The text lines of a hip-on-nvidia run (the caller escapes each line for the terminal:
    they quote the project's paths and the compiler's output)."""
    lines = ["", f"hip-on-nvidia: {result['statement']}"]
    if result.get("torch"):
        lines.append(f"  torch {result['torch']} (CUDA {result.get('torch_cuda')})")
    if result.get("error"):
        lines.append(f"  not run: {str(result['error'])}")
    for build in result.get("builds", []):
        state = f"built in {build.get('seconds', 0):g} s" if build.get("ok") else "did not build"
        lines.append(f"  {str(build['extension'])} ({build['side']}): {state}")
        if not build.get("ok"):
            tail = [line for line in str(build.get("error", "")).splitlines() if "error" in line]
            for line in (tail or str(build.get("error", "")).splitlines())[-4:]:
                lines.append(f"    {str(line)[:200]}")
    for call in result.get("calls", []):
        detail = ""
        if call.get("status") == "match":
            outputs = call.get("outputs", [])
            worst = max((o.get("max_abs", 0.0) for o in outputs), default=0.0)
            detail = f" ({len(outputs)} output(s), max |diff| {worst:.3g})"
        lines.append(f"  {str(call['extension'])}.{str(call['op'])}: {call['status']}{detail}")
        for line in call.get("differences", [])[:4]:
            lines.append(f"    {str(line)}")
        if call.get("error"):
            lines.append(f"    {str(str(call['error']))[:300]}")
    for op in result.get("uncalled", []):
        lines.append(
            f"  {str(op['extension'])}.{str(op['op'])}: not called (no inputs declared in --inputs)"
        )
    for defect in result.get("defects", []):
        lines.append(
            f"  hipify defect {str(defect['path'])}:{defect['line']}: {str(defect['message'])}"
        )
        lines.append(f"    original:   {str(defect['original'])[:160]}")
        lines.append(f"    translated: {str(defect['translated'])[:160]}")
    for problem in result.get("problems", []):
        lines.append(f"  not copied: {str(problem)}")
    if result.get("workspace"):
        lines.append(f"  workspace kept: {str(result['workspace'])}")
    verdict = "PASS" if result.get("passed") else "FAIL"
    lines.append(f"  hip-on-nvidia: {verdict}")
    return lines


_ = sys
