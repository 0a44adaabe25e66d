"""ROC101: truth tests of ``torch.version.cuda`` that decide whether GPU code runs."""

from __future__ import annotations

from typing import Any

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

from .._tree import Tree, tree
from ._cuda_version import _Test, _version_analysis


def _hip_for(ctx: PythonContext, ref: cst.BaseExpression) -> tuple[cst.BaseExpression, list[Any]]:
    if (
        isinstance(ref, cst.Attribute)
        and ref.attr.value == "cuda"
        and ctx.qualname(ref.value) == "torch.version"
    ):
        return ref.with_changes(attr=cst.Name("hip"), lpar=[], rpar=[]), []
    name, imports = ctx.module_ref("torch.version")
    return cst.parse_expression(f"{name}.hip"), imports


def _needs_parens(tree_: Tree, atom: cst.CSTNode, operator: type) -> bool:
    parent = tree_.parent(atom)
    if isinstance(parent, (cst.If, cst.While, cst.Assert)) and parent.test is atom:
        return False
    if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.Return, cst.Arg)):
        return False
    if isinstance(parent, cst.IfExp) and parent.test is atom:
        return False
    return not (isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, operator))


def _fix(ctx: PythonContext, tree_: Tree, test: _Test) -> tuple[cst.BaseExpression, list[Any]]:
    hip, imports = _hip_for(ctx, test.ref)
    atom = test.atom
    if isinstance(atom, cst.Comparison):
        right: cst.BaseExpression = atom.with_changes(left=hip, lpar=[], rpar=[])
        operator: type = cst.Or if test.positive else cst.And
    else:
        right = hip
        operator = cst.Or
    lpar = list(atom.lpar)
    rpar = list(atom.rpar)
    if not lpar and _needs_parens(tree_, atom, operator):
        lpar, rpar = [cst.LeftParen()], [cst.RightParen()]
    new = cst.BooleanOperation(
        left=atom.with_changes(lpar=[], rpar=[]),
        operator=operator(),
        right=right,
        lpar=lpar,
        rpar=rpar,
    )
    return new, imports


