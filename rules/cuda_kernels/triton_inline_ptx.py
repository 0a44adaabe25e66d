"""ROC314 (triton-inline-ptx): PTX handed to Triton's ``inline_asm_elementwise`` from Python."""

from __future__ import annotations

import re

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, QualifiedCallRule, Severity, Valid
from migrator.api.syntax import literal_value

#: A PTX instruction: a lower-case mnemonic with dotted modifiers (``cos.approx.f32``,
#: ``cvt.rn.bf16x2.f32``, ``lop3.b32``); AMDGPU assembly spells them with underscores.
_PTX = re.compile(r"(?:^|[;{}\n]\s*)(?:@!?%?\w+\s+)?[a-z][a-z0-9]*(?:\.[a-z0-9]+)+\s")
_MESSAGE = (
    "`{short}` runs PTX: Triton's AMD backend needs AMDGPU assembly, so the kernel does not "
    "compile on ROCm; use `tl`/libdevice math or give the HIP backend its own string"
)


class TritonInlinePtx(QualifiedCallRule):
    """
    ## What it does
    Flags `tl.inline_asm_elementwise(...)` (and PyTorch's `inline_asm_elementwise` higher-order
    op) whose assembly string is PTX, an instruction with dotted modifiers such as
    `cos.approx.f32 $0, $1;`.

    ## Why it breaks on ROCm
    The string is inline assembly of the compilation target: Triton hands it to the backend's
    LLVM unchanged. On ROCm the target is AMDGPU, whose assembler does not know PTX, so the
    kernel fails to compile the first time it is launched.

    ## Example
    ```python
    @triton.jit
    def cos_approx(x):
        return tl.inline_asm_elementwise(
            "cos.approx.f32 $0, $1;", constraints="=f,f", args=[x],
            dtype=tl.float32, is_pure=True, pack=1,
        )
    ```

    ## Manual migration
    Most PTX one-liners have a portable spelling: `tl.cos`, `tl.sin`, `tl.math.rsqrt`,
    `libdevice` functions, or a bit trick in `tl` ops. Where the PTX is needed for speed on
    NVIDIA, pick the string per backend
    (`triton.runtime.driver.active.get_current_target().backend == "hip"`) and give AMD the
    portable expression.

    ## References
    - `docs/rocm-facts.md` §7 Triton inline assembly; triton-lang/triton
      `python/triton/language/core.py` (`inline_asm_elementwise`)
    """

    code = "ROC314"
    name = "triton-inline-ptx"
    category = "ptx"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", effort_hours=1.0)
    message = "PTX in Triton inline assembly does not compile for AMD GPUs"
    fact = "§7 Triton inline assembly; [T3]"
    calls = {
        "triton.language.inline_asm_elementwise": _MESSAGE,
        "torch._higher_order_ops.inline_asm_elementwise.inline_asm_elementwise": _MESSAGE,
    }
    # the function's own name, not `torch`/`triton`: most files name those, few this
    parsing = Parsing(triggers=("inline_asm_elementwise",))
    valid = [
        Valid(
            "import triton.language as tl\n"
            "def f(x):\n    return tl.inline_asm_elementwise(\n"
            '        "v_cos_f32 $0, $1", constraints="=v,v", args=[x],\n'
            "        dtype=tl.float32, is_pure=True, pack=1)\n"
        ),
        Valid(
            "import triton.language as tl\ndef f(x, asm):\n    return tl.inline_asm_elementwise(asm, '=f,f', [x], tl.float32, True, 1)\n"
        ),
        Valid("import triton.language as tl\ndef f(x):\n    return tl.cos(x)\n"),
    ]
    invalid = [
        Invalid(
            "import triton.language as tl\n"
            "def f(x):\n    return tl.inline_asm_elementwise(\n"
            '        "cos.approx.f32 $0, $1;", constraints="=f,f", args=[x],\n'
            "        dtype=tl.float32, is_pure=True, pack=1)\n",
            line=3,
        ),
        Invalid(
            "from triton.language import inline_asm_elementwise as asm\n"
            "def f(x):\n"
            '    return asm(asm="{ cvt.rn.bf16x2.f32 $0, $2, $1; }", constraints="=r,r,r",\n'
            "               args=[x, x], dtype=None, is_pure=True, pack=1)\n",
            line=3,
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        keyword = next(
            (arg for arg in node.args if arg.keyword and arg.keyword.value == "asm"), None
        )
        positional = next((arg for arg in node.args if arg.keyword is None), None)
        chosen = keyword or positional
        text = literal_value(chosen.value) if chosen is not None else None
        if isinstance(text, str) and _PTX.search(text):
            super().visit_Call(node)
