"""PyTorch CUDA builds: index URLs, local versions, and the ROCm release a torch pin maps to."""

from __future__ import annotations

import re
from collections.abc import Sequence

from migrator.ruledata import load_table

from ._versions import parse_version, spec_admits

CUDA_INDEX_RE = re.compile(
    r"https?://download\.pytorch\.org/whl/(?P<nightly>nightly/|test/)?(?P<cuda>cu\d{2,3})(?![\w.])"
)
LOCAL_CUDA_RE = re.compile(r"\+cu\d{2,3}")


def torch_table() -> dict[str, str]:
    table: dict[str, str] = load_table("torch_rocm")["torch"]
    return table


def _minor_key(minor: str) -> tuple[int, ...]:
    return tuple(int(part) for part in minor.split("."))


def rocm_for_torch_version(version: str) -> str | None:
    """ROCm version of the PyTorch release ``version`` (``2.3.1`` → ``6.0``)."""
    release = parse_version(version)
    if release is None or len(release) < 2:
        return None
    return torch_table().get(f"{release[0]}.{release[1]}")


def rocm_for_specs(specs: Sequence[str]) -> tuple[str, str] | None:
    """(torch minor, ROCm) of the newest table entry every specifier admits; None if none does.

    Local version labels (``+cu121``) are ignored; a specifier that cannot be read (``$VAR``)
    admits everything.
    """
    cleaned = [re.sub(r"\+[A-Za-z0-9.]+", "", spec) for spec in specs]
    for minor in sorted(torch_table(), key=_minor_key, reverse=True):
        candidates = [f"{minor}.{patch}" for patch in range(10)]
        if all(any(spec_admits(spec, c) is not False for c in candidates) for spec in cleaned):
            return minor, torch_table()[minor]
    return None


def companion_torch_version(package: str, version: str) -> str | None:
    """The torch version a torchvision/torchaudio version pairs with."""
    if package == "torch":
        return version
    offsets: dict[str, int] = load_table("torch_rocm")["companions"]
    release = parse_version(version)
    if package not in offsets or release is None or len(release) < 2:
        return None
    offset = offsets[package]
    if offset == 0:
        return ".".join(map(str, release))
    if release[0] != 0:
        return None
    return f"2.{release[1] - offset}"


def index_url_for(rocm: str, nightly: str | None = None) -> str:
    base: str = load_table("torch_rocm")["index_base"]
    return f"{base}{nightly or ''}rocm{rocm}"
