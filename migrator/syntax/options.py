"""Opt-in options: command-line flags, config fields and parameters that select an optional
CUDA backend (``--use_apex``, ``use_xformers: bool = False``, ``def __init__(..., use_flash_attn=
False)``) and are off by default, so the code they switch on never runs unless a user asks for
it, while the default path (torch AMP, SDPA) runs on ROCm.

Read from the project's Python texts with regular expressions (nothing is parsed or run): an
option is opt-in when some declaration gives it an off default (``action="store_true"``,
``default=False``, ``is_flag=True``, ``: bool = False``, ``=False`` in a ``def`` signature) and
nothing in the project gives it or sets it ``True`` (a declaration defaulting on, a call passing
``use_apex=True``, ``self.use_apex = True``): a project whose own code switches the backend on
runs it by default. Only names with a word naming an optional CUDA backend count (an opt-in
``--train`` or ``--fp16`` says nothing about a backend)."""

from __future__ import annotations

import re
from collections.abc import Iterable

#: Words of an option's name that name an optional CUDA backend whose ROCm build is separate or
#: missing: xformers, NVIDIA Apex, flash-attention, TensorRT, NVML, CUTLASS.
BACKEND_WORDS = frozenset(
    {
        "xformers",
        "xformer",
        "apex",
        "flash",
        "flashattn",
        "fa2",
        "fa3",
        "tensorrt",
        "trt",
        "nvml",
        "cutlass",
    }
)
#: Backend words as a text spells them (a text without one declares no backend option).
_SPELLINGS = ("xformer", "apex", "flash", "fa2", "fa3", "trt", "nvml", "cutlass")
#: An ``add_argument(``/``option(`` call's option strings (``"--use-apex", "-a"``).
_ARGUMENT = re.compile(r"\b(?:add_argument|option)\(\s*((?:[rbuRBU]?[\"']-[^\"'\n]*[\"']\s*,\s*)+)")
_OPTION_STRING = re.compile(r"[\"']--?([A-Za-z][\w-]*)[\"']")
_DEST = re.compile(r"\bdest\s*=\s*[\"'](\w+)[\"']")
_ACTION = re.compile(r"\baction\s*=\s*[\"'](store_true|store_false)[\"']")
_DEFAULT = re.compile(r"\bdefault\s*=\s*(True|False|None)\b")
_IS_FLAG = re.compile(r"\bis_flag\s*=\s*True\b")
#: A typed field of a dataclass or config class: ``use_apex: bool = False``.
_FIELD = re.compile(
    r"^[ \t]*(\w+)[ \t]*:[ \t]*(?:bool|Optional\[bool\]|bool[ \t]*\|[ \t]*None)[ \t]*=[ \t]*"
    r"(?:field\([ \t]*default[ \t]*=[ \t]*)?(True|False|None)\b",
    re.MULTILINE,
)
#: A ``def`` signature (up to its first closing parenthesis).
_SIGNATURE = re.compile(r"\bdef[ \t]+\w+[ \t]*\(([^)]*)\)", re.DOTALL)
_PARAMETER = re.compile(r"(?<![\w.])(\w+)[ \t]*(?::[ \t]*[\w\[\]| ]+)?=[ \t]*(True|False|None)\b")
#: How far after its option strings an ``add_argument`` call's keywords are looked for.
_WINDOW = 400


def _words(name: str) -> set[str]:
    return set(name.lower().replace("-", "_").split("_"))


def _backend(name: str) -> bool:
    return bool(_words(name) & BACKEND_WORDS)


def _arguments(text: str, off: set[str], on: set[str]) -> None:
    """The command-line options the text declares, by default (``add_argument``, ``option``)."""
    for match in _ARGUMENT.finditer(text):
        names = _OPTION_STRING.findall(match.group(1))
        long = [name for name in names if len(name) > 1]
        rest = text[match.end() : match.end() + _WINDOW]
        following = re.search(r"\b(?:add_argument|option)\(", rest)
        if following is not None:
            rest = rest[: following.start()]
        dest = _DEST.search(rest)
        name = dest.group(1) if dest else (long[0] if long else "").replace("-", "_")
        if not name or not _backend(name):
            continue
        action = _ACTION.search(rest)
        default = _DEFAULT.search(rest)
        if default is not None:
            (on if default.group(1) == "True" else off).add(name)
        elif action is not None:
            (off if action.group(1) == "store_true" else on).add(name)
        elif _IS_FLAG.search(rest):
            off.add(name)


def _declarations(text: str, off: set[str], on: set[str]) -> None:
    """Typed fields and ``def`` parameters with a constant default."""
    for match in _FIELD.finditer(text) if "bool" in text else ():
        name, value = match.groups()
        if _backend(name):
            (on if value == "True" else off).add(name)
    for signature in _SIGNATURE.finditer(text):
        for match in _PARAMETER.finditer(signature.group(1)):
            name, value = match.groups()
            if _backend(name):
                (on if value == "True" else off).add(name)


def opt_in_options(texts: Iterable[str]) -> frozenset[str]:
    """The names of the project's opt-in backend options (see the module's docstring)."""
    texts = list(texts)
    off: set[str] = set()
    on: set[str] = set()
    for text in texts:
        if "=" not in text or not any(spelling in text for spelling in _SPELLINGS):
            continue
        if "add_argument(" in text or "option(" in text:
            _arguments(text, off, on)
        _declarations(text, off, on)
    candidates = off - on
    if not candidates:
        return frozenset()
    # a call passing it on, or code setting it on, switches the backend on in the project
    switched = re.compile(
        r"(?<!\w)(" + "|".join(map(re.escape, sorted(candidates))) + r")[ \t]*=[ \t]*True\b"
    )
    for text in texts:
        if "True" in text and any(name in text for name in candidates):
            candidates -= set(switched.findall(text))
    return frozenset(candidates)
