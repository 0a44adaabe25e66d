"""The fleet manifest: which repositories to assess and how, read from TOML or from the
one-path-per-line file that ``migrate report --repos`` reads."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from migrator.errors import MigrateError

#: Keys a ``[[repo]]`` table (or ``[defaults]``) may hold; anything else is a user error.
REPO_KEYS = frozenset(
    {
        "name",
        "path",
        "url",
        "ref",
        "subdir",
        "select",
        "ignore",
        "exclude",
        "preview",
        "fix-diff",
        "kernels",
        "verify",
        "verify-targets",
        "submodules",
    }
)
_DEFAULT_KEYS = REPO_KEYS - {"name", "path", "url", "ref"}
_LIST_KEYS = ("select", "ignore", "exclude")
_BOOL_KEYS = ("preview", "fix-diff", "kernels", "submodules")
_URL = re.compile(r"^(https?|ssh|git|file)://|^[\w.-]+@[\w.-]+:")


@dataclass(frozen=True, slots=True)
class RepoSpec:
    """One repository of the fleet: where it is (a local folder, or a git URL at a ref) and
    what to run on it."""

    name: str
    source: str
    #: ``source`` as reports show it: a folder relative to the manifest, a URL without a
    #: password (the default: ``source``)
    label: str = ""
    ref: str = ""
    is_git: bool = False
    subdir: str = ""
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    preview: bool = False
    fix_diff: bool = False
    kernels: bool = False
    verify: str = ""
    verify_targets: str = "native,rocm-sim"
    submodules: bool = False

    @property
    def shown(self) -> str:
        """Where the repository is, as reports show it (see ``label``)."""
        return self.label or self.source

    def options(self) -> dict[str, Any]:
        """What changes the result besides the code and the tool (part of the result key)."""
        return {
            "subdir": self.subdir,
            "select": list(self.select),
            "ignore": list(self.ignore),
            "exclude": list(self.exclude),
            "preview": self.preview,
            "fix_diff": self.fix_diff,
            "kernels": self.kernels,
            "verify": self.verify,
            "verify_targets": self.verify_targets if self.verify else "",
            "submodules": self.submodules,
        }


@dataclass(slots=True)
class Manifest:
    """The repositories of a fleet, in the order the manifest gives them."""

    repos: list[RepoSpec] = field(default_factory=list)
    path: str = ""


def is_url(text: str) -> bool:
    """Whether ``text`` names a git remote rather than a local folder."""
    return bool(_URL.match(text))


def _name_from(source: str) -> str:
    tail = source.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    tail = tail[:-4] if tail.endswith(".git") else tail
    return re.sub(r"[^\w.+-]", "_", tail) or "repo"


def _unique(names: Sequence[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        count = seen.get(name, 0) + 1
        seen[name] = count
        out.append(name if count == 1 else f"{name}-{count}")
    return out


def _checked(table: Mapping[str, Any], allowed: frozenset[str], where: str) -> dict[str, Any]:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise MigrateError(
            f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(allowed))})"
        )
    values = dict(table)
    for key in _LIST_KEYS:
        if key in values:
            value = values[key]
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise MigrateError(f"{where}: {key} must be a list of strings")
            values[key] = tuple(value)
    for key in _BOOL_KEYS:
        if key in values and not isinstance(values[key], bool):
            raise MigrateError(f"{where}: {key} must be true or false")
    for key in ("name", "path", "url", "ref", "subdir", "verify", "verify-targets"):
        if key in values and not isinstance(values[key], str):
            raise MigrateError(f"{where}: {key} must be a string")
    subdir = values.get("subdir", "")
    if subdir and (Path(subdir).is_absolute() or ".." in Path(subdir).parts):
        raise MigrateError(f"{where}: subdir must be a relative path inside the repository")
    return values


def _spec(values: dict[str, Any], base: Path, where: str) -> tuple[str, dict[str, Any]]:
    if ("path" in values) == ("url" in values):
        raise MigrateError(f"{where}: give exactly one of path or url")
    if "url" in values:
        url = values["url"]
        if not values.get("ref"):
            raise MigrateError(f"{where}: a url needs a pinned ref (a tag, branch or commit)")
        if not is_url(url) and not Path(url).is_absolute():
            url = str((base / url).resolve())
        source, is_git = url, True
        label = _without_password(url) if is_url(url) else _relative(url, base)
    else:
        candidate = Path(values["path"]).expanduser()
        source = str(candidate if candidate.is_absolute() else (base / candidate).resolve())
        if not Path(source).is_dir():
            raise MigrateError(f"{where}: path is not a folder: {source}")
        is_git = False
        label = _relative(source, base)
    fields = {
        "source": source,
        "label": label,
        "is_git": is_git,
        "ref": values.get("ref", ""),
        "subdir": values.get("subdir", ""),
        "select": values.get("select", ()),
        "ignore": values.get("ignore", ()),
        "exclude": values.get("exclude", ()),
        "preview": values.get("preview", False),
        "fix_diff": values.get("fix-diff", False),
        "kernels": values.get("kernels", False),
        "verify": values.get("verify", ""),
        "verify_targets": values.get("verify-targets", "native,rocm-sim"),
        "submodules": values.get("submodules", False),
    }
    return values.get("name") or _name_from(source), fields


def _relative(source: str, base: Path) -> str:
    """A local folder as the reports show it: relative to the manifest's folder (as a
    manifest names it), never this machine's absolute path."""
    return Path(os.path.relpath(source, base.resolve())).as_posix()


