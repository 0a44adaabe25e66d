"""ROC110: compute-capability comparisons with NVIDIA numbers."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any

import libcst as cst

from migrator.api import Invalid, Problem, PythonContext, PythonRule, Severity, Valid, load_table
from migrator.api.knowledge import is_test_path
from migrator.api.syntax import literal_value

from .._rocm_guards import unreachable_on_rocm
from .._tree import Tree, identifier, simple_statements
from ._gates import _gate_analysis, _GateAnalysis, _gpus, _kind

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


_COMPARISONS: dict[type[cst.BaseCompOp], Callable[[Any, Any], Any]] = {
    cst.LessThan: operator.lt,
    cst.LessThanEqual: operator.le,
    cst.GreaterThan: operator.gt,
    cst.GreaterThanEqual: operator.ge,
    cst.Equal: operator.eq,
    cst.NotEqual: operator.ne,
    cst.In: lambda left, right: left in right,
    cst.NotIn: lambda left, right: left not in right,
}


def _compare(comparison: cst.BaseCompOp, left: object, right: object) -> bool | None:
    """``left <op> right`` for literal values; None for another operator or incomparable values."""
    compare = _COMPARISONS.get(type(comparison))
    if compare is None:
        return None
    try:
        return bool(compare(left, right))
    except TypeError:
        return None


def _collection_value(node: cst.BaseExpression) -> object:
    if isinstance(node, (cst.List, cst.Set)):
        values = [literal_value(element.value) for element in node.elements]
        return ... if any(value is ... for value in values) else tuple(values)
    value = literal_value(node)
    return value


_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Divide)


def _involves_capability(ctx: PythonContext, gates: _GateAnalysis, node: cst.CSTNode) -> bool:
    """Whether ``node`` is a capability value or arithmetic on one (``major * 10 + minor``)."""
    if _kind(ctx, gates, node) in {"cap", "major"}:
        return True
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _ARITHMETIC):
        return _involves_capability(ctx, gates, node.left) or _involves_capability(
            ctx, gates, node.right
        )
    return False


def _value_on(
    ctx: PythonContext, gates: _GateAnalysis, node: cst.BaseExpression, gpu: dict[str, Any]
) -> object:
    """The value of a capability expression (or literal) on ``gpu``; ``...`` when unknown."""
    major, minor = gpu["capability"]
    kind = _kind(ctx, gates, node)
    if kind == "cap":
        return (major, minor)
    if kind == "major":
        return major
    if kind == "minor":
        return minor
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _ARITHMETIC):
        left = _value_on(ctx, gates, node.left, gpu)
        right = _value_on(ctx, gates, node.right, gpu)
        if not isinstance(left, (int, float)) or not isinstance(right, (int, float)):
            return ...
        operator = node.operator
        try:
            if isinstance(operator, cst.Add):
                return left + right
            if isinstance(operator, cst.Subtract):
                return left - right
            if isinstance(operator, cst.Multiply):
                return left * right
            if isinstance(operator, cst.FloorDivide):
                return left // right
            return left / right
        except ZeroDivisionError:
            return ...
    return _collection_value(node)


def _outcome(
    ctx: PythonContext, gates: _GateAnalysis, comparison: cst.Comparison, gpu: dict[str, Any]
) -> bool | None:
    """What a capability comparison evaluates to on ``gpu`` (None when not literal)."""
    operands = [comparison.left, *[c.comparator for c in comparison.comparisons]]
    values = [_value_on(ctx, gates, operand, gpu) for operand in operands]
    if any(value is ... for value in values):
        return None
    outcome = True
    for index, target in enumerate(comparison.comparisons):
        result = _compare(target.operator, values[index], values[index + 1])
        if result is None:
            return None
        outcome = outcome and result
    return outcome


def _like_current_nvidia(
    ctx: PythonContext, gates: _GateAnalysis, comparison: cst.Comparison
) -> bool:
    """Whether the gate answers every AMD GPU the way it answers both reference NVIDIA GPUs
    (Ampere and Hopper): then it asks "a current GPU?", which AMD GPUs are, not "which one?"."""
    answers = {
        _outcome(ctx, gates, comparison, gpu)
        for gpu in [*_gpus(), *load_table("detection")["nvidia_reference"]]
    }
    return len(answers) == 1 and None not in answers


def _capability_verdict(
    ctx: PythonContext, gates: _GateAnalysis, comparison: cst.Comparison
) -> str | None:
    """'true on gfx90a, gfx942 ...; false on ...' for literal thresholds, else None."""
    results: dict[str, bool] = {}
    for gpu in _gpus():
        outcome = _outcome(ctx, gates, comparison, gpu)
        if outcome is None:
            return None
        results[f"{gpu['gfx']} {tuple(gpu['capability'])}"] = outcome
    true = [key for key, value in results.items() if value]
    false = [key for key, value in results.items() if not value]
    if not false:
        return "true on every AMD GPU"
    if not true:
        return "false on every AMD GPU"
    return f"true on {', '.join(true)}; false on {', '.join(false)}"


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
    consequence = "performance"
    aggregate = "scope"
    message = "compute-capability gate: AMD GPUs report their gfx version (MI300X = (9, 4))"
    fact = "§0; §1 get_device_capability row; §10.1; [D1][D3]"
    triggers = ("get_device_capability", "get_device_properties")
    #: the gates follow values through assignments (``cap = ...; major = cap[0]``): the
    #: top-level statements connected to a trigger by module-level names
    parse_scope = "names"
    effort_hours = 0.5
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


def _identity_check(ctx: PythonContext, gates: _GateAnalysis, comparison: cst.Comparison) -> bool:
    """``==``/``!=`` between the capability and a value read back from somewhere (a call, an
    index, an attribute: ``cache.get("device_capability") != current``): asks whether the GPU
    is the same as before, which is as right on AMD, not whether it is an NVIDIA architecture."""
    if len(comparison.comparisons) != 1:
        return False
    target = comparison.comparisons[0]
    if not isinstance(target.operator, (cst.Equal, cst.NotEqual)):
        return False
    operands = [comparison.left, target.comparator]
    capability = [_involves_capability(ctx, gates, operand) for operand in operands]
    if capability.count(True) != 1:
        return False
    other = operands[capability.index(False)]
    return isinstance(other, (cst.Call, cst.Subscript, cst.Attribute))


_NOTIFY_CALLS = frozenset(
    {"warn", "print", "debug", "info", "warning", "warning_once", "info_once", "log"}
)


def _only_notifies(tree_: Tree, comparison: cst.CSTNode) -> bool:
    """Whether the ``if`` this comparison tests only warns, prints or logs (both branches)."""
    test_owner = None
    child = comparison
    for ancestor in tree_.ancestors(comparison):
        if isinstance(ancestor, cst.If) and ancestor.test is child:
            test_owner = ancestor
            break
        if not isinstance(ancestor, (cst.BooleanOperation, cst.UnaryOperation, cst.Comparison)):
            return False
        child = ancestor
    if test_owner is None:
        return False
    blocks: list[cst.BaseSuite] = [test_owner.body]
    if isinstance(test_owner.orelse, cst.Else):
        blocks.append(test_owner.orelse.body)
    elif test_owner.orelse is not None:
        return False
    for block in blocks:
        statements = block.body if isinstance(block, cst.IndentedBlock) else [block]
        for statement in statements:
            smalls = getattr(statement, "body", None)
            if not isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                return False
            for small in smalls or ():
                if isinstance(small, cst.Pass):
                    continue
                if not (
                    isinstance(small, cst.Expr)
                    and isinstance(small.value, cst.Call)
                    and identifier(small.value) in _NOTIFY_CALLS
                ):
                    return False
    return True


_EXITS = frozenset({"skip", "skipTest"})


def _test_owner(tree_: Tree, comparison: cst.CSTNode) -> cst.If | cst.IfExp | None:
    """The ``if`` statement or ``a if test else b`` whose whole test holds ``comparison``."""
    child = comparison
    for ancestor in tree_.ancestors(comparison):
        if isinstance(ancestor, (cst.If, cst.IfExp)) and ancestor.test is child:
            return ancestor
        if not isinstance(ancestor, (cst.BooleanOperation, cst.UnaryOperation, cst.Comparison)):
            return None
        child = ancestor
    return None


def _only_turns_off(smalls: list[cst.BaseSmallStatement]) -> bool:
    """``flash_attn_func_v3 = None`` / ``USE_FAST = False``: the branch only disables an optional
    path, so whichever way the gate answers, nothing that cannot run is chosen by it."""
    return bool(smalls) and all(
        isinstance(small, cst.Assign)
        and isinstance(small.value, cst.Name)
        and small.value.value in ("None", "False")
        for small in smalls
    )


def _only_exits(smalls: list[cst.BaseSmallStatement]) -> bool:
    """A bare ``return``, ``continue`` or ``pytest.skip(...)``: the gated work is skipped."""
    if len(smalls) != 1:
        return False
    small = smalls[0]
    if isinstance(small, cst.Return):
        return small.value is None
    if isinstance(small, cst.Continue):
        return True
    return (
        isinstance(small, cst.Expr)
        and isinstance(small.value, cst.Call)
        and identifier(small.value) in _EXITS
    )


def _number(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Integer, cst.Float))


def _harmless_choice(tree_: Tree, comparison: cst.CSTNode, verdict: str | None) -> bool:
    """Gates that cannot send an AMD GPU into code it cannot run: one that only turns an optional
    path off, one that every AMD GPU answers by skipping the gated work (``if major != 8:
    return`` before an Ampere-only kernel), and one that only picks a number (a tile size:
    ``32 if cap[0] >= 10 else 128``) rather than a code path."""
    owner = _test_owner(tree_, comparison)
    if isinstance(owner, cst.IfExp):
        return _number(owner.body) and _number(owner.orelse)
    if owner is None:
        return False
    smalls = simple_statements(owner.body)
    if owner.orelse is not None:
        return smalls is not None and _only_sets_numbers(smalls)
    if smalls is None:
        return False
    if _only_turns_off(smalls) or _only_sets_numbers(smalls):
        return True
    return _true_on_every_amd(tree_, comparison, owner, verdict) and _only_exits(smalls)


def _true_on_every_amd(
    tree_: Tree, comparison: cst.CSTNode, owner: cst.If, verdict: str | None
) -> bool:
    """Whether the whole ``if`` test is true on every AMD GPU (``not`` flips the comparison's
    answer; any ``and``/``or`` around it makes the answer unknown)."""
    if verdict not in ("true on every AMD GPU", "false on every AMD GPU"):
        return False
    holds = verdict == "true on every AMD GPU"
    for ancestor in tree_.ancestors(comparison):
        if ancestor is owner:
            return holds
        if not (
            isinstance(ancestor, cst.UnaryOperation) and isinstance(ancestor.operator, cst.Not)
        ):
            return False
        holds = not holds
    return False


def _numeric(node: cst.BaseExpression | None) -> bool:
    """A number, a negated one, or ``a if test else b`` of numbers: a tuning constant."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _numeric(node.expression)
    if isinstance(node, cst.IfExp):
        return _numeric(node.body) and _numeric(node.orelse)
    return node is not None and _number(node)


