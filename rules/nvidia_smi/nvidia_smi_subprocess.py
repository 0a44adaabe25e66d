"""ROC210 (nvidia-smi-subprocess): flags Python code that runs `nvidia-smi`."""

from __future__ import annotations

import re
import shlex

import libcst as cst

from migrator.api import (
    Applicability,
    Fixing,
    Impact,
    Invalid,
    Parsing,
    PythonContext,
    PythonRule,
    Rewrite,
    Severity,
    Valid,
)
from migrator.api.reach import caught_with_fallback
from migrator.api.syntax import string_value, syntax_children

from .._aliases import alias_kind, assigned_value_aliases
from .._rocm_guards import called_only_on_nvidia, called_only_where
from .._shell import command_args, command_position
from .._tree import Tree, tree
from ._shared import _FACT, _PROGRAM, _message, suggest

#: Exceptions a missing ``nvidia-smi`` raises through ``subprocess`` (or a failed run).
_PROGRAM_ERRORS = frozenset(
    {"FileNotFoundError", "OSError", "CalledProcessError", "SubprocessError", "TimeoutExpired"}
)


def _is_program(word: str) -> bool:
    return word == _PROGRAM or word.endswith("/" + _PROGRAM)


# Python
_SPAWN = {
    "subprocess.run": "runs",
    "subprocess.call": "runs",
    "subprocess.check_call": "runs",
    "os.system": "runs",
    "subprocess.check_output": "reads",
    "subprocess.getoutput": "reads",
    "subprocess.getstatusoutput": "reads",
    "subprocess.Popen": "reads",
    "os.popen": "reads",
    "asyncio.create_subprocess_exec": "exec",
    "asyncio.create_subprocess_shell": "reads",
}

_CAPTURE_KEYWORDS = frozenset({"stdout", "capture_output"})


def _string_words(value: str) -> tuple[list[str], bool] | None:
    """For a command string whose first command word is nvidia-smi: its arguments and whether
    the string is exactly that one command (no pipes, separators or redirections)."""
    try:
        words = shlex.split(value, posix=True)
    except ValueError:
        return None
    if not words:
        return None
    if _is_program(words[0]):
        simple = not re.search(r"[;&|<>`$()]", value)
        start = value.find(_PROGRAM) + len(_PROGRAM)
        _, end = command_args(value, start, None)
        try:
            rest = shlex.split(value[start:end], posix=True)
        except ValueError:
            rest = value[start:end].split()
        return rest, simple
    # nvidia-smi later in a shell pipeline or list: report, never fix
    for match in re.finditer(r"(?<![\w./-])(?:/[\w./-]*/)?nvidia-smi(?![\w.-])", value):
        if command_position(value[: match.start()]):
            args, _ = command_args(value, match.end(), None)
            return args, False
    return None


def _names_smi(node: cst.BaseExpression, smi_functions: set[str]) -> bool:
    """Whether an expression always evaluates to the nvidia-smi program: the literal, an ``or``
    ending in it (``shutil.which("nvidia-smi") or "/usr/bin/nvidia-smi"``), or a call of a local
    function that returns one. A bare ``shutil.which`` is a presence probe (None on ROCm), not a
    command."""
    value = string_value(node)
    if value is not None:
        return _is_program(value)
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
        return _names_smi(node.right, smi_functions)
    if isinstance(node, cst.Call):
        func = node.func
        return isinstance(func, cst.Name) and func.value in smi_functions
    return False


def _callable_by_name(tree_: Tree, function: cst.FunctionDef) -> bool:
    """Whether a bare-name call can reach ``function``: a method is reached through its
    instance or class (``self.smi()``), and a bare ``smi()`` elsewhere is a ``NameError``."""
    for ancestor in tree_.ancestors(function):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            return True
        if isinstance(ancestor, cst.ClassDef):
            return False
    return True


