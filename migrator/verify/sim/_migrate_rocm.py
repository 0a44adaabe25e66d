"""Software-stack emulation of a stock ROCm PyTorch install on an AMD Instinct MI300X (gfx942).

Loaded by ``sitecustomize`` only when ``MIGRATE_SIM_PROFILE=rocm-mi300x``; runs inside the smoke
subprocess, over whatever device is really there. It never makes ``torch.cuda.is_available()``
true: on a CPU-only machine the code under test still runs on the CPU, and device queries are
answered only when the code asks. Every behaviour below cites ``docs/rocm-facts.md``; the
full table is ``docs/emulation.md``. Each answered query and each refusal is appended as one JSON
line to ``$MIGRATE_SIM_LOG``, which ``migrate verify`` reads back into the receipt.
"""

from __future__ import annotations

import atexit
import errno
import importlib
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

_migrate_hooks = importlib.import_module("_migrate_hooks")  # sibling file on PYTHONPATH

PROFILE = "rocm-mi300x"
DEVICE_NAME = "AMD Instinct MI300X"  # [D1] fact §0
CAPABILITY = (9, 4)  # [D1][D2] fact §0, §1
GCN_ARCH_NAME = "gfx942:sramecc+:xnack-"  # [D1] fact §0
WARP_SIZE = 64  # [D2] fact §0 (wave size 64 on CDNA)
MULTI_PROCESSOR_COUNT = 304  # [D1] fact §0
DEFAULT_HIP_VERSION = "6.3.42131"  # a string on ROCm builds [P1][P2]; value: see docs/emulation.md
MIOPEN_VERSION = 3003000  # cudnn.version() returns the MIOpen version [P3] fact §2

BLOCKED_TOP_LEVEL = {
    "pynvml": "pynvml / nvidia-ml-py: NVML only; ROCm uses amdsmi [A1] (facts §3a, §9)",
    "nvidia_smi": "nvidia-ml-py3 helper module: NVML only [A1] (facts §3a)",
    "flash_attn": "PyPI flash-attn wheels target CUDA; ROCm needs a ROCm/flash-attention build "
    "[F1] (facts §4a, §9)",
    "flash_attn_2_cuda": "CUDA extension of flash-attn [F1] (facts §4a)",
    "flash_attn_interface": "FlashAttention-3 targets H100/H800 and CUDA >= 12.3 [F2] (facts §4c)",
    "xformers": "CUDA wheels; ROCm wheels are a separate, experimental index [X3] (facts §4d, §9)",
    "apex": "NVIDIA/apex is a CUDA build; ROCm/apex is a separate build [AP2] (facts §5)",
    "cupy": "cupy-cuda12x is a CUDA build; ROCm uses cupy-rocm-* [K3] (facts §9)",
    "pycuda": "no ROCm build; hip-python instead [K3] (facts §9)",
    "cuda": "cuda-python: no ROCm build; hip-python instead [K3] (facts §9)",
    "tensorrt": "no ROCm equivalent [R1][K3] (facts §9)",
    "torch_tensorrt": "no ROCm equivalent [R1][K3] (facts §9)",
    "nvidia": "nvidia-* runtime wheels (and nvidia.dali) are dropped on ROCm [K2][R1] (facts §9)",
}
"""Top-level modules that a stock ROCm environment does not have, with the fact behind each."""

_INTERNAL = ("torch", "triton")
"""Importers whose own imports are let through: the real torch underneath may need its libraries."""

_log_lock = threading.Lock()
_allowed: set[str] = set()
_originals: dict[str, Any] = {}


def hip_version() -> str:
    """The ``torch.version.hip`` string reported (``MIGRATE_SIM_HIP_VERSION`` overrides)."""
    return os.environ.get("MIGRATE_SIM_HIP_VERSION") or DEFAULT_HIP_VERSION


