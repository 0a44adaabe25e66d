"""ROC111: the GPU name tested against NVIDIA model strings."""

from __future__ import annotations

import re

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid

from .._rocm_guards import unreachable_on_rocm
from .._tree import Tree
from ._gates import _gate_analysis, _gpus, _kind, _literal_strings

_AMD_WORDS = re.compile(
    r"amd|advanced micro|instinct|radeon|\bmi\d{2,3}|gfx|rocm|hip", re.IGNORECASE
)


_STRING_METHODS = {"startswith", "endswith", "find", "rfind", "index", "count", "__contains__"}


_REGEX_FUNCS = {"re.search", "re.match", "re.fullmatch", "re.findall", "re.finditer"}


def _comprehension_strings(tree_: Tree, name: cst.BaseExpression) -> list[str] | None:
    if not isinstance(name, cst.Name):
        return None
    for ancestor in tree_.ancestors(name):
        if isinstance(ancestor, (cst.GeneratorExp, cst.ListComp, cst.SetComp)):
            comp: cst.CompFor | None = ancestor.for_in
            while comp is not None:
                if isinstance(comp.target, cst.Name) and comp.target.value == name.value:
                    return _literal_strings(comp.iter)
                comp = comp.inner_for_in
    return None


def _mentions_amd(strings: list[str]) -> bool:
    names = [gpu["name"].lower() for gpu in _gpus()]
    for text in strings:
        if _AMD_WORDS.search(text):
            return True
        if text and any(text.lower() in name for name in names):
            return True
    return False