def _smi_values(
    module: cst.Module,
) -> tuple[Tree, set[str], dict[tuple[int, str], str | None]]:
    """Names that hold the nvidia-smi program in this module (a constant, a variable set from a
    local helper), found once per file: values that reach a command through a variable."""
    tree_ = tree(module)
    cached = tree_.memo.get("nvidia-smi-values")
    if cached is None:
        functions: set[str] = set()
        for node in tree_.nodes:
            if isinstance(node, cst.Return) and node.value is not None:
                scope = tree_.scope(node)
                if (
                    isinstance(scope, cst.FunctionDef)
                    and _callable_by_name(tree_, scope)
                    and _names_smi(node.value, functions)
                ):
                    functions.add(scope.name.value)

        def classify(
            value: cst.BaseExpression, found: dict[tuple[int, str], str | None]
        ) -> str | None:
            if _names_smi(value, functions) or alias_kind(tree_, found, value) == "smi":
                return "smi"
            return None

        cached = (tree_, functions, assigned_value_aliases(tree_, classify))
        tree_.memo["nvidia-smi-values"] = cached
    result: tuple[Tree, set[str], dict[tuple[int, str], str | None]] = cached
    return result


class NvidiaSmiSubprocess(PythonRule):
    """
    ## What it does
    Flags Python code that runs `nvidia-smi`: `subprocess.run/call/check_call/check_output/
    Popen/getoutput`, `os.system`, `os.popen`, asyncio subprocesses, and command lists whose
    first element is `nvidia-smi` — also when it reaches the list through a module constant, a
    variable or a local helper function (`cmd = _nvidia_smi(); subprocess.run([cmd, "-L"])`).

    ## Why it breaks on ROCm
    ROCm machines have no `nvidia-smi`: the list form raises `FileNotFoundError`, the shell
    form exits with 127. The ROCm tool is `amd-smi` (`rocm-smi` on older stacks), whose flags
    and output formats differ, so any parser of the output must be ported by hand.
    A call inside a `try` whose handler catches the failure (`FileNotFoundError`, `OSError`,
    `CalledProcessError`, `Exception`) and does not raise is not reported: on ROCm the
    handler's path runs instead. The same holds for a call inside a helper function whose every
    call in the file sits in such a `try` of its caller (`try: mem = nvidia_memory() except:
    pass`, followed by the AMD probe).

    ## Example
    ```python
    import subprocess

    subprocess.run(["nvidia-smi", "-L"])
    out = subprocess.check_output(["nvidia-smi", "--query-gpu=memory.used", "--format=csv"])
    ```

    ## Fix
    When the output is only displayed (the call is a statement and captures nothing) and
    the flags map one to one (`nvidia-smi`, `-L`, `topo -m`, `dmon`):
    ```python
    import shutil
    import subprocess

    subprocess.run(["nvidia-smi", "-L"] if shutil.which("nvidia-smi") else ["amd-smi", "list"])
    ```
    Calls whose output is read are reported with the amd-smi command to use
    (`amd-smi metric --mem-usage --csv` above).

    ## Fix safety
    Unsafe. On NVIDIA machines the original command still runs (nvidia-smi is on `PATH`), but
    on ROCm the displayed text is amd-smi's, whose layout differs; `amd-smi` without arguments
    shows a summary only from ROCm 7.13 (older versions print the command list).

    ## Known problems
    Not reported inside a module-level helper that the file calls only from NVIDIA-only branches
    (`if "nvidia" in gpu_name: _check_nvidia_links()`).

    ## References
    - ROCm/amdsmi `amdsmi_cli/README.md`
    - rocm.docs.amd.com amdsmi "AMD SMI CLI tool usage"
    """

    code = "ROC210"
    name = "nvidia-smi-subprocess"
    category = "nvidia-smi"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", aggregate="scope", effort_hours=1.0)
    message = "`nvidia-smi` does not exist on ROCm; use `amd-smi`"
    fix = Fixing(
        title="Fall back to the matching amd-smi command when nvidia-smi is absent",
        applicability=Applicability.UNSAFE,
    )
    fact = _FACT
    # the program reaches a command through module-level constants and helpers, and a helper's
    # callers decide whether it runs: the top-level statements connected by module-level names
    parsing = Parsing(triggers=("nvidia-smi",), scope="names")
    valid = [
        Valid(  # a helper called only when the GPU's name says NVIDIA; AMD has its own branch
            "import subprocess\n"
            "import torch\n"
            "def _check_nvidia_links(report):\n"
            "    out = subprocess.run(['nvidia-smi', 'topo', '-m'], stdout=subprocess.PIPE)\n"
            "    report(out.stdout)\n"
            "def check_links(report):\n"
            "    name = torch.cuda.get_device_properties(0).name.lower()\n"
            "    if 'nvidia' in name:\n"
            "        _check_nvidia_links(report)\n"
            "    elif 'amd' in name:\n"
            "        _check_amd_links(report)\n"
        ),
        Valid(  # the helper's only caller catches the failure and probes the AMD tool next
            "import subprocess\n\n"
            "def nvidia_memory():\n"
            "    out = subprocess.run(['nvidia-smi', '--query-gpu=memory.used',\n"
            "                          '--format=csv'], stdout=subprocess.PIPE, text=True)\n"
            "    return out.stdout\n\n"
            "def all_memory():\n"
            "    found = {}\n"
            "    try:\n"
            "        found['nvidia'] = nvidia_memory()\n"
            "    except:\n"
            "        pass\n"
            "    try:\n"
            "        found['amd'] = amd_memory()\n"
            "    except:\n"
            "        pass\n"
            "    return found\n"
        ),
        Valid('import subprocess\n\nsubprocess.run(["amd-smi", "list"])\n'),
        Valid(  # a method's name called bare is a NameError, not the method
            "import subprocess\n\n"
            "class Probe:\n"
            "    def smi(self):\n"
            '        return "nvidia-smi"\n\n'
            "def gpus():\n"
            '    return subprocess.run([smi(), "-L"], capture_output=True).stdout\n'
        ),
        Valid('import subprocess\n"""Runs nvidia-smi -L to list GPUs."""\n# nvidia-smi -L\n'),
        Valid('def run(cmd):\n    pass\n\nrun("nvidia-smi")\n'),
        Valid(
            'import shutil\nimport subprocess\n\nsubprocess.run(["nvidia-smi"] if '
            'shutil.which("nvidia-smi") else ["amd-smi"])\n'
        ),
        Valid('import subprocess\n\nsubprocess.run(["echo", "nvidia-smi"])\n'),
        Valid(
            "import subprocess\nimport torch\n\n"
            "def gpu_name():\n"
            "    try:\n"
            '        return subprocess.check_output(["nvidia-smi", "-L"], text=True)\n'
            "    except Exception:\n"
            "        return torch.cuda.get_device_name(0)\n"
        ),
        Valid('import shutil\n\nif shutil.which("nvidia-smi"):\n    print("nvidia-smi")\n'),
        Valid(
            "import shutil\nimport subprocess\n\n"
            'smi = shutil.which("nvidia-smi")\n'
            'if smi:\n    subprocess.run([smi, "-L"])\n'
        ),
    ]
    invalid = [
        Invalid(
            'import subprocess\n\nsubprocess.run(["nvidia-smi", "-L"])\n',
            fixed='import subprocess\nimport shutil\n\nsubprocess.run(["nvidia-smi", "-L"] if '
            'shutil.which("nvidia-smi") else ["amd-smi", "list"])\n',
            line=3,
            column=1,
        ),
        Invalid(
            'import os\n\nos.system("nvidia-smi")\n',
            fixed="import os\nimport shutil\n\n"
            'os.system("nvidia-smi" if shutil.which("nvidia-smi") else "amd-smi")\n',
        ),
        Invalid(
            "from subprocess import check_output\n\n"
            'out = check_output(["nvidia-smi", "--query-gpu=memory.used", "--format=csv"])\n',
        ),
        Invalid(
            "import subprocess as sp\n\n"
            'smi = sp.run(["nvidia-smi"], capture_output=True, text=True)\n'
        ),
        Invalid('import subprocess\n\nsubprocess.run("nvidia-smi | grep MiB", shell=True)\n'),
        Invalid(
            "import subprocess\n\n"
            "try:\n"
            '    out = subprocess.check_output(["nvidia-smi", "-L"])\n'
            "except FileNotFoundError:\n"
            "    raise RuntimeError('nvidia-smi is required')\n",
            line=4,
        ),
        Invalid(  # one caller lets the failure through
            "import subprocess\n\n"
            "def nvidia_memory():\n"
            "    return subprocess.check_output(['nvidia-smi', '-q'], text=True)\n\n"
            "def probe():\n"
            "    try:\n"
            "        return nvidia_memory()\n"
            "    except FileNotFoundError:\n"
            "        return None\n\n"
            "def report():\n"
            "    print(nvidia_memory())\n",
            line=4,
        ),
        Invalid('CMD = ["nvidia-smi", "topo", "-m"]\n', line=1, column=7),
        Invalid(
            "import shutil\nimport subprocess\n\n"
            "def _nvidia_smi():\n"
            '    return shutil.which("nvidia-smi") or "/usr/bin/nvidia-smi"\n\n'
            "def gpus():\n"
            "    cmd = _nvidia_smi()\n"
            '    return subprocess.run([cmd, "-L"], capture_output=True).stdout\n',
            line=9,
            column=12,
        ),
        Invalid(
            'import subprocess\n\nSMI = "nvidia-smi"\n\n'
            'out = subprocess.check_output([SMI, "--query-gpu=name", "--format=csv"])\n',
            line=5,
        ),
        Invalid(
            'import subprocess\n\nsubprocess.call("/usr/bin/nvidia-smi topo -m", shell=True)\n',
            fixed='import subprocess\nimport shutil\n\nsubprocess.call("/usr/bin/nvidia-smi '
            'topo -m" if shutil.which("nvidia-smi") else "amd-smi topology", shell=True)\n',
        ),
    ]

    def __init__(self, ctx: PythonContext) -> None:
        super().__init__(ctx)
        self._statements: set[int] = set()
        self._handled: set[int] = set()
        self._pending: list[tuple[cst.Call, str, Rewrite | None]] = []

    def visit_Expr(self, node: cst.Expr) -> None:
        self._statements.add(id(node.value))

    def visit_IfExp(self, node: cst.IfExp) -> None:
        # ``[...] if shutil.which("nvidia-smi") else [...]``: already dual-backend
        if "nvidia-smi" in self.ctx.code(node.test):
            self._mark(node)

    def _mark(self, node: cst.CSTNode) -> None:
        for child in syntax_children(node):
            self._handled.add(id(child))
            self._mark(child)

    def visit_Call(self, node: cst.Call) -> None:
        if id(node) in self._handled:
            return
        qualified = self.ctx.call_name(node)
        mode = _SPAWN.get(qualified or "")
        if mode is None or not node.args or node.args[0].keyword is not None:
            return
        if self._caught(node):
            self._handled.add(id(node.args[0].value))
            return  # on ROCm the handler's path runs (a fallback, or nothing), not a crash
        first = node.args[0].value
        if id(first) in self._handled:
            return
        if mode == "exec":
            program = string_value(first)
            if program is None or not _is_program(program):
                return
            rest = [
                string_value(argument.value)
                for argument in node.args[1:]
                if argument.keyword is None
            ]
            args = None if any(value is None for value in rest) else [str(value) for value in rest]
            self._handled.add(id(first))
            self._pending.append((node, _message(args, parsed=True), None))
            return
        found = self._command(first)
        if found is None:
            return
        args, simple = found
        self._handled.add(id(first))
        keywords = {argument.keyword.value for argument in node.args if argument.keyword}
        displayed = (
            mode == "runs" and id(node) in self._statements and not (keywords & _CAPTURE_KEYWORDS)
        )
        replacement = None
        imports: list[tuple[str, str | None]] = []
        if displayed and simple and args is not None:
            amd, exact = suggest(args)
            amd = amd.strip("`")
            if exact:
                shutil_name, imports = self.ctx.module_ref("shutil")
                amd_node = self._amd_literal(first, amd)
                test = cst.parse_expression(f'{shutil_name}.which("nvidia-smi")')
                new_first = cst.IfExp(
                    test=test,
                    body=first,
                    orelse=amd_node,
                    whitespace_before_if=cst.SimpleWhitespace(" "),
                    whitespace_after_if=cst.SimpleWhitespace(" "),
                    whitespace_before_else=cst.SimpleWhitespace(" "),
                    whitespace_after_else=cst.SimpleWhitespace(" "),
                )
                new_args = [node.args[0].with_changes(value=new_first), *node.args[1:]]
                replacement = node.with_changes(args=new_args)
        self._pending.append(
            (node, _message(args, parsed=not displayed), Rewrite(replacement, imports=imports))
        )

    def leave_Module(self, original_node: cst.Module) -> None:
        for node, message, fix in self._pending:
            if called_only_on_nvidia(self.ctx, node):
                continue  # a helper the file calls only from NVIDIA-only branches
            if called_only_where(self.ctx, node, self._caught):
                continue  # every caller catches the missing program and takes its own path
            self.report(node, message, fix)

    def _caught(self, node: cst.Call) -> bool:
        """Whether the call sits in the body of a ``try`` whose handler catches the missing
        program (``FileNotFoundError``/``OSError``/``CalledProcessError``/``Exception``) and
        does not raise."""
        return caught_with_fallback(node, self.ctx.ancestors(node), _PROGRAM_ERRORS)

    def _amd_literal(self, first: cst.BaseExpression, command: str) -> cst.BaseExpression:
        words = command.split()
        if isinstance(first, (cst.List, cst.Tuple)):
            inner = ", ".join(f'"{word}"' for word in words)
            return cst.parse_expression(
                f"[{inner}]" if isinstance(first, cst.List) else f"({inner},)"
            )
        return cst.parse_expression(f'"{command}"')

    def _command(self, first: cst.BaseExpression) -> tuple[list[str] | None, bool] | None:
        """(arguments or None when not all literal, whether the command is exactly one simple
        nvidia-smi invocation) when ``first`` runs nvidia-smi."""
        if isinstance(first, (cst.List, cst.Tuple)):
            if not first.elements:
                return None
            program = string_value(first.elements[0].value)
            if program is None:
                return (None, False) if self._holds_smi(first.elements[0].value) else None
            if not _is_program(program):
                return None
            rest = [string_value(element.value) for element in first.elements[1:]]
            if any(value is None for value in rest) or any(
                isinstance(element, cst.StarredElement) for element in first.elements
            ):
                return None, False
            return [str(value) for value in rest], True
        if (
            isinstance(first, cst.Call)
            and isinstance(first.func, cst.Attribute)
            and first.func.attr.value == "split"
        ):
            value = string_value(first.func.value)
            found = _string_words(value) if value is not None else None
            return (found[0], False) if found else None
        value = string_value(first)
        if value is None:
            return None
        found = _string_words(value)
        if found is None:
            return None
        return found[0], found[1]

    def _holds_smi(self, node: cst.BaseExpression) -> bool:
        """A variable (or helper call) whose value in this module is the nvidia-smi program."""
        if not isinstance(node, (cst.Name, cst.Call)):
            return False
        tree_, functions, values = _smi_values(self.ctx.module)
        if isinstance(node, cst.Call):
            return _names_smi(node, functions)
        return alias_kind(tree_, values, node) == "smi"

    def _visit_sequence(self, node: cst.List | cst.Tuple) -> None:
        if id(node) in self._handled or not node.elements:
            return
        program = string_value(node.elements[0].value)
        if program is None or not _is_program(program):
            return
        rest = [string_value(element.value) for element in node.elements[1:]]
        args = None if any(value is None for value in rest) else [str(value) for value in rest]
        self.report(node, message=_message(args, parsed=True))

    def visit_List(self, node: cst.List) -> None:
        self._visit_sequence(node)

    def visit_Tuple(self, node: cst.Tuple) -> None:
        self._visit_sequence(node)
