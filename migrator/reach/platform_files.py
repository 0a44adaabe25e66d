"""Conda environment files whose content proves them another platform's (a Windows or macOS
``conda env export``): ROCm is Linux-only, so nothing in them is installed on a ROCm machine and
the engine marks their findings as guarded (``migrator.reach.text_guards``). Files whose name
says so (``requirements-windows.txt``) are ``migrator.reach.project.file_guards``'s.

Proof, never a guess: the file names the platform (``platform: win-64``, an explicit export's
``# platform: osx-arm64``, a ``prefix:`` under ``C:\\`` or ``/Users/``) or pins packages or
builds that exist only there (``vc``, ``ucrt``, ``m2w64-*``, ``win64`` build strings;
``appnope``, ``osx`` builds). A file that also holds a Linux-only package or build
(``libgcc-ng``, ``linux-64``) proves nothing."""

from __future__ import annotations

import re

#: ``platform: win-64`` (a conda export's key) or ``# platform: osx-arm64`` (``--explicit``).
_PLATFORM = re.compile(r"^\s*#?\s*platform:\s*(?P<platform>[\w-]+)", re.MULTILINE | re.IGNORECASE)
_PREFIX = re.compile(r"^prefix:\s*['\"]?(?P<path>\S+)", re.MULTILINE)
#: A conda dependency line: ``- name=version=build`` (version and build optional).
_DEPENDENCY = re.compile(
    r"^\s*-\s*(?:[\w.-]+::)?(?P<name>[A-Za-z0-9_][\w.-]*)"
    r"(?:\s*[=<>!~]=?\s*(?P<version>[^=\s#]*)(?:=(?P<build>[^\s#]*))?)?",
    re.MULTILINE,
)
#: Conda packages that exist on one platform only.
_PACKAGES = {
    "Windows": re.compile(
        r"^(vc|vc14_runtime|vs2015_runtime|vs2017_runtime|vs2019_runtime|ucrt|m2w64-[\w.-]+"
        r"|msys2-[\w.-]+|pthreads-win32|pywin32|win_inet_pton|wincertstore|winpty|pywinpty)$"
    ),
    "macOS": re.compile(
        r"^(appnope|libcxx|cctools|cctools_osx-[\w-]+|ld64|ld64_osx-[\w-]+|clang_osx-[\w-]+"
        r"|pyobjc-[\w.-]+)$"
    ),
    "Linux": re.compile(
        r"^(_libgcc_mutex|libgcc-ng|libstdcxx-ng|libgomp|ld_impl_linux-[\w-]+|sysroot_linux-[\w-]+"
        r"|kernel-headers_linux-[\w-]+|libuuid|__glibc)$"
    ),
}
#: Build strings of one platform (``18_win64_mkl``, ``win_pyh7428d3b_0``, ``h…_osx``).
_BUILDS = {
    "Windows": re.compile(r"(?:^|_)win(?:32|64)?(?:_|$)|^win_"),
    "macOS": re.compile(r"(?:^|_)(?:osx|macos)(?:_|$)"),
    "Linux": re.compile(r"(?:^|_)linux(?:64)?(?:_|$)"),
}


def foreign_platform(text: str, kind: str) -> str:
    """Why ``text`` (a file of ``kind``) is provably for a platform ROCm does not run on, as a
    guard label ("" when it is not, or when that cannot be shown)."""
    if kind != "conda":
        return ""
    evidence: dict[str, list[str]] = {"Windows": [], "macOS": [], "Linux": []}
    for match in _PLATFORM.finditer(text):
        platform = match["platform"].lower()
        for system, marker in (("Windows", "win"), ("macOS", "osx"), ("Linux", "linux")):
            if platform.startswith(marker):
                evidence[system].append(f"platform {platform}")
    prefix = _PREFIX.search(text)
    if prefix is not None:
        where = prefix["path"]
        if re.match(r"^[A-Za-z]:[\\/]", where):
            evidence["Windows"].append(f"prefix {where[:3]}…")
        elif where.startswith(("/Users/", "/opt/homebrew/")):
            evidence["macOS"].append(f"prefix {'/'.join(where.split('/')[:2])}/…")
        elif where.startswith(("/home/", "/opt/conda", "/root/")):
            evidence["Linux"].append(f"prefix {where}")
    for match in _DEPENDENCY.finditer(text):
        package, build = match["name"].lower(), (match["build"] or "").lower()
        for system in evidence:
            if _PACKAGES[system].match(package):
                evidence[system].append(f"`{package}`")
            elif build and _BUILDS[system].search(build):
                evidence[system].append(f"`{package}` build {build}")
    if evidence["Linux"]:
        return ""
    found = [system for system in ("Windows", "macOS") if evidence[system]]
    if len(found) != 1:
        return ""
    system = found[0]
    return _label(system, ", ".join(list(dict.fromkeys(evidence[system]))[:3]))


def _label(system: str, evidence: str) -> str:
    return f"a {system} environment file ({evidence}): never installed on ROCm, which is Linux-only"
