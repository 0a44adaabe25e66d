"""Which lines of a CI workflow run only on NVIDIA runners: a job whose id or ``name:`` names
CUDA or NVIDIA (``test-cuda``, ``name: Nightly CUDA Tests``), whose ``runs-on`` names an NVIDIA
runner (``linux.g5.12xlarge.nvidia.gpu``, an EC2 NVIDIA instance type such as
``aws-g4dn-2xlarge``; or a workflow input or build-matrix axis whose every value is one) or whose build matrix is parametrised by CUDA version only (a CUDA
container image is not a sign: it is what ROC860 reports), and a job or step whose ``if:`` requires a CUDA backend
(``if: inputs.backend == 'cuda'``), or a CUDA axis of the build matrix to be set (``if: matrix.cuda
!= ''``, whose ROCm entries take another step); which run only on macOS or Windows runners
(``runs-on: macos-14``, ``if: runner.os == 'Windows'``); and which run on a CPU-only runner (a
job or workflow named for the CPU). Findings there are guarded like an NVIDIA-only or non-Linux
branch of Python code."""

from __future__ import annotations

import re

NVIDIA_JOB = "CI job for NVIDIA runners"
NVIDIA_STEP = "CI step that runs only with the CUDA backend"
NON_LINUX_JOB = "CI job or step for macOS/Windows runners"
CPU_JOB = "CI job on a CPU-only runner"

_KEY = re.compile(r"^(?P<indent>\s*)(?P<dash>-\s+)?(?P<key>[A-Za-z0-9_.-]+)\s*:(?P<rest>.*)$")
_NVIDIA_WORD = re.compile(r"(?<![a-z0-9])(nvidia|cuda|cu1\d\d?)(?![a-z])", re.IGNORECASE)
_AMD_WORD = re.compile(r"(?<![a-z0-9])(amd(?!64)|rocm|hip)(?![a-z])", re.IGNORECASE)
#: A runner label naming an EC2 instance type of a GPU family whose GPUs are NVIDIA's
#: (``aws-g4dn-2xlarge``, ``linux.g5.4xlarge.nvidia.gpu``, ``aws-g6e-xlarge-plus``); the AMD
#: family ``g4ad`` does not match (rocm-facts §9, CI runners).
_AWS_NVIDIA_INSTANCE = re.compile(
    r"(?<![a-z0-9])(g3s?|g4dn|g5g?|g6e?|gr6|p2|p3|p3dn|p4d|p4de|p5|p5e|p5en|p6)"
    r"[.-](\d*xlarge|metal)(?![a-z])",
    re.IGNORECASE,
)
_CPU_WORD = re.compile(r"(?<![a-z0-9])cpu(?![a-z])", re.IGNORECASE)
_GPU_WORD = re.compile(r"(?<![a-z0-9])(gpu|gpus|cuda|rocm|nvidia|amd)(?![a-z])", re.IGNORECASE)
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
#: ``if: matrix.cuda != ''`` / ``if: matrix.cuda-version``: a step that runs only for the entries
#: of a build matrix that set a CUDA version (the ROCm entries, with ``cuda: ''``, take another
#: step); ``matrix.cuda == ''`` and a test that also names ROCm are not.
_CUDA_AXIS_SET = re.compile(
    r"""^\s*(\$\{\{\s*)?matrix\.(cuda|cuda[_-]?version|cuda[_-]?ver)\s*"""
    r"""(!=\s*(''|""|null)\s*)?(\}\}\s*)?$""",
    re.IGNORECASE,
)


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
    workflow = _top_value(lines, "name")
    choices = _input_choices(lines)
    if _CPU_WORD.search(workflow) and not _GPU_WORD.search(workflow):
        # a workflow named for the CPU runs on CPU-only runners: its jobs and environment
        mark(0, len(lines), CPU_JOB)
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
            end = _block_end(lines, index, job_indent, False)
            body = lines[index + 1 : end]
            # the job's id and its ``name:`` both say what it is for
            job = match.group("key") + " " + _key_value(body, "name", column)
            if (
                (_NVIDIA_WORD.search(job) and not _AMD_WORD.search(job))
                or _nvidia_runner(body, choices)
                or _cuda_matrix(body, column)
            ):
                mark(index, end, NVIDIA_JOB)
            elif not _GPU_WORD.search(job) and (
                _CPU_WORD.search(job) or any(_CPU_TORCH.search(line) for line in body)
            ):
                # named for the CPU, or installing torch's CPU build: a CPU-only job
                mark(index, end, CPU_JOB)
            elif _matrix_runners_other_os(body, column):
                mark(index, end, NON_LINUX_JOB)
    for index, line in enumerate(lines):
        match = _KEY.match(line)
        if match is None or match.group("dash"):
            continue
        key, condition = match.group("key"), match.group("rest")
        if key == "runs-on" and _OTHER_RUNNER.match(condition.split("#", 1)[0]):
            label = NON_LINUX_JOB
        elif key != "if":
            continue
        elif (
            _CUDA_TEST.search(condition) or _CUDA_AXIS_SET.match(condition.split("#", 1)[0])
        ) and not _AMD_WORD.search(condition):
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


