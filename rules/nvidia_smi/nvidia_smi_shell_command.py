"""ROC211 (nvidia-smi-shell-command): flags `nvidia-smi` run as a command in shell scripts,
Dockerfiles, compose files, CI workflows and notebook `!` lines (not in comments, not as an
argument of `echo`, not in presence probes such as `command -v nvidia-smi`)."""

from __future__ import annotations

import re

from migrator.api import (
    Applicability,
    Fixing,
    Impact,
    Invalid,
    Parsing,
    Problem,
    Rewrite,
    Severity,
    TextRule,
    Valid,
)

from .._shell import command_args, command_position, in_quotes, iter_lines
from ._shared import _FACT, _message, suggest

# Shell, Dockerfile, compose, CI YAML (and notebook ``!`` lines)
_WORD = re.compile(r"(?<![\w./$-])(?:/[\w.-]+)*/?nvidia-smi(?![\w.-])")

_PROBES = frozenset({"-v", "which", "type", "hash", "-V"})

_STATEMENT_PREFIX = re.compile(r"^\s*(?:(?:RUN|run:|-|script:)\s+)*$")

_GUARD = "if command -v nvidia-smi >/dev/null 2>&1; then {original}; else {amd}; fi"

#: ``|| true`` / ``|| :`` ending a command list: the script tolerates the command failing.
_TOLERATED = re.compile(r"\|\|\s*(?:true|:)\s*(?:[;)#]|$)")
#: ``NAME=$(`` (or ``export NAME=$(``, ``local NAME=$(``) right before a command substitution.
_CAPTURE = re.compile(r"(?:^|[\s;&|(])(?:export\s+|local\s+)?(?P<name>[A-Za-z_]\w*)=\$\($")
#: a line that only prints (``echo ...``, ``printf ...``), after a YAML ``run:``/``- `` prefix.
_PRINT = re.compile(r"^\s*(?:-\s+)?(?:run:\s*)?(?:echo|printf)\b")


def _log_only(text: str, code: str, start: int) -> bool:
    """Whether an ``nvidia-smi`` at ``start`` of ``code`` is a tolerated diagnostic: its command
    list ends in ``|| true`` (a missing nvidia-smi does not stop the script) and its output
    only reaches the log, either directly or through a variable captured with ``$(...)`` that
    is only ever printed (``V=$(nvidia-smi ... || true)``, then ``echo "driver: $V"``)."""
    before = code[:start]
    opening = before.rfind("$(")
    if opening >= 0 and ")" not in before[opening:]:
        depth, end = 1, start
        while end < len(code) and depth:
            depth += {"(": 1, ")": -1}.get(code[end], 0)
            end += 1
        if depth or not _TOLERATED.search(code[start:end]):
            return False
        capture = _CAPTURE.search(before[: opening + 2])
        if capture is None:
            return False
        name = capture.group("name")
        uses = re.compile(r"\$\{?" + name + r"\b")
        return all(_PRINT.match(line) for line in text.splitlines() if uses.search(line))
    if "`" in before:
        return False
    statement = re.split(r"&&|;", code[start:], maxsplit=1)[0]
    return bool(_TOLERATED.search(statement + "\n"))


#: A shell script that stops at the first failing command: ``set -e``, ``set -euo pipefail``,
#: ``set -o errexit``, ``#!/bin/bash -e``.
_ERREXIT = re.compile(
    r"^[ \t]*set[ \t]+(?:-[A-Za-z]*e[A-Za-z]*\b|.*-o[ \t]+errexit)|\A#![^\n]*[ \t]-[A-Za-z]*e",
    re.MULTILINE,
)
#: What a diagnostic the script survives costs on ROCm.
_SURVIVED = (
    "; a diagnostic the script survives (it does not stop on errors): on ROCm it prints an "
    "error and the script carries on"
)


