"""ROC865: PyTorch CUDA wheel indexes in ``pip install`` commands and pip settings."""

from __future__ import annotations

from migrator.api import (
    Applicability,
    Fixing,
    Impact,
    Invalid,
    Parsing,
    Rewrite,
    Severity,
    TextRule,
    Valid,
)
from migrator.api.syntax import code_lines

from .._shell import Token, command_segments
from .._torch_index import cuda_index_edits, url_matches
from ._rocm_release import index_choice


class PipCudaWheelIndex(TextRule):
    """
    ## What it does
    Flags PyTorch CUDA wheel indexes (`https://download.pytorch.org/whl/cu121`) in Dockerfiles,
    shell scripts, Makefiles and CI files: `pip install --index-url ...`, `PIP_EXTRA_INDEX_URL`,
    `ARG` defaults.

    ## Why it breaks on ROCm
    The `whl/cuXYZ` index serves only CUDA builds of torch, torchvision and torchaudio, which
    find no GPU on an AMD machine: the image or environment silently runs on the CPU. ROCm
    builds are served from `https://download.pytorch.org/whl/rocmX.Y`.

    ## Example
    ```python
    # Dockerfile
    RUN pip install torch==2.3.1 --index-url https://download.pytorch.org/whl/cu121
    ```

    ## Fix
    ```python
    # Dockerfile
    RUN pip install torch==2.3.1 --index-url https://download.pytorch.org/whl/rocm6.0
    ```

    ## Fix safety
    Unsafe: the ROCm index is the newest one serving the newest torch release that the torch
    pinned in the same file's pip commands admits (the table of ROC802). Behind pip's
    `--extra-index-url` or `PIP_EXTRA_INDEX_URL` it is offered only when that torch is bounded
    to releases the index has, since pip otherwise installs PyPI's newer CUDA build (uv searches
    the extra index first). Nightly indexes are reported without a fix.

    ## References
    - rocm-facts.md §9 (index URL row)
    """

    code = "ROC865"
    fix = Fixing(
        replaces_vendor=True,
        title="Use the PyTorch ROCm wheel index for the pinned torch",
        applicability=Applicability.UNSAFE,
    )
    name = "pip-cuda-wheel-index"
    category = "container"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", aggregate="file", effort_hours=0.25)
    message = "PyTorch CUDA wheel index: installs CUDA builds that find no GPU on ROCm"
    fact = "§9 index-url row, index releases; [P17][P18][K1]"
    parsing = Parsing(
        triggers=("download.pytorch.org/whl/",),
        file_kinds=frozenset({"dockerfile", "shell", "ci-yaml"}),
    )
    valid = [
        Valid(
            "RUN pip install torch --index-url https://download.pytorch.org/whl/rocm6.4\n",
            path="Dockerfile",
        ),
        Valid(
            "# pip install torch --index-url https://download.pytorch.org/whl/cu121\n",
            path="setup.sh",
        ),
        Valid(
            "pip install torch --index-url https://download.pytorch.org/whl/cpu\n", path="setup.sh"
        ),
        # expected values of a shell unit test: arguments of a command that installs nothing
        Valid(
            'assert_eq "CUDA 12.6 -> cu126" "https://download.pytorch.org/whl/cu126" "$_result"\n'
            'check "pin" "$(escape "$venv" "https://download.pytorch.org/whl/cu128")" false\n',
            path="tests/sh/test_index_url.sh",
        ),
    ]
    invalid = [
        Invalid(
            "RUN uv pip install --no-cache-dir \\\n    torch==2.10.0 \\\n"
            "    torchvision==0.25.0 \\\n    --index-url https://download.pytorch.org/whl/cu129\n",
            path="Dockerfile",
            fixed="RUN uv pip install --no-cache-dir \\\n    torch==2.10.0 \\\n"
            "    torchvision==0.25.0 \\\n    --index-url https://download.pytorch.org/whl/rocm7.1\n",
            line=4,
            column=17,
        ),
        Invalid(
            "export PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cu118\n"
            "pip install 'torch>=2.1,<2.2'\n",
            path="env.sh",
            fixed="export PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/rocm5.6\n"
            "pip install 'torch>=2.1,<2.2'\n",
        ),
        Invalid(
            "RUN pip install torch==2.0.1 --index-url https://download.pytorch.org/whl/cu118\n",
            path="Dockerfile",
            fixed="RUN pip install torch==2.0.1 --index-url https://download.pytorch.org/whl/rocm5.4.2\n",
        ),
        Invalid(
            "RUN pip install torch --extra-index-url https://download.pytorch.org/whl/cu121\n",
            path="Dockerfile",
            fixed=None,
        ),
        Invalid(  # a variable that a later pip command reads
            'TORCH_INDEX="https://download.pytorch.org/whl/cu121"\n'
            'pip install torch==2.3.1 --index-url "$TORCH_INDEX"\n',
            path="install.sh",
            fixed='TORCH_INDEX="https://download.pytorch.org/whl/rocm6.0"\n'
            'pip install torch==2.3.1 --index-url "$TORCH_INDEX"\n',
        ),
        Invalid(
            "steps:\n  - run: pip install torch --index-url https://download.pytorch.org/whl/nightly/cu126\n",
            path=".github/workflows/nightly.yml",
            fixed=None,
        ),
        Invalid(  # a Dockerfile the project's code writes out: found in the string, never fixed
            'DOCKERFILE = f"""FROM {base}\nRUN pip install torch \\\\\n'
            '    --index-url https://download.pytorch.org/whl/cu113\n"""\n',
            path="deploy/templates.py",
            fixed=None,
            line=3,
            column=17,
        ),
    ]

    def check(self) -> None:
        text = self.ctx.text
        spans = [(offset, offset + len(code)) for offset, code in code_lines(text)]
        if self.ctx.kind == "shell":
            spans = _without_data_arguments(text, spans)

        def choose(start: int) -> tuple[str | None, str]:
            return index_choice(text, start)

        for start, end, message, replacement in cuda_index_edits(url_matches(text, spans), choose):
            self.report((start, end), message=message, fix=Rewrite(replacement))


