"""ROC868: `pip install` of CUDA-only packages inside Python code, in command strings and lists
that a launcher runs (category ``container``)."""

from __future__ import annotations

import libcst as cst

from migrator.api import (
    Impact,
    Invalid,
    Parsing,
    Problem,
    PythonContext,
    PythonRule,
    Severity,
    Valid,
)
from migrator.api.syntax import string_value

from .._shell import pip_requirements
from .pip_install_cuda_package import PipInstallCudaPackage

#: Calls whose string arguments are text for people, not commands.
_MESSAGE_CALLS = frozenset({"print", "warn", "warning", "info", "debug", "error", "exception"})
_PLACEHOLDER = "$X"


def _text(node: cst.BaseExpression) -> str | None:
    """Literal text of a string (an f-string's fields become placeholders pip skips)."""
    value = string_value(node)
    if value is not None:
        return value
    if isinstance(node, cst.FormattedString):
        return "".join(
            part.value if isinstance(part, cst.FormattedStringText) else _PLACEHOLDER
            for part in node.parts
        )
    return None


def _command_lines(text: str) -> str | None:
    """The lines of ``text`` that are pip commands (a script block or one command line)."""
    lines = [
        line.strip()
        for line in text.splitlines()
        if line.strip().startswith(("pip install", "pip3 install", "python -m pip install"))
        or line.strip().startswith(("python3 -m pip install", f"{_PLACEHOLDER} -m pip install"))
    ]
    return "\n".join(lines) or None


class PipInstallCudaPackageInPython(PythonRule):
    """
    ## What it does
    Flags `pip install` commands of CUDA-only or CUDA-build packages written inside Python code:
    command strings and script blocks handed to `subprocess`, `os.system` or a remote launcher
    (`command = "pip install flash-attn ..."`), and argument lists such as
    `[sys.executable, "-m", "pip", "install", "flash-attn"]`. Messages for people (`print`,
    logging, warnings, exceptions) are not commands and are left alone.

    ## Why it breaks on ROCm
    The same as for ROC867 and the dependency rule each finding names: the command installs a
    CUDA build, or a package with no ROCm build, on whatever machine runs the launcher.

    ## Example
    ```python
    command = '''
    pip install flash-attn==2.5.8 --no-build-isolation
    python train.py
    '''
    ```

    ## Manual migration
    Follow the named dependency rule (`migrate explain ROC808` ...): install the ROCm
    counterpart in the command (for flash-attn, build ROCm/flash-attention), or drop it on ROCm.

    ## References
    - rocm-facts.md §9 (package rows), §4a, §5
    """

    code = "ROC868"
    parsing = Parsing(scope="statement", triggers=("pip install", '"pip"', "'pip'"))
    name = "pip-install-cuda-package-in-python"
    category = "container"
    severity = Severity.WARNING
    impact = Impact(consequence="performance", effort_hours=0.5)
    message = "`pip install` of a CUDA-only package in a command run from Python"
    fact = PipInstallCudaPackage.fact
    valid = [
        Valid('raise ImportError("flash-attn missing: pip install flash-attn")\n'),
        Valid('print("pip install xformers for faster attention")\n'),
        Valid('import subprocess\nsubprocess.run(["pip", "install", "transformers"])\n'),
        Valid('CMD = "pip install --upgrade accelerate"\n'),
        Valid('"""Setup.\n\n    pip install flash-attn\n"""\n'),
        Valid(  # the command a test expects its mocked runner to have received
            'import sys\nassert calls == [[sys.executable, "-m", "pip", "install", "flash-attn"]]\n'
        ),
    ]
    invalid = [
        Invalid(
            "import subprocess\n"
            'subprocess.run("pip install flash-attn --no-build-isolation", shell=True)\n',
            line=2,
            column=16,
        ),
        Invalid(
            "def job(gpu):\n"
            "    command = f'''\n"
            "    pip install {gpu} xformers==0.0.26\n"
            "    pip install tensorrt\n"
            "    '''\n"
            "    return command\n",
            line=2,
        ),
        Invalid(
            "import subprocess, sys\n"
            'subprocess.check_call([sys.executable, "-m", "pip", "install", "flash-attn"])\n',
            column=23,
        ),
    ]

    def __init__(self, ctx: PythonContext) -> None:
        super().__init__(ctx)
        self._examiners = [rule(self.ctx) for rule in PipInstallCudaPackage._RULES]

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self._check_string(node)

    def visit_ConcatenatedString(self, node: cst.ConcatenatedString) -> None:
        self._check_string(node)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self._check_string(node)

    def visit_List(self, node: cst.List) -> None:
        self._check_sequence(node)

    def visit_Tuple(self, node: cst.Tuple) -> None:
        self._check_sequence(node)

    def _check_string(self, node: cst.BaseExpression) -> None:
        parent = self.ctx.parent(node)
        if isinstance(parent, (cst.ConcatenatedString, cst.Expr)):
            return  # checked once as a whole; a bare string (a docstring) is not a command
        text = _text(node)
        if text is None or "install" not in text or self._is_message(node):
            return
        commands = _command_lines(text)
        if commands is not None:
            self._examine(node, commands)

    def _check_sequence(self, node: cst.List | cst.Tuple) -> None:
        words = [_text(element.value) or _PLACEHOLDER for element in node.elements]
        if "pip" not in words or "install" not in words:
            return
        start = words.index("pip")
        if start + 1 >= len(words) or words[start + 1] != "install" or self._is_message(node):
            return
        self._examine(node, " ".join(["pip", *words[start + 1 :]]))

    def _is_message(self, node: cst.CSTNode) -> bool:
        for ancestor in self.ctx.ancestors(node):
            if isinstance(ancestor, (cst.Raise, cst.Assert, cst.Comparison)):
                return True  # an error text, or the expected value of a check (test data)
            if isinstance(ancestor, cst.Call):
                func = ancestor.func
                name = func.attr.value if isinstance(func, cst.Attribute) else None
                name = func.value if isinstance(func, cst.Name) else name
                if name in _MESSAGE_CALLS or (name or "").endswith(("Error", "Exception")):
                    return True
            if isinstance(ancestor, (cst.FunctionDef, cst.SimpleStatementLine)):
                return False
        return False

    def _examine(self, node: cst.CSTNode, commands: str) -> None:
        found: list[str] = []
        severity = Severity.HYGIENE
        for req in pip_requirements(commands):
            if not req.on_linux:
                continue
            for examiner in self._examiners:
                verdict = examiner.examine(req)
                if verdict is not None:
                    found.append(f"{verdict.message} ({examiner.code})")
                    severity = max(severity, examiner.severity)
                    break
        if found:
            self.report(
                node,
                message="`pip install` run from Python: " + "; ".join(found),
                problem=Problem(severity=min(severity, self.severity)),
            )
