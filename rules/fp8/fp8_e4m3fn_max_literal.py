"""ROC121 (fp8-e4m3fn-max-literal): flags the literal `448` (the largest `float8_e4m3fn` value) in
files that use `torch.float8_e4m3fn`."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid

from .._file_ast import file_text
from .._rocm_guards import unreachable_on_rocm
from .._tree import Tree, identifier, tree
from ._shared import BLOCK_SCALED, compute_refs, names_fnuz

E4M3FN = "torch.float8_e4m3fn"

_SIZE_WORDS = ("size", "width", "height", "res", "dim", "shape", "len", "pixels")


def _is_448(node: cst.CSTNode) -> bool:
    """A literal spelling 448 (``448``, ``448.0``, ``448e0``): the statements holding the
    string are the ones read (``scope_triggers``)."""
    if isinstance(node, (cst.Integer, cst.Float)) and "448" in node.value:
        try:
            return float(node.evaluated_value) == 448.0
        except (ValueError, OverflowError):
            return False
    return False


def _looks_like_size(tree_: Tree, literal: cst.CSTNode) -> bool:
    node: cst.CSTNode = literal
    parent = tree_.parent(node)
    if isinstance(parent, cst.UnaryOperation):
        node, parent = parent, tree_.parent(parent)
    if isinstance(parent, cst.Element):
        return True  # (448, 448) image sizes, lists of resolutions
    if isinstance(parent, cst.Arg) and parent.keyword is not None:
        return any(word in parent.keyword.value.lower() for word in _SIZE_WORDS)
    if isinstance(parent, (cst.Assign, cst.AnnAssign)):
        targets = (
            [t.target for t in parent.targets]
            if isinstance(parent, cst.Assign)
            else [parent.target]
        )
        names = [identifier(target) or "" for target in targets]
        return any(word in name.lower() for name in names for word in _SIZE_WORDS)
    return False


class Fp8E4m3MaxLiteral(PythonRule):
    """
    ## What it does
    Flags the literal `448` (the largest `float8_e4m3fn` value) in files that use
    `torch.float8_e4m3fn`: scale computations, clamps and `FP8_MAX = 448.0` constants.

    ## Why it breaks on ROCm
    On MI300X (gfx942) FP8 is `float8_e4m3fnuz`, whose largest value is **240**. Scales computed
    against 448 push values past the FNUZ range: they saturate or turn into NaN (FNUZ has no
    infinity), silently corrupting quantized weights and activations.

    ## Example
    ```python
    FP8_MAX = 448.0
    scale = w.abs().max() / FP8_MAX
    ```

    ## Manual migration
    Derive the maximum from the dtype chosen at run time (see ROC120):
    ```python
    FP8_MAX = torch.finfo(fp8_dtype()).max   # 448.0 for e4m3fn, 240.0 for e4m3fnuz
    ```

    ## Known problems
    Only files with a use of `torch.float8_e4m3fn` that ROC120 reports are checked (next to FP8
    storage, CPU tensors, dtype tests or tables only, 448 matches the dtype it serves); `448` as
    an element of a tuple
    or list, or passed as a size/width/height/resolution, is taken to be an image size; the
    maximum written another way (`4.48e2`, `0x1C0`) is not recognised. Files
    that implement a block-scaled format (they name NVFP4, MXFP4/6/8, MXINT8, E8M0 or
    `float4_e2m1`) are not checked: there 448 is the format's own constant (OCP MX elements and
    NVFP4 block scales are OCP E4M3 by definition, whatever the GPU), and gfx942 has no MX
    hardware to compute them in FNUZ.

    ## References
    - ROCm HIP FP8 numbers: https://rocm.docs.amd.com/projects/HIP/en/latest/reference/fp8_numbers.html
    """

    code = "ROC121"
    name = "fp8-e4m3fn-max-literal"
    category = "fp8"
    severity = Severity.WARNING
    impact = Impact(
        consequence="crash-path", aggregate="file", targets=("gfx942",), effort_hours=0.25
    )
    message = "448 is the e4m3fn maximum; MI300X's float8_e4m3fnuz tops out at 240"
    fact = "§8 maxima, rewrite rule, block-scaled formats; §10.4; [V][H4][L4][MX1][MX2][MX3]"
    # the literals' statements besides the dtype's; the rest is read from the whole file
    parsing = Parsing(
        triggers=("float8_e4m3fn",),
        silenced_by=BLOCK_SCALED,
        requires_imports=(E4M3FN,),
        scope="statement",
        scope_triggers=("448",),
    )
    valid = [
        Valid("import torch\nFP8_MAX = torch.finfo(torch.float8_e4m3fn).max\n"),
        Valid("import torch\nFP8_MAX = 448.0\nx = torch.zeros(2).to(torch.bfloat16)\n"),
        Valid("import torch\nq = torch.ones(2).to(torch.float8_e4m3fn)\nimage_size = 448\n"),
        Valid(
            "import torch\nFP8 = torch.float8_e4m3fnuz if torch.version.hip "
            "else torch.float8_e4m3fn\nMAX = 240.0 if torch.version.hip else 448.0\n"
        ),
        Valid("import torch\nq = torch.ones(2).to(torch.float8_e4m3fn)\n# clamp at 448\n"),
        Valid(
            "import torch\n"
            "def test_scale():\n"
            "    w = torch.randn(8, 8)\n"
            "    s = w.abs().amax() / 448.0\n"
            "    q = (w / s).to(torch.float8_e4m3fn)\n",
            path="tests/test_scale.py",
        ),
        Valid(
            "import torch\n"
            "E4M3_MAX = 448.0  # NVFP4 block scales are E4M3\n"
            "def quantize_nvfp4(x, amax):\n"
            "    scale = (amax / 6.0).clamp(max=E4M3_MAX).to(torch.float8_e4m3fn)\n"
            "    return scale\n"
        ),
    ]
    invalid = [
        Invalid(
            "import torch\nFP8_MAX = 448.0\n"
            "def q(w):\n    return (w / (w.abs().max() / FP8_MAX)).to(torch.float8_e4m3fn)\n",
            line=2,
            column=11,
        ),
        Invalid(
            "from torch import float8_e4m3fn\n"
            "def q(x):\n    return x.clamp(-448, 448).to(float8_e4m3fn)\n",
            count=1,
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        if names_fnuz(self.ctx):
            return
        tree_ = tree(self.ctx)
        if not any(self.ctx.qualname(ref) == E4M3FN for ref in compute_refs(self.ctx, tree_)):
            return  # 448 matches the e4m3fn it serves where that use is no ROCm problem
        block_scaled: bool | None = None
        for candidate in tree_.of_type(cst.Integer, cst.Float):
            if not _is_448(candidate) or _looks_like_size(tree_, candidate):
                continue
            if block_scaled is None:
                block_scaled = bool(BLOCK_SCALED.search(file_text(self.ctx)))
            if block_scaled:
                return  # 448 is the block-scaled format's own constant there
            if unreachable_on_rocm(self.ctx, tree_, candidate):
                continue
            self.report(candidate)
