"""Fallbacks for older library versions: an ``except`` handler whose ``try`` already uses the new
API (``try: torch.amp.GradScaler("cuda") except AttributeError: torch.cuda.amp.GradScaler()``).
The handler runs only where the new API is missing; rewriting it to the new API would break the
old versions it exists for, and on ROCm builds with the new API it never runs."""

from __future__ import annotations

import libcst as cst

from migrator.api import PythonContext
from migrator.api.syntax import handler_types

#: Exceptions a missing attribute, module or signature raises.
_VERSION_ERRORS = frozenset(
    {"AttributeError", "ImportError", "ModuleNotFoundError", "TypeError", "NameError"}
)


def in_version_fallback(ctx: PythonContext, node: cst.CSTNode, new_api: str) -> bool:
    """Whether ``node`` sits in an ``except`` handler (catching a missing attribute, module or
    signature, or everything) of a ``try`` whose body uses ``new_api`` (a dotted prefix such as
    ``torch.amp``)."""
    ancestors = ctx.ancestors(node)
    for index, ancestor in enumerate(ancestors):
        if not isinstance(ancestor, cst.ExceptHandler):
            continue
        try_node = next(
            (candidate for candidate in ancestors[index + 1 :] if isinstance(candidate, cst.Try)),
            None,
        )
        if try_node is None:
            return False
        kinds = handler_types(ancestor)
        names = None if kinds is None else {ctx.code(kind).rsplit(".", 1)[-1] for kind in kinds}
        if names is not None and not names & _VERSION_ERRORS:
            return False
        body = ctx.code(try_node.body)
        short = new_api.split(".", 1)[-1]
        return new_api in body or f"{short}." in body
    return False