#: torch's CPU wheel index in an install command (not in a comment), also its ``nightly`` and
#: ``test`` (release candidate) channels: a job without GPUs.
_CPU_TORCH = re.compile(r"^[^#]*download\.pytorch\.org/whl/(?:nightly/|test/)?cpu(?![\w.-])")


def _matrix_runners_other_os(job: list[str], job_column: int) -> bool:
    """``runs-on: ${{ matrix.os }}`` where every value of that matrix axis is a macOS or
    Windows runner (``os: [windows-latest]``): the job never runs on Linux."""
    runs_on = _key_value(job, "runs-on", job_column)
    axis = re.fullmatch(r"\$\{\{\s*matrix\.([\w-]+)\s*\}\}", runs_on)
    if axis is None:
        return False
    values = _matrix_values(job, axis.group(1))
    return bool(values) and all(_OTHER_RUNNER.match(value) for value in values)


def _matrix_values(job: list[str], axis: str) -> list[str]:
    """Every value a job's build matrix gives ``axis``: a list (``os: [a, b]``, or ``- a`` items
    below ``os:``) and each ``include`` entry's ``axis: value``."""
    values: list[str] = []
    strategy = _section(job, "strategy")
    for index, line in enumerate(strategy):
        match = _KEY.match(line)
        if match is None or match.group("key") != axis:
            continue
        rest = match.group("rest").split("#", 1)[0].strip()
        if rest.startswith("["):
            values += [value.strip() for value in rest.strip("[]").split(",") if value.strip()]
        elif not rest:
            for more in strategy[index + 1 :]:
                stripped = more.strip()
                if not stripped.startswith("-"):
                    break
                values.append(stripped[1:].split("#", 1)[0].strip())
        else:
            values.append(rest)
    return [value.strip("'\"") for value in values]


def _input_choices(lines: list[str]) -> dict[str, list[str]]:
    """The options of each ``type: choice`` input of the workflow (``runner_type`` ->
    ``["aws-g6-4xlarge-plus", "aws-g4dn-2xlarge"]``)."""
    out: dict[str, list[str]] = {}
    for index, line in enumerate(lines):
        match = _KEY.match(line)
        if match is None or match.group("key") != "options" or match.group("rest").strip():
            continue
        column = _indent(line)
        owner = next(
            (
                _KEY.match(lines[back])
                for back in range(index - 1, -1, -1)
                if _content(lines[back]) and _indent(lines[back]) < column
            ),
            None,
        )
        if owner is None:
            continue
        options = []
        for more in lines[index + 1 :]:
            if not _content(more):
                continue
            stripped = more.strip()
            if _indent(more) < column or not stripped.startswith("-"):
                break
            options.append(stripped[1:].split("#", 1)[0].strip().strip("'\""))
        out[owner.group("key")] = options
    return out


def _nvidia_label(value: str) -> bool:
    return bool(
        re.search(r"(?<![a-z0-9])nvidia(?![a-z])", value, re.IGNORECASE)
        or _AWS_NVIDIA_INSTANCE.search(value)
    )


