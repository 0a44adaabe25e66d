"""What the names and macros of a build script's ``for a, b in ...`` loop may hold, read without running it:
``os.walk``, ``enumerate``, ``zip`` and ``itertools.product`` bind each name to the values of its
own iterable, so sources collected per name (``for main, suffix in product(files, suffixes)``)
stay known; which macro names a ``define_macros`` entry or ``-D`` flag defines."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence

from migrator.kernels.pyvalues import Val, join

#: Loops whose tuple target takes one name per argument, in order.
_PER_ARGUMENT = ("zip", "product")


def tuple_loop_bindings(
    callee: str,
    names: Sequence[str],
    arguments: Sequence[ast.expr],
    evaluate: Callable[[ast.expr], list[Val] | None],
    context: str,
    folder: str,
) -> dict[str, list[Val]]:
    """The values of the names of a loop's tuple target over a call to ``callee`` (a dotted
    name), by name; a name left out is unknown."""
    last = callee.rsplit(".", 1)[-1]
    if last == "walk" and len(names) == 3 and arguments:
        top = evaluate(arguments[0]) or []
        roots = [joined for v in top if (joined := join(v, Val("**", v.context, v.base)))]
        anywhere = [Val("*", context, folder)]
        return {names[0]: roots, names[1]: anywhere, names[2]: anywhere}
    if callee == "enumerate" and len(names) == 2 and arguments:
        found = evaluate(arguments[0])
        return {names[1]: found} if names[1] and found is not None else {}
    if last in _PER_ARGUMENT and len(names) == len(arguments):
        out: dict[str, list[Val]] = {}
        for name, argument in zip(names, arguments, strict=True):
            found = evaluate(argument) if name else None
            if found is not None:
                out[name] = found
        return out
    return {}


def folder_next(values: Sequence[ast.expr]) -> bool:
    """Whether an f-string's unknown first part is a folder: alone, or followed by ``/``
    (``f"{here}/k.cu"``); ``f"{name}_cuda.cu"`` starts with a name instead."""
    if len(values) == 1:
        return True
    after = values[1]
    return isinstance(after, ast.Constant) and str(after.value).startswith(("/", "\\"))


def macro_names(node: ast.expr) -> list[tuple[str, int]]:
    """(name, line) of each macro an expression defines: ``('WITH_CUDA', None)``,
    ``'-DWITH_CUDA'``; upper-case names only."""
    out: list[tuple[str, int]] = []
    for sub in ast.walk(node):
        name = ""
        if (
            isinstance(sub, ast.Tuple)
            and sub.elts
            and isinstance(sub.elts[0], ast.Constant)
            and isinstance(sub.elts[0].value, str)
        ):
            name = sub.elts[0].value
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            if sub.value.startswith("-D"):
                name = sub.value[2:].split("=", 1)[0]
        if re.fullmatch(r"[A-Za-z_]\w*", name or "") and name.upper() == name:
            out.append((name, getattr(sub, "lineno", 1)))
    return out
