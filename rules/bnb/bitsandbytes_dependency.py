"""ROC510 (bitsandbytes-dependency): flags a file's use of bitsandbytes (`bnb.optim.*8bit`,
`bnb.nn.Linear8bitLt`, `bnb.nn.Linear4bit`, `bnb.functional.*`, …) once, at the first use (or at
the import when the module is only imported), naming the APIs the file uses."""

from __future__ import annotations

from typing import Any

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid

from .._imports import guarded_imports, imported_modules, matches_package
from .._problems import BITSANDBYTES_BINARIES
from ._table import _data


def _api_uses(ctx: Any, package: str) -> list[tuple[cst.CSTNode, str]]:
    """Maximal Name/Attribute chains that resolve into ``package`` (imports excluded), in source
    order: read from the nodes the engine's walk already listed, not from a second walk."""
    skipped: set[int] = set()
    parents = ctx.parents
    uses: list[tuple[cst.CSTNode, str]] = []
    for node in ctx.nodes:
        parent = parents.get(id(node))
        if parent is not None and id(parent) in skipped:
            skipped.add(id(node))
        elif isinstance(node, cst.Import | cst.ImportFrom):
            skipped.add(id(node))
        elif isinstance(node, cst.Attribute | cst.Name):
            qualified = ctx.qualname(node)
            if qualified and matches_package(qualified, [package]) and qualified != package:
                uses.append((node, qualified))
                skipped.add(id(node))
    return uses


class BitsandbytesDependency(PythonRule):
    """
    ## What it does
    Flags a file's use of bitsandbytes (`bnb.optim.*8bit`, `bnb.nn.Linear8bitLt`,
    `bnb.nn.Linear4bit`, `bnb.functional.*`, …) once, at the first use (or at the import when
    the module is only imported), naming the APIs the file uses.

    ## Why it breaks on ROCm
    Up to 0.48 bitsandbytes had ROCm support only in alpha/preview wheels of its multi-backend
    refactor; the PyPI wheel carries ROCm binaries from 0.49.0 (Dec 2025, labelled preview)
    and 0.50.0 (Jul 2026) is the first release with official ROCm support for LLM.int8, QLoRA
    4-bit and the 8-bit optimizers (Linux: gfx90a, gfx942, gfx950, gfx110x, gfx115x, gfx120x).
    An older pin fails to load its CUDA library on ROCm. On CDNA GPUs 0.49 lacks 4-bit
    blocksize 64 and falls back to 128.

    ## Example
    ```python
    import bitsandbytes as bnb

    optimizer = bnb.optim.AdamW8bit(model.parameters(), lr=1e-4)
    ```

    ## Manual migration
    Require `bitsandbytes>=0.49` (prefer `>=0.50`) in the project's requirements (the
    dependency rules flag the pin itself), and re-validate 4-bit accuracy on MI200/MI300 when
    0.49 is used (blocksize 128 instead of 64). The Python code needs no change.

    ## References
    - bitsandbytes-foundation/bitsandbytes `docs/source/installation.mdx` (0.44.0–0.50.0)
    """

    code = "ROC510"
    impact = Impact(
        dependency="bitsandbytes",
        rocm_release="0.49",
        consequence="performance",
        aggregate="project",
        problem=BITSANDBYTES_BINARIES,
        effort_hours=0.5,
    )
    parsing = Parsing(scope="statement", triggers=("import bitsandbytes", "from bitsandbytes"))
    name = "bitsandbytes-dependency"
    category = "bitsandbytes"
    severity = Severity.WARNING
    message = "bitsandbytes has ROCm binaries only from 0.49 (preview; 0.50 official)"
    fact = "§5 bitsandbytes row, §10.7; [B1]"
    valid = [
        Valid("import torch\nopt = torch.optim.AdamW(params)\n"),
        Valid('"""Optionally uses bitsandbytes 8-bit Adam."""\n# import bitsandbytes as bnb\n'),
        Valid("from bitsandbytes_utils import AdamW8bit\nopt = AdamW8bit(params)\n"),
        Valid(
            "try:\n    import bitsandbytes\n    info = bitsandbytes.__version__\n"
            "except Exception:\n    pass\n"
        ),
    ]
    invalid = [
        Invalid(
            "import bitsandbytes as bnb\n\n"
            "opt = bnb.optim.AdamW8bit(params, lr=1e-4)\n"
            "layer = bnb.nn.Linear8bitLt(1024, 1024)\n",
            line=3,
            column=7,
            count=1,
        ),
        Invalid("import bitsandbytes\nprint(bitsandbytes.__version__)\n", line=1, count=1),
        Invalid(
            "try:\n    import bitsandbytes as bnb\nexcept ImportError:\n    bnb = None\n"
            "opt_class = bnb.optim.AdamW8bit if bnb else None\n",
            line=5,
        ),
        Invalid(
            "from bitsandbytes.nn import Linear4bit\n"
            "layer = Linear4bit(4096, 4096, quant_type='nf4')\n",
            line=2,
        ),
    ]

    def leave_Module(self, original_node: cst.Module) -> None:
        data = _data()
        package = data["package"]
        apis: list[str] = []
        first: cst.CSTNode | None = None
        for node, qualified in _api_uses(self.ctx, package):
            short = qualified[len(package) + 1 :]
            if short.startswith("__"):  # __version__ and friends: no kernels involved
                continue
            first = first or node
            if short not in apis:
                apis.append(short)
        if first is not None:
            four_bit = any(api.rsplit(".", 1)[-1] in data["four_bit"] for api in apis)
            listed = ", ".join(f"`{api}`" for api in apis[:5]) + (", …" if len(apis) > 5 else "")
            message = f"uses bitsandbytes ({listed}): {data['version_note']}"
            if four_bit:
                message += f"; {data['four_bit_note']}"
            self.report(first, message=message)
            return
        # Only imported (maybe to print its version): matters when the import is unguarded.
        guarded = guarded_imports(original_node)
        for node in self.ctx.nodes:
            if (
                isinstance(node, cst.Import | cst.ImportFrom)
                and id(node) not in guarded
                and any(matches_package(module, [package]) for module in imported_modules(node))
            ):
                self.report(node, message=f"imports bitsandbytes: {data['version_note']}")
                return
