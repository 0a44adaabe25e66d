"""``migrate kernels``: a project's CUDA extensions as a port sees them: sources and their
Python import sites, blockers by class (the kernel rules), what PyTorch's hipify leaves, and,
with ``--compile``, a HIP compile check for AMD targets. Registered lazily by ``migrator.cli``."""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from migrator.commands.options import check_output, emit
from migrator.errors import MigrateError
from migrator.kernels.project import FAILING_LABELS, KERNEL_RULES, extension_label
from migrator.output.escape import json_text, safe_text


def _is_port(code: str) -> bool:
    """Whether a kernel rule's finding needs a port (a rewrite), not a small edit."""
    from migrator.engine.registry import rule_by_code

    return rule_by_code(code).impact.port


@dataclass(slots=True)
class ExtensionSummary:
    name: str
    build: str
    line: int
    sources: list[str]
    files: list[str]
    rocm_branch: bool
    imports: list[dict[str, Any]]
    blockers: dict[str, int] = field(default_factory=dict)
    edits: dict[str, int] = field(default_factory=dict)
    sites: list[dict[str, Any]] = field(default_factory=list)
    residue: list[dict[str, Any]] = field(default_factory=list)
    compile: list[dict[str, Any]] = field(default_factory=list)

    built_on_rocm: bool = True
    kind: str = "setup"
    via: str = ""
    also: list[str] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def label(self) -> str:
        return extension_label(
            self.built_on_rocm,
            bool(self.blockers),
            bool(self.edits) or any(r["status"] == "fail" for r in self.compile),
            [note["kind"] for note in self.notes],
        )


def _all_files(root: Path) -> list[str]:
    from migrator.files.discovery import discover

    return [item.relative for item in discover(root) if hasattr(item, "relative")]


#: Notes on a build that make ``migrate kernels`` exit 1 even outside any extension.
_FAILING_NOTES = frozenset({"gate", "cuda-required", "link", "unread"})


@click.command("kernels")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--compile",
    "do_compile",
    is_flag=True,
    help="Compile the hipified sources with hipcc for AMD targets.",
)
@click.option(
    "--target",
    "targets",
    multiple=True,
    metavar="GFX",
    help="AMD target for --compile (repeatable; default gfx90a, gfx940, gfx1030).",
)
@click.option("--no-hipify", is_flag=True, help="Skip the hipify run (no torch needed).")
@click.option(
    "--format", "output_format", type=click.Choice(["text", "json", "sarif"]), default="text"
)
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write to FILE.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Parallel compiles.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=1, max=86400),
    default=120.0,
    show_default=True,
    help="Seconds per compile (and for hipify); a --run gets 15 times this.",
)
@click.option(
    "--run",
    "run_target",
    type=click.Choice(["hip-on-nvidia"]),
    help="Build the CUDA original and the hipified translation through HIP's NVIDIA platform "
    "with nvcc, run both on this NVIDIA GPU and compare outputs (runs the project's extension "
    "code, in a private copy).",
)
@click.option(
    "--inputs",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="TOML of [[call]] tables: extension, op, args (shapes and dtypes) for --run.",
)
@click.option(
    "--extension",
    "only_extensions",
    multiple=True,
    metavar="NAME",
    help="Run only this extension (repeatable; default: those --inputs names).",
)
@click.option(
    "--translated",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="For --run: a translation to test instead of hipify's (a kept workspace's `translated`).",
)
@click.option(
    "--keep-workspace",
    type=click.Path(file_okay=False, path_type=Path),
    help="For --run: build in this folder and keep it.",
)
def kernels_command(
    path: Path,
    do_compile: bool,
    targets: tuple[str, ...],
    no_hipify: bool,
    output_format: str,
    output: str | None,
    jobs: int | None,
    timeout: float,
    run_target: str | None,
    inputs: Path | None,
    only_extensions: tuple[str, ...],
    translated: Path | None,
    keep_workspace: Path | None,
) -> None:
    """CUDA extensions of the project at PATH: sources and Python imports, blockers by class,
    what hipify leaves, and with --compile a HIP compile check (needs hipcc).

    Exit status 0 when nothing blocks and every compiled unit passed, 1 when something does,
    a unit failed, timed out, was not checkable or was not compiled (it includes a file outside
    the project), 2 on a usage error or when --compile finds no HIP compiler.

    With --run hip-on-nvidia (explicit: it builds and runs the project's extension code, in a
    private copy) the exit status is also 1 when an op's outputs differ, an op is not called or
    a hipify defect is met, and 2 when nvcc or the patched HIP headers are missing."""
    from migrator.kernels.compile import DEFAULT_TARGETS, UNFINISHED, find_compiler

    check_output(output, [path])
    root = path.resolve()
    compiler = None
    if do_compile:
        compiler = find_compiler()
        if compiler is None:
            raise MigrateError(
                "no HIP compiler: `hipcc` is not on the PATH (Debian/Ubuntu: apt-get install hipcc "
                "libamdhip64-dev rocm-device-libs); nothing was compiled"
            )
    chosen_targets = tuple(targets) or DEFAULT_TARGETS
    started = time.monotonic()
    report = _analyse(root, do_compile, compiler, chosen_targets, no_hipify, jobs, timeout)
    if run_target is not None:
        report["hip_on_nvidia"] = _run_hip_on_nvidia(
            root, report, inputs, only_extensions, translated, keep_workspace, timeout * 15
        )
    report["seconds"] = round(time.monotonic() - started, 1)
    if output_format == "json":
        text = json_text(report, indent=2) + "\n"
    elif output_format == "sarif":
        from migrator.commands.kernels_sarif import render_sarif

        text = render_sarif(report)
    else:
        text = _render(report)
    emit(text, output, [path])
    failed = (
        any(ext["label"] in FAILING_LABELS for ext in report["extensions"])
        or bool(report["unassigned"]["sites"])
        or any(note["kind"] in _FAILING_NOTES for note in report["build_notes"])
        or bool((report.get("compiler") or {}).get("not_checked_units"))
        or any(r["status"] in UNFINISHED for r in _compile_results(report))
        or ("hip_on_nvidia" in report and not report["hip_on_nvidia"]["passed"])
    )
    sys.exit(1 if failed else 0)