def _without_password(url: str) -> str:
    """A URL as the reports show it: a password or token in it (``https://user:token@host``)
    left out."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}@{host}" if parts.username else host
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def _from_toml(path: Path) -> list[tuple[str, dict[str, Any]]]:
    from migrator.files.sources import FailFile, SkipFile, read_regular
    from migrator.files.tomlcompat import tomllib

    try:
        data = tomllib.loads(read_regular(str(path)).decode("utf-8"))
    except (SkipFile, FailFile) as error:
        raise MigrateError(f"cannot read manifest {path}: {error}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise MigrateError(f"{path}: not valid TOML: {error}") from None
    unknown = sorted(set(data) - {"defaults", "repo"})
    if unknown:
        raise MigrateError(f"{path}: unknown table {unknown[0]!r} (known: defaults, repo)")
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise MigrateError(f"{path}: [defaults] must be a table")
    defaults = _checked(defaults, _DEFAULT_KEYS, f"{path} [defaults]")
    repos = data.get("repo", [])
    if not isinstance(repos, list) or not all(isinstance(item, dict) for item in repos):
        raise MigrateError(f"{path}: repositories are [[repo]] tables")
    out = []
    for index, table in enumerate(repos, start=1):
        where = f"{path} repo {index}"
        out.append(_spec({**defaults, **_checked(table, REPO_KEYS, where)}, path.parent, where))
    return out


def _from_lines(path: Path) -> list[tuple[str, dict[str, Any]]]:
    from migrator.reporting.cli import read_repos_file

    out = []
    for index, root in enumerate(read_repos_file(str(path)), start=1):
        out.append(_spec({"path": root}, path.parent, f"{path} line {index}"))
    return out


def read_manifest(path: str | Path) -> Manifest:
    """The manifest at ``path``: TOML when it ends in ``.toml``, else one path per line."""
    file = Path(path)
    if not file.exists():
        raise MigrateError(f"manifest not found: {path}")
    entries = _from_toml(file) if file.suffix == ".toml" else _from_lines(file)
    if not entries:
        raise MigrateError(f"{path}: no repositories")
    names = _unique([name for name, _ in entries])
    repos = [
        RepoSpec(name=name, **fields) for name, (_, fields) in zip(names, entries, strict=True)
    ]
    return Manifest(repos, str(file))
