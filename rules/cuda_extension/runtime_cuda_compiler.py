"""ROC608 (runtime-cuda-compiler): Python that compiles kernels at run time with the CUDA
toolkit: ``nvcc``, ``ptxas`` or ``cuobjdump`` run as programs, or NVRTC (``cuda.nvrtc``)."""

from __future__ import annotations

import shlex

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid
from migrator.api.syntax import string_value

#: CUDA toolkit programs that compile or read device code.
_PROGRAMS = frozenset({"nvcc", "ptxas", "cuobjdump", "nvdisasm", "fatbinary", "nvlink"})
#: Modules that compile CUDA source at run time through NVRTC.
_NVRTC = frozenset({"cuda.nvrtc", "cuda.bindings.nvrtc", "pynvrtc", "nvrtc"})
_SPAWN = frozenset(
    {
        "subprocess.run",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "subprocess.Popen",
        "os.system",
        "os.popen",
        "os.execv",
        "os.execvp",
        "asyncio.create_subprocess_exec",
        "asyncio.create_subprocess_shell",
    }
)
#: Arguments that only ask a program for its version: a probe, not a compile.
_PROBES = frozenset({"-V", "--version", "-version", "--help", "-h"})


def _program(node: cst.BaseExpression) -> tuple[str, list[str]] | None:
    """(program, literal arguments) of a command: a string (its first word), a list whose first
    element names the program (a string, ``os.path.join(..., "nvcc")`` or an f-string ending in
    it), or None."""
    text = string_value(node)
    if text is not None:
        try:
            words = shlex.split(text)
        except ValueError:
            words = text.split()
        return (words[0].rsplit("/", 1)[-1], words[1:]) if words else None
    if isinstance(node, (cst.List, cst.Tuple)) and node.elements:
        first = node.elements[0].value
        rest = [v for e in node.elements[1:] if (v := string_value(e.value)) is not None]
        tail = _tail(first)
        return (tail.rsplit("/", 1)[-1], rest) if tail else None
    return None


def _tail(node: cst.BaseExpression) -> str | None:
    text = string_value(node)
    if text is not None:
        return text
    if isinstance(node, cst.FormattedString) and node.parts:
        last = node.parts[-1]
        return last.value if isinstance(last, cst.FormattedStringText) else None
    if isinstance(node, cst.Call) and node.args:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "join":
            return _tail(node.args[-1].value)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Divide, cst.Add)):
        return _tail(node.right)
    return None


class RuntimeCudaCompiler(PythonRule):
    """
    ## What it does
    Flags Python that compiles GPU code at run time with the CUDA toolkit: `nvcc`, `ptxas`,
    `cuobjdump`, `nvdisasm`, `fatbinary` or `nvlink` run through `subprocess`/`os.system`
    (a string command or a list whose first element names the program, also as
    `os.path.join(cuda_home, "bin", "nvcc")`), and imports of NVRTC bindings (`cuda.nvrtc`,
    `cuda.bindings.nvrtc`, `pynvrtc`). A version probe (`nvcc -V`) and a `setup.py` (the build,
    not the run) are left to the build rules.

    ## Why it breaks on ROCm
    A ROCm machine has none of these programs and no NVRTC: the run fails the first time the
    project compiles a kernel, and the options it passes (`-arch=sm_90a`) and the CUDA source
    it compiles are NVIDIA's.

    ## Example
    ```python
    subprocess.run(["nvcc", "-cubin", "-arch=sm_90a", "-o", cubin, source], check=True)
    ```

    ## Manual migration
    Compile with hipcc (or hiprtc) on ROCm, for the AMD targets (`--offload-arch=gfx942`), from
    HIP source; keep the NVIDIA path for CUDA builds.

    ## Known problems
    A command built in a variable the rule cannot follow is not seen.

    ## References
    - HIP runtime compiler (RTC): <https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_rtc.html>
    """

    code = "ROC608"
    name = "runtime-cuda-compiler"
    category = "cuda-extension"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", blocker=True, aggregate="file", effort_hours=8.0)
    message = "compiles GPU code at run time with the CUDA toolkit, which ROCm lacks"
    fact = "§7 run time compiled kernels row; [HR1]"
    parsing = Parsing(
        triggers=("nvcc", "ptxas", "cuobjdump", "nvdisasm", "fatbinary", "nvlink", "nvrtc")
    )
    valid = [
        Valid("import subprocess\nout = subprocess.check_output(['nvcc', '--version'])\n"),
        Valid("import subprocess\nsubprocess.run(['hipcc', '-c', 'k.hip'])\n"),
        Valid(
            "import subprocess\nsubprocess.run(['nvcc', '-c', 'k.cu'])\n",
            path="setup.py",
        ),
        Valid("HELP = 'compile with nvcc -c kernel.cu'\n"),
    ]
    invalid = [
        Invalid(
            "import os, subprocess\n"
            "def compile_kernel(src, out, cuda_home):\n"
            "    nvcc = os.path.join(cuda_home, 'bin', 'nvcc')\n"
            "    subprocess.run([os.path.join(cuda_home, 'bin', 'nvcc'), '-cubin', '-o', out, src], check=True)\n",
            line=4,
        ),
        Invalid("import os\nos.system('cuobjdump --dump-sass kernel.cubin')\n", line=2),
        Invalid("from cuda import nvrtc\n", line=1),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.path.rsplit("/", 1)[-1] == "setup.py":
            return
        qualified = self.ctx.call_name(node)
        if qualified not in _SPAWN or not node.args:
            return
        found = _program(node.args[0].value)
        if found is None:
            return
        program, arguments = found
        if program not in _PROGRAMS or (arguments and set(arguments) <= _PROBES):
            return
        self.report(
            node,
            message=f"runs `{program}` at run time, a CUDA toolkit program a ROCm machine "
            "lacks: compile with hipcc or hiprtc for the AMD targets (`--offload-arch=gfx942`) "
            "from HIP source",
        )

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = self.ctx.code(node.module) if node.module is not None else ""
        names = (
            [self.ctx.code(alias.name) for alias in node.names]
            if not isinstance(node.names, cst.ImportStar)
            else []
        )
        if module in _NVRTC or any(f"{module}.{name}" in _NVRTC for name in names):
            self._nvrtc(node)

    def visit_Import(self, node: cst.Import) -> None:
        if any(self.ctx.code(alias.name) in _NVRTC for alias in node.names):
            self._nvrtc(node)

    def _nvrtc(self, node: cst.CSTNode) -> None:
        self.report(
            node,
            message="compiles kernels at run time with NVRTC, which ROCm lacks: use hiprtc "
            "with HIP source and AMD targets on ROCm",
        )
