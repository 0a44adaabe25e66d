"""ROC103: a truth test of ``torch.version.cuda`` whose branch then parses the CUDA version."""

from __future__ import annotations

from typing import Any

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid

from ._cuda_version import _version_analysis


class CudaVersionGuard(PythonRule):
    """
    ## What it does
    Flags a truth test of `torch.version.cuda` whose branch then parses the CUDA version
    (`if torch.version.cuda: if float(torch.version.cuda) >= 11.8: ...`, or
    `torch.version.cuda and torch.version.cuda >= "11.0"`).

    ## Why it breaks on ROCm
    The guard keeps the parsing from crashing, but on ROCm (`torch.version.cuda` is `None`) the
    whole branch is skipped: whatever it enables (bf16, a fast path, a backend flag) is silently
    off on AMD GPUs. Widening the guard to `torch.version.hip` would not help: the branch would
    then parse `None`.

    ## Example
    ```python
    if torch.version.cuda and torch.version.cuda >= "11.0":
        use_bf16 = True
    ```

    ## Manual migration
    Decide what the branch means on ROCm and add an explicit `torch.version.hip` branch (its
    version numbers are HIP's, not CUDA's), or test the capability itself
    (`torch.cuda.is_bf16_supported()`).

    ## References
    - PyTorch HIP semantics: https://docs.pytorch.org/docs/stable/notes/hip.html
    """

    code = "ROC103"
    name = "cuda-version-guard"
    category = "cuda-version"
    severity = Severity.WARNING
    impact = Impact(consequence="performance", effort_hours=0.5)
    message = (
        "branch guarded by `torch.version.cuda` parses the CUDA version: "
        "it never runs on ROCm builds"
    )
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
        Valid("import torch\nif torch.version.cuda:\n    model = 1\n"),
        # an assert is no branch that is skipped: it fails on ROCm (ROC102 reports it)
        Valid(
            "import torch\ncv = torch.version.cuda\nassert cv is not None\n"
            "major = int(cv.split('.')[0])\n"
        ),
        Valid(
            "import torch\nif torch.version.hip:\n    pass\n"
            "elif torch.version.cuda and float(torch.version.cuda) > 11:\n    pass\n"
        ),
        Valid(  # the branch only records the CUDA version: on ROCm there is none to record
            "import torch\n"
            "display, major = None, None\n"
            "cuda_version = torch.version.cuda\n"
            "if cuda_version:\n"
            "    display = cuda_version\n"
            "    major = int(str(cuda_version).split('.')[0])\n"
        ),
    ]
    invalid = [
        Invalid(
            "import torch\nif torch.version.cuda:\n    if float(torch.version.cuda) >= 11.8:\n"
            "        x = 1\n",
            line=2,
            column=4,
        ),
        Invalid(  # the version decides a setting: on ROCm the setting is silently off
            "import torch\n"
            "use_bf16 = False\n"
            "if torch.version.cuda:\n"
            "    use_bf16 = int(torch.version.cuda.split('.')[0]) >= 11\n",
            line=3,
        ),
        Invalid(
            "import torch as tt\nok = tt.version.cuda and tt.cuda.is_available() and "
            "tt.version.cuda >= '11.0'\n",
        ),
        Invalid(
            "import torch\ndef f():\n    if torch.version.cuda is None:\n        return 0\n"
            "    return int(torch.version.cuda.split('.')[0])\n",
            line=3,
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        analysis = _version_analysis(self.ctx)
        if analysis.rocm_aware:
            return
        for test in analysis.tests:
            if test.guards_parse and not _only_records_version(self.ctx, test.atom, test.ref):
                self.report(test.atom)


def _only_records_version(ctx: Any, atom: cst.BaseExpression, ref: cst.BaseExpression) -> bool:
    """``if cuda_version: display = cuda_version; major = int(cuda_version.split(".")[0])``:
    the branch only stores the CUDA version itself, so on ROCm its names keep their "no CUDA
    version" defaults, which is what they mean there."""
    owner = next((a for a in ctx.ancestors(atom) if isinstance(a, cst.If)), None)
    if owner is None or owner.test is not atom or owner.orelse is not None:
        return False
    version = ctx.code(ref).strip()
    statements = owner.body.body
    if not statements:
        return False
    targets: set[str] = set()
    for line in statements:
        if not isinstance(line, cst.SimpleStatementLine):
            return False
        for small in line.body:
            if not isinstance(small, cst.Assign) or not _mentions(ctx, small.value, version):
                return False
            for target in small.targets:
                if not isinstance(target.target, cst.Name):
                    return False
                targets.add(target.target.value)
    # each name has its default before the branch (else it is unbound on ROCm)
    return targets <= _assigned_before(ctx, owner)


def _assigned_before(ctx: Any, statement: cst.If) -> set[str]:
    """The names assigned before ``statement`` in its block and in each enclosing block of the
    same function (``x = None`` before the ``try:`` holding the branch)."""
    out: set[str] = set()
    current: cst.CSTNode = statement
    while True:
        block = ctx.parent(current)
        if block is None:
            return out
        body = getattr(block, "body", ())
        for earlier in body if isinstance(body, (list, tuple)) else ():
            if earlier is current:
                break
            for small in earlier.body if isinstance(earlier, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Assign):
                    for target in small.targets:
                        names = (
                            [e.value for e in target.target.elements]
                            if isinstance(target.target, cst.Tuple)
                            else [target.target]
                        )
                        out.update(n.value for n in names if isinstance(n, cst.Name))
        if isinstance(block, cst.Module):
            return out
        owner = ctx.parent(block) if isinstance(block, cst.IndentedBlock) else block
        if owner is None or isinstance(owner, (cst.FunctionDef, cst.ClassDef)):
            return out
        current = owner


def _mentions(ctx: Any, node: cst.CSTNode, text: str) -> bool:
    """Whether ``node`` is the version ``text`` itself or a reading of it (a conversion, a
    method call, an index, an f-string): a value, not a decision (no comparison)."""
    if isinstance(node, (cst.Name, cst.Attribute)):
        return bool(ctx.code(node).strip() == text)
    if isinstance(node, cst.Call):
        if isinstance(node.func, cst.Attribute):  # ``v.split(".")``, ``v.strip()``
            return _mentions(ctx, node.func.value, text)
        return any(_mentions(ctx, arg.value, text) for arg in node.args)  # ``int(v)``
    if isinstance(node, cst.Subscript):
        return _mentions(ctx, node.value, text)
    if isinstance(node, cst.FormattedString):
        return any(
            isinstance(part, cst.FormattedStringExpression)
            and _mentions(ctx, part.expression, text)
            for part in node.parts
        )
    return False
