"""Which parts of a shell script (or of the shell in a CI file or Dockerfile) never run on a
ROCm (Linux) machine: branches of ``if``/``case`` on ``$OSTYPE``, ``uname`` or ``$OS`` that
only macOS or Windows take, a ``pyproject.toml``'s CUDA-variant extras
(``migrator.reach.variant_extras``) and whole conda environments of another platform
(``migrator.reach.platform_files``). The text counterpart of ``migrator.reach.guards`` (CI jobs
and steps on other runners: ``migrator.reach.ci_guards``); the engine marks text findings inside
as guarded.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from migrator.reach.guard_conditions import NON_LINUX, NVIDIA_ONLY
from migrator.reach.platform_files import foreign_platform
from migrator.reach.variant_extras import cuda_extra_regions
from migrator.syntax.shell_lex import lex

if TYPE_CHECKING:
    from migrator.knowledge.versions import ProjectFacts

_NVIDIA_TOOL_TEST = re.compile(r"^\s*(?:command\s+-v|which|type|hash)\s+nvidia-smi\b[^|&;]*;?\s*$")

_KEYWORDS = frozenset({"if", "then", "elif", "else", "fi"})
#: What a platform test compares: the OS type variable, ``uname`` (not ``uname -m``), ``$OS``.
_SUBJECT = re.compile(
    r"\$\{?OSTYPE\b|\$\(\s*uname(?:\s+-[so])?\s*\)|`uname(?:\s+-[so])?`|\$\{?OS\}?(?!\w)"
    r"|\$\{?RUNNER_OS\b"
)
_NON_LINUX_WORD = re.compile(
    r"^\^?[\"']?(darwin|macos|mac|osx|msys|cygwin|win32|win64|windows|windows_nt|mingw|freebsd)"
    r"[\w.*-]*[\"']?\*?$",
    re.IGNORECASE,
)
_LINUX_WORD = re.compile(r"^\^?[\"']?(linux)[\w.*-]*[\"']?\*?$", re.IGNORECASE)
_COMPARISON = re.compile(
    r"@OS@\s*(?P<op>==|=~|!=|=|-eq|-ne)\s*(?P<word>[^\s\]]+)"
    r"|(?P<word2>[^\s\[]+)\s*(?P<op2>==|!=|=)\s*@OS@"
)
_CASE = re.compile(r"^\s*case\s+(?P<subject>.+?)\s+in\b")
_ARM = re.compile(r"^\s*\(?\s*(?P<patterns>[^()]*?)\s*\)")


def regions(
    text: str, kind: str, facts: ProjectFacts | None = None, path: str = ""
) -> list[tuple[int, int, str]]:
    """(start, end, label) offset ranges of ``text`` that never run on a Linux machine: the
    whole file when it is provably another platform's environment. ``facts``: the project's,
    whose macros decide a C/C++/CUDA file's branches (None for a file read on its own);
    ``path``: the file's, in the project."""
    found: list[tuple[int, int, str]] = []
    whole = foreign_platform(text, kind)
    if whole:
        return [(0, len(text) + 1, whole)]
    if kind in {"shell", "ci-yaml", "dockerfile"}:
        found.extend(_if_regions(text))
        found.extend(_case_regions(text))
    if kind == "pyproject":
        found.extend(cuda_extra_regions(text))
    if kind == "cuda":
        from migrator.kernels.source import ProjectMacros
        from migrator.kernels.view import hip_skipped_regions

        found.extend(hip_skipped_regions(text, ProjectMacros.of(facts, path)))
    return sorted(found)


class TextGuards:
    """Answers ``guard_at(offset)`` for one text file (computed once, on first use)."""

    def __init__(
        self, text: str, kind: str, facts: ProjectFacts | None = None, path: str = ""
    ) -> None:
        self._text = text
        self._kind = kind
        self._facts = facts
        self._path = path
        self._regions: list[tuple[int, int, str]] | None = None
        self._starts: list[int] = []

    def guard_at(self, offset: int) -> str:
        """Why the text at ``offset`` never runs on a ROCm machine, or ""."""
        if self._regions is None:
            self._regions = regions(self._text, self._kind, self._facts, self._path)
            self._starts = [start for start, _, _ in self._regions]
        index = bisect.bisect_right(self._starts, offset)
        for start, end, label in reversed(self._regions[:index]):
            if start <= offset < end:
                return label
        return ""


