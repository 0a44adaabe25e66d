"""ROC113: ``gcnArchName`` compared for equality with a bare gfx name."""

from __future__ import annotations

import re

import libcst as cst

from migrator.api import (
    Applicability,
    Fixing,
    Impact,
    Invalid,
    Parsing,
    PythonRule,
    Rewrite,
    Severity,
    Valid,
)

from ._gates import _gate_analysis, _kind, _literal_strings

_GFX_EXACT = re.compile(r"^gfx[0-9a-f]+$")


class GcnArchNameExactCompare(PythonRule):
    """
    ## What it does
    Flags `get_device_properties(i).gcnArchName` compared for equality with a bare gfx name
    (`== "gfx942"`, `in ("gfx90a", "gfx942")`).

    ## Why it breaks on ROCm
    `gcnArchName` carries target features: an MI300X reports `gfx942:sramecc+:xnack-`, so the
    equality is never true and the AMD-specific branch is skipped.

    ## Example
    ```python
    is_mi300 = torch.cuda.get_device_properties(0).gcnArchName == "gfx942"
    ```

    ## Fix
    ```python
    is_mi300 = torch.cuda.get_device_properties(0).gcnArchName.split(":")[0] == "gfx942"
    ```

    ## Fix safety
    Safe: on CUDA builds `gcnArchName` holds the device name, which has no `:`, so `split(":")[0]`
    returns it unchanged; on ROCm the comparison now sees the bare gfx name, as intended.

    ## References
    - pytorch/ao PR #2853 (MI300X `gcnArchName`)
    """

    code = "ROC113"
    name = "gcn-arch-name-exact-compare"
    category = "device-gate"
    severity = Severity.WARNING
    impact = Impact(consequence="crash-path", aggregate="scope", effort_hours=0.1)
    message = (
        "`gcnArchName` is 'gfx942:sramecc+:xnack-' on MI300X: "
        "an exact gfx-name compare never matches"
    )
    fix = Fixing(title="Compare `gcnArchName.split(':')[0]`", applicability=Applicability.SAFE)
    fact = "§0; §1 gcnArchName row; [P2][D1][V]"
    #: the gates follow values through assignments (``cap = ...; major = cap[0]``): the
    #: top-level statements connected to a trigger by module-level names
    parsing = Parsing(triggers=("gcnArchName",), scope="names")
    valid = [
        Valid("import torch\nok = 'gfx94' in torch.cuda.get_device_properties(0).gcnArchName\n"),
        Valid(
            "import torch\n"
            "ok = torch.cuda.get_device_properties(0).gcnArchName.split(':')[0] == 'gfx942'\n"
        ),
        Valid("import torch\nprint(torch.cuda.get_device_properties(0).gcnArchName)\n"),
    ]
    invalid = [
        Invalid(
            "import torch\nok = torch.cuda.get_device_properties(0).gcnArchName == 'gfx942'\n",
            fixed=(
                "import torch\n"
                "ok = torch.cuda.get_device_properties(0).gcnArchName.split(\":\")[0] == 'gfx942'\n"
            ),
            line=2,
            column=6,
        ),
        Invalid(
            "import torch as tt\ndef f():\n"
            "    arch = tt.cuda.get_device_properties(0).gcnArchName\n"
            "    return arch in ('gfx942', 'gfx950')\n",
            fixed=(
                "import torch as tt\ndef f():\n"
                "    arch = tt.cuda.get_device_properties(0).gcnArchName\n"
                "    return arch.split(\":\")[0] in ('gfx942', 'gfx950')\n"
            ),
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        gates = _gate_analysis(self.ctx)
        for candidate in gates.tree.of_type(cst.Comparison):
            if not isinstance(candidate, cst.Comparison) or len(candidate.comparisons) != 1:
                continue
            target = candidate.comparisons[0]
            pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
            if isinstance(target.operator, (cst.Equal, cst.NotEqual)):
                pairs = [(candidate.left, target.comparator), (target.comparator, candidate.left)]
            elif isinstance(target.operator, (cst.In, cst.NotIn)):
                if isinstance(target.comparator, (cst.Tuple, cst.List, cst.Set)):
                    pairs = [(candidate.left, target.comparator)]
            for gcn, other in pairs:
                if _kind(self.ctx, gates, gcn) != "gcn":
                    continue
                strings = _literal_strings(other)
                if not strings or not all(_GFX_EXACT.match(s) for s in strings):
                    continue
                split = cst.parse_expression('x.split(":")[0]')
                assert isinstance(split, cst.Subscript) and isinstance(split.value, cst.Call)
                assert isinstance(split.value.func, cst.Attribute)
                new_gcn = split.with_changes(
                    value=split.value.with_changes(
                        func=split.value.func.with_changes(value=gcn.with_changes(lpar=[], rpar=[]))
                    ),
                    lpar=gcn.lpar,
                    rpar=gcn.rpar,
                )
                if gcn is candidate.left:
                    replacement = candidate.with_changes(left=new_gcn)
                else:
                    replacement = candidate.with_changes(
                        comparisons=[target.with_changes(comparator=new_gcn)]
                    )
                self.report(candidate, fix=Rewrite(replacement))
                break
