"""Conda environment files provably for another platform (a Windows or macOS export, read from
their content: builds, packages, prefix) never reach a ROCm machine: their findings are guarded (hidden,
shown marked with ``--show-guarded``), while the same lines in a Linux or unmarked file stay
reported."""

from __future__ import annotations

import json
from pathlib import Path

from migrator.reach.platform_files import foreign_platform
from tests.attacks.conftest import migrate, write

#: A Windows ``conda env export``: no platform key, but win64 builds and Windows-only packages.
WINDOWS_EXPORT = """\
name: dino
channels:
  - pytorch
  - nvidia
  - conda-forge
dependencies:
  - blas-devel=3.9.0=18_win64_mkl
  - click=8.1.7=win_pyh7428d3b_0
  - pytorch-cuda=11.8=h24eeafa_5
  - pytorch=2.0.1=py3.9_cuda11.8_cudnn8_0
  - ucrt=10.0.22621.0=h57928b3_0
  - vc=14.2=h21ff451_1
prefix: C:\\Users\\me\\miniconda3\\envs\\dino
"""

MACOS_EXPORT = """\
name: app
channels:
  - nvidia
  - defaults
dependencies:
  - appnope=0.1.2=py39hecd8cb5_1001
  - cudatoolkit=11.3.1
  - python=3.9.7
prefix: /Users/me/miniconda3/envs/app
"""

LINUX_EXPORT = """\
name: dino
channels:
  - pytorch
  - nvidia
dependencies:
  - _libgcc_mutex=0.1=conda_forge
  - libgcc-ng=13.2.0=h807b86a_3
  - pytorch-cuda=11.8=h7e8668a_5
  - pytorch=2.0.1=py3.9_cuda11.8_cudnn8.7.0_0
"""

#: Hand-written, no platform evidence either way: a deployment file like any other.
PLAIN = """\
name: app
channels:
  - nvidia
dependencies:
  - pytorch-cuda=12.1
"""


def _sites(findings: list[dict[str, object]]) -> set[str]:
    """The top folder of every site the findings stand for (their own and the related ones)."""
    paths = [str(f["path"]) for f in findings]
    paths += [str(site["path"]) for f in findings for site in f.get("related", [])]  # type: ignore[attr-defined]
    return {path.split("/")[0] for path in paths}


def _scan(root: Path, *extra: str) -> list[dict[str, object]]:
    result = migrate("scan", ".", "--output-format", "json", "--no-cache", *extra, cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return [f for f in json.loads(result.stdout)["findings"] if f["severity"] != "hygiene"]


def test_windows_and_macos_exports_are_guarded_linux_and_plain_files_are_not(
    tmp_path: Path,
) -> None:
    write(tmp_path, "win/environment.yaml", WINDOWS_EXPORT)
    write(tmp_path, "mac/environment.yml", MACOS_EXPORT)
    write(tmp_path, "linux/environment.yaml", LINUX_EXPORT)
    write(tmp_path, "plain/environment.yml", PLAIN)
    assert _sites(_scan(tmp_path)) == {"linux", "plain"}
    guarded = [f for f in _scan(tmp_path, "--show-guarded") if f.get("guard")]
    assert _sites(guarded) == {"win", "mac"}
    assert all("Linux-only" in str(f["guard"]) for f in guarded)


def test_mixed_or_linux_evidence_proves_nothing() -> None:
    mixed = WINDOWS_EXPORT.replace("  - vc=", "  - libstdcxx-ng=13.2.0=hc0a3c3a_3\n  - vc=")
    assert foreign_platform(mixed, "conda") == ""
    assert foreign_platform(PLAIN, "conda") == ""
    assert foreign_platform("platform: osx-arm64\n", "conda").startswith("a macOS")
    assert foreign_platform(WINDOWS_EXPORT, "conda").startswith("a Windows")
    assert foreign_platform(WINDOWS_EXPORT, "dockerfile") == ""