def _only_sets_numbers(smalls: list[cst.BaseSmallStatement]) -> bool:
    """``heuristic = -1`` / ``BLOCK_N = 64``: the gated branch only picks tuning constants, so
    on any GPU it selects a number, not code that cannot run."""
    return bool(smalls) and all(
        isinstance(small, cst.Assign) and _numeric(small.value) for small in smalls
    )


def _skips_only_off_nvidia_references(
    ctx: PythonContext, gates: _GateAnalysis, comparison: cst.Comparison
) -> bool:
    """A gate that only skips (an ``if`` whose body is ``pytest.skip``, a bare ``return`` or
    ``continue``; a ``skipif`` decorator's condition) and whose comparison lets the work run
    on both reference NVIDIA GPUs (Ampere and Hopper): the work is not architecture-specific,
    so an AMD GPU either runs it as they do or skips it."""
    negated = _skip_negation(gates.tree, comparison)
    if negated is None:
        return False
    for gpu in load_table("detection")["nvidia_reference"]:
        outcome = _outcome(ctx, gates, comparison, gpu)
        if outcome is None or outcome != negated:
            return False  # the comparison would skip the work on this NVIDIA GPU
    return True


def _skip_negation(tree_: Tree, comparison: cst.Comparison) -> bool | None:
    """Whether ``comparison`` is negated on its way to a skip (the work is skipped when it is
    true, or with ``True`` when it is false), through ``and``/``or``/``not`` only; None when it
    does not decide a skip."""
    owner = _test_owner(tree_, comparison)
    if isinstance(owner, cst.IfExp):
        return None  # a value chosen, not work skipped
    if isinstance(owner, cst.If):
        if owner.orelse is not None:
            return None
        smalls = simple_statements(owner.body)
        if smalls is None or not _only_exits(smalls):
            return None
    negated = False
    for ancestor in tree_.ancestors(comparison):
        if ancestor is owner:
            return negated
        if isinstance(ancestor, cst.UnaryOperation) and isinstance(ancestor.operator, cst.Not):
            negated = not negated
        elif isinstance(ancestor, cst.BooleanOperation):
            continue
        elif isinstance(ancestor, cst.Arg) and (
            ancestor.keyword is None or ancestor.keyword.value == "condition"
        ):
            continue
        elif isinstance(ancestor, cst.Call) and identifier(ancestor.func) in ("skipif", "skipIf"):
            first = ancestor.args[0] if ancestor.args else None
            return (
                negated if first is not None and first is _arg_holding(tree_, comparison) else None
            )
        else:
            return None
    return None