def _words(text: str) -> Iterator[tuple[int, str, bool]]:
    """(offset, word as written, starts a command) for each word of the shared shell lexer
    (``migrator.syntax.shell_lex``): comments, quotes, escapes and line continuations read as the
    rules read them."""
    command_start = True
    for lexeme in lex(text):
        if lexeme.kind in {"newline", "operator"}:
            command_start = command_start or lexeme.value != ")"
            continue
        if lexeme.kind != "word":
            continue
        word = text[lexeme.start : lexeme.end]
        yield lexeme.start, word, command_start and not lexeme.quoted
        # ``then``/``else``/``do`` are followed by a command
        command_start = not lexeme.quoted and word in _KEYWORDS and word != "fi"


def _classify(condition: str) -> tuple[bool, bool]:
    """(then-branch is non-Linux, later branches are non-Linux) for an ``if`` condition."""
    if not _SUBJECT.search(condition):
        return False, False
    condition = _SUBJECT.sub("@OS@", condition).replace('"', "").replace("'", "")
    tests = list(_COMPARISON.finditer(condition))
    if not tests:
        return False, False
    alternatives = condition.count("||") + len(re.findall(r"\s-o\s", condition))
    conjunctions = condition.count("&&") + len(re.findall(r"\s-a\s", condition))
    senses = []
    for test in tests:
        negative = (test.group("op") or test.group("op2")) in {"!=", "-ne"}
        word = (test.group("word") or test.group("word2")).rstrip(";")
        if _NON_LINUX_WORD.match(word):
            senses.append("other" if not negative else "not-other")
        elif _LINUX_WORD.match(word):
            senses.append("linux" if not negative else "not-linux")
        else:
            return False, False
    if alternatives:
        # ``a || b``: non-Linux only when every alternative is a non-Linux test
        then_other = (
            alternatives + 1 == len(tests)
            and not conjunctions
            and all(s in {"other", "not-linux"} for s in senses)
        )
        return then_other, False
    if conjunctions:
        return any(s in {"other", "not-linux"} for s in senses), False
    sense = senses[0] if len(senses) == 1 else ""
    return sense in {"other", "not-linux"}, sense in {"linux", "not-other"}


def _if_regions(text: str) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []
    #: per open ``if``: [condition start, branch start, branch label, later branches' label]
    stack: list[list[object]] = []
    for offset, word, first in _words(text):
        if not first or word not in _KEYWORDS:
            continue
        if word == "if":
            stack.append([offset + 2, -1, "", ""])
        elif not stack:
            continue
        elif word == "elif":
            frame = stack[-1]
            _close(frame, offset, out)
            frame[0], frame[1] = offset + 4, -1
        elif word == "then":
            frame = stack[-1]
            start = frame[0]
            assert isinstance(start, int)
            if start >= 0:
                condition = text[start:offset]
                then_other, rest_other = _classify(condition)
                then_label = NON_LINUX if then_other else ""
                if not then_label and _NVIDIA_TOOL_TEST.match(condition):
                    # ``if command -v nvidia-smi; then ...``: only where the NVIDIA tool exists
                    then_label = NVIDIA_ONLY
                frame[2] = frame[3] or then_label
                frame[3] = frame[3] or (NON_LINUX if rest_other else "")
                frame[0] = -1
            frame[1] = offset + 4
        elif word == "else":
            frame = stack[-1]
            _close(frame, offset, out)
            frame[1] = offset + 4
            frame[2] = frame[3]
        elif word == "fi":
            _close(stack.pop(), offset, out)
    return out


def _close(frame: list[object], end: int, out: list[tuple[int, int, str]]) -> None:
    start, label = frame[1], frame[2]
    if isinstance(start, int) and start >= 0 and isinstance(label, str) and label:
        out.append((start, end, label))
    frame[1] = -1
    frame[2] = ""


def _case_regions(text: str) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []
    lines = text.splitlines(keepends=True)
    offset = 0
    inside = False
    arm_start: int | None = None
    for line in lines:
        code = line.split("#", 1)[0] if line.lstrip().startswith("#") else line
        if not inside:
            match = _CASE.match(code)
            if match and _SUBJECT.search(match.group("subject")):
                inside = True
        elif re.match(r"^\s*esac\b", code):
            if arm_start is not None:
                out.append((arm_start, offset, NON_LINUX))
            inside, arm_start = False, None
        else:
            arm = _ARM.match(code) if arm_start is None else None
            if arm is not None and ";;" not in code[: arm.start()]:
                patterns = [p.strip() for p in arm.group("patterns").split("|")]
                if patterns and all(_NON_LINUX_WORD.match(p) for p in patterns):
                    arm_start = offset + arm.end()
            if arm_start is not None and ";;" in code:
                out.append((arm_start, offset + code.index(";;"), NON_LINUX))
                arm_start = None
        offset += len(line)
    return out
