"""Which lines of a CI workflow run only on NVIDIA runners: a job whose id names CUDA or NVIDIA
(``test-cuda``, ``torch_pipelines_cuda_tests``) or whose ``runs-on`` names an NVIDIA runner
(``linux.g5.12xlarge.nvidia.gpu``), and a job or step whose ``if:`` requires a CUDA backend
(``if: inputs.backend == 'cuda'``); and which run only on macOS or Windows runners
(``runs-on: macos-14``, ``if: runner.os == 'Windows'``). Findings there are guarded like an
NVIDIA-only or non-Linux branch of Python code."""

from __future__ import annotations

import re

NVIDIA_JOB = "CI job for NVIDIA runners"
NVIDIA_STEP = "CI step that runs only with the CUDA backend"
NON_LINUX_JOB = "CI job or step for macOS/Windows runners"

_KEY = re.compile(r"^(?P<indent>\s*)(?P<dash>-\s+)?(?P<key>[A-Za-z0-9_.-]+)\s*:(?P<rest>.*)$")
_NVIDIA_WORD = re.compile(r"(?<![a-z0-9])(nvidia|cuda|cu1\d\d?)(?![a-z])", re.IGNORECASE)
_AMD_WORD = re.compile(r"(?<![a-z0-9])(amd|rocm|hip)(?![a-z])", re.IGNORECASE)
#: ``runs-on: macos-14`` / ``windows-latest`` (a literal runner label, not an expression).
_OTHER_RUNNER = re.compile(r"""^\s*['"]?(macos|windows)[\w.-]*['"]?\s*$""", re.IGNORECASE)
#: ``if: runner.os == 'Windows'``, ``startsWith(matrix.os, 'macos')``.
_OTHER_OS_TEST = re.compile(
    r"""(runner\.os|matrix\.os|matrix\.platform)\s*==\s*['"](macos|windows|mac|win)"""
    r"""|(startsWith|contains)\(\s*(runner\.os|matrix\.os|matrix\.platform)\s*,\s*"""
    r"""['"](macos|windows|mac|win)""",
    re.IGNORECASE,
)
_CUDA_TEST = re.compile(r"""==\s*['"](cuda|nvidia)['"]|['"](cuda|nvidia)['"]\s*==""", re.IGNORECASE)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _block_end(lines: list[str], start: int, indent: int, item: bool) -> int:
    """The index after the block that starts at ``start``: the next content line indented at
    most ``indent`` (for a list item: at ``indent`` and itself an item, or less)."""
    for index in range(start + 1, len(lines)):
        line = lines[index]
        if not _content(line):
            continue
        column = _indent(line)
        if column < indent or (column == indent and (not item or line.lstrip().startswith("-"))):
            return index
    return len(lines)


def ci_line_guards(text: str) -> dict[int, str]:
    """1-based line number -> why the line never runs on a ROCm runner (lines not listed may)."""
    lines = text.splitlines()
    out: dict[int, str] = {}

    def mark(start: int, end: int, label: str) -> None:
        for index in range(start, end):
            out.setdefault(index + 1, label)

    jobs_at = next(
        (i for i, line in enumerate(lines) if line.rstrip() == "jobs:" and _indent(line) == 0),
        None,
    )
    if jobs_at is not None:
        job_indent: int | None = None
        for index in range(jobs_at + 1, len(lines)):
            line = lines[index]
            if not _content(line):
                continue
            column = _indent(line)
            if column == 0:
                break
            if job_indent is None:
                job_indent = column
            match = _KEY.match(line)
            if column != job_indent or match is None or match.group("dash"):
                continue
            job = match.group("key")
            end = _block_end(lines, index, job_indent, False)
            if (_NVIDIA_WORD.search(job) and not _AMD_WORD.search(job)) or _nvidia_runner(
                lines[index + 1 : end]
            ):
                mark(index, end, NVIDIA_JOB)
    for index, line in enumerate(lines):
        match = _KEY.match(line)
        if match is None or match.group("dash"):
            continue
        key, condition = match.group("key"), match.group("rest")
        if key == "runs-on" and _OTHER_RUNNER.match(condition.split("#", 1)[0]):
            label = NON_LINUX_JOB
        elif key != "if":
            continue
        elif _CUDA_TEST.search(condition) and not _AMD_WORD.search(condition):
            label = NVIDIA_STEP
        elif _OTHER_OS_TEST.search(condition) and not re.search(r"\|\||!", condition):
            label = NON_LINUX_JOB
        else:
            continue
        column = _indent(line)
        owner = _owner(lines, index, column)
        if owner is None:
            continue
        owner_line = lines[owner]
        item = owner_line.lstrip().startswith("-")
        mark(owner, _block_end(lines, owner, _indent(owner_line), item), label)
    return out


def _nvidia_runner(job: list[str]) -> bool:
    """Whether a job's ``runs-on`` names an NVIDIA runner (``linux.g5.4xlarge.nvidia.gpu``)."""
    for index, line in enumerate(job):
        match = _KEY.match(line)
        if match is None or match.group("key") != "runs-on":
            continue
        value = match.group("rest")
        column = _indent(line)
        for more in job[index + 1 :]:
            if _content(more) and _indent(more) <= column:
                break
            value += " " + more
        value = re.sub(r"\$\{\{.*?\}\}", " ", value)  # an expression names no runner
        return bool(re.search(r"(?<![a-z0-9])nvidia(?![a-z])", value, re.IGNORECASE))
    return False


def _owner(lines: list[str], index: int, column: int) -> int | None:
    """The line that opens the mapping an ``if:`` key at ``column`` belongs to: the list item
    (``- name: ...``) whose keys sit at ``column``, or the key above it."""
    for back in range(index - 1, -1, -1):
        line = lines[back]
        if not _content(line):
            continue
        indent = _indent(line)
        stripped = line.lstrip()
        if stripped.startswith("-"):
            dash = len(stripped) - len(stripped[1:].lstrip())
            if indent + dash == column:
                return back
        if indent < column:
            return back
    return None