def _arg_holding(tree_: Tree, node: cst.CSTNode) -> cst.Arg | None:
    """The call argument that holds ``node``."""
    for ancestor in tree_.ancestors(node):
        if isinstance(ancestor, cst.Arg):
            return ancestor
    return None


def _never_read(ctx: PythonContext, tree_: Tree, comparison: cst.CSTNode) -> bool:
    """``is_sm80 = major == 8`` where nothing reads ``is_sm80`` (in its function, or anywhere in
    a test module): the gate decides nothing."""
    assign = tree_.parent(comparison)
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return False
    target = assign.targets[0].target
    if not isinstance(target, cst.Name):
        return False
    scope = tree_.scope(assign)
    if scope is tree_.module and not is_test_path(ctx.path):
        return False  # another module may import it
    nodes = tree_.nodes if scope is tree_.module else tree_.descendants(scope)
    return not any(
        isinstance(node, cst.Name) and node.value == target.value and node is not target
        for node in nodes
    )


#: Text of an nvcc architecture flag (``-gencode=arch=compute_90a,code=sm_90a``,
#: ``-arch=sm_80``): a value built for the CUDA compiler, which a ROCm build never runs (hipcc
#: builds for ``PYTORCH_ROCM_ARCH``; the extension build is reported by the ROC6xx rules).
_NVCC_ARCH_FLAG = re.compile(r"-gencode|arch=compute_|code=sm_|-arch[= ]sm_|--gpu-architecture")


