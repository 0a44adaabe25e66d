"""PyTorch CUDA builds: index URLs, local versions, and the ROCm release a torch pin maps to
(one home for the rules that rewrite pins and indexes and for the Dockerfile variants)."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from migrator.knowledge.tables import load_table
from migrator.knowledge.versions import parse_version, spec_admits

CUDA_INDEX_RE = re.compile(
    r"https?://download\.pytorch\.org/whl/(?P<nightly>nightly/|test/)?(?P<cuda>cu\d{2,3})(?![\w.])"
)
LOCAL_CUDA_RE = re.compile(r"\+cu\d{2,3}")


def torch_table() -> dict[str, str]:
    table: dict[str, str] = load_table("torch_rocm")["torch"]
    return table


def _minor_key(minor: str) -> tuple[int, ...]:
    return tuple(int(part) for part in minor.split("."))


@functools.lru_cache(maxsize=1)
def torch_releases() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Every torch release with a known ROCm wheel index, oldest first: (release, ROCm versions
    of the indexes serving it, newest first). Releases the index table lists come with their
    patch number (``2.5.1``); later minors known only from the minor table end in ``.*``."""
    served: dict[str, set[str]] = {}
    for rocm, releases in load_table("torch_rocm_indexes")["index"].items():
        for release in releases:
            served.setdefault(str(release), set()).add(str(rocm))
    listed_minors = {".".join(release.split(".")[:2]) for release in served}
    for minor, rocm in torch_table().items():
        if minor not in listed_minors and _minor_key(minor) > max(map(_minor_key, listed_minors)):
            served[f"{minor}.*"] = {rocm}
    order = sorted(served, key=lambda r: _minor_key(r.replace(".*", ".0")))
    return tuple(
        (release, tuple(sorted(served[release], key=_minor_key, reverse=True))) for release in order
    )


def _admits(specs: Sequence[str], release: str) -> bool:
    """Whether every specifier admits ``release`` (``2.10.*``: some patch of 2.10)."""
    if release.endswith(".*"):
        candidates = [release.replace("*", str(patch)) for patch in range(10)]
        return all(any(spec_admits(s, c) is not False for c in candidates) for s in specs)
    return all(spec_admits(spec, release) is not False for spec in specs)


def _clean(specs: Sequence[str]) -> list[str]:
    return [re.sub(r"\+[A-Za-z0-9.]+", "", spec) for spec in specs]


def indexes_serving(version: str) -> tuple[str, ...] | None:
    """ROCm versions of the wheel indexes serving torch ``version``, newest first (``2.5.1`` →
    ``("6.2", "6.1")``); empty when that minor has indexes but not this release (``2.3.2``);
    None when nothing is known of that minor."""
    release = parse_version(version)
    if release is None or len(release) < 2:
        return None
    exact = ".".join(map(str, (release + (0,))[:3]))
    minor = f"{release[0]}.{release[1]}"
    seen_minor = False
    for known, indexes in torch_releases():
        if known == exact or known == f"{minor}.*":
            return indexes
        seen_minor = seen_minor or known.startswith(f"{minor}.")
    return () if seen_minor else None


def rocm_for_torch_version(version: str) -> str | None:
    """ROCm version of the newest wheel index serving torch ``version`` (``2.3.1`` → ``6.0``,
    ``2.5.1`` → ``6.2``); None when no index is known to have that release."""
    indexes = indexes_serving(version)
    return indexes[0] if indexes else None


def rocm_for_specs(specs: Sequence[str]) -> tuple[str, str] | None:
    """(torch minor, ROCm) of the newest release with a ROCm index that every specifier admits;
    None if none does. Local version labels (``+cu121``) are ignored; a specifier that cannot
    be read (``$VAR``) admits everything."""
    cleaned = _clean(specs)
    for release, indexes in reversed(torch_releases()):
        if _admits(cleaned, release):
            return ".".join(release.split(".")[:2]), indexes[0]
    return None


def rocm_index_for(specs: Sequence[str], extra: bool) -> tuple[str | None, str]:
    """(ROCm version of the wheel index to use, why none) for a torch required as ``specs``.

    With ``--index-url`` (``extra`` False) pip sees only that index: it must have a release the
    specifiers admit; the newest such release chooses the index. With ``--extra-index-url``
    pip takes the highest version from either index, so an unbounded torch gets the newest CUDA
    build from PyPI: torch must be bounded to releases the ROCm index has (its newest admitted
    release is on the index, and wins over PyPI's same version by its ``+rocm`` label)."""
    cleaned = _clean(specs)
    if extra and (not cleaned or all(spec_admits(s, "999.0") is not False for s in cleaned)):
        return None, (
            "next to `--extra-index-url` pip installs the newest torch from PyPI, a CUDA build, "
            "unless torch is pinned to a release the ROCm index has; pin torch "
            "(`torch==X.Y.Z`) or install it with `--index-url`"
        )
    for release, indexes in reversed(torch_releases()):
        if _admits(cleaned, release):
            return indexes[0], ""
    return None, "no ROCm wheel index is known to have a torch release this file admits"


def companion_torch_version(package: str, version: str) -> str | None:
    """The torch version a torchvision/torchaudio version pairs with (patch kept:
    torchvision 0.17.2 → torch 2.2.2)."""
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
    return ".".join(map(str, (2, release[1] - offset, *release[2:])))


def rocm_for_companion(package: str, version: str) -> str | None:
    """ROCm build of a torch/torchvision/torchaudio release: the index serving the paired torch
    release, else (patch numbers that do not pair exactly) the one index serving every release
    of that torch minor."""
    torch_version = companion_torch_version(package, version)
    if torch_version is None:
        return None
    exact = rocm_for_torch_version(torch_version)
    if exact is not None or package == "torch":
        return exact
    minor = ".".join(torch_version.split(".")[:2])
    shared = [set(ix) for rel, ix in torch_releases() if rel.startswith(f"{minor}.")]
    common = set.intersection(*shared) if shared else set()
    return max(common, key=_minor_key) if common else None


def index_url_for(rocm: str, nightly: str | None = None) -> str:
    base: str = load_table("torch_rocm")["index_base"]
    return f"{base}{nightly or ''}rocm{rocm}"
