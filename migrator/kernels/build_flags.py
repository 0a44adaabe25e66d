"""The include folders and macro definitions a ``setup.py`` extension or JIT ``load`` gives its
compiler (``include_dirs``, ``extra_include_paths``, ``define_macros``, ``-I``/``-D`` in
``extra_compile_args``/``extra_cuda_cflags``/``extra_cflags``): the compile check compiles each
unit with them, as the build would."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from migrator.kernels.pyvalues import PARAM, Val, to_patterns

_MACRO = re.compile(r"^[A-Za-z_]\w*(?:=[^\s]*)?$")
_FLAG_KEYWORDS = ("extra_compile_args", "extra_cuda_cflags", "extra_cflags", "define_macros")


def build_flags(
    evaluate: Callable[[ast.expr], list[Val] | None],
    arguments: dict[str, ast.expr],
    setup: bool,
    computed_out: list[str] | None = None,
) -> tuple[list[str], list[str]]:
    """(project-relative include folders, ``NAME`` or ``NAME=VALUE`` definitions) of one
    extension call, each once, in the build's order; what cannot be evaluated is left out.
    ``computed_out`` receives the names of macros whose value the build computes."""
    folders: list[str] = []
    for keyword in ("include_dirs", "extra_include_paths"):
        node = arguments.get(keyword)
        if node is None:
            continue
        values = [value for value in evaluate(node) or [] if PARAM not in value.text]
        for pattern in to_patterns(values, setup):
            if "*" not in pattern.glob and pattern.glob not in folders:
                folders.append(pattern.glob)
    defines: list[str] = []
    for keyword in _FLAG_KEYWORDS:
        node = arguments.get(keyword)
        if node is None:
            continue
        # the literal part of an f-string (``f"-DCUDA_ARCH={arch}"``) is no definition: its value
        # is computed when the build runs (the GPU's capability), so the macro is left out
        computed = {
            id(part)
            for sub in ast.walk(node)
            if isinstance(sub, ast.JoinedStr)
            for part in sub.values
        }
        for sub in ast.walk(node):
            if id(sub) in computed:
                if (
                    computed_out is not None
                    and isinstance(sub, ast.Constant)
                    and isinstance(sub.value, str)
                    and (name := re.match(r"^-D([A-Za-z_]\w*)=", sub.value))
                    and name.group(1) not in computed_out
                ):
                    computed_out.append(name.group(1))
                continue
            text = ""
            if (
                keyword == "define_macros"
                and isinstance(sub, ast.Tuple)
                and len(sub.elts) == 2
                and isinstance(sub.elts[0], ast.Constant)
                and isinstance(sub.elts[0].value, str)
            ):
                value = sub.elts[1]
                text = sub.elts[0].value
                if isinstance(value, ast.Constant) and isinstance(value.value, (str, int, float)):
                    text += f"={value.value}"
            elif (
                isinstance(sub, ast.Constant)
                and isinstance(sub.value, str)
                and sub.value.startswith("-D")
            ):
                text = sub.value[2:].strip()
            if text and _MACRO.match(text) and text not in defines:
                defines.append(text)
    return folders, defines


__all__ = ["build_flags"]
