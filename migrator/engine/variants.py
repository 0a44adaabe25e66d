"""ROCm variants of NVIDIA container files: where fix withholds a vendor swap in a Dockerfile
(an NVIDIA base image, an NVIDIA-named file), ``fix --unsafe-fixes`` writes the ROCm text to a
new sibling (``Dockerfile.rocm``) and leaves the original byte-identical, but only when the
variant has nothing left that breaks on ROCm and its ROCm versions agree."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from migrator.engine.rule import Rule
from migrator.knowledge.versions import ProjectFacts
from migrator.model import WITHHELD, Applicability, Severity

#: File kinds a variant is written for. Compose services and CI jobs get none: a compose variant
#: would need the image built from the Dockerfile variant, and a CI job an AMD runner the
#: project does not have; their findings say what to add by hand.
VARIANT_KINDS = frozenset({"dockerfile", "requirements"})

_NVIDIA_NAME = re.compile(r"(?<![a-z0-9])(cuda|nvidia|cu\d{2,3})(?![a-z0-9])", re.IGNORECASE)
_IMAGE_ROCM = re.compile(r"\brocm/[\w.-]+:(?:rocm)?(\d+)\.(\d+)", re.IGNORECASE)
_WHEEL_ROCM = re.compile(r"(?:/whl/|\+)rocm(\d+)\.(\d+)", re.IGNORECASE)
_WHEEL_ROCM_FULL = re.compile(r"(?:/whl/|\+)rocm(\d+\.\d+(?:\.\d+)?)", re.IGNORECASE)
_TORCH_PIN = re.compile(r"\btorch==(\d+\.\d+(?:\.\d+)?)")
_PIP_INSTALL = re.compile(r"\b(?:pip3?|uv\s+pip|conda|mamba)\s+install\b")
_ROCM_TORCH_IMAGE = re.compile(r"\brocm/pytorch\b", re.IGNORECASE)


#: Installs of a project's locked dependency set: they resolve every package as the lock has it.
_LOCK_INSTALL = re.compile(
    r"\b(?:uv\s+(?:sync|run|pip\s+sync)|poetry\s+(?:install|sync)|pdm\s+(?:install|sync)"
    r"|pipenv\s+(?:install|sync)|rye\s+sync)\b[^\n]*"
)
_GROUP = re.compile(r"--(?:group|extras?|only-group|with)[=\s]+[\"']?([\w${}.-]+)")
_CUDA_GROUP = re.compile(r"(?<![a-z])(?:cuda|cu\d{2,3}|nvidia|gpu)", re.IGNORECASE)


def lock_install_problem(text: str) -> str | None:
    """Why a lock install in ``text`` (``uv sync``, ``uv run --frozen``, ``poetry install``)
    would bring CUDA builds: it picks a dependency group or extra named for CUDA
    (``--group cuda${CUDA_VERSION}``) or installs the lock with no ROCm wheel index in sight,
    and a lock holds the builds it resolved, whatever the base image has."""
    for number, line in enumerate(_joined_lines(text), start=1):
        if line.lstrip().startswith("#"):
            continue
        match = _LOCK_INSTALL.search(line)
        if match is None:
            continue
        command = " ".join(match.group(0).split())
        command = command if len(command) <= 100 else command[:99].rsplit(" ", 1)[0] + " …"
        groups = [g for g in _GROUP.findall(line) if _CUDA_GROUP.search(g)]
        if groups:
            return (
                f"line {number}: `{command}` installs the project's `{groups[0]}` dependencies, "
                "the CUDA builds its lock resolved; add a ROCm group (torch from a "
                "download.pytorch.org/whl/rocmX.Y index) to the project and lock it first"
            )
        if not _WHEEL_ROCM.search(text):
            return (
                f"line {number}: `{command}` installs the project's locked dependencies, and "
                "nothing in the file points torch at a ROCm wheel index: the lock's torch is "
                "the build it resolved (CUDA on Linux from PyPI); lock a ROCm variant first"
            )
    return None


def _joined_lines(text: str) -> list[str]:
    """The lines of ``text`` with backslash continuations joined onto the line where the
    command starts (the continuation lines left empty, so indexes stay those of the file)."""
    lines = text.splitlines()
    out = [""] * len(lines)
    start, pending = 0, list[str]()
    for index, line in enumerate(lines):
        if not pending:
            start = index
        continued = line.rstrip().endswith("\\")
        pending.append(line.rstrip()[:-1] if continued else line)
        if not continued:
            out[start] = " ".join(pending)
            pending = []
    if pending:
        out[start] = " ".join(pending)
    return out


def torch_source_problem(text: str) -> str | None:
    """Why packages installed by ``text`` could pull a CUDA torch: it installs from PyPI with
    neither a ROCm wheel index nor a base image that already holds ROCm torch, or installs a
    lock that holds CUDA builds."""
    locked = lock_install_problem(text)
    if locked:
        return locked
    if not _PIP_INSTALL.search(text) or _WHEEL_ROCM.search(text):
        return None
    if _ROCM_TORCH_IMAGE.search(text):
        return None
    return (
        "it installs Python packages without a ROCm wheel index on a base image without ROCm "
        "torch, so torch would come from PyPI as a CUDA build; add `--index-url "
        "https://download.pytorch.org/whl/rocmX.Y` for torch"
    )


@dataclass(slots=True)
class Variant:
    """A ROCm sibling for one file: its text, or why there is none; ``error`` when writing failed."""

    original: str
    relative: str
    text: str | None = None
    reason: str = ""
    error: str | None = None


def sibling_name(relative: str) -> str:
    """``Dockerfile`` → ``Dockerfile.rocm``, ``requirements.txt`` → ``requirements-rocm.txt``; a
    name naming CUDA or NVIDIA gets ``rocm`` in that place (``Dockerfile.cuda`` →
    ``Dockerfile.rocm``, ``requirements-cu121.txt`` → ``requirements-rocm.txt``)."""
    directory, _, name = relative.rpartition("/")
    renamed, count = _NVIDIA_NAME.subn("rocm", name, count=1)
    stem, dot, extension = name.rpartition(".")
    if count:
        new = renamed
    elif dot and extension.lower() in ("txt", "in"):
        new = f"{stem}-rocm.{extension}"
    else:
        new = f"{name}.rocm"
    return f"{directory}/{new}" if directory else new


def wants_variant(messages: Sequence[str]) -> bool:
    """Whether fix withheld a vendor swap (or left an NVIDIA file) among these findings."""
    from migrator.engine.fix_policy import _SWAP_REASON

    return any(
        WITHHELD in message and (_SWAP_REASON in message or "this file is for NVIDIA" in message)
        for message in messages
    )


def rocm_versions_disagree(
    text: str, served: Callable[[str], tuple[str, ...] | None]
) -> str | None:
    """Why the ROCm versions in ``text`` (base image tag, wheel index, ``+rocm`` local versions,
    a pinned torch and the indexes that serve it) do not agree, or None; ``served`` gives the
    ROCm versions of the indexes serving a torch release (None: nothing known)."""
    found = {f"{m[0]}.{m[1]}" for m in _IMAGE_ROCM.findall(text)}
    wheels_full = set(_WHEEL_ROCM_FULL.findall(text))
    wheels = {".".join(w.split(".")[:2]) for w in wheels_full}
    if found and wheels and found != wheels or len(found | wheels) > 1:
        return f"its ROCm versions disagree ({', '.join(sorted(found | wheels))})"
    for version in _TORCH_PIN.findall(text):
        indexes = served(version)
        if indexes is not None and wheels_full and not wheels_full & set(indexes):
            have = ", ".join(indexes) if indexes else "none"
            return (
                f"torch {version} is not on the ROCm {', '.join(sorted(wheels_full))} wheel "
                f"index (ROCm indexes serving it: {have})"
            )
    return None


def plan_variant(
    relative: str, kind: str, text: str, rules: Sequence[type[Rule]], facts: ProjectFacts
) -> Variant | None:
    """The ROCm sibling of one file whose vendor swap was withheld (None: nothing to swap)."""
    from migrator.engine.context import FileInputs
    from migrator.engine.engine import analyze
    from migrator.engine.registry import all_rules
    from migrator.knowledge.torch_builds import indexes_serving

    target = sibling_name(relative)
    # a variant is written for ROCm: the fixes that swap NVIDIA artefacts apply
    inputs = FileInputs(facts=facts, vendor_swap=True)
    analysis = analyze(text, target, kind, rules, fix=Applicability.UNSAFE, inputs=inputs)
    if analysis.new_text is None:
        return None
    # every rule judges what is left, whatever the selection
    left = analyze(analysis.new_text, target, kind, all_rules(), inputs=inputs).findings
    blocking = [f for f in left if f.severity >= Severity.WARNING]
    if blocking:
        first = blocking[0]
        return Variant(
            relative,
            target,
            reason=(
                f"the ROCm variant would still need manual work ({len(blocking)} finding(s); "
                f"line {first.line} {first.rule}: {first.message.split(';')[0]})"
            ),
        )
    disagreement = rocm_versions_disagree(analysis.new_text, indexes_serving)
    problem = (
        disagreement
        or torch_source_problem(analysis.new_text)
        or nvidia_only_piece(analysis.new_text)
    )
    if problem:
        return Variant(relative, target, reason=problem)
    new_text = analysis.new_text
    if kind == "dockerfile":
        new_text = without_vendor_comments(text, new_text)
    return Variant(relative, target, text=new_text)


#: Pieces of an NVIDIA build that a ROCm variant cannot carry over: (pattern, why). Each is
#: either a component only NVIDIA's images ship (HPC-X, TensorRT) or a setting naming NVIDIA
#: GPU architectures, whose ROCm counterpart needs the AMD targets only the user knows.
_NVIDIA_ONLY_PIECES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"/opt/hpcx\b|\bhpcx\b", re.IGNORECASE),
        "HPC-X (`/opt/hpcx`) ships only in NVIDIA's NGC images: the ROCm image has no such path",
    ),
    (
        re.compile(r"\b(?:torch[_-]tensorrt|tensorrt|trtexec|libnvinfer\w*)\b", re.IGNORECASE),
        "TensorRT has no ROCm build (its engines do not run on AMD GPUs; MIGraphX is the ROCm "
        "inference compiler)",
    ),
    (
        re.compile(r"\b(?:TORCH_CUDA_ARCH_LIST|CMAKE_CUDA_ARCHITECTURES|CUDA_ARCH_LIST)\b"),
        "it sets the NVIDIA GPU architectures to build for (`TORCH_CUDA_ARCH_LIST`), which ROCm "
        'builds ignore: set `PYTORCH_ROCM_ARCH` to the AMD targets you run (e.g. "gfx90a;gfx942")',
    ),
    (
        re.compile(r"/usr/local/cuda\b"),
        "it uses `/usr/local/cuda`, which a ROCm image does not have (ROCm is under `/opt/rocm`)",
    ),
)


def nvidia_only_piece(text: str) -> str | None:
    """Why a ROCm variant of ``text`` cannot be written: the first NVIDIA-only piece it still
    holds outside comments (with the line), or None."""
    for number, line in enumerate(text.splitlines(), start=1):
        code = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
        for pattern, why in _NVIDIA_ONLY_PIECES:
            if pattern.search(code):
                return f"line {number}: {why}"
    return None


_INCLUDE = re.compile(
    r"(?:^|\s)(?:-r|--requirement|-c|--constraint)(?:\s+|=)[\"']?([^\s\"';&|]+)", re.MULTILINE
)


def included_files(text: str) -> list[str]:
    """The requirement files ``text`` installs or constrains with (``-r requirements.txt``,
    ``--constraint=c.txt``, in a requirements file or a ``pip install`` command)."""
    return [match for match in _INCLUDE.findall(text) if "$" not in match]


def resolve_include(root: Path, referrer: str, included: str) -> str | None:
    """The project path of a file ``referrer`` includes: beside the referrer (pip's rule for
    requirements files), else from the root (a Dockerfile's usual build context)."""
    folder = referrer.rpartition("/")[0]
    for base in (folder, ""):
        candidate = Path(base, included).as_posix() if base else Path(included).as_posix()
        try:
            resolved = (root / candidate).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            continue
        if (root / resolved).is_file():
            return resolved
    return None


def include_problem(
    root: Path,
    variant: Variant,
    needs_rocm: Callable[[str], str | None],
    siblings: Mapping[str, str],
) -> str | None:
    """Point ``variant``'s includes at the ROCm siblings planned for them; say why there can be
    no variant when an included file (followed through its own includes) still installs NVIDIA
    builds and has no sibling."""
    from migrator.files.sources import read_project_text

    assert variant.text is not None
    text = variant.text
    for included in dict.fromkeys(included_files(text)):
        resolved = resolve_include(root, variant.original, included)
        if resolved is None:
            continue
        if resolved in siblings:  # `-r requirements.txt` → `-r requirements-rocm.txt`
            sibling = siblings[resolved].rpartition("/")[2]
            renamed = included.rpartition("/")[0]
            new_name = f"{renamed}/{sibling}" if renamed else sibling
            text = re.sub(rf"(?<=[\s=\"']){re.escape(included)}(?=[\s\"';&|]|$)", new_name, text)
            continue
        chain, seen = [resolved], {resolved}
        while chain:
            current = chain.pop()
            why = needs_rocm(current)
            if why:
                via = "" if current == resolved else f", which includes {current}"
                return f"it installs {resolved}{via}, which {why}; make its ROCm variant first"
            for nested in included_files(read_project_text(root / current) or ""):
                found = resolve_include(root, current, nested)
                if found is not None and found not in seen:
                    seen.add(found)
                    chain.append(found)
    variant.text = text
    return None


def rocm_versions_across(variants: Sequence[Variant]) -> str | None:
    """Why the variants of one project cannot all be written: they would use different ROCm
    releases (base image tags, wheel indexes, ``+rocm`` builds), or None."""
    versions: dict[str, set[str]] = {}
    for variant in variants:
        if variant.text is None:
            continue
        found = {f"{m[0]}.{m[1]}" for m in _IMAGE_ROCM.findall(variant.text)}
        found |= {f"{m[0]}.{m[1]}" for m in _WHEEL_ROCM.findall(variant.text)}
        if found:
            versions[variant.relative] = found
    if len(set().union(*versions.values()) if versions else set()) <= 1:
        return None
    listed = "; ".join(f"{path}: ROCm {', '.join(sorted(v))}" for path, v in versions.items())
    return (
        f"the project's ROCm variants would use different ROCm releases ({listed}); "
        "one project needs one ROCm release"
    )


_FROM_ROCM = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*rocm/", re.IGNORECASE)
_VENDOR_WORD = re.compile(r"\b(?:NGC|NVIDIA|nvcr\.io|CUDA)\b", re.IGNORECASE)


def without_vendor_comments(original: str, new: str) -> str:
    """``new`` without the comment lines directly above a ``FROM`` it switched to a ROCm image
    that name the NVIDIA image it replaced (``# Start with NGC container``): they describe the
    original, not the sibling."""
    before = set(original.splitlines())
    lines = new.splitlines(keepends=True)
    drop: set[int] = set()
    for index, line in enumerate(lines):
        if not _FROM_ROCM.match(line) or line.rstrip("\r\n") in before:
            continue
        above = index - 1
        while above >= 0 and lines[above].lstrip().startswith("#"):
            if _VENDOR_WORD.search(lines[above]):
                drop.add(above)
            above -= 1
    return "".join(line for index, line in enumerate(lines) if index not in drop)


def write_variants(root: Path, variants: Sequence[Variant]) -> None:
    """Create each planned sibling through the write policy; a refusal is kept as its error."""
    from migrator.files.writer import WriteRefused, create_new

    for variant in variants:
        if variant.text is None:
            continue
        try:
            create_new(root, variant.relative, variant.text, variant.original)
        except WriteRefused as error:
            variant.error = str(error)
