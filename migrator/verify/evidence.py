"""Read back what the injected probe and emulation wrote during one run."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from migrator.files.sources import read_project_text

_EXCEPTION_LINE = re.compile(
    r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b.*)$", re.MULTILINE
)
_MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")


def torch_build_kind(build: dict[str, Any] | None) -> str | None:
    """``"rocm"`` when ``hip`` is set, ``"cuda"`` when ``cuda`` is, ``"cpu"`` otherwise."""
    if not build:
        return None
    if build.get("hip"):
        return "rocm"
    if build.get("cuda"):
        return "cuda"
    return "cpu"


def read_probe(directory: Path) -> dict[str, Any]:
    """Merge the per-process probe files of one run (a smoke test may start several Pythons)."""
    records: list[dict[str, Any]] = []
    if directory.is_dir():
        for path in sorted(directory.glob("probe-*.json")):
            text = read_project_text(path, strict=True)
            if text is None:
                continue
            try:
                loaded = json.loads(text)
            except json.JSONDecodeError:
                continue
            if isinstance(loaded, dict):
                records.append(loaded)
    merged: dict[str, Any] = {
        "processes": len(records),
        "torch_imported": False,
        "torch_build": None,
        "cuda_available": None,
        "device_name": None,
        "ran_on_gpu": False,
        "peak_gpu_memory_bytes": 0,
        "cuda_only_imports": [],
    }
    with_torch = [record for record in records if record.get("torch_imported")]
    if with_torch:
        primary = next((r for r in with_torch if r.get("ran_on_gpu")), with_torch[0])
        build = dict(primary.get("torch_build") or {})
        build["kind"] = torch_build_kind(build)
        merged.update(
            torch_imported=True,
            torch_build=build,
            cuda_available=bool(primary.get("cuda_available")),
            device_name=primary.get("device_name"),
            ran_on_gpu=any(bool(r.get("ran_on_gpu")) for r in with_torch),
            peak_gpu_memory_bytes=max(int(r.get("peak_memory_bytes") or 0) for r in with_torch),
        )
        errors = [r["error"] for r in with_torch if r.get("error")]
        if errors:
            merged["probe_errors"] = errors
    imports: dict[str, dict[str, Any]] = {}
    for record in records:
        for entry in record.get("cuda_only_imports") or []:
            module = str(entry.get("module"))
            known = imports.setdefault(
                module,
                {
                    "module": module,
                    "importer": entry.get("importer"),
                    "kinds": [],
                    "imported": False,
                },
            )
            known["imported"] = known["imported"] or bool(entry.get("imported"))
            for kind in entry.get("kinds") or []:
                if kind not in known["kinds"]:
                    known["kinds"].append(kind)
    merged["cuda_only_imports"] = [imports[name] for name in sorted(imports)]
    return merged


def _relative(location: str, tree: Path) -> str:
    """Caller locations relative to the project copy, or to site-packages for libraries."""
    prefix = str(tree) + "/"
    if location.startswith(prefix):
        return location[len(prefix) :]
    marker = "site-packages/"
    if marker in location:
        return location.split(marker, 1)[1]
    return location


def read_emulation_log(path: Path | None, tree: Path) -> dict[str, Any] | None:
    """Summarise the emulation's JSON lines: queries answered, imports and tools refused."""
    if path is None:
        return None
    events: list[dict[str, Any]] = []
    if path.is_file():
        for line in (read_project_text(path, limit=64 * 1024 * 1024) or "").splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict):
                events.append(event)
    queries: Counter[tuple[str, str, str]] = Counter()
    repeats: Counter[tuple[str, str]] = Counter()
    answers: dict[tuple[str, str, str], Any] = {}
    blocked: dict[tuple[str, str], dict[str, Any]] = {}
    executables: dict[str, dict[str, Any]] = {}
    sdpa: list[dict[str, Any]] = []
    for event in events:
        kind = event.get("event")
        caller = _relative(str(event.get("caller", "?")), tree)
        if kind == "device_query":
            key = (str(event.get("api")), json.dumps(event.get("answer")), caller)
            queries[key] += 1
            answers[key] = event.get("answer")
        elif kind == "device_query_repeats":  # counted in the process, written at its exit
            repeats[(str(event.get("api")), caller)] += int(event.get("count") or 0)
        elif kind == "blocked_import":
            module = str(event.get("module"))
            entry = blocked.setdefault(
                (module, caller),
                {
                    "module": module,
                    "importer": event.get("importer"),
                    "caller": caller,
                    "kind": event.get("kind", "import"),
                    "internal": bool(event.get("internal")),
                    # only the project's own files count as its imports and checks
                    "from_project": bool(event.get("from_project", not event.get("internal"))),
                    "reason": event.get("reason"),
                    "count": 0,
                },
            )
            entry["count"] += 1
        elif kind == "blocked_executable":
            name = str(event.get("executable"))
            executables.setdefault(name, {"executable": name, "callers": []})
            if caller not in executables[name]["callers"]:
                executables[name]["callers"].append(caller)
        elif kind == "sdpa_no_kernel":
            sdpa.append({"caller": caller, "cudnn_enabled": event.get("cudnn_enabled")})
    return {
        "started": any(event.get("event") == "start" for event in events),
        "torch_patched": any(event.get("event") == "torch_patched" for event in events),
        "device_queries": [
            {
                "api": api,
                "answer": answers[(api, answer, caller)],
                "caller": caller,
                "count": count + repeats.pop((api, caller), 0),
            }
            for (api, answer, caller), count in sorted(queries.items())
        ],
        "blocked_imports": list(blocked.values()),
        "blocked_executables": list(executables.values()),
        "sdpa_no_kernel": sdpa,
    }


def failure_reason(stderr: str) -> str | None:
    """The last exception line of a Python traceback in ``stderr``, if any."""
    matches = _EXCEPTION_LINE.findall(stderr)
    return matches[-1].strip() if matches else None


_PYTEST_ERROR = re.compile(r"^(?:ERROR|FAILED|INTERNALERROR)\b.*$|^E\s+\w+Error\b.*$", re.MULTILINE)


def pytest_error(stdout: str) -> str | None:
    """pytest's own last error line (collection errors, usage errors) from its stdout."""
    matches = _PYTEST_ERROR.findall(stdout)
    return matches[-1].strip() if matches else None


def missing_modules(stderr: str) -> list[str]:
    """Module names from ``No module named 'x'`` messages, in order of appearance."""
    return list(dict.fromkeys(_MISSING_MODULE.findall(stderr)))


def baseline_hint(missing: list[str], root: Path, python: str, setup: str | None) -> str | None:
    """What to do when the original tree cannot run: name the module, the two ways forward."""
    if not missing:
        return None
    names = ", ".join(missing)
    requirements = root / "requirements.txt"
    install = (
        "python -m pip install -r requirements.txt"
        if requirements.is_file()
        else "python -m pip install <the project's dependencies>"
    )
    if setup:
        return (
            f"the original tree needs {names}, which {python} still lacks after --setup "
            f"{setup!r}; point verify at the project's environment with --python "
            "/path/to/its/bin/python"
        )
    return (
        f"the original tree needs {names}, which {python} lacks: point verify at the project's "
        f"environment with --python /path/to/its/bin/python, or install them in each copy with "
        f'--setup "{install}" (run once per copy, logged, with its own --setup-timeout)'
    )