def log(event: str, **fields: Any) -> None:
    """Append one JSON line to ``$MIGRATE_SIM_LOG`` (no-op without it)."""
    path = os.environ.get("MIGRATE_SIM_LOG")
    if not path:
        return
    record = {"event": event, "pid": os.getpid(), **fields}
    line = json.dumps(record, default=repr) + "\n"
    with _log_lock, open(path, "a", encoding="utf-8") as handle:
        handle.write(line)


_TRACERS = ("torch._dynamo", "torch.fx", "torch._functorch")
"""torch modules that run the user's code symbolically (torch.compile): they ask for the user."""
_COMPILER_SIDE = (
    "torch._dynamo.device_interface",
    "torch._dynamo.package",
    "torch._dynamo.debug_utils",
)
"""Dynamo modules that ask for the compiler (Inductor's device properties, cache keys)."""
_SITE_PACKAGE = re.compile(r"[/\\](?:site|dist)-packages[/\\](torch|triton)[/\\]")


def _is_internal(importer: str) -> bool:
    if importer.startswith(_TRACERS) and not importer.startswith(_COMPILER_SIDE):
        return False
    return any(importer == name or importer.startswith(name + ".") for name in _INTERNAL)


def _blocker(name: str, importer: str) -> bool:
    top = name.split(".", 1)[0]
    if top not in BLOCKED_TOP_LEVEL or top in _allowed or name in _allowed:
        return False
    if top in ("nvidia", "cuda") and _is_internal(importer):
        return False
    module, where = _migrate_hooks.caller_location()
    log(
        "blocked_import",
        module=name,
        importer=importer,
        caller=where,
        kind="find_spec" if _migrate_hooks.is_probing() else "import",
        internal=_is_internal(importer),
        from_project=_from_project(module, where),
        reason=BLOCKED_TOP_LEVEL[top],
    )
    return True


_SITE_DIRS = ("site-packages", "dist-packages")


def _from_project(module: str, where: str) -> bool:
    """Whether the frame that asked (``file:line``) is one of the project's own files: under the
    copy that runs (``$MIGRATE_SIM_PROJECT``) and not in an installed package there, or the smoke
    command's own ``python -c`` code. torch's compiler probing for optional packages (Dynamo's
    skip list asks for ``tensorrt``) is not the project's check, whatever module it runs in."""
    root = os.environ.get("MIGRATE_SIM_PROJECT")
    filename = where.rpartition(":")[0] or where
    if filename.startswith("<"):
        return module == "__main__" and filename in ("<string>", "<stdin>")
    if not root:
        return True  # no project named: count it, as before
    try:
        path = os.path.realpath(filename)
        base = os.path.realpath(root)
        if os.path.commonpath([path, base]) != base:
            return False
        inside = os.path.relpath(path, base)
    except (OSError, ValueError):
        return False
    return not any(part in _SITE_DIRS for part in inside.split(os.sep))


_query_counts: dict[tuple[str, str, str], int] = {}
"""Repeats of an answered query per (api, answer, caller), written once at exit: a query made on
every training step must not cost a file write on every step."""


def _query(api: str, answer: Any) -> None:
    module, where = _migrate_hooks.caller_location(_INTERNAL)
    key = (api, repr(answer), where)
    if key in _query_counts:
        _query_counts[key] += 1
        return
    _query_counts[key] = 0
    log("device_query", api=api, answer=answer, caller=where, caller_module=module)


def _flush_query_counts() -> None:
    """At exit: one line per repeated query with how many more times it was asked."""
    for (api, _, where), more in _query_counts.items():
        if more:
            log("device_query_repeats", api=api, caller=where, count=more)


def module_name(namespace: dict[str, Any]) -> str:
    """A frame's module name; for ``python -m pkg.mod`` the spec's name, not ``__main__``.

    Inductor's compile workers run ``torch/_inductor/compile_worker/__main__.py``: they are
    torch internals and must see the real device.
    """
    name = str(namespace.get("__name__", ""))
    if name == "__main__":
        spec = namespace.get("__spec__")
        if spec is not None and getattr(spec, "name", None):
            return str(spec.name)
        # Inductor starts its workers as ``python .../compile_worker/__main__.py`` (no spec).
        found = _SITE_PACKAGE.search(str(namespace.get("__file__") or ""))
        if found:
            return f"{found.group(1)}.__main__"
    return name


