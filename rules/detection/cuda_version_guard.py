"""ROC103: a truth test of ``torch.version.cuda`` whose branch then parses the CUDA version."""

from __future__ import annotations

import libcst as cst

from migrator.api import Invalid, PythonRule, Severity, Valid

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
    consequence = "performance"
    message = (
        "branch guarded by `torch.version.cuda` parses the CUDA version: "
        "it never runs on ROCm builds"
    )
    fact = "§1 torch.version.cuda row; §10.2; [P1][P2]"
    triggers = ("version.cuda", "torch.version", "torch import version")
    #: the gates follow values through assignments (``cap = ...; major = cap[0]``): the
    #: top-level statements connected to a trigger by module-level names
    parse_scope = "names"
    #: silent in a file that reads ``torch.version.hip`` anywhere, through any alias of torch
    scope_triggers = ("version.hip",)
    effort_hours = 0.5
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
    ]
    invalid = [
        Invalid(
            "import torch\nif torch.version.cuda:\n    if float(torch.version.cuda) >= 11.8:\n"
            "        x = 1\n",
            line=2,
            column=4,
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
            if test.guards_parse:
                self.report(test.atom)
