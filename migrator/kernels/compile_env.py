"""What the installed HIP toolchain can check, read once per compile run: which AMD targets
have a device library (a target without one is compiled with ``-nogpulib`` and its linking is
said to be unchecked), and which compiler errors are a named gap of this ROCm (a builtin, header
or library a newer ROCm or another ROCm package has), the only errors reported as "not
checkable" instead of failures."""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass

#: Where ROCm's and the distributions' device libraries (``oclc_isa_version_*.bc``) live.
_DEVICE_LIBRARY_GLOBS = (
    "{rocm}/amdgcn/bitcode",
    "{rocm}/lib/llvm/lib/clang/*/lib/amdgcn/bitcode",
    "{rocm}/llvm/lib/clang/*/lib/amdgcn/bitcode",
    "/usr/lib/*/amdgcn/bitcode",
    "/usr/lib/amdgcn/bitcode",
    "/usr/lib/llvm-*/lib/clang/*/lib/amdgcn/bitcode",
    "/usr/share/amdgcn/bitcode",
)
_TARGET = re.compile(r"^gfx(?P<version>[0-9a-f]+)")


def device_library_folders() -> list[str]:
    """The folders holding AMD device libraries on this machine."""
    roots = [os.environ.get("ROCM_PATH") or "", os.environ.get("HIP_PATH") or "", "/opt/rocm"]
    found: list[str] = []
    for pattern in _DEVICE_LIBRARY_GLOBS:
        for root in roots if "{rocm}" in pattern else [""]:
            if "{rocm}" in pattern and not root:
                continue
            for folder in sorted(glob.glob(pattern.format(rocm=root))):
                if os.path.isfile(os.path.join(folder, "ockl.bc")) and folder not in found:
                    found.append(folder)
    return found


def has_device_library(target: str, folders: list[str] | None = None) -> bool:
    """Whether the device library for ``target`` (``gfx1030``, ``gfx90a:xnack+``) is
    installed: without it clang cannot link a kernel that calls a math or work-item builtin."""
    match = _TARGET.match(target)
    if match is None:
        return False
    name = f"oclc_isa_version_{match.group('version')}.bc"
    return any(
        os.path.isfile(os.path.join(folder, name))
        for folder in (device_library_folders() if folders is None else folders)
    )


@dataclass(frozen=True, slots=True)
class Gap:
    """An error that says what this ROCm lacks, and which ROCm (or package) has it."""

    pattern: re.Pattern[str]
    lacks: str
    has_it: str


_SYNC = (
    r"__shfl(?:_up|_down|_xor)?_sync|__ballot_sync|__any_sync|__all_sync|__activemask|"
    r"__syncwarp|__reduce_\w+_sync|__match_\w+_sync"
)
_LIBRARIES = {
    "hipcub": "hipCUB",
    "rocprim": "rocPRIM",
    "hipblas": "hipBLAS",
    "hipblaslt": "hipBLASLt",
    "rocblas": "rocBLAS",
    "thrust": "rocThrust",
    "rocwmma": "rocWMMA",
    "hipsparse": "hipSPARSE",
    "hiprand": "hipRAND",
    "rocrand": "rocRAND",
    "hipfft": "hipFFT",
    "hipsolver": "hipSOLVER",
    "miopen": "MIOpen",
}
GAPS: tuple[Gap, ...] = (
    Gap(
        re.compile(rf"use of undeclared identifier '(?P<name>{_SYNC})'"),
        "the warp-synchronous builtin `{name}`",
        "ROCm 6.3 (6.2 with HIP_ENABLE_WARP_SYNC_BUILTINS)",
    ),
    Gap(
        re.compile(
            r"(?:use of undeclared identifier|unknown type name|no type named) "
            r"'(?P<name>(?P<library>hipsparse|hipblasLt|hipblas|hipsolver|rocblas)\w*)'",
            re.I,
        ),
        "`{name}` (ROCm's {library_name} is not installed here)",
        "a ROCm installation with {library_name}",
    ),
    Gap(
        re.compile(r"'(?P<name>hip/hip_bf16\.h|hip/amd_detail/amd_hip_bf16\.h)' file not found"),
        "the header `{name}`",
        "ROCm 6.0",
    ),
    Gap(
        re.compile(r"'(?P<name>hip/hip_fp8\.h|hip/amd_detail/amd_hip_fp8\.h)' file not found"),
        "the header `{name}`",
        "ROCm 6.2",
    ),
    Gap(
        re.compile(
            r"'(?P<name>(?P<library>"
            + "|".join(_LIBRARIES)
            + r")(?:/[^']*|\.h|_\w*\.h)?)' file not found",
            re.I,
        ),
        "the header `{name}` (ROCm's {library_name} is not installed here)",
        "a ROCm installation with {library_name}",
    ),
)
#: Headers of PyTorch's C++ API: missing only where torch's headers could not be prepared.
TORCH_HEADER = re.compile(r"'(?:torch|ATen|c10|pybind11)/[^']*' file not found")


def gap_of(message: str, hip_version: str) -> str | None:
    """The named gap of this HIP that a compiler error shows ("HIP 5.2 lacks ...; ROCm 6.3
    has it"), or None for an error a newer ROCm would give too."""
    for gap in GAPS:
        match = gap.pattern.search(message)
        if match is None:
            continue
        values = match.groupdict()
        library = (values.get("library") or "").lower()
        values["library_name"] = _LIBRARIES.get(library, library)
        lacks = gap.lacks.format(**values)
        has_it = gap.has_it.format(**values)
        return f"HIP {hip_version} lacks {lacks}; {has_it} has it"
    return None


__all__ = ["GAPS", "TORCH_HEADER", "device_library_folders", "gap_of", "has_device_library"]
