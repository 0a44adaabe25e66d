"""Where shell, Dockerfile, compose and CI text sets or reads an environment variable."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .._shell import iter_lines

_SIMPLE_VALUE = re.compile(r"""^(?:"[^"$`\\]*"|'[^']*'|[\w.,:;/@%+=-]*)$""")


@dataclass(frozen=True, slots=True)
class TextSetting:
    """One place a text file sets (or passes through) a variable."""

    start: int  # offset of the variable name
    #: "assign" (NAME=value), "env-space" (ENV NAME value), "yaml-map", "yaml-list", "docker-e"
    form: str
    value: str  # the value text as written (may be quoted; "" for docker -e NAME)
    value_end: int  # offset just after the value
    line_end: int  # offset of the end of the line (before the newline)
    indent: str
    line: str
    flag: str = ""  # "-e" / "--env" for docker-e


def _name_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w$]){re.escape(name)}(?!\w)")


def find_settings(text: str, name: str) -> list[TextSetting]:
    """Every assignment / pass-through of ``name`` outside comments."""
    settings: list[TextSetting] = []
    pattern = _name_pattern(name)
    for offset, line, code in iter_lines(text):
        if name not in code:
            continue
        indent = line[: len(line) - len(line.lstrip())]
        for match in pattern.finditer(code):
            start, end = match.span()
            before = code[:start]
            after = code[end:]
            setting: TextSetting | None = None
            stripped = before.strip()
            if re.match(r"^\s*-\s*$", before) and after.startswith("="):
                value = after[1:].strip()
                setting = TextSetting(
                    offset + start,
                    "yaml-list",
                    value,
                    offset + len(code.rstrip()),
                    offset + len(line),
                    indent,
                    line,
                )
            elif after.startswith("="):
                value_match = re.match(r"""=("[^"]*"|'[^']*'|[^\s;&|)]*)""", after)
                assert value_match is not None
                value = value_match.group(1)
                value_end = offset + end + value_match.end()
                flag_match = re.search(r"(?:^|\s)(-e|--env)\s*$", before)
                form = "docker-e" if flag_match else "assign"
                setting = TextSetting(
                    offset + start,
                    form,
                    value,
                    value_end,
                    offset + len(line),
                    indent,
                    line,
                    flag_match.group(1) if flag_match else "",
                )
            elif re.match(r"^\s*:\s", after + " ") and (not stripped or stripped == "-"):
                value = after.split(":", 1)[1].strip()
                setting = TextSetting(
                    offset + start,
                    "yaml-map",
                    value,
                    offset + len(code.rstrip()),
                    offset + len(line),
                    indent,
                    line,
                )
            elif re.match(r"^\s*ENV\s+$", before) and re.match(r"^\s+\S", after):
                value = after.strip()
                setting = TextSetting(
                    offset + start,
                    "env-space",
                    value,
                    offset + len(code.rstrip()),
                    offset + len(line),
                    indent,
                    line,
                )
            else:
                flag_match = re.search(r"(?:^|\s)(-e|--env)\s+$", before)
                if flag_match and (not after or after[0].isspace() or after[0] in "\\\"'"):
                    setting = TextSetting(
                        offset + start,
                        "docker-e",
                        "",
                        offset + end,
                        offset + len(line),
                        indent,
                        line,
                        flag_match.group(1),
                    )
            if setting is not None:
                settings.append(setting)
    return settings


def find_reads(text: str, name: str) -> list[int]:
    """Offsets of ``$NAME`` / ``${NAME...}`` outside comments (one per line)."""
    offsets: list[int] = []
    pattern = re.compile(rf"\$\{{?{re.escape(name)}(?!\w)")
    for offset, _line, code in iter_lines(text):
        match = pattern.search(code)
        if match:
            offsets.append(offset + match.start())
    return offsets


def environment_block(text: str, kind: str, offset: int) -> tuple[int, int]:
    """The offsets of the environment that the setting at ``offset`` belongs to: the whole
    file for shell and Dockerfiles; for YAML, the run of lines around it indented at least as
    deep (one ``environment:``/``env:`` map or list)."""
    if kind in {"shell", "dockerfile"}:
        return 0, len(text)
    lines = list(iter_lines(text))
    index = max(i for i, (start, _, _) in enumerate(lines) if start <= offset)
    line = lines[index][1]
    width = len(line) - len(line.lstrip())

    def inside(i: int) -> bool:
        _, other, code = lines[i]
        return not code.strip() or len(other) - len(other.lstrip()) >= width

    first = index
    while first > 0 and inside(first - 1):
        first -= 1
    last = index
    while last + 1 < len(lines) and inside(last + 1):
        last += 1
    end = lines[last + 1][0] if last + 1 < len(lines) else len(text)
    return lines[first][0], end
