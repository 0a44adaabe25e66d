"""ROC110: compute-capability comparisons with NVIDIA numbers."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, Problem, PythonRule, Severity, Valid

from .._rocm_guards import unreachable_on_rocm
from ._capability_branches import (
    _harmless_choice,
    _never_read,
    _only_notifies,
    _skips_a_test,
    _skips_only_off_nvidia_references,
)
from ._capability_tuning import _tuning_function
from ._capability_values import (
    _capability_verdict,
    _identity_check,
    _involves_capability,
    _like_current_nvidia,
)
from ._gates import _gate_analysis

_CAP_OPERATORS = (
    cst.LessThan,
    cst.LessThanEqual,
    cst.GreaterThan,
    cst.GreaterThanEqual,
    cst.Equal,
    cst.NotEqual,
    cst.In,
    cst.NotIn,
)


class CapabilityGate(PythonRule):
    """
    ## What it does
    Flags comparisons of `torch.cuda.get_device_capability()` (or its `major`/`minor`, or
    `get_device_properties(i).major`) with NVIDIA compute-capability numbers:
    `>= (8, 0)`, `major >= 9`, `== (9, 0)`.

    ## Why it breaks on ROCm
    On ROCm the "capability" is the gfx version: MI250X = (9, 0), MI300X = (9, 4),
    MI355X = (9, 5), Radeon RX 7900 = (11, 0). MI300X therefore passes `>= (8, 0)` *and*
    `>= (9, 0)`, so code written for Ampere or Hopper (FlashAttention-3, cuDNN attention, sm90
    FP8/wgmma kernels) gets selected, while `== (8, 0)`-style checks never match. The message
    says how the gate evaluates on each AMD GPU.

    ## Example
    ```python
    if torch.cuda.get_device_capability() >= (9, 0):
        use_hopper_kernels()
    ```

    ## Manual migration
    Branch on the build first, then on the AMD architecture:
    ```python
    if torch.version.hip:
        arch = torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]
        use_fast_path = arch in ("gfx942", "gfx950")
    elif torch.cuda.get_device_capability() >= (9, 0):
        use_hopper_kernels()
    ```
    Prefer feature checks (`torch.cuda.is_bf16_supported()`) when they exist.

    A gate that answers every AMD GPU the way it answers both Ampere (8, 0) and Hopper (9, 0),
    such as `>= (8, 0)` for bf16 or `major >= 7` for fp16, asks "a current GPU?" rather than
    "which architecture?": AMD GPUs get the current-GPU path, which is right, and it is not
    reported. A gate whose branch only warns, prints or logs changes a message, not what runs: it is
    reported at `info`. Not reported either: a gate whose branch only turns an optional path off
    (`if cap[0] != 9: flash_attn_func_v3 = None`), one that every AMD GPU answers by skipping the
    gated work (`if major != 8: return` before an Ampere-only kernel), and one that only picks a
    number (`32 if cap[0] >= 10 else 128`, a tile size; an `if` whose branch only assigns
    numbers; a function that only computes a number from it) rather than a code path, one that
    nothing reads (a local, or a module-level name of a test module), and one whose branch only
    skips (`pytest.skip`, a bare `return`) where both Ampere and Hopper run the work: AMD GPUs
    then either skip it or run it as those GPUs do.

    ## Known problems
    Gates inside a branch that a `torch.version.hip`/`torch.version.cuda` test (or a name like
    `is_rocm`, `is_nvidia`) keeps off ROCm are not reported.

    ## References
    - pytorch/ao PR #2853 (MI300X properties)
    """

    code = "ROC110"
    name = "capability-gate"
    category = "device-gate"
    severity = Severity.WARNING
    impact = Impact(consequence="performance", aggregate="scope", effort_hours=0.5)
    message = "compute-capability gate: AMD GPUs report their gfx version (MI300X = (9, 4))"
    fact = "§0; §1 get_device_capability row; §10.1; [D1][D3]"
    #: the gates follow values through assignments (``cap = ...; major = cap[0]``): the
    #: top-level statements connected to a trigger by module-level names
    parsing = Parsing(triggers=("get_device_capability", "get_device_properties"), scope="names")
    valid = [
        Valid("import torch\nmajor, minor = torch.cuda.get_device_capability()\nprint(major)\n"),
        Valid(
            "import torch\nif torch.version.hip:\n    ok = True\n"
            "else:\n    ok = torch.cuda.get_device_capability() >= (8, 0)\n"
        ),
        Valid(
            "def get_device_capability():\n    return (8, 0)\n"
            "ok = get_device_capability() >= (8, 0)\n"
        ),
        Valid("import torch\nok = torch.cuda.is_bf16_supported()\n"),
        Valid(
            "import torch\ndef f(override):\n"
            "    cap = torch.cuda.get_device_capability()\n"
            "    if override:\n"
            "        cap = override\n"
            "    return cap >= (9, 0)\n"
        ),
        Valid(
            "import torch\ndef f(major, minor):\n    if major == 8:\n        return minor >= 9\n"
        ),
        Valid(  # an identity check of a cache entry: the same GPU as when it was written?
            "import torch\ndef load(cached):\n"
            "    current = torch.cuda.get_device_capability()\n"
            "    if cached.get('device_capability') != current:\n        return None\n"
            "    return cached\n"
        ),
        Valid(
            "import torch\n"
            "bf16 = torch.cuda.get_device_capability() >= (8, 0)\n"
            "dtype = torch.bfloat16 if bf16 else torch.float16\n"
        ),
        Valid(
            "import torch\ndef fp16_ok():\n"
            "    major, _ = torch.cuda.get_device_capability()\n    return major >= 7\n"
        ),
        Valid(
            "import torch\n"
            "try:\n"
            "    from flash_attn_interface import flash_attn_func as fa3\n"
            "except ImportError:\n"
            "    fa3 = None\n"
            "if torch.cuda.get_device_capability()[0] != 9:\n"
            "    fa3 = None\n"
        ),
        Valid(
            "import torch\n"
            "def check_fp6_linear(shape):\n"
            "    major, _ = torch.cuda.get_device_capability()\n"
            "    if major != 8:\n"
            "        return\n"
            "    run_fp6_kernel(shape)\n"
        ),
        Valid(
            "import torch\n"
            "def max_m(dev):\n"
            "    return 32 if torch.cuda.get_device_capability(dev)[0] >= 10 else 128\n"
        ),
        Valid(  # a tuning function: every return is a block size
            "import torch\n"
            "def block_size_n(device, head_dim, is_causal):\n"
            "    major, minor = torch.cuda.get_device_capability(device)\n"
            "    is_sm8x = major == 8 and minor > 0\n"
            "    is_sm90 = major == 9 and minor == 0\n"
            "    if head_dim <= 64:\n"
            "        return 128\n"
            "    if is_sm8x:\n"
            "        return 64 if is_causal else 32\n"
            "    return 64\n"
        ),
        Valid(  # a tuning function with a docstring and a precondition that raises
            "import torch\n"
            "def q_block_size(head_size):\n"
            '    """The query block size of the kernel."""\n'
            "    major, minor = torch.cuda.get_device_capability()\n"
            "    if major < 8:\n"
            "        raise RuntimeError('needs sm80')\n"
            "    if major == 8 and minor == 0:\n"
            "        return 128\n"
            "    return 64\n"
        ),
        Valid(  # the capability only picks an nvcc architecture flag of a JIT build
            "import torch\n"
            "def gencode():\n"
            "    major, minor = torch.cuda.get_device_capability()\n"
            "    suffix = 'a' if major >= 9 else ''\n"
            "    return f'-gencode=arch=compute_{major}{minor}{suffix},code=sm_{major}{minor}{suffix}'\n"
        ),
        Valid(  # the gated branch only picks a constant
            "import torch\n"
            "def forward(x):\n"
            "    if torch.cuda.get_device_capability('cuda') == (9, 0):\n"
            "        heuristic = -1\n"
            "    else:\n"
            "        heuristic = 0 if x.dtype == torch.float16 else 1\n"
            "    return run(x, heuristic)\n"
        ),
        Valid(  # never read
            "import torch\nis_sm8x = torch.cuda.get_device_capability('cuda')[0] == 8\n",
            path="tests/test_attention.py",
        ),
        Valid(  # skips where Blackwell runs it; Ampere, Hopper and AMD GPUs run the assertion
            "import pytest, torch\n"
            "def test_unavailable_without_sm100():\n"
            "    if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] in (10, 11):\n"
            "        pytest.skip('running on SM100/SM110')\n"
            "    assert not fp4_available()\n"
        ),
        Valid(  # a test's skip gate: an AMD GPU at worst skips the test or runs one more
            "import pytest, torch\n"
            "def test_blackwell_regression():\n"
            "    major, _ = torch.cuda.get_device_capability()\n"
            "    if major not in (10, 12):\n"
            "        pytest.skip('Blackwell-specific regression')\n"
            "    assert run() == reference()\n",
            path="tests/test_regressions.py",
        ),
        Valid(
            "import pytest, torch\n"
            "@pytest.mark.skipif(torch.cuda.get_device_capability()[0] < 10, reason='sm_100+')\n"
            "def test_probe():\n"
            "    assert probe()\n",
            path="tests/test_probe.py",
        ),
        Valid(  # skipped on new GPUs only: Ampere, Hopper and MI300X run it; gfx12 skips it
            "import pytest, torch\n"
            "@pytest.mark.skipif(\n"
            "    torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 12,\n"
            "    reason='sm_120+ builds ship no kernel for it',\n"
            ")\n"
            "def test_probe_runs():\n"
            "    assert probe()\n",
            path="tests/test_probe.py",
        ),
        Valid(  # pruning narrows what a helper kept to one config on one GPU: all valid
            "def prune_bwd(configs, named_args, **kwargs):\n"
            "    import torch\n"
            "    kept = smem_prune(configs, named_args, **kwargs)\n"
            "    if torch.cuda.get_device_capability() == (9, 0):\n"
            "        safe = [c for c in kept if c.num_warps == 8]\n"
            "        if safe:\n"
            "            return safe[:1]\n"
            "        return sorted(kept, key=lambda c: c.num_stages)[:1]\n"
            "    return kept\n"
        ),
        Valid(  # autotune pruning keeps some of the configs: every GPU can run them
            "import torch\n"
            "def prune_configs(configs, named_args, **kwargs):\n"
            "    major, _ = torch.cuda.get_device_capability()\n"
            "    if major in (10, 12):\n"
            "        return [config for config in configs if config.num_stages == 1]\n"
            "    return configs\n"
        ),
    ]
    invalid = [
        Invalid(  # MI300X (9, 4) passes the gate: the FP8 test runs Transformer Engine there
            "import pytest, torch\n"
            "def test_amp_fp8():\n"
            "    if not (torch.cuda.get_device_capability() >= (8, 9)):\n"
            "        pytest.skip('needs compute capability 8.9')\n"
            "    run_te_fp8()\n",
            path="tests/test_fp8.py",
            line=3,
        ),
        Invalid(  # a pruning function that makes a config of its own on one GPU
            "import torch, triton\n"
            "def prune(configs, named_args, **kwargs):\n"
            "    kept = smem_prune(configs, named_args)\n"
            "    if torch.cuda.get_device_capability() == (9, 0):\n"
            "        return [triton.Config({'BN': 64}, num_warps=8)]\n"
            "    return kept\n",
            line=4,
        ),
        Invalid(  # the capability rebuilt from its unpacked parts
            "import torch\ndef modes():\n    major, minor = torch.cuda.get_device_capability()\n"
            "    return ['mxfp8'] if (major, minor) >= (10, 0) else []\n",
            line=4,
        ),
        Invalid(
            "import torch\nif torch.cuda.get_device_capability() >= (9, 0):\n    pass\n",
            line=2,
            column=4,
        ),
        Invalid(  # MI300X (9, 4) does not skip: it runs the Hopper-only kernel
            "import torch\n"
            "def check_wgmma(shape):\n"
            "    if torch.cuda.get_device_capability()[0] < 9:\n"
            "        return\n"
            "    run_wgmma_kernel(shape)\n",
            line=3,
        ),
        Invalid(
            "from torch.cuda import get_device_capability\n"
            "def f():\n    major, minor = get_device_capability()\n    return major >= 9\n",
            line=4,
        ),
        Invalid(
            "import torch as tt\nprops = tt.cuda.get_device_properties(0)\n"
            "hopper = props.major == 9\n"
        ),
        Invalid("import torch\nsm90 = torch.cuda.get_device_capability(0)[0] >= 9\n"),
        Invalid(  # the major read by a module helper, compared by its caller
            "import torch\ndef _cc_major():\n    if not torch.cuda.is_available():\n"
            "        return None\n    major, _ = torch.cuda.get_device_capability()\n"
            "    return major\n"
            "def pick(fa3_installed):\n"
            "    if fa3_installed and _cc_major() >= 9:\n        return 'flash_3'\n"
            "    return 'sdpa'\n",
            line=8,
        ),
        Invalid(
            "import torch, warnings\nif torch.cuda.get_device_capability() < (9, 0):\n"
            "    warnings.warn('FP8 needs Hopper')\n",
            line=2,
        ),
        Invalid(
            "import torch\ncc = torch.cuda.get_device_capability()\n"
            "ada = cc[0] * 10 + cc[1] >= 89\n",
            line=3,
        ),
        Invalid(  # a module-level name another module may import
            "import torch\nis_sm90 = torch.cuda.get_device_capability()[0] == 9\n",
            path="pkg/caps.py",
        ),
        Invalid(  # a function that also launches work is no tuning function
            "import torch\n"
            "def block(x):\n"
            "    if torch.cuda.get_device_capability() >= (9, 0):\n"
            "        launch_wgmma(x)\n"
            "    return 128\n",
            line=3,
        ),
        Invalid(
            "import torch\ndef pick():\n"
            "    if torch.cuda.is_available():\n"
            "        cap = torch.cuda.get_device_capability()\n"
            "    else:\n"
            "        cap = (0, 0)\n"
            "    return 'fa3' if cap >= (9, 0) else 'sdpa'\n",
            line=7,
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        gates = _gate_analysis(self.ctx)
        for candidate in gates.tree.of_type(cst.Comparison):
            if not isinstance(candidate, cst.Comparison):
                continue
            operands = [candidate.left, *[c.comparator for c in candidate.comparisons]]
            if not any(_involves_capability(self.ctx, gates, operand) for operand in operands):
                continue  # `minor >= 9` alone sits under a `major` gate, which is reported
            if not all(isinstance(c.operator, _CAP_OPERATORS) for c in candidate.comparisons):
                continue
            if _identity_check(self.ctx, gates, candidate):
                continue  # `cached["capability"] != current`: the same GPU as before?
            if unreachable_on_rocm(self.ctx, gates.tree, candidate):
                continue
            if _like_current_nvidia(self.ctx, gates, candidate):
                continue  # `>= (8, 0)` for bf16: every AMD GPU answers like A100 and H100
            verdict = _capability_verdict(self.ctx, gates, candidate)
            code = " ".join(self.ctx.code(candidate).split()).replace("( ", "(").replace(", )", ")")
            if verdict is None:
                message = (
                    f"`{code}` compares an AMD gfx version (MI300X = (9, 4)) with NVIDIA "
                    "compute-capability numbers"
                )
            else:
                message = (
                    f"`{code}` is {verdict}: AMD GPUs report their gfx version, not an NVIDIA "
                    "compute capability"
                )
            if _harmless_choice(gates.tree, candidate, verdict):
                continue
            if _skips_only_off_nvidia_references(self.ctx, gates, candidate):
                continue
            if _skips_a_test(self.ctx, gates, candidate):
                continue
            if _never_read(self.ctx, gates.tree, candidate) or _tuning_function(
                gates.tree, candidate
            ):
                continue
            if _only_notifies(gates.tree, candidate):
                self.report(
                    candidate,
                    message=message + " (the gate only guards a warning or a message)",
                    problem=Problem(severity=Severity.INFO),
                )
                continue
            self.report(candidate, message=message)