def _tuning_value(node: cst.BaseExpression | None) -> bool:
    """A number (a tile or block size) or an nvcc architecture flag built from the
    capability: a value every GPU can use, or one only the CUDA compiler reads."""
    if _numeric(node):
        return True
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return bool(_NVCC_ARCH_FLAG.search(_source_text(node)))
    return False


def _subset_of(
    node: cst.BaseExpression | None, candidates: set[str], kept: frozenset[str] = frozenset()
) -> bool:
    """``configs`` or ``[c for c in configs if ...]`` where ``configs`` is a parameter, or a
    local ``kept`` already known to hold some of them, sliced (``kept[:1]``) or sorted
    (``sorted(kept, key=...)``): the function returns some of the autotuning configurations
    it was given."""
    if isinstance(node, cst.Name):
        return node.value in kept or (node.value in candidates and "config" in node.value.lower())
    if isinstance(node, cst.ListComp) and not isinstance(node.for_in.inner_for_in, cst.CompFor):
        return _subset_of(node.for_in.iter, candidates, kept) and (
            isinstance(node.elt, cst.Name)
            and isinstance(node.for_in.target, cst.Name)
            and node.elt.value == node.for_in.target.value
        )
    if isinstance(node, cst.Subscript) and all(
        isinstance(element.slice, cst.Slice) for element in node.slice
    ):
        return _subset_of(node.value, candidates, kept)
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value in ("sorted", "list")
        and node.args
        and node.args[0].keyword is None
    ):
        return _subset_of(node.args[0].value, candidates, kept)
    return False


