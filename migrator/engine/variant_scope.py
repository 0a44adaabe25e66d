"""Whether a project has anything a ROCm image could run: when every entry point (a script
with a ``__main__`` block, a console-script module) is written on a CUDA-only runtime
(TensorRT, PyCUDA, the CuTe DSL: ``migrator.reach.cuda_only``), a ROCm Dockerfile would hold a
project none of whose commands start on AMD, so ``fix`` writes no variant and says why."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from migrator.engine.variants import Variant
from migrator.files.paths import is_benchmark_path, is_test_path
from migrator.reach.cuda_only import Cause, toolkits
from migrator.syntax.reexports import ProjectIndex

_MAIN = re.compile(r"^if\s+__name__\s*==\s*[\"']__main__[\"']\s*:", re.MULTILINE)


def _module_files(module: str, sources: Mapping[str, str]) -> list[str]:
    """The project files a dotted module name may be (flat or ``src/`` layout)."""
    stem = module.replace(".", "/")
    names = (f"{stem}.py", f"{stem}/__init__.py", f"{stem}/__main__.py")
    return [
        path for path in sources if any(path == name or path.endswith(f"/{name}") for name in names)
    ]


def console_targets(root: Path) -> list[str]:
    """Modules ``[project.scripts]`` / ``[project.gui-scripts]`` of pyproject.toml name."""
    from migrator.files.sources import read_project_text
    from migrator.files.tomlcompat import parse_toml, tomllib

    try:
        data = parse_toml(read_project_text(root / "pyproject.toml") or "")
    except tomllib.TOMLDecodeError:
        return []
    project = data.get("project")
    targets: list[str] = []
    for key in ("scripts", "gui-scripts"):
        table = project.get(key) if isinstance(project, dict) else None
        if isinstance(table, dict):
            targets.extend(
                str(v).split(":")[0].strip() for v in table.values() if isinstance(v, str)
            )
    return targets


def entry_points(root: Path, index: ProjectIndex) -> list[str]:
    """The project's Python entry points: scripts with a ``__main__`` block and the modules
    console scripts name; tests and benchmarks are not where users start it."""
    found = {
        path
        for path, text in index.sources.items()
        if (_MAIN.search(text) or path.endswith("/__main__.py"))
        and not is_test_path(path)
        and not is_benchmark_path(path)
    }
    for module in console_targets(root) if root.is_dir() else []:
        found.update(_module_files(module, index.sources))
    return sorted(found)


def runs_nothing_on_rocm(
    root: Path, index: ProjectIndex, cuda_only: Mapping[str, Cause]
) -> str | None:
    """Why no ROCm variant is worth writing: every entry point needs a CUDA-only runtime
    (with the entry points and the runtimes named), or None."""
    if not cuda_only:
        return None
    entries = entry_points(root, index)
    if not entries or any(entry not in cuda_only for entry in entries):
        return None
    labels = toolkits()
    runtimes = sorted(
        {labels.get(cuda_only[entry].toolkit, (cuda_only[entry].toolkit,))[0] for entry in entries}
    )
    shown = ", ".join(entries[:3]) + (f" and {len(entries) - 3} more" if len(entries) > 3 else "")
    return (
        f"every entry point of the project ({shown}) needs {', '.join(runtimes)}, which has no "
        "ROCm build: a ROCm image would run none of them"
    )


def withhold_all(variants: Sequence[Variant], reason: str | None) -> None:
    """Give every planned variant ``reason`` instead of its text."""
    if not reason:
        return
    for variant in variants:
        if variant.text is not None:
            variant.text, variant.reason = None, reason
