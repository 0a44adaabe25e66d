"""One home for parsing source: ``parse_ast`` (the standard ``ast``, never raising), and a
module with libcst, without re-validating what the parser built.

Every libcst node checks its own invariants when it is constructed (``CSTNode.__post_init__``
calls ``_validate``). That protects trees built by hand, such as a fix's replacement, but the
parser only builds nodes from text it has just accepted, and libcst's own comment on the hook
says the work could move out of parsing. On the corpus it is about a tenth of a parse. The check
is switched off only while ``parse_module`` runs, and only when the hook is exactly that call
(any other libcst keeps its hook untouched); nodes built at any other time are validated as
before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import libcst as cst
from libcst._nodes.base import CSTNode

from migrator.syntax.pyast import parse_ast as parse_ast


def _no_validation(self: Any) -> None:
    """Stands in for ``CSTNode.__post_init__`` while the parser builds a tree."""


def _validation_hook() -> Callable[[Any], None] | None:
    """libcst's construction hook when it only validates (its code reads ``_validate`` and
    nothing else), else None: then nothing is switched."""
    hook = CSTNode.__dict__.get("__post_init__")
    code = getattr(hook, "__code__", None)
    if code is None or code.co_names != ("_validate",) or code.co_argcount != 1:
        return None
    return hook


_HOOK = _validation_hook()


def parse_module(text: str) -> cst.Module:
    """``libcst.parse_module(text)``, skipping the validation of the nodes it builds."""
    if _HOOK is None:
        return cst.parse_module(text)
    CSTNode.__post_init__ = _no_validation  # type: ignore[method-assign]
    try:
        return cst.parse_module(text)
    finally:
        CSTNode.__post_init__ = _HOOK  # type: ignore[method-assign,assignment]