_internal_by_name: dict[str, bool] = {}
"""``_is_internal`` per module name, filled as modules ask: under ``torch.compile`` Inductor's
kernel launchers read ``torch.version`` about 200 times per training step (measured on an H200),
so the answer for a module must cost a dictionary lookup, not a string scan each time."""


def namespace_is_internal(namespace: dict[str, Any]) -> bool:
    """Whether code running in ``namespace`` (a frame's globals) is torch/triton internals."""
    name = namespace.get("__name__")
    if name == "__main__" or not isinstance(name, str):
        return _is_internal(module_name(namespace))  # rare: a script or a compile worker
    known = _internal_by_name.get(name)
    if known is None:
        known = _internal_by_name[name] = _is_internal(name)
    return known


def _asked_by_internal() -> bool:
    """Whether torch/triton internals (not the code under test) made the current call."""
    return namespace_is_internal(sys._getframe(2).f_globals)


def _real_gpu() -> bool:
    try:
        return bool(_originals["is_available"]())
    except Exception:
        return False


class EmulatedDeviceProperties:
    """What ``torch.cuda.get_device_properties`` returns under the emulation.

    The MI300X fields come from the facts [D1][D2]; any other attribute is forwarded to the real
    device's properties when a real GPU exists, and is missing (AttributeError) on CPU.
    """

    def __init__(self, real: Any) -> None:
        self._real = real
        self.name = DEVICE_NAME
        self.gcnArchName = GCN_ARCH_NAME
        self.major, self.minor = CAPABILITY
        self.multi_processor_count = MULTI_PROCESSOR_COUNT
        self.warp_size = WARP_SIZE
        self.is_emulated = True

    def __getattr__(self, attribute: str) -> Any:
        real = self.__dict__.get("_real")
        if real is None:
            raise AttributeError(
                f"emulated {DEVICE_NAME} properties have no {attribute!r} on a machine without "
                "a GPU (only facts-backed fields are emulated; see docs/emulation.md)"
            )
        return getattr(real, attribute)

    def __repr__(self) -> str:
        return (
            f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
            f"gcnArchName='{self.gcnArchName}', multi_processor_count="
            f"{self.multi_processor_count}, warp_size={self.warp_size}) [emulated]"
        )


def _wrap(
    name: str, fake: Callable[..., Any], real: Callable[..., Any] | None
) -> Callable[..., Any]:
    """A replacement that answers the code under test and lets torch internals see the truth."""

    def replacement(*args: Any, **kwargs: Any) -> Any:
        if real is not None and _asked_by_internal():
            return real(*args, **kwargs)
        answer = fake(*args, **kwargs)
        _query(
            f"torch.cuda.{name}",
            answer if not isinstance(answer, EmulatedDeviceProperties) else repr(answer),
        )
        return answer

    replacement.__name__ = name
    replacement.__doc__ = f"Emulated ROCm/MI300X ``torch.cuda.{name}`` (migrate verify)."
    replacement.__wrapped__ = real  # type: ignore[attr-defined]
    # What ``torch._dynamo.assume_constant_result`` sets: under torch.compile the answer is
    # computed once while tracing and used as a constant, as torch does for the real function,
    # instead of tracing into this wrapper (whose frame inspection would break the graph).
    replacement._dynamo_marked_constant = True  # type: ignore[attr-defined]
    return replacement


def _check_device(real: Callable[..., Any] | None, args: Any, kwargs: Any) -> Any:
    """On a real GPU, call the real function first so bad indices fail as they would."""
    if real is not None and _real_gpu():
        return real(*args, **kwargs)
    return None