def _compile_results(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every compile result of the report, inside an extension or outside any."""
    out = [r for ext in report["extensions"] for r in ext["compile"]]
    return out + list(report["unassigned"].get("compile", []))


def _run_hip_on_nvidia(
    root: Path,
    report: dict[str, Any],
    inputs: Path | None,
    only: tuple[str, ...],
    translated: Path | None,
    keep: Path | None,
    timeout: float,
) -> dict[str, Any]:
    """The extensions chosen (``--extension``, else those ``--inputs`` names, else all) through
    :func:`migrator.kernels.hip_nvidia.run.run_hip_on_nvidia`."""
    from migrator.kernels.hip_nvidia.run import (
        declared_extensions,
        read_inputs,
        run_hip_on_nvidia,
    )

    named = set(only) or {str(call["extension"]) for call in read_inputs(inputs)}
    found = {ext["name"] for ext in report["extensions"]}
    extensions = report["extensions"] + [
        ext for ext in declared_extensions(inputs, root) if ext["name"] not in found
    ]
    chosen = [
        ext
        for ext in extensions
        if not named or ext["name"] in named or ext["name"].rsplit(".", 1)[-1] in named
    ]
    if not chosen:
        raise MigrateError(f"--run: no extension named {', '.join(sorted(named)) or 'at all'}")
    return run_hip_on_nvidia(
        root, chosen, inputs=inputs, translated=translated, keep=keep, timeout=timeout
    )


def _progress(result: Any, done: int, total: int, elapsed: float) -> None:
    """One line per compiled unit, with an estimate of the time left."""
    detail = f" {safe_text(result.note)[:120]}" if result.note else ""
    left = elapsed / done * (total - done) if done else 0.0
    estimate = f", about {left:.0f} s left" if done < total else ""
    click.echo(
        f"[{done}/{total}] {safe_text(result.path)} {result.target}: {result.status} "
        f"({result.seconds:.1f} s{estimate}){detail}",
        err=True,
    )


def _analyse(
    root: Path,
    do_compile: bool,
    compiler: Any,
    targets: tuple[str, ...],
    no_hipify: bool,
    jobs: int | None,
    timeout: float,
) -> dict[str, Any]:
    from migrator.engine.runner import scan
    from migrator.kernels.builds import KERNEL_SUFFIXES, cuda_only_sources, read_builds
    from migrator.kernels.project import extension_views

    run = scan(root, select=sorted(KERNEL_RULES), use_cache=False)
    findings = [f for f in run.scan.findings if f.rule in KERNEL_RULES]
    paths = _all_files(root)
    views = extension_views(root, paths)
    excluded = cuda_only_sources(root, paths)
    build_notes = [
        {"path": n.path, "line": n.line, "kind": n.kind, "message": n.message}
        for n in read_builds(root, paths).notes
    ]
    summaries: list[ExtensionSummary] = []
    assigned: set[str] = set()
    for view in views:
        summary = ExtensionSummary(
            view.name,
            view.extension.build,
            view.extension.line,
            view.extension.sources,
            view.files,
            view.rocm_branch,
            [{"path": s.path, "line": s.line, "how": s.how} for s in view.imports],
            built_on_rocm=view.extension.context != "cuda",
            kind=view.extension.kind,
            via=view.extension.via,
            also=list(view.extension.also),
            notes=[
                {"path": n.path, "line": n.line, "kind": n.kind, "message": n.message}
                for n in view.notes
            ],
        )
        files = set(view.files)
        assigned |= files
        for finding in findings:
            if finding.path not in files:
                continue
            kind = KERNEL_RULES[finding.rule]
            bucket = summary.blockers if _is_port(finding.rule) else summary.edits
            bucket[kind] = bucket.get(kind, 0) + 1
            summary.sites.append(_site(finding))
        summaries.append(summary)
    loose = [f for f in findings if f.path not in assigned]
    unassigned = {
        "blockers": dict(Counter(KERNEL_RULES[f.rule] for f in loose if _is_port(f.rule))),
        "edits": dict(Counter(KERNEL_RULES[f.rule] for f in loose if not _is_port(f.rule))),
        "sites": [_site(f) for f in loose],
    }
    hipify_note = "not run (--no-hipify)"
    compile_note = "not run (use --compile)"
    compiler_info: dict[str, Any] | None = None
    if not no_hipify:
        from migrator.kernels.hipify import HEADER_SUFFIXES, run_hipify

        # every project header is copied (a unit may include one from any folder); only the
        # units no ROCm build compiles are left out of the compile check
        kernel_files = [p for p in paths if p.lower().endswith(KERNEL_SUFFIXES + HEADER_SUFFIXES)]
        workdir = Path(tempfile.mkdtemp(prefix="migrate-kernels-"))
        try:
            hipified = run_hipify(root, kernel_files, timeout=max(timeout, 60.0), keep=workdir)
            if hipified.error:
                hipify_note = f"not run: {hipified.error}"
            else:
                hipify_note = f"torch's hipify on a private copy of {len(hipified.hipified)} files"
                for summary in summaries:
                    files = set(summary.files)
                    summary.residue = [
                        {"path": r.path, "line": r.line, "construct": r.construct, "kind": r.kind}
                        for r in hipified.residue
                        if r.path in files
                    ]
                unassigned["residue"] = [
                    {"path": r.path, "line": r.line, "construct": r.construct, "kind": r.kind}
                    for r in hipified.residue
                    if r.path not in assigned and r.path not in excluded
                ]
                if do_compile:
                    compile_note, compiler_info = _compile(
                        root,
                        hipified,
                        compiler,
                        targets,
                        summaries,
                        jobs,
                        timeout,
                        excluded,
                        _unit_flags(views),
                        unassigned,
                    )
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    elif do_compile:
        compile_note = "not run: the compile check compiles hipify's output (drop --no-hipify)"
    return {
        "root": str(root),
        "extensions": [
            {
                "name": s.name,
                "build": f"{s.build}:{s.line}",
                "kind": s.kind,
                "via": s.via,
                "also": s.also,
                "label": s.label,
                "sources": s.sources,
                "files": s.files,
                "rocm_branch": s.rocm_branch,
                "imports": s.imports,
                "blockers": s.blockers,
                "edits": s.edits,
                "sites": s.sites,
                "hipify_residue": s.residue,
                "compile": s.compile,
                "build_notes": s.notes,
            }
            for s in summaries
        ],
        "build_notes": build_notes,
        "never_compiled_for_amd": excluded,
        "unassigned": unassigned,
        "hipify": hipify_note,
        "compile": compile_note,
        "compiler": compiler_info,
    }


def _site(finding: Any) -> dict[str, Any]:
    return {
        "path": finding.path,
        "line": finding.line,
        "rule": finding.rule,
        "class": KERNEL_RULES[finding.rule],
        "severity": finding.severity.name.lower(),
        "message": finding.message,
    }


def _compile(
    root: Path,
    hipified: Any,
    compiler: Any,
    targets: tuple[str, ...],
    summaries: list[ExtensionSummary],
    jobs: int | None,
    timeout: float,
    excluded: Any,
    flags: dict[str, Any],
    unassigned: dict[str, Any],
) -> tuple[str, dict[str, Any]]:
    from migrator.kernels.compile import compile_units, translation_units
    from migrator.kernels.compile_env import device_library_folders, has_device_library
    from migrator.kernels.torch_headers import torch_include_dirs

    units = translation_units(hipified, excluded)
    # a unit may reach torch's headers through a project header: every copied file counts
    needs_torch = any(_uses_torch(root / relative) for relative in hipified.hipified)
    includes: list[Path] = []
    headers = "no PyTorch headers needed"
    torch_gap = ""
    if needs_torch:
        includes, headers = torch_include_dirs(timeout=max(timeout, 300.0))
        torch_gap = "" if includes else headers
    started = time.monotonic()
    click.echo(
        safe_text(
            f"compiling {len(units)} translation unit(s) for {', '.join(targets)} with "
            f"{compiler.path} (HIP {compiler.hip_version}, clang {compiler.clang_version})"
        ),
        err=True,
    )
    hollow = _hollow_units(root, units, list(hipified.hipified))
    prelude_notes: list[str] = []

    def progress(result: Any, done: int, total: int) -> None:
        _keep_bodies(result, hollow)
        _progress(result, done, total, time.monotonic() - started)

    results = compile_units(
        compiler,
        hipified,
        root,
        units,
        targets,
        jobs=jobs or 0,
        timeout=timeout,
        progress=progress,
        extra_includes=includes,
        flags=flags,
        torch_gap=torch_gap,
        prelude_notes=prelude_notes,
    )
    total = time.monotonic() - started
    click.echo(f"compile check finished in {total:.1f} s", err=True)
    placed: set[str] = set()
    for summary in summaries:
        files = set(summary.sources) | set(summary.files)
        summary.compile = [_result(r) for r in results if r.path in files]
        placed |= {r.path for r in results if r.path in files}
    unassigned["compile"] = [_result(r) for r in results if r.path not in placed]
    libraries = device_library_folders()
    unlinked = [t for t in targets if not has_device_library(t, libraries)]
    info = {
        "path": compiler.path,
        "hip_version": compiler.hip_version,
        "clang_version": compiler.clang_version,
        "targets": list(targets),
        "torch_headers": headers
        + (
            "; precompiled once per target for the units that include them (a unit that fails on them is compiled again whole)"
            if includes and not prelude_notes
            else "".join(f"; {note}" for note in prelude_notes)
        ),
        "checked": "device code of each hipified .cu translation unit, full code generation for each target (inline assembly is assembled), and that its kernels kept their bodies (none compiles to nothing on AMD, by our reading of the preprocessor branches)",
        "not_checked": "host-only C++ files, linking with the host, run-time behaviour (a wave64 reduction that compiles but computes wrong results), and what this ROCm lacks (newer builtins and libraries: reported as not checkable, naming the ROCm that has them)"
        + (
            f"; device-library linking for {', '.join(unlinked)} (its device library is not installed here: compiled with -nogpulib)"
            if unlinked
            else ""
        ),
        "device_libraries": libraries,
        "include_folders": "the build's include folders and macros for each unit (setup.py, CMake), every project folder a project include resolves from, the unit's own folders",
        "seconds": round(total, 1),
        "not_checked_units": _not_checked(results),
    }
    return f"{len(results)} compile(s) in {total:.1f} s", info


def _result(result: Any) -> dict[str, Any]:
    """One compile result as the report holds it (every diagnostic)."""
    return {
        "path": result.path,
        "target": result.target,
        "status": result.status,
        "seconds": round(result.seconds, 2),
        "note": result.note,
        "diagnostics": [
            {"path": d.path, "line": d.line, "message": d.message, "checkable": d.checkable}
            for d in result.diagnostics
        ],
    }


def _unit_flags(views: list[Any]) -> dict[str, Any]:
    """unit -> the include folders and macros its build compiles it with (the first extension
    that compiles it)."""
    from migrator.kernels.compile import UnitFlags

    out: dict[str, Any] = {}
    for view in views:
        extension = view.extension
        flags = UnitFlags(
            tuple(extension.include_dirs),
            tuple(extension.defines),
            tuple(extension.computed_defines),
        )
        for unit in [*extension.sources, *view.files]:
            out.setdefault(unit, flags)
    return out


def _hollow_units(root: Path, units: list[str], files: list[str]) -> dict[str, list[Any]]:
    """unit -> its functions (and those of the project headers it includes) that compile to
    nothing on AMD (``migrator.kernels.kept_bodies``)."""
    from migrator.kernels.kept_bodies import empty_functions

    return empty_functions(root, units, files)


def _keep_bodies(result: Any, hollow: dict[str, list[Any]]) -> None:
    """A unit passes only if its kernels kept their bodies: a pass whose unit holds a function
    that compiles to nothing on AMD becomes a failure naming each such function."""
    from migrator.kernels.compile import Diagnostic

    empty = hollow.get(result.path)
    if result.status != "pass" or not empty:
        return
    result.status = "fail"
    result.diagnostics = [Diagnostic(item.path, item.line, item.message) for item in empty]


def _not_checked(results: list[Any]) -> list[dict[str, str]]:
    """Each unit the compile check did not compile, once, with its reason."""
    from migrator.kernels.compile import NOT_CHECKED

    reasons = {r.path: r.note for r in results if r.status == NOT_CHECKED}
    return [{"path": path, "reason": reason} for path, reason in sorted(reasons.items())]


def _uses_torch(path: Path) -> bool:
    from migrator.files.sources import read_project_bytes

    head = (read_project_bytes(path) or b"")[:200_000]
    return b"<torch/" in head or b"<ATen/" in head or b"<c10/" in head or b'"torch/' in head


#: Diagnostics shown per unit and target in text (JSON and SARIF hold every one).
_SHOWN_DIAGNOSTICS = 12


def _compile_lines(results: list[dict[str, Any]]) -> list[str]:
    """Text lines of compile results: each unit and target, why it did not pass, its errors."""
    lines: list[str] = []
    for result in results:
        reason = (
            f" ({safe_text(result['note'])})"
            if result["note"] and (result["status"] != "fail" or not result["diagnostics"])
            else ""
        )
        lines.append(
            f"  compile {result['target']}: {safe_text(result['path'])} {result['status']}{reason}"
        )
        for diagnostic in result["diagnostics"][:_SHOWN_DIAGNOSTICS]:
            tag = "" if diagnostic["checkable"] else " (not checkable with this compiler)"
            lines.append(
                f"      {safe_text(diagnostic['path'])}:{diagnostic['line']}: {safe_text(diagnostic['message'])}{tag}"
            )
        extra = len(result["diagnostics"]) - _SHOWN_DIAGNOSTICS
        if extra > 0:
            lines.append(f"      ... {extra} more (--format json or sarif lists every one)")
    return lines


def _render(report: dict[str, Any]) -> str:
    lines = [
        f"migrate kernels: {len(report['extensions'])} extension(s) in {safe_text(report['root'])}"
    ]
    for ext in report["extensions"]:
        lines.append("")
        rocm = "has a ROCm branch" if ext["rocm_branch"] else "no ROCm branch"
        lines.append(
            f"{safe_text(ext['name'])} ({safe_text(ext['build'])}, {rocm}): {ext['label']}"
        )
        lines.append(
            f"  sources: {', '.join(safe_text(s) for s in ext['sources'][:8])}{' ...' if len(ext['sources']) > 8 else ''}"
        )
        if ext["via"]:
            lines.append(f"  built through: {safe_text(ext['via'])}")
        if ext["also"]:
            lines.append(f"  also declared at: {', '.join(safe_text(a) for a in ext['also'][:4])}")
        for note in ext["build_notes"][:6]:
            lines.append(
                f"  build: {safe_text(note['path'])}:{note['line']} {safe_text(note['message'])}"
            )
        if ext["imports"]:
            shown = [f"{safe_text(i['path'])}:{i['line']} ({i['how']})" for i in ext["imports"][:6]]
            lines.append(f"  imported by: {', '.join(shown)}")
        else:
            lines.append(
                "  imported by: no Python import of this name (loaded by file name, or unused)"
            )
        if ext["blockers"]:
            lines.append(
                "  blockers: " + ", ".join(f"{k} {v}" for k, v in sorted(ext["blockers"].items()))
            )
        if ext["edits"]:
            lines.append(
                "  small edits: " + ", ".join(f"{k} {v}" for k, v in sorted(ext["edits"].items()))
            )
        for site in ext["sites"][:12]:
            lines.append(
                f"    {safe_text(site['path'])}:{site['line']} {site['rule']} {safe_text(site['message'])}"
            )
        if len(ext["sites"]) > 12:
            lines.append(f"    ... {len(ext['sites']) - 12} more (--format json lists every site)")
        if ext["hipify_residue"]:
            counts = Counter(r["construct"] for r in ext["hipify_residue"])
            lines.append(
                "  hipify left: "
                + ", ".join(f"{safe_text(k)} x{v}" for k, v in counts.most_common(8))
            )
        lines.extend(_compile_lines(ext["compile"]))
    excluded = report["never_compiled_for_amd"]
    if excluded:
        lines.append("")
        lines.append(
            f"{len(excluded)} kernel file(s) no ROCm build compiles (not reported): "
            + ", ".join(safe_text(p) for p in list(excluded)[:5])
            + (" ..." if len(excluded) > 5 else "")
        )
    listed = {
        (note["path"], note["line"], note["message"])
        for ext in report["extensions"]
        for note in ext["build_notes"]
    }
    rest = [n for n in report["build_notes"] if (n["path"], n["line"], n["message"]) not in listed]
    if rest:
        lines.append("")
        lines.append("build files:")
        for note in rest[:12]:
            lines.append(
                f"    {safe_text(note['path'])}:{note['line']} {safe_text(note['message'])}"
            )
    loose = report["unassigned"]
    if loose["sites"]:
        lines.append("")
        lines.append(
            f"kernel sources in no extension the build files declare: {len(loose['sites'])} site(s)"
        )
        for site in loose["sites"][:10]:
            lines.append(
                f"    {safe_text(site['path'])}:{site['line']} {site['rule']} {safe_text(site['message'])}"
            )
    if loose.get("compile"):
        lines.append("")
        lines.append("translation units in no extension the build files declare, compiled:")
        lines.extend(_compile_lines(loose["compile"]))
    lines.append("")
    lines.append(f"hipify: {report['hipify']}")
    lines.append(f"compile check: {report['compile']}")
    info = report.get("compiler")
    if info:
        lines.append(
            f"  compiler: {safe_text(info['path'])} (HIP {info['hip_version']}, clang {info['clang_version']}), targets {', '.join(info['targets'])}; {safe_text(info['torch_headers'])}"
        )
        lines.append(f"  checked: {info['checked']}")
        lines.append(f"  not checked: {info['not_checked']}")
        for unit in info.get("not_checked_units", []):
            lines.append(f"  {safe_text(unit['path'])}: {safe_text(unit['reason'])}")
    if "hip_on_nvidia" in report:
        from migrator.kernels.hip_nvidia.run import render

        lines.extend(render(report["hip_on_nvidia"]))
    lines.append("No AMD GPU ran anything: these results come from reading, hipify and a compiler.")
    # each line once more: the hipify and compiler notes quote paths and tools' output too
    return "\n".join(safe_text(line) for line in lines) + "\n"
