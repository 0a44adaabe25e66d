"""Shared by ROC704/ROC714: what ROCm does when `CUDA_VISIBLE_DEVICES` is set next to a
`HIP_VISIBLE_DEVICES` or `ROCR_VISIBLE_DEVICES` that disagrees with it."""

from __future__ import annotations

from collections.abc import Mapping

CUDA = "CUDA_VISIBLE_DEVICES"
HIP = "HIP_VISIBLE_DEVICES"
ROCR = "ROCR_VISIBLE_DEVICES"
_FACT = "§6 CUDA_VISIBLE_DEVICES; [E1][E2][P2]"
_WRITES = frozenset({"assign", "assign-other", "setdefault", "putenv", "dict-key"})


def _devices(value: str) -> list[str]:
    """The entries of a device list as written (``"0, 1"`` -> ``["0", "1"]``); every list
    that hides all GPUs (empty, or starting with a negative id) is ``[]``."""
    entries = [part.strip() for part in value.strip().strip("\"'").split(",") if part.strip()]
    if entries and entries[0].startswith("-"):
        return []
    return entries


def conflict(values: Mapping[str, str]) -> str | None:
    """What happens on ROCm when ``values`` (variable -> literal device list, CUDA's among
    them) are set together, or None when they agree."""
    cuda = _devices(values[CUDA])
    hip = values.get(HIP)
    if hip is not None and _devices(hip) != cuda:
        return (
            f"`{HIP}` ({hip.strip()}) is set too and takes precedence on ROCm (HIP and torch "
            f"read it first), so the `{CUDA}` list ({values[CUDA].strip()}) is ignored there "
            "and other GPUs are used than on NVIDIA; give both the same list"
        )
    rocr = values.get(ROCR)
    if hip is None and rocr is not None:
        count = len(_devices(rocr))
        indices = [int(entry) for entry in cuda if entry.isdigit()]
        if any(index >= count for index in indices):
            return (
                f"`{ROCR}` ({rocr.strip()}) is applied first on ROCm and renumbers the {count} "
                f"GPU(s) it keeps from 0; `{CUDA}` ({values[CUDA].strip()}) then indexes into "
                "that list, so it names GPUs that do not exist there (torch on ROCm counts "
                f"only the `{ROCR}` list); index within the ROCR list or set one variable"
            )
    return None
