"""Environment markers of requirements, evaluated for the only platform ROCm runs on (Linux)."""

from __future__ import annotations

import re

_MARKER_TOKEN = re.compile(
    r"\s*(?:(?P<lp>\()|(?P<rp>\))|(?P<op>===|==|!=|~=|>=|<=|<|>|not\s+in\b|in\b)"
    r"|(?P<kw>and\b|or\b)|(?P<str>'[^']*'|\"[^\"]*\")|(?P<name>[A-Za-z_][A-Za-z0-9_.]*))"
)
_LINUX = {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"}


def marker_allows_linux(marker: str) -> bool:
    """False only when the marker certainly excludes Linux (``sys_platform == 'darwin'``)."""
    tokens: list[tuple[str, str]] = []
    position = 0
    while position < len(marker):
        match = _MARKER_TOKEN.match(marker, position)
        if match is None or match.end() == position:
            if marker[position:].strip():
                return True
            break
        position = match.end()
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))

    index = 0

    def atom() -> bool | None:
        nonlocal index
        if index < len(tokens) and tokens[index][0] == "lp":
            index += 1
            value = disjunction()
            if index < len(tokens) and tokens[index][0] == "rp":
                index += 1
            return value
        if index + 2 >= len(tokens):
            index = len(tokens)
            return None
        left, op, right = tokens[index], tokens[index + 1], tokens[index + 2]
        index += 3
        if op[0] != "op":
            return None
        values = []
        for kind, text in (left, right):
            if kind == "str":
                values.append(text[1:-1])
            elif kind == "name" and text in _LINUX:
                values.append(_LINUX[text])
            else:
                return None
        operator = " ".join(op[1].split())
        if operator == "==":
            return values[0] == values[1]
        if operator == "!=":
            return values[0] != values[1]
        if operator == "in":
            return values[0] in values[1]
        if operator == "not in":
            return values[0] not in values[1]
        return None

    def conjunction() -> bool | None:
        nonlocal index
        value = atom()
        while index < len(tokens) and tokens[index] == ("kw", "and"):
            index += 1
            other = atom()
            if value is False or other is False:
                value = False
            elif value is None or other is None:
                value = None
        return value

    def disjunction() -> bool | None:
        nonlocal index
        value = conjunction()
        while index < len(tokens) and tokens[index] == ("kw", "or"):
            index += 1
            other = conjunction()
            if value is True or other is True:
                value = True
            elif value is None or other is None:
                value = None
        return value

    try:
        return disjunction() is not False
    except IndexError:
        return True