def _patch_torch(torch: ModuleType) -> None:
    cuda = torch.cuda
    for name in (
        "is_available",
        "get_device_name",
        "get_device_capability",
        "get_device_properties",
    ):
        _originals[name] = getattr(cuda, name)
    real_name = _originals["get_device_name"]
    real_capability = _originals["get_device_capability"]
    real_properties = _originals["get_device_properties"]

    def device_name(*args: Any, **kwargs: Any) -> str:
        _check_device(real_name, args, kwargs)
        return DEVICE_NAME

    def device_capability(*args: Any, **kwargs: Any) -> tuple[int, int]:
        _check_device(real_capability, args, kwargs)
        return CAPABILITY

    def device_properties(*args: Any, **kwargs: Any) -> EmulatedDeviceProperties:
        return EmulatedDeviceProperties(_check_device(real_properties, args, kwargs))

    cuda.get_device_name = _wrap("get_device_name", device_name, real_name)
    cuda.get_device_capability = _wrap("get_device_capability", device_capability, real_capability)
    cuda.get_device_properties = _wrap("get_device_properties", device_properties, real_properties)

    # [P1][P2] fact §1: ROCm builds report torch.version.hip as a string, torch.version.cuda None.
    _patch_version(torch.version)

    # [P3] fact §2: cudnn.version() returns the MIOpen version; is_available() True with MIOpen.
    cudnn = torch.backends.cudnn

    def cudnn_version() -> int:
        _query("torch.backends.cudnn.version", MIOPEN_VERSION)
        return MIOPEN_VERSION

    cudnn.version = cudnn_version
    cudnn.is_available = lambda: True

    _patch_sdpa(torch)
    log("torch_patched", torch=str(torch.__version__), hip=torch.version.hip)


class _EmulatedVersionModule(ModuleType):
    """``torch.version`` as the code under test sees it on ROCm; torch/triton see the real one.

    Triton picks its AMD backend when it reads ``torch.version.hip`` (and Inductor follows), so
    the real GPU underneath would break if torch's own code saw the emulated value.
    """

    def __getattribute__(self, name: str) -> Any:
        # Hot path: under torch.compile Inductor reads torch.version ~200 times per step, so
        # a module already seen costs one frame lookup and two dictionary lookups, no call.
        if name in _EMULATED_VERSION:
            namespace = sys._getframe(1).f_globals
            internal = _internal_by_name.get(namespace.get("__name__", ""))
            if internal is None:
                internal = namespace_is_internal(namespace)
            if not internal:
                return _EMULATED_VERSION[name]
            if name in _real_version:
                return _real_version[name]
        return ModuleType.__getattribute__(self, name)


_EMULATED_VERSION: dict[str, Any] = {}
_real_version: dict[str, Any] = {}
"""The patched module's own ``__dict__`` (live: a value set later is seen), read directly."""


def _patch_version(version: ModuleType) -> None:
    _EMULATED_VERSION.update(hip=hip_version(), cuda=None)
    global _real_version
    _real_version = vars(version)
    version.__class__ = _EmulatedVersionModule


