"""ROC112: the architecture list searched for NVIDIA ``sm_XY`` targets."""

from __future__ import annotations

import re

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid

from .._rocm_guards import unreachable_on_rocm
from .._tree import statement_of, strings_in
from ._gates import KINDED_TYPES, _gate_analysis, _kind

_SM_STRING = re.compile(r"\b(sm|compute)_(\d|\{|%|$)")


def _header(statement: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(statement, (cst.If, cst.While)):
        return [statement.test]
    if isinstance(statement, cst.For):
        return [statement.iter, statement.body]
    if isinstance(statement, cst.With):
        return list(statement.items)
    if isinstance(statement, cst.SimpleStatementLine):
        return [statement]
    return []


#: Calls whose arguments are only a message (logging, warnings, print).
_MESSAGE_CALLS = frozenset(
    {"warn", "print", "debug", "info", "warning", "error", "warning_once", "info_once", "log"}
)


def _message_only(statement: cst.CSTNode) -> bool:
    """``raise RuntimeError(f"... sm_{major}{minor}")`` / ``LOG.info(f"... sm_{cc[0]}{cc[1]}")``:
    the name only words a message; it selects nothing."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    if isinstance(small, cst.Raise):
        return True
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        func = small.value.func
        name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
        return name in _MESSAGE_CALLS
    return False


class CudaArchListCheck(PythonRule):
    """
    ## What it does
    Flags `torch.cuda.get_arch_list()` results searched for NVIDIA `sm_XY`/`compute_XY` targets,
    and `sm_` strings built from `get_device_capability()` (`f"sm_{major}{minor}"`).

    ## Why it breaks on ROCm
    On ROCm `get_arch_list()` returns gfx targets (`gfx90a`, `gfx942`, ...), so `"sm_80" in
    torch.cuda.get_arch_list()` is false and the CUDA-only feature check skips the GPU path; an
    `sm_` name built from the capability of an MI300X is the meaningless `sm_94`.

    ## Example
    ```python
    if "sm_90" in torch.cuda.get_arch_list():
        use_fp8 = True
    ```

    ## Manual migration
    Branch on `torch.version.hip` and check the gfx target instead
    (`"gfx942" in torch.cuda.get_arch_list()`), or test for the feature directly.

    ## Known problems
    An `sm_XY` name that only words a message (a `raise`, a log or warning call) is not
    reported: it selects nothing.

    ## References
    - pytorch/pytorch `torch/cuda/__init__.py` (`get_arch_list`), `torch/utils/cpp_extension.py`
    """

    code = "ROC112"
    name = "cuda-arch-list-check"
    category = "device-gate"
    severity = Severity.WARNING
    impact = Impact(consequence="performance", aggregate="scope", effort_hours=0.5)
    message = "NVIDIA `sm_XY` architecture test: ROCm builds list gfx targets (gfx942), never sm_XY"
    fact = "§1 get_arch_list row; [P2][P9]"
    #: the gates follow values through assignments (``cap = ...; major = cap[0]``): the
    #: top-level statements connected to a trigger by module-level names
    parsing = Parsing(
        triggers=("get_arch_list", "get_device_capability", "get_device_properties"), scope="names"
    )
    valid = [
        Valid("import torch\nprint(torch.cuda.get_arch_list())\n"),
        Valid("import torch\nok = 'gfx942' in torch.cuda.get_arch_list()\n"),
        Valid("ARCHS = ['sm_80', 'sm_90']\nprint(ARCHS)\n"),
        Valid("def get_arch_list():\n    return []\nok = 'sm_90' in get_arch_list()\n"),
        Valid(
            "import torch\ncc = torch.cuda.get_device_capability()\n"
            "if cc < (9, 0):\n"
            "    raise RuntimeError(f'needs Hopper, but detected sm_{cc[0]}{cc[1]}.')\n"
            "LOG.info(f'GPU sm_{cc[0]}{cc[1]} detected')\n"
        ),
    ]
    invalid = [
        Invalid(
            "import torch\nif 'sm_90' in torch.cuda.get_arch_list():\n    pass\n",
            line=2,
            column=15,
        ),
        Invalid(
            "from torch.cuda import get_arch_list\n"
            "archs = get_arch_list()\nhas_sm80 = any(a.startswith('sm_8') for a in archs)\n",
            line=3,
        ),
        Invalid(
            "import torch as tt\nmajor, minor = tt.cuda.get_device_capability()\n"
            "arch = f'sm_{major}{minor}'\n",
            line=3,
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        gates = _gate_analysis(self.ctx)
        tree_ = gates.tree
        done: set[int] = set()
        # the node types ``_kind`` can name, and of names only those some scope binds to a kind
        kinded = getattr(gates.aliases, "kinded", None)
        for candidate in tree_.of_type(*KINDED_TYPES):
            if kinded is not None and type(candidate) is cst.Name:
                assert isinstance(candidate, cst.Name)
                if candidate.value not in kinded:
                    continue
            kind = _kind(self.ctx, gates, candidate)
            if kind not in {"arch-list", "cap", "major", "minor"}:
                continue
            statement = statement_of(tree_, candidate)
            if id(statement) in done:
                continue
            parts = _header(statement)
            if not any(_SM_STRING.search(text) for part in parts for text in strings_in(part)):
                continue
            if unreachable_on_rocm(self.ctx, tree_, candidate) or _message_only(statement):
                continue
            done.add(id(statement))
            if kind == "arch-list":
                self.report(candidate)
            else:
                self.report(
                    candidate,
                    message=(
                        "`sm_XY` name built from the compute capability: on ROCm it is the gfx "
                        "version (MI300X gives sm_94), not an NVIDIA architecture"
                    ),
                )
