"""PyTorch's C++ headers for the HIP compile check, prepared once per torch installation and
kept in the tool's cache: a hipified copy of ATen's and c10's headers (the CPU wheel has no HIP
build of them) made by ``hipify_worker --torch-shim`` in a subprocess. The cache holds headers
and a JSON list of include folders (data, never code); its key is torch's folder and version and
the worker's own text, so a new torch or a new worker prepares them again."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
from pathlib import Path

from migrator.files.cache import cache_dir
from migrator.process.helper import HelperError, python_module
from migrator.process.helper import run as run_helper

_VERSION = re.compile(r"""^__version__\s*=\s*['"](?P<version>[^'"]+)['"]""", re.M)
_DONE = "include.json"


def _torch_identity() -> tuple[str, str] | None:
    """torch's package folder and version, read without importing it; None without torch."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = list(spec.submodule_search_locations)[0]
    try:
        text = Path(folder, "version.py").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    match = _VERSION.search(text)
    return folder, match.group("version") if match else "unknown"


def _key(folder: str, version: str) -> str:
    worker = Path(__file__).with_name("hipify_worker.py")
    digest = hashlib.sha256()
    digest.update(folder.encode("utf-8", "surrogateescape"))
    digest.update(version.encode())
    digest.update(worker.read_bytes() if worker.is_file() else b"")
    safe = re.sub(r"[^A-Za-z0-9.+_-]", "_", version)[:40]
    return f"{safe}-{digest.hexdigest()[:16]}"


def _cached(folder: Path) -> tuple[list[Path], str] | None:
    try:
        answer = json.loads((folder / _DONE).read_text(encoding="utf-8"))
        include = [Path(entry) for entry in answer["include"]]
        version = str(answer.get("torch", "?"))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not all(path.is_dir() for path in include):
        return None
    return include, version


def torch_include_dirs(timeout: float = 300.0) -> tuple[list[Path], str]:
    """Include folders for units that use PyTorch's C++ API (the hipified ATen/c10 copy,
    torch's include folders and Python's) and a line saying where they came from; empty, with
    the reason, where torch is not installed or its headers could not be prepared."""
    identity = _torch_identity()
    if identity is None:
        return [], "torch is not installed: units that include its headers are not checkable"
    folder, version = identity
    root = cache_dir() / "torch-hip"
    final = root / _key(folder, version)
    cached = _cached(final)
    if cached is not None:
        return cached[0], f"torch {cached[1]} headers, hipified (cached in {final})"
    staging = root / f"{final.name}.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True, exist_ok=True)
    try:
        command = python_module("migrator.kernels.hipify_worker", "--torch-shim", str(staging))
        try:
            done = run_helper(command, timeout=timeout)
        except HelperError as error:
            return [], f"torch's headers could not be prepared: {error}"
        if done.timed_out:
            return [], f"torch's headers could not be prepared within {timeout:g} s"
        try:
            answer = json.loads(done.out.strip().splitlines()[-1])
        except (json.JSONDecodeError, IndexError) as error:
            return [], f"torch's headers could not be prepared: {error}"
        if "error" in answer:
            return [], str(answer["error"])
        answer["include"] = [
            str(final) if entry == str(staging) else entry for entry in answer["include"]
        ]
        (staging / _DONE).write_text(json.dumps(answer), encoding="utf-8")
        try:
            os.rename(staging, final)
        except OSError:
            pass  # another run prepared them first: use theirs
        cached = _cached(final)
        if cached is None:
            return [], "torch's headers could not be prepared: the cache could not be written"
        return cached[0], f"torch {cached[1]} headers, hipified (prepared once, cached in {final})"
    finally:
        shutil.rmtree(staging, ignore_errors=True)


__all__ = ["torch_include_dirs"]
