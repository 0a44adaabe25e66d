"""Shell commands written in Markdown documentation, the one reading of them: the fenced code
blocks a user copies into a terminal (``bash``, ``sh``, ``shell``, ``console``, ``zsh``, or an
unlabelled block whose every line reads as a command), ``$ `` prompts removed, blocks for Windows
(PowerShell, cmd, or under a heading naming Windows) left out, and so are the NVIDIA route's
blocks of a document that has its own ROCm section or instructions. Each block keeps the offset in
the Markdown text of every character, so what is found in it is placed on the real line."""

from __future__ import annotations

import re
from collections.abc import Iterator

#: Fence labels of shell blocks (the first word of the info string, lower case).
SHELL_LABELS = frozenset(
    {"bash", "sh", "shell", "console", "zsh", "shell-session", "shellsession", "sh-session"}
)
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)$")
_HEADING = re.compile(r"^[ ]{0,3}(?P<level>#{1,6})[ \t]+(?P<title>.*)$")
#: Words of a heading or of the line introducing a block that say it is for another platform.
_OTHER_PLATFORM = re.compile(r"\bwindows\b|\bwin(?:32|64)\b|powershell", re.IGNORECASE)
#: A heading naming ROCm or AMD: the document has a section of its own ROCm instructions.
_ROCM_TITLE = re.compile(r"\b(?:rocm|amd)\b", re.IGNORECASE)
_ROCM_SECTION = re.compile(r"^[ ]{0,3}#{1,6}[ \t]+.*\b(?:rocm|amd)\b", re.IGNORECASE | re.MULTILINE)
#: A mention of ROCm, or a heading naming AMD: the document has its own ROCm instructions.
_ROCM_HEADING = re.compile(r"\brocm\b|^[ ]{0,3}#{1,6}[ \t]+.*\bamd\b", re.IGNORECASE | re.MULTILINE)
_NVIDIA_SECTION = re.compile(
    rf"{_OTHER_PLATFORM.pattern}|\bnvidia\b|\bcuda\b(?!.*\b(?:rocm|amd)\b)", re.IGNORECASE
)
#: A command's own comment naming the ROCm choice: the documentation leaves the pick to the reader.
_ROCM_CHOICE = re.compile(r"\s#.*\brocm", re.IGNORECASE)
_PROMPT = re.compile(r"^[ \t]*(?:\([\w.-]+\)[ \t]*)?\$[ \t]")
#: First words of a line that make an unlabelled block read as commands.
_COMMANDS = frozenset(
    {
        "pip",
        "pip3",
        "python",
        "python3",
        "conda",
        "mamba",
        "micromamba",
        "uv",
        "poetry",
        "git",
        "cd",
        "export",
        "source",
        "sudo",
        "apt",
        "apt-get",
        "docker",
        "bash",
        "sh",
        "wget",
        "curl",
        "make",
        "cmake",
        "mkdir",
        "torchrun",
        "accelerate",
        "deepspeed",
        "nvidia-smi",
        "huggingface-cli",
    }
)
_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=\S*$")


def shell_blocks(text: str) -> Iterator[tuple[str, list[int]]]:
    """(value, offsets) of each shell block of a Markdown text: ``offsets[i]`` is the offset in
    ``text`` of ``value[i]``, with one more entry after the last character."""
    offset = 0
    heading = ""
    # a document that speaks of ROCm: its NVIDIA/CUDA sections ("For CUDA users:") are the
    # other platform's
    other = _NVIDIA_SECTION if _ROCM_HEADING.search(text) else _OTHER_PLATFORM
    # a document with a ROCm section: ROCm users follow that section, the rest is NVIDIA's route
    rocm_section = _ROCM_SECTION.search(text) is not None
    titles: list[tuple[int, str]] = []
    before = ""
    lines = text.splitlines(keepends=True)
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = _FENCE.match(line.rstrip("\r\n"))
        if fence is None:
            found = _HEADING.match(line)
            if found is not None:
                heading = found["title"]
                level = len(found["level"])
                titles = [*(t for t in titles if t[0] < level), (level, heading)]
            if line.strip():
                before = line
            offset += len(line)
            index += 1
            continue
        marker, indent = fence["fence"], len(fence["indent"])
        label = fence["info"].strip().split(None, 1)[0].lower() if fence["info"].strip() else ""
        body: list[tuple[int, str]] = []
        offset += len(line)
        index += 1
        while index < len(lines):
            inner = lines[index]
            stripped = inner.strip()
            if stripped.startswith(marker[0] * len(marker)) and not stripped.strip(marker[0]):
                offset += len(inner)
                index += 1
                break
            body.append((offset, inner))
            offset += len(inner)
            index += 1
        context = f"{heading}\n{before}"
        elsewhere = rocm_section and not any(_ROCM_TITLE.search(title) for _, title in titles)
        if not elsewhere and other.search(context) is None and _is_shell(label, body):
            yield _value(body, indent)
        before = ""


def _is_shell(label: str, body: list[tuple[int, str]]) -> bool:
    if label in SHELL_LABELS:
        return True
    if label:
        return False  # python, powershell, cmd, text, yaml ...: not a shell block
    return _reads_as_commands([line for _, line in body])


def _reads_as_commands(lines: list[str]) -> bool:
    """Whether every line of an unlabelled block is a command (a known first word, or an
    environment assignment before one), a comment, or continues the line before it."""
    seen = False
    continued = False
    prompted = any(_PROMPT.match(line) for line in lines)
    for line in lines:
        if prompted and not continued and _PROMPT.match(line) is None:
            continue  # the output of a command
        stripped = _PROMPT.sub("", line).strip()
        if not stripped or stripped.startswith("#"):
            continued = False
            continue
        if not continued:
            words = stripped.split()
            while words and _ASSIGNMENT.match(words[0]):
                words = words[1:]
            if not words or words[0] not in _COMMANDS:
                return False
            seen = True
        continued = stripped.endswith("\\")
    return seen


def _value(body: list[tuple[int, str]], indent: int) -> tuple[str, list[int]]:
    """The block's text with the fence's indentation and ``$ `` prompts removed; in a block with
    prompts, the lines without one are the commands' output and are left out."""
    prompted = any(_PROMPT.match(line) for _, line in body)
    out: list[str] = []
    where: list[int] = []
    continued = False
    for start, line in body:
        cut = 0
        prompt = _PROMPT.match(line)
        if prompt is not None:
            cut = prompt.end()
        elif prompted and not continued:
            line_end = len(line.rstrip("\r\n"))
            out.append("\n")
            where.append(start + line_end)
            continue
        else:
            cut = min(indent, len(line) - len(line.lstrip(" \t")))
        content = line[cut:].rstrip("\r\n")
        if _ROCM_CHOICE.search(content):
            # ``--index-url .../cu126  # full options are cpu/.../rocm6.4``: the reader picks
            out.append("\n")
            where.append(start + len(line.rstrip("\r\n")))
            continued = content.rstrip().endswith("\\")
            continue
        out.append(content + "\n")
        where.extend(range(start + cut, start + cut + len(content) + 1))
        continued = content.rstrip().endswith("\\")
    end = (where[-1] + 1) if where else (body[-1][0] if body else 0)
    where.append(end)
    return "".join(out), where


__all__ = ["SHELL_LABELS", "shell_blocks"]
