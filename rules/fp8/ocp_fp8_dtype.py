"""ROC120 (ocp-fp8-dtype): flags uses of the OCP FP8 dtypes `torch.float8_e4m3fn` and
`torch.float8_e5m2` (casts, `dtype=` arguments, dtype checks) in files that never mention the
FNUZ variants, where FP8 tensors may reach an FP8 kernel."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid

from .._tree import tree
from ._shared import BLOCK_SCALED, OCP, compute_refs, names_fnuz


class OcpFp8Dtype(PythonRule):
    """
    ## What it does
    Flags uses of the OCP FP8 dtypes `torch.float8_e4m3fn` and `torch.float8_e5m2` (casts,
    `dtype=` arguments, dtype checks) in files that never mention the FNUZ variants, where FP8
    tensors may reach an FP8 kernel: in a file that calls one (a scaled GEMM, a kernel library
    such as torchao, Transformer Engine, Triton or FlashAttention, a custom op), or that hands
    them out (a module-level constant, a `return`).

    ## Why it breaks on ROCm
    MI300X/MI325X (gfx942) implement FP8 in the FNUZ encoding only (`float8_e4m3fnuz`,
    `float8_e5m2fnuz`: no infinities, no negative zero, NaN = 0x80). OCP tensors cast and store
    fine, but FP8 GEMMs (`torch._scaled_mm`, hipBLASLt, FP8 kernels) expect FNUZ on gfx942, and
    the same bits mean half the value in e4m3fnuz. gfx950 (MI350X) and RDNA4 use OCP, so the dtype
    has to be chosen at run time.

    ## Example
    ```python
    q = (w / scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    ```

    ## Manual migration
    Pick the dtype from the device, as vLLM does, and derive the range from it:
    ```python
    def fp8_dtype(device=0):
        if torch.version.hip and "gfx94" in torch.cuda.get_device_properties(device).gcnArchName:
            return torch.float8_e4m3fnuz
        return torch.float8_e4m3fn

    FP8 = fp8_dtype()
    q = (w / scale).clamp(-torch.finfo(FP8).max, torch.finfo(FP8).max).to(FP8)
    ```
    Checkpoints stored as e4m3fn need converting for gfx942 (reinterpret as e4m3fnuz, zero the
    0x80 byte, double the scales).

    ## Known problems
    In a file that calls no FP8 kernel, a dtype used inside its functions and not returned (a
    model's weight dtype, a loader's `dtype`: weights stored in FP8 and upcast before compute)
    is not reported: casts and storage work with the OCP dtypes on every GPU. Such a dtype
    handed on to another file's kernel through a variable or an object is missed.
    One finding per function (the first use; the message counts the others).
    `torch.finfo(torch.float8_e4m3fn)`, `storage_dtype` and `torch_dtype` values (arguments,
    also positional ones of a function of the same file whose parameter has that name, parameter
    defaults, variables, class attributes, config keys and what a getter of that name returns:
    FP8 used only to store or load
    weights that are upcast before compute, which works on every GPU), members of a dtype table
    (a literal tuple/list/set bound to a name the file only tests membership in, with `in` or
    `isinstance`, or prints), test files
    that never put anything on a GPU (no `cuda`, `device`, `gpu`, ...: every tensor is a CPU
    tensor) and FP8 tensors made on
    the CPU (`torch.ones(...).to(torch.float8_e4m3fn)` without `device=`: storage, no FP8
    arithmetic on the GPU) and dtype tests (`w.dtype == torch.float8_e4m3fn`,
    `w.dtype in (torch.float8_e4m3fn, torch.int8)`: they recognise tensors made elsewhere, such as
    an FP8 checkpoint's weights, and make none) are not reported; files
    that also name an FNUZ dtype are taken as already choosing at run time. Files that implement
    a block-scaled format (they name NVFP4, MXFP4/6/8, MXINT8, E8M0 or `float4_e2m1`) are not
    checked: there `float8_e4m3fn` is the format's own element or scale type (OCP by
    definition), and only gfx950 has MX hardware (see ROC121).

    ## References
    - ROCm HIP FP8 numbers: https://rocm.docs.amd.com/projects/HIP/en/latest/reference/fp8_numbers.html
    - vLLM `vllm/platforms/rocm.py` (`fp8_dtype`), `normalize_e4m3fn_to_e4m3fnuz`
    """

    code = "ROC120"
    name = "ocp-fp8-dtype"
    category = "fp8"
    severity = Severity.WARNING
    impact = Impact(
        consequence="crash-path", aggregate="file", targets=("gfx942",), effort_hours=1.0
    )
    message = "OCP FP8 dtype: MI300X (gfx942) supports only FNUZ FP8 (`float8_e4m3fnuz`)"
    fact = "§8 dtypes, hardware, rewrite rule, block-scaled formats; §10.4; [H4][L4][L5][MX2]"
    # what a finding needs beyond its statement (an FNUZ dtype, a kernel, a GPU, a table's
    # uses, a called function's parameters) is read from the whole file
    parsing = Parsing(
        triggers=("float8_e4m3fn", "float8_e5m2"),
        silenced_by=BLOCK_SCALED,
        requires_imports=tuple(sorted(OCP)),
        scope="statement",
    )
    valid = [
        Valid(
            "import torch\n"
            "def nvfp4_scales(w, group):\n"
            "    return torch.empty(w.shape[0], w.shape[1] // group, dtype=torch.float8_e4m3fn,\n"
            "                       device=w.device)\n"
        ),
        Valid("import torch\nx = torch.zeros(4).to(torch.bfloat16)\n"),
        Valid(  # the dtype's name in a file format: a lookup, no FP8 tensor is made
            "import torch\n"
            "SAFETENSORS_NAMES = {torch.bfloat16: 'BF16', torch.float8_e4m3fn: 'F8_E4M3'}\n"
            "def header(t):\n"
            "    return SAFETENSORS_NAMES[t.dtype]\n"
        ),
        Valid(
            "import torch\nfp8 = torch.float8_e4m3fnuz if torch.version.hip "
            "else torch.float8_e4m3fn\n"
        ),
        Valid("import torch\nFP8_MAX = torch.finfo(torch.float8_e4m3fn).max\n"),
        Valid("class torch:\n    float8_e4m3fn = 1\nx = torch.float8_e4m3fn\n"),
        Valid('import torch\n"""Quantize to torch.float8_e4m3fn."""\n# torch.float8_e5m2\n'),
        Valid("import torch\nmodel.enable_layerwise_casting(storage_dtype=torch.float8_e4m3fn)\n"),
        Valid(
            "import torch\n\ndef enable_layerwise_casting(\n"
            "    self, storage_dtype: torch.dtype = torch.float8_e4m3fn, compute_dtype=None\n"
            "):\n    return storage_dtype\n"
        ),
        Valid("import torch\nstorage_dtype = torch.float8_e4m3fn\n"),
        Valid(
            "import torch\n"
            "def get_memory_usage(storage_dtype, compute_dtype):\n"
            "    model.enable_layerwise_casting(storage_dtype=storage_dtype)\n"
            "fp8 = get_memory_usage(torch.float8_e4m3fn, torch.bfloat16)\n"
        ),
        Valid(
            "import torch\n"
            "class TestSingleFile:\n"
            "    torch_dtype = torch.float8_e4m3fn\n"
            "    @property\n"
            "    def torch_dtype(self):\n"
            "        return torch.float8_e5m2\n"
        ),
        Valid(
            "import torch\n"
            "SUPPORTED = (torch.int8, torch.float8_e4m3fn, torch.uint4)\n"
            "def check(dtype):\n"
            "    if dtype not in SUPPORTED:\n"
            "        raise ValueError(f'{dtype} is not one of {SUPPORTED}')\n"
        ),
        Valid(
            "import torch\n"
            "def make_blockwise(w, s):\n"
            '    """Pure CPU logic: no GPU needed."""\n'
            "    return (w.float() / s).to(torch.float8_e4m3fn)\n"
            "def test_roundtrip():\n"
            "    w = torch.randn(8, 8)\n"
            "    assert make_blockwise(w, 448.0).shape == w.shape\n",
            path="tests/test_fp8_blockwise.py",
        ),
        Valid('import torch\nconfig = {"storage_dtype": torch.float8_e4m3fn}\n'),
        Valid(
            "import torch\n"
            "w = torch.ones(128, 200, dtype=torch.bfloat16).to(torch.float8_e4m3fn)\n"
            "s = torch.randn(8, 4).to(torch.float8_e4m3fn)\n"
            "r = torch.randint(0, 256, (4,), dtype=torch.uint8).view(torch.float8_e4m3fn)\n"
            "t = (torch.rand(4, 4) * 0.5 + 0.5).to(torch.float8_e4m3fn)\n"
            "e = torch.empty(8, dtype=torch.float8_e5m2, device='cpu')\n"
        ),
        Valid(  # FP8 weight storage: the model is upcast before compute, no FP8 kernel here
            "import torch\n"
            "def settings(args, unet):\n"
            "    dtype = torch.bfloat16\n"
            "    if args.fp8:\n"
            "        dtype = torch.float8_e4m3fn\n"
            "    unet.to(dtype=torch.float8_e4m3fn if args.fp8_base else dtype)\n"
            "    return Settings(weight_dtype=dtype, device=torch.device('cuda'))\n"
        ),
        Valid(  # a checkpoint's bytes read back as the dtype they were saved in
            "import torch\n"
            "def convert_float8(byte_tensor, name, shape):\n"
            "    if name == 'F8_E4M3':\n"
            "        return byte_tensor.view(torch.float8_e4m3fn).reshape(shape)\n"
            "    te = load(name, use_scaled_mm=False)\n"
            "    return te.weight\n"
        ),
        Valid(
            "import torch\n"
            "def scales(w, layer):\n"
            "    if w.dtype == torch.float8_e4m3fn:\n"
            "        return layer.weight_scale_inv\n"
            "    if w.dtype not in (torch.float8_e4m3fn, torch.int8):\n"
            "        return None\n"
            "    assert torch.float8_e5m2 != w.dtype\n"
        ),
    ]
    invalid = [
        Invalid(
            "import torch\nq = weight.to(torch.float8_e4m3fn)\n"
            "y = torch._scaled_mm(q, w_t, scale_a=s, scale_b=s)\n",
            line=2,
            column=15,
        ),
        Invalid(
            "import torch as tt\ngrad = tt.empty(8, dtype=tt.float8_e5m2, device='cuda')\n"
            "out = tt._scaled_mm(grad, w_t, scale_a=s, scale_b=s)\n"
        ),
        Invalid(
            "import torch\nimport triton\nq = torch.ones(4).cuda().to(torch.float8_e4m3fn)\n"
            "fp8_gemm_kernel[grid](q)\n"
        ),
        Invalid(  # handed to a custom op of the project's extension
            "import torch\nfrom . import ops\n"
            "def forward(x, w, s):\n"
            "    q = x.to(torch.float8_e4m3fn)\n"
            "    return ops.fp8_gemm(q, w, s)\n",
            line=4,
        ),
        Invalid(  # a quantizer with no kernel of its own hands its FP8 tensors to callers
            "import torch\ndef quantize(w, s):\n    return (w / s).to(torch.float8_e4m3fn)\n",
            line=3,
        ),
        Invalid("from torch import float8_e4m3fn\nDTYPE = float8_e4m3fn\n"),
        Invalid(
            "import torch\n"
            "def make_blockwise(w, s):\n"
            "    return (w.float() / s).to(torch.float8_e4m3fn)\n"
            "def test_roundtrip():\n"
            "    w = torch.randn(8, 8, device='cuda')\n"
            "    assert make_blockwise(w, 448.0).shape == w.shape\n",
            path="tests/test_fp8_blockwise.py",
            line=3,
        ),
        Invalid(
            "import torch\nfrom flash_attn import flash_attn_func\n"
            "DTYPES = (torch.bfloat16, torch.float8_e4m3fn)\n"
            "for dtype in DTYPES:\n"
            "    q = torch.ones(4, device='cuda').to(dtype)\n"
            "    flash_attn_func(q, q, q)\n"
        ),
        Invalid(  # a table only tested here, but iterated to make tensors further down
            "import torch\nfrom flash_attn import flash_attn_func\n"
            "DTYPES = (torch.bfloat16, torch.float8_e4m3fn)\n"
            "def check(d):\n"
            "    assert d in DTYPES or d == torch.float8_e5m2\n"
            "def run(q):\n"
            "    for dtype in DTYPES:\n"
            "        flash_attn_func(q.to(dtype), q, q)\n",
            line=3,
        ),
        Invalid(
            "import torch\ndef is_fp8(t):\n"
            "    return t.dtype in (torch.float8_e4m3fn, torch.float8_e5m2)\n"
            "def to_fp8(t):\n    return t.to(torch.float8_e5m2)\n",
            count=1,
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        if names_fnuz(self.ctx):
            return
        tree_ = tree(self.ctx)
        by_scope: dict[int, list[cst.CSTNode]] = {}
        for ref in compute_refs(self.ctx, tree_):
            by_scope.setdefault(id(tree_.scope(ref)), []).append(ref)
        for refs in by_scope.values():
            first = refs[0]
            dtype = self.ctx.qualname(first) or ""
            more = f" ({len(refs) - 1} more use(s) in this scope)" if len(refs) > 1 else ""
            self.report(
                first,
                message=(
                    f"`{dtype}` is OCP FP8: MI300X (gfx942) supports only FNUZ FP8 "
                    f"(`{_FNUZ_OF[dtype]}`); choose the dtype at run time{more}"
                ),
            )


_FNUZ_OF = {
    "torch.float8_e4m3fn": "torch.float8_e4m3fnuz",
    "torch.float8_e5m2": "torch.float8_e5m2fnuz",
}