class CudaVersionAsGpuCheck(PythonRule):
    """
    ## What it does
    Flags truth tests of `torch.version.cuda` (`if torch.version.cuda:`, `is not None`,
    `is None`, `not ...`, in `and` chains, ternaries and asserts) that decide whether GPU code runs.

    ## Why it breaks on ROCm
    ROCm builds of PyTorch set `torch.version.hip` to a version string and leave
    `torch.version.cuda` as `None`, so a test meant as "is this a GPU build?" is false on an AMD
    GPU and the GPU branch is silently skipped (or the CPU/"no GPU" branch taken).

    ## Example
    ```python
    if torch.version.cuda:
        model = model.cuda()
    ```

    ## Fix
    ```python
    if torch.version.cuda or torch.version.hip:
        model = model.cuda()
    ```
    `x is not None` becomes `x is not None or torch.version.hip is not None`; `x is None` becomes
    `x is None and torch.version.hip is None`.

    ## Fix safety
    Safe: on NVIDIA and CPU builds `torch.version.hip` is `None`, so the new expression has the same
    value as before (`cuda or None` is `cuda`); only ROCm builds change, which is the intent.
    Not offered when the test is joined with a compute-capability comparison
    (`torch.version.cuda and torch.cuda.get_device_capability() >= (9, 0)`): on ROCm the
    capability is the gfx version, so opening the test would let an MI200 (9.0) through a Hopper
    gate. Not offered (see ROC103) when the guarded code itself reads `torch.version.cuda` as a version:
    opening the branch on ROCm would run that parsing on `None`. Files that already test
    `torch.version.hip` are left alone: they tell the builds apart on purpose. A test whose
    result is named for NVIDIA (the body of `def is_nvidia():`, `IS_NVIDIA = ...`) is a vendor
    test, meant to be false on AMD, and is not reported: its callers keep NVIDIA-only paths
    ("flash attention only works on Nvidia") off ROCm.

    ## Known problems
    Values copied into a variable (`cv = torch.version.cuda`) are followed within a function only
    for parsing (ROC102), not for this rule's rewrite.

    ## References
    - PyTorch HIP semantics: https://docs.pytorch.org/docs/stable/notes/hip.html
    """

    code = "ROC101"
    name = "cuda-version-as-gpu-check"
    category = "cuda-version"
    severity = Severity.ERROR
    impact = Impact(consequence="cpu-fallback", effort_hours=0.1)
    message = "`torch.version.cuda` is None on ROCm builds: this GPU check is false on AMD GPUs"
    fix = Fixing(title="Also accept `torch.version.hip`", applicability=Applicability.SAFE)
    fact = "§1 torch.version.cuda row; §10.2; [P1][P2]"
    #: the gates follow values through assignments (``cap = ...; major = cap[0]``): the
    #: top-level statements connected to a trigger by module-level names
    #: silent in a file that reads ``torch.version.hip`` anywhere, through any alias of torch
    parsing = Parsing(
        triggers=("version.cuda", "torch.version", "torch import version"),
        scope="names",
        scope_triggers=("version.hip",),
    )
    valid = [
        Valid("import torch\nif torch.cuda.is_available():\n    pass\n"),
        Valid("import torch\nv = torch.version.cuda\nprint('CUDA', torch.version.cuda)\n"),
        Valid("import torch\nif torch.version.cuda or torch.version.hip:\n    pass\n"),
        Valid(
            "import torch\nIS_ROCM = torch.version.hip is not None\n"
            "IS_CUDA = torch.version.cuda is not None\n"
        ),
        Valid("class version:\n    cuda = None\nif version.cuda:\n    pass\n"),
        Valid(
            "import torch\nboth = torch.version.cuda and torch.version.hip\n"
            "ok = torch.version.cuda is not None\n"
        ),
        Valid(
            'import torch\n"""if torch.version.cuda: in a docstring"""\n# if torch.version.cuda:\n'
        ),
        Valid(  # a vendor test: meant to be false on AMD (its callers keep NVIDIA-only paths)
            "import torch\ndef is_nvidia():\n    if torch.version.cuda:\n        return True\n"
            "    return False\nUSE_NVIDIA_KERNELS = torch.version.cuda is not None\n"
        ),
        Valid(  # a None-guard for parsing the version through str(), not a GPU check
            "import torch\ncv = torch.version.cuda\nif cv:\n"
            "    major = int(str(cv).split('.')[0])\n"
        ),
    ]
    invalid = [
        Invalid(  # the vendor test picks NVIDIA for the capability numbers: no fix
            "import torch\n"
            "fp8 = torch.version.cuda and torch.cuda.get_device_capability() >= (9, 0)\n",
            fixed=None,
            line=2,
        ),
        Invalid(
            "import torch\nif torch.version.cuda:\n    x = 1\n",
            fixed="import torch\nif torch.version.cuda or torch.version.hip:\n    x = 1\n",
            line=2,
            column=4,
        ),
        Invalid(
            "import torch as tt\n"
            "use_gpu = tt.version.cuda is not None and tt.cuda.is_available()\n",
            fixed=(
                "import torch as tt\nuse_gpu = (tt.version.cuda is not None or "
                "tt.version.hip is not None) and tt.cuda.is_available()\n"
            ),
        ),
        Invalid(
            "import torch\nif torch.version.cuda is None:\n    raise SystemExit('needs a GPU')\n",
            fixed=(
                "import torch\nif torch.version.cuda is None and torch.version.hip is None:\n"
                "    raise SystemExit('needs a GPU')\n"
            ),
        ),
        Invalid(
            "import torch\ndevice = 'cuda' if not torch.version.cuda else 'cpu'\n",
            fixed=(
                "import torch\ndevice = 'cuda' if not (torch.version.cuda or torch.version.hip) "
                "else 'cpu'\n"
            ),
        ),
        Invalid(
            "from torch.version import cuda\nassert cuda, 'GPU build required'\n",
            fixed=(
                "import torch.version\nfrom torch.version import cuda\n"
                "assert cuda or torch.version.hip, 'GPU build required'\n"
            ),
        ),
        Invalid(
            "import torch\nif torch.cuda.is_available() and torch.version.cuda:\n    pass\n",
            fixed=(
                "import torch\nif torch.cuda.is_available() and (torch.version.cuda or "
                "torch.version.hip):\n    pass\n"
            ),
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        analysis = _version_analysis(self.ctx)
        if analysis.rocm_aware:
            return
        tree_ = tree(self.ctx)
        for test in analysis.tests:
            if test.guards_parse or _names_nvidia(tree_, test.atom):
                continue
            if self._with_capability(test.atom):
                self.report(test.atom, message=f"{self.message}; {_CAPABILITY_NOTE}")
                continue
            replacement, imports = _fix(self.ctx, tree_, test)
            self.report(test.atom, fix=Rewrite(replacement, imports=imports))

    def _with_capability(self, atom: cst.CSTNode) -> bool:
        """The test is joined by ``and``/``or`` with a compute-capability comparison: it picks
        NVIDIA so that the numbers name NVIDIA architectures (on ROCm they are gfx versions)."""
        whole: cst.CSTNode = atom
        parent = self.ctx.parent(whole)
        while isinstance(parent, (cst.BooleanOperation, cst.UnaryOperation)):
            whole = parent
            parent = self.ctx.parent(whole)
        return whole is not atom and "capability" in self.ctx.code(whole)


def _names_nvidia(tree_: Tree, atom: cst.CSTNode) -> bool:
    """The test's result is named for NVIDIA: it sits in a function whose name says NVIDIA
    (``def is_nvidia():``) or is assigned to such a name (``IS_NVIDIA = ...``): a vendor test
    that is false on AMD on purpose."""
    for node in tree_.ancestors(atom):
        if isinstance(node, cst.Assign):
            targets = [target.target for target in node.targets]
            if any("nvidia" in _last_name(target).lower() for target in targets):
                return True
        if isinstance(node, cst.AnnAssign) and "nvidia" in _last_name(node.target).lower():
            return True
        if isinstance(node, cst.FunctionDef):
            return "nvidia" in node.name.value.lower()
    return False


def _last_name(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return ""


#: Why a vendor test joined with a capability comparison gets no automatic fix.
_CAPABILITY_NOTE = (
    "no automatic fix: it is joined with a compute-capability comparison, whose numbers are gfx "
    "versions on ROCm (MI200 reports 9.0, the same as H100); gate the AMD path on the GPU's gfx "
    "architecture by hand"
)
