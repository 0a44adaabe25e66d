"""Modules that hold one of several alternatives a name table selects by configuration: opt-in
code, which runs only where a user chooses it."""

from __future__ import annotations

import re
from collections.abc import Mapping

#: A module-level table from names to classes or functions, one entry a line:
#: ``QUANTIZERS = {"gguf": GGUFQuantizer, "torchao": TorchAoQuantizer, ...}``.
_NAME_TABLE = re.compile(
    r"^(?P<table>[A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=[ \t]*\{[ \t]*\n"
    r"(?P<body>(?:[ \t]+[\"'][^\"'\n]+[\"'][ \t]*:[ \t]*[A-Za-z_][\w.]*[ \t]*,?[ \t]*(?:#[^\n]*)?\n)+)"
    r"[ \t]*\}",
    re.MULTILINE,
)
_TABLE_VALUE = re.compile(
    r":[ \t]*(?:[A-Za-z_]\w*\.)*(?P<name>[A-Za-z_]\w*)[ \t]*,?[ \t]*(?:#.*)?$"
)
_TOP_DEFINITION = re.compile(
    r"^(?:class|def|async[ \t]+def)[ \t]+(?P<name>[A-Za-z_]\w*)", re.MULTILINE
)
#: A table with at least this many alternatives, each in a module of its own, selects one by name.
_MIN_ALTERNATIVES = 3


def mapped_alternatives(texts: Mapping[str, str]) -> dict[str, str]:
    """Modules that hold one of several alternatives a name table selects by configuration
    (``AUTO_QUANTIZER_MAPPING = {"gguf": GGUFQuantizer, ...}``), and the other modules of that
    alternative's own sub-package, with why each is opt-in. A table counts when its values are
    defined in at least three different modules; an alternative's sub-package is the folder of
    its module when every alternative has a folder of its own."""
    defined: dict[str, list[str]] = {}
    for relative, text in texts.items():
        for match in _TOP_DEFINITION.finditer(text):
            defined.setdefault(match.group("name"), []).append(relative)
    found: dict[str, str] = {}
    for relative, text in texts.items():
        for table in _NAME_TABLE.finditer(text):
            names = {
                value.group("name")
                for line in table.group("body").splitlines()
                if (value := _TABLE_VALUE.search(line))
            }
            homes = {
                defined[name][0]
                for name in names
                if len(defined.get(name, ())) == 1 and defined[name][0] != relative
            }
            if len(homes) < _MIN_ALTERNATIVES:
                continue
            why = f"one of {len(homes)} alternatives selected by name from `{table.group('table')}`"
            folders = {home.rpartition("/")[0] for home in homes}
            own_folders = len(folders) == len(homes) and all(
                folder.rpartition("/")[0] == next(iter(folders)).rpartition("/")[0]
                for folder in folders
            )
            for home in homes:
                found.setdefault(home, why)
                if own_folders:
                    folder = home.rpartition("/")[0] + "/"
                    for other in texts:
                        if other.startswith(folder):
                            found.setdefault(other, why)
    return found
