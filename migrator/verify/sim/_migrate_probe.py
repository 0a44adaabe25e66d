"""Probe injected into every smoke run (native, rocm-sim, docker) by ``migrate verify``.

It records, from torch itself and never assumed: the torch build (``torch.__version__``,
``torch.version.cuda`` / ``torch.version.hip``), whether CUDA is available, the real device name,
peak GPU memory (``torch.cuda.max_memory_allocated`` at exit), whether any tensor lived on the GPU,
and which CUDA-only modules the code tried to import. Values are read before the ROCm emulation
patches torch, so they always describe the real stack underneath.

The result is one JSON file per Python process, ``$MIGRATE_PROBE_DIR/probe-<pid>.json``.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import sys
from types import ModuleType
from typing import Any

_migrate_hooks = importlib.import_module("_migrate_hooks")  # sibling file on PYTHONPATH

CUDA_ONLY_TOP_LEVEL = frozenset(
    {
        "pynvml",
        "nvidia_smi",
        "flash_attn",
        "flash_attn_2_cuda",
        "flash_attn_interface",
        "xformers",
        "apex",
        "cupy",
        "pycuda",
        "tensorrt",
        "torch_tensorrt",
        "cuda",
        "nvidia",
    }
)
"""Top-level names of packages whose usual (PyPI) builds need CUDA; see docs/emulation.md."""

_state: dict[str, Any] = {"attempts": {}, "torch": None, "written": False}
_real: dict[str, Any] = {}


def is_cuda_only(name: str) -> bool:
    """Whether ``name`` (dotted) belongs to a CUDA-only package."""
    return name.split(".", 1)[0] in CUDA_ONLY_TOP_LEVEL


def _observe(name: str, importer: str, kind: str) -> None:
    if (
        not is_cuda_only(name)
        or importer.startswith(("torch.", "triton."))
        or importer
        in (
            "torch",
            "triton",
        )
    ):
        return
    attempts: dict[str, dict[str, Any]] = _state["attempts"]
    entry = attempts.setdefault(name, {"module": name, "importer": importer, "kinds": []})
    if kind not in entry["kinds"]:
        entry["kinds"].append(kind)


def _on_torch(torch: ModuleType) -> None:
    _state["torch"] = {
        "torch": str(getattr(torch, "__version__", "?")),
        "cuda": getattr(torch.version, "cuda", None),
        "hip": getattr(torch.version, "hip", None),
    }
    cuda = torch.cuda
    for name in (
        "is_available",
        "is_initialized",
        "get_device_name",
        "device_count",
        "max_memory_allocated",
    ):
        _real[name] = getattr(cuda, name, None)
    atexit.register(_write)


def _gpu_report() -> dict[str, Any]:
    report: dict[str, Any] = {
        "cuda_available": False,
        "device_name": "cpu",
        "device_count": 0,
        "peak_memory_bytes": 0,
        "ran_on_gpu": False,
    }
    try:
        available = bool(_real["is_available"]())
        report["cuda_available"] = available
        if not available:
            return report
        count = int(_real["device_count"]())
        report["device_count"] = count
        report["device_name"] = str(_real["get_device_name"](0))
        if _real["is_initialized"]():
            peak = max(int(_real["max_memory_allocated"](index)) for index in range(count))
            report["peak_memory_bytes"] = peak
            report["ran_on_gpu"] = peak > 0
    except Exception as error:  # report, never raise at interpreter exit
        report["error"] = repr(error)
    return report


def _write() -> None:
    if _state["written"]:
        return
    _state["written"] = True
    directory = os.environ.get("MIGRATE_PROBE_DIR")
    if not directory:
        return
    attempts = []
    for name, entry in sorted(_state["attempts"].items()):
        module = sys.modules.get(name)
        imported = module is not None
        attempts.append({**entry, "imported": imported})
    payload: dict[str, Any] = {
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "argv": list(sys.argv),
        "torch_imported": _state["torch"] is not None,
        "torch_build": _state["torch"],
        "cuda_only_imports": attempts,
    }
    if _state["torch"] is not None:
        payload.update(_gpu_report())
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"probe-{os.getpid()}.json")
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(payload, handle)
    os.replace(temporary, path)


def install() -> None:
    """Start recording (only when ``MIGRATE_PROBE_DIR`` is set)."""
    if not os.environ.get("MIGRATE_PROBE_DIR"):
        return
    _migrate_hooks.install()
    _migrate_hooks.add_observer(_observe, CUDA_ONLY_TOP_LEVEL)
    _migrate_hooks.add_post_import_hook("torch", _on_torch)
    atexit.register(_write)