def _kept_configs(function: cst.FunctionDef, tree_: Tree, candidates: set[str]) -> frozenset[str]:
    """Locals of an autotune pruning function that hold some of its configurations: assigned a
    subset of them, or what a pruning helper returns for them (``kept = base(configs, args)``:
    a helper given the configurations passes some of them on)."""
    kept: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node in tree_.descendants(function.body):
            if not isinstance(node, cst.Assign) or len(node.targets) != 1:
                continue
            target = node.targets[0].target
            if not isinstance(target, cst.Name) or target.value in kept:
                continue
            value = node.value
            helper = (
                isinstance(value, cst.Call)
                and bool(value.args)
                and value.args[0].keyword is None
                and _subset_of(value.args[0].value, candidates, frozenset(kept))
            )
            if helper or _subset_of(value, candidates, frozenset(kept)):
                kept.add(target.value)
                changed = True
    return frozenset(kept)


def _sort_key(tree_: Tree, node: cst.CSTNode) -> bool:
    """Whether a lambda is the ``key=`` of ``sorted``/``min``/``max``."""
    argument = tree_.parent(node)
    call = tree_.parent(argument) if isinstance(argument, cst.Arg) else None
    return (
        isinstance(argument, cst.Arg)
        and argument.keyword is not None
        and argument.keyword.value == "key"
        and isinstance(call, cst.Call)
        and isinstance(call.func, cst.Name)
        and call.func.value in ("sorted", "min", "max")
    )


def _skips_a_test(ctx: PythonContext, gates: _GateAnalysis, comparison: cst.Comparison) -> bool:
    """In a test file, a gate whose only effect is skipping a test (``if ...: pytest.skip()``,
    ``@pytest.mark.skipif(...)``) that skips it on every AMD Instinct GPU: the NVIDIA-specific
    test never runs there (one that AMD would run stays reported)."""
    if not is_test_path(ctx.path):
        return False
    tree_ = gates.tree
    decorator = False
    negated = False
    owner: cst.CSTNode | None = None
    for ancestor in tree_.ancestors(comparison):
        if isinstance(ancestor, cst.UnaryOperation) and isinstance(ancestor.operator, cst.Not):
            negated = not negated
        elif isinstance(ancestor, (cst.BooleanOperation, cst.Arg)):
            continue
        elif isinstance(ancestor, cst.Call):
            decorator = identifier(ancestor.func) in ("skipif", "skipIf")
            break
        else:
            owner = ancestor
            break
    if not decorator:
        if not isinstance(owner, cst.If) or owner.test is None or owner.orelse is not None:
            return False
        smalls = simple_statements(owner.body)
        if smalls is None or not _only_exits(smalls):
            return False
    instinct = [gpu for gpu in _gpus() if str(gpu["gfx"]).startswith("gfx9")]
    outcomes = [_outcome(ctx, gates, comparison, gpu) for gpu in instinct]
    return all(outcome is not None and outcome != negated for outcome in outcomes)


def _source_text(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _tuning_function(tree_: Tree, comparison: cst.CSTNode) -> bool:
    """A gate inside a function that only computes a tuning value (every ``return`` gives a
    number or an nvcc architecture flag, and its statements are a docstring, assignments,
    asserts, ``if``s, returns and precondition ``raise``s): a tile or block size chosen per
    architecture, which every GPU can use, or a flag only nvcc reads. A gate whose own branch
    raises is a precondition, not a choice, and stays reported."""
    function = next(
        (a for a in tree_.ancestors(comparison) if isinstance(a, cst.FunctionDef)), None
    )
    if function is None:
        return False
    owner = _test_owner(tree_, comparison)
    if isinstance(owner, cst.If) and any(
        isinstance(node, cst.Raise) for node in tree_.descendants(owner.body)
    ):
        return False
    # autotune pruning: ``return configs`` or a filter of it (every GPU can run what is kept)
    candidates = {param.name.value for param in function.params.params}
    kept = _kept_configs(function, tree_, candidates) if candidates else frozenset()
    returns = 0
    for node in tree_.descendants(function.body):
        if isinstance(node, cst.Lambda) and _sort_key(tree_, node):
            continue
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        if isinstance(node, cst.Return):
            if not (_tuning_value(node.value) or _subset_of(node.value, candidates, kept)):
                return False
            returns += 1
        elif isinstance(node, cst.Expr) and isinstance(node.value, cst.SimpleString):
            continue  # the docstring
        elif isinstance(node, cst.BaseSmallStatement) and not isinstance(
            node,
            (cst.Assign, cst.Assert, cst.Return, cst.Pass, cst.Raise, cst.Import, cst.ImportFrom),
        ):
            return False
    return returns > 0
