"""The role and location tier of a project file, and the role a path has by its name alone:
the vocabulary the readiness score weighs a problem's location by."""

from __future__ import annotations

import re
from pathlib import Path

from migrator.files.paths import (
    is_benchmark_file,
    is_benchmark_folder,
    is_test_file,
    is_test_folder,
)

#: Location tiers, most weight first.
CORE = "core"
#: A public module of a package that importing the package or running an entry point does not
#: load: weighs as core, but an import crash there only breaks the code that imports it.
PUBLIC = "public"
#: Code the entry points reach only through imports inside functions or conditions: reachable,
#: but loaded on a path rather than at import.
LAZY = "lazy"
DEPLOY = "deploy"
PERIPHERAL = "peripheral"

#: Optional extras (``requirements-<feature>.txt``) and nested sub-projects (a folder with its
#: own ``pyproject.toml`` or ``setup.py``): separate deliverables, shown apart.
OPTIONAL = "optional"
SUBPROJECT = "subproject"
#: Code a user turns on: plugin and integration modules, registered alternatives chosen by
#: configuration, default-off branches, uses of a package the file imports only when installed.
OPT_IN = "opt-in"
#: Roles of files outside the core, by tier.
PERIPHERAL_ROLES = (
    "test",
    "example",
    "benchmark",
    "docs",
    "tooling",
    OPTIONAL,
    OPT_IN,
    SUBPROJECT,
    "unreachable",
)
#: Folders of a package that hold plugins or integrations a user enables by configuration.
_PLUGIN_DIRS = frozenset({"integrations", "plugins", "contrib", "extensions"})

_EXAMPLE_DIRS = frozenset(
    {
        "examples",
        "example",
        "demo",
        "demos",
        "tutorials",
        "tutorial",
        "notebooks",
        "cookbook",
        "samples",
        "sample",
        "playground",
        "getting-started",
        "end-to-end-use-cases",
        "3p-integrations",
        "contrib",
        "research",
    }
)
_DOC_DIRS = frozenset({"docs", "doc", "documentation", "website"})
_TOOLING_DIRS = frozenset(
    {
        ".github",
        ".gitlab",
        ".circleci",
        ".buildkite",
        "ci",
        ".ci",
        "tools",
        "scripts",
        "dev",
        "utils_dev",
    }
)
_NATIVE_SUFFIXES = frozenset({".cu", ".cuh", ".cpp", ".cc", ".c", ".h", ".hpp", ".hip", ".cxx"})
_DEP_FILES = re.compile(
    r"^(?:requirements[\w.-]*\.(?:txt|in)|pyproject\.toml|setup\.py|setup\.cfg|environment[\w.-]*\.ya?ml|Pipfile|CMakeLists\.txt)$",
    re.IGNORECASE,
)
#: Names of requirement files that hold the main dependency set (others are optional extras).
_MAIN_REQUIREMENTS = frozenset(
    {"base", "main", "core", "common", "runtime", "prod", "install", "default", "requirements"}
)
_DEV_REQUIREMENTS = re.compile(r"(?:^|[-_.])(?:dev|test|tests|docs?|lint|ci)(?:[-_.]|$)", re.I)
#: Conda environment files: a recipe that builds an environment, deployed like a container.
_ENVIRONMENT_FILES = re.compile(r"^environment[\w.-]*\.ya?ml$", re.I)
_CONTAINER_FILES = re.compile(
    r"(?:^|[-_.])dockerfile(?:$|[-_.])|^(?:docker-)?compose[\w.-]*\.ya?ml$|\.dockerfile$", re.I
)


def is_container_file(path: str) -> bool:
    """A Dockerfile or compose file, by name."""
    return bool(_CONTAINER_FILES.search(path.rsplit("/", 1)[-1]))


def is_environment_file(path: str) -> bool:
    """A conda environment file, by name."""
    return bool(_ENVIRONMENT_FILES.match(path.rsplit("/", 1)[-1]))


def tier(role: str) -> str:
    """The location tier of a role."""
    if role in (CORE, PUBLIC, LAZY):
        return CORE
    if role == DEPLOY:
        return DEPLOY
    return PERIPHERAL


def path_role(path: str) -> str | None:
    """The role a path has by its name alone, or None for code whose role depends on imports."""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    lowered = [part.lower() for part in parts[:-1]]
    if lowered and lowered[0] in (".github", ".gitlab", ".circleci", ".buildkite"):
        return "tooling"  # the project's own CI: not a path users deploy through
    if _CONTAINER_FILES.search(name) or "docker" in lowered or _ENVIRONMENT_FILES.match(name):
        return DEPLOY
    for part in lowered:
        if is_test_folder(part):
            return "test"
        if is_benchmark_folder(part):
            return "benchmark"
        if part in _EXAMPLE_DIRS:
            return "example"
        if part in _DOC_DIRS:
            return "docs"
    for part in lowered:
        if part in _TOOLING_DIRS:
            return "tooling"
    stem = name.lower()
    if is_test_file(stem):
        return "test"
    if is_benchmark_file(stem):
        return "benchmark"
    if stem.endswith((".ipynb", ".md", ".rst", ".qmd")):
        return "example" if stem.endswith(".ipynb") else "docs"
    if _DEP_FILES.match(name) or (lowered[-1:] == ["requirements"] and name.endswith(".txt")):
        base = name.rsplit(".", 1)[0]
        if _DEV_REQUIREMENTS.search(base):
            return "tooling"
        extra = re.sub(r"^requirements[-_.]?", "", base.lower())
        if extra and extra not in _MAIN_REQUIREMENTS and name.lower() != "setup.py":
            if not _DEP_FILES.match(name) or name.lower().startswith("requirements"):
                return OPTIONAL  # requirements-<feature>.txt, requirements/<feature>.txt
        return CORE
    if stem.endswith((".sh", ".bash", ".zsh")):
        return DEPLOY if not lowered else "tooling"
    if Path(name).suffix.lower() in _NATIVE_SUFFIXES:
        return CORE
    if not stem.endswith(".py"):
        return CORE
    return None


def is_requirements_file(path: str) -> bool:
    """A ``requirements*.txt``/``requirements*.in`` file, by name."""
    name = path.rsplit("/", 1)[-1]
    return bool(_DEP_FILES.match(name)) and name.lower().startswith("requirements")


def plugin_module(relative: str) -> bool:
    """A module inside a package's ``integrations``/``plugins``/``contrib``/``extensions``
    folder (loaded when a user enables it), not the folder's own ``__init__``."""
    parts = relative.split("/")
    return any(part in _PLUGIN_DIRS for part in parts[1:-1])
