"""Lines of text: the bounds of the line holding an offset, and where a ``#`` comment starts."""

from __future__ import annotations

import re


def line_bounds(text: str, offset: int) -> tuple[int, int]:
    """Start of the line holding ``offset`` and the offset after its newline."""
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return start, len(text) if end == -1 else end + 1


def comment_start(line: str) -> int:
    """Offset of a ``#`` comment in a line (start of line or after whitespace), else len(line)."""
    for match in re.finditer(r"#", line):
        index = match.start()
        if index == 0 or line[index - 1].isspace():
            return index
    return len(line)
