"""Release tooling that only serves NVIDIA users: a CI workflow or script named for releasing or
publishing (``.github/workflows/publish.yml``, ``scripts/build_wheels.sh``) that builds CUDA
wheels and names no ROCm build. What it does is publish the project's CUDA wheels; a ROCm
release would be a job of its own, so its CUDA toolkit setup, wheel indexes and version matrix
are not a migration problem of the project (the engine marks its findings guarded)."""

from __future__ import annotations

import re

from migrator.knowledge.vendor_tokens import names_rocm

#: Path words naming release or publishing tooling.
_RELEASE_WORDS = frozenset(
    {"release", "releases", "publish", "publishing", "wheel", "wheels", "pypi", "cibuildwheel"}
)
_SPLIT = re.compile(r"[^a-z0-9]+")
#: A command that builds a wheel.
_BUILDS_WHEEL = re.compile(
    r"bdist_wheel|\bpip3?\s+wheel\b|python3?\s+-m\s+build\b|\bcibuildwheel\b|\bbuild\s+--wheel\b"
    r"|\buv\s+build\b",
    re.IGNORECASE,
)
#: What makes the build a CUDA one.
_CUDA = re.compile(r"\bcuda|\bcu1\d\d?\b|\bnvcc\b|TORCH_CUDA_ARCH_LIST", re.IGNORECASE)
#: The guard text of such a file's findings.
RELEASE_TOOLING = (
    "NVIDIA-only release tooling: it builds the project's CUDA wheels for publishing (a ROCm "
    "release would be a job of its own)"
)


def release_tooling(path: str, text: str, kind: str) -> str:
    """``RELEASE_TOOLING`` when the file at ``path`` is NVIDIA-only release tooling, else ""."""
    if kind not in {"shell", "ci-yaml"}:
        return ""
    words = set(_SPLIT.split(path.lower()))
    if not words & _RELEASE_WORDS:
        return ""
    if not _BUILDS_WHEEL.search(text) or not _CUDA.search(text) or names_rocm(text):
        return ""
    return RELEASE_TOOLING