def _nvidia_runner(job: list[str], choices: dict[str, list[str]]) -> bool:
    """Whether a job's ``runs-on`` names an NVIDIA runner (``linux.g5.4xlarge.nvidia.gpu``), or
    is an input whose every choice is one (``group: ${{ inputs.runner_type }}``), or a matrix
    axis whose every value is one (``group: ${{ matrix.runner }}`` with ``runner:
    aws-g6-4xlarge-plus`` in each ``include`` entry). A job that calls a reusable workflow
    names its runner in the call's inputs instead (``uses: .../linux_job_v2.yml`` with
    ``with: runner: linux.g5.48xlarge.nvidia.gpu``)."""
    calls = bool(_key_value(job, "uses", -1))
    for index, line in enumerate(job):
        match = _KEY.match(line)
        if match is None or match.group("key") not in ("runs-on", "runner"):
            continue
        if match.group("key") == "runner" and not (calls and _under_with(job, index)):
            continue
        value = match.group("rest")
        column = _indent(line)
        for more in job[index + 1 :]:
            if _content(more) and _indent(more) <= column:
                break
            value += " " + more
        for name in re.findall(r"\$\{\{\s*(?:github\.event\.)?inputs\.(\w+)\s*\}\}", value):
            options = choices.get(name)
            if options and all(_nvidia_label(option) for option in options):
                return True
        for axis in re.findall(r"\$\{\{\s*matrix\.([\w-]+)\s*\}\}", value):
            runners = _matrix_values(job, axis)
            if runners and all(_nvidia_label(runner) for runner in runners):
                return True
        value = re.sub(r"\$\{\{.*?\}\}", " ", value)  # an expression names no runner
        return _nvidia_label(value)
    return False


def _under_with(job: list[str], index: int) -> bool:
    """Whether line ``index`` of a job is a key of the job's ``with:`` mapping (the inputs of
    the reusable workflow it calls)."""
    column = _indent(job[index])
    for back in range(index - 1, -1, -1):
        line = job[back]
        if _content(line) and _indent(line) < column:
            match = _KEY.match(line)
            return bool(match and match.group("key") == "with" and not match.group("rest").strip())
    return False


def _top_value(lines: list[str], key: str) -> str:
    """The value of a top-level ``key:`` of the workflow ("" when absent)."""
    for line in lines:
        match = _KEY.match(line)
        if match and not match.group("indent") and match.group("key") == key:
            return match.group("rest").strip()
    return ""


def _key_value(job: list[str], key: str, job_column: int) -> str:
    """The value of a job's own ``key:`` (one level below the job id), "" when absent."""
    column = None
    for line in job:
        if not _content(line):
            continue
        column = _indent(line) if column is None else column
        match = _KEY.match(line)
        if match and not match.group("dash") and _indent(line) == column > job_column:
            if match.group("key") == key:
                return match.group("rest").strip()
    return ""


def _section(job: list[str], key: str) -> list[str]:
    """The lines of a job's own ``key:`` mapping (its value lines included)."""
    column = None
    for index, line in enumerate(job):
        if not _content(line):
            continue
        column = _indent(line) if column is None else column
        match = _KEY.match(line)
        if (
            match
            and not match.group("dash")
            and _indent(line) == column
            and match.group("key") == key
        ):
            out = [line]
            for more in job[index + 1 :]:
                if _content(more) and _indent(more) <= column:
                    break
                out.append(more)
            return out
    return []


def _cuda_matrix(job: list[str], job_column: int) -> bool:
    """Whether the job's build matrix is parametrised by CUDA version (an axis or ``include``
    key named ``cuda``/``cuda_version``) and names no AMD/ROCm variant: every run is a CUDA build."""
    strategy = _section(job, "strategy")
    if not strategy or any(_AMD_WORD.search(line) for line in strategy):
        return False
    for line in strategy:
        match = _KEY.match(line)
        if match and re.fullmatch(r"cuda([_-]?version)?", match.group("key"), re.IGNORECASE):
            return True
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