#: Commands that install (or fetch) packages: a wheel index among their arguments is where torch
#: comes from.
_INSTALLERS = frozenset(
    {"pip", "pip3", "uv", "conda", "mamba", "micromamba", "pipx", "poetry", "curl", "wget"}
)
_INDEX_OPTIONS = ("-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--index")


def _installs(segment: list[Token]) -> bool:
    for token in segment:
        name = token.value.rsplit("/", 1)[-1]
        if name in _INSTALLERS:
            return True
        if name.startswith(("pip3.", "python")) and any(other.value == "-m" for other in segment):
            return True
    return False


def _is_source(segment: list[Token], index: int) -> bool:
    """Whether the word at ``index`` is an install source: a variable's value
    (``TORCH_INDEX=url``, ``export PIP_EXTRA_INDEX_URL=url``), an index option's value, or any
    word of an installing command."""
    word = segment[index].value
    before = segment[index - 1].value if index else ""
    return (
        "=" in word.split("://", 1)[0]
        or before in _INDEX_OPTIONS
        or word.startswith(tuple(f"{option}=" for option in _INDEX_OPTIONS))
        or _installs(segment)
    )


def _without_data_arguments(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` minus the words that are data for another command (the expected value in
    ``assert_eq "cu126" "https://download.pytorch.org/whl/cu126" "$got"``): such a URL is
    text, not where anything is installed from."""
    holes = []
    for segment in command_segments(text):
        for index, token in enumerate(segment):
            if "download.pytorch.org/whl/" in token.value and not _is_source(segment, index):
                holes.append((token.start, token.end))
    if not holes:
        return spans
    out = []
    for start, end in spans:
        cursor = start
        for hole_start, hole_end in holes:
            if hole_end <= cursor or hole_start >= end:
                continue
            if hole_start > cursor:
                out.append((cursor, hole_start))
            cursor = max(cursor, hole_end)
        if cursor < end:
            out.append((cursor, end))
    return out