class DeviceNameGate(PythonRule):
    """
    ## What it does
    Flags tests of the GPU name from `torch.cuda.get_device_name()` or
    `get_device_properties(i).name` against NVIDIA model strings: `"A100" in name`,
    `name.startswith("NVIDIA")`, `name == "NVIDIA H100 80GB HBM3"`, `re.search("H100", name)`.

    ## Why it breaks on ROCm
    AMD GPUs report names such as `AMD Instinct MI300X`, so these tests are never true (and `not
    in`/`!=` tests always true): the tuned branch for the NVIDIA part is skipped, or an
    "unsupported GPU" path is taken, on every AMD GPU.

    ## Example
    ```python
    if "A100" in torch.cuda.get_device_name():
        block = 128
    ```

    ## Manual migration
    Gate on what the branch needs (memory size, `multi_processor_count`, a feature check) or add
    an AMD branch keyed on `get_device_properties(i).gcnArchName.split(":")[0]` (e.g. `gfx942`).

    ## Known problems
    One finding per function (at the first test; the message lists the names tested). A function
    that also tests for AMD names (`"amd"`, `"MI300"`, `"Instinct"`) is taken as a vendor
    dispatch and not reported.

    ## References
    - pytorch/ao PR #2853 (MI300X `name`, `gcnArchName`)
    """

    code = "ROC111"
    name = "device-name-gate"
    category = "device-gate"
    severity = Severity.WARNING
    impact = Impact(consequence="performance", aggregate="scope", effort_hours=0.5)
    message = "GPU-name test never matches an AMD GPU ('AMD Instinct MI300X')"
    fact = "§0; §1 name gates row; §10.1; [D1]"
    #: the gates follow values through assignments (``cap = ...; major = cap[0]``): the
    #: top-level statements connected to a trigger by module-level names
    parsing = Parsing(triggers=("get_device_name", "get_device_properties"), scope="names")
    valid = [
        Valid("import torch\nprint(torch.cuda.get_device_name(0))\n"),
        Valid("import torch\nname = torch.cuda.get_device_name()\ngpu = name.replace(' ', '-')\n"),
        Valid(
            "import torch\n"
            "big = any(k in torch.cuda.get_device_name() for k in ('H100', 'MI300X'))\n"
        ),
        Valid("def get_device_name():\n    return 'x'\nok = 'A100' in get_device_name()\n"),
        Valid(
            "import torch\n"
            "if torch.version.hip is None and 'A100' in torch.cuda.get_device_name():\n"
            "    pass\n"
        ),
        Valid(
            "import torch\ndef vendor():\n"
            "    name = torch.cuda.get_device_properties(0).name.lower()\n"
            "    if 'nvidia' in name:\n        return 'nv'\n"
            "    elif 'amd' in name:\n        return 'amd'\n"
        ),
    ]
    invalid = [
        Invalid(
            "import torch\n"
            "if torch.cuda.is_available() and 'A100' in torch.cuda.get_device_name():\n"
            "    pass\n",
            line=2,
            column=34,
        ),
        Invalid(
            "from torch.cuda import get_device_name\nnv = get_device_name(0).startswith('NVIDIA')\n"
        ),
        Invalid(
            "import torch as tt\ndef f(i):\n    p = tt.cuda.get_device_properties(i)\n"
            "    return p.name == 'NVIDIA H100 80GB HBM3'\n",
            line=4,
        ),
        Invalid(
            "import re\nimport torch\nname = torch.cuda.get_device_name().lower()\n"
            "hopper = re.search('h100|h200', name) is not None\n"
        ),
        Invalid(
            "import torch\n"
            "hopper = any(x in torch.cuda.get_device_name() for x in ['H100', 'H200'])\n"
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        gates = _gate_analysis(self.ctx)
        tree_ = gates.tree
        vendor_aware: set[int] = set()
        tests: list[tuple[int, cst.CSTNode, list[str]]] = []
        for candidate in tree_.of_type(cst.Comparison, cst.Call):
            strings: list[str] | None = None
            if isinstance(candidate, cst.Comparison) and len(candidate.comparisons) == 1:
                target = candidate.comparisons[0]
                left, right = candidate.left, target.comparator
                if isinstance(target.operator, (cst.In, cst.NotIn)):
                    if _kind(self.ctx, gates, right) == "name":
                        strings = _literal_strings(left) or _comprehension_strings(tree_, left)
                elif isinstance(target.operator, (cst.Equal, cst.NotEqual)):
                    if _kind(self.ctx, gates, left) == "name":
                        strings = _literal_strings(right)
                    elif _kind(self.ctx, gates, right) == "name":
                        strings = _literal_strings(left)
            elif isinstance(candidate, cst.Call):
                func = candidate.func
                if (
                    isinstance(func, cst.Attribute)
                    and func.attr.value in _STRING_METHODS
                    and _kind(self.ctx, gates, func.value) == "name"
                    and candidate.args
                ):
                    strings = _literal_strings(candidate.args[0].value)
                elif self.ctx.qualname(func) in _REGEX_FUNCS and len(candidate.args) >= 2:
                    if _kind(self.ctx, gates, candidate.args[1].value) == "name":
                        strings = _literal_strings(candidate.args[0].value)
            if not strings:
                continue
            scope = id(tree_.scope(candidate))
            if _mentions_amd(strings):
                vendor_aware.add(scope)
                continue
            if unreachable_on_rocm(self.ctx, tree_, candidate):
                continue
            tests.append((scope, candidate, strings))
        by_scope: dict[int, list[tuple[cst.CSTNode, list[str]]]] = {}
        for scope, candidate, strings in tests:
            if scope in vendor_aware:
                continue  # the same function also tests for AMD names: a vendor dispatch
            by_scope.setdefault(scope, []).append((candidate, strings))
        for found in by_scope.values():
            names = list(dict.fromkeys(s for _, strings in found for s in strings))
            shown = ", ".join(repr(s) for s in names[:4]) + (", ..." if len(names) > 4 else "")
            self.report(
                found[0][0],
                message=(
                    f"GPU-name test for {shown} never matches an AMD GPU (MI300X reports "
                    "'AMD Instinct MI300X'): the branch meant for that NVIDIA part is decided "
                    "wrongly on ROCm"
                ),
            )
