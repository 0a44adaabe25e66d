"""The site-packages folders of the environment a ``--python PATH`` names (an interpreter, a
virtual environment, a conda prefix or a site-packages folder), found from the file system alone:
the interpreter is never started, since it may run code of the environment (``sitecustomize``,
``.pth`` files)."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from migrator.errors import MigrateError

#: What ``--python`` takes to mean the environment migrate itself runs in.
ACTIVE = "active"
_VERSION_DIR = re.compile(r"^python(\d+)\.(\d+)t?$")


@dataclass(frozen=True, slots=True)
class Environment:
    """One environment: the folder it lives in (nothing outside it is read) and its
    site-packages folders, in the order the interpreter would search them."""

    prefix: Path
    site_dirs: tuple[Path, ...] = field(default_factory=tuple)
    named: str = ""

    def contains(self, path: Path) -> bool:
        """Whether ``path``, its links resolved, stays inside one of the site-packages folders."""
        try:
            real = path.resolve()
        except (OSError, RuntimeError):
            return False
        return any(real.is_relative_to(site.resolve()) for site in self.site_dirs)


def _has_dists(folder: Path) -> bool:
    try:
        return any(entry.name.endswith((".dist-info", ".egg-info")) for entry in folder.iterdir())
    except OSError:
        return False


def _pyvenv(prefix: Path) -> dict[str, str]:
    """The ``key = value`` lines of ``prefix/pyvenv.cfg`` (empty when there is none)."""
    config = prefix / "pyvenv.cfg"
    from migrator.files.sources import FailFile, SkipFile, read_regular

    try:  # the one read facility: a FIFO named pyvenv.cfg is never opened for a blocking read
        text = read_regular(str(config), 65536).decode("utf-8", "replace")
    except (SkipFile, FailFile, OSError):
        return {}
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip().lower()] = value.strip()
    return out


def _versioned(prefix: Path, version: str) -> list[Path]:
    """``lib/pythonX.Y/site-packages`` (and ``lib64``, Debian's ``dist-packages``) under
    ``prefix``; ``version`` (``3.12``) picks one when several are present."""
    out: list[Path] = []
    for lib in ("lib", "lib64"):
        base = prefix / lib
        try:
            names = sorted(entry.name for entry in base.iterdir() if entry.is_dir())
        except OSError:
            continue
        for name in names:
            match = _VERSION_DIR.match(name)
            if not match or (version and f"{match.group(1)}.{match.group(2)}" != version):
                continue
            for leaf in ("site-packages", "dist-packages"):
                candidate = base / name / leaf
                if candidate.is_dir() and candidate not in out:
                    out.append(candidate)
    # Windows layout and Debian's system-wide folder
    for candidate in (
        prefix / "Lib" / "site-packages",
        prefix / "lib" / "python3" / "dist-packages",
    ):
        if candidate.is_dir() and candidate not in out:
            out.append(candidate)
    unique: dict[Path, Path] = {}
    for candidate in out:  # lib64 is often a link to lib: one folder, read once
        try:
            unique.setdefault(candidate.resolve(), candidate)
        except (OSError, RuntimeError):
            continue
    return list(unique.values())


def _version_of(python: Path, config: dict[str, str]) -> str:
    """``3.12`` from ``pyvenv.cfg`` or from the interpreter's file name, else ""."""
    for key in ("version_info", "version"):
        match = re.match(r"(\d+)\.(\d+)", config.get(key, ""))
        if match:
            return f"{match.group(1)}.{match.group(2)}"
    match = re.match(r"python(\d+)\.(\d+)", python.name)
    return f"{match.group(1)}.{match.group(2)}" if match else ""


def locate(named: str) -> Environment:
    """The environment ``named`` points to (``active``: the one migrate runs in), or a
    ``MigrateError`` with a one-line reason when no site-packages folder is found there."""
    if named == ACTIVE:
        path = Path(sys.prefix)
    else:
        path = Path(named).expanduser()
    if not path.exists():
        raise MigrateError(f"--python {named}: no such file or folder")
    path = path.absolute()
    if path.is_dir() and _has_dists(path):  # a site-packages folder named directly
        return Environment(path, (path,), named)
    python = path if not path.is_dir() else Path()
    # bin/python (a link to the base interpreter in a venv: the link's own folder counts)
    prefix = path.parent.parent if not path.is_dir() else path
    if not path.is_dir() and path.parent.name not in ("bin", "Scripts"):
        prefix = path.parent
    config = _pyvenv(prefix)
    version = _version_of(python, config)
    sites = _versioned(prefix, version) or _versioned(prefix, "")
    if config.get("include-system-site-packages", "").lower() == "true" and config.get("home"):
        base = Path(config["home"])
        base_prefix = base.parent if base.name in ("bin", "Scripts") else base
        sites += [site for site in _versioned(base_prefix, version) if site not in sites]
    if not sites:
        raise MigrateError(
            f"--python {named}: no site-packages folder found (give an interpreter of a virtual "
            "environment or conda prefix, the environment's folder, or its site-packages)"
        )
    return Environment(prefix, tuple(sites), named)
