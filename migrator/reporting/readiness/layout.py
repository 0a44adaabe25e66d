"""Where each file of a project sits: reachable from its entry points, or a test, example, etc.

The readiness score weighs a problem by where it is. Code reachable from the project's entry
points (console scripts, ``__main__`` modules, commands its README documents, root scripts and the
public modules of its packages) weighs fully; container and CI files are a deployment path;
tests, examples, benchmarks, docs, developer tooling and modules that nothing imports weigh less
and are shown apart. An existing AMD path (ROCm requirements, an AMD Dockerfile, vendor dispatch
in code, an AMD install guide) is recorded as evidence so the score can credit it.

Everything here reads files as text (a regex pass over import lines); nothing is imported or run.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from migrator.paths import (
    is_benchmark_file,
    is_benchmark_folder,
    is_test_file,
    is_test_folder,
)
from migrator.reporting.readiness.optin import NO_FACTS, FileFacts, file_facts
from migrator.sources import read_project_text
from migrator.tomlcompat import tomllib

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
#: Words of a module's name that make it the NVIDIA (or the AMD) implementation of a vendor pair.
_NVIDIA_MODULE = re.compile(r"(?:^|_)(?:nvidia|nvml|cuda)(?:_|$)", re.I)
_AMD_MODULE = re.compile(r"(?:^|_)(?:amd|rocm|hip|amdsmi)(?:_|$)", re.I)

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
#: CUDA kernel source suffixes: code a ROCm build must hipify and compile.
_KERNEL_SUFFIXES = (".cu", ".cuh")
#: At most this many directory entries are looked at for kernel sources.
_KERNEL_WALK_LIMIT = 200_000
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

_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(?P<base>\.*[\w.]*)[ \t]+import[ \t]+(?P<names>\([^)]*\)|[^\n#]+)"
    r"|import[ \t]+(?P<modules>[^\n#]+))",
    re.MULTILINE,
)
_DOC_COMMAND = re.compile(
    r"(?:python3?|torchrun|accelerate[ \t]+launch|deepspeed|uv[ \t]+run)(?:[ \t]+--?[\w.=-]+)*"
    r"[ \t]+(?:-m[ \t]+(?P<module>[\w.]+)|(?P<script>[\w./-]+\.py))"
)
#: A call by name (``name(``, ``obj.name(``), not a definition.
_CALL = re.compile(r"(?<!def )(?<![\w])(?:\w+\.)*?(\w+)\s*\(")
_CONSOLE_SCRIPT = re.compile(r"[\"']?[\w.-]+[\"']?\s*=\s*[\"']?(?P<target>[\w.]+)\s*:\s*[\w.]+")

#: Code that dispatches on the vendor or talks to ROCm tooling: an AMD path in the code.
_DISPATCH = re.compile(
    r"torch\.version\.hip|\bis_hip\w*\s*\(|\bis_rocm\w*|\bIS_ROCM\b|\bimport amdsmi\b|\bfrom amdsmi\b"
    r"|[\"'](?:rocm-smi|amd-smi)[\"']|\bROCM_(?:HOME|PATH)\b|\bhipcc\b|COMPUTE_BACKEND[^\n]*hip"
    r"|\bUSE_ROCM\b|__HIP_PLATFORM_AMD__"
)
#: Every alternative of ``_DISPATCH`` contains one of these words (a cheap test first: the
#: pattern has no literal prefix, so searching a large module with it alone is slow).
_DISPATCH_WORDS = ("hip", "HIP", "rocm", "ROCM", "amdsmi", "amd-smi")


def _dispatch_in(text: str) -> re.Match[str] | None:
    """The first vendor dispatch in ``text``, looking only at lines that name HIP, ROCm or
    amdsmi (every alternative of the pattern fits on one line)."""
    if not any(word in text for word in _DISPATCH_WORDS):
        return None
    for line in text.splitlines():
        if any(word in line for word in _DISPATCH_WORDS):
            match = _DISPATCH.search(line)
            if match:
                return match
    return None


_COMPUTE_IMPORT = re.compile(
    r"^[ \t]*(?:import|from)[ \t]+(?:torch|tensorflow|jax|cupy|numba|triton|paddle|mxnet|tinygrad)\b",
    re.MULTILINE,
)
_ROCM_INDEX = re.compile(r"download\.pytorch\.org/whl/rocm|repo\.radeon\.com|\+rocm\d", re.I)
_ROCM_IMAGE = re.compile(
    r"^\s*(?:ARG\s+\w+\s*=\s*|FROM\s+)(?:--platform=\S+\s+)?rocm/", re.I | re.M
)
_AMD_NAME = re.compile(r"(?:^|[-_./])(?:rocm|amd|hip)(?:$|[-_./\d])", re.I)


@dataclass(frozen=True, slots=True)
class Evidence:
    """One sign that the project already ships an AMD path."""

    kind: str
    path: str
    detail: str
    #: Packages (work-item subjects) this AMD path provides for: named in the AMD install guide,
    #: the ROCm requirements or the AMD container.
    covers: tuple[str, ...] = ()


@dataclass(slots=True)
class ProjectLayout:
    """File roles, entry points and AMD-path evidence of one project."""

    roles: dict[str, str] = field(default_factory=dict)
    entry_points: list[str] = field(default_factory=list)
    amd_path: list[Evidence] = field(default_factory=list)
    known: bool = True
    dispatch_files: frozenset[str] = frozenset()
    #: Line ranges (first, last) of optional dependency tables in build files
    #: (``[project.optional-dependencies]``, extras): a finding there is an optional extra.
    optional_lines: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    #: Whether reachable code imports a GPU compute framework (torch, jax, cupy, ...). A project
    #: that does not is a tool around the GPU (a monitor, a launcher), not a user of it.
    computes: bool = True
    #: The project's root, to read fallback and opt-in facts of files on demand (None: none).
    root: Path | None = None
    #: Facts read so far, by path (stored data gives them directly).
    known_facts: dict[str, FileFacts] = field(default_factory=dict, repr=False)
    #: Source of the modules the entry points and public modules reach (read once by the import
    #: analysis), and (built from it on first use) where each name is called.
    texts: dict[str, str] = field(default_factory=dict, repr=False)
    #: Why a module is opt-in, where the role alone does not say it (one alternative of a table).
    opt_in_modules: dict[str, str] = field(default_factory=dict)
    #: CUDA kernel sources (``.cu``, ``.cuh``) in core locations: GPU code the project builds
    #: itself, which runs on ROCm only through a HIP build of it.
    kernel_sources: tuple[str, ...] = ()
    call_index: dict[str, list[tuple[str, int]]] | None = field(default=None, repr=False)

    def callers(self, name: str) -> list[tuple[str, int]]:
        """(path, line) of every ``name(`` call in reachable code (core, lazy and public modules),
        from the text the import analysis already read: no file is read again."""
        if self.call_index is None:
            self.call_index = {}
            for relative, text in self.texts.items():
                if tier(self.role_of(relative)) != CORE:
                    continue
                line, seen = 1, 0
                for match in _CALL.finditer(text):
                    line += text.count("\n", seen, match.start())
                    seen = match.start()
                    self.call_index.setdefault(match.group(1), []).append((relative, line))
        return self.call_index.get(name, [])

    def facts(self, path: str) -> FileFacts:
        """Fallback and opt-in facts of one Python file (none without a root)."""
        if path in self.known_facts:
            return self.known_facts[path]
        if self.root is None or not path.endswith(".py"):
            return NO_FACTS
        if path not in self.known_facts:
            text = self.texts.get(path)
            if text is None:
                text = _read(self.root / path)
            self.known_facts[path] = file_facts(text, path.rsplit("/", 1)[-1])
        return self.known_facts[path]

    def falls_back(self, path: str, line: int) -> bool:
        """Whether a line sits in a ``try`` body whose handler goes on without the failing part."""
        return self.facts(path).falls_back(line)

    def role_of(self, path: str) -> str:
        """The role of a file: ``core``, ``deploy`` or one of ``PERIPHERAL_ROLES``."""
        role = self.roles.get(path)
        if role is not None:
            return role
        return path_role(path) or CORE

    def role_at(self, path: str, line: int) -> str:
        """The role of one line of a file: an optional extra inside an optional dependency
        table of a core build file, else the file's role."""
        role = self.role_of(path)
        if role == CORE and any(
            first <= line <= last for first, last in self.optional_lines.get(path, ())
        ):
            return OPTIONAL
        return role

    def tier_of(self, path: str) -> str:
        """``core`` (reachable code, public modules), ``deploy`` or ``peripheral``."""
        return tier(self.role_of(path))


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


def _module_names(relative: str, init_dirs: set[str]) -> list[str]:
    """Dotted names a Python file can be imported by (from the root, from ``src/``, and from
    the first folder above its package)."""
    parts = relative[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    names = []
    if parts:
        names.append(".".join(parts))
    if parts and parts[0] == "src" and len(parts) > 1:
        names.append(".".join(parts[1:]))
    # The package root: climb while the folder has an __init__.py.
    folder = relative.rsplit("/", 1)[0] if "/" in relative else ""
    start = len(folder.split("/")) if folder else 0
    while folder and folder in init_dirs:
        folder = folder.rsplit("/", 1)[0] if "/" in folder else ""
        start -= 1
    if 0 < start < len(parts):
        names.append(".".join(parts[start:]))
    return list(dict.fromkeys(names))


def _imports(text: str, module: str, is_package: bool, *, top_level: bool = False) -> Iterable[str]:
    """Dotted names imported by one module's source (absolute, relative resolved); with
    ``top_level``, only the unindented imports that run when the module is imported."""
    package = module if is_package else module.rpartition(".")[0]
    for match in _IMPORT.finditer(text):
        if top_level and match.group(0)[:1] in (" ", "\t"):
            continue
        if match.group("modules"):
            for part in match.group("modules").split(","):
                name = part.strip().split(" ")[0]
                if name:
                    yield name
            continue
        base = match.group("base") or ""
        dots = len(base) - len(base.lstrip("."))
        if dots:
            anchor = package.split(".") if package else []
            if dots > 1:
                anchor = anchor[: len(anchor) - (dots - 1)]
            rest = base[dots:]
            base = ".".join([*anchor, rest] if rest else anchor)
        if not base:
            continue
        yield base
        names = match.group("names").strip("() \t\n")
        for part in names.split(","):
            name = part.strip().split(" ")[0]
            if name and name != "*":
                yield f"{base}.{name}"


def _console_targets(root: Path) -> list[str]:
    """Modules named by console-script entry points (pyproject, setup.cfg, setup.py)."""
    targets: list[str] = []
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(read_project_text(pyproject) or "")
        except tomllib.TOMLDecodeError:
            data = {}
        project = data.get("project", {})
        if isinstance(project, dict):
            for key in ("scripts", "gui-scripts"):
                table = project.get(key, {})
                if isinstance(table, dict):
                    targets.extend(
                        str(value).split(":")[0].strip()
                        for value in table.values()
                        if isinstance(value, str)
                    )
        poetry = (
            data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
        )
        if isinstance(poetry, dict) and isinstance(poetry.get("scripts"), dict):
            targets.extend(
                str(value).split(":")[0].strip()
                for value in poetry["scripts"].values()
                if isinstance(value, str)
            )
    for name in ("setup.py", "setup.cfg"):
        path = root / name
        if not path.is_file():
            continue
        text = _read(path)
        if "console_scripts" not in text and "entry_points" not in text:
            continue
        targets.extend(match.group("target") for match in _CONSOLE_SCRIPT.finditer(text))
    return targets


def _read(path: Path, limit: int = 2_000_000) -> str:
    return (read_project_text(path) or "")[:limit]


def _documented(root: Path, docs: Iterable[str]) -> tuple[list[str], list[str], str]:
    """Modules (``python -m``) and scripts (``python x.py``) the README and docs tell users to
    run, and the docs' text (to see which container files they point users to)."""
    modules: list[str] = []
    scripts: list[str] = []
    texts: list[str] = []
    for relative in docs:
        text = _read(root / relative, 400_000)
        texts.append(text)
        for match in _DOC_COMMAND.finditer(text):
            if match.group("module"):
                modules.append(match.group("module"))
            elif match.group("script"):
                scripts.append(match.group("script").lstrip("./"))
    return modules, scripts, "\n".join(texts)


def _deployed(relative: str, docs_text: str) -> bool:
    """Whether a container file is a path users deploy through: at the root, or its file or
    folder named in the README or docs (else it is the project's own build or CI tooling)."""
    if "/" not in relative:
        return True
    folder = relative.rsplit("/", 1)[0]
    return relative in docs_text or f"{folder}/" in docs_text or f"{folder}`" in docs_text


def analyze(root: Path, paths: Iterable[str]) -> ProjectLayout:
    """The layout of the project at ``root`` whose files (relative, ``/``-separated) are ``paths``."""
    all_paths = sorted(set(paths))
    docs = _doc_files(root)
    doc_modules, doc_scripts, docs_text = _documented(root, docs)
    documented = set(doc_scripts)
    roles: dict[str, str] = {}
    python: list[str] = []
    nested = sorted(
        {
            relative.rsplit("/", 1)[0]
            for relative in all_paths
            if "/" in relative
            and relative.rsplit("/", 1)[1] in ("pyproject.toml", "setup.py")
            and path_role(relative) not in PERIPHERAL_ROLES
        }
    )
    for relative in all_paths:
        role = path_role(relative)
        if role not in PERIPHERAL_ROLES and any(
            relative.startswith(f"{folder}/") for folder in nested
        ):
            roles[relative] = SUBPROJECT
            continue
        if role is None or (relative in documented and relative.endswith(".py")):
            python.append(relative)  # a script the docs tell users to run is an entry point
        elif role == DEPLOY and not _deployed(relative, docs_text):
            roles[relative] = "tooling"
        else:
            roles[relative] = role
    init_dirs = {p.rsplit("/", 1)[0] for p in all_paths if p.endswith("/__init__.py")}
    by_name: dict[str, str] = {}
    names_of: dict[str, list[str]] = {}
    for relative in python:
        names = _module_names(relative, init_dirs)
        names_of[relative] = names
        for name in names:
            by_name.setdefault(name, relative)
    # Entry points.
    entries: list[str] = []
    for target in [*_console_targets(root), *doc_modules]:
        for candidate in (target, f"{target}.__main__"):
            if candidate in by_name:
                entries.append(by_name[candidate])
    known = set(python)
    entries.extend(script for script in doc_scripts if script in known)
    public: list[str] = []
    for relative in python:
        parts = relative.split("/")
        if parts[-1] == "__main__.py" or (len(parts) == 1 and parts[0] not in ("setup.py",)):
            entries.append(relative)
        elif _is_public_package_module(relative, init_dirs):
            if (
                parts[-1] == "__init__.py"
                and relative.rsplit("/", 2)[0] not in init_dirs
                and (len(parts) == 2 or (len(parts) == 3 and parts[0] == "src"))
            ):
                entries.append(relative)  # ``import package`` runs its __init__
            else:
                public.append(relative)
    entries = list(dict.fromkeys(entries))
    texts: dict[str, str] = {}
    eager = _closure(root, entries, set(), texts, names_of, by_name, init_dirs, top_level=True)
    lazy = _closure(root, entries, set(), texts, names_of, by_name, init_dirs) - eager
    api = _closure(root, public, eager | lazy, texts, names_of, by_name, init_dirs)
    computes = any(_COMPUTE_IMPORT.search(texts[relative]) for relative in eager | lazy | api)
    for relative in python:
        if relative in eager:
            roles[relative] = CORE
        elif relative in lazy:
            roles[relative] = LAZY
        else:
            roles[relative] = PUBLIC if relative in api else "unreachable"
        if roles[relative] in (LAZY, PUBLIC) and _plugin_module(relative):
            roles[relative] = OPT_IN
    alternatives = _mapped_alternatives(texts)
    for relative in alternatives:
        if roles.get(relative) in (LAZY, PUBLIC):
            roles[relative] = OPT_IN
    evidence_roles = {**dict.fromkeys(docs, "docs"), **roles}
    dispatch = frozenset(
        relative
        for relative, role in roles.items()
        if tier(role) == CORE and relative in texts and _dispatch_in(texts[relative])
    ) | _vendor_pairs(python)
    optional_lines = {
        relative: ranges
        for relative, role in roles.items()
        if role == CORE
        and relative.rsplit("/", 1)[-1] in ("pyproject.toml", "setup.cfg")
        and (ranges := optional_tables(_read(root / relative, 2_000_000)))
    }
    return ProjectLayout(
        roles,
        sorted([*entries, *public]),
        amd_evidence(root, evidence_roles, texts),
        dispatch_files=dispatch,
        computes=computes,
        optional_lines=optional_lines,
        root=root,
        texts=texts,
        opt_in_modules={
            relative: why for relative, why in alternatives.items() if roles[relative] == OPT_IN
        },
        kernel_sources=_kernel_sources(root, nested),
    )


def _kernel_sources(root: Path, nested: Iterable[str]) -> tuple[str, ...]:
    """CUDA kernel sources in core locations: not in tests, examples, benchmarks, docs or tooling
    (by path), not in a nested sub-project, not in a plugin folder; hidden, excluded and build
    folders are not entered and symlinks are not followed."""
    from migrator.discovery import DEFAULT_EXCLUDED_DIRS

    subprojects = tuple(f"{folder}/" for folder in nested)
    found: list[str] = []
    seen = 0
    for directory, folders, files in os.walk(root):
        folders[:] = sorted(
            name
            for name in folders
            if not name.startswith(".") and name not in DEFAULT_EXCLUDED_DIRS
        )
        seen += len(folders) + len(files)
        if seen > _KERNEL_WALK_LIMIT:
            break
        base = Path(directory).relative_to(root).as_posix()
        for name in files:
            if not name.lower().endswith(_KERNEL_SUFFIXES):
                continue
            relative = name if base == "." else f"{base}/{name}"
            if (
                path_role(relative) == CORE
                and not relative.startswith(subprojects)
                and not _plugin_module(relative)
            ):
                found.append(relative)
    return tuple(sorted(found))


#: A module-level table from names to classes or functions, one entry a line:
#: ``QUANTIZERS = {"gguf": GGUFQuantizer, "torchao": TorchAoQuantizer, ...}``.
_NAME_TABLE = re.compile(
    r"^(?P<table>[A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=[ \t]*\{[ \t]*\n"
    r"(?P<body>(?:[ \t]+[\"'][^\"'\n]+[\"'][ \t]*:[ \t]*[A-Za-z_][\w.]*[ \t]*,?[ \t]*(?:#[^\n]*)?\n)+)"
    r"[ \t]*\}",
    re.MULTILINE,
)
_TABLE_VALUE = re.compile(
    r":[ \t]*(?:[A-Za-z_]\w*\.)*(?P<name>[A-Za-z_]\w*)[ \t]*,?[ \t]*(?:#.*)?$"
)
_TOP_DEFINITION = re.compile(
    r"^(?:class|def|async[ \t]+def)[ \t]+(?P<name>[A-Za-z_]\w*)", re.MULTILINE
)
#: A table with at least this many alternatives, each in a module of its own, selects one by name.
_MIN_ALTERNATIVES = 3


def _mapped_alternatives(texts: Mapping[str, str]) -> dict[str, str]:
    """Modules that hold one of several alternatives a name table selects by configuration
    (``AUTO_QUANTIZER_MAPPING = {"gguf": GGUFQuantizer, ...}``), and the other modules of that
    alternative's own sub-package, with why each is opt-in. A table counts when its values are
    defined in at least three different modules; an alternative's sub-package is the folder of
    its module when every alternative has a folder of its own."""
    defined: dict[str, list[str]] = {}
    for relative, text in texts.items():
        for match in _TOP_DEFINITION.finditer(text):
            defined.setdefault(match.group("name"), []).append(relative)
    found: dict[str, str] = {}
    for relative, text in texts.items():
        for table in _NAME_TABLE.finditer(text):
            names = {
                value.group("name")
                for line in table.group("body").splitlines()
                if (value := _TABLE_VALUE.search(line))
            }
            homes = {
                defined[name][0]
                for name in names
                if len(defined.get(name, ())) == 1 and defined[name][0] != relative
            }
            if len(homes) < _MIN_ALTERNATIVES:
                continue
            why = f"one of {len(homes)} alternatives selected by name from `{table.group('table')}`"
            folders = {home.rpartition("/")[0] for home in homes}
            own_folders = len(folders) == len(homes) and all(
                folder.rpartition("/")[0] == next(iter(folders)).rpartition("/")[0]
                for folder in folders
            )
            for home in homes:
                found.setdefault(home, why)
                if own_folders:
                    folder = home.rpartition("/")[0] + "/"
                    for other in texts:
                        if other.startswith(folder):
                            found.setdefault(other, why)
    return found


def _plugin_module(relative: str) -> bool:
    """A module inside a package's ``integrations``/``plugins``/``contrib``/``extensions``
    folder (loaded when a user enables it), not the folder's own ``__init__``."""
    parts = relative.split("/")
    return any(part in _PLUGIN_DIRS for part in parts[1:-1])


def _vendor_pairs(python: Iterable[str]) -> frozenset[str]:
    """NVIDIA modules with an AMD sibling in the same folder (``hardware/nvidia.py`` next to
    ``hardware/amd.py``): the project dispatches on the vendor by module."""
    by_folder: dict[str, list[str]] = {}
    for relative in python:
        folder, _, name = relative.rpartition("/")
        by_folder.setdefault(folder, []).append(name[:-3])
    paired: set[str] = set()
    for folder, stems in by_folder.items():
        if any(_AMD_MODULE.search(stem) for stem in stems):
            paired.update(
                f"{folder}/{stem}.py" if folder else f"{stem}.py"
                for stem in stems
                if _NVIDIA_MODULE.search(stem)
            )
    return frozenset(paired)


def _closure(
    root: Path,
    starts: Iterable[str],
    done: set[str],
    texts: dict[str, str],
    names_of: Mapping[str, list[str]],
    by_name: Mapping[str, str],
    init_dirs: set[str],
    *,
    top_level: bool = False,
) -> set[str]:
    """Modules reached from ``starts`` over static imports (each module's package ``__init__``
    included; with ``top_level`` only over imports that run at import time), leaving out those
    in ``done``; their texts are kept in ``texts``."""
    reached: set[str] = set()
    queue = [start for start in starts if start not in done]
    while queue:
        relative = queue.pop()
        if relative in reached or relative in done:
            continue
        reached.add(relative)
        text = texts.get(relative)
        if text is None:
            text = texts[relative] = _read(root / relative)
        module = names_of[relative][0] if names_of.get(relative) else ""
        is_package = relative.endswith("__init__.py")
        for name in _imports(text, module, is_package, top_level=top_level):
            for candidate in (name, name.rpartition(".")[0]):
                found = by_name.get(candidate)
                if found is not None:
                    queue.append(found)
                    break
        folder = relative.rsplit("/", 1)[0] if "/" in relative else ""
        if folder in init_dirs:
            queue.append(f"{folder}/__init__.py")
    return reached


_TABLE = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+\s*(?:#.*)?$")
_OPTIONAL_TABLES = re.compile(
    r"^(?:project\.optional-dependencies|dependency-groups|tool\.poetry\.extras"
    r"|tool\.poetry\.group\..*|tool\.pdm\.dev-dependencies|options\.extras_require)$"
)


def optional_tables(text: str) -> list[tuple[int, int]]:
    """1-based line ranges of the optional dependency tables of a ``pyproject.toml`` or
    ``setup.cfg`` (extras and dependency groups), read line by line."""
    ranges: list[tuple[int, int]] = []
    start: int | None = None
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        match = _TABLE.match(line)
        if not match:
            continue
        if start is not None:
            ranges.append((start, number - 1))
            start = None
        if _OPTIONAL_TABLES.match(match.group(1).strip()):
            start = number
    if start is not None:
        ranges.append((start, len(lines)))
    return ranges


def _doc_files(root: Path, limit: int = 400) -> list[str]:
    """README files at the root and Markdown pages under ``docs/`` (the documented commands)."""
    found = []
    try:
        found = sorted(
            entry.name
            for entry in root.iterdir()
            if entry.is_file() and entry.name.lower().startswith("readme")
        )
    except OSError:
        return []
    for folder in ("docs", "doc"):
        base = root / folder
        if not base.is_dir() or base.is_symlink():
            continue
        for path in sorted(base.rglob("*")):
            if len(found) >= limit:
                break
            if path.suffix.lower() in (".md", ".rst", ".qmd", ".mdx") and not path.is_symlink():
                found.append(path.relative_to(root).as_posix())
    return found


def _is_public_package_module(relative: str, init_dirs: set[str]) -> bool:
    """A module of an importable package (top level or under ``src/``) with no private part."""
    parts = relative.split("/")
    if (
        len(parts) < 2
        or parts[0] not in init_dirs
        and not (parts[0] == "src" and len(parts) > 2 and f"src/{parts[1]}" in init_dirs)
    ):
        return False
    folder = relative.rsplit("/", 1)[0]
    if folder not in init_dirs:
        return False
    inner = parts[1:] if parts[0] != "src" else parts[2:]
    return not any(
        part.startswith("_") and part not in ("__init__.py", "__main__.py") for part in inner
    )


def amd_evidence(
    root: Path, roles: Mapping[str, str], texts: Mapping[str, str] | None = None
) -> list[Evidence]:
    """Signs of an existing AMD path in core, deployment and documentation files (``texts``: the
    source of modules already read, by path)."""
    found: list[Evidence] = []
    seen_kinds: dict[str, int] = {}

    def add(kind: str, path: str, detail: str, text: str = "") -> None:
        if kind == "dispatch" and seen_kinds.get(kind, 0) >= 3:
            return
        seen_kinds[kind] = seen_kinds.get(kind, 0) + 1
        found.append(Evidence(kind, path, detail, covered_subjects(text)))

    for relative, role in sorted(roles.items()):
        name = relative.rsplit("/", 1)[-1]
        if role in ("test", "benchmark", "example", "unreachable"):
            continue
        if _DEP_FILES.match(name) and name.lower().startswith("requirements"):
            text = _read(root / relative, 200_000)
            if _AMD_NAME.search(name) or _ROCM_INDEX.search(text):
                add("requirements", relative, "ROCm requirements", text)
            continue
        if role in (DEPLOY, "tooling") and (
            _CONTAINER_FILES.search(name) or "docker" in relative.lower()
        ):
            text = _read(root / relative, 200_000)
            if _ROCM_IMAGE.search(text) or "/dev/kfd" in text:
                add("container", relative, "AMD container image or device flags", text)
            continue
        if role == "docs":
            if _AMD_NAME.search(name.rsplit(".", 1)[0]):
                add("docs", relative, "AMD install guide", _read(root / relative, 400_000))
            continue
        if tier(role) == CORE and (name.endswith(".py") or name == "CMakeLists.txt"):
            known = texts.get(relative) if texts is not None else None
            match = _dispatch_in(known if known is not None else _read(root / relative))
            if match and tier(role) == CORE:
                add("dispatch", relative, f"vendor dispatch in code (`{match.group(0).strip()}`)")
    readme = next(
        (p for p in sorted(roles) if "/" not in p and p.lower().startswith("readme")), None
    )
    if readme is not None:
        section = _amd_section(_read(root / readme, 400_000))
        if section:
            add("docs", readme, "README has an AMD/ROCm install section", section)
    return found


_HEADING = re.compile(r"^(#+)\s+(.*)$", re.MULTILINE)
_FENCE = re.compile(r"^[ \t]*(?:```|~~~)", re.MULTILINE)
_AMD_HEADING = re.compile(r"\b(?:AMD|ROCm|HIP)\b")


def _amd_section(text: str) -> str:
    """The README section under an AMD/ROCm heading, up to the next heading as high, or ``""``."""
    fences = [match.start() for match in _FENCE.finditer(text)]

    def in_code(offset: int) -> bool:
        return sum(start < offset for start in fences) % 2 == 1

    # A ``# comment`` inside a fenced code block is not a heading.
    headings = [match for match in _HEADING.finditer(text) if not in_code(match.start())]
    for index, heading in enumerate(headings):
        if not _AMD_HEADING.search(heading.group(2)):
            continue
        level = len(heading.group(1))
        end = next(
            (later.start() for later in headings[index + 1 :] if len(later.group(1)) <= level),
            len(text),
        )
        return text[heading.start() : end]
    return ""


#: Packages an AMD path can provide for, by the words that name them (work-item subjects).
_COVERABLE: dict[str, re.Pattern[str]] = {
    "flash-attn": re.compile(r"flash[-_ ]?attn|flash[-_ ]?attention", re.I),
    "bitsandbytes": re.compile(r"bitsandbytes", re.I),
    "xformers": re.compile(r"xformers", re.I),
    "apex": re.compile(r"\bapex\b", re.I),
    "nvml": re.compile(r"amdsmi|amd-smi|rocm-smi", re.I),
    "triton": re.compile(r"triton", re.I),
    "deepspeed": re.compile(r"deepspeed", re.I),
    "vllm": re.compile(r"\bvllm\b", re.I),
    "onnxruntime": re.compile(r"onnxruntime|migraphx", re.I),
}


def covered_subjects(text: str) -> tuple[str, ...]:
    """The packages an AMD guide, ROCm requirements file or AMD container names."""
    return tuple(subject for subject, pattern in _COVERABLE.items() if pattern.search(text))
