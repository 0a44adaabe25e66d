"""Find the files to scan under each root: honour .gitignore files, skip virtual environments,
build and cache folders, never leave the root through a symlink, stop at a time budget, and
tell each file's kind."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from migrator.files.config import DEFAULT_DISCOVERY_TIMEOUT
from migrator.files.gitignore import GitIgnore
from migrator.files.paths import VENDORED_FOLDERS, submodule_paths, vendored, vendored_folder
from migrator.files.sources import file_type, read_project_text

DEFAULT_EXCLUDED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".env",
        "env",
        ".tox",
        ".nox",
        "site-packages",
        "dist-packages",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".migrate_cache",
        "build",
        "dist",
        ".eggs",
        ".ipynb_checkpoints",
        ".cache",
        ".idea",
        ".vscode",
    }
)

_REQUIREMENTS = re.compile(r"^(requirements|constraints)([-_.\w]*)\.(txt|in)$", re.IGNORECASE)
_COMPOSE = re.compile(r"^(docker-)?compose([-_.\w]*)\.ya?ml$", re.IGNORECASE)
_CONDA = re.compile(r"^(environment|conda)([-_.\w]*)\.ya?ml$", re.IGNORECASE)


#: C/C++/CUDA sources (``cuda`` kind): kernels and the host code around them.
CUDA_SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".h", ".hpp", ".hh", ".hxx", ".inl")
#: Folders holding vendored copies of other projects' C++ (kept for callers of this name).
VENDORED_SOURCE_DIRS = VENDORED_FOLDERS
#: Kinds of file left out inside vendored code (another project's kernels and builds).
_NATIVE_KINDS = frozenset({"cuda", "cmake"})


def file_kind(relative: str) -> str | None:
    """The kind of file a rule family reads, from its path; None when nothing reads it."""
    name = relative.rsplit("/", 1)[-1]
    lower = name.lower()
    if lower.endswith((".py", ".pyi")):
        return "python"
    if lower.endswith(CUDA_SOURCE_SUFFIXES):
        return None if vendored(relative) else "cuda"
    if lower == "cmakelists.txt" or lower.endswith(".cmake"):
        return None if vendored(relative) else "cmake"
    if lower.endswith(".ipynb"):
        return "notebook"
    if _REQUIREMENTS.match(name) or (
        "/requirements/" in f"/{relative}" and lower.endswith((".txt", ".in"))
    ):
        return "requirements"
    if lower == "pyproject.toml":
        return "pyproject"
    if lower == "setup.cfg":
        return "setupcfg"
    if (
        lower in {"dockerfile", "containerfile"}
        # ``Dockerfile.rocm``, ``Dockerfile_amd``, ``Dockerfile-cuda``: one image of several
        or lower.startswith(("dockerfile.", "dockerfile_", "dockerfile-", "containerfile."))
        or lower.endswith((".dockerfile", ".containerfile"))
    ):
        return "dockerfile"
    if _COMPOSE.match(name):
        return "compose"
    if lower in {"cog.yaml", "cog.yml"}:
        return "cog"
    if _CONDA.match(name):
        return "conda"
    if lower.endswith((".sh", ".bash", ".zsh")) or lower in {"makefile", ".envrc"}:
        return "shell"
    if lower.endswith((".yml", ".yaml")) and (
        relative.startswith(".github/workflows/")
        or lower in {".gitlab-ci.yml", "azure-pipelines.yml", ".travis.yml"}
        or relative.startswith(".circleci/")
        or relative.startswith(".buildkite/")
    ):
        return "ci-yaml"
    if lower.endswith((".md", ".markdown")) and _documentation(relative, lower):
        return None if vendored(relative) else "markdown"
    return None


#: Top-level Markdown files that hold no commands for users to run.
_NOT_USER_DOCS = re.compile(
    r"^(changelog|changes|history|news|release|license|licence|code_of_conduct|security|"
    r"contributing|contributors|authors|citation|support|governance|maintainers)",
    re.IGNORECASE,
)


def _documentation(relative: str, lower: str) -> bool:
    """Whether a Markdown file is documentation users follow: a README or INSTALL anywhere, any
    page at the top level (PRETRAIN.md, GETTING_STARTED.md) but the changelog, licence and
    community files, and the pages of a ``docs``/``doc`` folder."""
    if lower.startswith(("readme", "install")):
        return True
    if "/" not in relative:
        return _NOT_USER_DOCS.match(lower) is None
    return relative.lower().startswith(("docs/", "doc/"))


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A file to scan: absolute path, path relative to the scanned root (with ``/``), kind."""

    path: Path
    relative: str
    kind: str


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A path that discovery could not read (permission) or left out on purpose (broken link,
    loop, named pipe or device); one-line reason. Only the first kind leaves code unscanned."""

    relative: str
    reason: str
    unscanned: bool = False


def _load_gitignore(directory: Path, deadline: float) -> GitIgnore | None:
    """The folder's ``.gitignore``, read no further than discovery's ``deadline``."""
    text = read_project_text(directory / ".gitignore")
    if text is None:
        return None
    return GitIgnore.from_lines(text.splitlines(), deadline)


#: Why a symlinked folder whose target leaves the scanned root is not walked (a link to ``/``
#: would have the whole file system scanned).
OUTSIDE_FOLDER = "symlink to a folder outside the project; not followed"
#: Why a symlinked file whose target leaves the scanned root is never read (it could be a
#: key, or ``/etc/shadow``).
OUTSIDE_FILE = "symlink to a file outside the project; not read"


def discover(
    root: Path,
    *,
    exclude: Sequence[str] = (),
    respect_gitignore: bool = True,
    budget: float = DEFAULT_DISCOVERY_TIMEOUT,
) -> Iterator[SourceFile | Unreadable]:
    """Yield every scannable file under ``root`` (or ``root`` itself when it is a file). A
    symlinked folder is never walked (one inside the root is walked at its real path, one
    that leaves it not at all) and a symlinked file that leaves the root is never read. Past
    ``budget`` seconds the walk stops with an unscanned ``Unreadable`` saying so."""
    if root.is_file():
        kind = file_kind(root.name)
        if kind is not None:
            yield SourceFile(root, root.name, kind)
        return
    if root.exists() and not root.is_dir():
        yield Unreadable(root.name, f"not a regular file ({file_type(root.stat().st_mode)})")
        return
    real_root = root.resolve()
    visited: set[tuple[int, int]] = set()
    submodules = submodule_paths(root)
    # Each stack entry: directory, its path relative to root, active gitignore specs with
    # bases, and whether it lies in vendored code (whose kernels and builds are left out).
    stack: list[tuple[Path, str, list[tuple[str, GitIgnore]], bool]] = [(root, "", [], False)]
    deadline = time.monotonic() + budget
    while stack:
        directory, relative_dir, specs, inside_vendored = stack.pop()
        if time.monotonic() > deadline:
            yield _stopped(relative_dir, budget)
            return
        try:
            stat = directory.stat()
        except OSError as error:
            yield Unreadable(
                relative_dir or ".", f"cannot read directory: {error.strerror}", unscanned=True
            )
            continue
        key = (stat.st_dev, stat.st_ino)
        if key in visited:
            yield Unreadable(relative_dir, "symlink loop or repeated directory; not followed")
            continue
        visited.add(key)
        if respect_gitignore:
            spec = _load_gitignore(directory, deadline)
            if spec is not None:
                specs = [*specs, (relative_dir, spec)]
        try:
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError as error:
            yield Unreadable(
                relative_dir or ".", f"cannot list directory: {error.strerror}", unscanned=True
            )
            continue
        inside_vendored = inside_vendored or vendored_folder(
            relative_dir, (entry.name for entry in entries), submodules
        )
        subdirs = []
        for entry in entries:
            relative = f"{relative_dir}/{entry.name}" if relative_dir else entry.name
            if time.monotonic() > deadline:
                yield _stopped(relative, budget)
                return
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if entry.name in DEFAULT_EXCLUDED_DIRS or _is_virtualenv(Path(entry.path)):
                    continue
                if _ignored(relative + "/", specs) or _excluded(relative, exclude):
                    continue
                if entry.is_symlink():
                    yield Unreadable(relative, _folder_link_reason(Path(entry.path), real_root))
                    continue
                subdirs.append((Path(entry.path), relative, specs, inside_vendored))
                continue
            kind = file_kind(relative)
            if kind in _NATIVE_KINDS and inside_vendored:
                continue
            if kind is None or _ignored(relative, specs) or _excluded(relative, exclude):
                continue
            linked = entry.is_symlink()
            if linked and not os.path.exists(entry.path):
                yield Unreadable(relative, "broken symlink")
                continue
            inside = linked and _inside(Path(entry.path), real_root)
            if inside:
                yield Unreadable(relative, "symlink to a file inside the project; scanned there")
                continue
            special = _special_file(entry)  # a link to /dev/zero is named for what it is
            if special is not None:
                yield Unreadable(relative, special)
                continue
            if linked:
                yield Unreadable(relative, OUTSIDE_FILE)
                continue
            yield SourceFile(Path(entry.path), relative, kind)
        stack.extend(reversed(subdirs))


def _special_file(entry: os.DirEntry[str]) -> str | None:
    """Why a named pipe, socket or device is left out (reading one could block forever)."""
    try:
        if entry.is_file():
            return None
        mode = entry.stat().st_mode
    except OSError:
        return None  # the read reports it, per file
    return f"not a regular file ({file_type(mode)})"


def _stopped(relative: str, budget: float) -> Unreadable:
    """Where discovery gave up, past its time budget: the scan is incomplete."""
    return Unreadable(
        relative or ".",
        f"discovery stopped after the discovery time budget ({budget:g} s); what it had not "
        "reached yet was not scanned ([tool.migrate] discovery-timeout)",
        unscanned=True,
    )


def _folder_link_reason(link: Path, real_root: Path) -> str:
    """Why a symlinked folder is not followed: inside the root its files are scanned (and
    fixed) once, at their real path; outside it, nothing is walked."""
    if not _inside(link, real_root):
        return OUTSIDE_FOLDER
    try:
        if link.parent.resolve().is_relative_to(link.resolve()):
            return "symlink loop; not followed"
    except (OSError, RuntimeError):
        pass
    return "symlink to a folder inside the project; scanned at its real path"


def _inside(path: Path, real_root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(real_root)
    except (OSError, RuntimeError):
        return False


def _is_virtualenv(path: Path) -> bool:
    try:
        return (path / "pyvenv.cfg").exists()
    except OSError:  # an unreadable directory is reported when it is listed
        return False


def _ignored(relative: str, specs: list[tuple[str, GitIgnore]]) -> bool:
    for base, spec in specs:
        if base:
            if not relative.startswith(base + "/"):
                continue
            local = relative[len(base) + 1 :]
        else:
            local = relative
        if spec.match_file(local):
            return True
    return False


def _excluded(relative: str, patterns: Sequence[str]) -> bool:
    from migrator.files.paths import glob_matches

    return any(glob_matches(relative, pattern) for pattern in patterns)


def is_excluded(relative: str, patterns: Sequence[str]) -> bool:
    """Whether an ``exclude`` glob covers ``relative`` (also for files named explicitly)."""
    return _excluded(relative, patterns)