class NvidiaSmiShellCommand(TextRule):
    """
    ## What it does
    Flags `nvidia-smi` run as a command in shell scripts, Dockerfiles, compose files, CI
    workflows and notebook `!` lines (not in comments, not as an argument of `echo`, not in
    presence probes such as `command -v nvidia-smi`, not in a tolerated diagnostic: a command
    list ending in `|| true` whose output only reaches the log, directly or through a captured
    variable that is only printed).

    ## Why it breaks on ROCm
    ROCm machines have no `nvidia-smi`: the command exits with 127 (`command not found`),
    which aborts scripts running under `set -e` and fails CI steps and health checks. The
    ROCm tool is `amd-smi`, with different flags and output formats. A whole-line command in a
    shell script that does not stop on errors (no `set -e`), with more commands after it, is a
    diagnostic the script survives: reported at info.

    ## Example
    ```python
    # launch.sh
    nvidia-smi -L
    nvidia-smi --query-gpu=memory.used,memory.total --format=csv
    ```

    ## Fix
    A command that is a whole line and whose flags map one to one (`nvidia-smi`, `-L`,
    `topo -m`, `dmon`) keeps working on both vendors:
    ```python
    # launch.sh
    if command -v nvidia-smi >/dev/null 2>&1; then nvidia-smi -L; else amd-smi list; fi
    nvidia-smi --query-gpu=memory.used,memory.total --format=csv
    ```
    Other invocations are reported with the amd-smi command to use (here
    `amd-smi metric --mem-usage --csv`).

    ## Fix safety
    Unsafe. NVIDIA machines run the original command; ROCm machines print amd-smi's layout,
    which differs (`amd-smi` alone shows a summary only from ROCm 7.13, older versions print
    the command list). Lines that mention `amd-smi` or `rocm-smi` are treated as already
    ported.

    ## References
    - ROCm/amdsmi `amdsmi_cli/README.md`
    """

    code = "ROC211"
    name = "nvidia-smi-shell-command"
    category = "nvidia-smi"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", aggregate="file", effort_hours=0.5)
    message = "`nvidia-smi` does not exist on ROCm; use `amd-smi`"
    fix = Fixing(
        title="Fall back to the matching amd-smi command when nvidia-smi is absent",
        applicability=Applicability.UNSAFE,
    )
    fact = _FACT
    parsing = Parsing(
        triggers=("nvidia-smi",),
        file_kinds=frozenset({"shell", "dockerfile", "compose", "ci-yaml"}),
    )
    valid = [
        Valid("# check GPUs with nvidia-smi\namd-smi list\n", path="run.sh"),
        Valid('echo "install nvidia-smi first"\n', path="run.sh"),
        Valid(
            "if command -v nvidia-smi >/dev/null; then nvidia-smi; else amd-smi; fi\n",
            path="run.sh",
        ),
        Valid("pip install nvidia-smi-exporter\n", path="run.sh"),
        Valid("services:\n  app:\n    image: x  # nvidia-smi inside\n", path="docker-compose.yml"),
        # a tolerated diagnostic: the failure is ignored and the output only reaches the log
        Valid(
            "set -e\nDRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader"
            ' | head -n 1 || true)\necho "CUDA driver: ${DRIVER}"\n',
            path="ci.sh",
        ),
        Valid("nvidia-smi -L || true\n", path="run.sh"),
    ]
    #: a diagnostic in a script that carries on (no ``set -e``) is reported at info (a hint):
    #: ``tests/test_item47_noise.py`` checks the severity
    invalid = [
        Invalid(
            "#!/bin/bash\nset -e\nnvidia-smi\n",
            fixed="#!/bin/bash\nset -e\n"
            "if command -v nvidia-smi >/dev/null 2>&1; then nvidia-smi; else amd-smi; fi\n",
            path="run.sh",
            line=3,
            column=1,
        ),
        Invalid(
            "  nvidia-smi -L  # list GPUs\n",
            fixed="  if command -v nvidia-smi >/dev/null 2>&1; "
            "then nvidia-smi -L; else amd-smi list; fi  # list GPUs\n",
            path="run.sh",
        ),
        Invalid(
            "nvidia-smi --query-gpu=name,memory.total --format=csv\n",
            path="scripts/launch.sh",
        ),
        Invalid("MEM=$(nvidia-smi --query-gpu=memory.used --format=csv)\n", path="x.sh", column=7),
        Invalid(
            "FROM ubuntu:22.04\nRUN nvidia-smi topo -m\n",
            fixed="FROM ubuntu:22.04\nRUN if command -v nvidia-smi >/dev/null 2>&1; then "
            "nvidia-smi topo -m; else amd-smi topology; fi\n",
            path="Dockerfile",
            line=2,
            column=5,
        ),
        Invalid(
            'services:\n  app:\n    healthcheck:\n      test: ["CMD", "nvidia-smi"]\n',
            path="docker-compose.yml",
            line=4,
        ),
        Invalid(
            "jobs:\n  gpu:\n    steps:\n      - run: nvidia-smi\n",
            fixed="jobs:\n  gpu:\n    steps:\n"
            "      - run: if command -v nvidia-smi >/dev/null 2>&1; "
            "then nvidia-smi; else amd-smi; fi\n",
            path=".github/workflows/gpu.yml",
        ),
        Invalid("watch -n 1 nvidia-smi\n", path="x.sh", column=12),
        # tolerated, but the captured value decides something: on ROCm it is empty
        Invalid(
            'N=$(nvidia-smi -L | wc -l || true)\nif [ "$N" -gt 1 ]; then torchrun; fi\n',
            path="x.sh",
            column=5,
        ),
        Invalid("nvidia-smi -L && echo ok || true\n", path="x.sh"),
    ]

    def check(self) -> None:
        for offset, line, code in iter_lines(self.ctx.text):
            if "nvidia-smi" not in code or "amd-smi" in line or "rocm-smi" in line:
                continue
            for match in _WORD.finditer(code):
                self._check_match(offset, code, match)

    def _check_match(self, offset: int, code: str, match: re.Match[str]) -> None:
        start, end = match.span()
        quote = in_quotes(code, start)
        before = code[:start]
        if quote:
            # inside quotes: a command string ("nvidia-smi -L") or an exec-form element
            opening = before.rfind(quote)
            if before[opening + 1 :].strip():
                if not command_position(before[opening + 1 :]):
                    return
            before = before[:opening]
            tail = before.rstrip()
            if tail and not tail.endswith(("[", ",", "-c")) and not command_position(before):
                return
        else:
            words = before.split()
            if words and words[-1] in _PROBES:
                return
            if not command_position(before):
                return
        if not quote and _log_only(self.ctx.text, code, start):
            return
        args, command_end = command_args(code, end, quote)
        amd, exact = suggest(args)
        amd = amd.strip("`")
        statement = (
            self.ctx.kind != "compose"  # compose `command:` lists are exec arrays, not shell
            and not quote
            and _STATEMENT_PREFIX.match(before) is not None
            and not code[command_end:].strip()
            and "\\" not in code[end:]
        )
        replacement = None
        if statement and exact and not self.ctx.path.endswith(".ipynb"):
            # notebook `!` lines are reported but never rewritten by the engine
            original = code[start:command_end]
            replacement = _GUARD.format(original=original, amd=amd)
        # whole-line commands are displayed; anything else (pipes, $(...), quoted) is read
        parsed = not statement
        message = _message(args, parsed=parsed, shell=True)
        survived = statement and self._survives(offset + len(code))
        self.report(
            (offset + start, offset + (command_end if replacement else end)),
            message=message + _SURVIVED if survived else message,
            fix=Rewrite(replacement),
            problem=Problem(severity=Severity.INFO if survived else None),
        )

    def _survives(self, line_end: int) -> bool:
        """Whether a shell script carries on past a whole-line command that fails: the script
        does not stop on errors (no ``set -e``, ``set -o errexit`` or ``-e`` in its shebang) and
        more commands follow (the last one's status is the script's)."""
        if self.ctx.kind != "shell":
            return False  # a Dockerfile RUN, a CI step (bash -e) or a health check fails
        text = self.ctx.text
        if _ERREXIT.search(text):
            return False
        rest = text[line_end:]
        return any(line.strip() and not line.lstrip().startswith("#") for line in rest.splitlines())
