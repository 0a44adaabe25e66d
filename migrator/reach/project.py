"""Project-level view from the list of scanned files: files that never run on a ROCm build
(platform-only scripts, NVIDIA variants of files the project already has an AMD twin of, CI
workflows named for NVIDIA runners), the packages the project itself provides, and findings
about a dependency that the project is, or already declares at a ROCm-capable version."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from packaging.utils import canonicalize_name
from packaging.version import Version

from migrator.knowledge.vendor_tokens import (
    NVIDIA_GPU_MODEL_TOKENS,
    NVIDIA_HOSTED_TOKENS,
    OTHER_DEVICE_PATH_TOKENS,
    ROCM_TOKENS,
)
from migrator.knowledge.versions import ProjectFacts
from migrator.model import Finding

_SPLIT = re.compile(r"[^a-z0-9]+")
#: Path words that make a file macOS- or Windows-only.
_PLATFORM_WORDS = {
    "macos": "macOS",
    "mac": "macOS",
    "osx": "macOS",
    "darwin": "macOS",
    "windows": "Windows",
    "win": "Windows",
    "win32": "Windows",
    "win64": "Windows",
}
_NVIDIA_WORD = re.compile(r"(?<![a-z0-9])(nvidia|cuda|cu1\d\d?)(?![a-z])", re.IGNORECASE)
_AMD_WORD = re.compile(r"(?<![a-z0-9])(amd|rocm|hip)(?![a-z])", re.IGNORECASE)
_AMD_REPLACEMENTS = ("amd", "rocm", "hip", "AMD", "ROCm", "ROCM")
#: ``rocm6.2`` or ``amd-7.0`` in a twin's name: the version does not make it another file.
_VERSION_TAIL = re.compile(r"^[-_.]?\d+(\.\d+)*")


def platform_only(relative: str) -> str:
    """ "macOS" or "Windows" when a path word makes the file platform-only, else ""."""
    lowered = relative.lower()
    stem = lowered.rsplit(".", 1)[0] if "." in lowered.rsplit("/", 1)[-1] else lowered
    for word in _SPLIT.split(stem):
        platform = _PLATFORM_WORDS.get(word)
        if platform:
            return platform
    return ""


def _without_amd_word(name: str) -> set[str]:
    """``requirements_amd.txt`` -> {``requirements.txt``}; ``Dockerfile.rocm6.2`` -> {``Dockerfile``}."""
    out: set[str] = set()
    for match in _AMD_WORD.finditer(name):
        start, end = match.span()
        tail = _VERSION_TAIL.match(name[end:])
        if tail:
            end += tail.end()
        before, after = name[:start], name[end:]
        if before[-1:] in "-_." and before:
            out.add(before[:-1] + after)
        if after[:1] in "-_." and after:
            out.add(before + after[1:])
        if not before or not after:
            out.add(before + after)
        if name.startswith("test_") and before[-1:] in "-_.":
            # ``test_flash_attn_triton_amd.py``: the tests of one ROCm backend of
            # ``test_flash_attn.py``'s subject; that suite is the other vendor's
            stem, separator, _ = before[:-1].rpartition("_")
            if separator and stem != "test":
                out.add(stem + after)
    return {candidate for candidate in out if candidate and candidate[0] not in "-_."}


def amd_twins(paths: Iterable[str]) -> dict[str, str]:
    """NVIDIA-variant files mapped to their AMD twin: ``docker/nvidia/X`` when ``docker/amd/``
    exists, ``requirements.txt`` when ``requirements-rocm.txt`` sits next to it,
    ``Dockerfile.cuda`` next to ``Dockerfile.rocm``, and what a folder named for a CUDA build
    holds when a folder named for ROCm sits beside it (``docker/cu124-torch2.6/`` next to
    ``docker/rocm/``)."""
    files = sorted(set(paths))
    present = set(files)
    directories: set[str] = set()
    for path in files:
        parts = path.split("/")
        for index in range(1, len(parts)):
            directories.add("/".join(parts[:index]))
    amd_directories = {
        directory for directory in directories if _AMD_WORD.search(directory.rpartition("/")[2])
    }
    plain_twins: dict[str, str] = {}
    for path in files:
        folder, _, name = path.rpartition("/")
        for plain in _without_amd_word(name):
            target = f"{folder}/{plain}" if folder else plain
            if target in present and not _AMD_WORD.search(plain):
                plain_twins.setdefault(target, path)
    out: dict[str, str] = {}
    for path in files:
        if _AMD_WORD.search(path):
            continue
        if path in plain_twins:
            out[path] = plain_twins[path]
            continue
        parts = path.split("/")
        for index, part in enumerate(parts):
            if not _NVIDIA_WORD.search(part):
                continue
            found = ""
            for replacement in _AMD_REPLACEMENTS:
                swapped = _NVIDIA_WORD.sub(replacement, part, count=1)
                prefix = "/".join([*parts[:index], swapped])
                last = index == len(parts) - 1
                if (last and prefix in present) or (not last and prefix in directories):
                    found = prefix
                    break
                if last:
                    # ``requirements-cu121.txt`` next to ``requirements-rocm6.2.txt``
                    folder = "/".join(parts[:index])
                    pattern = re.compile(
                        re.escape(swapped).replace(
                            re.escape(replacement), re.escape(replacement) + r"[-_.]?\d+(\.\d+)*"
                        )
                    )
                    for other in files:
                        other_folder, _, other_name = other.rpartition("/")
                        if other_folder == folder and pattern.fullmatch(other_name):
                            found = other
                            break
                    if found:
                        break
            if not found and index < len(parts) - 1:
                # ``docker/verl0.4-cu124-torch2.6/`` next to ``docker/rocm/``: a folder named for
                # a CUDA build beside one named for ROCm holds the NVIDIA variants
                parent = "/".join(parts[:index])
                found = next(
                    (
                        other
                        for other in sorted(amd_directories)
                        if other.rpartition("/")[0] == parent
                    ),
                    "",
                )
            if found:
                out[path] = found
                break
    return out


#: A CI file named for NVIDIA runners: ``nv-h100.yml``, ``tests_cuda.yml``, ``gpu-nvidia.yml``,
#: ``integration_test_h100.yaml``.
_NV_PREFIX = re.compile(r"^nv[-_]", re.IGNORECASE)


def nvidia_ci_file(relative: str) -> bool:
    """Whether ``relative`` is a CI workflow whose name says it runs on NVIDIA runners: it names
    NVIDIA or CUDA, or an NVIDIA GPU model (``..._h100.yaml``: no AMD runner carries one)."""
    from migrator.files.discovery import file_kind

    if file_kind(relative) != "ci-yaml":
        return False
    name = relative.rsplit("/", 1)[-1]
    named = bool(
        _NV_PREFIX.match(name)
        or _NVIDIA_WORD.search(name)
        or set(_SPLIT.split(name.lower())) & NVIDIA_GPU_MODEL_TOKENS
    )
    return named and not _AMD_WORD.search(name)


def nvidia_gpu_file(relative: str) -> bool:
    """Whether a Python file is for NVIDIA GPUs only: a path word names the model or architecture
    (``t4_smoke/run_t4.py``, ``hopper/setup.py``) or a hosted service that only has NVIDIA GPUs
    (``tests/kaggle/...``, ``colab_demo.ipynb``), and none names AMD or ROCm
    (``hopper/test_..._amd.py`` runs on AMD). Container and CI files named so stay reported:
    the fix offers their ROCm variant. C/C++/CUDA sources named so (``hopper/flash_fwd.cu``) are
    kernels for that architecture: no ROCm build compiles them."""
    from migrator.files.discovery import CUDA_SOURCE_SUFFIXES

    if not relative.endswith((".py", ".ipynb")) and not relative.lower().endswith(
        CUDA_SOURCE_SUFFIXES
    ):
        return False
    words = set(_SPLIT.split(relative.lower()))
    nvidia = NVIDIA_GPU_MODEL_TOKENS | NVIDIA_HOSTED_TOKENS
    return bool(words & nvidia) and not words & ROCM_TOKENS


def other_device_file(relative: str) -> bool:
    """Whether a file is for another vendor's accelerator: a path word names it
    (``backends/gaudi/server/...``, ``requirements_intel.txt``, ``Dockerfile_gaudi``) and none
    names AMD, ROCm or CUDA (``xpu_or_cuda/``, ``hpu_and_rocm.py`` run on AMD GPUs too)."""
    words = set(_SPLIT.split(relative.lower()))
    return bool(words & OTHER_DEVICE_PATH_TOKENS) and not words & (
        ROCM_TOKENS | {"cuda", "gpu", "nvidia"}
    )


#: Why a test's CUDA_VISIBLE_DEVICES is not reported (see ``resolves_device_masks``).
MASK_TEST_INPUT = (
    "test input of the project's own device-mask resolver (it reads HIP_VISIBLE_DEVICES)"
)


def resolves_device_masks(sources: Mapping[str, str]) -> bool:
    """Whether the project's shipped Python code reads ``HIP_VISIBLE_DEVICES`` itself: it
    resolves the vendors' device masks on its own (often ``CUDA_VISIBLE_DEVICES=-1`` hides only
    the NVIDIA cards of a mixed host), so in its tests a ``CUDA_VISIBLE_DEVICES`` value is an
    input of that resolver, and a HIP copy would change what the test checks."""
    from migrator.files.paths import is_test_path

    return any(
        "HIP_VISIBLE_DEVICES" in text and not is_test_path(path) for path, text in sources.items()
    )


#: Why a file whose path names an NVIDIA GPU model or NVIDIA-only service is left out.
NVIDIA_PATH_REASON = "file for an NVIDIA GPU model or NVIDIA-only service (its path names it)"


def file_guards(paths: Iterable[str]) -> dict[str, str]:
    """Files of the project that never run on a ROCm build, each with the reason."""
    paths = list(paths)
    out: dict[str, str] = {}
    for path in paths:
        platform = platform_only(path)
        if platform:
            out[path] = f"{platform}-only file"
        elif nvidia_ci_file(path):
            out[path] = "CI workflow for NVIDIA runners"
        elif nvidia_gpu_file(path):
            out[path] = NVIDIA_PATH_REASON
        elif other_device_file(path):
            out[path] = "file for another vendor's accelerator (its path names it)"
    for path, twin in amd_twins(paths).items():
        out.setdefault(path, f"NVIDIA variant (the project has {twin})")
    return out


#: Folders whose sub-projects are vendored copies of other projects, not the project itself.
_VENDORED = frozenset({"third_party", "thirdparty", "3rdparty", "vendor", "vendored", "external"})
_PROJECT_MARKERS = ("setup.py", "pyproject.toml", "setup.cfg")


def own_packages(paths: Iterable[str]) -> frozenset[str]:
    """Import names the project provides itself: top-level packages (a folder holding
    ``__init__.py``) and modules at the root, under ``src/``, or at the root of a sub-project
    (a folder with its own ``setup.py``/``pyproject.toml``, not a vendored copy)."""
    files = list(paths)
    roots = {"", "src"}
    for path in files:
        folder, _, name = path.rpartition("/")
        if name in _PROJECT_MARKERS and not set(folder.split("/")) & _VENDORED:
            roots.update({folder, f"{folder}/src" if folder else "src"})
    out: set[str] = set()
    for path in files:
        folder, _, name = path.rpartition("/")
        if name == "__init__.py":
            parent, _, package = folder.rpartition("/")
            if package and parent in roots:
                out.add(package)
        elif name.endswith(".py") and folder in roots and name != "setup.py":
            out.add(name[:-3])
    return frozenset(out)


#: The group (or rule name) of findings that list or install NVML bindings (ROC812, and
#: ROC867's NVML verdicts).
NVML_BINDINGS = "nvml-bindings"
#: Dependencies that are a problem only through the project's own uses of them -> the category
#: of the findings that report those uses. NVML bindings (``pynvml``, ``nvidia-ml-py``) are pure
#: Python and install anywhere; on ROCm only a call fails (rocm-facts §3a), so a project whose
#: every NVML call is guarded or falls back loses nothing by keeping them.
THROUGH_USES = {NVML_BINDINGS: "nvml"}


def uses_guard(finding: Finding, used: frozenset[str], ran: frozenset[str]) -> str:
    """Why a finding about installing a dependency of ``THROUGH_USES`` is no problem ("" when
    it is): the project has no unguarded finding of that dependency's uses (``used``: the
    categories of the unguarded findings) although the rules reporting them ran (``ran``: the
    categories of the rules that ran)."""
    category = THROUGH_USES.get(finding.group) or THROUGH_USES.get(finding.name)
    if category is None or category in used or category not in ran:
        return ""
    return (
        f"every {category.upper()} use in the project is guarded or falls back: installing the "
        "bindings alone changes nothing on ROCm"
    )


def silenced_rules(
    dependencies: Mapping[str, tuple[str, str | None]],
    own: frozenset[str],
    facts: ProjectFacts | None,
) -> frozenset[str]:
    """Codes of the rules whose every finding :func:`dependency_guard` guards in this project
    (``dependencies``: code -> (dependency, first ROCm release)): a scan that hides guarded
    findings need not run them."""
    return frozenset(
        code
        for code, (dependency, rocm_release) in dependencies.items()
        if dependency_guard(dependency, rocm_release, own, facts)
    )


def dependency_guard(
    dependency: str | None,
    rocm_release: str | None,
    own: frozenset[str],
    facts: ProjectFacts | None,
) -> str:
    """Why a finding about ``dependency`` is no problem in this project ("" when it is): the
    project is that package (its own build provides it), or the project's declared range admits
    ``rocm_release``, its first release with ROCm support (or declares none: pip installs the
    latest)."""
    if dependency is None:
        return ""
    top = dependency.split(".", 1)[0]
    if top in own:
        return f"the project is `{top}` itself: its own build provides it"
    if rocm_release is None or facts is None:
        return ""
    name = canonicalize_name(top)
    if name not in facts.ranges:
        return f"{name} is not pinned by the project: pip installs the latest, with ROCm support"
    declared = facts.ranges[name]
    if declared.high is None or declared.high > Version(rocm_release):
        return (
            f"the project's {declared.describe(name)} admits {name} {rocm_release}+, "
            "which has ROCm support"
        )
    return ""
