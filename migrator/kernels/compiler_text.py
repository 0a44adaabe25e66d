"""What of the compiler's output the kernels report may carry: never a source line clang quotes
(a diagnostic's snippet, caret and fix-it lines), and never the text of a diagnostic, or any
line, located in a file outside the private copy, the tool's own headers and the system's
include folders. The include check keeps such files from being compiled at all; this is the
second line of defence (an ``.include`` spelled so that no reading of the source finds it)."""

from __future__ import annotations

import os
import re
import sysconfig
from collections.abc import Iterable
from pathlib import Path

#: Where a diagnostic's text may come from besides the copy: the tool's own headers (Python's
#: and its packages', torch's) and the folders HIP and system headers live in.
_SYSTEM = ("/usr/include", "/usr/local/include", "/usr/lib", "/usr/lib64", "/opt/rocm")
_STANDINS = Path(__file__).resolve().parent / "standins"
#: ``path:line:column`` as clang and the assembler locate a diagnostic.
_LOCATION = re.compile(r"(?P<path>[^\s:]+):\d+:\d+")
_HEADER = re.compile(r"^[^\s:][^:\n]*:\d+:\d+: (?:fatal error|error|warning|note|remark): ")
#: Lines that end a quoted snippet: where a diagnostic comes from, counts, the driver's own.
_CONTEXT = re.compile(
    r"^(?:(?:In file included|Included) from \S+:\d+:$|"
    r"\d+ (?:errors?|warnings?)(?: and \d+ errors?)? generated|"
    r"(?:clang|hipcc|lld|ld\.lld)(?:-\d+(?:\.\d+)*)?: |Stack dump:$|PLEASE submit )"
)
WITHHELD = "a diagnostic in a file outside the project (its text is not shown)"


def _roots(workdir: Path, extra: Iterable[Path | str] = ()) -> list[str]:
    paths = sysconfig.get_paths()
    folders = [str(workdir), str(_STANDINS), *_SYSTEM, *(str(folder) for folder in extra)]
    folders += [
        paths[key] for key in ("purelib", "platlib", "include", "platinclude") if key in paths
    ]
    folders += [os.environ[name] for name in ("ROCM_PATH", "HIP_PATH") if os.environ.get(name)]
    out: set[str] = set()
    for folder in folders:
        out.add(os.path.normpath(os.path.abspath(folder)))
        out.add(os.path.realpath(folder))
    return sorted(out)


def inside(path: str, workdir: Path, roots: Iterable[str] | None = None) -> bool:
    """Whether a path in the compiler's output (relative ones to ``workdir``, where it runs)
    lies in the copy, the tool's headers or the system's, lexically and after links."""
    folders = list(roots) if roots is not None else _roots(workdir)
    full = path if os.path.isabs(path) else os.path.join(workdir, path)
    for candidate in (os.path.normpath(full), os.path.realpath(full)):
        if not any(candidate == root or candidate.startswith(root + "/") for root in folders):
            return False
    return True


def roots(workdir: Path, extra: Iterable[Path | str] = ()) -> list[str]:
    """The folders a diagnostic's text may come from: the copy, the tool's and the system's
    headers, and ``extra`` (the tool's prepared torch headers)."""
    return _roots(workdir, extra)


def shown_lines(stderr: str, workdir: Path, extra: Iterable[Path | str] = ()) -> list[str]:
    """The compiler's output lines the report may show: snippets dropped, a line that locates
    anything in a file outside replaced by ``WITHHELD``."""
    roots = _roots(workdir, extra)
    out: list[str] = []
    quoting = False
    for line in stderr.splitlines():
        if _HEADER.match(line):
            quoting = True
        elif _CONTEXT.match(line):
            quoting = False
        elif quoting:
            continue
        if any(
            not inside(match.group("path"), workdir, roots) for match in _LOCATION.finditer(line)
        ):
            out.append(WITHHELD)
        else:
            out.append(line)
    return out


def last_line(stderr: str, workdir: Path, extra: Iterable[Path | str] = ()) -> str:
    """The last line of the compiler's output the report may show (at most 200 characters)."""
    lines = [line for line in shown_lines(stderr.strip(), workdir, extra) if line.strip()]
    return (lines or ["no output"])[-1][:200]


__all__ = ["WITHHELD", "inside", "last_line", "roots", "shown_lines"]
