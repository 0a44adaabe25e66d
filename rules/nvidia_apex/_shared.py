"""What ROC500-ROC504 share: the apex table and ``_ApexRewrite``, the reporting of the apex → torch
rewrites (ROC500, ROC501)."""

from __future__ import annotations

from typing import Any

import libcst as cst

from migrator.api import PythonRule, Rewrite, load_table

from .._imports import (
    non_call_references,
)


def _data() -> dict[str, Any]:
    data: dict[str, Any] = load_table("apex")
    return data


class _ApexRewrite(PythonRule, abstract=True):
    """Shared reporting for the apex → torch rewrites: import removal and the check that the
    apex class is not also referenced outside calls (``isinstance``), where no fix is offered."""

    def _decline(self, node: cst.Call, short: str, reason: str) -> None:
        """Report the apex class ``short`` without a fix, saying why it is not rewritten."""
        self.report(node, message=f"`{short}` needs a ROCm/apex build; not rewritten: {reason}")

    def _report_fix(
        self,
        node: cst.Call,
        qualified: str,
        replacement: cst.CSTNode,
        imports: list[tuple[str, str | None]],
        message: str,
    ) -> None:
        if non_call_references(self.ctx.qualname, self.ctx.module, qualified):
            # an ``isinstance(m, FusedLayerNorm)`` left behind would stop matching the new
            # module on NVIDIA too, and keep the module importing apex
            self.report(
                node,
                message=(
                    f"{message}; not rewritten: `{qualified.rsplit('.', 1)[-1]}` is also used "
                    "outside calls (isinstance?); change those uses together with the calls"
                ),
            )
            return
        self.report(
            node,
            message=message,
            fix=Rewrite(
                replacement,
                imports=imports,
                remove_imports=self.ctx.unused_imports(node.func, "apex"),
            ),
        )