def _patch_sdpa(torch: ModuleType) -> None:
    """[G3] fact §2, §10.6: cuDNN attention is not compiled on ROCm; cuDNN alone → no kernel.

    ``F.scaled_dot_product_attention`` itself stays the real function: a Python wrapper would
    run on every call and be traced into every compiled graph. The emulation acts where the
    backends are chosen instead (``torch._C._set_sdp_use_*``, which ``sdpa_kernel``,
    ``sdp_kernel`` and ``torch.backends.cuda.enable_*_sdp`` all call). The code under test sees
    the cuDNN flag it set; torch sees it off whenever cuDNN would be the only backend left, so
    that torch itself raises "No available kernel" exactly where ROCm would. With any other
    backend on, torch's own choice is untouched: the real device's kernels run, so timings stay
    those of the real device.
    """
    c = torch._C
    names = ("_set_sdp_use_flash", "_set_sdp_use_mem_efficient", "_set_sdp_use_math")
    if not all(hasattr(c, name) for name in (*names, "_set_sdp_use_cudnn")):
        return  # a torch without cuDNN attention: nothing to emulate
    real_set_cudnn = c._set_sdp_use_cudnn
    real_get_cudnn = c._get_cudnn_sdp_enabled
    flash, efficient, math = (
        c._get_flash_sdp_enabled,
        c._get_mem_efficient_sdp_enabled,
        c._get_math_sdp_enabled,
    )
    state = {"cudnn": bool(real_get_cudnn()), "only_cudnn": False}

    def sync() -> None:
        others = flash() or efficient() or math()
        only_cudnn = state["cudnn"] and not others
        real_set_cudnn(state["cudnn"] and others)
        if only_cudnn and not state["only_cudnn"]:
            _, where = _migrate_hooks.caller_location((*_INTERNAL, "contextlib"))
            log("sdpa_no_kernel", caller=where, cudnn_enabled=True)
        state["only_cudnn"] = only_cudnn

    def setter(name: str) -> Callable[[bool], None]:
        real = getattr(c, name)

        def set_use(enabled: bool) -> None:
            real(enabled)
            sync()

        set_use.__name__ = name
        return set_use

    def set_use_cudnn(enabled: bool) -> None:
        state["cudnn"] = bool(enabled)
        sync()

    def get_cudnn_enabled() -> bool:
        return bool(state["cudnn"])

    for name in names:
        setattr(c, name, setter(name))
    c._set_sdp_use_cudnn = set_use_cudnn
    c._get_cudnn_sdp_enabled = get_cudnn_enabled
    sync()


def _blocked_executable(args: Any) -> str | None:
    if isinstance(args, (str, bytes, os.PathLike)):
        first = os.fsdecode(args).split()[0] if os.fsdecode(args).split() else ""
    elif isinstance(args, (list, tuple)) and args:
        first = os.fsdecode(args[0])
    else:
        return None
    return "nvidia-smi" if os.path.basename(first) == "nvidia-smi" else None


def _patch_subprocess() -> None:
    """[P2] fact §10.2, §3c: there is no ``nvidia-smi`` on a ROCm machine (amd-smi instead)."""
    real_init = subprocess.Popen.__init__

    def popen_init(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        if not kwargs.get("shell") and _blocked_executable(args):
            _, where = _migrate_hooks.caller_location(("subprocess",))
            log("blocked_executable", executable="nvidia-smi", caller=where)
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), "nvidia-smi")
        real_init(self, args, *rest, **kwargs)

    subprocess.Popen.__init__ = popen_init  # type: ignore[method-assign]


def _fix_environment() -> None:
    """[E1][E2][P2][P9] fact §6: the variables as a ROCm install has them (parent sets them too)."""
    environ = os.environ
    if "CUDA_VISIBLE_DEVICES" in environ and "HIP_VISIBLE_DEVICES" not in environ:
        environ["HIP_VISIBLE_DEVICES"] = environ["CUDA_VISIBLE_DEVICES"]
    environ.setdefault("ROCM_PATH", "/opt/rocm")
    environ.pop("CUDA_HOME", None)
    environ.pop("CUDA_PATH", None)


def install() -> None:
    """Turn the emulation on for this process."""
    _allowed.update(
        part.strip() for part in os.environ.get("MIGRATE_SIM_ALLOW", "").split(",") if part.strip()
    )
    _fix_environment()
    _migrate_hooks.install()
    _migrate_hooks.add_blocker(_blocker, BLOCKED_TOP_LEVEL)
    _migrate_hooks.add_post_import_hook("torch", _patch_torch)
    _patch_subprocess()
    atexit.register(_flush_query_counts)
    log("start", profile=PROFILE, argv=list(sys.argv), allowed=sorted(_allowed))
